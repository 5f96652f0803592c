# oneway.gp - one-way bandwidth against message size, 64 B to 4 MB: shmam's
# copy streams (bulk, long through the heap, one-copy long into a region),
# MPICH's osu_bw-style stream (window 64) and the raw copy floor of shmam's run.
#   gnuplot -e "dir='results/DATE'" scripts/report/oneway.gp
#   (reads oneway.dat: bytes, shmam bulk, long, long_at, MPICH, raw floor;
#   '-' where a kind has no figure at that size)
set terminal pngcairo size 800,500 font ",10"
set output dir.'/oneway.png'
set datafile missing '-'
set key outside right autotitle columnheader noenhanced
set logscale x 2
set logscale y
set format x '%.0f'
set xtics ('64' 64, '256' 256, '1K' 1024, '4K' 4096, '16K' 16384, '64K' 65536, \
           '256K' 262144, '1M' 1048576, '4M' 4194304)
set xlabel 'message size (bytes)'
set ylabel 'MB/s (log scale)'
set title 'Bandwidth, one way: the receiver copies every message out'
set grid
plot for [i=2:4] dir.'/oneway.dat' using 1:i with linespoints lw 2 pt i, \
     dir.'/oneway.dat' using 1:5 with linespoints lw 2 dt 2 lc rgb 'black' pt 7, \
     dir.'/oneway.dat' using 1:6 with linespoints lw 2 dt 3 lc rgb 'red' pt 1
