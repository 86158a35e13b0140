# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The emulated cluster, sourced by the scripts that run inside the test VM.
#
# Topology: NHOSTS host namespaces h0..h<N-1>, each with one link (veth) to
# the switch namespace "sw", where the switch ends are bridged.  Host i has
# address 10.0.0.<i+1>.
#
#   host egress   tbf at HOST_RATE (the NIC's line rate) with the qdisc
#                 under test as its child, handle 10:
#   switch port   tbf at PORT_RATE with a RED child, handle 2:, in the
#                 shape of a shallow-buffer datacenter switch port:
#                 tail drop at BUF bytes, step ECN marking at K bytes (RED
#                 min = max = K, probability 1, ecn), as the kernel's
#                 sch_red selftest builds it.  The port toward the hot
#                 receiver (h0 by default) is the bottleneck.
#
# Segmentation offloads are off everywhere, so every queue holds MTU-sized
# packets as a switch would, not 64 kB super-packets.

: "${NHOSTS:=17}"
: "${HOST_RATE:=20mbit}"
: "${PORT_RATE:=20mbit}"
: "${BUF:=100000}"		# bytes, tail drop
: "${K:=30000}"			# bytes, ECN marking threshold
: "${TBF_BURST:=9000}"	# bytes, host NICs: 3.6 ms at 20 Mbit
# The switch port's bucket covers the stalls of an emulated CPU that shares
# the machine: with less it drained at ~80% of its rate while it had a
# queue, and the run would measure the emulator.
: "${PORT_BURST:=30000}"	# bytes: 12 ms at 20 Mbit
: "${MTU:=1500}"

host_ip()
{
	echo "10.0.0.$(($1 + 1))"
}

nsx()
{
	local ns=$1

	shift
	ip netns exec "$ns" "$@"
}

# Turn a rate as tc writes it (200mbit, 1gbit) into bits per second.
rate_bps()
{
	local r=${1,,} n

	n=${r%%[a-z]*}
	case ${r#"$n"} in
	gbit) echo $((n * 1000000000)) ;;
	mbit) echo $((n * 1000000)) ;;
	kbit) echo $((n * 1000)) ;;
	bit|'') echo "$n" ;;
	*) echo "bad rate $1" >&2; return 1 ;;
	esac
}

switch_port_cmds()
{
	local i=$1 burst

	# RED's burst sets its averaging weight; the smallest tc accepts
	# gives W = 1/2, close enough to the instantaneous queue.
	burst=$((K / 1500 + 1))
	echo "qdisc del dev p$i root"
	echo "qdisc add dev p$i root handle 1: tbf rate $PORT_RATE burst $PORT_BURST limit $BUF"
	echo "qdisc add dev p$i parent 1:1 handle 2: red limit $BUF min $K max $((K + 1))" \
		"avpkt 1500 burst $burst probability 1.0 bandwidth $PORT_RATE ecn"
}

# Every exec costs a fraction of a second under emulation: configure each
# namespace with one batch, and read counters through a process that lives
# in it (/proc/PID/net is that process's namespace) without any exec.
declare -a KEEPER

host_up()
{
	local i=$1

	ip netns add "h$i"
	# Offloads are device features that survive the move.
	ip link add "c$i" mtu "$MTU" type veth peer name "p$i" mtu "$MTU"
	ethtool -K "c$i" tso off gso off gro off >/dev/null
	ethtool -K "p$i" tso off gso off gro off >/dev/null
	ip link set "c$i" netns "h$i" name eth0
	ip link set "p$i" netns sw
	ip -n sw link set "p$i" master br0 up
	ip -n "h$i" -b - <<-EOF
	link set lo up
	addr add $(host_ip "$i")/24 dev eth0
	link set eth0 up
	EOF
	# Saved metrics would carry one run's ssthresh into the next.
	ip netns exec "h$i" sysctl -qw net.ipv4.tcp_no_metrics_save=1 \
		net.ipv4.tcp_ecn=1
}

cluster_up()
{
	local i pids=()

	modprobe tcp_dctcp
	sysctl -qw net.ipv4.tcp_allowed_congestion_control="reno cubic dctcp"
	ip netns add sw
	ip -n sw link set lo up
	ip -n sw link add br0 type bridge
	ip -n sw link set br0 up
	# Hosts come up in parallel: the time goes into exec latency.
	for ((i = 0; i < NHOSTS; i++)); do
		host_up "$i" &
		pids+=($!)
	done
	wait "${pids[@]}"
	for ((i = 0; i < NHOSTS; i++)); do
		ip netns exec "h$i" sleep 1000000 &
		KEEPER[i]=$!
	done
	for ((i = 0; i < NHOSTS; i++)); do
		switch_port_cmds "$i"
	done | tc -n sw -force -b - 2>/dev/null
}

# Install the qdisc under test on every host, and fresh switch ports with
# zeroed counters.  SPEC may contain {rank} and {nhosts}: the host index
# and the host count, for rank-derived slots; and {seed}: SEED_BASE plus
# the host index, so that every host draws its own offsets, as hosts that
# each seed from get_random_u64() do, and a run can still be repeated.
reset_run()
{
	local spec=$1 i s pids=()

	for ((i = 0; i < NHOSTS; i++)); do
		switch_port_cmds "$i"
	done | tc -n sw -force -b - 2>/dev/null
	for ((i = 0; i < NHOSTS; i++)); do
		s=${spec//\{rank\}/$i}
		s=${s//\{nhosts\}/$NHOSTS}
		s=${s//\{seed\}/$((${SEED_BASE:-1} + i))}
		# A new handle-10 child of another kind would be refused as a
		# change, so the whole tree goes first.
		tc -n "h$i" -force -b - 2>&1 <<-EOF | grep -v 'handle of zero\|^Command failed' >&2 &
		qdisc del dev eth0 root
		qdisc add dev eth0 root handle 1: tbf rate $HOST_RATE burst $TBF_BURST limit 100000
		qdisc add dev eth0 parent 1:1 handle 10: $s
		EOF
		pids+=($!)
	done
	wait "${pids[@]}"
	# The last stage's status is grep's: look at the result instead.
	tc -n "h$((NHOSTS - 1))" qdisc show dev eth0 | grep -q "qdisc ${s%% *} 10:"
}

# Counters of every host, raw as /proc/net/snmp and netstat print them.
host_counters()
{
	local i

	for ((i = 0; i < NHOSTS; i++)); do
		echo "== h$i"
		echo "$(< "/proc/${KEEPER[i]}/net/snmp")"
		echo "$(< "/proc/${KEEPER[i]}/net/netstat")"
	done
}
