#!/bin/sh
# Runs each Check test binary given, from the repository root, and prints one
# closing line "N passed, N failed" over all of them.  An argument KIND:binary
# runs the binary with SHMAM_QUEUE=KIND: its endpoints that do not name a queue
# kind get per-sender channels of that kind (and its loops over claim
# algorithms run one: testutil.h).  Fails if any test failed,
# a binary crashed or ran no test, or this run left a segment behind.
#
# Leftovers: only this run's names are looked at, in both backends (POSIX
# /dev/shm and System V), so other shmam programs running on the machine
# meanwhile neither fail the run nor hide a leak of ours.  Each suite checks the
# endpoints it made itself (its run prefix, testutil.c) and fails for any left.
# The jobs suites start under shmamrun are named j<launcher pid>-... (the
# default prefix: SHMAM_JOB_PREFIX is unset here, as the suites that look for
# their jobs' names expect); every program a suite starts is listed in
# $TU_PIDS_FILE (testutil.c, tu_start), and at the end shmamstat lists what is
# left under exactly those names: j<pid>- (a launcher's jobs) and s<pid>. (a
# program run alone that made a one-rank job).  What it finds fails the run and
# is removed.
set -u
cd "$(dirname "$0")/.." || exit 1
export CK_DEFAULT_TIMEOUT="${CK_DEFAULT_TIMEOUT:-120}"
unset SHMAM_JOB_PREFIX
TU_PIDS_FILE=$(mktemp "${TMPDIR:-/tmp}/shmam-test-pids.XXXXXX") || exit 1
export TU_PIDS_FILE
passed=0 failed=0 broken="" stat=""
# elapsed T0 T1: the seconds between two `date +%s%N` readings, to 0.1 s.
elapsed() {
    awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'
}
# Suites run TEST_JOBS at a time (default: one per CPU, at most 2), each
# into its own files under $runs (N.out, N.rc, N.s, N.xml); their outputs
# are then printed one after another in the order given, each closed by its
# time ("== suite (kind): 12.3 s") after the tests that took SLOW_S seconds
# or more (default 5), from Check's XML log.  A suite beside another runs
# as beside any busy program: tests assert behaviour, never speed.
runs=$(mktemp -d "${TMPDIR:-/tmp}/shmam-test-runs.XXXXXX") || exit 1
trap 'rm -f "$TU_PIDS_FILE"; rm -rf "$runs"' EXIT
jobs=${TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$jobs" -gt 2 ] 2>/dev/null && jobs=2
# one N ARG: run suite ARG (KIND:binary or binary) as number N.
one() {
    n=$1 arg=$2 t=${2#*:} kind=""
    [ "$t" != "$arg" ] && kind=${arg%%:*}
    t0=$(date +%s%N)
    if [ -n "$kind" ]; then
        SHMAM_QUEUE=$kind CK_XML_LOG_FILE_NAME="$runs/$n.xml" "$t" >"$runs/$n.out" 2>&1
    else
        CK_XML_LOG_FILE_NAME="$runs/$n.xml" "$t" >"$runs/$n.out" 2>&1
    fi
    echo $? >"$runs/$n.rc"
    t1=$(date +%s%N)
    elapsed "$t0" "$t1" >"$runs/$n.s"
}
slow_tests() {
    awk -v min="${SLOW_S:-5}" -F '[<>]' '
        $2 == "id" { id = $3 } $2 == "iteration" { it = $3 }
        $2 == "duration" && id != "" && $3 + 0 >= min { printf "   %s:%s %.1f s\n", id, it, $3 }
        $2 == "duration" { id = "" } # a test'"'"'s, or (no id) the whole run'"'"'s
    ' "$1" 2>/dev/null
}
# Start suite N once fewer than $jobs run (the .rc files count the ended).
n=0
for arg in "$@"; do
    n=$((n + 1))
    while [ $((n - 1 - $(ls "$runs" | grep -c '\.rc$'))) -ge "$jobs" ]; do
        sleep 0.2
    done
    one "$n" "$arg" &
done
wait
n=0
for arg in "$@"; do
    n=$((n + 1))
    t=${arg#*:} kind=""
    [ "$t" != "$arg" ] && kind=${arg%%:*}
    echo "== $t${kind:+ (SHMAM_QUEUE=$kind)}"
    [ -z "$stat" ] && stat="$(dirname "$(dirname "$t")")/bin/shmamstat"
    out=$(cat "$runs/$n.out"); rc=$(cat "$runs/$n.rc")
    printf '%s\n' "$out"
    slow_tests "$runs/$n.xml"
    echo "== ${t##*/}${kind:+ ($kind)}: $(cat "$runs/$n.s") s"
    line=$(printf '%s\n' "$out" | grep -E '^[0-9]+%: Checks: [0-9]+' | tail -n 1)
    if [ -z "$line" ]; then
        broken="$broken $t"; failed=$((failed + 1)); continue
    fi
    checks=$(echo "$line" | sed -E 's/.*Checks: ([0-9]+).*/\1/')
    fails=$(echo "$line" | sed -E 's/.*Failures: ([0-9]+).*/\1/')
    errs=$(echo "$line" | sed -E 's/.*Errors: ([0-9]+).*/\1/')
    bad=$((fails + errs))
    passed=$((passed + checks - bad)); failed=$((failed + bad))
    [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ] && { broken="$broken $t"; failed=$((failed + 1)); }
    # no test ran (a SHMAM_TEST or CK_RUN_CASE that names none: make check T=suite:x)
    [ "$checks" -eq 0 ] && { broken="$broken $t"; failed=$((failed + 1)); }
done
# The names of the programs the suites started: j<pid>- and s<pid>. each.
names=$(sort -un "$TU_PIDS_FILE" | sed 's/.*/j&- s&./')
if [ -n "$names" ]; then
    if [ ! -x "$stat" ]; then
        echo "cannot look for leftover segments: $stat is not built"
        failed=$((failed + 1))
    else
        # shellcheck disable=SC2086 # one argument per name
        list=$("$stat" $names) || { echo "shmamstat could not list the segments"; failed=$((failed + 1)); }
        left=$(printf '%s\n' "$list" | awk 'NR > 1 && !/^\(/ { printf " %s (%s)", $1, $2 }')
        if [ -n "$left" ]; then
            echo "segments left by this run's jobs (now removed):$left"
            # shellcheck disable=SC2086
            "$stat" --clean --yes $names >/dev/null
            failed=$((failed + 1))
        fi
    fi
fi
[ -n "$broken" ] && echo "did not finish cleanly:$broken"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
