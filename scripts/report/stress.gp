# stress.gp - the many-to-one stress test (Table 2): time against the number
# of writers, one line per claim algorithm, per-sender channel kind and MPICH,
# log scale.
#   gnuplot -e "dir='results/DATE'; nalg=N" scripts/report/stress.gp
#   (reads stress.dat: N algorithms and kinds, then MPICH)
set terminal pngcairo size 800,500 font ",10"
set output dir.'/stress.png'
set datafile missing '-'
# gnuplot's colours repeat after 8: more of them, for the channel kinds' columns
set linetype 9 lc rgb '#8b0000'
set linetype 10 lc rgb '#6b8e23'
set linetype 11 lc rgb '#505050'
set linetype 12 lc rgb '#008b8b'
set linetype 13 lc rgb '#ff69b4'
set key outside right autotitle columnheader
set logscale y
set xrange [0.5:7.5]
set xtics (1, 3, 7)
set xlabel 'writers (one reader; 2 CPUs, so 3 and 7 writers share them)'
set ylabel 'seconds per 10^6 integers (log scale)'
set title 'Many-to-one stress test (Table 2)'
set grid
plot for [i=2:nalg+2] dir.'/stress.dat' using 1:i with linespoints lw 2 pt i
