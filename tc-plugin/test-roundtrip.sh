#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test-roundtrip.sh: the options "tc qdisc show" prints for a desync qdisc
# read back through "tc qdisc add/change ... desync" as the same values,
# on a host without the desync module.
#
# Each case parses the options given (nlfake.so records the request),
# answers a qdisc dump with exactly the attributes sent, as the kernel
# dumps them (nlmsg.py), and parses the printed options again.  The text
# printed must be the one expected, and the second request must carry the
# same attributes as the first.

# shellcheck source=testlib.sh
. "$(cd "$(dirname "$0")" && pwd)/testlib.sh"

HEAD="qdisc desync 8001: dev lo root"
NEST="RTM_NEWQDISC kind=desync options=nested"

# sent FILE: the request just recorded, decoded; false if the parser
# refused it
sent()
{
	nlmsg decode "$TMP/cap" > "$1" 2>&1
	! grep -q '^desync:' "$TMP/err" && ! grep -q '^Usage:' "$TMP/err" &&
		grep -q "^$NEST" "$1"
}

# trip NAME EXPECTED-TEXT OPTIONS...: EXPECTED-TEXT is what tc prints
# after the qdisc's handle and parent, without the trailing blank.
trip()
{
	name=$1
	printf '%s\n' "$HEAD $2 " > "$TMP/want"
	shift 2

	rm -f "$TMP/dump"
	run_tc qdisc add dev lo root desync "$@"
	if ! sent "$TMP/sent"; then
		echo "the parser refused the options given" > "$TMP/why"
		not_ok "$name" "$TMP/why" "$TMP/err" "$TMP/sent"
		return
	fi

	# shellcheck disable=SC2046 # one KEY=VALUE per word
	nlmsg qdisc "$TMP/dump" $(sed "s/^$NEST//" "$TMP/sent")
	run_tc qdisc show
	sed -n 1p "$TMP/out" > "$TMP/got"
	rm -f "$TMP/dump"
	if [ "$rc" -ne 0 ] || [ -s "$TMP/err" ] ||
	   ! cmp -s "$TMP/want" "$TMP/got"; then
		echo "printed other text than expected" > "$TMP/why"
		not_ok "$name" "$TMP/why" "$TMP/want" "$TMP/got" "$TMP/err"
		return
	fi

	# What tc printed, as words for the command line
	text=$(sed "s/^$HEAD //" "$TMP/got")
	set -f
	# shellcheck disable=SC2086 # split as the shell splits what is pasted
	set -- $text
	set +f
	run_tc qdisc change dev lo root desync "$@"
	if ! sent "$TMP/again"; then
		echo "the parser refused the printed text: $text" > "$TMP/why"
		not_ok "$name" "$TMP/why" "$TMP/err"
	elif ! cmp -s "$TMP/sent" "$TMP/again"; then
		echo "the printed text sent other attributes" > "$TMP/why"
		not_ok "$name" "$TMP/why" "$TMP/sent" "$TMP/again"
	else
		ok "$name"
	fi
}

# --- times: exact, in the largest unit that holds them whole ---------------

trip "999999us stays 999999us" "idle 999999us" idle 999999us
trip "1234us stays 1234us" "idle 1234us" idle 1234us
trip "4ms" "offset_max 4ms" offset_max 4ms
trip "4000us prints as 4ms" "offset_max 4ms" offset_max 4000us
trip "1s" "ce_threshold 1s" ce_threshold 1s
trip "1000ms prints as 1s" "ce_threshold 1s" ce_threshold 1000ms
trip "2000000us prints as 2s" "idle 2s" idle 2000000us
trip "1001ms stays 1001ms" "idle 1001ms" idle 1001ms
trip "1.5ms prints as 1500us" "idle 1500us" idle 1.5ms
trip "4.1ms prints as 4100us" "offset_max 4100us" offset_max 4.1ms
trip "a bare number is microseconds" "idle 250us" idle 250
trip "0 prints as 0us" "ce_threshold 0us" ce_threshold 0
trip "1us, the smallest step" "offset_max 1us" offset_max 1us
trip "idle 10s, the kernel's largest" "idle 10s" idle 10s
trip "idle 9999999us, just under it" "idle 9999999us" idle 9999999us
trip "offset_max 999999us, just under 1s" "offset_max 999999us" \
	offset_max 999999us
trip "ce_threshold 1000001us, just over 1s" "ce_threshold 1000001us" \
	ce_threshold 1000001us
trip "largest time of the u32 attribute" "idle 4294967295us" idle 4294967295us
trip "largest whole milliseconds" "offset_max 4294967ms" offset_max 4294967ms
trip "largest whole seconds" "offset_max 4294s" offset_max 4294s

# --- segment counts: printed with a p, read back with it --------------------

trip "limit 5" "limit 5p" limit 5
trip "limit 5p" "limit 5p" limit 5p
trip "limit 1, the kernel's smallest" "limit 1p" limit 1
trip "limit 1000000, the kernel's largest" "limit 1000000p" limit 1000000
trip "limit in hex" "limit 255p" limit 0xff
trip "largest limit of the u32 attribute" "limit 4294967295p" limit 4294967295
trip "hold_limit 1024" "hold_limit 1024p" hold_limit 1024
trip "hold_limit u32 max" "hold_limit 4294967295p" hold_limit 4294967295p
trip "ce_backlog 0 (off)" "ce_backlog 0p" ce_backlog 0
trip "ce_backlog 1000000p" "ce_backlog 1000000p" ce_backlog 1000000p

# --- everything else --------------------------------------------------------

trip "spread 0" "spread 0%" spread 0
trip "spread 100%" "spread 100%" spread 100%
trip "largest seed, slot random" "slot random seed 18446744073709551615" \
	slot random seed 18446744073709551615
trip "no bypass priorities, empty slot_map, nosticky" \
	"bypass_prio none slot_map none nosticky" \
	bypass_prio none slot_map none nosticky
trip "widen 0 (a fixed window)" "widen 0" widen 0
trip "widen 7, the largest" "widen 7" widen 7
trip "widen in hex" "nosticky widen 3" nosticky widen 0x3
trip "arm always" "arm always" arm always
trip "arm loss" "arm loss" arm loss
trip "arm timeout after widen" "widen 2 arm timeout" arm timeout widen 2
trip "arm collision after nosticky" "nosticky arm collision" arm collision nosticky
trip "every option" \
	"limit 10000p group_by flow groups 1024 idle 2ms offset_max 999999us slots 8 slot 3 seed 1311768467463790320 hold_limit 256p ce_threshold 1234us ce_backlog 44p spread 40% bypass_prio 0,3,5,63 slot_map 1:0,16:3 sticky widen 5 arm loss" \
	arm loss widen 5 sticky slot_map 1:0,0x10:3 bypass_prio 3,5,63,0 spread 40% \
	ce_backlog 44p ce_threshold 1234us hold_limit 256 \
	seed 0x123456789abcdef0 slot 3 slots 8 offset_max 999999us idle 2ms \
	groups 1024 group_by flow limit 10000

finish
