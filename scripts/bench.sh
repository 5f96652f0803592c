#!/bin/sh
# bench.sh - what `make bench` runs: the AM round-trip benchmark (bench/rtt.c)
# for every claim algorithm and both segment backends, two pinned processes.
#
# Writes results/<date>/rtt.csv (one header line, one row per configuration),
# prints it as a markdown table, and exits nonzero if any run failed (the others
# still run).  Environment: RTT_ITERS (default 100000), RTT_WARMUP (1000),
# RTT_ROUNDS (5), TIMEOUT seconds per run (120).
set -eu
cd "$(dirname "$0")/.."
run=build/bin/shmamrun
rtt=build/bench/rtt
for f in "$run" "$rtt"; do
    [ -x "$f" ] || { echo "bench.sh: $f is missing; run make bench" >&2; exit 1; }
done
algs="lockfree tas ttas ticket anderson mutex"
out="results/$(date +%Y-%m-%d)"
mkdir -p "$out"
csv="$out/rtt.csv"
iters=${RTT_ITERS:-100000}
warmup=${RTT_WARMUP:-1000}
rounds=${RTT_ROUNDS:-5}
timeout=${TIMEOUT:-120}

echo "# bench,claim,shm,procs,pinned,iters,am_rtt_us,raw_rtt_us,ratio,am_spread_us" >"$csv"
failed=""
for shm in posix sysv; do
    for a in $algs; do
        printf 'bench.sh: rtt %-8s %-5s ... ' "$a" "$shm" >&2
        if row=$("$run" -n 2 --bind --timeout "$timeout" -a "$a" --shm "$shm" "$rtt" \
            --iters "$iters" --warmup "$warmup" --rounds "$rounds"); then
            echo "$row" >>"$csv"
            echo "$row" | awk -F, '{print $7 " us (raw " $8 " us, ratio " $9 ")"}' >&2
        else
            echo "FAILED" >&2
            failed="$failed $a/$shm"
        fi
    done
done

echo
echo "AM round trip vs raw cache-line ping-pong ($csv):"
echo
awk -f scripts/csv2md.awk "$csv" || true
if [ -n "$failed" ]; then
    echo "bench.sh: FAILED:$failed" >&2
    exit 1
fi
