#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: test-apply.sh
#
# desync-apply's and desync@.service's tests that need neither the module
# nor systemd running, run on the host by make check: the unit as
# systemd-analyze verify loads it, its order against the network
# targets, a missing configuration failing, the roots it refuses to
# replace without --force, and what make install puts under /etc.
# desync-apply runs against lo with a tc that logs what it is asked and
# shows the root qdisc named in FAKE_ROOT: nothing on the host changes.
# Ends with "N passed, N failed".

set -uo pipefail

HERE=$(dirname "$(readlink -f "$0")")
# shellcheck source=tools/lib/common.sh
source "$HERE/../../lib/common.sh"

need_pkgs systemd

APPLY=$HERE/desync-apply
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT
N=0
PASS=0
FAIL=0

run()	# NAME
{
	local out l

	N=$((N + 1))
	if out=$("$1" 2>&1); then
		echo "ok $N $1"
		PASS=$((PASS + 1))
	else
		echo "not ok $N $1"
		while IFS= read -r l; do
			echo "# $l"
		done <<< "$out"
		FAIL=$((FAIL + 1))
	fi
}

mkdir -p "$TMPD/conf" "$TMPD/empty"
echo 'DESYNC_OPTS="offset_max 2ms"' > "$TMPD/conf/lo.conf"
cat > "$TMPD/tc" <<'EOF'
#!/bin/sh
echo "tc $*" >> "$TC_LOG"
case "$*" in
"qdisc show dev "*" root")
	[ -z "$FAKE_ROOT" ] || echo "qdisc $FAKE_ROOT 8001: root refcnt 2"
	;;
esac
exit 0
EOF
chmod +x "$TMPD/tc"

# desync-apply ARG... with the fake tc and FAKE_ROOT as lo's root; its
# standard error in $TMPD/err, what it asked tc in $TMPD/tc.log.
apply()	# FAKE_ROOT ARG...
{
	local root=$1

	shift
	: > "$TMPD/tc.log"
	FAKE_ROOT=$root TC_LOG=$TMPD/tc.log TC=$TMPD/tc DESYNC_CONF_DIR=${CONF_DIR:-$TMPD/conf} \
		"$APPLY" "$@" 2> "$TMPD/err"
}

changed()
{
	grep -E '^tc qdisc (add|replace|change|del)' "$TMPD/tc.log"
}

# Installed where its ExecStart names an existing program, the unit
# loads, and starting an instance makes a transaction without an
# ordering cycle against the targets it names.
unit_verifies()
{
	local r=$TMPD/inst

	make -s -C "$HERE" install PREFIX="$r/usr" UNITDIR="$r/lib/systemd/system" \
		MANDIR="$r/usr/share/man" SYSCONFDIR="$r/etc" || return 1
	cp "$r/lib/systemd/system/desync@.service" "$TMPD/desync@lo.service"
	systemd-analyze verify --man=no "$TMPD/desync@lo.service" > "$TMPD/verify" 2>&1 ||
		{ cat "$TMPD/verify"; return 1; }
	[ ! -s "$TMPD/verify" ] || { cat "$TMPD/verify"; return 1; }
}

# Ordered as a firewall is (systemd.special(7)), before the network
# management software, and no condition that would skip a unit without
# its configuration.
unit_network_order()
{
	local u=$HERE/desync@.service

	grep -qx 'Before=network-pre.target' "$u" || { echo "not Before=network-pre.target"; return 1; }
	grep -qx 'Wants=network-pre.target' "$u" || { echo "no Wants=network-pre.target"; return 1; }
	! grep -E '^After=.*network' "$u" || { echo "ordered after a network target"; return 1; }
	! grep -E '^(Condition|Assert)' "$u"
}

missing_config_fails()
{
	local rc

	CONF_DIR=$TMPD/empty apply noqueue lo
	rc=$?
	[ "$rc" -eq 1 ] || { echo "exit $rc, want 1"; return 1; }
	grep -qF "no configuration for lo: $TMPD/empty/lo.conf" "$TMPD/err" ||
		{ cat "$TMPD/err"; return 1; }
	! changed
}

# A root that holds the admin's configuration stays, and the message
# says what to do instead.
refuses_configured_roots()
{
	local k rc

	for k in mqprio taprio htb; do
		apply "$k" lo
		rc=$?
		[ "$rc" -eq 1 ] || { echo "$k: exit $rc, want 1"; return 1; }
		if ! grep -qF "lo has a $k root" "$TMPD/err" ||
		   ! grep -qF 'parent HANDLE:MINOR desync' "$TMPD/err" ||
		   ! grep -qF 'desync-apply --force lo' "$TMPD/err"; then
			cat "$TMPD/err"
			return 1
		fi
		! changed || { echo "$k: changed"; return 1; }
	done
}

force_replaces()
{
	apply mqprio --force lo || { cat "$TMPD/err"; return 1; }
	grep -qx 'tc qdisc replace dev lo root desync offset_max 2ms' "$TMPD/tc.log" ||
		{ cat "$TMPD/tc.log"; return 1; }
}

# The kernel's defaults and a desync of its own are replaced as before.
replaces_default_roots()
{
	local k

	for k in '' noqueue pfifo_fast fq_codel fq mq desync; do
		apply "$k" lo || { echo "root '$k': $(cat "$TMPD/err")"; return 1; }
		grep -qx 'tc qdisc replace dev lo root desync offset_max 2ms' "$TMPD/tc.log" ||
			{ echo "root '$k':"; cat "$TMPD/tc.log"; return 1; }
	done
}

# make install makes /etc/desync with an example that, read as a
# configuration, sets nothing: every line a comment or empty.
install_etc()
{
	local ex=$TMPD/inst2/etc/desync/DEV.conf.example

	make -s -C "$HERE" install DESTDIR="$TMPD/inst2" > /dev/null || return 1
	[ -d "$TMPD/inst2/etc/desync" ] || { echo "no /etc/desync"; return 1; }
	[ -f "$ex" ] || { echo "no $ex"; return 1; }
	grep -q '^#DESYNC_OPTS=' "$ex" || { echo "no commented DESYNC_OPTS"; return 1; }
	! grep -vE '^(#|$)' "$ex"
}

echo "TAP version 13"
echo "1..7"
run unit_verifies
run unit_network_order
run missing_config_fails
run refuses_configured_roots
run force_replaces
run replaces_default_roots
run install_etc
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
