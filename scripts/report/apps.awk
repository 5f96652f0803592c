# apps.awk - turns scripts/apps.sh's apps.csv
#   app,<name>,<input>,<impl>,<shm>,<procs>,<seconds>,<verified|FAILED>,<pinned>
# (one line per measured run, REPEAT runs per configuration, the warm-ups left
# out) into rows of the common schema, one per application run and
# implementation, with the instrument's one estimator (bench/common/stat.h):
# the median of the verified runs, the lowest and the highest as its spread:
#   apps,IMPL,SHM,PROCS,PINNED,RUNS,fft|con_comm|con_comp|sample,MEDIAN,s,LOW-HIGH
# PINNED is what apps.sh recorded per run: 1 for shmam (shmamrun --bind), for
# MPICH 1 only when it ran with -bind-to core (P <= CPUs), else 0.  A
# configuration whose runs were not all pinned alike counts as unpinned.
BEGIN { FS = "," }
$1 != "app" || $8 != "verified" { next }
{
    m = $2 == "con" ? ($3 ~ /^comm/ ? "con_comm" : "con_comp") : $2
    k = m SUBSEP $4
    if (!(k in n)) {
        order[++keys] = k
        shm[k] = $5
        procs[k] = $6
        pinned[k] = 1
    }
    t[k, ++n[k]] = $7 + 0
    if ($9 != "1")
        pinned[k] = 0
}
# median(k): the median of t[k, 1..n[k]], which it sorts in place.
function median(k,    i, j, x, m) {
    for (i = 2; i <= n[k]; i++)
        for (j = i; j > 1 && t[k, j - 1] > t[k, j]; j--) {
            x = t[k, j]; t[k, j] = t[k, j - 1]; t[k, j - 1] = x
        }
    m = int((n[k] + 1) / 2)
    return n[k] % 2 ? t[k, m] : (t[k, m] + t[k, m + 1]) / 2
}
END {
    for (i = 1; i <= keys; i++) {
        k = order[i]
        split(k, p, SUBSEP)
        med = median(k)
        printf "apps,%s,%s,%d,%d,%d,%s,%.4f,s,%.4f-%.4f\n", p[2], shm[k], procs[k], pinned[k],
               n[k], p[1], med, t[k, 1], t[k, n[k]]
    }
}
