#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: test-host.sh
#
# desyncctl's tests that need no desync qdisc, run on the host by make
# check: the three output formats on made-up qdiscs (test-format.c),
# a frame of top on two samples of them (test-top.c),
# the reading of netlink strings without their NUL (test-netlink.c),
# Prometheus text checked by promtool, the shipped rules (promtool check
# and test rules) and dashboard against a node_exporter scrape, the man
# page renders and names every option, counter and metric, the command
# line's errors and exit codes, the atomic export file, and make install.  The tests against the real
# module are selftests/desync_ctl.sh.  Ends with "N passed, N failed".

set -uo pipefail

HERE=$(dirname "$(readlink -f "$0")")
# shellcheck source=tools/lib/common.sh
source "$HERE/../../lib/common.sh"

# promtool is in Debian's prometheus package; man-db renders the page.
need_pkgs libnl-3-dev libnl-route-3-dev pkg-config prometheus man-db groff-base \
	python3-yaml
make -s -C "$HERE" desyncctl test-format test-netlink test-doctor test-advise test-top ||
	die "building desyncctl failed"

CTL=$HERE/desyncctl
FMT=$HERE/test-format
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT
N=0
PASS=0
FAIL=0

# One KTAP line per test; a test is a function whose status is its verdict.
run()	# NAME
{
	local out l

	N=$((N + 1))
	if out=$("$1" 2>&1); then
		echo "ok $N $1"
		PASS=$((PASS + 1))
	else
		echo "not ok $N $1"
		while IFS= read -r l; do
			echo "# $l"
		done <<< "$out"
		FAIL=$((FAIL + 1))
	fi
}

# Every LINE is a whole line of FILE; else prints FILE and fails.
has_lines()	# FILE LINE...
{
	local f=$1 l

	shift
	for l in "$@"; do
		grep -qxF -- "$l" "$f" || { echo "no line: $l"; cat "$f"; return 1; }
	done
}

prom_valid()
{
	"$FMT" prom > "$TMPD/f.prom" || return 1
	promtool check metrics < "$TMPD/f.prom" || return 1
	# Every family: HELP, then TYPE, then its samples, never split.
	awk '/^# HELP / { h = $3; next }
	     /^# TYPE / { if ($3 != h) { print "TYPE without HELP: " $3; bad = 1 } t = $3; next }
	     { split($0, a, "{"); if (a[1] != t) { print "sample out of its family: " $0; bad = 1 } }
	     END { exit bad }' "$TMPD/f.prom"
}

prom_values()
{
	"$FMT" prom > "$TMPD/f.prom" || return 1
	has_lines "$TMPD/f.prom" \
		'desync_bursts_total{device="eth0",handle="8001:",kind="desync",parent="root"} 9007199254740993' \
		'desync_hold_seconds_total{device="eth0",handle="8001:",kind="desync",parent="root"} 612.345678901' \
		'desync_offset_max_seconds{device="ens\"1\\\\",handle="8002:",kind="desync",parent="1:1"} 0.001500' \
		'desync_spread_ratio{device="eth0",handle="8001:",kind="desync",parent="root"} 0.25' \
		'desync_ce_backlog_segments{device="ens\"1\\\\",handle="8003:",kind="desync",parent="1:2"} 0' \
		'desync_widen_steps{device="eth0",handle="8001:",kind="desync",parent="root"} 7' \
		'desync_widen_steps{device="ens\"1\\\\",handle="8003:",kind="desync",parent="1:2"} 0' \
		'desync_throttled_packets_total{device="eth0",handle="8001:",kind="desync",parent="root"} 16' \
		'desync_held_bursts_total{device="eth0",handle="8001:",kind="desync",parent="root"} 19' \
		'desync_held_bursts_total{device="ens\"1\\\\",handle="8002:",kind="desync",parent="1:1"} 119' \
		'desync_info{device="eth0",handle="8001:",kind="desync",parent="root",group_by="mark",slot="random",arm="always"} 1' \
		'desync_info{device="ens\"1\\\\",handle="8002:",kind="desync",parent="1:1",group_by="mark",slot="2",arm="loss"} 1' || return 1
	# A module older than held_bursts: no sample, rather than a 0.
	! grep -q '^desync_held_bursts_total{.*handle="8003:"' "$TMPD/f.prom" ||
		{ echo "held_bursts of 8003:, whose module has none"; return 1; }
}

json_valid()
{
	"$FMT" json | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert len(d) == 3, d
q = d[1]
assert q["dev"] == "ens\"1\\\\" and q["parent"] == "1:1" and q["handle"] == "8002:", q
assert d[0]["parent"] == "root" and d[0]["bursts"] == 2**53 + 1, d[0]
assert q["options"]["seed"] == "18446744073709551615", q["options"]
assert q["options"]["bypass_prio"] == [3, 63] and q["options"]["slot"] == "2", q["options"]
assert d[0]["options"]["slot"] == "random" and d[0]["hold_time"] == 612345678901
assert q["options"]["widen"] == 7 and d[2]["options"]["widen"] == 0, q["options"]
assert list(q["options"])[-3:] == ["sticky", "widen", "arm"], list(q["options"])
assert [x["options"]["arm"] for x in d] == ["always", "loss", "timeout"], q["options"]
for k in ("bytes", "packets", "drops", "overlimits", "requeues", "backlog", "qlen",
          "bursts", "held", "hold_time", "early_release", "ce_mark", "drop_overlimit",
          "bypass", "throttled", "groups_active", "groups_held", "held_bursts"):
    assert k in q, k
assert q["held_bursts"] == 119 and d[0]["held_bursts"] == 19, q
assert "held_bursts" not in d[2], d[2]
'
}

# Netlink strings without their NUL (test-netlink.c): a qdisc kind or an
# extended ack is read no further than its attribute.
netlink_strings()
{
	"$HERE/test-netlink"
}

# Device names are bytes: test-format.c's name_cases, each written as
# expected in JSON and in a Prometheus label.
names_exact()
{
	"$FMT" names
}

# ... and each JSON document still what a strict parser takes.  The bytes
# are decoded first, strictly: json.loads() given bytes would let encoded
# surrogates through.
names_json_strict()
{
	"$FMT" names-json | /usr/bin/python3 -c '
import json, sys
n = bad = 0
for n, line in enumerate(sys.stdin.buffer, 1):
    try:
        d = json.loads(line.decode("utf-8"))
        assert len(d) == 1 and isinstance(d[0]["dev"], str), d
    except (ValueError, AssertionError) as e:
        print("document %d: %r: %s" % (n, line[:40], e))
        bad = 1
sys.exit(bad or n == 0)
'
}

# ... and the exposition still what promtool takes: label values must be
# UTF-8.
names_prom_valid()
{
	"$FMT" names-prom > "$TMPD/n.prom" || return 1
	promtool check metrics < "$TMPD/n.prom" || return 1
	[ "$(grep -c '^desync_bursts_total{' "$TMPD/n.prom")" -gt 0 ]
}

