# apps.gp - Table 4 as bar charts: one panel per application run, one bar per
# claim algorithm and one (grey) for MPICH, in seconds: each bar the median of
# the verified runs, labelled with it, and an error bar from the lowest to the
# highest run.  Called by scripts/apps.sh:
#
#   gnuplot -e "datafile='DIR/table4.dat'; outfile='DIR/table4.png'; \
#               term='pngcairo'; sub='P = 4 on 2 CPUs'" scripts/apps.gp
#
# datafile: a header row of quoted names ("impl", then per run its name, "low"
# and "high"), then one row per implementation (the paper's six in its column
# order, then claim algorithms it did not have, MPICH last): its name, quoted,
# and per run the median, lowest and highest seconds, "-" where there is no
# verified time.  Bars: lockfree (the sixth) blue, the paper's locks orange,
# the others green, MPICH grey.
# Each panel's scale fits the shmam algorithms' runs, which are what Table 4
# compares; an MPICH bar taller than that is cut at the top (its label says
# its time).
if (!exists("term")) term = "pngcairo"
if (!exists("sub")) sub = ""
set terminal term size 1500,850
set output outfile
set termoption noenhanced
set datafile missing "-"
set key autotitle columnhead
unset key
set style fill solid 0.8 border -1
set boxwidth 0.7
set grid ytics
nimpl = int(system(sprintf("tail -n +2 '%s' | wc -l", datafile)))
set xrange [-0.6:nimpl - 0.4]
set ylabel "seconds"
set xtics rotate by -30 nomirror
# Panel titles: the header row's names (gnuplot's word() keeps quoted words).
runs = system(sprintf("head -n 1 '%s'", datafile))
nruns = (words(runs) - 1) / 3
set multiplot layout 2,(nruns + 1) / 2 title "Application execution times (Table 4)   ".sub
do for [r = 1:nruns] {
    c = 3 * r - 1  # the run's median; its lowest and highest follow
    set title word(runs, c)
    # The highest shmam run (every data row but MPICH's) sets the scale; none: 1 s.
    set autoscale y  # stats leaves out points outside the current range
    stats datafile every ::0::(nimpl - 2) using (column(c + 2)) nooutput
    top = (exists("STATS_max") && STATS_records > 0) ? 1.25 * STATS_max : 1
    undefine STATS_*
    set yrange [0:top]
    plot datafile using 0:c:($0 == nimpl - 1 ? 0x888888 : $0 == 5 ? 0x1f77b4 : \
                             $0 > 5 ? 0x2ca02c : 0xff7f0e):xtic(1) \
        with boxes lc rgb variable, \
        '' using 0:c:(column(c + 1)):(column(c + 2)) with yerrorbars lc rgb "black" pt 0, \
        '' using 0:(column(c + 2) < top ? column(c + 2) : 0.85 * top):(sprintf("%.3f", column(c))) \
        with labels offset 0,0.8 font ",9", \
        0 with lines lc rgb "black" notitle  # keeps a panel without data drawable
}
unset multiplot
