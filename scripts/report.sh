#!/bin/sh
# report.sh - what `make run` runs: the whole measurement suite, then a report.
#
#   scripts/report.sh                 quick scale (a few minutes on 2 cores)
#   SCALE=paper scripts/report.sh     the paper's sizes (1,000,000 integers in
#                                     the stress test, full iteration counts)
#
# Runs, with progress lines, every benchmark of bench/ for the six claim
# algorithms and the MPICH baselines (shmam ranks under `shmamrun --bind`, the
# MPICH ping-pong under `mpiexec -bind-to core`, the MPICH stress test unbound:
# its spinning ranks outnumber the CPUs, see bench/README.md), the lock
# microbenchmark and the applications (scripts/apps.sh, at the same SCALE), and
# writes results/<YYYY-MM-DD>/ (-HHMMSS appended if that exists; RESULTS=dir
# overrides):
#   <bench>.csv    the rows of each benchmark, in the common schema
#                  bench,impl,shm,procs,pinned,iters,metric,value,unit,spread
#   all.csv        every row, one header
#   report.md      machine, Tables 1 and 2 in the paper's layout with MPICH
#                  columns, locks, applications, targets, and how our numbers
#                  compare with the paper's conclusions (scripts/report/*.awk)
#   *.png          plots (scripts/report/*.gp), referenced from report.md
#   log.txt        everything the programs wrote on stderr
# Each run has a time limit; a stress run stopped at its limit (a FIFO lock
# convoying with more processes than CPUs) is a result, shown as "> limit".
# Environment: SCALE, RESULTS, B (build directory), TIMEOUT (seconds per run)
# and STRESS_TIMEOUT (per stress run) override the defaults.
# It exits nonzero if any benchmark failed (a wrong count, a crash, a timeout,
# a malformed row) or was not built, or if a run left a segment behind (in
# either backend: every job of this run is named after SHMAM_JOB_PREFIX, which
# this script sets, and shmamstat lists what is left of exactly those);
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
ALGS=$("$RUN" --list-claims | tr '\n' ' ') || exit 1 # the one list: am_claim_names
WRITERS="1 3 7"
R=scripts/report
case $SCALE in
quick)
    RTT_ARGS="--iters 200000 --warmup 1000 --rounds 5"
    LOGP_ARGS="--iters 20000 --rounds 5"
    PINGPONG_ARGS="--iters 100000"
    TOTAL=200000
    STRESS_ARGS="--repeat 5"
    STRESS_TIMEOUT=${STRESS_TIMEOUT:-30}
    DEMO_ARGS="--msgs 20000 --bulk 1000"
    LOCK_ARGS="--procs 1,2,4,8 --seconds 0.5"
    TIMEOUT=${TIMEOUT:-120}
    ;;
paper)
    RTT_ARGS="--iters 1000000 --warmup 10000 --rounds 10"
    LOGP_ARGS="--iters 200000 --rounds 10"
    PINGPONG_ARGS="--iters 1000000 --rounds 10"
    TOTAL=1000000
    STRESS_ARGS="--repeat 3"
    STRESS_TIMEOUT=${STRESS_TIMEOUT:-300}
    DEMO_ARGS="--msgs 100000 --bulk 1000"
    LOCK_ARGS="--procs 1,2,4,8 --seconds 2"
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
: >"$LOG"
: >"$FAILED"
trap 'rm -rf "$TMP"' EXIT
trap 'echo "report.sh: interrupted" >&2; exit 130' INT TERM
T0=$(date +%s)
LIMIT=$TIMEOUT

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
# the time limit LIMIT), adds its rows to $OUT/FILE.csv and its stderr to the
# log.  A nonzero exit (124: stopped at the limit) or a row not in the schema
# fails the step, except that if STOPPED_ROW is set, a run stopped at the limit
# is a result: that row (metric timed_out, the limit as value) stands for it.
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
    if ! awk -f $R/rows.awk "$TMP/out" >>"$OUT/$file.csv" 2>"$TMP/bad" && [ "$rc" -eq 0 ]; then
        cat "$TMP/bad" >>"$LOG"
        fail "$label" "$(head -n 1 "$TMP/bad")"
    fi
    if [ "$rc" -eq 124 ] && [ -n "${STOPPED_ROW:-}" ]; then
        echo "$STOPPED_ROW" >>"$OUT/$file.csv"
        echo "$label: stopped at the time limit of $LIMIT s" >>"$OUT/stopped.txt"
        say "$label: stopped at the time limit of $LIMIT s (shown as > $LIMIT s)"
    elif [ "$rc" -eq 124 ]; then
        fail "$label" "stopped at the time limit of $LIMIT s"
    elif [ "$rc" -ne 0 ]; then
        tail -n 3 "$TMP/err" | sed 's/^/    /'
        fail "$label" "exit status $rc"
    fi
}

