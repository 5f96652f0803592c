#!/bin/sh
# bench.sh - what `make bench` runs: the AM round-trip benchmark (bench/rtt.c)
# for every claim algorithm (all in one job per backend, rounds interleaved)
# and both segment backends, two pinned processes, at full size.  (`make run` runs the whole suite: scripts/report.sh.)
#
# Writes results/<YYYY-MM-DD>/rtt.csv (-HHMMSS appended if the directory
# exists; RESULTS=dir overrides) in the common schema
#   bench,impl,shm,procs,pinned,iters,metric,value,unit,spread
# (metrics am_rtt, raw_rtt, am_vs_raw, am_rtt_vs_lockfree), prints it as a markdown table, and
# exits nonzero if any run failed (the others still run).  Environment:
# RTT_ITERS (default 100000), RTT_WARMUP (1000), RTT_ROUNDS (5), TIMEOUT
# seconds per run (120).
set -u
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
run=$B/bin/shmamrun
rtt=$B/bench/rtt
for f in "$run" "$rtt"; do
    [ -x "$f" ] || { echo "bench.sh: $f is missing; run make bench" >&2; exit 1; }
done
if [ -n "${RESULTS:-}" ]; then
    out=$RESULTS
else
    out=results/$(date +%Y-%m-%d)
    [ -e "$out" ] && out=$out-$(date +%H%M%S)
fi
mkdir -p "$out" || exit 1
csv="$out/rtt.csv"
iters=${RTT_ITERS:-100000}
warmup=${RTT_WARMUP:-1000}
rounds=${RTT_ROUNDS:-5}
timeout=${TIMEOUT:-120}
ROWS="/usr/bin/python3 scripts/report/rows.py" # the row schema's one parser

echo "bench,impl,shm,procs,pinned,iters,metric,value,unit,spread" >"$csv"
failed=""
for shm in posix sysv; do
    printf 'bench.sh: rtt, every algorithm, %-5s ... ' "$shm" >&2
    if rows=$("$run" -n 2 --bind --timeout "$timeout" --shm "$shm" "$rtt" --algs all \
        --iters "$iters" --warmup "$warmup" --rounds "$rounds"); then
        echo "$rows" | $ROWS check >>"$csv" || failed="$failed $shm"
        echo "$rows" | $ROWS pick am_rtt | cut -d, -f1,3 | tr ',\n' '  ' >&2
        echo "us" >&2
    else
        echo "FAILED" >&2
        failed="$failed $shm"
    fi
done

echo
echo "AM round trip vs raw cache-line ping-pong, us ($csv):"
echo
$ROWS md --pivot "$csv" || true
if [ -n "$failed" ]; then
    echo "bench.sh: FAILED:$failed" >&2
    exit 1
fi
