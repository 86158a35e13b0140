#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: check-probe.sh
#
# How desync-probe's receiver counts: the accounting checks of the
# selftests ("sent = received + dropped") trust its "summary pkts".  A
# receiver stopped with SIGTERM while datagrams wait in its socket must
# still count them: they arrived, and a slow receiver (a debug kernel, a
# verbose log) lags by up to its whole receive buffer.  Runs on the
# host over loopback, without a VM or the module.
#
# Prints "ok N - case" / "not ok N - case" and "N passed, N failed";
# exits 1 when a case failed.

set -uo pipefail

REPO=$(dirname "$(readlink -f "$0")")/..
PROBE=$REPO/tools/testing/probe/desync-probe
TMP=$(mktemp -d)
pid=
cleanup()
{
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
n=0
failed=0

result()	# OK CASE
{
	n=$((n + 1))
	if [ "$1" = 1 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}

make -s -C "$REPO/tools/testing/probe" desync-probe >&2 || exit 1

# A port of the dynamic range unlikely to be taken, from the pid.
port=$((49152 + $$ % 16000))
k=500

# The receiver is stopped (SIGSTOP) before anything arrives, so every
# datagram waits in its socket; SIGTERM is then delivered as it resumes,
# before it has read any of them.
"$PROBE" recv -l 127.0.0.1 -p "$port" -t 30s -q 30s -b 4000000 -r "$TMP/ready" \
	> "$TMP/recv" 2> "$TMP/recv.err" &
pid=$!
for _ in $(seq 100); do
	[ -e "$TMP/ready" ] && break
	sleep 0.05
done
kill -STOP "$pid"
"$PROBE" send -d 127.0.0.1 -p "$port" -n 1 -k "$k" -s 64 > "$TMP/send" 2>&1
sent=$(awk '$1 == "sent" { print $7 }' "$TMP/send")
kill -TERM "$pid"
kill -CONT "$pid"
wait "$pid"
rc=$?
pid=
got=$(awk '$1 == "summary" { print $3 }' "$TMP/recv")
result "$([ "${sent:-0}" = "$k" ] && echo 1)" "the sender sent $k datagrams (sent ${sent:-none})"
result "$([ "$rc" = 0 ] && echo 1)" "a receiver stopped by SIGTERM exits 0 (rc $rc)"
result "$([ "${got:-0}" = "$k" ] && echo 1)" \
	"a receiver stopped by SIGTERM counts the $k datagrams its socket held (got ${got:-none})"

echo "$((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
