#!/bin/sh
# apps.sh - Tables 3 and 4 of Lumetta & Culler (1998): the applications 3-D FFT,
# CON (a communication-bound run, CON/comm, and a computation-bound one,
# CON/comp) and SAMPLE, under every claim algorithm and over MPICH.
#
#   scripts/apps.sh                  P = 4, FFT 128^3, CON and SAMPLE at the
#                                    paper's sizes per process: a few minutes on
#                                    2 cores (half the paper's problem or less)
#   SCALE=paper scripts/apps.sh      the paper's sizes (FFT 256^3, CON S = 80 and
#                                    800, SAMPLE 262,144 keys/process), P = 8
#
# Each run goes through `shmamrun -n P --bind` for every claim algorithm
# (shmamrun --list-claims) and through `mpiexec -n P` for the MPICH ports that
# are built (B/apps/mpi_fft, mpi_con, mpi_sample); a program that is not built
# is skipped with a note.  Clusters of SMPs: where the same program is built
# with libshmam-mpi (B/apps/hyb_fft, hyb_con, hyb_sample), it also runs under
# `mpiexec -n P` as one node of P ranks (SHMAM_NODE_SIZE=P: every message
# through shared memory, under the hybrid runtime) and as two virtual nodes
# of P/2 (SHMAM_NODE_SIZE=P/2: messages between the halves through MPI),
# implementations hybrid_1node and hybrid_2nodes, interleaved with the others.
#
# Conditions.  shmam's ranks are always pinned (rank r to CPU r mod CPUs).  MPICH's
# are pinned (-bind-to core) only when every rank has a CPU of its own
# (P <= CPUs): its waits spin without yielding, and two spinning ranks bound to
# one core starve each other, so with more ranks than CPUs MPICH runs unbound.
# The pinned field of every row, Table 4's caption and its MPICH column header
# say which.  The hybrid runs are pinned as shmam's are (-bind-to user:0,1,...:
# rank r on CPU r mod CPUs): their waits poll, yield and nap (am_wait of an
# endpoint with a transport), they never spin in MPI.  The estimator is the instrument's one (bench/common/stat.h):
# first one unmeasured warm-up run per program and implementation, then
# REPEAT measured runs of every configuration, the implementations interleaved
# ABBA (repeat 1: lockfree tas ... mutex mpich, repeat 2 the reverse order, and
# so on), so that a burst of load from elsewhere spoils one run of several
# implementations rather than every run of one; a figure is the MEDIAN of the
# verified runs, its spread the lowest and the highest.  Output, in RESULTS
# (default results/<YYYY-MM-DD>; apps.csv is rewritten):
#   apps.csv    every measured run's final line and whether it was pinned,
#               app,<name>,<input>,<impl>,<shm>,<procs>,<seconds>,<verified|FAILED>,<0|1>
#               (scripts/report/rows.py apps turns it into rows of the report)
#   table4.md   Table 4: median seconds with their spread, runs as rows,
#               algorithms (+ MPICH) as columns, the lowest shmam median in bold
#   table3.md   Table 3: input parameters and memory per run
#   table4.png  bar chart of table4 (scripts/apps.gp), if gnuplot is installed
# Progress goes to stderr.  The exit status is nonzero if any run failed,
# warm-ups included (verification, exit status, timeout or no final line).
# Environment: SCALE (quick|paper), NPROCS (4 | 8), RESULTS (output directory),
# REPEAT (5 | 3), TIMEOUT (seconds per run: 300 | 1800), MPI_TIMEOUT (seconds per MPICH
# run: 60 | 300; unbound MPICH ranks can crawl when they outnumber the CPUs, and
# a run stopped there is reported as timed out, not as a failure), B (build directory).
set -u
cd "$(dirname "$0")/.." || exit 1
SCALE=${SCALE:-quick}
B=${B:-build}
RUN=$B/bin/shmamrun
ALGS=$("$RUN" --list-claims | cut -f1 | tr '\n' ' ') || exit 1 # the one list: am_claim_names
case $SCALE in
quick)
    P=${NPROCS:-4} FFT_N=128 COMM_S=80 COMP_S=800 KEYS=262144
    REPEAT=${REPEAT:-5} TIMEOUT=${TIMEOUT:-300} MPI_TIMEOUT=${MPI_TIMEOUT:-60}
    ;;
