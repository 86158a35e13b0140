#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: scan-log.sh LOGFILE
#
# Looks for kernel splats (BUG, WARNING, Oops, panics, SLUB and list
# corruption reports, stalls, stack dumps...) in a guest console log.
# Prints each offending line with its line number and exits 1 if there is
# any, 0 if the log is clean, 2 if LOGFILE cannot be read.
#
# Only kernel messages count, recognised by their printk timestamp
# (run.sh boots with printk.time=1), so a test printing "WARNING:" itself
# does not fail the run. The timestamp may follow other text on the line:
# the kernel can interleave with a half-written line of user output.

set -euo pipefail

PATTERNS=(
	'BUG:'				# BUG(), bad page faults, sleeping in atomic...
	'BUG [^ ]+ \('			# SLUB: "BUG kmalloc-64 (Tainted: G O): ..."
	'kernel BUG at'
	'WARNING:'			# WARN*(), lockdep, suspicious RCU usage
	'Oops'
	'general protection fault'
	'Kernel panic'
	'UBSAN:'
	'list_add corruption'
	'list_del corruption'
	'slab error'
	'Slab cache still has objects'
	'(Poison|Redzone|Padding) overwritten'
	'Object already free'
	'Freepointer corrupt'
	'refcount_t:'
	'double free'
	'detected stalls?'		# RCU stalls
	'blocked for more than'		# hung tasks
	'soft lockup'
	'hard LOCKUP'
	'unreferenced object'		# kmemleak
	'Call Trace:'			# any other stack dump
)

if [ $# -ne 1 ]; then
	sed -n '3,14s/^# \{0,1\}//p' "$0" >&2
	exit 2
fi
if [ ! -r "$1" ]; then
	echo "${0##*/}: cannot read $1" >&2
	exit 2
fi

re=$(IFS='|'; echo "${PATTERNS[*]}")
if grep -naE "\[ *[0-9]+\.[0-9]+\].*($re)" "$1"; then
	exit 1
fi
exit 0
