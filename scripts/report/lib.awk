# lib.awk - loads rows of the common benchmark schema for the other report
# scripts, which are run together with it (awk -f lib.awk -f table.awk all.csv)
# and do their work in END.  POSIX awk only (Debian's default is mawk).
#
#   bench,impl,shm,procs,pinned,iters,metric,value,unit,spread
#
# Header and comment lines are skipped.  When a key occurs twice, the later row
# wins.  Lookups return "" for a missing value, and every formatter turns ""
# into "–", so a table of a partial run still renders.
BEGIN { FS = ","; DASH = "–" }
/^#/ || $1 == "bench" || NF < 10 { next }
{
    V[$1, $2, $4, $7] = $8       # by bench, impl, procs, metric
    A[$1, $2, $7] = $8           # by bench, impl, metric (any procs)
    IT[$1, $2, $7] = $6          # the iterations and processes of that row
    PR[$1, $2, $7] = $4
    if (!(($1, $2) in SEEN)) {
        SEEN[$1, $2] = 1
        IMPLS[$1] = IMPLS[$1] (IMPLS[$1] == "" ? "" : " ") $2
    }
    if (!(($1, $4) in SEENP)) {
        SEENP[$1, $4] = 1
        PROCS[$1] = PROCS[$1] (PROCS[$1] == "" ? "" : " ") $4
    }
}

# The value of `metric` of `impl` in `bench` (any process count), or "".
function get(bench, impl, metric) {
    return ((bench, impl, metric) in A) ? A[bench, impl, metric] : ""
}

# The same for one process count.
function getp(bench, impl, procs, metric) {
    return ((bench, impl, procs, metric) in V) ? V[bench, impl, procs, metric] : ""
}

# a / b, or "" when either is missing or b is zero.
function ratio(a, b) {
    return a == "" || b == "" || b + 0 == 0 ? "" : a / b
}

# A number with `d` decimals, or a dash.
function f(v, d,    s) {
    if (v == "")
        return DASH
    s = sprintf("%." d "f", v)
    return s ~ /^-0\.?0*$/ ? substr(s, 2) : s
}

# A number with about three significant digits, or a dash.
function g3(v,    a) {
    if (v == "")
        return DASH
    a = v < 0 ? -v : v
    return sprintf(a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : "%.3f", v)
}

# A signed percentage change from `base` to `v` ("+12 %", "-3 %"), or "".
function pct(v, base) {
    if (v == "" || base == "" || base + 0 == 0)
        return ""
    return sprintf("%+.0f %%", (v / base - 1) * 100)
}

# Splits the space-separated list `s` into a[1..n]; returns n.
function words(s, a) {
    return split(s, a, " ")
}

# The stress test's seconds of `impl` with `procs` processes in bench `b`
# (stress or mpi_stress); for a run stopped at the time limit, the limit (a
# lower bound), with STOPPED set to 1.
function secs(b, impl, procs,    v) {
    STOPPED = 0
    if ((v = getp(b, impl, procs, "seconds")) != "")
        return v
    if ((v = getp(b, impl, procs, "timed_out")) != "")
        STOPPED = 1
    return v
}

# The same, formatted with `d` decimals, "> " marking a lower bound.
function secsf(b, impl, procs, d,    v) {
    v = secs(b, impl, procs)
    return (STOPPED ? "> " : "") f(v, d)
}
