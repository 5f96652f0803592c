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
#                  a raw floor, locks, per-sender channels or shared queues
#                  (pollcost), applications, clusters of SMPs (the hybrid
#                  transport of libshmam-mpi within and between nodes, beside
#                  shared memory alone and MPI), targets, the figures' own
#                  consistency (LogP's relations), and how our numbers
#                  compare with the paper's conclusions (scripts/report/report.py,
#                  the paper's figures and claims in scripts/report/paper.toml,
#                  judged by scripts/report/verdict.py)
#   *.png          plots (scripts/report/*.gp), referenced from report.md
#   log.txt        everything the programs wrote on stderr
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
WRITERS="1 3 7"
# clumps: rank 0 on the first CPU, ranks 1 and 2 on the second (one CPU: all on it).
CLUMPS_BIND=user:0,1,1
[ "$(nproc)" -ge 2 ] || CLUMPS_BIND=user:0,0,0
R=scripts/report
case $SCALE in
quick)
    RTT_ARGS="--iters 700000 --warmup 2000 --rounds 7"
    LOGP_ARGS="--rounds 5"
    PINGPONG_ARGS="--rounds 5"
    BW_ARGS="--rounds 5"
    STRESS_ARGS="--seconds 0.7 --rounds 3" # 10 kinds x 3 runs: 22 s per writer count
    MPI_STRESS_ARGS="--seconds 0.7 --repeat 3"
    DEMO_ARGS="--msgs 20000 --bulk 1000"
    LOCK_ARGS="--procs 1,2,4,8 --seconds 0.3 --rounds 3"
    HEAP_ARGS="--quick"
    SPSC_ARGS="--quick"
    POLL_ARGS="--quick --rounds 5"
    CLUMPS_ARGS="--rounds 7"
    TIMEOUT=${TIMEOUT:-300}
    ;;
paper)
    RTT_ARGS="--iters 3000000 --warmup 10000 --rounds 11"
    LOGP_ARGS="--rounds 11"
    PINGPONG_ARGS="--rounds 11"
    BW_ARGS="--rounds 11 --bytes 134217728 --max-msgs 50000"
    STRESS_ARGS="--seconds 3 --rounds 5"
    MPI_STRESS_ARGS="--seconds 3 --repeat 5"
    DEMO_ARGS="--msgs 100000 --bulk 1000"
    LOCK_ARGS="--procs 1,2,4,8 --seconds 2 --rounds 5"
    HEAP_ARGS=""
    SPSC_ARGS=""
    POLL_ARGS="--rounds 11"
    CLUMPS_ARGS="--iters 300000 --rounds 11 --bytes 134217728 --max-msgs 50000"
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
    if ! awk -f $R/rows.awk -v rename="${BENCH_AS:-}" "$TMP/out" >>"$OUT/$file.csv" \
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

# report.py SECTION...: a section of the report from all.csv.
py() {
    python3 $R/report.py "$OUT/all.csv" $R/paper.toml "$@"
}