# awk over all.csv with the row loader: tab ARGS... (tables.awk etc.)
tab() {
    script=$1
    shift
    awk -v ALGS="$ALGS" -f $R/lib.awk -f $R/$script.awk "$@" "$OUT/all.csv"
}

# plots: the gnuplot data files and PNGs; a plot that fails is noted in the log.
plots() {
    for d in logp stress bw locks; do
        tab plotdata -v what=$d >"$OUT/$d.dat"
    done
    for p in logp stress bandwidth; do
        gnuplot -e "dir='$OUT'" $R/$p.gp >>"$LOG" 2>&1 || echo "plot $p failed" >>"$LOG"
    done
    ncol=$(head -n 1 "$OUT/locks.dat" | wc -w)
    nshm=$(head -n 1 "$OUT/locks.dat" | tr ' ' '\n' | grep -c '^shmam:')
    gnuplot -e "dir='$OUT'; ncol=$ncol; nshm=$nshm" $R/locks.gp >>"$LOG" 2>&1 ||
        echo "plot locks failed" >>"$LOG"
}

# img FILE TEXT: a markdown image if the plot was drawn.
img() {
    [ -s "$OUT/$1" ] && printf '![%s](%s)\n\n' "$2" "$1"
}

# machine: the machine section.
machine() {
    cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
    vm="bare metal, as far as /proc/cpuinfo tells"
    grep -qw hypervisor /proc/cpuinfo && vm="a virtual machine (hypervisor flag set), \
its CPUs shared with the host's other work"
    mpich=$(mpichversion 2>/dev/null | sed -n 's/^MPICH Version:[[:space:]]*//p')
    dev=$(mpichversion 2>/dev/null | sed -n 's/^MPICH Device:[[:space:]]*//p')
    echo "- CPU: $cpu, $(nproc) CPUs online; $vm"
    echo "- Kernel: $(uname -srm)"
    echo "- MPICH: ${mpich:-not found}${dev:+, device $dev}; compiler: $(cc --version | head -n 1)"
    echo "- Load at the start: $(sed 's/.*load average/load average/' "$OUT/uptime.txt")"
    echo "- Pinning: shmam ranks with \`shmamrun --bind\` (rank r on CPU r mod $(nproc));" \
        "the MPICH ping-pong with \`mpiexec -bind-to core\`; the MPICH stress test unbound" \
        "(its waits spin and never yield, so two bound ranks on one CPU starve each other;" \
        "bench/README.md); applications as scripts/apps.sh says; lockbench pins its process i to CPU i" \
        "mod $(nproc). With more processes than CPUs (3 and 7 writers, 4 and 8 lock" \
        "processes) several share a CPU. The \`pinned\` column of every row says whether" \
        "its ranks were each bound to one CPU."
}

