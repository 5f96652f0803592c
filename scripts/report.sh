#!/bin/sh
# report.sh - what `make run` runs: the whole measurement suite, then a report.
#
#   scripts/report.sh                 quick scale (a few minutes on 2 cores)
#   SCALE=paper scripts/report.sh     the paper's sizes (1,000,000 integers in
#                                     the stress test, full iteration counts)
#
# Runs, with progress lines, every benchmark of bench/ and the MPICH baselines,
# the lock microbenchmark and the applications (scripts/apps.sh, at the same
# SCALE), and writes results/<YYYY-MM-DD>/ (-HHMMSS appended if that exists;
# RESULTS=dir overrides):
#   <bench>.csv    the rows of each benchmark, in the common schema
#                  bench,impl,shm,procs,pinned,iters,metric,value,unit,spread
#   all.csv        every row, one header
#   report.md      machine, Tables 1 and 2 in the paper's layout with MPICH
#                  columns (and the per-sender channel kinds beside the claim
#                  algorithms), one-way bandwidth 64 B .. 4 MB against MPICH and
#                  a raw floor, locks (lockbench, and inside unmodified programs
#                  through libshmam-locks.so: scripts/locks_programs.py),
#                  per-sender channels or shared queues
#                  (pollcost), RPC (rpcbench), applications, clusters of SMPs (the hybrid
#                  transport of libshmam-mpi within and between nodes, beside
#                  shared memory alone and MPI), targets, the figures' own
#                  consistency (LogP's relations), and how our numbers
#                  compare with the paper's conclusions (scripts/report/report.py,
#                  the paper's figures and claims in scripts/report/paper.toml,
#                  judged by scripts/report/verdict.py)
#   loggp/*.txt    per algorithm, queue kind and MPICH: netgauge's loggp layout
#                  with the LogGOPSim command line; loggp/*.goal its ping-pong
#                  (scripts/report/loggp.py)
#   *.png          plots (scripts/report/*.gp), referenced from report.md
#   run.txt        the run's scale, time and programs' arguments, KEY=VALUE
#   log.txt        everything the programs wrote on stderr
#   gasnet.txt     gex_testam's rows: the GASNet-EX layer (compat/gasnet/) and
#                  native shmam in one job, tabled at the end of report.md
# How it measures (bench/README.md): one estimator everywhere (each round's
# mean; the median over rounds; the lowest-highest round as spread); the claim
# algorithms and the per-sender queue kinds compared within one job each (an
# endpoint pair per algorithm or kind: --algs all,channels; rounds interleaved
# ABBA), so their ratios are in-run ratios; stress runs of fixed duration (0.7
# s at quick scale, for ten kinds of queue; 3 s at the paper's), a stall
# failing the benchmark itself; MPICH
# with the same warm-up and rounds, binding as the machine section says.
# Environment: SCALE, RESULTS, B (build directory) and TIMEOUT (a safety limit
# per job: a job stopped there is a failure) override the defaults.
# REPORT_ONLY=1 RESULTS=DIR runs nothing: it assembles DIR's CSVs into all.csv
# again and rewrites the plots and report.md (run.txt and failures.txt kept).
# This script only runs programs and collects CSV: scripts/report/rows.py
# owns the rows, scripts/report/report.py writes report.md.
# It exits nonzero if any benchmark failed (a wrong count, a stall, a crash, a
# timeout, a malformed row) or was not built, or if a run left a segment behind
# (in either backend: every job of this run is named after SHMAM_JOB_PREFIX,
# which this script sets, and shmamstat lists what is left of exactly those);
# the report is written either way and says which.
# shellcheck disable=SC2086 # *_ARGS are word lists; paths have no blanks
set -u
cd "$(dirname "$0")/.." || exit 1
SCALE=${SCALE:-quick}
B=${B:-build}
RUN=$B/bin/shmamrun
# Every job of this run (and of apps.sh, which it runs) is named r<our pid>x...:
# the leak check below looks at those names only, so other shmam programs on
# the machine neither fail it nor hide a leak of ours.
SHMAM_JOB_PREFIX=r$(($$ % 100000))x # the x ends it: no other pid extends it
export SHMAM_JOB_PREFIX
ALGS=$("$RUN" --list-claims | cut -f1 | tr '\n' ' ') || exit 1 # the one list: am_claim_names
SHMAMRUN=$RUN # report.py asks it which implementations are queue kinds
export SHMAMRUN
# clumps: rank 0 on the first CPU, ranks 1 and 2 on the second (one CPU: all on it).
CLUMPS_BIND=user:0,1,1
[ "$(nproc)" -ge 2 ] || CLUMPS_BIND=user:0,0,0
R=scripts/report
ROWS="/usr/bin/python3 $R/rows.py" # the row schema's one parser and median
WRITERS=$(/usr/bin/python3 $R/report.py writers) || exit 1 # report.py's WRITERS
case $SCALE in
quick)
    RTT_ARGS="--iters 700000 --warmup 2000 --rounds 7"
    LOGP_ARGS="--rounds 5"
    LOGGP_ARGS="--iters 4000 --rounds 5"
    LOGGP_SELF_ARGS="--iters 4000 --rounds 5 --algs lockfree"
    MPI_LOGGP_ARGS="--iters 4000 --rounds 5"
    PINGPONG_ARGS="--rounds 5"
    BW_ARGS="--rounds 5"
    STRESS_ARGS="--seconds 0.7 --rounds 3" # 10 kinds x 3 runs: 22 s per writer count
    MPI_STRESS_ARGS="--seconds 0.7 --repeat 3"
    DEMO_ARGS="--msgs 20000 --bulk 1000"
    LOCK_ARGS="--procs 1,2,4,8 --threads 1,2,4 --seconds 0.2 --rounds 3 --latency --recovery"
    LOCKPROG_ARGS="--scale quick"
    HEAP_ARGS="--quick"
    SPSC_ARGS="--quick"
    POLL_ARGS="--quick --rounds 5"
    CLUMPS_ARGS="--rounds 7"
    PYRPC_ARGS="--rounds 7 --iters 3000 --inflight-calls 10000"
    RPC_ARGS="--iters 2000 --rounds 5"
    RDV_ARGS="--iters 2000 --rounds 5"
    TIMEOUT=${TIMEOUT:-300}
    ;;
