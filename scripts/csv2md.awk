#!/usr/bin/awk -f
# csv2md.awk - turn shmam benchmark CSV into a markdown table.
#
#   awk -f scripts/csv2md.awk results/DATE/rtt.csv
#
# The first line starting with "# " names the columns; other comment lines are
# skipped, and so is every row whose first field differs from the first row's
# (so a file mixing several benchmarks yields the table of the first one; pass
# -v bench=NAME to pick another).  Numeric columns are right-aligned.
BEGIN { FS = "," }
/^#/ {
    if (ncol == 0) {
        line = $0
        sub(/^#[ \t]*/, "", line)
        ncol = split(line, head, ",")
    } else if (bench != "") {
        line = $0
        sub(/^#[ \t]*/, "", line)
        split(line, h2, ",")
        if (h2[1] == bench)
            ncol = split(line, head, ",")
    }
    next
}
NF == 0 { next }
{
    if (bench == "")
        bench = $1
    if ($1 != bench)
        next
    rows++
    for (i = 1; i <= NF; i++) {
        cell[rows, i] = $i
        if ($i !~ /^-?[0-9.]+$/)
            text[i] = 1
    }
    if (NF > ncol)
        ncol = NF
}
END {
    if (rows == 0)
        exit 1
    out = "|"
    sep = "|"
    for (i = 1; i <= ncol; i++) {
        out = out " " (i in head ? head[i] : "col" i) " |"
        sep = sep (text[i] ? "---|" : "---:|")
    }
    print out
    print sep
    for (r = 1; r <= rows; r++) {
        out = "|"
        for (i = 1; i <= ncol; i++)
            out = out " " cell[r, i] " |"
        print out
    }
}
