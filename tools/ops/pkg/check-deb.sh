#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: check-deb.sh
#
# make check's share of the packaging (no VM; make check-deb installs the
# packages in VMs): builds both packages into $DESYNC_CACHE/deb, lintian
# clean at warning level (build-deb.sh), and checks what they hold, where
# DKMS and tc look for it, and what their maintainer scripts start.  Ends with "deb: N passed, N failed".

set -uo pipefail
# shellcheck source=tools/lib/common.sh
source "$(dirname "$(readlink -f "$0")")/../../lib/common.sh"

out=$CACHE/deb
pass=0
fail=0
ok()     { pass=$((pass + 1)); echo "ok $((pass + fail)) - $*"; }
not_ok() { fail=$((fail + 1)); echo "not ok $((pass + fail)) - $*"; }
check()  # NAME CMD...
{
	local name=$1

	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}

echo "TAP version 13"
version=$("$REPO_ROOT/sch_desync/version.sh")
tree_state() { git -C "$REPO_ROOT" status --porcelain --ignored 2>/dev/null | grep -v '^!! .cache/'; }
before=$(tree_state)
t=$SECONDS
if ! "$REPO_ROOT/tools/ops/pkg/build-deb.sh" "$out"; then
	not_ok "make deb builds both packages, lintian clean at warning level"
	echo "deb: $pass passed, $fail failed"
	exit 1
fi
ok "make deb builds both packages, lintian clean at warning level ($((SECONDS - t)) s)"

dkms_deb=$out/sch-desync-dkms_${version}_all.deb
tc_deb=$(find "$out" -maxdepth 1 -name "tc-desync_${version}_*.deb" | head -n 1)
src=usr/src/sch-desync-$version
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
dkms_files=$(dpkg-deb -c "$dkms_deb" | awk '{ print $6 }')
tc_files=$(dpkg-deb -c "$tc_deb" | awk '{ print $6 }')
conf=$(dpkg-deb --fsys-tarfile "$dkms_deb" | tar -xOf - "./$src/dkms.conf")
stamp=$(dpkg-deb --fsys-tarfile "$dkms_deb" | tar -xOf - "./$src/sch_desync/VERSION")

has() { grep -qx "./$2" <<< "$1"; }
check "dkms.conf in /$src" has "$dkms_files" "$src/dkms.conf"
check "module source and Kbuild in /$src/sch_desync" \
	has "$dkms_files" "$src/sch_desync/Kbuild"
# The core the module includes: a header left out fails only in DKMS.
core_headers()
{
	local h

	for h in dsched.h dsched_impl.h dsched_types.h; do
		has "$dkms_files" "$src/sch_desync/$h" || return 1
	done
}
check "the core's headers (dsched.h, dsched_impl.h, dsched_types.h) in /$src/sch_desync" \
	core_headers
check "dkms.conf names version $version" \
	grep -qx "PACKAGE_VERSION=\"$version\"" <<< "$conf"
# shellcheck disable=SC2016 # the literal DKMS variable
check "dkms.conf builds for \$kernel_source_dir, not the running kernel" \
	grep -q '^MAKE\[0\]="make -C ${kernel_source_dir} M=.*modules"$' <<< "$conf"
check "dkms.conf has AUTOINSTALL=yes" grep -qx 'AUTOINSTALL="yes"' <<< "$conf"
check "dkms.conf has BUILT_MODULE_LOCATION sch_desync/" \
	grep -qx 'BUILT_MODULE_LOCATION\[0\]="sch_desync/"' <<< "$conf"
check "the source carries VERSION $version for MODULE_VERSION" \
	test "$stamp" = "$version"
check "q_desync.so in /usr/lib/$multiarch/tc, where tc looks" \
	has "$tc_files" "usr/lib/$multiarch/tc/q_desync.so"
check "tc looks in that folder (strings tc)" \
	grep -qx "/usr/lib/$multiarch/tc/" <<< "$(strings /usr/sbin/tc)"
check "tc-desync(8) in tc-desync" has "$tc_files" "usr/share/man/man8/tc-desync.8.gz"
check "desync-apply(8) and desync@.service in tc-desync" eval \
	'has "$tc_files" usr/sbin/desync-apply &&
	 has "$tc_files" usr/share/man/man8/desync-apply.8.gz &&
	 has "$tc_files" "lib/systemd/system/desync@.service"'
# The directory the README writes into, with an example the admin may
# edit and dpkg then keeps.
check "/etc/desync/DEV.conf.example in tc-desync, a conffile" eval \
	'has "$tc_files" etc/desync/DEV.conf.example &&
	 dpkg-deb -I "$tc_deb" conffiles | grep -qx /etc/desync/DEV.conf.example'
