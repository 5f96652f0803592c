# loggp_sig.gp - the signature graph (Culler et al. 1996): send and receive
# overheads and the gap against message size (left, log-log, one claim
# algorithm and MPICH), and against the wait between sends at one size
# (right: time per message, o_s and o_r of bursts of 32).
#   gnuplot -e "dir='results/DATE'; ncol=N" scripts/report/loggp_sig.gp
#   (reads loggp_size.dat: bytes, then N columns; loggp_sig.dat: wait, time
#   per message, o_s, o_r; all in µs, '-' where a figure is missing)
set terminal pngcairo size 1100,450 font ",10"
set output dir.'/loggp_sig.png'
set datafile missing '-'
set multiplot layout 1,2
set key top left autotitle columnheader noenhanced
set logscale xy
set format x '%.0f'
set xtics ('1' 1, '64' 64, '4K' 4096, '256K' 262144, '4M' 4194304)
set xlabel 'message size (bytes)'
set ylabel 'µs (log scale)'
set title 'o_s, o_r and g against size' noenhanced
set grid
plot for [i=2:ncol+1] dir.'/loggp_size.dat' using 1:i with linespoints lw 2 pt i
unset logscale
unset xtics
set xtics auto
set format x '%g'
set xlabel 'wait between sends (µs)'
set ylabel 'µs'
set yrange [0:*]
set title 'against the wait between sends' noenhanced
plot for [i=2:4] dir.'/loggp_sig.dat' using 1:i with linespoints lw 2 pt i, \
     x title 'wait' with lines dt 2 lc rgb 'gray'
unset multiplot