paper)
    P=${NPROCS:-8} FFT_N=256 COMM_S=80 COMP_S=800 KEYS=262144
    REPEAT=${REPEAT:-3} TIMEOUT=${TIMEOUT:-1800} MPI_TIMEOUT=${MPI_TIMEOUT:-300}
    ;;
*)
    echo "apps.sh: SCALE must be quick or paper" >&2
    exit 2
    ;;
esac
OUT=${RESULTS:-results/$(date +%Y-%m-%d)}
CSV=$OUT/apps.csv
CPUS=$(nproc)
if [ "$P" -le "$CPUS" ]; then
    MPI_BIND="-bind-to core" MPI_PINNED=1
else
    MPI_BIND="" MPI_PINNED=0
fi
# -bind-to user:0,1,0,1 for P = 4 on 2 CPUs: rank r on CPU r mod CPUs.
HYB_BIND="-bind-to user:$(awk -v p="$P" -v c="$CPUS" \
    'BEGIN { for (r = 0; r < p; r++) printf "%s%d", r ? "," : "", r % c }')"
[ -x "$RUN" ] || { echo "apps.sh: $RUN is missing; run make programs" >&2; exit 1; }
mkdir -p "$OUT" || exit 1
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT
: >"$TMP/failed"
: >"$TMP/mpi_timeout"
: >"$TMP/rss"
: >"$TMP/warm"
echo "# app,name,input,impl,shm,procs,seconds,verdict,pinned" >"$CSV"

# The runs: label|program|arguments.  The paper's four, and SAMPLE with each
# rank's keys for a destination sent together as long messages (MPICH's
# version is one MPI_Alltoallv either way: the fair match for this row).
RUNS="3-D FFT|fft|--n $FFT_N
CON/comm|con|--input comm --side $COMM_S
CON/comp|con|--input comp --side $COMP_S
SAMPLE|sample|--keys $KEYS
SAMPLE/batched|sample|--keys $KEYS --batched"

# once LABEL IMPL PINNED MEASURED CMD...: one run of CMD.  A measured run
# (MEASURED = 1) appends its app line and PINNED to the CSV and records the
# peak RSS of its largest process (KB) in $TMP/rss; any run notes a failure.
once() {
    label=$1 impl=$2 pinned=$3 measured=$4
    shift 4
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f %M -o "$TMP/time" "$@" >"$TMP/out" 2>&1
    else
        "$@" >"$TMP/out" 2>&1
    fi
    rc=$?
    if [ "$rc" -eq 124 ] && [ "$impl" = mpich ]; then
        echo "$label" >>"$TMP/mpi_timeout"
        echo "timed out after $MPI_TIMEOUT s (not a failure)" >&2
        return 0
    fi
    line=$(grep '^app,' "$TMP/out" | tail -n 1)
    case $impl in # a hybrid run names its claim algorithm: name the run instead
    hybrid_*) line=$(echo "$line" | awk -F, -v OFS=, -v i="$impl" 'NF { $4 = i; print }') ;;
    esac
    [ -n "$line" ] && [ "$measured" -eq 1 ] && echo "$line,$pinned" >>"$CSV"
    verdict=$(echo "$line" | awk -F, '{ print $8 }')
    secs=$(echo "$line" | awk -F, '{ print $7 }')
    if [ "$rc" -ne 0 ] || [ "$verdict" != verified ]; then
        echo "$label|$impl" >>"$TMP/failed"
        echo "FAILED (exit status $rc)" >&2
        sed 's/^/    /' "$TMP/out" | tail -n 15 >&2
        return 1
    fi
    [ "$measured" -eq 1 ] && [ -s "$TMP/time" ] &&
        echo "$label|$impl|$(tail -n 1 "$TMP/time")" >>"$TMP/rss"
    echo "$secs s" >&2
}

