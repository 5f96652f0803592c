# apps.awk - turns scripts/apps.sh's apps.csv
#   app,<name>,<input>,<impl>,<shm>,<procs>,<seconds>,<verified|FAILED>
# (one line per run, REPEAT runs per configuration) into rows of the common
# schema, one per application run and implementation: the best verified time,
# as in the paper's Table 4, with the spread of the verified runs:
#   apps,IMPL,SHM,PROCS,1,RUNS,fft|con_comm|con_comp|sample,BEST,s,LOW-HIGH
# (apps.sh binds every run: shmamrun --bind, mpiexec -bind-to core).
BEGIN { FS = "," }
$1 != "app" || $8 != "verified" { next }
{
    m = $2 == "con" ? ($3 ~ /^comm/ ? "con_comm" : "con_comp") : $2
    k = m SUBSEP $4
    if (!(k in n)) {
        order[++keys] = k
        shm[k] = $5
        procs[k] = $6
    }
    n[k]++
    if (!(k in lo) || $7 + 0 < lo[k]) lo[k] = $7 + 0
    if (!(k in hi) || $7 + 0 > hi[k]) hi[k] = $7 + 0
}
END {
    for (i = 1; i <= keys; i++) {
        k = order[i]
        split(k, p, SUBSEP)
        printf "apps,%s,%s,%d,1,%d,%s,%.4f,s,%.4f-%.4f\n", p[2], shm[k], procs[k], n[k],
               p[1], lo[k], lo[k], hi[k]
    }
}
