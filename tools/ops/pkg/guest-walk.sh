#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage (in the walk VM, from its readme-walk unit): guest-walk.sh RUN_DIR
#
# The guest side of test-walk-vm.sh: a host with systemd goes through
# README.md top to bottom with the two packages, on a multiqueue virtio
# NIC named eth0.  Runs at every boot; the step reached is kept on the
# guest's disk, so the walk goes on after the reboot it asks for.
#   boot 1: install, apply, then reboot
#   boot 2: back after the reboot (the network configured after desync),
#           channel change, doctor, metrics,
#           the way back, purge, then debian/control's Testsuite
#           (autopkgtest-pkg-dkms); then power off
# README's blocks run as written with bash -e, found by their "this block
# as written: NAME" comments (tools/lib/readme.sh).  Results go to
# RUN_DIR/tap as TAP lines, the commands' output to RUN_DIR/NAME.log, and
# RUN_DIR/done marks the end.

set -u

RUN=${1:?usage: guest-walk.sh RUN_DIR}
REPO=$(dirname "$(dirname "$(dirname "$(dirname "$(readlink -f "$0")")")")")
README=$REPO/README.md
TAP=$RUN/tap
STATE=/var/lib/readme-walk
DEV=eth0
PROM_DIR=/var/lib/prometheus/node-exporter
RULES=/usr/share/doc/tc-desync/examples/desync.rules.yml
# Every frame of the walk's ping passes a desync, so the share of eth0's
# bytes through desync is 1.  The rule takes desync's counters and
# node_exporter's over spans up to 15 s apart (the exporter's period),
# each side's bytes over its own span.  The ping is steady only as far
# as the emulated guest runs: a stall of seconds falls in one side's
# span and not in the other's, and moves the ratio by its share of the
# span.  Measured after 30 s of scrapes, over spans of 30-90 s: 6.1
# 0.995-1.115 on an idle host, 6.12 0.915-0.992 on a loaded one.  So
# the check waits RATIO_WAIT seconds of scrapes, spans of 120 s or more,
# and takes every value of the last RATIO_SPAN seconds within RATIO_TOL:
# a stall of up to 12 s.  The join errors it is there for were far
# larger (1.84, 0.5); desync.rules.test.yml checks the rule's arithmetic
# exactly (walk_metrics).
RATIO_TOL=0.10
RATIO_WAIT=150
RATIO_SPAN=30
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive

# shellcheck source=tools/lib/readme.sh
source "$REPO/tools/lib/readme.sh"

say()
{
	echo "$*" >> "$TAP"
	echo "walk: $*"
}

# One TAP line, named with the kernel it ran on; the number goes on from
# the lines of earlier boots.
step()	# NAME FUNCTION
{
	local n

	n=$(( $(grep -cE '^(not )?ok ' "$TAP" 2>/dev/null) + 1 ))
	say "# $1: started"
	if "$2" > "$RUN/$2.log" 2>&1; then
		say "ok $n - $(uname -r): $1"
	else
		say "not ok $n - $(uname -r): $1"
		tail -n 25 "$RUN/$2.log" | sed 's/^/# /' >> "$TAP"
	fi
}

# Runs README's block NAME as written, with bash -e: any command failing
# fails it.  PRELUDE, if given, runs first in the same shell.  Questions
# (apt-get's "Do you want to continue?") get the admin's "y".
readme_run()	# NAME [PRELUDE]
{
	local block

	block=$(readme_block "$README" "$1")
	[ -n "$block" ] || { echo "README.md has no block \"$1\""; return 1; }
	echo "+ README block $1:"
	printf '%s\n' "$block"
	yes 2> /dev/null | bash -e -x -c "${2:-}"$'\n'"$block"
}

# Every TX queue active on DEV has a desync under README's mq root, 1:.
every_queue_desync()
{
	local q i bad=0 n=0

	for q in /sys/class/net/"$DEV"/queues/tx-*; do
		i=${q##*-}
		n=$((n + 1))
		tc qdisc show dev $DEV parent "1:$(printf %x $((i + 1)))" |
			grep -q '^qdisc desync ' || { echo "tx-$i has no desync"; bad=1; }
	done
	echo "$n TX queues active, of $(ip -d link show dev $DEV |
		sed -nE 's/.* numtxqueues ([0-9]+) .*/\1/p')"
	tc qdisc show dev $DEV
	[ $n -gt 1 ] || { echo "$DEV is not multiqueue"; bad=1; }
	return $bad
}

