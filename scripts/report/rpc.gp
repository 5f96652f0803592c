# rpc.gp - rpcbench per transport: the round trip and the echoes (µs) on the
# left, the rate of 8-byte calls with 32 in flight on the right; log scales.
#   gnuplot -e "dir='results/DATE'" scripts/report/rpc.gp
#   (reads rpc.dat: transport, rtt_8B, tput_32, echo_4KB, echo_64KB; '-' missing)
set terminal pngcairo size 1100,480 font ",10"
set output dir.'/rpc.png'
set datafile missing '-'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set logscale y
set grid ytics
set xtics rotate by -30 noenhanced
set key top left autotitle columnheader noenhanced
set multiplot layout 1,2
set title 'Round trip and echoes (lower is better)'
set ylabel 'µs per call (log scale)'
plot dir.'/rpc.dat' using 2:xtic(1) title '8 B', '' using 4 title '4 KB', '' using 5 title '64 KB'
set title '8-byte calls, 32 in flight (higher is better)'
set ylabel '10^3 calls/s (log scale)'
set key off
plot dir.'/rpc.dat' using ($3/1000):xtic(1) lc rgb '#2e8b57'
unset multiplot
