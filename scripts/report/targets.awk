# targets.awk - the report's "Targets" section: each of shmam's performance
# targets evaluated from the numbers of this run (all.csv), one line each,
# saying met or missed and by how much.  Nothing here is a measured number.
#
#   awk -f lib.awk -f targets.awk all.csv
#
# The targets:
#   1. lockfree RTT <= 0.35 x MPICH 0-byte RTT  (logp's rtt; rtt's am_rtt if
#      logp did not run)
#   2. lockfree RTT <= 2 x raw ping-pong         (rtt's am_vs_raw, same run)
#   3. lockfree 8 KB bulk bandwidth >= 0.9 x memcpy  (logp's bulk_vs_memcpy,
#      which is bulk_peak_MBps, 8 KB / bulk_t_8192, over memcpy_MBps_8192)
#   4. stress: lockfree time at 7 writers <= its time at 1 writer
#   5. stress: lockfree the fastest of the six at 3 writers, and 6. at 7
# A missed target is a finding, not a failure: the exit status is 0.  ALGS
# (-v, from shmamrun --list-claims) names the claim algorithms.

function line(ok, what, detail) {
    if (ok == "")
        print "- **not evaluated** — " what ": " detail
    else
        print "- **" (ok ? "met" : "missed") "** — " what ": " detail
    if (ok != 1)
        missed++
}

# "by P %": how far `v` is on the wrong (or right) side of `bound`.
function by(v, bound) {
    return sprintf("%.0f %%", (v > bound ? v / bound - 1 : 1 - v / bound) * 100)
}

# At most `bound`: "met, N % under" or "missed by N %".
function atmost(what, v, bound, detail) {
    if (v == "")
        line("", what, detail)
    else if (v <= bound)
        line(1, what, detail "; " by(v, bound) " under the bound")
    else
        line(0, what, detail "; missed by " by(v, bound))
}

# At least `bound`.
function atleast(what, v, bound, detail) {
    if (v == "")
        line("", what, detail)
    else if (v >= bound)
        line(1, what, detail "; " by(v, bound) " over the bound")
    else
        line(0, what, detail "; missed by " by(v, bound))
}

function rtt_vs_mpich(    r, m, src, v) {
    r = get("logp", "lockfree", "rtt")
    src = "LogP RTT"
    if (r == "") {
        r = get("rtt", "lockfree", "am_rtt")
        src = "one-word AM RTT (logp did not run)"
    }
    m = get("mpi_pingpong", "mpich", "rtt_0B")
    v = ratio(r, m)
    atmost("lockfree RTT ≤ 0.35 × MPICH 0-byte RTT", v, 0.35,
           "lockfree " src " " g3(r) " µs, MPICH " g3(m) " µs, ratio " f(v, 2) \
           (v == "" ? "" : " (bound " g3(0.35 * m) " µs)"))
}

function rtt_vs_raw(    v) {
    v = get("rtt", "lockfree", "am_vs_raw")
    atmost("lockfree RTT ≤ 2 × raw ping-pong", v, 2,
           "AM " g3(get("rtt", "lockfree", "am_rtt")) " µs, raw cache-line ping-pong " \
           g3(get("rtt", "lockfree", "raw_rtt")) " µs in the same run, ratio " f(v, 2))
}

function bulk_vs_memcpy(    v) {
    v = get("logp", "lockfree", "bulk_vs_memcpy")
    atleast("lockfree 8 KB bulk bandwidth ≥ 0.9 × memcpy", v, 0.9,
            "8 KB bulk " g3(get("logp", "lockfree", "bulk_peak_MBps")) " MB/s, memcpy of 8 KB " \
            g3(get("logp", "lockfree", "memcpy_MBps_8192")) " MB/s, ratio " f(v, 2))
}

function stress_7_vs_1(    t1, t7, v, s1, s7, what, detail) {
    t1 = secs("stress", "lockfree", 2)
    s1 = STOPPED
    t7 = secs("stress", "lockfree", 8)
    s7 = STOPPED
    v = s1 ? "" : ratio(t7, t1)
    what = "stress: lockfree time at 7 writers ≤ its time at 1 writer"
    detail = "1 writer " (s1 ? "> " : "") g3(t1) " s, 7 writers " (s7 ? "> " : "") g3(t7) \
             " s" (v == "" ? "" : ", ratio " (s7 ? "> " : "") f(v, 2))
    if (s7 && v != "")
        line(0, what, detail " (stopped at the time limit); missed by more than " by(v, 1))
    else
        atmost(what, v, 1, detail)
}

# Is lockfree the fastest of the six with `w` writers?  A run stopped at the
# time limit counts as slower than every run that finished.
function stress_best(w,    a, n, i, t, best, bi, lf, lfs, rank, cnt, what) {
    n = words(ALGS, a)
    lf = secs("stress", "lockfree", w + 1)
    lfs = STOPPED
    for (i = 1; i <= n; i++) {
        t = secs("stress", a[i], w + 1)
        if (t == "")
            continue
        cnt++
        t = STOPPED ? t * 1000 : t
        T[a[i]] = t
        if (best == "" || t < best) {
            best = t
            bi = a[i]
        }
    }
    for (i = 1; i <= n; i++)
        if ((a[i] in T) && T[a[i]] < T["lockfree"])
            rank++
    what = "stress: lockfree the fastest of the six at " w " writers"
    if (lf == "" || cnt < n)
        line("", what, "only " cnt + 0 " of the six algorithms ran")
    else if (lfs)
        line(0, what, "lockfree was stopped at the time limit (> " g3(lf) " s)")
    else if (bi == "lockfree" || T["lockfree"] <= best)
        line(1, what, "lockfree " g3(lf) " s; the next best " next_best(w, lf))
    else
        line(0, what, "lockfree " g3(lf) " s is number " rank + 1 " of " n "; missed by " \
             by(lf, best) " (" bi " " g3(best) " s)")
    delete T
}

# "ALG T s (P % slower)": the fastest of the others than lockfree.
function next_best(w, lf,    a, n, i, t, b, bi, bs) {
    n = words(ALGS, a)
    for (i = 1; i <= n; i++) {
        if (a[i] == "lockfree")
            continue
        t = secs("stress", a[i], w + 1)
        if (t != "" && (b == "" || (STOPPED ? 1000 * t : t) < (bs ? 1000 * b : b))) {
            b = t
            bs = STOPPED
            bi = a[i]
        }
    }
    return bi " " (bs ? "> " : "") g3(b) " s (" (bs ? "> " : "") by(b, lf) " slower)"
}

END {
    rtt_vs_mpich()
    rtt_vs_raw()
    bulk_vs_memcpy()
    stress_7_vs_1()
    stress_best(3)
    stress_best(7)
}