paper)
    RTT_ARGS="--iters 3000000 --warmup 10000 --rounds 11"
    LOGP_ARGS="--rounds 11"
    LOGGP_ARGS="--iters 20000 --rounds 11"
    LOGGP_SELF_ARGS="--iters 20000 --rounds 11 --algs lockfree"
    MPI_LOGGP_ARGS="--iters 20000 --rounds 11"
    PINGPONG_ARGS="--rounds 11"
    BW_ARGS="--rounds 11 --bytes 134217728 --max-msgs 50000"
    STRESS_ARGS="--seconds 3 --rounds 5"
    MPI_STRESS_ARGS="--seconds 3 --repeat 5"
    DEMO_ARGS="--msgs 100000 --bulk 1000"
    LOCK_ARGS="--procs 1,2,4,8 --threads 1,2,4 --seconds 2 --rounds 5 --latency --recovery"
    LOCKPROG_ARGS="--scale paper"
    HEAP_ARGS=""
    SPSC_ARGS=""
    POLL_ARGS="--rounds 11"
    CLUMPS_ARGS="--iters 300000 --rounds 11 --bytes 134217728 --max-msgs 50000"
    PYRPC_ARGS="--rounds 11 --iters 20000 --inflight-calls 50000"
    RPC_ARGS="--iters 10000 --rounds 11"
    RDV_ARGS="--iters 10000 --rounds 11"
    TIMEOUT=${TIMEOUT:-1800}
    ;;
*)
    echo "report.sh: SCALE must be quick or paper, not '$SCALE'" >&2
    exit 2
    ;;
esac

if [ -n "${RESULTS:-}" ]; then
    OUT=$RESULTS
else
    OUT=results/$(date +%Y-%m-%d)
    [ -e "$OUT" ] && OUT=$OUT-$(date +%H%M%S)
fi
mkdir -p "$OUT" || exit 1
LOG=$OUT/log.txt
FAILED=$OUT/failures.txt
TMP=$(mktemp -d) || exit 1
if [ -z "${REPORT_ONLY:-}" ]; then
    : >"$LOG"
    : >"$FAILED"
