#!/bin/sh
# demo.sh - what `make run` does: a short end-to-end demonstration of shmam
# across all six claim algorithms, about half a minute or less.
#
# For each algorithm it runs
#   rtt        2 pinned ranks: AM request/reply round trip vs a raw cache-line
#              ping-pong in the same run (bench/rtt.c)
#   demo_many  4 ranks: 3 senders x DEMO_MSGS short messages to rank 0, checked
#              for count, source and per-sender order, then 3 x DEMO_BULK 8 KB
#              bulk messages with checksums (bench/demo_many.c)
# prints a table, writes every row to results/<date>/demo.csv, and exits nonzero
# if any run or check failed.  Environment: DEMO_ITERS (20000 round trips),
# DEMO_MSGS (20000 per sender), DEMO_BULK (1000 per sender), TIMEOUT (30 s/run).
set -eu
cd "$(dirname "$0")/.."
run=build/bin/shmamrun
for f in "$run" build/bench/rtt build/bench/demo_many; do
    [ -x "$f" ] || { echo "demo.sh: $f is missing; run make run" >&2; exit 1; }
done
algs="lockfree tas ttas ticket anderson mutex"
out="results/$(date +%Y-%m-%d)"
mkdir -p "$out"
csv="$out/demo.csv"
iters=${DEMO_ITERS:-20000}
msgs=${DEMO_MSGS:-20000}
bulk=${DEMO_BULK:-1000}
timeout=${TIMEOUT:-30}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

{
    echo "# bench,claim,shm,procs,pinned,iters,am_rtt_us,raw_rtt_us,ratio,am_spread_us"
    echo "# many,claim,shm,procs,messages,seconds,msgs_per_s,in_order"
    echo "# bulk,claim,shm,procs,messages,bytes,seconds,mb_per_s,checksums_ok"
} >"$csv"

# field KIND N: field N of the row of kind KIND in $tmp, or "-" if there is none.
field() {
    awk -F, -v k="$1" -v n="$2" '$1 == k { v = $n } END { print v == "" ? "-" : v }' "$tmp"
}

echo "shmam demo: $(nproc) CPUs; rtt: 2 ranks --bind, $iters round trips;" \
    "many-to-one: 4 ranks, 3 x $msgs short + 3 x $bulk bulk (8 KB)"
failed=""
table=""
for a in $algs; do
    : >"$tmp"
    ok=yes
    echo "demo: $a: rtt ..."
    if ! "$run" -n 2 --bind --timeout "$timeout" -a "$a" build/bench/rtt \
        --iters "$iters" --warmup 500 --rounds 5 >>"$tmp"; then
        ok=NO
    fi
    echo "demo: $a: many-to-one and bulk ..."
    if ! "$run" -n 4 --timeout "$timeout" -a "$a" build/bench/demo_many \
        --msgs "$msgs" --bulk "$bulk" >>"$tmp"; then
        ok=NO
    fi
    [ "$(field many 8)" = 1 ] && [ "$(field bulk 9)" = 1 ] || ok=NO
    [ "$ok" = yes ] || failed="$failed $a"
    cat "$tmp" >>"$csv"
    line="| $a | $(field rtt 7) | $(field rtt 8) | $(field rtt 9) | $(field many 7) |"
    line="$line $(field bulk 8) | $ok |"
    echo "demo: $a: done, checks ${ok}"
    table="$table$line
"
done

echo
echo "| algorithm | AM RTT us | raw RTT us | ratio | many-to-one msgs/s | bulk MB/s | order+count OK |"
echo "|---|---:|---:|---:|---:|---:|---|"
printf '%s' "$table"
echo
echo "ratio = AM round trip / raw cache-line round trip (goal for lockfree: <= 2)."
echo "Rows: $csv"
if [ -n "$failed" ]; then
    echo "demo.sh: FAILED:$failed" >&2
    exit 1
fi
