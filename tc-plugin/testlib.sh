# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
#
# Sourced by test-parse.sh, test-print.sh and test-roundtrip.sh: KTAP-style
# reporting and a way to run Debian's tc with the plugin and nlfake.so.
#
# Environment:
#   TC          tc to test (default /usr/sbin/tc)
#   PLUGIN_DIR  where q_desync.so and nlfake.so were built (default: the
#               folder of the scripts)
#   PYTHON      default /usr/bin/python3 (Debian's, not one first on PATH)

SRC_DIR=$(cd "$(dirname "$0")" && pwd)
PLUGIN_DIR=${PLUGIN_DIR:-$SRC_DIR}
TC=${TC:-/usr/sbin/tc}
PYTHON=${PYTHON:-/usr/bin/python3}

export LC_ALL=C

nlmsg()
{
	"$PYTHON" "$SRC_DIR/nlmsg.py" "$@"
}

for f in "$PLUGIN_DIR/q_desync.so" "$PLUGIN_DIR/nlfake.so" "$TC" "$PYTHON"; do
	if [ ! -e "$f" ]; then
		echo "Bail out! $f is missing (run make first)"
		exit 1
	fi
done

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# A private network namespace keeps the host's lo out of reach even if a
# desync module happens to be loaded; without the rights for one, the
# commands are harmless where no module is loaded.
if unshare -n true 2>/dev/null; then
	NETNS="unshare -n"
else
	NETNS=
fi

echo "TAP version 13"
n=0
passed=0
failed=0

ok()
{
	n=$((n + 1))
	passed=$((passed + 1))
	echo "ok $n - $1"
}

# not_ok NAME FILE...: report a failure with the files' contents as notes
not_ok()
{
	name=$1
	shift
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $name"
	for f in "$@"; do
		[ -s "$f" ] && sed "s|^|# $(basename "$f"): |" "$f"
	done
	return 0
}

finish()
{
	echo "1..$n"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

# run_tc ARGS...: run tc with the plugin; the requests it sends to the
# kernel land in $TMP/cap, and a dump is answered from $TMP/dump when that
# file exists.  Sets rc; output in $TMP/out and $TMP/err.
run_tc()
{
	: > "$TMP/cap"
	if [ -e "$TMP/dump" ]; then
		set -- env NLFAKE_DUMP="$TMP/dump" "$TC" "$@"
	else
		set -- "$TC" "$@"
	fi
	$NETNS env TC_LIB_DIR="$PLUGIN_DIR" NLFAKE_CAPTURE="$TMP/cap" \
		LD_PRELOAD="$PLUGIN_DIR/nlfake.so" "$@" \
		> "$TMP/out" 2> "$TMP/err"
	# shellcheck disable=SC2034 # read by the scripts sourcing this
	rc=$?
}
