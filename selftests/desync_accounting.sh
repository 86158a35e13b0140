#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Nothing lost uncounted: every UDP packet the sender's socket sent through
# desync either arrives or is counted as dropped somewhere (the qdiscs, the
# veth link, the receiving socket), exactly; TCP delivers every byte it
# sent.  Both with desync as the root and under a slow parent.
#
# Usage: desync_accounting.sh      (root, in the test VM; see selftests/README.md)

ALL_TESTS="
	udp_accounting_root
	udp_accounting_tbf
	tcp_bytes_root
	tcp_bytes_tbf
"
RETRY_TESTS=

# shellcheck source=selftests/lib.sh
source "$(dirname "$(readlink -f "$0")")/lib.sh"

# A device counter, as ip -s link shows it.
link_stat()	# NS DEV COUNTER
{
	ip netns exec "$1" cat "/sys/class/net/$2/statistics/$3"
}

# A counter of /proc/net/snmp (e.g. Udp InErrors) in a namespace.
snmp_get()	# NS PROTO FIELD
{
	ip netns exec "$1" cat /proc/net/snmp | awk -v p="$2:" -v f="$3" '
		$1 == p && !hdr { for (i = 2; i <= NF; i++) col[$i] = i; hdr = 1; next }
		$1 == p && hdr { print $col[f] + 0; exit }'
}

# Every counter a lost packet could hide in, as "NAME=VALUE ..." for the
# device pair and both namespaces.
drop_counters()
{
	echo "dev_tx_dropped=$(link_stat "$NS_A" "$DEV" tx_dropped)" \
	     "dev_tx_packets=$(link_stat "$NS_A" "$DEV" tx_packets)" \
	     "peer_rx_dropped=$(link_stat "$NS_B" "$PEER" rx_dropped)" \
	     "peer_rx_packets=$(link_stat "$NS_B" "$PEER" rx_packets)" \
	     "udp_in_errors=$(snmp_get "$NS_B" Udp InErrors)" \
	     "udp_rcvbuf_errors=$(snmp_get "$NS_B" Udp RcvbufErrors)" \
	     "udp_sndbuf_errors=$(snmp_get "$NS_A" Udp SndbufErrors)" \
	     "ip_in_discards=$(snmp_get "$NS_B" Ip InDiscards)"
}

# Value of NAME in a drop_counters line.
counter()	# LINE NAME
{
	local kv

	for kv in $1; do
		[ "${kv%%=*}" == "$2" ] && { echo "${kv#*=}"; return; }
	done
	echo "?"
}

# Counters after minus before, for one NAME.
delta()	# BEFORE AFTER NAME
{
	local a b

	a=$(counter "$1" "$3")
	b=$(counter "$2" "$3")
	if is_int "$a" && is_int "$b"; then
		echo $((b - a))
	else
		echo "?"
	fi
}

# Blasts N datagrams of 1000 bytes back to back at the qdisc on $DEV and
# checks that sent = received + every counted drop.  A send buffer far
# above the queue keeps the socket from blocking, so the qdisc, not the
# socket, decides what is dropped.
udp_blast()	# N ROOT_KIND
{
	local n=$1 root=$2 out=$TMPD/blast before after sent errors rx qdrops cdrops
	local tx_drop rx_drop in_err

	before=$(drop_counters)
	recv_start "$out" -l 0.0.0.0 -q 2s -t 120s
	psend -d "$B4" -n 1 -k "$n" -s 1000 -b 64000000 > "$out.tx"
	check_drained
	# The receiver ends after 2s of silence, having read its socket dry.
	recv_wait
	snap
	after=$(drop_counters)

	read -r sent errors <<< "$(awk '$1 == "sent" { print $7, $9 }' "$out.tx")"
	rx=$(( $(sfield "$out" pkts) + $(sfield "$out" bad) + $(sfield "$out" empty) ))
	# A child's drops are counted by its parent as well: the root's
	# counter holds them all.
	qdrops=${SNAP[$root:drops]}
	cdrops=${SNAP[desync:drops]}
	tx_drop=$(delta "$before" "$after" dev_tx_dropped)
	rx_drop=$(delta "$before" "$after" peer_rx_dropped)
	in_err=$(delta "$before" "$after" udp_in_errors)
	note "sent $sent (errors $errors), received $rx, $root drops $qdrops" \
	     "(desync $cdrops, drop_overlimit ${SNAP[desync:drop_overlimit]})," \
	     "veth tx_dropped $tx_drop, peer rx_dropped $rx_drop, UDP InErrors $in_err" \
	     "(RcvbufErrors $(delta "$before" "$after" udp_rcvbuf_errors))," \
	     "sender SndbufErrors $(delta "$before" "$after" udp_sndbuf_errors)," \
	     "Ip InDiscards $(delta "$before" "$after" ip_in_discards)," \
	     "veth tx_packets $(delta "$before" "$after" dev_tx_packets)," \
	     "peer rx_packets $(delta "$before" "$after" peer_rx_packets)"
	assert_eq "datagrams the sender's socket sent" "$sent" "$n"
	assert_eq "send errors" "$errors" 0
	assert_cmp "desync drops within the root's" "$cdrops" -le "$qdrops"
	# veth counts a packet its peer's backlog refused as its own tx drop
	# and the peer as an rx drop: one packet, counted once here.
	assert_cmp "peer rx_dropped within veth tx_dropped" "$rx_drop" -le "$tx_drop"
	assert_eq "sent - (received + qdisc drops + veth drops + socket drops)" \
		"$((sent - rx - qdrops - tx_drop - in_err))" 0
	# What left the qdisc reached the wire or was counted there.
	assert_eq "qdisc packets = veth tx_packets + tx_dropped" "${SNAP[$root:packets]}" \
		"$(($(delta "$before" "$after" dev_tx_packets) + tx_drop))"
}

