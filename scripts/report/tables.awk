# tables.awk - the report's tables, in markdown, from all.csv.
#
#   awk -f lib.awk -f tables.awk -v table=NAME all.csv
#
# NAME is one of
#   table1   the paper's Table 1 (LogP parameters and round trip, us): rows L,
#            os, or, g, RTT; columns the six claim algorithms and MPICH; then
#            ratio rows against MPICH, the raw ping-pong and memcpy
#   table2   the paper's Table 2 (many-to-one stress test, seconds): rows 1, 3
#            and 7 writers; columns the six algorithms and MPICH
#   locks    the lock microbenchmark: throughput per lock and process count
#   delivery the checked many-to-one and bulk exchange of demo_many
# Missing values print as a dash.  ALGS (-v, from shmamrun --list-claims)
# names the claim algorithms, in column order.
BEGIN {
    MPI_PP = "mpi_pingpong"
    MPI_ST = "mpi_stress"
}

function header(first, n, a,    i, s, t) {
    s = "| " first " |"
    t = "|---|"
    for (i = 1; i <= n; i++) {
        s = s " " a[i] " |"
        t = t "---:|"
    }
    print s
    print t
}

# One row: `label`, then metric `m` of bench `b` per algorithm (d decimals),
# then `last` (already formatted) for the MPICH column.
function algrow(label, b, m, d, last, n, a,    i, s) {
    s = "| " label " |"
    for (i = 1; i <= n; i++)
        s = s " " f(get(b, a[i], m), d) " |"
    print s " " last " |"
}

function table1(    a, n, i, s, mrtt, mem, c, cols) {
    n = words(ALGS, a)
    for (i = 1; i <= n; i++)
        cols[i] = a[i]
    cols[n + 1] = "MPICH"
    header("µs", n + 1, cols)
    mrtt = get(MPI_PP, "mpich", "rtt_0B")
    algrow("Latency (L)", "logp", "L", 2, DASH, n, a)
    algrow("Send overhead (o<sub>s</sub>)", "logp", "os", 2, DASH, n, a)
    algrow("Receive overhead (o<sub>r</sub>)", "logp", "or", 2, DASH, n, a)
    algrow("Gap (g)", "logp", "g", 2, f(get(MPI_PP, "mpich", "g_4B"), 2), n, a)
    algrow("**Round trip time (RTT)**", "logp", "rtt", 2, f(mrtt, 2) " (0 B)", n, a)
    s = "| *RTT / MPICH 0-byte RTT* |"
    for (i = 1; i <= n; i++)
        s = s " " f(ratio(get("logp", a[i], "rtt"), mrtt), 2) " |"
    print s " " f(mrtt == "" ? "" : 1, 2) " |"
    algrow("RTT of a one-word request (rtt)", "rtt", "am_rtt", 2,
           f(get(MPI_PP, "mpich", "rtt_4B"), 2) " (4 B)", n, a)
    algrow("Raw cache-line ping-pong RTT (rtt)", "rtt", "raw_rtt", 2, DASH, n, a)
    algrow("*AM RTT / raw ping-pong*", "rtt", "am_vs_raw", 2, DASH, n, a)
    mem = get("logp", "lockfree", "memcpy_MBps_8192")
    algrow("Peak bulk bandwidth (MB/s)", "logp", "bulk_peak_MBps", 0,
           f(get(MPI_PP, "mpich", "bw_8192_MBps"), 0) " (8 KB)", n, a)
    algrow("memcpy of 8 KB (MB/s)", "logp", "memcpy_MBps_8192", 0, DASH, n, a)
    algrow("*8 KB bulk bandwidth / memcpy*", "logp", "bulk_vs_memcpy", 2,
           f(ratio(get(MPI_PP, "mpich", "bw_8192_MBps"), mem), 2), n, a)
}

function table2(    a, n, i, w, s, cols, p, x, t1, t7, st, b, m) {
    n = words(ALGS, a)
    for (i = 1; i <= n; i++)
        cols[i] = a[i]
    cols[n + 1] = "MPICH"
    header("seconds", n + 1, cols)
    split("1 3 7", w, " ")
    for (x = 1; x <= 3; x++) {
        p = w[x] + 1
        s = "| " w[x] (w[x] == 1 ? " writer" : " writers") " |"
        for (i = 1; i <= n; i++)
            s = s " " secsf("stress", a[i], p, 3) " |"
        print s " " secsf(MPI_ST, "mpich", p, 3) " |"
    }
    s = "| *7 writers / 1 writer* |"
    for (i = 1; i <= n + 1; i++) {
        b = i <= n ? "stress" : MPI_ST
        m = i <= n ? a[i] : "mpich"
        t7 = secs(b, m, 8)
        st = STOPPED
        t1 = secs(b, m, 2)
        s = s " " (STOPPED ? DASH : (st ? "> " : "") f(ratio(t7, t1), 2)) " |"
    }
    print s
    for (x = 1; x <= 3; x++) {
        p = w[x] + 1
        s = "| *messages per poll, " w[x] " w.* |"
        for (i = 1; i <= n; i++)
            s = s " " f(getp("stress", a[i], p, "msgs_per_poll"), 1) " |"
        print s " " DASH " |"
    }
}

function delivery(    a, n, i, m) {
    n = words(ALGS, a)
    print "| algorithm | processes | short messages | short msgs/s | bulk messages (8 KB) | bulk MB/s |"
    print "|---|---:|---:|---:|---:|---:|"
    for (i = 1; i <= n; i++) {
        m = a[i]
        if (get("demo_many", m, "short_seconds") == "")
            continue
        print "| " m " | " PR["demo_many", m, "short_seconds"] \
              " | " (PR["demo_many", m, "short_seconds"] - 1) * IT["demo_many", m, "short_seconds"] \
              " | " f(get("demo_many", m, "short_msgs_per_s"), 0) \
              " | " (PR["demo_many", m, "bulk_seconds"] - 1) * IT["demo_many", m, "bulk_seconds"] \
              " | " f(get("demo_many", m, "bulk_MBps"), 0) " |"
    }
}

# Rows: every lock in the order lockbench printed them; columns: millions of
# acquisitions per second per process count, then fairness (the fewest
# acquisitions of one process over the most) per process count.
function locks(    l, nl, p, np, i, j, s, t, v) {
    nl = words(IMPLS["lockbench"], l)
    np = words(PROCS["lockbench"], p)
    if (nl == 0) {
        print "(no rows: the lock benchmark did not run)"
        return
    }
    s = "| lock |"
    t = "|---|"
    for (j = 1; j <= np; j++) {
        s = s " " p[j] (p[j] == 1 ? " proc" : " procs") ", M acq/s |"
        t = t "---:|"
    }
    for (j = 1; j <= np; j++)
        if (p[j] > 1) {
            s = s " fairness, " p[j] " |"
            t = t "---:|"
        }
    print s
    print t
    for (i = 1; i <= nl; i++) {
        s = "| " l[i] " |"
        for (j = 1; j <= np; j++) {
            v = getp("lockbench", l[i], p[j], "acq_per_s")
            s = s " " f(v == "" ? "" : v / 1e6, 2) " |"
        }
        for (j = 1; j <= np; j++)
            if (p[j] > 1)
                s = s " " f(getp("lockbench", l[i], p[j], "fairness_min_over_max"), 2) " |"
        print s
    }
}

END {
    if (table == "table1") table1()
    else if (table == "table2") table2()
    else if (table == "locks") locks()
    else if (table == "delivery") delivery()
    else {
        print "tables.awk: unknown table " table > "/dev/stderr"
        exit 2
    }
}