# run_impl LABEL PROG ARGS IMPL MEASURED: one run of PROG under IMPL (an
# algorithm, mpich, hybrid_1node or hybrid_2nodes); MEASURED 0 is a warm-up.
run_impl() {
    if [ "$4" = hybrid_1node ] || [ "$4" = hybrid_2nodes ]; then
        k=$P
        [ "$4" = hybrid_2nodes ] && k=$((P / 2))
        # shellcheck disable=SC2086 # $3 and $HYB_BIND are word lists
        once "$1" "$4" 1 "$5" env SHMAM_NODE_SIZE="$k" timeout -k 10 "$TIMEOUT" \
            mpiexec -n "$P" $HYB_BIND "$B/apps/hyb_$2" $3 </dev/null
    elif [ "$4" = mpich ]; then
        if grep -qx "$1" "$TMP/mpi_timeout"; then
            echo "skipped (timed out before)" >&2
            return 0
        fi
        # shellcheck disable=SC2086 # $3 and $MPI_BIND are word lists
        once "$1" mpich "$MPI_PINNED" "$5" timeout -k 10 "$MPI_TIMEOUT" \
            mpiexec -n "$P" $MPI_BIND "$B/apps/mpi_$2" $3 </dev/null
    else
        # shellcheck disable=SC2086
        once "$1" "$4" 1 "$5" "$RUN" -n "$P" --bind --timeout "$TIMEOUT" -a "$4" \
            "$B/apps/$2" $3 </dev/null
    fi
}

# reverse WORDS...: the words in the reverse order.
reverse() {
    r=""
    for w in "$@"; do r="$w $r"; done
    echo "$r"
}

echo "apps.sh: SCALE=$SCALE, P = $P on $CPUS CPUs, MPICH $([ "$MPI_PINNED" -eq 1 ] &&
    echo pinned || echo unbound), median of $REPEAT, results in $OUT" >&2
failed=0
echo "$RUNS" >"$TMP/runs"
while IFS='|' read -r label prog args; do
    if [ ! -x "$B/apps/$prog" ]; then
        echo "apps.sh: $label: $B/apps/$prog is not built: skipped" >&2
        echo "$label|$prog" >>"$TMP/skipped"
        continue
    fi
    impls=$ALGS
    if [ -x "$B/apps/mpi_$prog" ]; then
        impls="$impls mpich"
    else
        echo "apps.sh: $label: $B/apps/mpi_$prog is not built: no MPICH column" >&2
    fi
    if [ -x "$B/apps/hyb_$prog" ]; then
        impls="$impls hybrid_1node hybrid_2nodes"
    else
        echo "apps.sh: $label: $B/apps/hyb_$prog is not built: no hybrid runs" >&2
    fi
    # One unmeasured warm-up per program and implementation, on the program's
    # first run (it loads the binary, its libraries and, for MPICH, the
    # transport's files into the page cache).
    for a in $impls; do
        grep -qx "$prog|$a" "$TMP/warm" && continue
        echo "$prog|$a" >>"$TMP/warm"
        printf 'apps.sh: %-8s %-8s warm-up ... ' "$label" "$a" >&2
        run_impl "$label" "$prog" "$args" "$a" 0 || failed=1
    done
    r=1
    order=$impls
    while [ "$r" -le "$REPEAT" ]; do
        for a in $order; do
            printf 'apps.sh: %-8s %-8s %d/%d ... ' "$label" "$a" "$r" "$REPEAT" >&2
            run_impl "$label" "$prog" "$args" "$a" 1 || failed=1
        done
        # shellcheck disable=SC2086 # a word list
        order=$(reverse $order)
        r=$((r + 1))
    done
done <"$TMP/runs"

