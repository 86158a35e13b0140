#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: plot.sh RESULTS_DIR OUT_DIR
#
# Draws, per scenario, the CDF of iteration times over all valid runs and
# the bottleneck queue over time in the first repetition, one line per
# configuration, from the data files analyze.py wrote.

set -euo pipefail

res=$1
out=$2
pd=$res/plotdata
mkdir -p "$out"

for sc in $(ls "$pd" | sed -n 's/^cdf-\([^-]*\)-.*\.dat$/\1/p' | sort -u); do
	cdf=() q=()
	for f in "$pd"/cdf-"$sc"-*.dat; do
		cfg=${f#"$pd/cdf-$sc-"}
		cfg=${cfg%.dat}
		cdf+=("'$f' using 1:2 with steps lw 2 title '${cfg//_/\\_}'")
		q+=("'$pd/queue-$sc-$cfg.dat' using 1:2 with lines title '${cfg//_/\\_}'")
	done
	gnuplot <<-EOF
	set terminal pngcairo size 900,540 noenhanced
	set output '$out/iter-cdf-$sc.png'
	set title 'Iteration time, $sc (all valid runs after warm-up)'
	set xlabel 'iteration time (ms)'
	set ylabel 'CDF'
	set key bottom right
	set grid
	plot $(IFS=,; echo "${cdf[*]}")
	EOF
	gnuplot <<-EOF
	set terminal pngcairo size 1100,540 noenhanced
	set output '$out/queue-$sc.png'
	set title 'Bottleneck queue (switch port toward h0), $sc, repetition 1'
	set xlabel 'time (ms)'
	set ylabel 'backlog (kB)'
	set key top right
	set grid
	plot $(IFS=,; echo "${q[*]}")
	EOF
done