# plots: the gnuplot data files and PNGs; a plot that fails is noted in the log.
# nalg: the algorithms and kinds of logp.dat (its header: param, them, MPICH).
plots() {
    py plotdata "$OUT" 2>>"$LOG" || echo "plot data failed" >>"$LOG"
    nalg=$(($(head -n 1 "$OUT/logp.dat" | wc -w) - 2))
    for p in logp stress bandwidth oneway; do
        gnuplot -e "dir='$OUT'; nalg=$nalg" $R/$p.gp >>"$LOG" 2>&1 || echo "plot $p failed" >>"$LOG"
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
        "MPICH with \`mpiexec -bind-to core\`, its stress test with waits that yield" \
        "(\`--yield\`: MPICH's own waits only spin, so bound ranks sharing a CPU starve" \
        "each other; bench/README.md), and again unbound beside a lock-free run unbound;" \
        "MPICH talks through UCX's shared memory (sysv, cma) within the node; applications" \
        "as Table 4 says; lockbench pins its process i to CPU i" \
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
        "bw and mpi_bw \`$BW_ARGS\`;" \
        "stress \`$STRESS_ARGS\`, mpi_stress \`$MPI_STRESS_ARGS\`; demo_many \`$DEMO_ARGS\`;" \
        "lockbench \`$LOCK_ARGS\`; heapbench \`${HEAP_ARGS:-(defaults)}\`;" \
        "spscbench \`${SPSC_ARGS:-(defaults)}\`; pollcost \`${POLL_ARGS:-(defaults)}\`;" \
        "clumps \`$CLUMPS_ARGS\`; applications at SCALE=$SCALE)."
    if [ -s "$FAILED" ]; then
        echo "**Failures** (see \`log.txt\`):"
        echo
        sed 's/^/- /' "$FAILED"
    else
        echo "Every benchmark ran and every count and check passed."
    fi
    echo
    echo "## How to read the figures"
    echo
    cat <<EOT
Every figure is the median over rounds of that round's mean, with the lowest
and highest round beside it in small type (\`value lo–hi\`); a round hit by a
preemption of this shared machine shows in the spread, not in the value. The
claim algorithms and per-sender channel kinds of one table are measured in one
job, an endpoint pair each, rounds interleaved in ABBA order, so ratios between
them (rows in italics,
"in-run") are per-round quotients of figures taken moments apart. MPICH runs in its own jobs with the same warm-up and rounds; a comparison
across jobs says so. A verdict counts a check only when the two spreads do not
overlap; otherwise it says "within noise".
EOT
    echo
    echo "## Machine"
    echo
    machine
    echo
    echo "## Table 1: LogP parameters and round trip"
    echo
    echo "Microseconds (bandwidths MB/s), two processes pinned to two CPUs, no contention" \
        "(\`rtt\` and \`logp\` with \`--algs all,channels\`: every claim algorithm and every" \
        "per-sender channel kind in one job each; MPICH: \`mpi_pingpong\`)." \
        "The last column names each row's method; MPICH's cell is the same work where one is given."
    echo
    py table1
    echo
    img logp.png "LogP parameters per algorithm"
    img bandwidth.png "Bulk bandwidth of the request/reply stream against size"
    echo "## Bandwidth, one way"
    echo
    echo "Streams of n bytes from rank 0 to rank 1 in which the receiver copies every" \
        "message out into its own buffers (what \`MPI_Recv\` does), 64 B to 4 MB" \
        "(\`bw -a lockfree $BW_ARGS\`, ranks pinned with \`--bind\`). shmam's streams are" \
        "one way: the receiver answers every 16th message with a credit and the sender" \
        "keeps at most 64 beyond the last one, no reply per message. *bulk*:" \
        "\`am_request_bulk\` (to 8 KB); *long*: \`am_request_long\`, copied into a block of" \
        "the receiver's shared heap; *long_at*: \`am_request_long_at\`, written straight" \
        "into the receiver's region. The *raw floor*, measured in the same job between" \
        "the same two processes, rounds interleaved: a ring of 16 slots in shared memory," \
        "the sender copies in and sets a flag, the receiver copies out and clears it." \
        "MPICH (\`mpi_bw\`, \`-bind-to core\`, a separate job) streams as osu_bw does:" \
        "windows of 64 \`MPI_Isend\`, then a one-byte ack. Both programs move the same" \
        "bytes per size from the same buffers (a ring of 64 per rank). Table 1's bulk" \
        "figures are a different stream, every message answered (request/reply)."
    echo
    py oneway
    echo
    img oneway.png "Bandwidth one way against size"
    echo "The honest bulk figures at 8 KB: a one-way flood in which the handler does" \
        "not touch the data, and a stream in which it copies it out, each beside the" \
        "raw floor of the same mode (the ring above; its receiver copies out or not)."
    echo
    py floors
    echo
    echo "## Table 2: many-to-one stress test"
    echo
    echo "Seconds per 10⁶ integers (the paper's Table 2 sends 10⁶) for W writers sending" \
        "to one reader, from runs of a fixed duration (\`stress --algs all,channels" \
        "$STRESS_ARGS\`: every algorithm and channel kind in one job, ranks pinned with" \
        "\`--bind\`). MPICH (\`mpi_stress\`, separate" \
        "jobs) under the same conditions: ranks pinned, waits that yield after spinning" \
        "(\`--yield\`; MPICH's own waits only spin). The last two columns are the" \
        "configuration MPICH users run, unbound and spinning, beside shmam's lock-free" \
        "unbound. Messages per poll is how many integers one productive poll of the" \
        "reader handled."
    echo
    py table2
    echo
    img stress.png "Stress test time against writers"
    echo "## Locks"
    echo
    echo "Lock and unlock throughput of every lock alone (\`lockbench\`): P processes" \
        "take the lock in a loop around a short critical section, in millions of" \
        "acquisitions per second; fairness is the fewest acquisitions of one process" \
        "over the most (1 = even, 0 = one starved). \`shmam:\` locks back off and yield;" \
        "Concurrency Kit's (\`ck:\`) spin without yielding. Every lock in every round, ABBA."
    echo
    py locks
    echo
    img locks.png "Lock throughput against processes"
    echo "## The shared heap of long messages"
    echo
    echo "Allocation and free throughput of the lock-free heap (\`heap/\`, after XMalloc)" \
        "against Boost.Interprocess's \`managed_shared_memory\` over a segment of the same" \
        "size (\`heapbench\`): P pinned processes each keep a window of live blocks of" \
        "mixed sizes and free and allocate in it; both heaps in every round, ABBA. Reserved" \
        "/ live is what the heap has carved (superblocks, runs) per byte allocated at the end."
    echo
    py heap
    echo
    echo "## Single-producer/single-consumer rings"
    echo
    echo "The four rings of \`spsc/\` (Lamport; FastForward, also with temporal slipping;" \
        "MCRingBuffer; B-Queue) beside Boost.Lockfree's \`spsc_queue\` and Concurrency Kit's" \
        "\`ck_ring\` (\`spscbench\`): two pinned processes stream 8-byte items one way, and" \
        "bounce one through a pair of rings; every ring in every round, ABBA. The runtime's" \
        "per-sender channels are made of these rings (next section)."
    echo
    py spsc
    echo
    echo "## Per-sender channels or shared queues"
    echo
    echo "Lumetta and Culler chose many-to-one queues, shared by every sender of an" \
        "endpoint, for memory and polling cost; the systems they cite give each" \
        "sender-receiver pair its own queue. shmam has both, as the queue kind of an" \
        "endpoint: \`mpsc\` (the shared queues, with a claim algorithm) or a per-sender" \
        "channel of one of the rings above (\`lamport\`, \`fastforward\`, \`mcring\`," \
        "\`bqueue\`), with a summary bit per channel that had messages lately, so that a" \
        "poll looks at those only. Messages: the kinds' columns of Tables 1 and 2 (same" \
        "jobs as the claim algorithms). Polling and memory: \`pollcost $POLL_ARGS\`, a" \
        "receiver per kind and number of registered senders, one job, every" \
        "configuration in every round, ABBA; memory is the size of a fresh endpoint's" \
        "segment with the default options."
    echo
    py channels
    echo
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
    echo "## Clusters of SMPs"
    echo
    echo "The hybrid runtime (libshmam-mpi) under \`mpiexec\`: ranks of one node talk" \
        "through shared memory as under shmamrun, ranks of different nodes through MPI" \
        "(one MPI message per active message). One machine here, so the nodes are" \
        "virtual (\`SHMAM_NODE_SIZE\`). \`clumps $CLUMPS_ARGS\`: three ranks in nodes of" \
        "two, \`mpiexec -n 3 -bind-to $CLUMPS_BIND\` (rank 0 on CPU 0, ranks 1 and 2" \
        "sharing CPU 1; the rank outside the measured pair sleeps); within the node" \
        "rank 0 to rank 1 through the job's endpoint and, in the same processes, through" \
        "named endpoints that have no MPI path (shared memory alone, as under" \
        "shmamrun); across nodes rank 0 to rank 2 through the job's endpoint (MPI) and" \
        "with MPI's own calls. All four in every round, ABBA; ratios in-run." \
        "Round trip: a one-word request and its reply, MPI a 4-byte ping-pong." \
        "Bandwidth against \`mpi_bw\`'s osu_bw windows (64 receives posted into the" \
        "application's buffers: one copy), two shmam streams: the one-copy stream" \
        "(\`am_request_long_at\` at every size into the receiver's region, the handler" \
        "reading the data in place), like with like, on which the bandwidth target is" \
        "judged; and, for information, \`bw\`'s copy stream (bulk to 8 KB, long above," \
        "the handler copying every message out: one copy more). A credit every 16" \
        "messages, at most 64 beyond it (one-copy at 4 MB: 16 region slots, a credit" \
        "every 4)."
    echo
    py clumps
    echo
    echo "## Delivery checks"
    echo
    echo "\`demo_many\`, 4 processes: 3 senders each send short requests, then 8 KB bulk" \
        "requests, to rank 0, which checks every message's count, source, per-sender" \
        "order and (bulk) checksum; the rates include making and checking the data" \
        "(one run per algorithm, no spread)."
    echo
    py delivery
    echo
    echo "## Targets"
    echo
    echo "Judged from this run's numbers by \`scripts/report/verdict.py\` (the targets are in" \
        "\`scripts/report/paper.toml\`): met when every check holds, missed when one fails," \
        "within noise otherwise; a check holds or fails only when the spreads do not overlap."
    echo
    py targets
    echo
    echo "## Consistency of the figures"
    echo
    echo "Relations any honest measurement keeps (LogP's; \`[[consistency]]\` in" \
        "\`scripts/report/paper.toml\`), judged like the targets: a relation that fails" \
        "here means a figure is not what it claims to be, or the run was disturbed."
    echo
    py consistency
    echo
    echo "## What the numbers say"
    echo
    cat <<EOT
The paper measured a Sun Enterprise 5000 with eight 167 MHz UltraSPARC processors,
one process per processor. This run has $(nproc) CPUs of a shared virtual machine.
Absolute times differ from the paper's by 25 years of hardware; compare shapes and
ratios. Two processes on two pinned CPUs match the paper's uncontended Table 1
setting. $(python3 -c "import tomllib,sys; print(tomllib.load(open('$R/paper.toml','rb'))['machine']['regime'].replace(chr(10),' '))")
Waits here yield the CPU after spinning, which keeps the locks usable at all with
more processes than CPUs. The paper's POSIX mutex (Solaris, 1998) entered the
kernel; glibc's robust mutex takes and releases an uncontended lock in user space
and calls the kernel (futex) only to sleep or wake a waiter.

Each conclusion below is judged by its checks (\`scripts/report/paper.toml\`):
*agrees* when every check holds, *differs* when they fail, *partly* for a mix,
*within noise* when the spreads overlap.

EOT
    py findings
    echo "## Files"
    echo
    echo "\`all.csv\` (every row), one CSV per benchmark, \`*.dat\` (the plots' data)," \
        "\`log.txt\` (what the programs said on stderr). Schema:" \
        "\`bench,impl,shm,procs,pinned,iters,metric,value,unit,spread\` (bench/README.md)."
}

HEADER="bench,impl,shm,procs,pinned,iters,metric,value,unit,spread"
say "shmam measurement suite, $SCALE scale, into $OUT/"
uptime >"$OUT/uptime.txt" 2>/dev/null

# Point to point: every claim algorithm and per-sender channel kind in one job,
# rounds interleaved.
step rtt "rtt, every algorithm and channel kind" $B/bench/rtt \
    $RUN -n 2 --bind --timeout $TIMEOUT $B/bench/rtt --algs all,channels $RTT_ARGS
step logp "logp, every algorithm and channel kind" $B/bench/logp \
    $RUN -n 2 --bind --timeout $TIMEOUT $B/bench/logp --algs all,channels $LOGP_ARGS
step mpi_pingpong "mpi_pingpong (MPICH)" $B/bench/mpi_pingpong \
    timeout -k 10 $TIMEOUT mpiexec -n 2 -bind-to core $B/bench/mpi_pingpong $PINGPONG_ARGS

# One-way bandwidth, 64 B .. 4 MB: shmam's streams beside the raw floor in one
# job, MPICH's osu_bw-style stream in its own.
step bw "bw, one-way streams (lockfree) and the raw floor" $B/bench/bw \
    $RUN -n 2 --bind --timeout $TIMEOUT -a lockfree $B/bench/bw $BW_ARGS
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
    for f in rtt logp mpi_pingpong bw mpi_bw stress mpi_stress demo_many lockbench heapbench spscbench pollcost clumps; do
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
