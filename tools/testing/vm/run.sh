#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: run.sh [--kernel 6.1|6.12|debug|KVER] [--bench] [--timeout SEC] [--mem MB]
#               [--] CMD [ARGS...]
#
# Boots a cached Debian kernel under qemu (TCG) and runs CMD in it as root,
# in the caller's working directory, with the host's root filesystem shared
# read-only and this repository shared read-write at the same path.
#
#   --kernel   kernel to boot (default 6.1); fetched first if not cached
#              (debug: built by build-debug-kernel.sh, never fetched)
#   --bench    boot without slub_debug, which slows the network path ~10x
#   --timeout  seconds before the VM is killed (default 900)
#   --mem      guest memory in MiB (default 2048)
#
# The console is printed live and saved under $DESYNC_CACHE/vm-logs/.
# Exit status: CMD's own, or
#   124  the VM ran out of time
#   125  the VM died before CMD finished (panic, crash) or the kernel log
#        has a splat (WARNING, BUG, Oops...), whatever CMD returned
#   130  run.sh was interrupted (INT, TERM, HUP)
#     2  usage error
# Inside, DESYNC_VM=1 and DESYNC_KVER are set; /tmp, /run, /var/tmp, /root
# and /mnt are fresh tmpfs, so CMD cannot rely on host files there.
# DESYNC_VM_ROOT (default /) is the directory shared as the guest's root.
# When the guest fails before CMD starts, the last line says why:
#   run.sh: guest init failed: REASON
# and when it times out or dies later (status 124, 125):
#   run.sh: VM failed: REASON

set -euo pipefail
# shellcheck source=tools/testing/vm/kernels.sh
source "$(dirname "$(readlink -f "$0")")/kernels.sh"

usage()
{
	sed -n '3,30s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

kernel=6.1
bench=0
timeout=900
mem=2048

while [ $# -gt 0 ]; do
	case $1 in
	--kernel) [ $# -ge 2 ] || usage; kernel=$2; shift 2 ;;
	--kernel=*) kernel=${1#*=}; shift ;;
	--bench) bench=1; shift ;;
	--timeout) [ $# -ge 2 ] || usage; timeout=$2; shift 2 ;;
	--timeout=*) timeout=${1#*=}; shift ;;
	--mem) [ $# -ge 2 ] || usage; mem=$2; shift 2 ;;
	--mem=*) mem=${1#*=}; shift ;;
	-h|--help) usage ;;
	--) shift; break ;;
	-*) usage ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage
case $timeout$mem in
*[!0-9]*) usage ;;
esac

t_start=$EPOCHREALTIME

host_root=${DESYNC_VM_ROOT:-/}
[ -d "$host_root" ] || die "DESYNC_VM_ROOT $host_root is not a directory"

kver=$(kver_or_fetch "$kernel")
need_pkgs qemu-system-x86
initrd=$("$VM_DIR/mkinitramfs.sh" "$kver")
moddir=$(kmoddir "$kver")
cwd=$(pwd -P)
kimage=$(kroot "$kver")/boot/vmlinux-$kver
# fetch-kernels.sh extracts the ELF for a faster PVH boot where it can.
[ -e "$kimage" ] || kimage=$(kroot "$kver")/boot/vmlinuz-$kver

