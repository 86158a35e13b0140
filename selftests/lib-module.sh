# SPDX-License-Identifier: GPL-2.0
#
# Loading sch_desync, shared by the selftests (selftests/lib.sh) and the
# fuzz guest (tools/testing/fuzz/guest-lib.sh): sourced, not run.
#
# Environment:
#   DESYNC_KO        module to insmod (default: modprobe sch_desync)
# shellcheck shell=bash

module_loaded()
{
	[ -d /sys/module/sch_desync ]
}

module_load()
{
	module_loaded && return 0
	if [ -n "${DESYNC_KO:-}" ]; then
		insmod "$DESYNC_KO"
	else
		modprobe sch_desync
	fi
}
