# findings.awk - the report's "What the numbers say": each conclusion of the
# paper's section 4 next to what this run's numbers (all.csv) say about it,
# with a verdict computed from them: agrees, partly, differs, or no numbers.
# The paper's figures are quoted from its Tables 1, 2 and 4; ours are computed.
#
#   awk -f lib.awk -f findings.awk all.csv
# ALGS (-v, from shmamrun --list-claims) names the claim algorithms; LOCKS
# are those that take a lock, FIVE those the paper measured in Table 1 (all
# but the pthread mutex).
BEGIN {
    NALGS = words(ALGS, all)
    for (i = 1; i <= NALGS; i++) {
        if (all[i] != "lockfree")
            LOCKS = LOCKS (LOCKS == "" ? "" : " ") all[i]
        if (all[i] != "mutex")
            FIVE = FIVE (FIVE == "" ? "" : " ") all[i]
    }
    NFIVE = words(FIVE, all)
}

# One point.  `verdict` is 2 (agrees), 1 (partly), 0 (differs) or "" (no
# numbers, in which case `here` names what did not run).
function point(title, paper, verdict, here,    v) {
    if (verdict == "")
        here = "no numbers (" here " did not run)."
    v = verdict == "" ? "no numbers" : verdict == 2 ? "agrees" : verdict == 1 ? "partly" : \
        "differs"
    print "- **" title "** *" v ".* The paper: " paper " Here: " here
    print ""
}

# 2, 1 or 0 as `k` of `n` cases hold: all, some, none.
function tally(k, n) {
    return k == n ? 2 : k > 0 ? 1 : 0
}

# min, max and their names of metric m of bench b over the algorithms in list
# `s`: sets LO, HI, LON, HIN; returns how many had a value.
function span(b, m, s,    a, n, i, v, c) {
    LO = HI = LON = HIN = ""
    n = words(s, a)
    for (i = 1; i <= n; i++) {
        if ((v = get(b, a[i], m)) == "")
            continue
        c++
        if (LO == "" || v + 0 < LO + 0) { LO = v; LON = a[i] }
        if (HI == "" || v + 0 > HI + 0) { HI = v; HIN = a[i] }
    }
    return c
}

# Mean of metric m over the list s; "" if any is missing.
function mean(b, m, s,    a, n, i, v, t) {
    n = words(s, a)
    for (i = 1; i <= n; i++) {
        if ((v = get(b, a[i], m)) == "")
            return ""
        t += v
    }
    return t / n
}

function pcts(v, base) {
    v = pct(v, base)
    return v == "" ? DASH : v
}

function spreadpct(lo, hi) {
    return sprintf("%.0f %%", (hi / lo - 1) * 100)
}

