#!/usr/bin/awk -f
# csv2md.awk - turns rows of shmam's benchmark schema
#
#   bench,impl,shm,procs,pinned,iters,metric,value,unit,spread
#
# into a markdown table.
#
#   awk -f scripts/csv2md.awk results/DATE/rtt.csv           every row as it is
#   awk -f scripts/csv2md.awk -v pivot=1 results/DATE/rtt.csv
#       one line per configuration (bench, impl, shm, procs, pinned), one column
#       per metric ("metric (unit)"), in the order they first appear
#   -v bench=NAME keeps the rows of one benchmark only (for files like all.csv)
#
# Header, comment and blank lines are skipped; lines of another shape too.
# Numeric columns are right-aligned.  Exits 1 if there was no row.
BEGIN { FS = "," }
/^#/ || /^bench,/ || NF != 10 { next }
bench != "" && $1 != bench { next }
{
    rows++
    if (!pivot) {
        for (i = 1; i <= 10; i++)
            cell[rows, i] = $i
        next
    }
    key = $1 FS $2 FS $3 FS $4 FS $5
    if (!(key in line)) {
        line[key] = ++nkeys
        keys[nkeys] = key
    }
    if (!($7 in col)) {
        col[$7] = ++nmet
        met[nmet] = $7 " (" $9 ")"
    }
    val[line[key], col[$7]] = $8
}
END {
    if (rows == 0)
        exit 1
    if (pivot)
        print_pivot()
    else
        print_rows()
}
function print_rows(    r, i, s, t) {
    split("bench impl shm procs pinned iters metric value unit spread", h, " ")
    s = "|"
    t = "|"
    for (i = 1; i <= 10; i++) {
        s = s " " h[i] " |"
        t = t (i == 4 || i == 5 || i == 6 || i == 8 ? "---:|" : "---|")
    }
    print s
    print t
    for (r = 1; r <= rows; r++) {
        s = "|"
        for (i = 1; i <= 10; i++)
            s = s " " cell[r, i] " |"
        print s
    }
}
function print_pivot(    k, m, s, t, p) {
    s = "| bench | impl | shm | procs | pinned |"
    t = "|---|---|---|---:|---:|"
    for (m = 1; m <= nmet; m++) {
        s = s " " met[m] " |"
        t = t "---:|"
    }
    print s
    print t
    for (k = 1; k <= nkeys; k++) {
        split(keys[k], p, FS)
        s = "| " p[1] " | " p[2] " | " p[3] " | " p[4] " | " p[5] " |"
        for (m = 1; m <= nmet; m++)
            s = s " " ((k, m) in val ? val[k, m] : "–") " |"
        print s
    }
}
