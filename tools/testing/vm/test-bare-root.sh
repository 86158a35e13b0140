#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: test-bare-root.sh [6.1|6.12]      (default: 6.12)
#
# Boots the VM with a host root as bare as a fresh machine's may be: only
# /bin, /sbin, /lib*, /etc and /usr, without usr/lib/modules, /var, /root,
# /mnt, /run, /tmp, /home, /dev, /proc, /sys or the repository's own path.
# The root is put together in a private mount namespace and shared through
# DESYNC_VM_ROOT, so the machine's real root is left alone.  Passes when
# the guest reaches its command and the guest kernel's modules, the tmpfs
# directories and network namespaces work there, its kernel panics when
# stuck (run.sh), and its PID 1 powers off with no program left to run
# (a device shut down by the power-off may fail an exec).  Prints
# "ok"/"not ok" lines and "N passed, N failed"; the boot's failure reason
# on failure.
#
# Run inside the namespace by itself as: test-bare-root.sh --in-ns K

set -euo pipefail
# shellcheck source=tools/testing/vm/kernels.sh
source "$(dirname "$(readlink -f "$0")")/kernels.sh"

# The guest's checks, one "bare-check ok|fail NAME" line each.
# shellcheck disable=SC2016 # expanded by the guest's shell
GUEST_SCRIPT='
check() {
	name=$1
	shift
	if "$@" > /tmp/out 2>&1; then
		echo "bare-check ok $name"
	else
		cat /tmp/out
		echo "bare-check fail $name"
	fi
}
check modules-dir test -e "/lib/modules/$(uname -r)/modules.dep"
check modprobe modprobe dummy
check autoload sh -c "tc qdisc add dev lo root fq && tc qdisc del dev lo root"
check tmpfs-dirs touch /tmp/x /root/x /mnt/x /var/tmp/x /run/x /dev/shm/x
check netns sh -c "ip netns add t && ip netns del t"
check panic-on-hang sh -c "cd /proc/sys/kernel && grep -qx 1 softlockup_panic &&
	grep -qx 1 hung_task_panic && grep -qx 1 panic_on_rcu_stall"
# Last: hold the power-off back and hide every program from PID 1, which
# must wait all the same.  A real-time spinner, unthrottled, keeps the boot
# CPU that runs the power-off for 4 s from when it starts spinning; PID 1
# and this shell run on the other one.
hold_boot_cpu() {
	echo -1 > /proc/sys/kernel/sched_rt_runtime_us &&
	taskset -p -c 1 1 > /dev/null && taskset -p -c 1 $$ > /dev/null || return
	setsid chrt -f 99 timeout 4 chrt -f 98 taskset -c 0 sh -c \
		"echo > /tmp/spinning; while :; do :; done" \
		< /dev/null > /dev/null 2>&1 &
	for i in $(seq 50); do
		[ -e /tmp/spinning ] && return
		sleep 0.1
	done
	return 1
}
check hold-poweroff hold_boot_cpu
check hide-programs mount -t tmpfs -o mode=0755 nobin /usr/bin
'
CHECKS="modules-dir modprobe autoload tmpfs-dirs netns panic-on-hang
	hold-poweroff hide-programs"

# Bind-mounts every entry of directory $1 into $2 except the names in $3...
# Symbolic links are copied, so they resolve inside the new root.
populate()
{
	local src=$1 dst=$2 e name
	shift 2

	mkdir -p "$dst"
	for e in "$src"/*; do
		name=${e##*/}
		case " $* " in
		*" $name "*) continue ;;
		esac
		if [ -L "$e" ]; then
			cp -P "$e" "$dst/$name"
		elif [ -d "$e" ]; then
			mkdir "$dst/$name"
			mount --rbind "$e" "$dst/$name"
		elif [ -e "$e" ]; then
			touch "$dst/$name"
			mount --bind "$e" "$dst/$name"
		fi
	done
}

in_namespace()
{
	local k=$1 root e rc

	root=$(mktemp -d)
	mount -t tmpfs -o mode=0755 tmpfs "$root"
	for e in /bin /sbin /lib /lib32 /lib64 /libx32 /etc; do
		if [ -L "$e" ]; then
			cp -P "$e" "$root$e"
		elif [ -d "$e" ]; then
			mkdir "$root$e"
			mount --rbind "$e" "$root$e"
		fi
	done
	populate /usr "$root/usr" lib
	populate /usr/lib "$root/usr/lib" modules
	# A cache kept outside the repository must stay reachable.
	case $CACHE/ in
	"$REPO_ROOT"/*) ;;
	*) mkdir -p "$root$CACHE"; mount --rbind "$CACHE" "$root$CACHE" ;;
	esac

	cd "$REPO_ROOT"
	rc=0
	DESYNC_VM_ROOT=$root "$VM_DIR/run.sh" --kernel "$k" --timeout 300 -- \
		sh -c "$GUEST_SCRIPT" || rc=$?
	umount -R "$root"
	rmdir "$root"
	exit "$rc"
}

if [ "${1:-}" = --in-ns ]; then
	in_namespace "$2"
fi

k=${1:-6.12}
is_short_kver "$k" || { sed -n '3,17s/^# \{0,1\}//p' "$0" >&2; exit 2; }
need_pkgs util-linux
# Fetch outside the namespace: the kernel cache is then complete before
# the bare root is built.
kver_or_fetch "$k" > /dev/null

out=$(mktemp)
trap 'rm -f "$out" "$out.clean"' EXIT
rc=0
unshare -m --propagation private "$0" --in-ns "$k" > "$out" 2>&1 || rc=$?

n=0
passed=0
failed=0
not_in()	# PATTERN FILE
{
	! grep -q -- "$1" "$2"
}

# Runs CMD and reports its status as test NAME.
t()
{
	local name=$1 st=0

	shift
	"$@" || st=$?
	result $st "$k: bare root: $name"
}

t "guest reaches its command" grep -q '^run.sh: .*boot [0-9.]* s' "$out"
tr -d '\r' < "$out" > "$out.clean"
for c in $CHECKS; do
	t "$c" grep -qx "bare-check ok $c" "$out.clean"
done
t "powers off without a program" not_in 'Kernel panic' "$out.clean"
t "run.sh exits 0" [ "$rc" -eq 0 ]
if [ "$failed" -gt 0 ]; then
	grep -B 5 '^bare-check fail' "$out.clean" | sed 's/^/# /' || true
	tail -n 20 "$out.clean" | sed 's/^/# /'
fi
grep '^run.sh: ' "$out.clean" | tail -n 2 || true
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