# The TX queues active on DEV.
txqueues()
{
	find /sys/class/net/$DEV/queues -maxdepth 1 -name 'tx-*' | wc -l
}

is_enabled()	# UNIT
{
	[ "$(systemctl is-enabled "$1" 2>&1)" = enabled ]
}

# 1. README's package install.  The packages were built on the host by
# make deb's script (test-walk-vm.sh): the block's make deb is that run.
walk_install()
{
	cd "$RUN" || return 1
	# The block's make deb already ran: the packages are in build/deb/.
	# shellcheck disable=SC2016 # expanded by the block's shell
	readme_run packages 'make() { [ "$*" = deb ] && ls build/deb/*.deb; }' ||
		return 1
	dkms status sch-desync | grep -q "$(uname -r).*: installed" || return 1
	modinfo -F version sch_desync
	# Installing puts desync on no device: that is README's next step,
	# one per TX queue.
	tc qdisc show dev $DEV
	! tc qdisc show dev $DEV | grep -q desync ||
		{ echo "the install put desync on $DEV"; return 1; }
	[ -e /etc/desync/DEV.conf.example ] || { echo "no /etc/desync/DEV.conf.example"; return 1; }
	echo "desync-exporter.timer: $(systemctl is-enabled desync-exporter.timer 2>&1)," \
		"$(systemctl is-active desync-exporter.timer 2>&1)"
	! is_enabled desync-exporter.timer &&
		! systemctl -q is-active desync-exporter.timer
}

# 2. README's persistence: desync-apply as /etc/desync/eth0.conf says,
# kept by desync@eth0.service.
walk_apply()
{
	readme_run persist || return 1
	systemctl --no-pager status desync@$DEV.service
	systemctl -q is-active desync@$DEV.service || return 1
	every_queue_desync
}

# The host's network configuration, in an image that has none: a unit
# ordered as networkd, NetworkManager and ifupdown's networking.service
# are (after network-pre.target, before network.target), that records
# eth0's qdiscs when it runs at the next boot.
netcfg_standin()
{
	cat > /etc/systemd/system/walk-netcfg.service <<-EOF
	[Unit]
	Description=stand-in for the network configuration of $DEV
	Requires=sys-subsystem-net-devices-$DEV.device
	After=sys-subsystem-net-devices-$DEV.device network-pre.target
	Before=network.target
	Wants=network.target
	[Service]
	Type=oneshot
	RemainAfterExit=yes
	ExecStart=/bin/sh -c 'tc qdisc show dev $DEV > $STATE/netcfg-qdisc'
	[Install]
	WantedBy=multi-user.target
	EOF
	rm -f $STATE/netcfg-qdisc
	systemctl enable walk-netcfg.service
}

# 3. A real reboot: the unit brings desync back when eth0 appears.
walk_reboot()
{
	local state i

	state=$(timeout 300 systemctl is-system-running --wait)
	echo "system: $state; boot $(cat /proc/sys/kernel/random/boot_id)," \
		"before $(cat $STATE/boot_id)"
	[ "$(cat /proc/sys/kernel/random/boot_id)" != "$(cat $STATE/boot_id)" ] || return 1
	# desync@eth0 starts when eth0's device unit does, which nothing in
	# this image (no ifupdown, no networkd pulling network.target in)
	# holds the boot for: under a loaded host the boot was "running"
	# while the unit was still activating.  Wait for udev's events,
	# then for the unit to have started or failed.
	udevadm settle
	for i in $(seq 60); do
		case $(systemctl is-active desync@$DEV.service) in
		active|failed) break ;;
		esac
		sleep 1
	done
	systemctl --no-pager status desync@$DEV.service
	systemctl -q is-active desync@$DEV.service || return 1
	every_queue_desync
}

# desync@.service's ordering: the network's configuration found every
# desync the unit installs (one per TX queue the NIC can have) in place.
walk_netcfg_order()
{
	local n want

	cat $STATE/netcfg-qdisc || return 1
	n=$(grep -c '^qdisc desync ' $STATE/netcfg-qdisc)
	want=$(tc qdisc show dev $DEV | grep -c '^qdisc desync ')
	echo "the network's configuration saw $n desync qdiscs of $want"
	[ "$n" -eq "$want" ] && [ "$n" -ge "$(txqueues)" ]
}

