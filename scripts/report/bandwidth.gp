# bandwidth.gp - bulk bandwidth of logp's request/reply stream (every message
# answered) against message size per claim algorithm, with MPICH's streaming
# bandwidth and the memory copy rate for reference.  The one-way streams are
# oneway.gp's.
#   gnuplot -e "dir='results/DATE'; nalg=N" scripts/report/bandwidth.gp
#   (reads bw.dat: sizes, N algorithms and kinds, MPICH, memory copy rate)
set terminal pngcairo size 800,500 font ",10"
set output dir.'/bandwidth.png'
set datafile missing '-'
# gnuplot's colours repeat after 8: more of them, for the channel kinds' columns
set linetype 9 lc rgb '#8b0000'
set linetype 10 lc rgb '#6b8e23'
set linetype 11 lc rgb '#505050'
set linetype 12 lc rgb '#008b8b'
set linetype 13 lc rgb '#ff69b4'
set key outside right autotitle columnheader
set logscale x 2
set logscale y
set format x '%.0f'
set xlabel 'message size (bytes)'
set ylabel 'MB/s (log scale)'
set title 'Bulk bandwidth, request/reply stream, against size'
set grid
plot for [i=2:nalg+1] dir.'/bw.dat' using 1:i with linespoints lw 2 pt i, \
     dir.'/bw.dat' using 1:nalg+2 with linespoints lw 2 dt 2 lc rgb 'black', \
     dir.'/bw.dat' using 1:nalg+3 with lines lw 2 dt 3 lc rgb 'red'