# The words of tc-plugin/test-print.sh's expectations.
text_layout()
{
	"$FMT" text > "$TMPD/f.txt" || return 1
	has_lines "$TMPD/f.txt" \
		'qdisc desync 8002: dev ens"1\ parent 1:1' \
		' limit 10000p group_by mark groups 1024 idle 2ms offset_max 1500us slots 4 slot 2 seed 18446744073709551615 hold_limit 256p ce_threshold 1ms ce_backlog 44p spread 25% bypass_prio 3,63 nosticky widen 7 arm loss' \
		' Sent 1 bytes 2 pkt (dropped 3, overlimits 4 requeues 5)' \
		' backlog 6b 7p' \
		' bursts 9007199254740993 held 11 hold_time 612s early_release 12 ce_mark 13 drop_overlimit 14 bypass 15 throttled 16 groups_active 17 groups_held 18 held_bursts 19' \
		' bursts 9007199254740993 held 211 hold_time 612s early_release 212 ce_mark 213 drop_overlimit 214 bypass 215 throttled 216 groups_active 17 groups_held 18' \
		' limit 10000p group_by mark groups 1024 idle 0us offset_max 1500us slots 4 slot 2 seed 18446744073709551615 hold_limit 256p ce_threshold 0us ce_backlog 0p spread 25% bypass_prio 3,63 slot_map 1:0,7:3 nosticky widen 0 arm timeout'
}

man_renders()
{
	MANWIDTH=80 man --warnings -l "$REPO_ROOT/man/desyncctl.8" > "$TMPD/man.txt" 2> "$TMPD/man.err"
	[ ! -s "$TMPD/man.err" ] || { cat "$TMPD/man.err"; return 1; }
	[ -s "$TMPD/man.txt" ]
}