check "the Prometheus rules and Grafana dashboard in tc-desync's examples" eval \
	'has "$tc_files" usr/share/doc/tc-desync/examples/desync.rules.yml &&
	 has "$tc_files" usr/share/doc/tc-desync/examples/desync-dashboard.json'
check "desyncctl's bash completion in tc-desync, where bash-completion loads it" \
	has "$tc_files" usr/share/bash-completion/completions/desyncctl
check "tc-desync depends on iproute2 (>= 6.1), the tc the plugin's ABI is declared from" \
	grep -qE '(^|, )iproute2 \(>= 6\.1\)(,|$)' <<< "$(dpkg-deb -f "$tc_deb" Depends)"
check "this host's iproute2 satisfies it" \
	dpkg --compare-versions "$(dpkg-query -W -f='${Version}' iproute2)" ge 6.1
# DKMS matches the kernel version against the pattern as dkms.conf sets it.
build_exclusive()
{
	local k

	for k in 6.1.0-57-amd64 6.12.95+deb12-amd64 6.19.1 7.3.4+deb13-amd64 10.0.1; do
		bash -c '. /dev/stdin; [[ $1 =~ $BUILD_EXCLUSIVE_KERNEL ]]' _ "$k" <<< "$conf" ||
			{ echo "$k excluded"; return 1; }
	done
	for k in 6.0.12-1-amd64 5.10.0-30-amd64 4.19.0-27-amd64; do
		! bash -c '. /dev/stdin; [[ $1 =~ $BUILD_EXCLUSIVE_KERNEL ]]' _ "$k" <<< "$conf" ||
			{ echo "$k built for"; return 1; }
	done
}
check "dkms.conf builds for 6.1 and later only (BUILD_EXCLUSIVE_KERNEL)" build_exclusive
check "debian/control names Testsuite: autopkgtest-pkg-dkms" \
	grep -qx 'Testsuite: autopkgtest-pkg-dkms' "$REPO_ROOT/debian/control"
# That Testsuite is autodep8's: from the source package make deb builds
# beside the packages, autodep8 must generate the DKMS test, which make
# check-walk runs with autopkgtest in a VM on both kernels.
autodep8_dkms()
{
	local dsc tmp rc

	dsc=$out/src/sch-desync_$version.dsc
	[ -e "$dsc" ] || { echo "no $dsc"; return 1; }
	tmp=$(mktemp -d)
	dpkg-source -x "$dsc" "$tmp/src" > /dev/null &&
		(cd "$tmp/src" && autodep8) > "$tmp/control"
	rc=$?
	cat "$tmp/control"
	[ $rc -eq 0 ] && grep -qx 'Test-Command: /usr/lib/dkms/dkms-autopkgtest' "$tmp/control"
	rc=$?
	rm -rf "$tmp"
	return $rc
}
need_pkgs autodep8
check "make deb's source package: autodep8 generates the DKMS test" autodep8_dkms
# Warnings fail make check, not a distribution's build: every compiler
# line of the package build has -Wall, none -Werror (dpkg-buildflags'
# -Werror=format-security is Debian's own and stays).
no_werror()
{
	local cc

	cc=$(grep -E '^(gcc|cc) .* -Wall' "$out/build.log") || { echo "no compiler line"; return 1; }
	! grep -E -e '(^| )-Werror( |$)' <<< "$cc"
}
check "the package build compiles without -Werror" no_werror
# The changelog is kept in git; a snapshot's entry goes above its entries.
changelog_kept()
{
	local cl

	git -C "$REPO_ROOT" ls-files --error-unmatch debian/changelog > /dev/null || return 1
	cl=$(dpkg-deb --fsys-tarfile "$tc_deb" | tar -xOf - ./usr/share/doc/tc-desync/changelog.gz | gzip -dc)
	[ "$(dpkg-parsechangelog -l- -S Version <<< "$cl")" = "$version" ] || return 1
	grep -qF "$(head -n 1 "$REPO_ROOT/debian/changelog")" <<< "$cl"
}
check "debian/changelog in git, its entries in the package under $version" changelog_kept
# make release in a clone of the tree's last commit, with this tree's
# release tools: a changelog entry, a signed-off commit and an annotated
# tag that version.sh reads; the next release lists the commits since.
release_flow()
{
	local d=$1 f

	git clone -q --no-checkout "$REPO_ROOT" "$d" &&
		git -C "$d" fetch -q "$REPO_ROOT" HEAD &&
		git -C "$d" checkout -q --detach FETCH_HEAD || return 1
	for f in tools/ops/pkg/release.sh tools/lib/common.sh debian/changelog \
		 debian/control sch_desync/version.sh; do
		cp "$REPO_ROOT/$f" "$d/$f"
	done
	git -C "$d" add -f tools/ops/pkg/release.sh tools/lib/common.sh debian/changelog \
		debian/control sch_desync/version.sh &&
		git -C "$d" commit -q --allow-empty -m "test: this tree's release tools" || return 1
	"$d/tools/ops/pkg/release.sh" 9.9 || return 1
	[ "$(git -C "$d" describe --exact-match)" = v9.9 ] || { echo "HEAD is not v9.9"; return 1; }
	[ "$(git -C "$d" cat-file -t v9.9)" = tag ] || { echo "v9.9 not annotated"; return 1; }
	[ "$(dpkg-parsechangelog -l "$d/debian/changelog" -S Version)" = 9.9 ] || return 1
	git -C "$d" log -1 --format=%B | grep -q '^Signed-off-by: ' || { echo "no sign-off"; return 1; }
	[ "$("$d/sch_desync/version.sh")" = 9.9 ] || return 1
	[ -z "$(git -C "$d" status --porcelain)" ] || { git -C "$d" status --short; return 1; }
	! "$d/tools/ops/pkg/release.sh" 9.9 2> /dev/null || { echo "released 9.9 twice"; return 1; }
	git -C "$d" commit -q --allow-empty -m "sch_desync: a change after 9.9"
	! "$d/tools/ops/pkg/release.sh" 9.1 2> /dev/null || { echo "released 9.1 after 9.9"; return 1; }
	"$d/tools/ops/pkg/release.sh" 9.10 || return 1
	sed -n '1,/^ -- /p' "$d/debian/changelog" |
		grep -qx '  \* sch_desync: a change after 9.9' || { head "$d/debian/changelog"; return 1; }
}
release_test()
{
	local d rc=0

	d=$(mktemp -d)
	GIT_AUTHOR_NAME=check-deb GIT_AUTHOR_EMAIL=check-deb@localhost \
	GIT_COMMITTER_NAME=check-deb GIT_COMMITTER_EMAIL=check-deb@localhost \
		release_flow "$d/r" > "$d/log" 2>&1 || { cat "$d/log"; rc=1; }
	rm -rf "$d"
	return $rc
}
check "release.sh (make release): changelog entry, signed-off commit, tag v9.9 version.sh reads, then 9.10" \
	release_test
