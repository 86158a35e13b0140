#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test-parse.sh: what tc with q_desync.so decides and sends, on a host
# without the desync module.
#
# Bad input must fail in the parser, name the option and send nothing to
# the kernel.  Good input must reach the kernel as exactly the attributes
# the user gave; nlfake.so records the request, nlmsg.py decodes it.  The
# kernel then refuses the unknown kind (or, with the module loaded, may
# accept it): either way the answer must be the kernel's, not the parser's.

# shellcheck source=testlib.sh
. "$(cd "$(dirname "$0")" && pwd)/testlib.sh"

# bad NAME EXPECTED-MESSAGE OPTIONS...
bad()
{
	name=$1
	msg=$2
	shift 2
	run_tc qdisc add dev lo root desync "$@"
	if [ "$rc" -ne 0 ] && [ ! -s "$TMP/cap" ] &&
	   grep -qF -- "$msg" "$TMP/err"; then
		ok "$name"
	else
		echo "rc $rc, want non-zero with: $msg" > "$TMP/why"
		not_ok "$name" "$TMP/why" "$TMP/err" "$TMP/out"
		[ -s "$TMP/cap" ] && echo "# the request reached the kernel"
	fi
}

# good NAME EXPECTED-ATTRIBUTES -- TC-ARGS...
# EXPECTED-ATTRIBUTES is nlmsg.py's decoding of TCA_OPTIONS, after
# "options=nested".
good()
{
	name=$1
	want="RTM_NEWQDISC kind=desync options=nested${2:+ $2}"
	shift 3
	run_tc "$@"
	nlmsg decode "$TMP/cap" > "$TMP/got" 2>&1
	printf '%s\n' "$want" > "$TMP/want"
	# rc 2 is tc's "the kernel said no"; 1 and 255 are its parser's
	if grep -q '^desync:' "$TMP/err" || grep -q '^Usage:' "$TMP/err"; then
		echo "the parser refused it" > "$TMP/why"
	elif [ "$rc" -ne 0 ] && { [ "$rc" -ne 2 ] ||
	     ! grep -Eq '^(Error: |RTNETLINK answers: )' "$TMP/err"; }; then
		echo "rc $rc without a kernel error message" > "$TMP/why"
	elif ! cmp -s "$TMP/want" "$TMP/got"; then
		echo "sent other attributes than expected" > "$TMP/why"
	else
		ok "$name"
		return
	fi
	not_ok "$name" "$TMP/why" "$TMP/want" "$TMP/got" "$TMP/err"
}

add()
{
	name=$1
	want=$2
	shift 2
	good "$name" "$want" -- qdisc add dev lo root desync "$@"
}

# --- help -----------------------------------------------------------------

cat > "$TMP/usage" <<'EOF'
Usage: ... desync [ limit SEGMENTS ] [ group_by {dst|flow|mark|prio} ] [ groups N ]
                  [ idle TIME ] [ offset_max TIME ] [ slots N ] [ slot {K|random} ]
                  [ seed S ] [ hold_limit SEGMENTS ] [ ce_threshold TIME ]
                  [ ce_backlog SEGMENTS ] [ spread PERCENT ]
                  [ bypass_prio {P[,P...]|none} ]
                  [ slot_map {KEY:SLOT[,KEY:SLOT...]|none} ] [ sticky | nosticky ]
                  [ widen STEPS ] [ arm {always|loss|timeout|collision} ]
EOF
run_tc qdisc add dev lo root desync help
# The usage, then the version on a line of its own: the last line, checked
# on its own below.
if [ "$rc" -ne 0 ] && [ ! -s "$TMP/cap" ] &&
   sed '$d' "$TMP/err" | cmp -s "$TMP/usage" -; then
	ok "help prints the usage and sends nothing"
else
	not_ok "help prints the usage and sends nothing" "$TMP/err" "$TMP/out"
fi
# Counted where it occurs, not by lines: a copy run into the usage counts.
if [ "$(grep -o 'q_desync\.so version' "$TMP/err" | wc -l)" -eq 1 ] &&
   tail -n 1 "$TMP/err" |
   grep -qxE 'q_desync\.so version [0-9]+\.[0-9]+[^[:space:]]*'; then
	ok "help prints the plugin's version once, on its own last line"
else
	not_ok "help prints the plugin's version once, on its own last line" \
		"$TMP/err" "$TMP/out"
fi

