#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: callgrind.sh [--packets N] [SCENARIO:GROUPS ...]
#
# Counts the instructions the desync core spends per packet, with
# core-cost.c under callgrind, and prints one line per measurement:
#
#   <scenario> <groups> <instructions per packet>
#
# SCENARIO is steady (packets join a running burst) or burst (every packet
# starts a burst and is held, GROUPS held at once).  Without arguments it
# measures the set the documentation reports.  Counts are exact for a
# given compiler, so a change of the core shows as a change of the count.

set -euo pipefail

HERE=$(dirname "$(readlink -f "$0")")
REPO=$(dirname "$(dirname "$(dirname "$HERE")")")
ME=${0##*/}

packets=50000
if [ "${1:-}" = --packets ]; then
	packets=${2:?--packets needs a number}
	shift 2
fi
if [ $# -eq 0 ]; then
	set -- steady:1 steady:1024 steady:65536 \
		burst:1 burst:16 burst:256 burst:1024 burst:4096 burst:65536
fi

if ! command -v valgrind > /dev/null; then
	[ "$(id -u)" -eq 0 ] || { echo "$ME: valgrind is not installed" >&2; exit 1; }
	echo "$ME: installing valgrind" >&2
	apt-get install -y -q valgrind > /dev/null ||
		{ apt-get update -q > /dev/null && apt-get install -y -q valgrind > /dev/null; }
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# -O2 as the kernel builds the module; the count belongs to this compiler.
${CC:-gcc} -O2 -g -Wall -Wextra -Werror -I"$REPO/sch_desync" \
	-o "$tmp/core-cost" "$HERE/core-cost.c"

for arg; do
	scenario=${arg%%:*}
	groups=${arg#*:}
	# Collect only inside the two measured functions: neither setup nor
	# the driving loop count.
	valgrind --tool=callgrind --collect-atstart=no \
		--toggle-collect=meas_enqueue --toggle-collect=meas_dequeue \
		--callgrind-out-file="$tmp/out" -q \
		"$tmp/core-cost" "$scenario" "$groups" "$packets" > "$tmp/stdout"
	# scenario burst groups 16 packets 50003 bursts ... (may overshoot)
	measured=$(sed -n 's/.* packets \([0-9]*\) .*/\1/p' "$tmp/stdout")
	ir=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$tmp/out")
	if [ -z "$measured" ] || [ -z "$ir" ]; then
		echo "$ME: no count for $arg" >&2
		exit 1
	fi
	awk -v s="$scenario" -v g="$groups" -v ir="$ir" -v n="$measured" \
		'BEGIN { printf "%s %s %.1f\n", s, g, ir / n }'
done
