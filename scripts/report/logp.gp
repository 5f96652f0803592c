# logp.gp - LogP parameters and round trip per claim algorithm and per-sender
# channel kind (and MPICH's g with replies and 4-byte RTT) as grouped bars: the
# paper's Table 1 as a picture.
#   gnuplot -e "dir='results/DATE'; nalg=N" scripts/report/logp.gp
#   (reads logp.dat: N algorithms and kinds, then MPICH)
set terminal pngcairo size 900,500 font ",10"
set output dir.'/logp.png'
set datafile missing '-'
# gnuplot's colours repeat after 8: more of them, for the channel kinds' columns
set linetype 9 lc rgb '#8b0000'
set linetype 10 lc rgb '#6b8e23'
set linetype 11 lc rgb '#505050'
set linetype 12 lc rgb '#008b8b'
set linetype 13 lc rgb '#ff69b4'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key top left autotitle columnheader
set ylabel 'microseconds'
set title 'LogP parameters and round trip (Table 1)'
set grid ytics
set xzeroaxis
plot for [i=2:nalg+2] dir.'/logp.dat' using i:xtic(1)
