# bench/chart.gp - the chart of bench/run.sh: four panels from the .dat
# files it writes into the directory "dir"; "version" names the server,
# "nselect" and "ninsert" count the competitors of the two pgbench panels
# (gnuplot -e "dir='...'; version='PostgreSQL 18.1'; nselect=6; ninsert=4").
set terminal pngcairo size 1400,1050 font "DejaVu Sans,10" noenhanced
set output dir . '/chart.png'
set datafile separator "\t"
set key autotitle columnhead
set multiplot layout 2,2 title "snowflake_nextval() side by side (" . version . ", one run, medians)" font ",13"

set style data histogram
set style fill solid 0.8 border -1
set boxwidth 0.7
set grid ytics
set xtics rotate by -30 left font ",9"
set logscale y
set key off
set lmargin 10
set rmargin 12
set bmargin 10

set title "Bulk: one statement, time per ID (ns, log scale; lower is better)"
plot dir . '/bulk.dat' using 2:xtic(1) linecolor rgb "#4477aa"

set title "Instructions per ID, callgrind (log scale; lower is better)"
plot dir . '/instructions.dat' using 2:xtic(1) linecolor rgb "#228833"

unset logscale y
set bmargin 4
set style data linespoints
set xtics norotate font ",10" ("1" 1, "2" 2, "4" 4, "8" 8)
set logscale x 2
set xrange [0.85:9.5]
set xlabel "clients"
set ylabel "transactions per second"
set yrange [0:*]
set key bottom right font ",9" box opaque

set title "pgbench -M prepared: SELECT f()"
plot for [i=2:nselect+1] dir . '/select.dat' using 1:i linewidth 2 pointtype 7

set title "pgbench: single-row INSERT into the loaded table"
plot for [i=2:ninsert+1] dir . '/insert.dat' using 1:i linewidth 2 pointtype 7

unset multiplot
