# locks.gp - lock throughput against the number of processes, one line per
# lock of the lock microbenchmark: shmam's solid, the others dashed.
#   gnuplot -e "dir='results/DATE'; ncol=N; nshm=S" scripts/report/locks.gp
#   (reads locks.dat: its first line names N columns, the process count and
#   then the locks, shmam's S first)
set terminal pngcairo size 900,500 font ",10"
set output dir.'/locks.png'
set datafile missing '-'
set key outside right autotitle columnheader
set logscale x 2
set logscale y
set format x '%.0f'
set xlabel 'processes (2 CPUs)'
set ylabel 'millions of acquisitions per second (log scale)'
set title 'Lock throughput'
set grid
colors = "#7b2cbf #2a9d8f #1d3557 #e76f51 #f4a261 #6a994e #e63946 #457b9d #8d99ae #bc6c25 #000000 #ff006e #606c38 #3a86ff"
plot for [i=2:nshm+1] dir.'/locks.dat' using 1:i with linespoints lw 2 pt i \
         lc rgb word(colors, (i - 2) % 14 + 1), \
     for [i=nshm+2:ncol] dir.'/locks.dat' using 1:i with linespoints lw 2 pt i \
         lc rgb word(colors, (i - 2) % 14 + 1) dt 2
