#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: plot.sh RESULTS_DIR OUT_DIR
#
# Draws, per scenario, the CDF of iteration times over all valid runs and
# the bottleneck queue over a window of the first repetition (the
# configurations in QUEUE_CONFIGS, default all, one panel each, so the
# bursts stay readable), from the data files analyze.py wrote.

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
		cdf+=("'$f' using 1:2 with steps lw 2 title '$cfg'")
		case " ${QUEUE_CONFIGS:-$cfg} " in
		*" $cfg "*) q+=("$cfg") ;;
		esac
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
	{
		echo "set terminal pngcairo size 1000,$((170 * ${#q[@]} + 60)) noenhanced"
		echo "set output '$out/queue-$sc.png'"
		echo "set multiplot layout ${#q[@]},1 title 'Bottleneck queue (switch port toward h0), $sc, repetition 1, ${QUEUE_WINDOW:-2000:4000} ms'"
		echo "set xrange [${QUEUE_WINDOW:-2000:4000}]"
		echo "set yrange [0:110]"
		echo "set ylabel 'kB'"
		echo "set grid"
		for cfg in "${q[@]}"; do
			echo "plot '$pd/queue-$sc-$cfg.dat' using 1:2 with lines lw 1.5 title '$cfg'"
		done
		echo "unset multiplot"
	} | gnuplot
done
