#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: selftest-runner.sh [6.1|6.12 ...]      (default: 6.1 6.12)
#
# Smoke test of the VM runner itself, on each kernel: boot, exit status
# passthrough, module autoload and modprobe from the host root, network
# namespaces, the writable repository share, a panic on a stuck guest
# kernel, and detection of kernel splats (by the scanner on fake logs, and
# end to end with a forced kernel crash).
# Prints "ok N - name" / "not ok N - name" lines and a final
# "N passed, N failed" line; exits 1 if anything failed.
#
# Also run inside the guest by itself as: selftest-runner.sh --guest CWD FILE TOKEN

set -euo pipefail
# shellcheck source=tools/testing/vm/kernels.sh
source "$(dirname "$(readlink -f "$0")")/kernels.sh"

# Kernel modules the project's tests need; each must load by name.
MODULES="veth dummy sch_tbf sch_netem tcp_dctcp pktgen"

# Guest side: each check_* runs in the VM, with the --guest arguments in
# G_CWD, G_FILE and G_TOKEN.
check_modules_dir() { [ -e "/lib/modules/$(uname -r)/modules.dep" ]; }
check_cwd() { [ "$(pwd -P)" = "$G_CWD" ]; }
check_python3() { [ "$(command -v python3)" = /usr/bin/python3 ] && python3 -c 'import sys'; }
check_tmpfs_writable() { touch /tmp/x /root/x /var/tmp/x /run/x /dev/shm/x; }
check_repo_writable() { echo "$G_TOKEN" > "$G_FILE"; }

check_fq_autoload()
{
	! grep -q '^sch_fq ' /proc/modules &&
	tc qdisc add dev lo root fq &&
	grep -q '^sch_fq ' /proc/modules &&
	tc qdisc show dev lo | grep -q 'qdisc fq ' &&
	tc qdisc del dev lo root
}

check_modprobe()
{
	local m

	# shellcheck disable=SC2086 # one word per module
	modprobe -a $MODULES || return 1
	for m in $MODULES; do
		grep -q "^$m " /proc/modules || { echo "$m not loaded"; return 1; }
	done
}

# A guest stuck in its kernel panics at the first report (run.sh).
check_panic_on_hang()
{
	local f

	for f in softlockup_panic hung_task_panic panic_on_rcu_stall; do
		[ "$(cat "/proc/sys/kernel/$f")" = 1 ] || { echo "$f not set"; return 1; }
	done
}

check_netns()
{
	ip netns add x &&
	ip -n x link set lo up &&
	ip netns exec x ip link show lo | grep -q 'LOOPBACK,UP' &&
	ip netns del x
}

# Prints one "desync-check ok|fail NAME" line per check for the host side.
guest_checks()
{
	local c

	for c in modules_dir cwd python3 tmpfs_writable fq_autoload modprobe \
		 netns panic_on_hang repo_writable; do
		if "check_$c" > /tmp/check.out 2>&1; then
			echo "desync-check ok ${c//_/-}"
		else
			cat /tmp/check.out
			echo "desync-check fail ${c//_/-}"
		fi
	done
}