# Table 4 (markdown) and its data for gnuplot, from the rows rows.py makes of
# the CSV: per run and implementation the median of the verified runs and
# their lowest and highest.
/usr/bin/python3 scripts/report/rows.py apps "$CSV" |
awk -F, -v failed="$TMP/failed" -v dat="$OUT/table4.dat" -v P="$P" -v cpus="$CPUS" \
    -v rep="$REPEAT" -v scale="$SCALE" -v mpi_pinned="$MPI_PINNED" -v algs="$ALGS" '
function run_of(m) {
    return m == "fft" ? "3-D FFT" : m == "sample" ? "SAMPLE" : m == "con_comm" ? "CON/comm" : \
        m == "con_comp" ? "CON/comp" : m == "sample_batched" ? "SAMPLE/batched" : m
}
function cell(k) {
    if (lo[k] == hi[k]) return sprintf("%.3f", med[k])
    return sprintf("%.3f <sub>%.3f–%.3f</sub>", med[k], lo[k], hi[k])
}
BEGIN {
    nr = split("3-D FFT|CON/comm|CON/comp|SAMPLE|SAMPLE/batched", runs, "|")
    # The columns of the paper in its order, then the claim algorithms it did
    # not have (from shmamrun --list-claims, under their own names), then MPICH.
    nc = split("tas ttas ticket anderson mutex lockfree", cols, " ")
    split("Test & Set|Test & Test & Set|Ticket Lock|Anderson Lock|Posix Mutex|Lock-Free", head, "|")
    for (c = 1; c <= nc; c++) paper[cols[c]] = 1
    na = split(algs, more, " ")
    for (a = 1; a <= na; a++)
        if (!(more[a] in paper)) { cols[++nc] = more[a]; head[nc] = more[a] }
    cols[++nc] = "mpich"
    head[nc] = mpi_pinned ? "MPICH (pinned)" : "MPICH (unbound)"
    while ((getline l < failed) > 0) { split(l, f, "|"); bad[f[1], f[2]] = 1 }
}
$1 == "apps" {
    k = run_of($7) SUBSEP $2
    med[k] = $8 + 0
    split($10, sp, "-")
    lo[k] = sp[1] + 0
    hi[k] = sp[2] + 0
}
END {
    print "# Table 4: application execution times (seconds)"
    print ""
    printf "P = %d processes on %d CPUs", P, cpus
    if (P > cpus) printf " (oversubscribed %s:1)", P / cpus
    printf ". shmam ranks pinned (`shmamrun --bind`); MPICH ranks "
    if (mpi_pinned)
        printf "pinned too (`mpiexec -bind-to core`). "
    else
        printf "**unbound** (`mpiexec` without -bind-to: its waits spin without yielding, " \
               "and two spinning ranks bound to one core starve each other). "
    if (rep == 1)
        printf "Each cell: one run per implementation, after one unmeasured warm-up per " \
               "program; sizes in table3.md. "
    else
        printf "Each cell: the median of the verified runs (%d per implementation, after " \
               "one unmeasured warm-up per program; implementations interleaved ABBA) with " \
               "the lowest–highest beside it; sizes in table3.md. ", rep
    print "Lowest shmam median of each run in **bold**; medians whose spreads overlap " \
          "are within noise."
    if (scale == "paper" && P > cpus)
        print "\nNote: the paper ran 8 processes on an 8-processor Sun Enterprise 5000; " \
              "here " P " processes share " cpus " CPUs, so every run is multiprogrammed."
    print ""
    line = "| Run |"; sep = "|---|"
    for (c = 1; c <= nc; c++) { line = line " " head[c] " |"; sep = sep "---:|" }
    print line; print sep
    for (r = 1; r <= nr; r++) {
        min = -1
        for (c = 1; c < nc; c++)
            if ((runs[r], cols[c]) in med && (min < 0 || med[runs[r], cols[c]] < min))
                min = med[runs[r], cols[c]]
        line = "| " runs[r] " |"
        for (c = 1; c <= nc; c++) {
            k = runs[r] SUBSEP cols[c]
            if ((runs[r], cols[c]) in bad) s = "FAILED"
            else if (k in med) s = cell(k)
            else s = "-"
            if (c < nc && (k in med) && med[k] == min && !((runs[r], cols[c]) in bad))
                s = "**" s "**"
            line = line " " s " |"
        }
        print line
    }
    # For gnuplot, transposed: one row per implementation; per run its median,
    # lowest and highest.
    printf "\"impl\"" > dat
    for (r = 1; r <= nr; r++) printf " \"%s\" \"low\" \"high\"", runs[r] > dat
    print "" > dat
    for (c = 1; c <= nc; c++) {
        printf "\"%s\"", head[c] > dat
        for (r = 1; r <= nr; r++) {
            k = runs[r] SUBSEP cols[c]
            if (k in med) printf " %.4f %.4f %.4f", med[k], lo[k], hi[k] > dat
            else printf " - - -" > dat
        }
        print "" > dat
    }
    print ""
    print "The MPICH port of CON completes its one-sided operations with one MPI_Win_flush per"
    print "target it accessed: in MPICH 4.0.2, MPI_Win_flush_all can return before the gets"
    print "have completed (apps/mpi/repro_onesided.c), which made CON fail its verification."
    print ""
    print "The paper (Table 4; 8 processes, Sun Enterprise 5000, no MPICH column):"
    print ""
    print "| Run | Test & Set | Test & Test & Set | Ticket Lock | Anderson Lock | Posix Mutex | Lock-Free |"
    print "|---|---:|---:|---:|---:|---:|---:|"
    print "| 3-D FFT | 8.9 | 8.8 | **8.6** | 8.9 | 9.0 | 8.7 |"
    print "| CON/comm | 2.04 | 2.02 | 1.98 | 2.20 | 3.5 | **1.96** |"
    print "| CON/comp | 1.43 | 1.43 | 1.43 | 1.45 | 1.6 | **1.40** |"
    print "| SAMPLE | 2.3 | 2.3 | 2.5 | 2.8 | 9.5 | **2.2** |"
    print ""
    print "SAMPLE/batched is not the paper'"'"'s: each rank sends a destination its keys together"
    print "as long messages (one per destination up to long_max, 1 MiB), where SAMPLE sends one"
    print "short message per key; MPICH'"'"'s version is one MPI_Alltoallv in both rows."
}' >"$OUT/table4.md"

