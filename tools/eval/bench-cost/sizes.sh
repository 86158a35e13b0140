#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: sizes.sh [KO [VMLINUX]]
#
# Prints "name bytes" for the structures that make up a desync qdisc's
# memory: the core's (compiled here from dsched.h), and, from the BTF
# of a built sch_desync.ko and of the kernel's vmlinux when given, the
# qdisc's private area and struct Qdisc that qdisc_alloc() puts before it.
# The tables are ngroups * (group + heap_entry) bytes, allocated once per
# configuration; nothing is allocated per packet or per flow.

set -euo pipefail

HERE=$(dirname "$(readlink -f "$0")")
REPO=$(dirname "$(dirname "$(dirname "$HERE")")")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/sizes.c" <<'C'
#include <stdio.h>
#include "dsched.h"

int main(void)
{
	struct dsched s;

	printf("dsched_group %zu\n", sizeof(struct dsched_group));
	printf("heap_entry %zu\n", sizeof(*s.heap));
	printf("dsched %zu\n", sizeof(struct dsched));
	return 0;
}
C
${CC:-gcc} -O2 -Wall -I"$REPO/sch_desync" -o "$tmp/sizes" "$tmp/sizes.c"
"$tmp/sizes"

# "/* size: 304, cachelines: 5, members: 9 */" closes pahole's output.
btf_size()
{
	pahole -C "$2" "$1" 2> /dev/null | sed -n 's|.*/\* size: \([0-9]*\),.*|\1|p' | tail -n 1
}

if [ -n "${1:-}" ] && command -v pahole > /dev/null; then
	echo "desync_sched_data $(btf_size "$1" desync_sched_data)"
fi
if [ -n "${2:-}" ] && [ -e "$2" ] && command -v pahole > /dev/null; then
	echo "Qdisc $(btf_size "$2" Qdisc)"
fi