fi
trap 'rm -rf "$TMP"' EXIT
trap 'echo "report.sh: interrupted" >&2; exit 130' INT TERM
T0=$(date +%s)

# say TEXT: a progress line with the time since the start.
say() {
    t=$(($(date +%s) - T0))
    printf '[%2d:%02d] %s\n' $((t / 60)) $((t % 60)) "$*"
}

# fail LABEL WHY: note a failed step.
fail() {
    echo "$1: $2" >>"$FAILED"
    say "$1: FAILED ($2)"
}

# step FILE LABEL PROGRAM COMMAND...: runs COMMAND (which runs PROGRAM under
# the time limit TIMEOUT), adds its rows to $OUT/FILE.csv (with the bench field
# renamed to $BENCH_AS if that is set) and its stderr to the log.  A nonzero
# exit (124: stopped at the limit) or a row not in the schema fails the step.
step() {
    file=$1 label=$2 prog=$3
    shift 3
    if [ ! -x "$prog" ]; then
        fail "$label" "$prog was not built"
        return
    fi
    say "$label"
    echo "== $label: $*" >>"$LOG"
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    cat "$TMP/err" >>"$LOG"
    [ -f "$OUT/$file.csv" ] || echo "$HEADER" >"$OUT/$file.csv"
    # The rows of a run that failed are kept, its other output is not judged.
    if ! $ROWS check ${BENCH_AS:+--rename "$BENCH_AS"} "$TMP/out" >>"$OUT/$file.csv" \
        2>"$TMP/bad" && [ "$rc" -eq 0 ]; then
        cat "$TMP/bad" >>"$LOG"
        fail "$label" "$(head -n 1 "$TMP/bad")"
    fi
    if [ "$rc" -eq 124 ]; then
        fail "$label" "stopped at the time limit of $TIMEOUT s"
    elif [ "$rc" -ne 0 ]; then
        tail -n 3 "$TMP/err" | sed 's/^/    /'
        fail "$label" "exit status $rc"
    fi
}

# report.py SECTION...: report.md or the plots' data, from all.csv.
py() {
    /usr/bin/python3 $R/report.py "$OUT/all.csv" $R/paper.toml "$@"
}

# plots: the gnuplot data files and PNGs; a plot that fails is noted in the log.
# nalg: the algorithms and kinds of logp.dat (its header: param, them, MPICH).
plots() {
    py plotdata "$OUT" 2>>"$LOG" || echo "plot data failed" >>"$LOG"
    nalg=$(($(head -n 1 "$OUT/logp.dat" | wc -w) - 2))
    for p in logp stress bandwidth oneway; do
        gnuplot -e "dir='$OUT'; nalg=$nalg" $R/$p.gp >>"$LOG" 2>&1 || echo "plot $p failed" >>"$LOG"
    done
    # loggp_size.dat's columns are quoted pairs of words: count the quotes
    ncol=$(($(head -n 1 "$OUT/loggp_size.dat" | tr -cd '"' | wc -c) / 2))
    nimpl=$(($(head -n 1 "$OUT/loggp_cdf.dat" | tr -cd '"' | wc -c) / 2))
    gnuplot -e "dir='$OUT'; ncol=$ncol" $R/loggp_sig.gp >>"$LOG" 2>&1 || echo "plot loggp_sig failed" >>"$LOG"
    gnuplot -e "dir='$OUT'; nimpl=$nimpl" $R/loggp_cdf.gp >>"$LOG" 2>&1 || echo "plot loggp_cdf failed" >>"$LOG"
    ncol=$(head -n 1 "$OUT/locks.dat" | wc -w)
    nshm=$(head -n 1 "$OUT/locks.dat" | tr ' ' '\n' | grep -c '^shmam:')
    gnuplot -e "dir='$OUT'; ncol=$ncol; nshm=$nshm" $R/locks.gp >>"$LOG" 2>&1 ||
        echo "plot locks failed" >>"$LOG"
    gnuplot -e "dir='$OUT'" $R/locks_queue.gp >>"$LOG" 2>&1 ||
        echo "plot locks_queue failed" >>"$LOG"
    gnuplot -e "dir='$OUT'" $R/rpc.gp >>"$LOG" 2>&1 || echo "plot rpc failed" >>"$LOG"
}

