#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: build-deb.sh [OUT_DIR]      (default: <repo>/build/deb)
#
# Builds the Debian packages sch-desync-dkms and tc-desync from the tree as
# it is (tracked files, with their uncommitted changes) and checks them with
# lintian, pedantic and informational tags shown: an error or a warning
# fails, unless debian/*.lintian-overrides keeps it with its reason.
# The build runs in a copy under OUT_DIR/src, so
# the tree gets no build products; the packages land in OUT_DIR, and the
# source package they are built from (3.0 native, unsigned) in OUT_DIR/src,
# as the archive would have it, for autopkgtest.  The
# version is sch_desync/version.sh's, the one modinfo and the plugin show:
# at a release tag, that of debian/changelog's top entry; between two, the
# copy's changelog gets a snapshot entry of that version above it.

set -euo pipefail
# shellcheck source=tools/lib/common.sh
source "$(dirname "$(readlink -f "$0")")/../../lib/common.sh"

out=$(realpath -m "${1:-$REPO_ROOT/build/deb}")
version=$("$REPO_ROOT/sch_desync/version.sh")
[ "$version" != unknown ] || die "no version: not a git clone and no sch_desync/VERSION"

# Build-Depends of debian/control, and lintian.
need_pkgs debhelper dh-dkms dkms dpkg-dev fakeroot lintian libnl-3-dev \
	libnl-route-3-dev pkgconf gcc make

src=$out/src/sch-desync-$version
rm -rf "$out"
mkdir -p "$src"
if git -C "$REPO_ROOT" rev-parse --git-dir > /dev/null 2>&1; then
	(cd "$REPO_ROOT" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 cp -a --parents -t "$src" 2>/dev/null) ||
		die "copying the tree failed"
else
	tar -C "$REPO_ROOT" --exclude=./build --exclude=./.cache -cf - . |
		tar -C "$src" -xf -
fi
# A copy without git takes its version from here (sch_desync/version.sh).
echo "$version" > "$src/sch_desync/VERSION"
top=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
if [ "$top" != "$version" ]; then
	dpkg --compare-versions "$version" gt "$top" ||
		die "version $version is not above debian/changelog's $top: tag or changelog out of step"
	maint=$(sed -n 's/^Maintainer: //p' "$src/debian/control")
	{
		cat <<-CL
		sch-desync ($version) unstable; urgency=medium

		  * Snapshot of the sch_desync tree at version $version.

		 -- $maint  $(date -R)

		CL
		cat "$src/debian/changelog"
	} > "$src/debian/changelog.new"
	mv "$src/debian/changelog.new" "$src/debian/changelog"
fi

# The source package, from the copy before anything is built in it: what
# Debian's CI gives autopkgtest to run debian/control's Testsuite.
(cd "$out/src" && dpkg-source -b "sch-desync-$version") > "$out/source.log" 2>&1 || {
	tail -n 20 "$out/source.log"
	die "dpkg-source -b failed; log in $out/source.log"
}
echo "building sch-desync $version in $src"
(cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=2" nice -n 10 \
	dpkg-buildpackage -b -us -uc) > "$out/build.log" 2>&1 || {
	tail -n 40 "$out/build.log"
	die "dpkg-buildpackage failed; log in $out/build.log"
}
grep '^install-optional:' "$out/build.log" || true
mv "$out"/src/*.deb "$out"/src/*.changes "$out"/src/*.buildinfo "$out"/

# Errors and warnings fail the build; pedantic tags and notes are shown,
# not fatal: each is fixed or overridden with its reason, so none should
# appear.
lintian --pedantic --display-info --fail-on error,warning \
	--tag-display-limit 0 "$out"/*.changes ||
	die "lintian found errors or warnings"
ls -l "$out"/*.deb