# 4. A channel change activating every queue the NIC has.
walk_channels()
{
	local before max

	ethtool -l $DEV
	before=$(txqueues)
	max=$(ethtool -l $DEV | awk '/^Combined:/ { print $2; exit }')
	[ "${max:-0}" -gt "$before" ] || { echo "no channel to add: $before of ${max:-?}"; return 1; }
	ethtool -L $DEV combined "$max" || return 1
	udevadm settle
	# Whatever reacts to the change (nothing should need to) has had time.
	sleep 5
	[ "$(txqueues)" -eq "$max" ] || return 1
	every_queue_desync
}

# 5. doctor.  Its ECN check wants what Documentation/tuning.md's "ECN and
# DCTCP on hosts and switches" sets on hosts; README itself says nothing
# of it, so doctor warns (exit 1) before.
walk_doctor()
{
	echo "+ before tuning.md's DCTCP:"
	desyncctl doctor $DEV
	echo "exit $?"
	sysctl -w net.ipv4.tcp_congestion_control=dctcp net.ipv4.tcp_ecn=1 || return 1
	desyncctl doctor $DEV
}

# 6. The exporter as README enables it, node_exporter serving its file,
# and the shipped rules joining it with node_exporter's own series in a
# Prometheus that scrapes this host: per device with node_network_*, per
# host with node_netstat_TcpExt_TCPTimeouts.
walk_metrics()
{
	local i q want labels ping prom t0 tp ok=1

	# Traffic on eth0 for both sides of the join, steady so that the
	# share through desync can be checked: 1000-byte frames (ICMP echo
	# requests), 5 a second, to a neighbour entered by hand.  Nothing
	# answers behind the tap: without the entry only ARP requests left.
	ip addr add 192.0.2.1/24 dev $DEV
	ip link set $DEV up
	ip neigh replace 192.0.2.2 lladdr 02:00:00:00:00:02 dev $DEV nud permanent
	ping -q -i 0.2 -s 958 192.0.2.2 > /dev/null 2>&1 &
	ping=$!
	t0=$SECONDS

	readme_run exporter || ok=0
	for i in $(seq 60); do
		[ -s $PROM_DIR/desync.prom ] && break
		sleep 1
	done
	grep -E '^desync_bursts_total' $PROM_DIR/desync.prom || ok=0
	labels=$(grep -oE '^desync_bursts_total\{[^}]*\}' $PROM_DIR/desync.prom |
		grep -oE '[a-z_]+=' | sort -u | tr -d '=\n')
	echo "desync_bursts_total's labels: $labels"
	# node_exporter's qdisc and network collectors name the same things so.
	[ "$labels" = devicehandlekindparent ] || ok=0
	[ $ok -eq 1 ] || { kill $ping; wait; return 1; }

	mkdir -p /var/tmp/walk-prom
	cat > /var/tmp/walk-prom/prometheus.yml <<-EOF
	global:
	  scrape_interval: 10s
	  evaluation_interval: 5s
	rule_files:
	  - $RULES
	scrape_configs:
	  - job_name: node
	    static_configs:
	      - targets: ['localhost:9100']
	EOF
	systemctl start prometheus-node-exporter
	# The desync.prom of the first scrape was written up to 15 s before
	# it: its counters must already count the steady ping.
	sleep $((t0 + 20 > SECONDS ? t0 + 20 - SECONDS : 0))
	curl -s localhost:9100/metrics | grep -E "^desync_bursts_total\{device=\"$DEV\"" ||
		{ echo "node_exporter does not serve desync.prom"; ok=0; }
	promtool check rules $RULES || ok=0
	prometheus --config.file=/var/tmp/walk-prom/prometheus.yml \
		--storage.tsdb.path=/var/tmp/walk-prom/data \
		--web.listen-address=127.0.0.1:9090 > /var/tmp/walk-prom/log 2>&1 &
	prom=$!
	tp=$SECONDS
	# QUERY and the label its series must have.
	while read -r q want; do
		for i in $(seq 60); do
			curl -s http://127.0.0.1:9090/api/v1/query \
				--data-urlencode "query=$q" > /var/tmp/walk-prom/q
			grep -q "$want" /var/tmp/walk-prom/q && break
			sleep 2
		done
		echo "$q: $(cat /var/tmp/walk-prom/q)"
		grep -q "$want" /var/tmp/walk-prom/q || ok=0
	done <<-EOF
	instance_device:desync_bursts:rate5m{device="$DEV"} "device":"$DEV"
	instance_device:desync_transmit_bytes:ratio5m{device="$DEV"} "device":"$DEV"
	instance:desync_tcp_timeouts_per_burst:ratio5m "instance":"localhost:9100"
	EOF
	# Every packet eth0 sent went through a desync: the share must be 1,
	# within RATIO_TOL, in every value the rule recorded over the last
	# RATIO_SPAN seconds, after RATIO_WAIT seconds of scrapes (3 or more).
	sleep $((tp + RATIO_WAIT > SECONDS ? tp + RATIO_WAIT - SECONDS : 0))
	ratio_ok "instance_device:desync_transmit_bytes:ratio5m{device=\"$DEV\"}[${RATIO_SPAN}s]" || ok=0
	# The scrape as Prometheus saw it: health, lastError, its duration.
	curl -s http://127.0.0.1:9090/api/v1/targets
	echo
	[ $ok -eq 1 ] || tail -n 15 /var/tmp/walk-prom/log
	kill $prom $ping 2> /dev/null
	wait
	[ $ok -eq 1 ]
}

