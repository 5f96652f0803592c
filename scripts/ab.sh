#!/bin/sh
# ab.sh - compare two builds of shmam in one run, interleaved, so that the
# machine's drift (this VM's absolute times swing by 3x) hits both alike.
#
#   scripts/ab.sh OLD_BUILD_DIR NEW_BUILD_DIR [ROUNDS]
#
# Each build dir holds bin/shmamrun, bench/rtt and bench/stress (make programs,
# or a checkout of another commit built with make).  Every round runs, for each
# build in turn: the AM round trip against the raw line ping-pong (lockfree and
# tas, pinned) and the many-to-one stress test with 7 writers (lockfree and
# tas).  Prints one CSV row per measurement (round,build,bench,alg,metric,value)
# and, at the end, each metric's median per build and their ratio new/old
# (scripts/report/rows.py: the rows' one parser and the one median).
set -u
[ $# -ge 2 ] || { echo "usage: scripts/ab.sh OLD_BUILD NEW_BUILD [ROUNDS]" >&2; exit 2; }
old=$1 new=$2 rounds=${3:-5}
ROWS="/usr/bin/python3 $(dirname "$0")/report/rows.py" # the rows' one parser and median
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
one() { # build label bench alg
    b=$1 label=$2 bench=$3 alg=$4
    case $bench in
    rtt) "$b/bin/shmamrun" -n 2 --bind -a "$alg" --timeout 120 "$b/bench/rtt" \
            --iters 50000 --warmup 1000 --rounds 3 | $ROWS pick am_rtt am_vs_raw |
            sed "s/^/$label,rtt,/" ;;
    stress) "$b/bin/shmamrun" -n 8 --bind -a "$alg" --timeout 120 "$b/bench/stress" \
            --total 200000 --repeat 3 | $ROWS pick seconds msgs_per_s |
            sed "s/^/$label,stress7,/" ;;
    esac
}
for r in $(seq 1 "$rounds"); do
    for pair in "old:$old" "new:$new"; do
        label=${pair%%:*} b=${pair#*:}
        for alg in lockfree tas; do
            one "$b" "$label" rtt "$alg" | sed "s/^/$r,/"
            one "$b" "$label" stress "$alg" | sed "s/^/$r,/"
        done
    done
done | tee "$rows"
# Medians per build, then new/old for each metric: the figure to quote, both
# sides measured in this run.
echo "median over $rounds rounds (bench,alg,metric: old new new/old):"
$ROWS ab "$rows"
