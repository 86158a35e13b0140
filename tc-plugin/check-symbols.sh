#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check-symbols.sh [PLUGIN.so]
#
# Every symbol the plugin needs must be defined by tc or by a library tc
# is linked with.  A plugin linked with -z now (as Debian's hardening
# flags do) then fails to dlopen, and tc quietly falls back to "Unknown
# qdisc" without naming the symbol; one linked lazily dies with "symbol
# lookup error" only when the missing function is first called.  Both
# seen with Debian's tc 6.1.  iproute2 has many inline helpers
# (print_uint, rta_getattr_u32, ...) that are no symbols of tc at all,
# so this is easy to get wrong.
#
# Symbols are compared with their version (memcpy@GLIBC_2.14), so a
# plugin built against a newer libc than tc's also fails here.
#
# Environment: TC (default /usr/sbin/tc).

set -eu

so=${1:-$(dirname "$0")/q_desync.so}
tc=${TC:-/usr/sbin/tc}

for f in "$so" "$tc"; do
	if [ ! -r "$f" ]; then
		echo "check-symbols: cannot read $f" >&2
		exit 1
	fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The libraries tc loads: "name => /path (addr)" or "/path (addr)"
ldd "$tc" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
		 $1 ~ /^\// { print $1 }' > "$tmp/libs"

# nm prints a default version as name@@VER; references carry name@VER
{
	nm -D --defined-only "$tc"
	while read -r lib; do
		nm -D --defined-only "$lib"
	done < "$tmp/libs"
} | awk 'NF >= 3 { print $3 }' | sed 's/@@/@/' | sort -u > "$tmp/defined"

# Weak undefined symbols (w, v) may stay unresolved; only U must resolve
nm -D --undefined-only "$so" | awk '$1 == "U" { print $2 }' |
	sort -u > "$tmp/needed"

comm -23 "$tmp/needed" "$tmp/defined" > "$tmp/missing"

if [ -s "$tmp/missing" ]; then
	echo "check-symbols: $so needs symbols that $tc does not provide:" >&2
	sed 's/^/  /' "$tmp/missing" >&2
	echo "check-symbols: tc would not load it and would report" \
	     "\"Unknown qdisc\"" >&2
	exit 1
fi

echo "check-symbols: $(wc -l < "$tmp/needed") symbols of $(basename "$so")" \
     "all resolve against $tc"