if [ "${1:-}" = --guest ]; then
	[ $# -eq 4 ] || exit 2
	G_CWD=$2 G_FILE=$3 G_TOKEN=$4
	guest_checks
	exit 0
fi

n=0
passed=0
failed=0
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Shows the end of a failed run's output as TAP diagnostics.
diag()
{
	tail -n "${2:-25}" "$1" | sed 's/^/# /'
}

scan_tests()
{
	local log=$out/fake.log rc

	cat > "$log" <<-'EOF'
	[    3.296002] Run /init as init process
	WARNING: this line is user output and must not count
	desync-vm-start-0
	EOF
	rc=0
	"$VM_DIR/scan-log.sh" "$log" > /dev/null || rc=$?
	result "$rc" "scan-log: clean log passes"

	cat >> "$log" <<-'EOF'
	[   12.345678] ------------[ cut here ]------------
	[   12.345679] WARNING: CPU: 1 PID: 42 at net/sched/sch_desync.c:123 desync_enqueue+0x1/0x2 [sch_desync]
	EOF
	rc=0
	"$VM_DIR/scan-log.sh" "$log" > /dev/null || rc=$?
	[ $rc -eq 1 ]
	result $? "scan-log: injected WARN is detected"

	printf '%s\n' 'partial user li[   20.000001] list_del corruption. prev->next should be ffff' > "$log"
	rc=0
	"$VM_DIR/scan-log.sh" "$log" > /dev/null || rc=$?
	[ $rc -eq 1 ]
	result $? "scan-log: list corruption inside a user line is detected"

	printf '%s\n' '[    5.100000] BUG kmalloc-64 (Tainted: G           O      ): Poison overwritten' > "$log"
	rc=0
	"$VM_DIR/scan-log.sh" "$log" > /dev/null || rc=$?
	[ $rc -eq 1 ]
	result $? "scan-log: SLUB poison report is detected"
}

kernel_tests()
{
	local k=$1 kver rc token file line name status

	if ! kver=$("$VM_DIR/fetch-kernels.sh" "$k" > "$out/fetch.log" 2>&1 &&
		    "$VM_DIR/kver.sh" "$k"); then
		result 1 "$k: fetch kernel"
		diag "$out/fetch.log"
		return
	fi

	token=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
	mkdir -p "$CACHE"
	file=$CACHE/selftest-$token
	rm -f "$file"
	rc=0
	(cd "$REPO_ROOT" && "$VM_DIR/run.sh" --kernel "$k" --timeout 300 -- \
		"$VM_DIR/selftest-runner.sh" --guest "$REPO_ROOT" "$file" "$token") \
		> "$out/run.log" 2>&1 || rc=$?
	result "$rc" "$k: boot $kver and exit 0"
	[ "$rc" -eq 0 ] || diag "$out/run.log"
	grep '^run.sh: .*boot .* s, total' "$out/run.log" | sed 's/^/# /' || true

	while read -r line; do
		status=${line#desync-check }
		name=${status#* }
		status=${status%% *}
		[ "$status" = ok ]
		result $? "$k: $name"
		[ "$status" = ok ] ||
			grep -B 10 "^desync-check fail $name\$" "$out/run.log" | diag /dev/stdin 10
	done < <(tr -d '\r' < "$out/run.log" | grep '^desync-check ')

	[ "$(cat "$file" 2>/dev/null)" = "$token" ]
	result $? "$k: guest write visible on the host"
	rm -f "$file"

	rc=0
	"$VM_DIR/run.sh" --kernel "$k" --timeout 300 -- sh -c 'exit 3' > "$out/run.log" 2>&1 || rc=$?
	[ "$rc" -eq 3 ]
	result $? "$k: exit status 3 passes through"
	[ "$rc" -eq 3 ] || diag "$out/run.log"

	# sysrq-c dereferences NULL in the kernel: the strongest splat a test can
	# cause on a stock kernel without a module of its own.
	rc=0
	"$VM_DIR/run.sh" --kernel "$k" --timeout 300 -- \
		sh -c 'echo c > /proc/sysrq-trigger; sleep 60' > "$out/run.log" 2>&1 || rc=$?
	[ "$rc" -eq 125 ] && grep -q 'kernel splat' "$out/run.log"
	result $? "$k: kernel crash fails the run"
	[ "$rc" -eq 125 ] || diag "$out/run.log"
}

kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(6.1 6.12)
for k in "${kernels[@]}"; do
	is_short_kver "$k" || { sed -n '3,13s/^# \{0,1\}//p' "$0" >&2; exit 2; }
done

echo "KTAP version 1"
scan_tests
for k in "${kernels[@]}"; do
	kernel_tests "$k"
done
echo "1..$n"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