# --- bad input: refused by the parser ---------------------------------------

bad "unknown word" 'desync: unknown option "foo"' foo
bad "unknown word after a good option" 'desync: unknown option "bogus"' \
	limit 10 bogus 3
bad "limit without a value" 'desync: "limit" needs a value' limit
bad "idle without a value" 'desync: "idle" needs a value' limit 5 idle
bad "limit abc" 'desync: illegal "limit" value "abc"' limit abc
bad "limit 12x" 'desync: illegal "limit" value "12x"' limit 12x
bad "limit -1" 'desync: illegal "limit" value "-1"' limit -1
bad "limit 2^32" 'desync: illegal "limit" value "4294967296"' limit 4294967296
bad "groups empty" 'desync: illegal "groups" value ""' groups ""
bad "limit p" 'desync: illegal "limit" value "p"' limit p
bad "limit 5pp" 'desync: illegal "limit" value "5pp"' limit 5pp
bad "limit 5P (tc prints a lower-case p)" 'desync: illegal "limit" value "5P"' \
	limit 5P
bad "limit -1p" 'desync: illegal "limit" value "-1p"' limit -1p
bad "limit 2^32 with a p" 'desync: illegal "limit" value "4294967296p"' \
	limit 4294967296p
bad "hold_limit abc" 'desync: illegal "hold_limit" value "abc"' hold_limit abc
bad "ce_backlog 64k" 'desync: illegal "ce_backlog" value "64k"' ce_backlog 64k
bad "ce_backlog -1" 'desync: illegal "ce_backlog" value "-1"' ce_backlog -1
bad "slots x" 'desync: illegal "slots" value "x"' slots x
bad "idle xyz" 'desync: illegal "idle" value "xyz"' idle xyz
bad "idle 2 hours" 'desync: illegal "idle" value "2h"' idle 2h
bad "idle -1ms" 'desync: illegal "idle" value "-1ms"' idle -1ms
bad "idle inf" 'desync: illegal "idle" value "inf"' idle inf
bad "idle 500ns rounds to 0" 'desync: illegal "idle" value "500ns"' idle 500ns
bad "offset_max 1.5us" 'desync: illegal "offset_max" value "1.5us"' offset_max 1.5us
bad "ce_threshold 999ns" 'desync: illegal "ce_threshold" value "999ns"' ce_threshold 999ns
bad "idle 2.5 (bare microseconds)" 'desync: illegal "idle" value "2.5"' idle 2.5
bad "idle 4.0001ms" 'desync: illegal "idle" value "4.0001ms"' idle 4.0001ms
bad "idle 0x10ms (hexadecimal)" 'desync: illegal "idle" value "0x10ms"' idle 0x10ms
bad "offset_max 4295s (over 2^32 us)" 'desync: illegal "offset_max" value "4295s"' offset_max 4295s
bad "spread 101" 'desync: illegal "spread" value "101"' spread 101
bad "spread -1" 'desync: illegal "spread" value "-1"' spread -1
bad "spread %" 'desync: illegal "spread" value "%"' spread %
bad "spread 25x" 'desync: illegal "spread" value "25x"' spread 25x
bad "widen without a value" 'desync: "widen" needs a value' widen
bad "widen without a value after sticky" 'desync: "widen" needs a value' \
	sticky widen
bad "widen 8 (over 7 steps)" \
	'desync: illegal "widen" value "8" (want a number of steps 0..7)' widen 8
bad "widen -1" 'desync: illegal "widen" value "-1"' widen -1
bad "widen x" 'desync: illegal "widen" value "x"' widen x
bad "widen 2^32" 'desync: illegal "widen" value "4294967296"' widen 4294967296
bad "widen 3p (steps, not segments)" 'desync: illegal "widen" value "3p"' \
	widen 3p
bad "offset_max 5000s overflows u32 us" \
	'desync: illegal "offset_max" value "5000s"' offset_max 5000s
bad "ce_threshold 1ns below tc's units" \
	'desync: illegal "ce_threshold" value "1ns"' ce_threshold 1ns
bad "group_by foo" 'desync: illegal "group_by" value "foo"' group_by foo
bad "group_by DST (names are lower case)" \
	'desync: illegal "group_by" value "DST"' group_by DST