check "sch-desync-dkms depends on dkms" \
	grep -q 'dkms' <<< "$(dpkg-deb -f "$dkms_deb" Depends)"

# A maintainer script of tc-desync run as dpkg runs it on a host booted
# with systemd, with the helpers dh_installsystemd calls replaced by stubs
# that log their arguments.  deb-systemd-helper answers as it does for a
# unit it has never seen (was-enabled defaults to true); the test for
# /run/systemd/system, which says that systemd runs, is made to succeed
# whatever this host runs.  Prints the log.
maint_actions()	# DEB SCRIPT ARG...
{
	local deb=$1 script=$2 d s rc=0

	shift 2
	d=$(mktemp -d)
	dpkg-deb -e "$deb" "$d/ctl"
	mkdir -p "$d/bin" "$d/run-systemd-system"
	cat > "$d/bin/deb-systemd-helper" <<-'STUB'
	#!/bin/sh
	echo "deb-systemd-helper $*" >> "$LOG"
	case $* in
	*debian-installed*) exit 1 ;;
	esac
	exit 0
	STUB
	for s in deb-systemd-invoke systemctl; do
		# shellcheck disable=SC2016 # the stub expands them
		printf '#!/bin/sh\necho "%s $*" >> "$LOG"\n' "$s" > "$d/bin/$s"
	done
	chmod +x "$d"/bin/*
	: > "$d/log"
	if [ -e "$d/ctl/$script" ]; then
		sed "s|/run/systemd/system|$d/run-systemd-system|g" "$d/ctl/$script" > "$d/script"
		LOG=$d/log PATH="$d/bin:$PATH" sh "$d/script" "$@" > /dev/null || rc=1
	fi
	cat "$d/log"
	rm -rf "$d"
	return $rc
}
# The first install: "postinst configure" with no old version.
exporter_left_alone()
{
	local log

	log=$(maint_actions "$tc_deb" postinst configure "") || { echo "$log"; return 1; }
	! grep -E '(deb-systemd-helper.* enable|deb-systemd-invoke.* (start|restart)|systemctl.* (enable|start|restart)).*desync-exporter' <<< "$log"
}
check "tc-desync's postinst neither enables nor starts desync-exporter.timer" \
	exporter_left_alone
# ... yet one the admin enabled stops with the package.
exporter_stopped_on_remove()
{
	local log

	log=$(maint_actions "$tc_deb" prerm remove) || { echo "$log"; return 1; }
	grep -qE 'deb-systemd-invoke stop .*desync-exporter.timer' <<< "$log"
}
check "tc-desync's prerm remove stops desync-exporter.timer" exporter_stopped_on_remove

check "the package build left the tree as it was" \
	test "$(tree_state)" = "$before"

echo "1..$((pass + fail))"
echo "deb: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
