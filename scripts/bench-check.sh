#!/bin/sh
# bench-check.sh - what `make bench-check` runs: the physical consistency of
# the benchmarks' figures, which `make check` does not judge (the tests assert
# behaviour, never speed; a busy machine moves these figures).
#
# Runs logp and rtt --ladder 0,64 at a small size, lockfree, ticket and
# fastforward in one job each, pinned, into one CSV, and judges the
# [[consistency]] checks of scripts/report/paper.toml on it with the report's
# verdict engine (scripts/report/report.py bench-check): a check fails only
# when the figure's whole spread lies on the wrong side of its bound's.  Exits
# nonzero if a relation failed or had no numbers, or a benchmark failed.  Run
# it on a quiet machine: it is a measurement, not a gate.
# Environment: B (build directory, default build), ROUNDS (default 5).
# shellcheck disable=SC2086 # ARGS are word lists; paths have no blanks
set -u
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
ROUNDS=${ROUNDS:-5}
ALGS=lockfree,ticket,fastforward
SHMAMRUN=$B/bin/shmamrun # report.py asks it which implementations are queue kinds
export SHMAMRUN
CSV=$(mktemp "${TMPDIR:-/tmp}/shmam-bench-check.XXXXXX") || exit 1
trap 'rm -f "$CSV"' EXIT
/usr/bin/python3 scripts/report/rows.py header >"$CSV" || exit 1
rc=0
for bench in "logp --quick" "rtt --ladder 0,64 --iters 20000 --warmup 1000"; do
    echo "== $bench --algs $ALGS --rounds $ROUNDS"
    $SHMAMRUN -n 2 --bind --timeout 300 $B/bench/$bench --algs $ALGS --rounds "$ROUNDS" \
        >>"$CSV" || { echo "bench-check: $bench failed"; rc=1; }
done
python3 scripts/report/report.py "$CSV" scripts/report/paper.toml bench-check || rc=1
exit $rc