udp_accounting_root()
{
	tcok qdisc add dev "$DEV" root handle 1: desync arm always || return
	udp_blast 5000 desync
}

udp_accounting_tbf()
{
	# 1mbit drains about 120 packets a second, far less than even a
	# loaded emulated sender sends: a blast of 1000 overflows a limit of
	# 200, and the rest drains in a few seconds.
	tcok qdisc add dev "$DEV" root handle 1: tbf rate 1mbit burst 10kb latency 50ms &&
		tcok qdisc add dev "$DEV" parent 1: handle 10: desync arm always limit 200 \
			hold_limit 200 ||
		return
	udp_blast 1000 tbf
	assert_cmp "desync drop_overlimit under the slow parent" \
		"${SNAP[desync:drop_overlimit]}" -gt 0
}

# Bytes written by tcp-send are all read by tcp-sink.
tcp_bytes()	# BYTES
{
	local out=$TMPD/tcp pid rx tx retrans0 retrans1

	retrans0=$(snmp_get "$NS_A" Tcp RetransSegs)
	rm -f "$TMPD/ready"
	timeout 90 ip netns exec "$NS_B" "$PROBE" tcp-sink -l 0.0.0.0 -p 9004 -t 80s \
		-r "$TMPD/ready" > "$out" 2>&1 &
	pid=$!
	defer proc_stop "$pid"
	wait_for_file "$TMPD/ready" 100 || fail "tcp-sink did not start"
	timeout 90 ip netns exec "$NS_A" "$PROBE" tcp-send -d "$B4" -p 9004 -N "$1" -t 80s \
		> "$out.send" 2>&1
	check_err $? "tcp-send failed: $(cat "$out.send")"
	wait "$pid"
	check_err $? "tcp-sink failed: $(cat "$out")"
	retrans1=$(snmp_get "$NS_A" Tcp RetransSegs)
	tx=$(awk '$1 == "tcp" { print $3 }' "$out.send")
	rx=$(awk '$1 == "tcp" { print $3 }' "$out")
	snap
	note "TCP sent $tx bytes, received $rx, retransmitted segments $((retrans1 - retrans0))," \
	     "desync drops ${SNAP[desync:drops]} held ${SNAP[desync:held]} bursts ${SNAP[desync:bursts]}"
	assert_eq "bytes sent" "$tx" "$1"
	assert_eq "bytes received" "$rx" "$1"
}

tcp_bytes_root()
{
	tcok qdisc add dev "$DEV" root handle 1: desync arm always || return
	tcp_bytes 5000000
}

tcp_bytes_tbf()
{
	tcok qdisc add dev "$DEV" root handle 1: tbf rate 10mbit burst 10kb latency 50ms &&
		tcok qdisc add dev "$DEV" parent 1: handle 10: desync arm always || return
	tcp_bytes 4000000
}

lib_init
setup_topology || bail_out "cannot create the test namespaces"
tests_run