# The values of the range query $1 (a recorded ratio over a span), each
# within RATIO_TOL of 1; at least 3 of them.
ratio_ok()	# QUERY
{
	local v n=0 bad=0

	curl -s http://127.0.0.1:9090/api/v1/query --data-urlencode "query=$1" \
		> /var/tmp/walk-prom/r
	echo "$1: $(cat /var/tmp/walk-prom/r)"
	for v in $(grep -oE '"values":\[.*\]' /var/tmp/walk-prom/r |
		   grep -oE ',"[^"]+"\]' | tr -d ',"]'); do
		n=$((n + 1))
		awk -v v="$v" -v t="$RATIO_TOL" 'BEGIN { exit !(v >= 1 - t && v <= 1 + t) }' ||
			{ echo "ratio $v is not 1 +- $RATIO_TOL"; bad=1; }
	done
	echo "$n values, $([ $bad -eq 0 ] && echo "each" || echo "not each") within 1 +- $RATIO_TOL"
	[ $n -ge 3 ] && [ $bad -eq 0 ]
}

# 7. README's way back: the kernel's default root, nothing enabled, the
# module gone.
walk_back()
{
	local ok=1 u

	readme_run back || ok=0
	tc qdisc show dev $DEV
	tc qdisc show dev $DEV root | grep -q '^qdisc mq 0: root' || ok=0
	! tc qdisc show dev $DEV | grep -q desync || ok=0
	for u in desync@$DEV.service desync-exporter.timer; do
		echo "$u: $(systemctl is-enabled "$u" 2>&1), $(systemctl is-active "$u" 2>&1)"
		! is_enabled "$u" && ! systemctl -q is-active "$u" || ok=0
	done
	! grep -q '^sch_desync ' /proc/modules || { echo "sch_desync still loaded"; ok=0; }
	[ $ok -eq 1 ]
}

# 8. Purge: nothing of the packages left.
walk_purge()
{
	local ok=1 left

	apt-get purge -y tc-desync sch-desync-dkms < /dev/null || ok=0
	left=$(dpkg -l | grep -i desync)
	[ -z "$left" ] || { echo "dpkg -l: $left"; ok=0; }
	left=$(ls -d /usr/src/sch-desync* /var/lib/dkms/sch-desync 2> /dev/null)
	[ -z "$left" ] || { echo "left: $left"; ok=0; }
	[ -z "$(dkms status sch-desync)" ] || { dkms status; ok=0; }
	left=$(find /lib/modules /lib/systemd /etc/systemd /usr/sbin /usr/lib \
		/var/lib/prometheus /usr/share -name '*desync*' 2> /dev/null)
	[ -z "$left" ] || { echo "left: $left"; ok=0; }
	# The admin's own eth0.conf is not the packages' to remove.
	left=$(find /etc/desync -mindepth 1 ! -name "$DEV.conf" 2> /dev/null)
	[ -z "$left" ] || { echo "left in /etc/desync: $left"; ok=0; }
	[ $ok -eq 1 ]
}