HEADER=$($ROWS header) || exit 1

# measure: every benchmark, each into its CSV.
measure() {
    uptime >"$OUT/uptime.txt" 2>/dev/null

    # Point to point: every claim algorithm and per-sender channel kind in one job,
    # rounds interleaved.
    step rtt "rtt, every algorithm and channel kind" $B/bench/rtt \
        $RUN -n 2 --bind --timeout $TIMEOUT $B/bench/rtt --algs all,channels $RTT_ARGS
    step logp "logp, every algorithm and channel kind" $B/bench/logp \
        $RUN -n 2 --bind --timeout $TIMEOUT $B/bench/logp --algs all,channels $LOGP_ARGS
    # LogGP at every size, 0 .. 4 MB: every algorithm and kind in one job, the
    # self-check (known waits injected) on lockfree, MPICH by the same method.
    step loggp "loggp, every size, every algorithm and channel kind" $B/bench/loggp \
        $RUN -n 2 --bind --timeout $TIMEOUT $B/bench/loggp --algs all,channels $LOGGP_ARGS
    step loggp "loggp --selfcheck (injected waits recovered)" $B/bench/loggp \
        $RUN -n 2 --bind --timeout $TIMEOUT $B/bench/loggp --selfcheck $LOGGP_SELF_ARGS
    step mpi_loggp "mpi_loggp (MPICH, every size)" $B/bench/mpi_loggp \
        timeout -k 10 $TIMEOUT mpiexec -n 2 -bind-to core $B/bench/mpi_loggp $MPI_LOGGP_ARGS
    step mpi_pingpong "mpi_pingpong (MPICH)" $B/bench/mpi_pingpong \
        timeout -k 10 $TIMEOUT mpiexec -n 2 -bind-to core $B/bench/mpi_pingpong $PINGPONG_ARGS

    # One-way bandwidth, 64 B .. 4 MB: shmam's streams beside the raw floor in one
    # job, MPICH's osu_bw-style stream in its own.
    step bw "bw, one-way streams (lockfree) and the raw floor" $B/bench/bw \
        $RUN -n 2 --bind --timeout $TIMEOUT -a lockfree $B/bench/bw $BW_ARGS
    BENCH_AS=bw_chan # a channel per sender, beside its own floor (set and reset)
    step bw "bw, bulk streams in a fastforward channel and the raw floor" $B/bench/bw \
        $RUN -n 2 --bind --timeout $TIMEOUT --queue fastforward $B/bench/bw \
        --sizes 64,256,1024,4096,8192 $BW_ARGS
    BENCH_AS=
    step mpi_bw "mpi_bw (MPICH, osu_bw)" $B/bench/mpi_bw \
        timeout -k 10 $TIMEOUT mpiexec -n 2 -bind-to core $B/bench/mpi_bw $BW_ARGS

    # Many to one: the stress test, every algorithm in one job per writer count,
    # ranks pinned; MPICH pinned too, its waits made to yield as shmam's do
    # (mpi_stress --yield: MPICH's own waits only spin, and bound spinning ranks
    # sharing a CPU starve each other).  Beside them, as users run MPICH: MPICH
    # unbound and spinning, and shmam's lock-free unbound, a like-with-like pair.
    for w in $WRITERS; do
        p=$((w + 1))
        step stress "stress, $w writer(s), every algorithm and channel kind" $B/bench/stress \
            $RUN -n $p --bind --timeout $TIMEOUT $B/bench/stress --algs all,channels $STRESS_ARGS
        step mpi_stress "mpi_stress (MPICH), $w writer(s), bound, --yield" $B/bench/mpi_stress \
            timeout -k 10 $TIMEOUT mpiexec -n $p -bind-to core $B/bench/mpi_stress --yield \
            $MPI_STRESS_ARGS
        BENCH_AS=stress_unbound # (set and reset around the call: sh keeps or drops
        step stress "stress, $w writer(s), lockfree unbound" \
            $B/bench/stress $RUN -n $p --timeout $TIMEOUT $B/bench/stress --algs lockfree \
            $STRESS_ARGS
        BENCH_AS=mpi_stress_unbound # a prefix assignment to a function as it likes)
        step mpi_stress "mpi_stress (MPICH), $w writer(s), unbound" \
            $B/bench/mpi_stress timeout -k 10 $TIMEOUT mpiexec -n $p $B/bench/mpi_stress \
            $MPI_STRESS_ARGS
        BENCH_AS=""
    done
    for a in $ALGS; do
        step demo_many "demo_many $a (3 senders, checked)" $B/bench/demo_many \
            $RUN -n 4 --bind --timeout $TIMEOUT -a $a $B/bench/demo_many $DEMO_ARGS
    done

    # Locks on their own.
    step lockbench "lockbench" $B/bench/lockbench \
        timeout -k 10 $TIMEOUT $B/bench/lockbench $LOCK_ARGS
    # Locks inside unmodified programs (sysbench, stress-ng) through the preload
    # library, ABBA with glibc's mutex, and bench/robust's recovery.
    step lockprog "locks inside real programs (sysbench, stress-ng; robust)" \
        scripts/locks_programs.py timeout -k 10 $TIMEOUT /usr/bin/python3 \
        scripts/locks_programs.py --build $B $LOCKPROG_ARGS

    # The shared heap of long messages, against Boost.Interprocess.
    step heapbench "heapbench (shmam's heap and Boost.Interprocess)" $B/bench/heapbench \
        timeout -k 10 $TIMEOUT $B/bench/heapbench --boost $B/bench/heap_boost $HEAP_ARGS

    # The single-producer/single-consumer rings on their own, then what polling and
    # memory cost against the senders, shared queues and per-sender channels.
    step spscbench "spscbench (SPSC rings, Boost.Lockfree, ck_ring)" $B/bench/spscbench \
        timeout -k 10 $TIMEOUT $B/bench/spscbench $SPSC_ARGS
    step pollcost "pollcost (polls and memory against senders, every queue kind)" \
        $B/bench/pollcost $RUN -n 2 --bind --timeout $TIMEOUT $B/bench/pollcost $POLL_ARGS

    # Clusters of SMPs: the hybrid transport (libshmam-mpi) within a node and
    # across two virtual nodes, beside shared memory alone and MPI's own, in one
    # job of three ranks: rank 0 on CPU 0, ranks 1 (its node) and 2 (the other
    # node) sharing CPU 1, the one outside the measured pair asleep.
    step clumps "clumps (hybrid transport, within and across nodes, and MPI)" $B/bench/clumps \
        env SHMAM_NODE_SIZE=2 timeout -k 10 $TIMEOUT mpiexec -n 3 -bind-to $CLUMPS_BIND \
        $B/bench/clumps $CLUMPS_ARGS

    # RPC: shmam's calls beside Unix sockets, a pipe pair, ZeroMQ and two floors
    # (a shared ring woken by eventfd, and spun on), client and server pinned.
    step rpcbench "rpcbench (calls, sockets, pipe, ZeroMQ, rings)" $B/bench/rpcbench \
        timeout -k 10 $TIMEOUT $B/bench/rpcbench --timeout $TIMEOUT $RPC_ARGS

    # Services for other users: a call through the rendezvous socket (a
    # caller's own door) beside one to the same server mapped by name.
    step rdvbench "rdvbench (calls through the rendezvous socket, and by name)" \
        $B/bench/rdvbench timeout -k 10 $TIMEOUT $B/bench/rdvbench $RDV_ARGS

    # Python (python/): shmam's package beside multiprocessing.connection and pyzmq,
    # Debian's interpreter, this build's shared library.
    step pyrpc "pyrpc (Python: shmam, multiprocessing.connection, pyzmq)" /usr/bin/python3 \
        env SHMAM_LIBRARY="$B/lib/libshmam.so.1" timeout -k 10 $TIMEOUT \
        /usr/bin/python3 python/bench/pyrpc.py --bind $PYRPC_ARGS

    # The GASNet-EX layer (compat/gasnet/): gex_testam times the layer and
    # shmam's native calls in the same job, blocks alternated; its own rows
    # (testam,PATTERN,KIND,BYTES,ITERS,layer_us,X,native_us,Y,ratio,R) go to
    # gasnet.txt, tabled after report.md below.
    say "GASNet-EX layer (gex_testam: the layer beside native shmam, one job)"
    if [ -x $B/gasnet/gex_testam ]; then
        echo "== gex_testam" >>"$LOG"
        timeout -k 10 $TIMEOUT $RUN -n 2 --bind $B/gasnet/gex_testam >"$OUT/gasnet.txt" 2>>"$LOG" ||
            fail "gasnet" "gex_testam exit status $?"
    else
        fail "gasnet" "$B/gasnet/gex_testam was not built"
    fi

    # Applications: Tables 3 and 4 (apps.sh writes apps.csv and its tables here).
    if [ -x scripts/apps.sh ]; then
        say "applications (scripts/apps.sh)"
        echo "== scripts/apps.sh" >>"$LOG"
        RESULTS=$OUT SCALE=$SCALE scripts/apps.sh >>"$LOG" 2>&1
        rc=$?
        [ "$rc" -eq 0 ] || fail "applications" "scripts/apps.sh exit status $rc (see log.txt)"
    else
        fail "applications" "scripts/apps.sh is missing"
    fi
}