# The guest sees host paths through the read-only root share, except where
# it mounts fresh tmpfs; fail here rather than with a confusing guest error.
case $cwd/ in
"$REPO_ROOT"/*) ;;
*) ! hidden_in_guest "$cwd" || { warn "cwd $cwd is hidden by tmpfs in the guest; run from elsewhere"; exit 2; } ;;
esac
case $moddir/ in
"$REPO_ROOT"/*) ;;
*) ! hidden_in_guest "$moddir" || { warn "DESYNC_CACHE must not be under $GUEST_TMPFS_DIRS"; exit 2; } ;;
esac

run_dir=$(mktemp -d)
trap 'rm -rf "$run_dir"' EXIT

# A fresh token per run, so output of an earlier run, or CMD echoing the
# marker text, cannot be mistaken for the result.
token=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
mkdir "$run_dir/job"
# POSIX sh, read by busybox in the initramfs and by bash after switch_root.
shq()
{
	printf "'%s'" "${1//\'/\'\\\'\'}"
}
{
	echo "DESYNC_START_MARKER=desync-vm-start-$token"
	echo "DESYNC_EXIT_MARKER=desync-vm-exit-$token"
	echo "DESYNC_REPO=$(shq "$REPO_ROOT")"
	echo "DESYNC_MODDIR=$(shq "$moddir")"
	echo "DESYNC_CWD=$(shq "$cwd")"
	echo "DESYNC_KVER=$(shq "$kver")"
	printf 'set --'
	for a in "$@"; do
		printf ' %s' "$(shq "$a")"
	done
	echo
} > "$run_dir/job/job"

# The kernel unpacks concatenated cpio archives in order: the cached base
# plus a tiny per-run one with the job file, so the base is never rebuilt.
(cd "$run_dir/job" && echo job | cpio --quiet -o -H newc -R 0:0) > "$run_dir/job.cpio"
cat "$initrd" "$run_dir/job.cpio" > "$run_dir/initrd"

# A guest stuck in its kernel (soft lockup, RCU stall, hung task) fails
# the run as a splat would, but would only end at --timeout: panic at the
# first report instead, with its trace in the log, and qemu exits.
cmdline="console=ttyS0 printk.time=1 panic_on_warn=1 oops=panic panic=-1"
cmdline="$cmdline softlockup_panic=1 hung_task_panic=1"
cmdline="$cmdline sysctl.kernel.panic_on_rcu_stall=1 rdinit=/init"
[ $bench -eq 1 ] || cmdline="$cmdline slub_debug=FZPU"

mkdir -p "$CACHE/vm-logs"
log=$CACHE/vm-logs/$kver-$(date +%Y%m%d-%H%M%S)-$$.log
ln -sfn "${log##*/}" "$CACHE/vm-logs/last.log"
# Keep the newest 200 logs; a long test campaign should not fill the disk.
find "$CACHE/vm-logs" -name '*.log' -type f -printf '%T@ %p\n' | sort -rn |
	tail -n +201 | cut -d' ' -f2- | xargs -r rm -f

# One host thread runs both vCPUs.  With a thread each, a vCPU may run a
# stale int3 of a static key's live patch after the patch ended, and the
# guest dies with "Oops: int3" (test-code-patching.sh).  Tests that add
# qdiscs, filters or timestamping sockets flip static keys all the time.
qemu=(qemu-system-x86_64
	-machine q35 -accel "tcg,thread=single" -cpu max -smp 2 -m "$mem"
	-nographic -no-reboot
	# No NIC: the guest must not reach any network but its own namespaces.
	-nic none
	-kernel "$kimage"
	-initrd "$run_dir/initrd"
	-append "$cmdline"
	-virtfs "local,path=$host_root,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$REPO_ROOT,mount_tag=repo,security_model=none,multidevs=remap")

echo "$ME: booting $kver: $*" >&2

# Streams the console to stdout and the log, and timestamps the start marker.
stream()
{
	local line

	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%$'\r'}
		# SeaBIOS clears the screen; keep its escape sequences out of CI logs.
		if [[ $line == *$'\e'* ]]; then
			line=${line//$'\e'\[*([0-9;?])[A-Za-z]/}
			line=${line//$'\e'c/}
		fi
		printf '%s\n' "$line"
		printf '%s\n' "$line" >&3
		case $line in
		*"desync-vm-start-$token"*) echo "$EPOCHREALTIME" > "$run_dir/t_boot" ;;
		esac
	done 3> "$log"
}

# Bash runs traps only once a foreground job ends, so the VM runs as a
# background job: a TERM from make or CI then stops qemu at once instead of
# leaving it running until its own timeout.
stop_vm()
{
	interrupted=1
	if [ -s "$run_dir/qemu.pid" ]; then
		kill "$(cat "$run_dir/qemu.pid")" 2> /dev/null || true
	fi
}