function logp_points(    here, v, m, o, rs, k, los, lg, tg, lm, mm) {
    v = ""
    here = "logp"
    if (span("logp", "rtt", FIVE) == NFIVE) {
        v = HI / LO <= 1.10 ? 2 : HI / LO <= 1.25 ? 1 : 0
        here = "the five other RTTs lie within " g3(LO) "–" g3(HI) " µs (" LON " to " HIN \
               ", a spread of " spreadpct(LO, HI) ")."
    }
    point("All but the mutex are nearly equivalent (4.1).",
          "apart from the POSIX mutex the RTTs lie within 5.4–5.6 µs, a spread of 4 %.",
          v, here)

    v = ""
    here = "logp"
    los = get("logp", "lockfree", "os")
    tg = get("logp", "tas", "g")
    lg = get("logp", "lockfree", "g")
    if (los != "" && get("logp", "tas", "os") != "" && lg != "" && tg != "") {
        v = tally((los > get("logp", "tas", "os")) + (lg > tg), 2)
        here = "lock-free against test-and-set: o<sub>s</sub> " g3(los) " vs " \
               g3(get("logp", "tas", "os")) " µs (" pcts(los, get("logp", "tas", "os")) \
               "), g " g3(lg) " vs " g3(tg) " µs (" pcts(lg, tg) ")."
    }
    point("Send overhead and gap rise slightly with the algorithm's complexity (4.1).",
          "lock-free against test-and-set: o<sub>s</sub> 1.9 vs 1.6 µs (+19 %), g 3.1 vs " \
          "2.9 µs (+7 %).", v, here)

    v = ""
    here = "logp"
    m = mean("logp", "rtt", FIVE)
    o = get("logp", "mutex", "rtt")
    if (m != "" && o != "") {
        v = o >= 1.25 * m ? 2 : o > 1.05 * m ? 1 : 0
        here = "the mutex's RTT is " g3(o) " µs against a mean of " g3(m) " µs for the " \
               "others (" pcts(o, m) ")."
    }
    point("The POSIX mutex is more than 25 % slower (4.1).",
          "RTT 6.9 µs against a mean of 5.5 µs for the others (+25 %), because it enters " \
          "the operating system.", v, here)

    v = ""
    here = "logp"
    if (span("logp", "L", ALGS) == NALGS) {
        k = 0
        split(ALGS, lm, " ")
        for (mm = 1; mm <= 6; mm++)
            k += get("logp", lm[mm], "L") <= 0
        v = tally(k, 6)
        here = "L lies between " g3(LO) " (" LON ") and " g3(HI) " µs (" HIN "); " k \
               " of 6 are zero or negative."
    }
    point("Latency comes out negative: send and receive overheads overlap in the poll (4.1).",
          "L from −0.3 to 0 µs.", v, here)

    v = ""
    here = "logp"
    if (span("logp", "rtt", ALGS) == NALGS) {
        rs = HI / LO
        if (span("logp", "bulk_peak_MBps", ALGS) == NALGS) {
            v = HI / LO < rs ? 2 : 0
            here = "peak bulk bandwidth runs from " g3(LO) " MB/s (" LON ") to " g3(HI) \
                   " MB/s (" HIN "), a spread of " spreadpct(LO, HI) " against " \
                   sprintf("%.0f %%", (rs - 1) * 100) " for the RTT"
            if (span("logp", "bulk_vs_memcpy", ALGS) == NALGS)
                here = here "; that is " sprintf("%.0f–%.0f %%", LO * 100, HI * 100) \
                       " of the memcpy rate of 8 KB"
            here = here "."
        }
    }
    point("Bulk bandwidth varies less between algorithms (4.1).",
          "158 MB/s (mutex) to 166 MB/s (lock-free), a spread of 5 %, about 80 % of the " \
          "memory copy rate.", v, here)

    v = ""
    here = "logp or mpi_pingpong"
    o = get("logp", "lockfree", "rtt")
    m = get("mpi_pingpong", "mpich", "rtt_0B")
    if (o != "" && m != "") {
        v = o < m ? 2 : 0
        here = "the lock-free RTT is " g3(o) " µs, " f(o / m, 2) " × MPICH's 0-byte " \
               "round trip (" g3(m) " µs)."
    }
    point("Shared-memory AM beats a general message layer (not measured in the paper).",
          "no MPI comparison; the point of the design is a lighter path than a full " \
          "message-passing layer.", v, here)
}

# Seconds of the stress test, "> " for a run stopped at the time limit.
function sx(impl, p,    v) {
    v = secs("stress", impl, p)
    return (STOPPED ? "> " : "") g3(v)
}

# t(7 writers) / t(1 writer) for impl; "" if either is missing or the 1-writer
# run was stopped.  R71S is 1 if the 7-writer run was stopped (a lower bound).
function r71(impl,    t1, t7) {
    t7 = secs("stress", impl, 8)
    R71S = STOPPED
    t1 = secs("stress", impl, 2)
    if (STOPPED || t1 == "" || t7 == "")
        return ""
    return t7 / t1
}

function r71f(impl,    r) {
    r = r71(impl)
    return r == "" ? DASH : (R71S ? "> " : "") f(r, 2) "×"
}

# The place of lock-free among the algorithms that ran with w writers (1 =
# fastest); a run stopped at the time limit is slower than any that finished.
# PLACES is set to the number that ran.
function place(w,    a, n, i, t, lf, r) {
    lf = secs("stress", "lockfree", w + 1)
    lf = STOPPED ? lf * 1000 : lf
    n = words(ALGS, a)
    r = 1
    PLACES = 0
    for (i = 1; i <= n; i++) {
        if ((t = secs("stress", a[i], w + 1)) == "")
            continue
        PLACES++
        if ((STOPPED ? t * 1000 : t) < lf + 0)
            r++
    }
    return r
}

function nth(r) {
    return (r == 1 ? "1st" : r == 2 ? "2nd" : r == 3 ? "3rd" : r "th") " of " PLACES
}