bad "arm without a value" 'desync: "arm" needs a value' arm
bad "arm foo" 'desync: illegal "arm" value "foo"' arm foo
bad "arm 1 (a name, not a number)" 'desync: illegal "arm" value "1"' arm 1
bad "arm LOSS (names are lower case)" 'desync: illegal "arm" value "LOSS"' \
	arm LOSS
bad "arm 3 (collision by name only)" 'desync: illegal "arm" value "3"' arm 3
bad "arm collide (the whole word)" 'desync: illegal "arm" value "collide"' \
	arm collide
bad "slot x" 'desync: illegal "slot" value "x"' slot x
bad "slot -1" 'desync: illegal "slot" value "-1"' slot -1
bad "seed zz" 'desync: illegal "seed" value "zz"' seed zz
bad "seed -1" 'desync: illegal "seed" value "-1"' seed -1
bad "seed 2^64" 'desync: illegal "seed" value "18446744073709551616"' \
	seed 18446744073709551616
bad "seed 0x" 'desync: illegal "seed" value "0x"' seed 0x
bad "bypass_prio 64" 'desync: illegal "bypass_prio" value "64"' bypass_prio 64
bad "bypass_prio 1,,2" 'desync: illegal "bypass_prio" value "1,,2"' \
	bypass_prio 1,,2
bad "bypass_prio ,1" 'desync: illegal "bypass_prio" value ",1"' bypass_prio ,1
bad "bypass_prio 1," 'desync: illegal "bypass_prio" value "1,"' bypass_prio 1,
bad "bypass_prio -1" 'desync: illegal "bypass_prio" value "-1"' bypass_prio -1
bad "bypass_prio 1-3" 'desync: illegal "bypass_prio" value "1-3"' bypass_prio 1-3
bad "bypass_prio 007" 'desync: illegal "bypass_prio" value "007"' bypass_prio 007
bad "bypass_prio empty" 'desync: illegal "bypass_prio" value ""' bypass_prio ""
bad "slot_map empty" 'desync: illegal "slot_map" value ""' slot_map ""
bad "slot_map without a slot" 'desync: illegal "slot_map" value "1"' slot_map 1
bad "slot_map 1:" 'desync: illegal "slot_map" value "1:"' slot_map 1:
bad "slot_map :1" 'desync: illegal "slot_map" value ":1"' slot_map :1
bad "slot_map 1:2:3" 'desync: illegal "slot_map" value "1:2:3"' slot_map 1:2:3
bad "slot_map trailing comma" 'desync: illegal "slot_map" value "1:0,"' \
	slot_map 1:0,
bad "slot_map empty pair" 'desync: illegal "slot_map" value "1:0,,2:1"' \
	slot_map 1:0,,2:1
bad "slot_map negative slot" 'desync: illegal "slot_map" value "1:-1"' \
	slot_map 1:-1
bad "slot_map key over u32" \
	'desync: illegal "slot_map" value "4294967296:0"' slot_map 4294967296:0
bad "slot_map 65 pairs" 'desync: illegal "slot_map" value "0:0,1:0,' \
	slot_map "$(seq -s, 0 64 | sed 's/\([0-9]*\)/\1:0/g')"
bad "a later bad value sends nothing either" \
	'desync: illegal "seed" value "zz"' limit 100 idle 2ms seed zz

# --- good input: exactly the given attributes reach the kernel --------------

add "no options: an empty nest" ""
add "limit alone" "limit=100" limit 100
add "limit in hex" "limit=255" limit 0xff
add "leading zero is decimal" "limit=10" limit 010
add "limit 5p, as tc prints it" "limit=5" limit 5p
add "hold_limit in hex with a p" "hold_limit=16" hold_limit 0x10p
add "ce_backlog 0p" "ce_backlog=0" ce_backlog 0p
add "every option" \
	"limit=10000 group_by=1 groups=1024 idle=2000 offset_max=1000 slots=8 slot=3 seed=0x123456789abcdef0 hold_limit=256 ce_threshold=500 bypass_prio=0x8000000000000028 spread=40 ce_backlog=64 widen=3" \
	widen 3 spread 40% bypass_prio 3,5,63 ce_backlog 64 ce_threshold 500us hold_limit 256 \
	seed 0x123456789abcdef0 slot 3 slots 8 offset_max 1ms idle 2ms \
	groups 1024 group_by flow limit 10000
