#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Stage two of the guest: PID 1 in the host's read-only root after
# switch_root; not meant to be run on the host.
#
# Runs the job's command the way a login shell on the host would, then
# reports its exit status on the console through a marker line that run.sh
# looks for, and powers off.

# shellcheck source=/dev/null
. /run/desync/job

# PID 1 must outlive the power-off: if it exits, the kernel panics with
# "Attempted to kill init!".  Once the power-off has begun, devices shut
# down under it and running a program from the 9p root may fail (6.1:
# "sleep" not found, exit 127), so it waits with builtins only: a read
# from the fifo guest-init.sh made in the tmpfs, opened for both ends so
# that nothing ever arrives.
poweroff_now()
{
	sync
	echo o > /proc/sysrq-trigger
	while :; do
		read -r -t 10 <> /run/desync/halt
	done
}

# Debian's packages and python3 first: /usr/local may hold other interpreters.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/sbin:/usr/local/bin
export HOME=/root USER=root LOGNAME=root SHELL=/bin/bash TMPDIR=/tmp
export LANG=C.UTF-8 TERM=dumb
export DESYNC_VM=1 DESYNC_KVER

if ! cd "$DESYNC_CWD"; then
	# No exit marker: run.sh reports a VM failure.
	echo "desync-vm: init: cwd $DESYNC_CWD does not exist in the guest"
	poweroff_now
fi

# Under kmemleak (the debug kernel) a leak is only ever reported by a scan,
# in a debugfs file nothing reads: scan and set aside what boot leaked,
# then have every later scan print its finds ("unreferenced object", a
# splat to run.sh) and scan once more after the job.
KMEMLEAK=/sys/kernel/debug/kmemleak
kmemleak_scan()
{
	[ -w $KMEMLEAK ] && echo scan > $KMEMLEAK
}

if kmemleak_scan; then
	echo clear > $KMEMLEAK
	echo 1 > /sys/module/kmemleak/parameters/verbose
fi

echo "$DESYNC_START_MARKER"
"$@" < /dev/null
rc=$?
# kmemleak reports no object younger than 5 s.
[ ! -w $KMEMLEAK ] || { sleep 6; kmemleak_scan; }
# Start on a fresh line: the command's last output may lack a newline.
printf '\n%s %d\n' "$DESYNC_EXIT_MARKER" "$rc"
poweroff_now