# write_report: report.md on stdout.
write_report() {
    scale="quick scale"
    [ "$SCALE" = paper ] && scale="the paper's scale"
    echo "# shmam measurements, $(basename "$OUT")"
    echo
    echo "Run by \`scripts/report.sh\` at $scale in $((ELAPSED / 60)) min $((ELAPSED % 60)) s" \
        "(rtt \`$RTT_ARGS\`; logp \`$LOGP_ARGS\`; mpi_pingpong \`$PINGPONG_ARGS\`;" \
        "stress and mpi_stress \`--total $TOTAL\`, stress \`$STRESS_ARGS\`, limit" \
        "$STRESS_TIMEOUT s; demo_many \`$DEMO_ARGS\`; lockbench \`$LOCK_ARGS\`;" \
        "applications at SCALE=$SCALE)."
    if [ -s "$FAILED" ]; then
        echo "**Failures** (see \`log.txt\`):"
        echo
        sed 's/^/- /' "$FAILED"
    else
        echo "Every benchmark ran and every count and check passed."
    fi
    if [ -s "$OUT/stopped.txt" ]; then
        echo
        echo "Stopped at the time limit (a result, shown as \"> limit\"; see Table 2):"
        echo
        sed 's/^/- /' "$OUT/stopped.txt"
    fi
    echo
    echo "## Machine"
    echo
    machine
    echo
    echo "## Table 1: LogP parameters and round trip"
    echo
    echo "Microseconds, two processes on two CPUs, no contention (\`logp\`, \`rtt\`;" \
        "MPICH: \`mpi_pingpong\`). Each figure is the median over rounds. L, o<sub>s</sub>," \
        "o<sub>r</sub>, g and RTT are \`logp\`'s; the rows marked (rtt) come from" \
        "\`bench/rtt\`, which interleaves the AM round trip with a raw cache-line" \
        "ping-pong between the same two processes. MPICH has no o<sub>s</sub>," \
        "o<sub>r</sub> or L here; its g is the time per message of a flood of 4-byte" \
        "\`MPI_Isend\`."
    echo
    tab tables -v table=table1
    echo
    echo "The paper's Table 1 (Sun Enterprise 5000, 167 MHz UltraSPARC), µs:"
    echo
    echo "| µs | lockfree | tas | ttas | ticket | anderson | mutex |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    echo "| L | -0.3 | -0.1 | -0.1 | -0.1 | -0.2 | 0 |"
    echo "| o<sub>s</sub> | 1.9 | 1.6 | 1.6 | 1.7 | 1.7 | 2.2 |"
    echo "| o<sub>r</sub> | 1.2 | 1.2 | 1.2 | 1.2 | 1.2 | 1.3 |"
    echo "| g | 3.1 | 2.9 | 2.9 | 2.9 | 3.0 | 3.5 |"
    echo "| RTT | 5.6 | 5.5 | 5.4 | 5.5 | 5.5 | 6.9 |"
    echo
    img logp.png "LogP parameters per algorithm"
    img bandwidth.png "Bulk bandwidth against size"
    echo "## Table 2: many-to-one stress test"
    echo
    n=$(awk -F, '$1 == "stress" { print $6; exit }' "$OUT/all.csv")
    fewer=""
    [ "$SCALE" = quick ] && fewer=" The paper sends 1,000,000; quick scale sends fewer, and time grows about linearly with the count."
    echo "Seconds for W writers to send ${n:-N} integers in total to one reader" \
        "(\`stress\`, median of the runs of one job; MPICH: \`mpi_stress\`, one run).$fewer" \
        "Messages per poll is how many integers one productive poll of the reader handled."
    echo
    tab tables -v table=table2
    echo
    echo "The paper's Table 2 (10⁶ integers, one process per processor), seconds:"
    echo
    echo "| seconds | lockfree | tas | ttas | ticket | anderson | mutex |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    echo "| 1 writer | 3.19 | 2.98 | 3.01 | 2.96 | 3.05 | 3.54 |"
    echo "| 3 writers | 3.08 | 3.03 | 3.46 | 3.18 | 3.22 | 10.00 |"
    echo "| 7 writers | 3.03 | 4.37 | 3.83 | 3.50 | 3.75 | 14.10 |"
    echo
    img stress.png "Stress test time against writers"
    echo "## Locks"
    echo
    echo "Lock and unlock throughput of every lock alone (\`lockbench\`): P processes" \
        "take the lock in a loop around a short critical section, in millions of" \
        "acquisitions per second; fairness is the fewest acquisitions of one process" \
        "over the most (1 = even, 0 = one starved). \`shmam:\` locks back off and yield;" \
        "Concurrency Kit's (\`ck:\`) spin without yielding."
    echo
    tab tables -v table=locks
    echo
    img locks.png "Lock throughput against processes"
    echo "## Applications (Tables 3 and 4)"
    echo
    if [ -s "$OUT/table3.md" ] || [ -s "$OUT/table4.md" ]; then
        for t in table3 table4; do
            [ -s "$OUT/$t.md" ] && sed 's/^# /### /' "$OUT/$t.md" && echo
        done
        img table4.png "Application times per algorithm"
    else
        echo "(no tables: the applications did not run)"
        echo
    fi
    echo "## Delivery checks"
    echo
    echo "\`demo_many\`, 4 processes: 3 senders each send short requests, then 8 KB bulk" \
        "requests, to rank 0, which checks every message's count, source, per-sender" \
        "order and (bulk) checksum; the rates include making and checking the data."
    echo
    tab tables -v table=delivery
    echo
    echo "## Targets"
    echo
    echo "Evaluated from this run's numbers."
    echo
    tab targets
    echo
    echo "## What the numbers say"
    echo
    cat <<EOT
Context. The paper measured a Sun Enterprise 5000 with eight 167 MHz UltraSPARC
processors, one process per processor. This run has $(nproc) CPUs of a shared virtual
machine: timings move from run to run with the host's other work, which is why every
benchmark reports a median of rounds or batches, and why ratios measured within one
run (AM against raw ping-pong, lock-free against the locks) say more than absolute
figures. Absolute times differ from the paper's by 25 years of hardware; compare
shapes and ratios. Two processes on two pinned CPUs match the paper's uncontended
Table 1 setting. The stress test's 3 and 7 writers (4 and 8 processes) oversubscribe
the two CPUs: a writer can be descheduled while it holds a lock, and the reader
competes with writers for a CPU. That is the paper's remark on multiprogramming
("only the lock-free algorithm is both fast and robust to multiprogramming"), not
the one-process-per-processor setting of its Table 2; waits here yield the CPU after
spinning, which keeps the locks usable at all. Pinning (\`--bind\`) fixes which
processes share a CPU but does not remove the sharing. It also changes what the
stress test times: with one writer, writer and reader run at once on two CPUs and
every message moves cache lines between them (on this VM a raw line round trip
costs what Table 1 shows); with more processes than CPUs they take turns, a writer
fills the queue during its time slice while the reader waits for the CPU, and the
reader then drains it in long batches, so 3 or 7 writers can finish sooner than
one. The paper's POSIX mutex
(Solaris, 1998) entered the kernel; glibc's robust mutex takes and releases an
uncontended lock with atomic instructions in user space and calls the kernel
(futex) only to sleep or wake a waiter, so expect it near the spin locks when
uncontended and different from them when processes outnumber CPUs.

EOT
    tab findings
    echo "## Files"
    echo
    echo "\`all.csv\` (every row), one CSV per benchmark, \`*.dat\` (the plots' data)," \
        "\`log.txt\` (what the programs said on stderr). Schema:" \
        "\`bench,impl,shm,procs,pinned,iters,metric,value,unit,spread\` (bench/README.md)."
}

HEADER="bench,impl,shm,procs,pinned,iters,metric,value,unit,spread"
say "shmam measurement suite, $SCALE scale, into $OUT/"
uptime >"$OUT/uptime.txt" 2>/dev/null

# Point to point: AM round trip against the raw ping-pong, and LogP.
for a in $ALGS; do
    step rtt "rtt $a" $B/bench/rtt \
        $RUN -n 2 --bind --timeout $TIMEOUT -a $a $B/bench/rtt $RTT_ARGS
done
for a in $ALGS; do
    step logp "logp $a" $B/bench/logp \
        $RUN -n 2 --bind --timeout $TIMEOUT -a $a $B/bench/logp $LOGP_ARGS
done
step mpi_pingpong "mpi_pingpong (MPICH)" $B/bench/mpi_pingpong \
    timeout -k 10 $TIMEOUT mpiexec -n 2 -bind-to core $B/bench/mpi_pingpong $PINGPONG_ARGS

# Many to one: the stress test, and the checked exchange of demo_many.  A
# FIFO lock can convoy when processes outnumber CPUs (every hand-off waits for
# a descheduled waiter's time slice), so a stress run may be stopped at the
# limit STRESS_TIMEOUT; it then shows as "> limit" (see step).
LIMIT=$STRESS_TIMEOUT
for w in $WRITERS; do
    p=$((w + 1))
    for a in $ALGS; do
        STOPPED_ROW="stress,$a,posix,$p,1,$TOTAL,timed_out,$LIMIT,s,"
        step stress "stress $a, $w writer(s)" $B/bench/stress \
            $RUN -n $p --bind --timeout $LIMIT -a $a $B/bench/stress --total $TOTAL $STRESS_ARGS
    done
    STOPPED_ROW="mpi_stress,mpich,-,$p,1,$TOTAL,timed_out,$LIMIT,s,"
    step mpi_stress "mpi_stress (MPICH), $w writer(s)" $B/bench/mpi_stress \
        timeout -k 10 $LIMIT mpiexec -n $p $B/bench/mpi_stress --total $TOTAL
done
STOPPED_ROW=""
LIMIT=$TIMEOUT
for a in $ALGS; do
    step demo_many "demo_many $a (3 senders, checked)" $B/bench/demo_many \
        $RUN -n 4 --bind --timeout $TIMEOUT -a $a $B/bench/demo_many $DEMO_ARGS
done

# Locks on their own.
step lockbench "lockbench" $B/bench/lockbench \
    timeout -k 10 $TIMEOUT $B/bench/lockbench $LOCK_ARGS

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

# Everything into all.csv, then the report.
say "writing the report"
{
    echo "$HEADER"
    for f in rtt logp mpi_pingpong stress mpi_stress demo_many lockbench; do
        [ -f "$OUT/$f.csv" ] && awk -f $R/rows.awk "$OUT/$f.csv" 2>/dev/null
    done
    [ -f "$OUT/apps.csv" ] && awk -f $R/apps.awk "$OUT/apps.csv"
} >"$OUT/all.csv"

# Segments left by this run's jobs, both backends, are a failure of the run.
left=$("$B/bin/shmamstat" "$SHMAM_JOB_PREFIX" | awk 'NR > 1 && !/^\(/ { printf "%s ", $1 }')
[ -z "$left" ] || fail "cleanup" "segments left: $left"

say "plots"
plots
ELAPSED=$(($(date +%s) - T0))
write_report >"$OUT/report.md"

say "done in $((ELAPSED / 60)) min $((ELAPSED % 60)) s: $OUT/report.md"
echo
sed -n '/^## Targets/,/^## /p' "$OUT/report.md" | sed '$d'
if [ -s "$FAILED" ]; then
    echo "report.sh: FAILED:" >&2
    sed 's/^/  /' "$FAILED" >&2
    exit 1
fi
exit 0
