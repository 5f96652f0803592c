# plotdata.awk - gnuplot data files for the report's plots, from all.csv.
#
#   awk -f lib.awk -f plotdata.awk -v what=NAME all.csv > NAME.dat
#
# Each file is a table with a header line of column names (gnuplot's
# `columnheader`) and "-" for a missing value:
#   logp    rows L, os, or, g, RTT; columns the six algorithms and MPICH (µs)
#   stress  rows 1, 3, 7 writers; columns the six algorithms and MPICH (s; a
#           run stopped at the time limit counts as the limit)
#   bw      rows message sizes (bytes); columns the six algorithms' bulk
#           bandwidth (size / bulk_t_<size>), MPICH's bw_<size>_MBps, and
#           logp's memcpy rate of that size (lockfree's run) (MB/s)
#   locks   rows process counts; columns every lock (millions of acquisitions/s)

function v(x) { return x == "" ? "-" : x }

function logp(    a, n, i, p, names, k, s) {
    n = words(ALGS, a)
    s = "param"
    for (i = 1; i <= n; i++) s = s " " a[i]
    print s " MPICH"
    split("L os or g rtt", p, " ")
    split("L o_s o_r g RTT", names, " ")
    for (k = 1; k <= 5; k++) {
        s = names[k]
        for (i = 1; i <= n; i++) s = s " " v(get("logp", a[i], p[k]))
        s = s " " v(p[k] == "g" ? get("mpi_pingpong", "mpich", "g_4B") : \
                    p[k] == "rtt" ? get("mpi_pingpong", "mpich", "rtt_0B") : "")
        print s
    }
}

function stress(    a, n, i, w, x, s) {
    n = words(ALGS, a)
    s = "writers"
    for (i = 1; i <= n; i++) s = s " " a[i]
    print s " MPICH"
    split("1 3 7", w, " ")
    for (x = 1; x <= 3; x++) {
        s = w[x]
        for (i = 1; i <= n; i++) s = s " " v(secs("stress", a[i], w[x] + 1))
        print s " " v(secs("mpi_stress", "mpich", w[x] + 1))
    }
}

# Adds size `z` to SIZES (kept sorted, no duplicates).
function addsize(z,    i, j) {
    for (i = 1; i <= NS; i++)
        if (SIZES[i] == z) return
    for (i = NS; i >= 1 && SIZES[i] > z; i--)
        SIZES[i + 1] = SIZES[i]
    SIZES[i + 1] = z
    NS++
}

function bw(    a, n, i, k, key, parts, m, z, s, t) {
    n = words(ALGS, a)
    for (key in A) {
        split(key, parts, SUBSEP)
        m = parts[3]
        if (parts[1] == "logp" && m ~ /^bulk_t_[0-9]+$/)
            addsize(substr(m, 8) + 0)
        else if (parts[1] == "mpi_pingpong" && m ~ /^bw_[0-9]+_MBps$/)
            addsize(substr(m, 4, length(m) - 8) + 0)
    }
    s = "bytes"
    for (i = 1; i <= n; i++) s = s " " a[i]
    print s " MPICH memcpy"
    for (k = 1; k <= NS; k++) {
        z = SIZES[k]
        s = z
        for (i = 1; i <= n; i++) {
            t = get("logp", a[i], "bulk_t_" z)
            s = s " " (t == "" || t + 0 <= 0 ? "-" : z / t)
        }
        print s " " v(get("mpi_pingpong", "mpich", "bw_" z "_MBps")) " " \
              v(get("logp", "lockfree", "memcpy_MBps_" z))
    }
}

# Columns: shmam's locks first (locks.gp draws them solid), then the others.
function locks(    l, nl, p, np, i, j, s, x, all, na) {
    na = words(IMPLS["lockbench"], all)
    for (i = 1; i <= na; i++)
        if (all[i] ~ /^shmam:/)
            l[++nl] = all[i]
    for (i = 1; i <= na; i++)
        if (all[i] !~ /^shmam:/)
            l[++nl] = all[i]
    np = words(PROCS["lockbench"], p)
    s = "procs"
    for (i = 1; i <= nl; i++) s = s " " l[i]
    print s
    for (j = 1; j <= np; j++) {
        s = p[j]
        for (i = 1; i <= nl; i++) {
            x = getp("lockbench", l[i], p[j], "acq_per_s")
            s = s " " (x == "" ? "-" : x / 1e6)
        }
        print s
    }
}

END {
    if (what == "logp") logp()
    else if (what == "stress") stress()
    else if (what == "bw") bw()
    else if (what == "locks") locks()
    else {
        print "plotdata.awk: unknown data " what > "/dev/stderr"
        exit 2
    }
}