add "group_by dst" "group_by=0" group_by dst
add "group_by flow" "group_by=1" group_by flow
add "group_by mark" "group_by=2" group_by mark
add "group_by prio" "group_by=3" group_by prio
add "slot random" "slot=4294967295" slot random
add "slot 0" "slot=0" slot 0
add "idle 1s" "idle=1000000" idle 1s
add "idle 500us" "idle=500" idle 500us
add "idle 250 (bare number: microseconds)" "idle=250" idle 250
add "idle 1.5ms" "idle=1500" idle 1.5ms
# A decimal fraction of a unit is rounded, not cut after the multiply.
add "offset_max 4.1ms" "offset_max=4100" offset_max 4.1ms
add "idle 2.01ms, as tc prints it" "idle=2010" idle 2.01ms
add "ce_threshold 0.031942s" "ce_threshold=31942" ce_threshold 0.031942s
add "idle 1000ns" "idle=1" idle 1000ns
add "idle 2MS (units in any case, as tc's)" "idle=2000" idle 2MS
add "offset_max 4294s (largest whole seconds)" "offset_max=4294000000" \
	offset_max 4294s
add "ce_threshold 0 (off)" "ce_threshold=0" ce_threshold 0
add "ce_backlog 0 (off)" "ce_backlog=0" ce_backlog 0
add "spread 0 (a fixed window)" "spread=0" spread 0
add "spread 100%" "spread=100" spread 100%
add "sticky takes no value" "sticky=1" sticky
add "nosticky takes no value" "sticky=0" nosticky
add "the last of nosticky and sticky wins" "sticky=1" nosticky sticky
add "widen 0 (a fixed window)" "widen=0" widen 0
add "widen 7 (the most steps)" "widen=7" widen 7
add "widen in hex" "widen=5" widen 0x5
add "widen after sticky" "sticky=1 widen=2" sticky widen 2
good "change of widen alone" "widen=1" -- \
	qdisc change dev lo root desync widen 1
add "arm always" "arm=0" arm always
add "arm loss" "arm=1" arm loss
add "arm timeout" "arm=2" arm timeout
add "arm collision" "arm=3" arm collision
add "arm after widen" "widen=3 arm=1" widen 3 arm loss
add "the last of two arms wins" "arm=2" arm loss arm timeout
good "change of arm alone" "arm=1" -- \
	qdisc change dev lo root desync arm loss
good "change of arm to collision alone" "arm=3" -- \
	qdisc change dev lo root desync arm collision
add "nosticky between valued options" "idle=500 offset_max=2000 sticky=0" \
	idle 500us nosticky offset_max 2ms
add "seed decimal u64 max" "seed=0xffffffffffffffff" seed 18446744073709551615
add "seed 0" "seed=0x0" seed 0
add "bypass_prio none" "bypass_prio=0x0" bypass_prio none
add "bypass_prio 0" "bypass_prio=0x1" bypass_prio 0
add "bypass_prio 63" "bypass_prio=0x8000000000000000" bypass_prio 63
add "bypass_prio repeats are harmless" "bypass_prio=0x6" bypass_prio 2,1,2
add "a repeated option sends its last value once" "limit=20" \
	limit 10 limit 20
add "slot_map two marks" "group_by=2 slots=4 slot_map=1:0,2:3" \
	group_by mark slots 4 slot_map 1:0,2:3
add "slot_map hex mark" "slot_map=16:1" slot_map 0x10:1
add "slot_map none sends an empty map" "slot_map=" slot_map none
add "slot_map 64 pairs" "slot_map=$(seq -s, 0 63 | sed 's/\([0-9]*\)/\1:1/g')" \
	slot_map "$(seq -s, 0 63 | sed 's/\([0-9]*\)/\1:1/g')"
add "slot_map repeated keys go to the kernel to judge" "slot_map=1:0,1:1" \
	slot_map 1:0,1:1
good "change of the slot_map alone" "slot_map=5:2" -- \
	qdisc change dev lo root desync slot_map 5:2
good "change sends only what it is given" "idle=3000" -- \
	qdisc change dev lo root desync idle 3ms
good "replace sends only what it is given" "seed=0x7" -- \
	qdisc replace dev lo root desync seed 7

# The kernel's answer (unknown kind on this host) comes through as is
run_tc qdisc add dev lo root desync limit 100
if [ "$rc" -eq 0 ] || grep -Eq "^(Error: |RTNETLINK answers: )" "$TMP/err"; then
	ok "valid input gets the kernel's answer"
else
	not_ok "valid input gets the kernel's answer" "$TMP/err"
fi

finish
