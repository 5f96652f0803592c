# loggp_cdf.gp - distribution of the round trip of one message size: the
# fraction of round trips at most x µs, from the quantiles loggp and
# mpi_loggp print (1 % .. 99.9 % and the maximum), per impl.
#   gnuplot -e "dir='results/DATE'; nimpl=N" scripts/report/loggp_cdf.gp
#   (reads loggp_cdf.dat: fraction, then N impls' round-trip quantiles, µs)
set terminal pngcairo size 800,500 font ",10"
set output dir.'/loggp_cdf.png'
set datafile missing '-'
set key bottom right autotitle columnheader noenhanced
set logscale x
set xlabel 'round trip (µs, log scale)'
set ylabel 'fraction of round trips'
set yrange [0:1.02]
set title 'Round-trip distribution (per-message timestamps)'
set grid
# gnuplot colours repeat after 8: more of them for the per-sender kinds
set linetype 9 lc rgb '#8b0000'
set linetype 10 lc rgb '#6b8e23'
set linetype 11 lc rgb '#505050'
plot for [i=2:nimpl+1] dir.'/loggp_cdf.dat' using i:1 with steps lw 2