function stress_points(    t1, n, g, here, v, a, i, s, r, c, k, mp, p3, p7, m1, m7) {
    v = ""
    here = "stress or logp"
    t1 = secs("stress", "lockfree", 2)
    n = IT["stress", "lockfree", "seconds"]
    g = get("logp", "lockfree", "g")
    if (t1 != "" && !STOPPED && g != "" && n != "") {
        r = t1 / n * 1e6 / g
        v = r >= 0.8 && r <= 1.25 ? 2 : r >= 0.5 && r <= 2 ? 1 : 0
        here = "one writer sends " n " integers in " g3(t1) " s, " g3(t1 / n * 1e6) \
               " µs each, against a LogP gap of " g3(g) " µs (" pcts(t1 / n * 1e6, g) \
               "); logp's g is a stream of requests each answered by a reply that the " \
               "sender handles too, where the stress test's messages go one way."
    }
    point("With one writer the stress test measures the gap (4.2).",
          "10⁶ integers in 3.19 s, 3.19 µs each, against g = 3.1 µs.", v, here)

    s = ""
    c = words(LOCKS, a)
    k = 0
    n = 0
    for (i = 1; i <= c; i++) {
        if ((r = r71(a[i])) == "")
            continue
        n++
        k += r > 1
        s = s (s == "" ? "" : ", ") a[i] " " r71f(a[i])
    }
    point("The locks slow down with 3 and 7 writers (4.2).",
          "time at 7 writers over time at 1: tas 1.47×, ttas 1.27×, ticket 1.18×, " \
          "anderson 1.23×, mutex 3.98×.",
          n ? tally(k, n) : "", n ? "the same ratio: " s "; " k " of " n " locks slow " \
          "down." : "stress")

    v = ""
    here = "stress"
    r = r71("lockfree")
    if (r != "" && secs("stress", "lockfree", 4) != "") {
        p3 = place(3)
        p7 = place(7)
        v = tally((r <= 1) + (p7 == 1), 2)
        here = "lock-free " sx("lockfree", 2) " → " sx("lockfree", 4) " → " \
               sx("lockfree", 8) " s (7 writers over 1: " r71f("lockfree") "); it is " \
               nth(p3) " at 3 writers and " nth(p7) " at 7."
    }
    point("The lock-free claim gets faster with more writers and is best under contention (4.2).",
          "lock-free 3.19 → 3.08 → 3.03 s for 1, 3 and 7 writers; the best of six at 7 " \
          "writers (second to test-and-set at 3).", v, here)

    v = ""
    here = "stress"
    m1 = getp("stress", "lockfree", 2, "msgs_per_poll")
    m7 = getp("stress", "lockfree", 8, "msgs_per_poll")
    if (m1 != "" && m7 != "") {
        v = m7 > m1 ? 2 : 0
        mp = getp("stress", "lockfree", 4, "msgs_per_poll")
        here = "a productive lock-free poll handled on average " f(m1, 1) ", " f(mp, 1) \
               " and " f(m7, 1) " messages with 1, 3 and 7 writers."
    }
    point("Gap reduction: one poll drains every message that is ready, more with more writers (4.2).",
          "the poll's cost is shared by all the messages it accepts, which outweighs the " \
          "contention for the lock-free claim.", v, here)

    v = ""
    here = "stress"
    r = r71("mutex")
    if (r != "") {
        v = r >= 2 ? 2 : r > 1.1 ? 1 : 0
        here = sx("mutex", 2) " s at 1 writer, " sx("mutex", 8) " s at 7 (" r71f("mutex") ")."
    }
    point("The mutex collapses under contention (4.2).",
          "3.54 s at 1 writer, 14.1 s at 7 (3.98×).", v, here)

    v = ""
    here = "mpi_stress"
    if (secs("mpi_stress", "mpich", 8) != "" && secs("stress", "lockfree", 8) != "") {
        k = 0
        for (i = 2; i <= 8; i *= 2)
            k += secs("stress", "lockfree", i) + 0 < secs("mpi_stress", "mpich", i) + 0
        v = tally(k, 3)
        here = "MPICH takes " secsf("mpi_stress", "mpich", 2, 3) ", " \
               secsf("mpi_stress", "mpich", 4, 3) " and " secsf("mpi_stress", "mpich", 8, 3) \
               " s for 1, 3 and 7 writers, lock-free " sx("lockfree", 2) ", " \
               sx("lockfree", 4) " and " sx("lockfree", 8) " s (MPICH's ranks unbound, " \
               "spinning)."
    }
    point("Shared-memory AM beats MPI many-to-one (not measured in the paper).",
          "no MPI comparison.", v, here)
}

