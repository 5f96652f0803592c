#!/bin/sh
# flake.sh - runs make check's tests N times and counts the failures per test.
#
#   scripts/flake.sh N [--hog]
#
# Builds what make check builds once, then runs its test run (`make
# check-run`: every suite, the channel reruns and the report's unit tests;
# not the package install nor the format check) N times.  With --hog, one
# CPU-bound process (sh -c 'while :; do :; done') runs beside them the whole
# time, as on a developer's busy laptop; it is killed at the end.  T=suite or
# T=suite:test in the environment narrows each run as for make check.
# Prints each run's time and result as it ends, then, per test
# (suite[ (SHMAM_QUEUE=kind)]:case:test), how many runs it failed in; a suite
# that did not finish cleanly or left segments counts as its own line.
# Every run's output is kept in a directory it names (FLAKE_LOGS, else a new
# one under TMPDIR).  Exits nonzero if any run failed.
set -u
cd "$(dirname "$0")/.." || exit 1
n=${1:-}
case "$n" in '' | *[!0-9]*) echo "usage: scripts/flake.sh N [--hog]" >&2; exit 2 ;; esac
hog=""
[ "${2:-}" = --hog ] && hog=1
logs=${FLAKE_LOGS:-$(mktemp -d "${TMPDIR:-/tmp}/shmam-flake.XXXXXX")} || exit 1
mkdir -p "$logs" || exit 1
make --no-print-directory check-build >"$logs/build.txt" 2>&1 || {
    tail -n 20 "$logs/build.txt"; echo "flake: the build failed ($logs/build.txt)"; exit 1
}
hog_pid=""
trap '[ -n "$hog_pid" ] && kill "$hog_pid" 2>/dev/null' EXIT
trap 'exit 130' INT TERM
if [ -n "$hog" ]; then
    sh -c 'while :; do :; done' &
    hog_pid=$!
fi
echo "flake: $n run(s)${hog:+ beside a CPU hog (pid $hog_pid)}, $(nproc) CPUs, logs in $logs"
bad_runs=0
i=1
while [ "$i" -le "$n" ]; do
    t0=$(date +%s)
    make --no-print-directory check-run >"$logs/run$i.txt" 2>&1
    rc=$?
    t1=$(date +%s)
    [ "$rc" -ne 0 ] && bad_runs=$((bad_runs + 1))
    echo "run $i: $((t1 - t0)) s, $(tail -n 1 "$logs/run$i.txt")${hog:+ (hog)}, load $(cut -d' ' -f1-3 /proc/loadavg)"
    i=$((i + 1))
done
echo "flake: $bad_runs of $n run(s) failed; failures per test (runs):"
# A failure line of Check (CK_NORMAL): FILE:LINE:F|E:CASE:TEST:LOOP: message;
# the suite is the last "== BINARY [(SHMAM_QUEUE=KIND)]" line before it.
for f in "$logs"/run*.txt; do
    awk '
        /^== .*: [0-9.]+ s$/ { next }
        /^== / { suite = $2; sub(/.*\//, "", suite); if (NF > 2) suite = suite " " $3; next }
        /^[^ ]*:[0-9]+:[FE]:/ {
            split($0, p, ":"); key = suite ":" p[4] ":" p[5]
            if (!(key in seen)) { seen[key] = 1; print key }
            next
        }
        /^did not finish cleanly:/ { for (i = 5; i <= NF; i++) print $i ": did not finish cleanly" }
        /^segments left by this run/ { print "(run): segments left behind" }
        /^Traceback|^FAILED \(/ { if (!py++) print "scripts/report unit tests" }
    ' "$f"
done | sort | uniq -c | sort -rn
[ "$bad_runs" -eq 0 ]