shopt -s extglob
interrupted=0
t_qemu=$SECONDS
(
	# --foreground keeps qemu in our process group so ^C reaches it.
	timeout --foreground -k 10 "$timeout" "${qemu[@]}" \
		-pidfile "$run_dir/qemu.pid" < /dev/null 2>&1 | stream
	echo "${PIPESTATUS[0]}" > "$run_dir/qemu.rc"
) &
vm=$!
trap stop_vm INT TERM HUP
# wait returns early when a trapped signal arrives; wait again for the end.
while ! wait "$vm"; do
	kill -0 "$vm" 2> /dev/null || break
done
trap - INT TERM HUP
t_end=$EPOCHREALTIME
qemu_rc=$(cat "$run_dir/qemu.rc" 2> /dev/null || echo 1)
# timeout(1) does not always exit 124 when qemu dies of its TERM: the
# elapsed time tells.
timed_out=0
if [ "$qemu_rc" -eq 124 ] || [ "$qemu_rc" -eq 137 ] ||
   [ $((SECONDS - t_qemu)) -ge "$timeout" ]; then
	timed_out=1
fi
t_boot=$(cat "$run_dir/t_boot" 2> /dev/null || true)

secs()
{
	# EPOCHREALTIME is seconds.microseconds; bash has integer arithmetic only.
	local a=${1/[.,]/} b=${2/[.,]/}
	printf '%d.%02d' $(((b - a) / 1000000)) $(((b - a) % 1000000 / 10000))
}

# Why the guest failed: init's own message, else the kernel's panic, else
# the first splat, else what qemu did.
boot_failure()
{
	local r

	r=$(sed -n 's/^.*desync-vm: init: //p' "$log" | head -n 1)
	[ -n "$r" ] || r=$(grep -a -o -m 1 'Kernel panic - not syncing: .*' "$log")
	[ -n "$r" ] || r=$(printf '%s\n' "$splats" | head -n 1)
	if [ -z "$r" ]; then
		if [ -n "$t_boot" ]; then
			r="the guest died before CMD finished (qemu status $qemu_rc)"
		elif [ $timed_out -eq 1 ]; then
			r="no start marker within $timeout s"
		else
			r="qemu exited with status $qemu_rc before the start marker"
		fi
	fi
	printf '%s\n' "$r"
}

splats=
rc=$(sed -n "s/^.*desync-vm-exit-$token \([0-9][0-9]*\)\$/\1/p" "$log" | tail -n 1)
status=
if ! splats=$("$VM_DIR/scan-log.sh" "$log"); then
	what="did not finish"
	[ -z "$rc" ] || what="exited $rc"
	echo "$ME: kernel splat in the console log (CMD $what):" >&2
	printf '%s\n' "$splats" | head -n 20 >&2
	status=125
elif [ $interrupted -eq 1 ] && [ -z "$rc" ]; then
	echo "$ME: interrupted" >&2
	status=130
elif [ -z "$rc" ]; then
	if [ $timed_out -eq 1 ]; then
		echo "$ME: timed out after $timeout s" >&2
		status=124
	else
		echo "$ME: no exit status from the guest (qemu status $qemu_rc): it died before CMD finished" >&2
		status=125
	fi
else
	status=$rc
fi

if [ -n "$t_boot" ]; then
	boot=$(secs "$t_start" "$t_boot")
else
	boot=-
fi
echo "$ME: $kver: boot ${boot} s, total $(secs "$t_start" "$t_end") s, status $status, log $log" >&2
# Said last: it is otherwise buried hundreds of console lines above.
if [ -z "$t_boot" ] && [ $interrupted -eq 0 ]; then
	echo "$ME: guest init failed: $(boot_failure)" >&2
elif [ "$status" -eq 124 ]; then
	echo "$ME: VM failed: CMD did not finish within $timeout s" >&2
elif [ "$status" -eq 125 ]; then
	echo "$ME: VM failed: $(boot_failure)" >&2
fi
exit "$status"