# The page cannot drift from the code: every long option, counter and
# metric the code has is named in it.
man_complete()
{
	local w missing=()

	MANWIDTH=200 man -l "$REPO_ROOT/man/desyncctl.8" 2> /dev/null | tr -d '\010' > "$TMPD/man.txt"
	"$FMT" prom > "$TMPD/f.prom"
	for w in $(sed -n 's/^\t{ "\([a-z]*\)",.*/--\1/p' "$HERE/main.c") \
		 $(awk '/^# TYPE / { print $3 }' "$TMPD/f.prom") \
		 $("$FMT" text | sed -n 's/^ bursts /bursts /p' | head -1 | awk '{ for (i = 1; i < NF; i += 2) print $i }') \
		 show top export doctor advise \
		 $(sed -n 's/.*add(&\{0,1\}r, SEV_[A-Z]*, "\([a-z_]*\)".*/\1/p' "$HERE/doctor.c" "$HERE/advise.c" | sort -u); do
		grep -qF -- "$w" "$TMPD/man.txt" || missing+=("$w")
	done
	[ ${#missing[@]} -eq 0 ] || { echo "not in desyncctl.8: ${missing[*]}"; return 1; }
}

cli_errors()
{
	local rc

	"$CTL" --version | grep -q '^desyncctl utility, sch_desync-.*, libnl 3' || return 1
	"$CTL" frobnicate > /dev/null 2>&1
	rc=$?
	[ "$rc" -eq 2 ] || { echo "unknown command: exit $rc, want 2"; return 1; }
	"$CTL" show --count 0 > /dev/null 2>&1
	rc=$?
	[ "$rc" -eq 2 ] || { echo "--count 0: exit $rc, want 2"; return 1; }
	"$CTL" show desync-nosuch0 > /dev/null 2> "$TMPD/err"
	rc=$?
	if [ "$rc" -ne 1 ] || ! grep -q 'no device "desync-nosuch0"' "$TMPD/err"; then
		echo "missing device: exit $rc: $(cat "$TMPD/err")"
		return 1
	fi
}

# Whatever qdiscs this host has (none of them desync, likely), the file
# node_exporter reads is valid, complete, readable and alone.
export_file()
{
	mkdir "$TMPD/tf"
	echo stale > "$TMPD/tf/desync.prom"
	"$CTL" export --all --output "$TMPD/tf/desync.prom" || return 1
	promtool check metrics < "$TMPD/tf/desync.prom" || return 1
	grep -q '^# TYPE desync_bursts_total counter$' "$TMPD/tf/desync.prom" || return 1
	[ "$(stat -c %a "$TMPD/tf/desync.prom")" = 644 ] || { echo "mode not 644"; return 1; }
	[ "$(find "$TMPD/tf" -type f | wc -l)" -eq 1 ] || { ls -la "$TMPD/tf"; return 1; }
	! "$CTL" export --output "$TMPD/none/desync.prom" 2> /dev/null
}

# A named device that is gone fails the export, but the file is still
# rewritten with what the others have: node_exporter must not keep
# serving the old values of every device.
export_missing_device()
{
	local rc

	mkdir "$TMPD/tm"
	echo stale > "$TMPD/tm/desync.prom"
	"$CTL" export lo desync-nosuch0 --output "$TMPD/tm/desync.prom" 2> "$TMPD/err"
	rc=$?
	[ "$rc" -eq 1 ] || { echo "exit $rc, want 1"; return 1; }
	grep -q 'no device "desync-nosuch0"' "$TMPD/err" || { cat "$TMPD/err"; return 1; }
	! grep -q stale "$TMPD/tm/desync.prom" || { echo "the old export stayed"; return 1; }
	promtool check metrics < "$TMPD/tm/desync.prom"
}

# Debian's node_exporter (unpacked into the cache, not installed: no
# daemon is left running) with desyncctl's export of test-format's qdiscs
# in its textfile directory and the collectors COLLECTOR... on: writes
# what it serves to OUT, and its log to OUT.log.
ne_scrape()	# OUT COLLECTOR...
{
	local ne=$CACHE/node-exporter/usr/bin/prometheus-node-exporter
	local port=$((20000 + $$ % 10000)) out=$1 pid i c args=()

	shift
	if [ ! -x "$ne" ] &&
	   ! { mkdir -p "$CACHE/node-exporter" &&
	       (cd "$TMPD" && apt-get download prometheus-node-exporter > /dev/null) &&
	       dpkg-deb -x "$TMPD"/prometheus-node-exporter_*.deb "$CACHE/node-exporter"; }; then
		echo "cannot fetch prometheus-node-exporter"
		return 1
	fi
	for c in "$@"; do
		args+=("--collector.$c")
	done
	mkdir -p "$TMPD/ne"
	"$FMT" prom > "$TMPD/ne/desync.prom"
	"$ne" --web.listen-address="127.0.0.1:$port" --collector.disable-defaults \
		--collector.textfile.directory="$TMPD/ne" "${args[@]}" \
		> "$out.log" 2>&1 &
	pid=$!
	for ((i = 0; i < 50; i++)); do
		/usr/bin/python3 -c 'import sys, urllib.request
print(urllib.request.urlopen(sys.argv[1], timeout=2).read().decode())' \
			"http://127.0.0.1:$port/metrics" > "$out" 2> /dev/null && break
		sleep 0.1
	done
	kill "$pid"
	wait "$pid" 2> /dev/null
	[ -s "$out" ] || { cat "$out.log"; return 1; }
}

# The last step of the path from qdisc to Prometheus: node_exporter's
# textfile collector serves the export.
node_exporter_scrape()
{
	local out=$TMPD/scrape.txt

	ne_scrape "$out" textfile || return 1
	grep -qxF 'node_textfile_scrape_error 0' "$out" &&
		grep -qF 'desync_hold_seconds_total{device="eth0",handle="8001:",kind="desync",parent="root"} 612.345678901' "$out" &&
		[ "$(grep -c '^desync_bursts_total{' "$out")" -eq 3 ] && return 0
	echo "scrape: $(grep -E '^(desync_bursts|node_textfile)' "$out")"
	cat "$out.log"
	return 1
}

# The rules promtool loads, and their unit test: a small series of
# hosts, each alert fired by one of them.
rules_check()
{
	promtool check rules "$HERE/desync.rules.yml"
}

rules_test()
{
	(cd "$HERE" && promtool test rules desync.rules.test.yml)
}

# Every metric the rules, their test and the dashboard name is served by
# node_exporter with the export in its textfile directory and its netdev,
# netstat and time collectors on (check-monitoring.py), each series of the
# test labelled as served; the dashboard is JSON.
monitoring_names()
{
	local out=$TMPD/scrape-all.txt

	ne_scrape "$out" textfile netdev netstat time || return 1
	"$HERE/check-monitoring.py" "$out" "$HERE/desync.rules.yml" \
		"$HERE/desync.rules.test.yml" "$HERE/desync-dashboard.json"
}

install_tree()
{
	local f

	make -s -C "$HERE" install DESTDIR="$TMPD/root" > /dev/null || return 1
	for f in usr/sbin/desyncctl usr/share/man/man8/desyncctl.8 \
		 lib/systemd/system/desync-exporter.service \
		 lib/systemd/system/desync-exporter.timer etc/default/desync-exporter \
		 usr/share/doc/tc-desync/examples/desync.rules.yml \
		 usr/share/doc/tc-desync/examples/desync-dashboard.json \
		 usr/share/bash-completion/completions/desyncctl; do
		[ -f "$TMPD/root/$f" ] || { echo "not installed: $f"; return 1; }
	done
	grep -q '^ExecStart=/usr/sbin/desyncctl export ' \
		"$TMPD/root/lib/systemd/system/desync-exporter.service"
}

# ----------------------------------------------------------------- doctor

# A host doctor finds healthy, in DIR: the module and plugin at one
# version, no lockdown, two kernels with sch_desync built, eth0 with four
# TX queues and desync on each under mq, dctcp by default.
make_host()	# DIR
{
	local h=$1 k q

	mkdir -p "$h/bin" "$h/sys/module/sch_desync" "$h/sys/kernel/security" \
		"$h/proc/sys/kernel" "$h/proc/sys/net/ipv4"
	cat > "$h/bin/tc" <<-'EOS'
	#!/bin/sh
	[ "$*" = "qdisc add dev lo root desync help" ] || exit 99
	echo 'Usage: ... desync [ limit PACKETS ]' >&2
	echo 'q_desync.so version 1.0' >&2
	exit 1
	EOS
	cat > "$h/bin/mokutil" <<-'EOS'
	#!/bin/sh
	[ "$1" = --test-key ] || exit 99
	echo "$2 is already enrolled"
	exit 1
	EOS
	chmod +x "$h/bin/tc" "$h/bin/mokutil"
	echo 1.0 > "$h/sys/module/sch_desync/version"
	echo '[none] integrity confidentiality' > "$h/sys/kernel/security/lockdown"
	echo 6.1.0-18-amd64 > "$h/proc/sys/kernel/osrelease"
	for k in 6.1.0-17-amd64 6.1.0-18-amd64; do
		mkdir -p "$h/lib/modules/$k/kernel/net/ipv4" "$h/lib/modules/$k/build" \
			"$h/lib/modules/$k/updates/dkms"
		printf 'ELF\0license=GPL\0srcversion=ABC\0version=1.0\0' \
			> "$h/lib/modules/$k/updates/dkms/sch_desync.ko"
	done
	for q in 0 1 2 3; do
		mkdir -p "$h/sys/class/net/eth0/queues/tx-$q" "$h/sys/class/net/eth0/queues/rx-$q"
	done
	mkdir -p "$h/sys/class/net/lo/queues/tx-0"
	echo 2 > "$h/proc/sys/net/ipv4/tcp_ecn"
	echo dctcp > "$h/proc/sys/net/ipv4/tcp_congestion_control"
	echo 'reno cubic dctcp' > "$h/proc/sys/net/ipv4/tcp_available_congestion_control"
	cat > "$h/qdiscs" <<-'EOS'
	lo noqueue 0: root
	eth0 mq 0: root
	eth0 desync 8001: :1 arm=always bursts=100 hold_time=150000000
	eth0 desync 8002: :2 arm=always
	eth0 desync 8003: :3 arm=always
	eth0 desync 8004: :4 arm=always
	EOS
}

# Runs test-doctor on HOST with ARGS; its output in $TMPD/doc.out and its
# exit status in DOC_RC.
doctor_on()	# HOST ARG...
{
	"$HERE/test-doctor" "$@" > "$TMPD/doc.out" 2>&1
	DOC_RC=$?
}

# The exit status is RC and every LINE is a whole line of the output.
doctor_says()	# RC LINE...
{
	local rc=$1

	shift
	[ "$DOC_RC" -eq "$rc" ] || { echo "exit $DOC_RC, want $rc"; cat "$TMPD/doc.out"; return 1; }
	has_lines "$TMPD/doc.out" "$@"
}

# A fresh healthy host in $TMPD/HOST-NAME, for a test to break.
fresh_host()	# NAME
{
	H=$TMPD/host-$1
	rm -rf "$H"
	make_host "$H"
}

doctor_clean()
{
	fresh_host clean
	doctor_on "$H" || true
	doctor_says 0 \
		'ok   version: loaded sch_desync and tc'"'"'s q_desync.so are both 1.0' \
		'ok   dkms: 6.1.0-18-amd64 (running): sch_desync built' \
		'ok   txq: eth0: desync on each of its 4 TX queues (mq)' \
		'ok   ecn: dctcp by default: desync'"'"'s CE marks are read as DCTCP'"'"'s' \
		'ok   hold: eth0: mean hold within half of offset_max on 4 desync qdiscs' \
		'9 ok, 0 warn, 0 fail' || return 1
	! grep -q -e '^warn' -e '^fail' "$TMPD/doc.out"
}

doctor_no_plugin()
{
	fresh_host noplugin
	printf '#!/bin/sh\necho '"'"'Unknown qdisc "desync", hence option "help" is unparsable'"'"' >&2\nexit 1\n' > "$H/bin/tc"
	doctor_on "$H"
	doctor_says 2 \
		"fail version: $H/bin/tc finds no q_desync.so that says its version (in its lib directory or TC_LIB_DIR)" \
		'     fix: apt install tc-desync'
}

doctor_version_mismatch()
{
	fresh_host mismatch
	echo 0.9 > "$H/sys/module/sch_desync/version"
	doctor_on "$H"
	doctor_says 2 \
		"fail version: loaded sch_desync is 0.9, tc's q_desync.so 1.0: each may misread the other's options and counters" \
		'     fix: modprobe -r sch_desync && modprobe sch_desync  # once its qdiscs are removed (desync-apply --remove DEV), or reboot'
}

# Lockdown with the module not loaded yet: DKMS's key decides.
doctor_lockdown()
{
	fresh_host lockdown
	rm -r "$H/sys/module/sch_desync"
	echo 'none [integrity] confidentiality' > "$H/sys/kernel/security/lockdown"
	mkdir -p "$H/var/lib/dkms" "$H/sys/firmware/efi/efivars"
	printf '\x06\x00\x00\x00\x01' > "$H/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
	doctor_on "$H"
	doctor_says 2 \
		'warn version: sch_desync is not loaded; tc'"'"'s q_desync.so is 1.0' \
		'fail lockdown: lockdown integrity, Secure Boot on: sch_desync loads only signed, and DKMS has no signing key (/var/lib/dkms/mok.pub)' || return 1
	echo key > "$H/var/lib/dkms/mok.pub"
	printf '#!/bin/sh\necho "$2 is not enrolled"\n' > "$H/bin/mokutil"
	doctor_on "$H"
	doctor_says 2 \
		'fail lockdown: lockdown integrity, Secure Boot on: DKMS'"'"'s key /var/lib/dkms/mok.pub is not enrolled, sch_desync will not load' \
		'     fix: mokutil --import /var/lib/dkms/mok.pub  # then reboot and enroll it' || return 1
	printf '#!/bin/sh\necho "$2 is already enrolled"\n' > "$H/bin/mokutil"
	doctor_on "$H"
	doctor_says 1 'ok   lockdown: lockdown integrity, Secure Boot on: DKMS'"'"'s key is enrolled'
}

# A newer kernel installed without headers, the running one without its
# module, one built from an older version, and one before 6.1.
doctor_dkms()
{
	fresh_host dkms
	mkdir -p "$H/lib/modules/6.5.0-1-amd64/kernel" "$H/lib/modules/5.10.0-28-amd64/kernel" \
		"$H/lib/modules/6.0.0-9-amd64/updates/dkms"
	doctor_on "$H"
	doctor_says 1 \
		'ok   dkms: 5.10.0-28-amd64: before 6.1, which sch_desync does not build for' \
		'warn dkms: 6.5.0-1-amd64: no sch_desync module built, no headers to build it' \
		'     fix: apt install linux-headers-6.5.0-1-amd64 && dkms autoinstall -k 6.5.0-1-amd64' || return 1
	# A leftover directory of a removed kernel is no kernel.
	! grep -q 6.0.0-9 "$TMPD/doc.out" || { cat "$TMPD/doc.out"; return 1; }
	rm "$H/lib/modules/6.1.0-18-amd64/updates/dkms/sch_desync.ko"
	printf 'ELF\0version=0.9\0' > "$H/lib/modules/6.1.0-17-amd64/updates/dkms/sch_desync.ko"
	doctor_on "$H"
	doctor_says 2 \
		'fail dkms: 6.1.0-18-amd64 (running): no sch_desync module built' \
		'     fix: dkms autoinstall -k 6.1.0-18-amd64' \
		"warn dkms: 6.1.0-17-amd64: sch_desync 0.9 built, tc's q_desync.so is 1.0"
}

doctor_txq()
{
	fresh_host txq
	printf 'eth0 desync 8001: root\n' > "$H/qdiscs"
	doctor_on "$H"
	doctor_says 1 \
		'warn txq: eth0: one desync at the root of 4 TX queues: every packet takes its one lock' \
		'     fix: desync-apply eth0  # one desync per TX queue under mq (DESYNC_MQ=auto)' || return 1
	printf 'eth0 mq 1: root\neth0 desync 8001: 1:1\neth0 desync 8002: 1:2\neth0 fq_codel 8003: 1:3\n' > "$H/qdiscs"
	doctor_on "$H"
	doctor_says 2 \
		'fail txq: eth0: desync on 2 of 4 TX queues under mq (1:3 fq_codel, 1:4 none)' \
		'     fix: desync-apply eth0' || return 1
	printf 'eth0 mqprio 8000: root\neth0 desync 8001: 8000:1\n' > "$H/qdiscs"
	doctor_on "$H"
	doctor_says 2 '     fix: tc qdisc replace dev eth0 parent 8000:N desync  # for each TX queue N' || return 1
	# A device named that has none, and one that does not exist
	doctor_on "$H" lo nosuch0
	doctor_says 2 \
		'fail txq: lo: no desync qdisc (root none)' \
		'fail txq: no device nosuch0'
}

doctor_ecn()
{
	fresh_host ecn
	echo cubic > "$H/proc/sys/net/ipv4/tcp_congestion_control"
	echo 0 > "$H/proc/sys/net/ipv4/tcp_ecn"
	doctor_on "$H"
	doctor_says 2 \
		"fail ecn: tcp_ecn 0 and cubic: no connection is ECN-capable, desync's ce_threshold and ce_backlog mark nothing" \
		'     fix: modprobe tcp_dctcp && sysctl -w net.ipv4.tcp_congestion_control=dctcp' || return 1
	echo 1 > "$H/proc/sys/net/ipv4/tcp_ecn"
	echo 'reno cubic' > "$H/proc/sys/net/ipv4/tcp_available_congestion_control"
	doctor_on "$H"
	doctor_says 1 \
		"warn ecn: cubic by default (tcp_ecn 1): it halves its window at each CE mark desync sets at DCTCP's step (and this kernel has no tcp_dctcp)" || return 1
	# Marking off: CC and tcp_ecn are the job's own business.
	sed -i 's/\(desync [^ ]* [^ ]*\)/\1 ce_threshold=0 ce_backlog=0/' "$H/qdiscs"
	doctor_on "$H"
	doctor_says 0 \
		"ok   ecn: desync's ECN marking is off (ce_threshold 0, ce_backlog 0): tcp_ecn 1, cubic not needed"
}

# Counters from two samples: what grew warns, what did not is fine.
doctor_counters()
{
	fresh_host counters
	cat > "$H/qdiscs" <<-'EOS'
	eth0 mq 0: root
	eth0 desync 8001: :1 drops=10 drop_overlimit=10 early_release=2
	eth0 desync 8002: :2 drops=5 drop_overlimit=5 early_release=3
	eth0 desync 8003: :3
	eth0 desync 8004: :4
	--
	eth0 desync 8001: :1 drops=10 drop_overlimit=10 early_release=5
	eth0 desync 8002: :2 drops=7 drop_overlimit=7 early_release=3
	eth0 desync 8003: :3 early_release=4
	eth0 desync 8004: :4 arm=always bursts=10 hold_time=30000000
	EOS
	doctor_on "$H"
	doctor_says 1 \
		'warn early_release: eth0 parent :1: early_release grew by 3 in 1s: hold_limit 1024p ends holds before their time' \
		'     fix: tc qdisc change dev eth0 parent :1 desync hold_limit 2048' \
		'warn early_release: eth0 parent :3: early_release grew by 4 in 1s: hold_limit 1024p ends holds before their time' \
		'warn drops: eth0 parent :2: 2 drops in 1s (drop_overlimit 2): limit 10000p reached' \
		'     fix: tc qdisc change dev eth0 parent :2 desync limit 20000' \
		'warn hold: eth0 parent :4: mean hold 3000us above half of offset_max 4000us: groups widened after timeouts' \
		'     fix: tc qdisc change dev eth0 parent :4 desync widen 0  # where the timeouts are not collisions (tracepoint desync:desync_burst)' || return 1
	# Counters that stand still, however high, are no finding.
	! grep -q 'parent :1: .*drops' "$TMPD/doc.out" || { cat "$TMPD/doc.out"; return 1; }
	# A fixed slot may hold up to offset_max: no finding.
	sed -i 's/^eth0 desync 8004: :4 .*/& slots=4 slot=3/' "$H/qdiscs"
	doctor_on "$H"
	! grep -q '^warn hold' "$TMPD/doc.out" || { cat "$TMPD/doc.out"; return 1; }
}

# arm loss: only armed groups hold, so hold_time over every burst start
# hides a widened window; over the held bursts, bounded by the packets
# held, it shows.
doctor_arm_hold()
{
	fresh_host arm-hold
	cat > "$H/qdiscs" <<-'EOS'
	eth0 mq 0: root
	eth0 desync 8001: :1 arm=loss bursts=1000 held=10 hold_time=60000000
	eth0 desync 8002: :2 arm=loss bursts=1000 held=0
	eth0 desync 8003: :3 arm=loss
	eth0 desync 8004: :4 arm=loss
	EOS
	doctor_on "$H"
	doctor_says 1 \
		'warn hold: eth0 parent :1: mean hold of a held burst at least 6000us above half of offset_max 4000us: groups widened after timeouts' \
		'     fix: tc qdisc change dev eth0 parent :1 desync widen 0  # where the timeouts are not collisions (tracepoint desync:desync_burst)' || return 1
	sed -i 's/held=10 /held=400 /' "$H/qdiscs"
	doctor_on "$H"
	doctor_says 0 \
		'ok   hold: eth0: no window seen widened on 4 desync qdiscs (arm loss: hold_time over min(held, bursts), the least mean hold of a held burst, within half of offset_max)' || return 1
	# A module that counts held bursts: 10 of the 400 packets' bursts
	# were held, 6 ms each, which the bound would read as 150us.
	sed -i 's/held=400 /& held_bursts=10 /; s/held=0$/& held_bursts=0/; s/:[34] arm=loss$/& held_bursts=0/' "$H/qdiscs"
	doctor_on "$H"
	doctor_says 1 \
		'warn hold: eth0 parent :1: mean hold of a held burst 6000us above half of offset_max 4000us: groups widened after timeouts' || return 1
	sed -i 's/held_bursts=10 /held_bursts=400 /' "$H/qdiscs"
	doctor_on "$H"
	doctor_says 0 \
		'ok   hold: eth0: no window seen widened on 4 desync qdiscs (arm loss: hold_time over held_bursts, the mean hold of a held burst, within half of offset_max)'
}

# --json: an array of findings with the fields the text has.
doctor_json()
{
	fresh_host json
	printf 'eth0 desync 8001: root\n' > "$H/qdiscs"
	doctor_on "$H" --json
	[ "$DOC_RC" -eq 1 ] || { echo "exit $DOC_RC, want 1"; return 1; }
	/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d, list) and d, d
for f in d:
    assert set(f) <= {"check", "severity", "dev", "message", "fix"}, f
    assert f["severity"] in ("ok", "warn", "fail"), f
    assert f["severity"] != "ok" or "fix" not in f, f
t = [f for f in d if f["check"] == "txq"]
assert t == [{"check": "txq", "severity": "warn", "dev": "eth0",
              "message": "eth0: one desync at the root of 4 TX queues: every packet takes its one lock",
              "fix": "desync-apply eth0  # one desync per TX queue under mq (DESYNC_MQ=auto)"}], t
' "$TMPD/doc.out" || { cat "$TMPD/doc.out"; return 1; }
}

# The command itself on this host: Nagios statuses, 3 when it cannot run.
doctor_cli()
{
	local rc

	"$CTL" doctor --interval 0.01 --json > "$TMPD/dj" 2> /dev/null
	rc=$?
	[ "$rc" -le 2 ] || { echo "doctor on this host: exit $rc"; return 1; }
	/usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$TMPD/dj" || return 1
	"$CTL" doctor --count 0 > /dev/null 2>&1
	rc=$?
	[ "$rc" -eq 3 ] || { echo "doctor usage error: exit $rc, want 3"; return 1; }
	TC=/nonexistent/tc "$CTL" doctor --interval 0.01 > "$TMPD/dt" 2>&1
	rc=$?
	[ "$rc" -eq 2 ] && grep -qxF 'fail version: cannot run /nonexistent/tc' "$TMPD/dt" ||
		{ echo "exit $rc"; cat "$TMPD/dt"; return 1; }
}

# ----------------------------------------------------------------- advise

# /proc/net/netstat and /proc/net/snmp of sample N (0 or 1) of HOST, as
# the kernel lays them out, with the counters NAME=VALUE (TcpExt's, Tcp's
# RetransSegs, IpExt's InCEPkts) and 0 for the others.
net_sample()	# HOST N NAME=VALUE...
{
	local d=$1/$2/proc/net kv
	local -A c=([TCPTimeouts]=0 [TCPLossProbes]=0 [TCPLossProbeRecovery]=0
		    [TCPDelivered]=0 [TCPDeliveredCE]=0 [InCEPkts]=0 [RetransSegs]=0)

	for kv in "${@:3}"; do
		c[${kv%%=*}]=${kv#*=}
	done
	mkdir -p "$d"
	printf 'TcpExt: SyncookiesSent TCPTimeouts TCPLossProbes TCPLossProbeRecovery TCPDelivered TCPDeliveredCE\nTcpExt: 0 %s %s %s %s %s\nIpExt: InNoRoutes InCEPkts\nIpExt: 0 %s\n' \
		"${c[TCPTimeouts]}" "${c[TCPLossProbes]}" "${c[TCPLossProbeRecovery]}" \
		"${c[TCPDelivered]}" "${c[TCPDeliveredCE]}" "${c[InCEPkts]}" > "$d/netstat"
	printf 'Ip: Forwarding DefaultTTL\nIp: 1 64\nTcp: RtoAlgorithm MaxConn RetransSegs\nTcp: 1 -1 %s\n' \
		"${c[RetransSegs]}" > "$d/snmp"
}

# A host in $TMPD/advise-NAME whose eth0 has desync with arm ARM on two
# TX queues under mq, each of which starts BURSTS/2 bursts, holding
# 1.5 ms each, in the interval, with KEY=VALUE (test-fixture.h) on both
# in the second sample; its TCP counters are those of net_sample, from 0.
advise_host_arm()	# NAME ARM BURSTS KEY=VALUE...
{
	local arm=$2 b=$(($3 / 2)) q

	H=$TMPD/advise-$1
	rm -rf "$H"
	mkdir -p "$H"
	shift 3
	{
		echo 'eth0 mq 0: root'
		for q in 1 2; do
			echo "eth0 desync 800$q: :$q arm=$arm bursts=1000 hold_time=1500000000"
		done
		echo --
		for q in 1 2; do
			echo "eth0 desync 800$q: :$q arm=$arm bursts=$((1000 + b)) hold_time=$((1500000 * (1000 + b))) $*"
		done
	} > "$H/qdiscs"
	net_sample "$H" 0 TCPTimeouts=50 TCPDeliveredCE=70 TCPDelivered=100000
}

# ... with arm always: every burst start held.
advise_host()	# NAME BURSTS KEY=VALUE...
{
	advise_host_arm "$1" always "${@:2}"
}

# Runs test-advise on HOST with ARGS, as doctor_on does.
advise_on()	# HOST ARG...
{
	"$HERE/test-advise" "$@" > "$TMPD/doc.out" 2>&1
	DOC_RC=$?
}

# 12 timeouts in 600 bursts: the bursts collide; with CE echoes it is
# congestion, without them maybe a lossy link.  widen on: a wider base
# window; widen 0: turn it on.
advise_collide()
{
	advise_host collide 600
	net_sample "$H" 1 TCPTimeouts=62 TCPDeliveredCE=70 TCPDelivered=200000
	advise_on "$H"
	doctor_says 1 \
		'ok   sample: in 10s: 600 burst starts held by desync, 12 TCP retransmit timeouts, 0 segments retransmitted, 0 of 0 loss probes repaired a loss, 0 CE echoes (0 marked by desync), 0 CE received' \
		"warn collide: 12 TCP retransmit timeouts in 600 burst starts (0.020 a burst, from 0.01): the held bursts still collide, or packets are lost elsewhere: no CE echo beyond desync's own, check the switch ports' drops and the links' errors" \
		'     fix: tc qdisc change dev eth0 parent :N desync offset_max 8000us  # for each TX queue N or slots by rank (tc-desync(8))' || return 1
	net_sample "$H" 1 TCPTimeouts=62 TCPDeliveredCE=900 TCPDelivered=200000
	sed -i '/^--$/,$ s/$/ ce_mark=100 widen=0/' "$H/qdiscs"
	advise_on "$H"
	doctor_says 1 \
		"warn collide: 12 TCP retransmit timeouts in 600 burst starts (0.020 a burst, from 0.01): the held bursts still collide, and with CE echoes: congestion" \
		'     fix: tc qdisc change dev eth0 parent :N desync widen 7  # for each TX queue N a group that times out widens its window'
}

# No timeout, and no CE echo but desync's own marks, in 600 bursts: no
# collision seen, which is also what working holds look like; the fix is
# the experiment that tells the two apart.
advise_quiet()
{
	advise_host quiet 600 ce_mark=3000
	net_sample "$H" 1 TCPTimeouts=50 TCPDeliveredCE=$((70 + 2 * 3000 + 50)) TCPDelivered=200000
	advise_on "$H"
	doctor_says 1 \
		"warn collide: no collision seen in 600 burst starts (0 timeouts, 0.08 CE echoes a burst beyond desync's own): nothing collides here, or desync's holds already prevent it, which this host cannot tell apart" \
		'     fix: tc qdisc change dev eth0 parent :N desync offset_max 0  # for each TX queue N for a while: if advise still sees no collision, desync only costs here (desync-apply --remove DEV)' \
		'ok   cost: eth0: a hold costs 1.50 ms a burst on average in the interval, offset_max 4.00 ms; a step that waits for every host pays the latest host'"'"'s hold, up to offset_max'
}

# CE echoes beyond desync's own, or tail losses a probe repaired, and no
# timeout: congestion that desync may keep short; nothing to change.
advise_congested()
{
	advise_host congested 600 ce_mark=3000
	net_sample "$H" 1 TCPTimeouts=50 TCPDeliveredCE=$((70 + 2 * 3000 + 600)) TCPDelivered=200000
	advise_on "$H"
	doctor_says 0 \
		"ok   collide: 600 burst starts met congestion (1.00 CE echoes a burst beyond desync's own, 0 tail losses a probe repaired) and 0 timed out: desync may be what keeps them short; a host at offset_max 0 beside it would tell" || return 1
	net_sample "$H" 1 TCPTimeouts=50 TCPDeliveredCE=70 TCPLossProbes=40 TCPLossProbeRecovery=6 RetransSegs=40
	advise_on "$H"
	doctor_says 0 \
		"ok   collide: 600 burst starts met congestion (0.00 CE echoes a burst beyond desync's own, 6 tail losses a probe repaired) and 0 timed out: desync may be what keeps them short; a host at offset_max 0 beside it would tell"
}

# Too few bursts to rule collisions out, and none at all.
advise_few()
{
	advise_host few 200
	net_sample "$H" 1 TCPTimeouts=50 TCPDeliveredCE=70
	advise_on "$H"
	doctor_says 0 \
		'ok   collide: 0 TCP retransmit timeouts in 200 burst starts: too few bursts to rule collisions out (300 needed); run it longer (--interval)' || return 1
	advise_host idle 0
	net_sample "$H" 1 TCPTimeouts=55
	advise_on "$H"
	doctor_says 0 \
		'ok   collide: no burst started in 10s: nothing to judge; run it while the job runs its steps' \
		'ok   cost: eth0: a hold costs 1.50 ms a burst on average since the qdisc was made, offset_max 4.00 ms; a step that waits for every host pays the latest host'"'"'s hold, up to offset_max'
}

# Holds that widened, holds ended early, drops.
advise_holds()
{
	advise_host holds 600 hold_time=$((1500000000 + 300 * 2500000)) early_release=20 drops=3
	net_sample "$H" 1 TCPTimeouts=50 TCPDeliveredCE=600070
	advise_on "$H"
	doctor_says 1 \
		'ok   cost: eth0: a hold costs 2.50 ms a burst on average in the interval, offset_max 4.00 ms; a step that waits for every host pays the latest host'"'"'s hold, up to offset_max; above half of it: groups widened after timeouts (widen)' \
		'warn early_release: eth0: 40 holds of 600 burst starts ended early (from 0.05 a burst): hold_limit 1024p releases bursts before their offset' \
		'     fix: tc qdisc change dev eth0 parent :N desync hold_limit 2048  # for each TX queue N' \
		'warn drops: eth0: 6 drops in 10s: limit 10000p reached' \
		'     fix: tc qdisc change dev eth0 parent :N desync limit 20000  # for each TX queue N' || return 1
	# Below 1 in 20 bursts, early releases are no finding.
	sed -i '/^--$/,$ s/early_release=20/early_release=14/' "$H/qdiscs"
	advise_on "$H"
	grep -qxF 'ok   early_release: eth0: 28 holds ended early in 10s' "$TMPD/doc.out" ||
		{ cat "$TMPD/doc.out"; return 1; }
}

# arm loss: most burst starts are not held, and xstats count the packets
# enqueued held, not held bursts; the sample says which it counted.
advise_arm_sample()
{
	advise_host_arm arm-sample loss 600 held=40 hold_time=$((1500000000 + 20 * 1500000))
	net_sample "$H" 1 TCPTimeouts=50 TCPDeliveredCE=70 TCPDelivered=200000
	advise_on "$H"
	has_lines "$TMPD/doc.out" \
		'ok   sample: in 10s: 600 burst starts seen by desync with arm loss, 80 packets enqueued while their group was held, 0 TCP retransmit timeouts, 0 segments retransmitted, 0 of 0 loss probes repaired a loss, 0 CE echoes (0 marked by desync), 0 CE received'
}

# arm loss, timeout or collision, and no group armed: nothing held, nothing marked,
# whatever the bursts met; desync cost nothing, there is nothing to fix,
# and no number of bursts is needed to say so.
advise_disarmed()
{
	advise_host_arm disarmed loss 600 held=0 hold_time=1500000000
	net_sample "$H" 1 TCPTimeouts=50 TCPDeliveredCE=70 TCPDelivered=200000
	advise_on "$H"
	doctor_says 0 \
		"ok   collide: no burst start held in 10s (arm loss; 600 burst starts, 0 timeouts, 0.00 CE echoes a burst): desync cost nothing here, no hold and no CE mark of its own; a group holds from the burst after one of its bursts carried a loss" || return 1
	advise_host_arm disarmed-few timeout 200 held=0 hold_time=1500000000
	net_sample "$H" 1 TCPTimeouts=50 TCPDeliveredCE=270 TCPDelivered=200000
	advise_on "$H"
	doctor_says 0 \
		"ok   collide: no burst start held in 10s (arm timeout; 200 burst starts, 0 timeouts, 1.00 CE echoes a burst): desync cost nothing here, no hold and no CE mark of its own; a group holds from the burst after one of its bursts took a retransmit timeout after another sign of loss" || return 1
	advise_host_arm disarmed-collision collision 600 held=0 hold_time=1500000000
	net_sample "$H" 1 TCPTimeouts=50 TCPDeliveredCE=70 TCPDelivered=200000
	advise_on "$H"
	doctor_says 0 \
		"ok   collide: no burst start held in 10s (arm collision; 600 burst starts, 0 timeouts, 0.00 CE echoes a burst): desync cost nothing here, no hold and no CE mark of its own; a group holds from the burst after one of its bursts carried a loss with a sign of a collision (ECN echoes, a run of segments lost, a second resend after a timeout, a tail loss probe after one of these)"
}

# arm loss, groups that held, and no collision seen: nothing collides or
# the holds prevent it, as with arm always, but the groups narrow back
# to no hold by themselves: no offset_max 0 to try.
advise_armed_quiet()
{
	advise_host_arm armed-quiet loss 600 held=40 hold_time=$((1500000000 + 20 * 1500000)) ce_mark=50
	net_sample "$H" 1 TCPTimeouts=50 TCPDeliveredCE=$((70 + 100 + 30)) TCPDelivered=200000
	advise_on "$H"
	doctor_says 0 \
		"ok   collide: no collision seen in 600 burst starts (0 timeouts, 0.05 CE echoes a burst beyond desync's own): nothing collides here, or the holds prevent it; with arm loss the groups that hold narrow back to no hold on their own, a step in about 1024 of their burst starts, unless they lose again"
}

# arm loss, timeout or collision, timeouts and no burst start held: the collisions
# that arm the groups, not held bursts that still collide; once groups
# hold, timeouts are a warning again, as with arm always.
advise_arming()
{
	advise_host_arm arming loss 600 held=0 hold_time=1500000000
	net_sample "$H" 1 TCPTimeouts=62 TCPDeliveredCE=900 TCPDelivered=200000
	advise_on "$H"
	doctor_says 0 \
		"ok   collide: 12 TCP retransmit timeouts in 600 burst starts, none held (arm loss): the collisions that arm the groups, which hold from the burst after one that carried a loss; run advise again to see whether the held bursts still collide" || return 1
	advise_host_arm arming-timeout timeout 600 held=0 hold_time=1500000000
	net_sample "$H" 1 TCPTimeouts=62 TCPDelivered=200000
	advise_on "$H"
	doctor_says 0 \
		"ok   collide: 12 TCP retransmit timeouts in 600 burst starts, none held (arm timeout): the collisions that arm the groups, which hold from the burst after one that took a retransmit timeout after another sign of loss; run advise again to see whether the held bursts still collide" || return 1
	advise_host_arm arming-collision collision 600 held=0 hold_time=1500000000
	net_sample "$H" 1 TCPTimeouts=62 TCPDelivered=200000
	advise_on "$H"
	doctor_says 0 \
		"ok   collide: 12 TCP retransmit timeouts in 600 burst starts, none held (arm collision): the collisions that arm the groups, which hold from the burst after one that carried a loss with a sign of a collision (ECN echoes, a run of segments lost, a second resend after a timeout, a tail loss probe after one of these); run advise again to see whether the held bursts still collide" || return 1
	advise_host_arm armed loss 600 held=40 hold_time=$((1500000000 + 20 * 1500000)) widen=7
	net_sample "$H" 1 TCPTimeouts=62 TCPDelivered=200000
	advise_on "$H"
	doctor_says 1 \
		"warn collide: 12 TCP retransmit timeouts in 600 burst starts (0.020 a burst, from 0.01): the held bursts still collide, or packets are lost elsewhere: no CE echo beyond desync's own, check the switch ports' drops and the links' errors" \
		'     fix: tc qdisc change dev eth0 parent :N desync offset_max 8000us  # for each TX queue N or slots by rank (tc-desync(8))'
}

# With any arm but always widen counts the armed window as its first
# step: widen 1 widens nothing, and the fix is widen 7 as for widen 0.
advise_arm_widen()
{
	advise_host_arm arm-widen loss 600 held=40 hold_time=$((1500000000 + 20 * 1500000)) widen=1
	net_sample "$H" 1 TCPTimeouts=62 TCPDelivered=200000
	advise_on "$H"
	doctor_says 1 \
		'     fix: tc qdisc change dev eth0 parent :N desync widen 7  # for each TX queue N a group that times out widens its window' || return 1
	# arm always: widen 1 widens the window to two offset_max already.
	advise_host_arm always-widen always 600 widen=1
	net_sample "$H" 1 TCPTimeouts=62 TCPDelivered=200000
	advise_on "$H"
	doctor_says 1 \
		'     fix: tc qdisc change dev eth0 parent :N desync offset_max 8000us  # for each TX queue N or slots by rank (tc-desync(8))'
}

# arm loss: the cost of the held bursts, not diluted by the burst starts
# no group held.  The module counts held packets, not held bursts, so
# those bound the held bursts from above, their mean hold from below.
advise_armed_cost()
{
	advise_host_arm armed-cost loss 600 held=40 hold_time=$((1500000000 + 20 * 1500000))
	net_sample "$H" 1 TCPTimeouts=50 TCPDelivered=200000
	advise_on "$H"
	doctor_says 0 \
		'ok   cost: eth0: arm loss: 60.00 ms of holds in the interval, at most 80 of 600 burst starts held (80 packets held), at least 0.75 ms each; a step that waits for every host pays the latest host'"'"'s hold: up to offset_max 4.00 ms in an armed group, more if widened, none in others' || return 1
	# A few held bursts whose holds average above half of offset_max:
	# windows timeouts widened, which 60 ms over 600 bursts would hide.
	advise_host_arm armed-wide loss 600 held=5 hold_time=$((1500000000 + 5 * 6000000))
	net_sample "$H" 1 TCPTimeouts=50 TCPDelivered=200000
	advise_on "$H"
	doctor_says 0 \
		'ok   cost: eth0: arm loss: 60.00 ms of holds in the interval, at most 10 of 600 burst starts held (10 packets held), at least 6.00 ms each; a step that waits for every host pays the latest host'"'"'s hold: up to offset_max 4.00 ms in an armed group, more if widened, none in others; above half of it: groups widened after timeouts (widen)' || return 1
	advise_host_arm armed-none timeout 600 held=0 hold_time=1500000000
	net_sample "$H" 1 TCPTimeouts=50 TCPDelivered=200000
	advise_on "$H"
	doctor_says 0 \
		'ok   cost: eth0: arm timeout: none of 600 burst starts held in the interval: no hold to pay, a step waits for no hold of this host'"'"'s' || return 1
	# A module that counts held bursts, in both samples: 40 held, two
	# packets each, 1.50 ms each, not "at least 0.75 ms".
	advise_host_arm armed-exact loss 600 held=40 held_bursts=1020 hold_time=$((1500000000 + 20 * 1500000))
	sed -i '0,/^--$/ s/ hold_time=1500000000$/& held_bursts=1000/' "$H/qdiscs"
	net_sample "$H" 1 TCPTimeouts=50 TCPDelivered=200000
	advise_on "$H"
	doctor_says 0 \
		'ok   sample: in 10s: 600 burst starts seen by desync with arm loss, 40 of them held, 0 TCP retransmit timeouts, 0 segments retransmitted, 0 of 0 loss probes repaired a loss, 0 CE echoes (0 marked by desync), 0 CE received' \
		'ok   cost: eth0: arm loss: 60.00 ms of holds in the interval, 40 of 600 burst starts held (80 packets held), 1.50 ms each on average; a step that waits for every host pays the latest host'"'"'s hold: up to offset_max 4.00 ms in an armed group, more if widened, none in others' || return 1
	# Only the second sample has it (the module was replaced): the bound.
	sed -i '0,/^--$/ s/ held_bursts=1000$//' "$H/qdiscs"
	advise_on "$H"
	doctor_says 0 \
		'ok   cost: eth0: arm loss: 60.00 ms of holds in the interval, at most 80 of 600 burst starts held (80 packets held), at least 0.75 ms each; a step that waits for every host pays the latest host'"'"'s hold: up to offset_max 4.00 ms in an armed group, more if widened, none in others'
}

# A device named without desync fails; --json is doctor's array.
advise_json()
{
	advise_host json 600
	net_sample "$H" 1 TCPTimeouts=62
	advise_on "$H" --json eth0 eth1
	[ "$DOC_RC" -eq 2 ] || { echo "exit $DOC_RC, want 2"; cat "$TMPD/doc.out"; return 1; }
	/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for f in d:
    assert set(f) <= {"check", "severity", "dev", "message", "fix"}, f
c = {f["check"]: f for f in d}
assert c["device"] == {"check": "device", "severity": "fail", "dev": "eth1",
                       "message": "eth1: no desync qdisc (or no such device)",
                       "fix": "desync-apply eth1"}, c["device"]
assert c["collide"]["severity"] == "warn" and "fix" in c["collide"], c["collide"]
assert c["cost"]["dev"] == "eth0", c["cost"]
' "$TMPD/doc.out" || { cat "$TMPD/doc.out"; return 1; }
}

# The command on this host reads its real counters; usage errors exit 3.
advise_cli()
{
	local rc

	"$CTL" advise --interval 0.01 --json > "$TMPD/aj" 2> /dev/null
	rc=$?
	[ "$rc" -le 2 ] || { echo "advise on this host: exit $rc"; return 1; }
	/usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$TMPD/aj" || return 1
	"$CTL" advise --interval 0 > /dev/null 2>&1
	rc=$?
	[ "$rc" -eq 3 ] || { echo "advise usage error: exit $rc, want 3"; return 1; }
}

# ------------------------------------------------------------------- top

# HOLD_AVG is the mean hold of a held burst, as doctor and advise take
# it: every burst start with arm always; with arm loss the smaller of
# held packets and burst starts, not every burst start, which would
# read 8001:'s 20 holds of 2 ms in 600 burst starts as 0.067 ms; "-"
# where nothing was held (8003:), not 0.  8004: held more packets than
# it started bursts: the bound is every burst start.  8005: a module
# that counts held bursts: 20 of them, 15 packets each, 2 ms each, where
# the bound would read 0.133 ms; 8006: the same, but its first sample
# came from the module before (reloaded): the bound, over both samples.
top_hold_avg()
{
	cat > "$TMPD/top.q" <<-'EOS'
	eth0 mq 1: root
	eth0 desync 8001: 1:1 arm=loss bursts=1000 held=0 hold_time=0
	eth0 desync 8002: 1:2 arm=always bursts=1000 held=9000 hold_time=2000000000
	eth0 desync 8003: 1:3 arm=loss bursts=1000
	eth0 desync 8004: 1:4 arm=loss bursts=1000 held=2000 hold_time=1000000000
	eth0 desync 8005: 1:5 arm=loss bursts=1000 held=100 held_bursts=50 hold_time=100000000
	eth0 desync 8006: 1:6 arm=loss bursts=1000 held=100 hold_time=100000000
	--
	eth0 desync 8001: 1:1 arm=loss bursts=1600 held=20 hold_time=40000000
	eth0 desync 8002: 1:2 arm=always bursts=1600 held=14400 hold_time=3200000000
	eth0 desync 8003: 1:3 arm=loss bursts=1600
	eth0 desync 8004: 1:4 arm=loss bursts=1600 held=3000 hold_time=1120000000
	eth0 desync 8005: 1:5 arm=loss bursts=1600 held=400 held_bursts=70 hold_time=140000000
	eth0 desync 8006: 1:6 arm=loss bursts=1600 held=400 held_bursts=70 hold_time=140000000
	EOS
	"$HERE/test-top" "$TMPD/top.q" > "$TMPD/top.out" || return 1
	has_lines "$TMPD/top.out" \
		'DEV             HANDLE  PARENT    BURSTS/s   HELD ACTIVE   HOLD_AVG      CE/s   DROPS/s   BACKLOG' \
		'eth0            8001:   1:1           60.0      0      0    2.000ms       0.0       0.0        0p' \
		'eth0            8002:   1:2           60.0      0      0    2.000ms       0.0       0.0        0p' \
		'eth0            8003:   1:3           60.0      0      0          -       0.0       0.0        0p' \
		'eth0            8004:   1:4           60.0      0      0    0.200ms       0.0       0.0        0p' \
		'eth0            8005:   1:5           60.0      0      0    2.000ms       0.0       0.0        0p' \
		'eth0            8006:   1:6           60.0      0      0    0.133ms       0.0       0.0        0p'
}

# The completion, sourced in a bash of its own: COMPREPLY for the words
# typed so far, device names from a made-up /sys/class/net.
completion()
{
	mkdir -p "$TMPD/net/eth0" "$TMPD/net/eth1" "$TMPD/net/lo"
	DESYNCCTL_SYSFS_NET=$TMPD/net bash -c '
		source "$1"
		c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _desyncctl; echo "${COMPREPLY[*]}"; }
		[ "$(c desyncctl a)" = advise ] || exit 1
		[ "$(c desyncctl "")" = "show top export doctor advise --version --help" ] || exit 2
		[ "$(c desyncctl advise eth)" = "eth0 eth1" ] || exit 3
		[ "$(c desyncctl advise eth0 --)" = "--interval --json" ] || exit 4
		[ "$(c desyncctl export --)" = "--all --output" ] || exit 5
		[ -z "$(c desyncctl top --interval "")" ] || exit 6
		complete -p desyncctl | grep -q -- "-F _desyncctl" || exit 7
	' _ "$HERE/desyncctl.bash-completion" || { echo "case $? failed"; return 1; }
}

echo "TAP version 13"
echo "1..44"
run prom_valid
run prom_values
run json_valid
run netlink_strings
run names_exact
run names_json_strict
run names_prom_valid
run text_layout
run man_renders
run man_complete
run cli_errors
run export_file
run export_missing_device
run node_exporter_scrape
run rules_check
run rules_test
run monitoring_names
run install_tree
run doctor_clean
run doctor_no_plugin
run doctor_version_mismatch
run doctor_lockdown
run doctor_dkms
run doctor_txq
run doctor_ecn
run doctor_counters
run doctor_arm_hold
run doctor_json
run doctor_cli
run advise_collide
run advise_quiet
run advise_congested
run advise_few
run advise_holds
run advise_arm_sample
run advise_disarmed
run advise_armed_quiet
run advise_arming
run advise_arm_widen
run advise_armed_cost
run advise_json
run advise_cli
run top_hold_avg
run completion
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