say "shmam measurement suite, $SCALE scale, into $OUT/"
[ -n "${REPORT_ONLY:-}" ] || measure
# Everything into all.csv, then the report.
say "writing the report"
{
    echo "$HEADER"
    for f in rtt logp loggp mpi_loggp mpi_pingpong bw mpi_bw stress mpi_stress demo_many lockbench lockprog heapbench spscbench pollcost clumps pyrpc rpcbench rdvbench; do
        [ -f "$OUT/$f.csv" ] && $ROWS check "$OUT/$f.csv" 2>/dev/null
    done
    [ -f "$OUT/apps.csv" ] && $ROWS apps "$OUT/apps.csv"
} >"$OUT/all.csv"

# Segments left by this run's jobs, both backends, are a failure of the run.
left=$("$B/bin/shmamstat" "$SHMAM_JOB_PREFIX" | awk 'NR > 1 && !/^\(/ { printf "%s ", $1 }')
[ -z "$left" ] || fail "cleanup" "segments left: $left"

say "plots"
plots
ELAPSED=$(($(date +%s) - T0))
# The run's record, for report.py (the one writer of report.md).
[ -n "${REPORT_ONLY:-}" ] && [ -s "$OUT/run.txt" ] || for v in SCALE ELAPSED CLUMPS_BIND RTT_ARGS LOGP_ARGS LOGGP_ARGS LOGGP_SELF_ARGS MPI_LOGGP_ARGS PINGPONG_ARGS BW_ARGS STRESS_ARGS \
    MPI_STRESS_ARGS DEMO_ARGS LOCK_ARGS LOCKPROG_ARGS HEAP_ARGS SPSC_ARGS POLL_ARGS CLUMPS_ARGS PYRPC_ARGS RPC_ARGS; do
    eval "echo \"$v=\$$v\""
