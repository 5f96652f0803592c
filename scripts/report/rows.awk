# rows.awk - passes through the rows of the common benchmark schema
#
#   bench,impl,shm,procs,pinned,iters,metric,value,unit,spread
#
# dropping header, comment and blank lines.  A line that is not a well-formed
# row (10 fields, integer procs/pinned/iters, numeric value) is reported on
# stderr and left out, and the exit status is then 1.  With -v rename=NAME the
# bench field of every row becomes NAME (report.sh: a second configuration of
# one benchmark, e.g. stress_unbound).
BEGIN { FS = OFS = ","; bad = 0 }
/^#/ || /^bench,/ || /^[ \t]*$/ { next }
NF != 10 || $4 !~ /^[0-9]+$/ || $5 !~ /^[0-9]+$/ || $6 !~ /^[0-9]+$/ ||
    $8 !~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ {
    print "malformed row: " $0 > "/dev/stderr"
    bad = 1
    next
}
rename != "" { $1 = rename }
{ print }
END { exit bad }