# 9. debian/control's Testsuite, autopkgtest-pkg-dkms, as Debian's CI
# runs it: autopkgtest on the source package, with make deb's DKMS
# package in place of the archive's, and autodep8's test, which installs
# the package and builds and installs the module with DKMS for every
# kernel whose headers are installed, here the booted one.  The test
# reinstalls the package and leaves the module built (breaks-testbed):
# it comes last, on a host thrown away after it, so the "null" testbed,
# this host, may run it.  dkms-autopkgtest passes a kernel that
# dkms.conf's BUILD_EXCLUSIVE_KERNEL leaves out (a SKIP); both kernels of
# the walk are supported, so the booted one must PASS.  A superficial
# test's pass alone makes autopkgtest exit 8.
walk_autopkgtest()
{
	local out=/var/tmp/walk-autopkgtest rc ok=1

	rm -rf $out $out.log
	# Its output first, whole, then the verdict: TAP keeps the last lines.
	autopkgtest --no-built-binaries --ignore-restrictions=breaks-testbed \
		--output-dir $out "$RUN"/build/deb/sch-desync-dkms_*_all.deb \
		"$RUN"/build/src/sch-desync_*.dsc -- null < /dev/null > $out.log 2>&1
	rc=$?
	cat $out.log
	echo "autopkgtest exit $rc; summary:"
	cat $out/summary
	[ $rc -eq 0 ] || [ $rc -eq 8 ] || ok=0
	grep -qE '^dkms-autopkgtest +PASS' $out/summary || ok=0
	grep -x "I: PASS $(uname -r)" $out/dkms-autopkgtest-stdout || {
		echo "dkms-autopkgtest did not build for $(uname -r):"
		grep -E '^I: (PASS|FAIL|SKIP) ' $out/dkms-autopkgtest-stdout
		ok=0
	}
	[ $ok -eq 1 ]
}

# The plan, the TAP lines counted, the end marked; then power off.
finish()
{
	local n f

	n=$(grep -cE '^(not )?ok ' "$TAP")
	f=$(grep -cE '^not ok ' "$TAP")
	say "1..$n"
	say "# walk-$(uname -r): $((n - f)) passed, $f failed"
	touch "$RUN/done"
	sync
	systemctl poweroff
}

mkdir -p $STATE
stage=$(cat $STATE/stage 2> /dev/null || echo 1)
case $stage in
1)
	echo "TAP version 13" > "$TAP"
	say "# boot 1: $(uname -r), systemd $(systemctl --version | head -n 1)"
	timeout 300 systemctl is-system-running --wait > /dev/null
	# test-walk-vm.sh's DESYNC_WALK_ONLY=autopkgtest: that step alone,
	# on the fresh host.
	if [ "$(cat "$RUN/only" 2> /dev/null)" = autopkgtest ]; then
		step "debian/control's Testsuite: autopkgtest-pkg-dkms passes" walk_autopkgtest
		finish
		exit 0
	fi
	step "install the packages as README says" walk_install
	step "desync@$DEV.service puts desync on every TX queue" walk_apply
	netcfg_standin > "$RUN/netcfg_standin.log" 2>&1
	cat /proc/sys/kernel/random/boot_id > $STATE/boot_id
	echo 2 > $STATE/stage
	sync
	say "# rebooting"
	systemctl reboot
	;;
2)
	echo 3 > $STATE/stage
	say "# boot 2"
	step "after a reboot, desync is back on every TX queue" walk_reboot
	step "at boot, the network's configuration runs after desync" walk_netcfg_order
	step "ethtool -L: the queues activated have desync" walk_channels
	step "desyncctl doctor $DEV is clean" walk_doctor
	step "exporter, node_exporter and the shipped rules" walk_metrics
	step "README's way back" walk_back
	step "apt-get purge leaves nothing" walk_purge
	step "debian/control's Testsuite: autopkgtest-pkg-dkms passes" walk_autopkgtest
	finish
	;;
*)
	# A boot after the end: the host stops the VM at the power-off.
	systemctl poweroff
	;;
esac
