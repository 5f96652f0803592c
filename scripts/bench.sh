#!/bin/sh
# bench.sh - what `make bench` runs: the AM round-trip benchmark (bench/rtt.c)
# for every claim algorithm and both segment backends, two pinned processes,
# at full size.  (`make run` runs the whole suite: scripts/report.sh.)
#
# Writes results/<YYYY-MM-DD>/rtt.csv (-HHMMSS appended if the directory
# exists; RESULTS=dir overrides) in the common schema
#   bench,impl,shm,procs,pinned,iters,metric,value,unit,spread
# (metrics am_rtt, raw_rtt, am_vs_raw), prints it as a markdown table, and
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
algs=$("$run" --list-claims | tr '\n' ' ') || exit 1 # the one list: am_claim_names
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

echo "bench,impl,shm,procs,pinned,iters,metric,value,unit,spread" >"$csv"
failed=""
for shm in posix sysv; do
    for a in $algs; do
        printf 'bench.sh: rtt %-8s %-5s ... ' "$a" "$shm" >&2
        if rows=$("$run" -n 2 --bind --timeout "$timeout" -a "$a" --shm "$shm" "$rtt" \
            --iters "$iters" --warmup "$warmup" --rounds "$rounds"); then
            echo "$rows" | awk -f scripts/report/rows.awk >>"$csv" || failed="$failed $a/$shm"
            echo "$rows" | awk -F, '$7 == "am_rtt" { a = $8 } $7 == "raw_rtt" { r = $8 }
                $7 == "am_vs_raw" { x = $8 }
                END { print a " us (raw " r " us, ratio " x ")" }' >&2
        else
            echo "FAILED" >&2
            failed="$failed $a/$shm"
        fi
    done
done

echo
echo "AM round trip vs raw cache-line ping-pong, us ($csv):"
echo
awk -f scripts/csv2md.awk -v pivot=1 "$csv" || true
if [ -n "$failed" ]; then
    echo "bench.sh: FAILED:$failed" >&2
    exit 1
fi
