# locks_queue.gp - shmam's MCS and CLH beside Concurrency Kit's against the
# number of processes: throughput (left) and p99 acquire latency (right),
# shmam's solid, ck's dashed.
#   gnuplot -e "dir='results/DATE'" scripts/report/locks_queue.gp
#   (reads locks_queue.dat, written by scripts/report/locks.py: the process
#   count, four throughputs in M acq/s, then the same four locks' p99 in µs)
set terminal pngcairo size 1000,420 font ",10"
set output dir.'/locks_queue.png'
set termoption noenhanced
set datafile missing '-'
set multiplot layout 1,2 title "Queue locks: shmam's (spin, then yield) and ck's (spin only)"
set logscale x 2
set logscale y
set format x '%.0f'
set xlabel 'processes (2 CPUs)'
set grid
set key below autotitle columnheader
colors = "#e63946 #e63946 #1d3557 #1d3557"
set ylabel 'millions of acquisitions per second (log scale)'
set title 'Throughput'
plot for [i=2:5] dir.'/locks_queue.dat' using 1:i with linespoints lw 2 pt i \
     lc rgb word(colors, i - 1) dt 1 + i % 2
set ylabel 'p99 acquire latency, µs (log scale)'
set title 'Latency, 99th percentile'
plot for [i=6:9] dir.'/locks_queue.dat' using 1:i with linespoints lw 2 pt i - 4 \
     lc rgb word(colors, i - 5) dt 1 + i % 2
unset multiplot
