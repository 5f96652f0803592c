#!/bin/sh
# ab.sh - compare two builds of shmam in one run, interleaved, so that the
# machine's drift (this VM's absolute times swing by 3x) hits both alike.
#
#   scripts/ab.sh OLD_BUILD_DIR NEW_BUILD_DIR [ROUNDS]
#
# Each build dir holds bin/shmamrun and bench/{rtt,stress,bw,rpcbench} (make
# programs, or a checkout of another commit built with make).  Every round
# runs, for each build in turn, the benches of a hot path's A/B:
#   rtt      the AM round trip against the raw line ping-pong (lockfree, tas)
#   stress7  the many-to-one stress test with 7 writers (lockfree, tas)
#   bw       one-way bulk floods at 64 B - 8 KB, the handler not touching the
#            data, each beside the raw ring floor (lockfree, tas)
#   rpc      calls: the blocking and polling round trip of 8 bytes and 32
#            calls in flight (rpcbench's shmam rows)
# AB_BENCHES (default "rtt stress bw rpcbench") picks some of them, AB_ALGS
# (default "lockfree tas") the claims.  A build without a bench (an old
# commit) just has no rows of it.  Prints one
# CSV row per measurement (round,build,bench,alg,metric,value) and, at the
# end, each metric's median per build and their ratio new/old
# (scripts/report/rows.py: the rows' one parser and the one median).
set -u
[ $# -ge 2 ] || { echo "usage: scripts/ab.sh OLD_BUILD NEW_BUILD [ROUNDS]" >&2; exit 2; }
old=$1 new=$2 rounds=${3:-5}
ROWS="/usr/bin/python3 $(dirname "$0")/report/rows.py" # the rows' one parser and median
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
one() { # build label bench alg
    b=$1 label=$2 bench=$3 alg=$4
    [ -x "$b/bench/$bench" ] || return 0
    case $bench in
    rtt) "$b/bin/shmamrun" -n 2 --bind -a "$alg" --timeout 120 "$b/bench/rtt" \
            --iters 50000 --warmup 1000 --rounds 3 | $ROWS pick am_rtt am_vs_raw |
            sed "s/^/$label,rtt,/" ;;
    stress) "$b/bin/shmamrun" -n 8 --bind -a "$alg" --timeout 120 "$b/bench/stress" \
            --total 200000 --repeat 3 | $ROWS pick seconds msgs_per_s |
            sed "s/^/$label,stress7,/" ;;
    bw) "$b/bin/shmamrun" -n 2 --bind -a "$alg" --timeout 300 "$b/bench/bw" \
            --sizes "$BW_SIZES" --rounds 3 | $ROWS pick $BW_METRICS |
            sed "s/^/$label,bw,/" ;;
    rpcbench) "$b/bench/rpcbench" --iters 2000 --rounds 3 --timeout 300 |
            $ROWS pick rtt_8B tput_32 | grep '^call' | sed "s/^/$label,rpc,/" ;;
    esac
}
BW_SIZES=64,256,1024,4096,8192
BW_METRICS=$(for n in $(echo $BW_SIZES | tr , ' '); do printf 'bw_flood_MBps_%s flood_vs_raw_%s ' $n $n; done)
for r in $(seq 1 "$rounds"); do
    for pair in "old:$old" "new:$new"; do
        label=${pair%%:*} b=${pair#*:}
        for alg in ${AB_ALGS:-lockfree tas}; do
            for bench in ${AB_BENCHES:-rtt stress bw rpcbench}; do
                [ "$bench" = rpcbench ] && continue
                one "$b" "$label" $bench "$alg" | sed "s/^/$r,/"
            done
        done
        case " ${AB_BENCHES:-rpcbench} " in
        *" rpcbench "*) one "$b" "$label" rpcbench - | sed "s/^/$r,/" ;;
        esac
    done
done | tee "$rows"
# Medians per build, then new/old for each metric: the figure to quote, both
# sides measured in this run.
echo "median over $rounds rounds (bench,alg,metric: old new new/old):"
$ROWS ab "$rows"