# Table 3: input parameters and memory.  Data = the main arrays per process
# (FFT: three N^3/P complex arrays, 16 B each; CON: 1 B of edge bits, 4 B
# representative and 4 B label per node; SAMPLE: keys, bucket, sort buffer,
# about 12 B per key); peak RSS = the largest process of the lockfree run,
# measured (includes verification: CON's rank 0 regenerates the whole graph).
awk -F'|' -v P="$P" -v cpus="$CPUS" -v n="$FFT_N" -v cs="$COMM_S" -v ps="$COMP_S" -v keys="$KEYS" \
    -v rssf="$TMP/rss" -v scale="$SCALE" '
function mb(b) { return sprintf("%.1f MB", b / 1e6) }
function grp(x,  s, r) {
    s = sprintf("%d", x)
    for (r = ""; length(s) > 3; s = substr(s, 1, length(s) - 3))
        r = "," substr(s, length(s) - 2) r
    return s r
}
BEGIN {
    while ((getline l < rssf) > 0) {
        split(l, f, "|")
        if (f[2] == "lockfree" && !(f[1] in rss)) rss[f[1]] = f[3]
    }
    lab[1] = "3-D FFT"; par[1] = n "x" n "x" n " complex doubles"
    per[1] = grp(n * n * n / P) " values"; data[1] = 48 * n * n * n / P
    lab[2] = "CON/comm"; par[2] = "3-D lattice " P * cs "x" cs "x" cs ", 25% edges present"
    per[2] = grp(cs * cs * cs) " nodes (" cs "^3)"; data[2] = 9 * cs * cs * cs
    lab[3] = "CON/comp"; par[3] = "2-D lattice " P * ps "x" ps ", 40% edges present"
    per[3] = grp(ps * ps) " nodes (" ps "^2)"; data[3] = 9 * ps * ps
    lab[4] = "SAMPLE"; par[4] = "32-bit keys, sample sort"
    per[4] = grp(keys) " keys"; data[4] = 12 * keys
    lab[5] = "SAMPLE/batched"; par[5] = "the same, keys per destination in long messages"
    per[5] = per[4]; data[5] = 16 * keys
    print "# Table 3: application run input parameters (SCALE=" scale ", P = " P ")"
    print ""
    if (scale == "paper")
        print "The sizes of the paper, with P = " P " processes on " cpus " CPUs" \
            (P > cpus ? " (oversubscribed; the paper had one processor per process)." : ".")
    else
        print "Reduced: P = " P " instead of 8 and FFT " n "^3 instead of 256^3; CON and " \
            "SAMPLE at the sizes per process of the paper (" cs "^3 and " ps "^2 nodes, " \
            grp(keys) " keys), so their whole problems are " P "/8 of those of the paper."
    print ""
    print "| Run | Input parameters | Per process | Data per process | Data, all " P " processes | Peak RSS per process (measured) |"
    print "|---|---|---:|---:|---:|---:|"
    for (i = 1; i <= 5; i++)
        printf "| %s | %s | %s | %s | %s | %s |\n", lab[i], par[i], per[i], mb(data[i]),
            mb(data[i] * P), lab[i] in rss ? mb(rss[lab[i]] * 1024) : "-"
    print ""
    print "Data: the main arrays (FFT: three N^3/P arrays of 16-byte complex values; CON: 9 B"
    print "per node, edge bits + representative + label; SAMPLE: about 12 B per key, keys +"
    print "bucket + radix-sort buffer; batched, 4 B more for the keys ordered by destination)."
    print "Peak RSS: the largest process of one lockfree run,"
    print "from /usr/bin/time; CON rank 0 includes verification (it regenerates the whole"
    print "graph when it has at most 2^22 nodes)."
    print ""
    print "The paper (Table 3, 8 processes): 3-D FFT 256x256x256 values, 328 MB; CON/comm 3-D"
    print "lattice, 512,000 nodes/processor, 25% edges present, 256 MB; CON/comp 2-D lattice,"
    print "640,000 nodes/processor, 40% edges present, 320 MB; SAMPLE 262,144 keys/processor, 72.8 MB."
}' >"$OUT/table3.md"
if [ -s "$TMP/mpi_timeout" ]; then
    {
        echo
        echo "MPICH did not finish within $MPI_TIMEOUT s (its ranks spin without yielding; with"
        echo "more ranks than CPUs they can crawl), so these have no MPICH figure:"
        sed 's/^/- /' "$TMP/mpi_timeout"
    } >>"$OUT/table4.md"
fi
if [ -s "$TMP/skipped" ]; then
    {
        echo
        echo "Not run (program not built):"
        sed 's/|.*//; s/^/- /' "$TMP/skipped"
    } | tee -a "$OUT/table3.md" >>"$OUT/table4.md"
fi

# The bar chart.
if command -v gnuplot >/dev/null 2>&1; then
    term=png
    gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1 && term=pngcairo
    gnuplot -e "datafile='$OUT/table4.dat'; outfile='$OUT/table4.png'; term='$term'; \
        sub='P = $P on $CPUS CPUs, SCALE=$SCALE, median and lowest-highest'" scripts/apps.gp ||
        echo "apps.sh: gnuplot failed; no table4.png" >&2
else
    echo "apps.sh: gnuplot is not installed; no table4.png" >&2
fi

cat "$OUT/table3.md"
echo
cat "$OUT/table4.md"
if [ "$failed" -ne 0 ]; then
    echo "apps.sh: FAILED:" "$(sort -u "$TMP/failed" | tr '\n' ' ')" >&2
    exit 1
fi
exit 0