# The fastest of the algorithms in list `s` for application run m: sets BEST
# and BESTN; returns how many had a time.
function fastest(m, s,    a, n, i, v, c) {
    BEST = BESTN = ""
    n = words(s, a)
    for (i = 1; i <= n; i++) {
        if ((v = get("apps", a[i], m)) == "")
            continue
        c++
        if (BEST == "" || v + 0 < BEST + 0) { BEST = v; BESTN = a[i] }
    }
    return c
}

function app_points(    r, lab, nr, i, c, b, list, lw, tw, tl, mx, mn, mk, v, mp, mpk, mpn) {
    nr = split("fft con_comm con_comp sample", r, " ")
    split("3-D FFT|CON/comm|CON/comp|SAMPLE", lab, "|")
    for (i = 1; i <= nr; i++) {
        if (fastest(r[i], ALGS) < NALGS)
            continue
        c++
        b = BEST
        list = list (list == "" ? "" : ", ") lab[i] " " BESTN
        if (BESTN == "lockfree")
            lw++
        else
            tl = tl (tl == "" ? "" : ", ") lab[i] " " \
                 pcts(get("apps", "lockfree", r[i]), b)
        if (fastest(r[i], LOCKS) && BESTN == "ticket")
            tw++
        v = get("apps", "mutex", r[i]) / b
        mk += v >= 1.25
        if (mx == "" || v > mx) mx = v
        if (mn == "" || v < mn) mn = v
        if ((v = get("apps", "mpich", r[i])) != "") {
            mpn++
            mpk += b < v
            mp = mp (mp == "" ? "" : ", ") lab[i] " " f(v / b, 2) "×"
        }
    }
    if (c == 0) {
        point("Lock-free is generally best for applications (4.3).",
              "fastest in CON/comm, CON/comp and SAMPLE (3 of 4 runs).", "", "scripts/apps.sh")
        return
    }
    point("Lock-free is generally best for applications (4.3).",
          "fastest in CON/comm, CON/comp and SAMPLE (3 of 4 runs).",
          lw * 2 >= c ? 2 : lw > 0 ? 1 : 0,
          "lock-free is fastest in " lw + 0 " of " c " runs (the fastest per run: " list ")" \
          (tl == "" ? "." : "; where it is not, it is behind the best by " tl "."))

    v = ""
    if (fastest("fft", ALGS) == NALGS)
        v = BESTN != "lockfree" ? 2 : 0
    point("The bulk-heavy FFT is the exception (4.3).",
          "only the ticket lock (8.6 s) beats lock-free (8.7 s), which pays four CAS per " \
          "bulk message.", v,
          v == "" ? "the FFT" : "the fastest is " BESTN " (" g3(BEST) " s); lock-free takes " \
          g3(get("apps", "lockfree", "fft")) " s (" pcts(get("apps", "lockfree", "fft"), BEST) \
          ").")
    point("Among the locks, the ticket lock is best for most applications (4.3).",
          "ticket the fastest (or tied) of the five locks in FFT, CON/comm and CON/comp, " \
          "not in SAMPLE.", tw * 2 > c ? 2 : tw > 0 ? 1 : 0,
          "ticket is the fastest lock in " tw + 0 " of " c " runs.")
    point("The POSIX mutex is not competitive (4.3).",
          "1.05–4.3× the best time (SAMPLE 9.5 s against 2.2 s).",
          mk * 2 > c ? 2 : mk > 0 ? 1 : 0,
          "the mutex takes " f(mn, 2) "–" f(mx, 2) "× the best time; 1.25× or more in " \
          mk + 0 " of " c " runs.")
    point("Shared-memory AM beats MPI in applications (not measured in the paper).",
          "no MPI comparison.", mpn ? tally(mpk, mpn) : "",
          mpn ? "MPICH's time over the best shmam algorithm's: " mp "." : "the MPICH ports")
}

END {
    print "### LogP microbenchmarks (paper 4.1)"
    print ""
    logp_points()
    print "### Stress test (paper 4.2)"
    print ""
    stress_points()
    print "### Applications (paper 4.3)"
    print ""
    app_points()
}
