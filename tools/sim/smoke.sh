#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: smoke.sh
#
# A few seconds of desync-sim that check behaviour, not just that it
# runs: a shallow-buffered incast collapses into drops and retransmit
# timeouts under pfifo, desync's holds take place and all bytes arrive,
# the JSON object is valid, and bad options exit 2 with one line.

set -uo pipefail
SIM_DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=tools/vm/lib.sh
source "$SIM_DIR/../vm/lib.sh"

"$SIM_DIR/build.sh" || die "cannot build desync-sim"
SIM=$SIM_DIR/desync-sim
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
pass=0
fail=0

ok()
{
	echo "ok - $*"
	pass=$((pass + 1))
}

not_ok()
{
	echo "not ok - $*"
	fail=$((fail + 1))
}

# Field VALUE of the one-object JSON file $1.
field()
{
	/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

# 32 workers x 256 kB into a 64 kB port: far over the buffer at once.
INCAST=(--scenario=incast --hosts=32 --hostsPerTor=16 --buffer=64000 --ecnK=20000
	--msg=256KiB --iters=2 --seed=3)

if "$SIM" "${INCAST[@]}" --hostQdisc=pfifo --json="$OUT/pfifo.json" >/dev/null &&
   /usr/bin/python3 -m json.tool "$OUT/pfifo.json" >/dev/null; then
	ok "pfifo incast writes a valid JSON object"
else
	not_ok "pfifo incast writes a valid JSON object"
fi

if [ -s "$OUT/pfifo.json" ] &&
   [ "$(field "$OUT/pfifo.json" drops)" -gt 0 ] &&
   [ "$(field "$OUT/pfifo.json" rtos)" -gt 0 ]; then
	ok "pfifo incast on a shallow buffer drops and times out"
else
	not_ok "pfifo incast on a shallow buffer drops and times out"
fi

if "$SIM" "${INCAST[@]}" --hostQdisc=desync --desync="spread 0 offset_max 4ms" \
	--json="$OUT/desync.json" >/dev/null &&
   [ "$(field "$OUT/desync.json" valid)" = True ] &&
   [ "$(field "$OUT/desync.json" bursts)" -ge 32 ] &&
   [ "$(field "$OUT/desync.json" held)" -gt 0 ]; then
	ok "desync holds burst starts and delivers every byte"
else
	not_ok "desync holds burst starts and delivers every byte"
fi

if [ -s "$OUT/desync.json" ] && [ -s "$OUT/pfifo.json" ] &&
   [ "$(field "$OUT/desync.json" drops)" -lt "$(field "$OUT/pfifo.json" drops)" ]; then
	ok "desync with a fixed window over the drain time drops less than pfifo"
else
	not_ok "desync with a fixed window over the drain time drops less than pfifo"
fi

# A new connection per message: every byte still arrives, and the
# handshakes, which carry no payload, are never held.
if "$SIM" "${INCAST[@]}" --conn=message --hostQdisc=desync \
	--json="$OUT/permsg.json" >/dev/null &&
   [ "$(field "$OUT/permsg.json" valid)" = True ] &&
   [ "$(field "$OUT/permsg.json" bursts)" -ge 64 ] &&
   [ "$(field "$OUT/permsg.json" rtos)" -lt "$(field "$OUT/pfifo.json" rtos)" ]; then
	ok "one connection per message: all bytes arrive, fewer timeouts than pfifo"
else
	not_ok "one connection per message: all bytes arrive, fewer timeouts than pfifo"
fi

# ns-3's DCTCP let ssthresh fall below one segment; with nothing in
# flight this sender then stalled for good in its second iteration.
if "$SIM" --scenario=burst --hosts=100 --hostsPerTor=100 --spines=1 \
	--hostRate=10Gbps --fabricRate=100Gbps --buffer=2MB --ecnK=97500 \
	--msg=25000 --compute=5ms --iters=3 --hostQdisc=desync --seed=2 \
	--timeLimit=1s --json="$OUT/floor.json" >/dev/null &&
   [ "$(field "$OUT/floor.json" valid)" = True ]; then
	ok "DCTCP keeps two segments of ssthresh: the burst that stalled completes"
else
	not_ok "DCTCP keeps two segments of ssthresh: the burst that stalled completes"
fi

# Each bad command line: exit 2, exactly one line on stderr.
bad_opt()
{
	local err rc

	err=$("$SIM" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ]; then
		ok "bad option $* exits 2 with one line"
	else
		not_ok "bad option $* exits 2 with one line (rc $rc: $err)"
	fi
}

bad_opt --nosuch=1
bad_opt --scenario=mesh
bad_opt --hostRate=fast
bad_opt --desync="offset_max"
bad_opt --desync="groups 3"
bad_opt --conn=pooled

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
