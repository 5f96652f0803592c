#!/bin/sh
# streams.sh - one-way short streams over many separate jobs (runtime/slip.c): does
# every job run at the fast rate, or do some fall into lockstep for their
# whole life?  A job's regime is decided when it starts, so only separate jobs
# show it: rounds inside one job all share their job's fate.
#
#   scripts/streams.sh [NEW_BUILD [OLD_BUILD]]
#
# Environment: JOBS (12), ALGS (lockfree,onecas,channels: logp's and stress's
# --algs), LOGP_ARGS (--quick; more rounds, e.g. "--iters 6000 --rounds 7",
# let the median leave out more preempted rounds on a busy machine), SECONDS_
# (stress's --seconds per run, 0.1), MANY=1 to add stress with 3 and 7
# writers and bw's 8 KB flood per job (the costs a fix must not raise).
#
# Each job j runs, for each build (ABBA: new first in even jobs, old first in
# odd ones, so that a drift of the machine's load hits both alike):
#   logp (LOGP_ARGS, both ranks pinned): g_oneway, and rtt and os beside it;
#     g_raw, the raw floor: the same flood of 8-byte messages through a bare
#     ring of one-line slots between the same two pinned processes, measured
#     next to each kind's g_oneway in every round; and g_oneway_vs_raw, the
#     per-round quotient (median over the job's rounds).  If g_raw spreads
#     across jobs as much as g_oneway, the spread is the machine's (where the
#     VM's vCPUs sit), and g_oneway_vs_raw's spread is the honest one;
#   stress with one writer, --rounds 1: us_per_msg (its s_per_1e6) and
#   msgs_per_poll (messages per productive poll: about 1-2 in lockstep).
# Prints a line per measurement, "job,build,bench,alg,metric,value", the load
# average before each job as a comment, then for each bench,alg,metric its
# spread over the jobs per build (lowest, median, highest, highest/lowest)
# and the median of the per-job ratios new/old (scripts/report/rows.py jobs).
# One build alone (no OLD_BUILD) prints its spreads only.
set -u
new=${1:-build} old=${2:-}
JOBS=${JOBS:-12} ALGS=${ALGS:-lockfree,onecas,channels} SECS=${SECONDS_:-0.1}
LOGP_ARGS=${LOGP_ARGS:---quick}
ROWS="/usr/bin/python3 $(dirname "$0")/report/rows.py" # the rows' one parser and median
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT

# run BUILD LABEL JOB: every measurement of one build in job JOB.
run() {
    b=$1 label=$2 j=$3
    "$b/bin/shmamrun" -n 2 --bind --timeout 120 "$b/bench/logp" --algs "$ALGS" $LOGP_ARGS |
        $ROWS pick g_oneway g_raw g_oneway_vs_raw rtt os | sed "s/^/$j,$label,logp,/"
    "$b/bin/shmamrun" -n 2 --bind --timeout 120 "$b/bench/stress" --algs "$ALGS" \
        --seconds "$SECS" --rounds 1 | $ROWS pick s_per_1e6 msgs_per_poll |
        sed -e 's/,s_per_1e6,/,us_per_msg,/' -e "s/^/$j,$label,stress1,/"
    [ "${MANY:-0}" = 1 ] || return 0
    for w in 3 7; do
        "$b/bin/shmamrun" -n $((w + 1)) --bind --timeout 120 "$b/bench/stress" \
            --algs lockfree,onecas --seconds "$SECS" --rounds 1 | $ROWS pick s_per_1e6 |
            sed "s/^/$j,$label,stress$w,/"
    done
    "$b/bin/shmamrun" -n 2 --bind --timeout 120 -a lockfree "$b/bench/bw" --sizes 8192 \
        --quick | $ROWS pick flood_vs_raw_8192 | sed "s/^/$j,$label,bw,/"
}

for j in $(seq 1 "$JOBS"); do
    echo "# job $j load $(cut -d' ' -f1-3 /proc/loadavg)"
    if [ -z "$old" ]; then
        run "$new" new "$j"
    elif [ $((j % 2)) -eq 0 ]; then
        run "$new" new "$j"
        run "$old" old "$j"
    else
        run "$old" old "$j"
        run "$new" new "$j"
    fi
done | tee "$rows"
echo "# over $JOBS jobs: build lowest median highest highest/lowest; new/old per job, median"
$ROWS jobs "$rows"