done >"$OUT/run.txt"
py report "$OUT" 2>>"$LOG" || fail "report" "report.py could not write report.md"
# The GASNet-EX layer's section, from gasnet.txt (also with REPORT_ONLY).
if [ -s "$OUT/gasnet.txt" ]; then
    {
        echo
        echo "## GASNet-EX layer (compat/gasnet/) against native shmam"
        echo
        echo "gex_testam under shmamrun -n 2 --bind: ping-pong (us per round trip) and flood"
        echo "(us per message, 64 in flight) of each AM kind, the layer's and shmam's native"
        echo "calls in 8 pairs of blocks run back to back (ABBA) in one job: the medians, and"
        echo "the median of the pairs' ratios layer / native."
        echo
        echo "| pattern | kind | bytes | layer us | native us | layer/native |"
        echo "|---|---|---:|---:|---:|---:|"
        awk -F, '/^testam,/ { printf "| %s | %s | %s | %s | %s | %s |\n", $2, $3, $4, $7, $9, $11 }' \
            "$OUT/gasnet.txt"
    } >>"$OUT/report.md"
fi

say "done in $((ELAPSED / 60)) min $((ELAPSED % 60)) s: $OUT/report.md"
echo
sed -n '/^## Targets/,/^## /p' "$OUT/report.md" | sed '$d'
if [ -s "$FAILED" ]; then
    echo "report.sh: FAILED:" >&2
    sed 's/^/  /' "$FAILED" >&2
    exit 1
fi
exit 0
