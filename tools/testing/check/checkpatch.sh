#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: checkpatch.sh [FILE...]   (default: the module's sources)
#
# Runs the kernel's checkpatch.pl --strict over the module as netdev would.
# checkpatch is not in Debian's header packages; linux-source.sh takes it
# and the data files it reads out of linux-source-6.1.

set -euo pipefail
# shellcheck source=tools/lib/common.sh
source "$(dirname "$(readlink -f "$0")")/../../lib/common.sh"
# shellcheck source=tools/testing/check/linux-source.sh
source "$REPO_ROOT/tools/testing/check/linux-source.sh"

CP_DIR=$LINUX_SRC

need_pkgs perl
linux_source
if [ $# -eq 0 ]; then
	set -- "$REPO_ROOT"/sch_desync/*.[ch]
fi
# checkpatch finds spelling.txt relative to its own tree.
cd "$CP_DIR"
# checkpatch seeds its CamelCase list from <root>/include even when that
# check is off; an empty one keeps it quiet without a kernel tree.
mkdir -p include
checkpatch()
{
	perl scripts/checkpatch.pl --no-tree --root="$CP_DIR" --strict \
		--quiet --show-types "$@"
}
# compat.h is the one file whose job is to key on LINUX_VERSION_CODE.
rc=0
files=()
for f in "$@"; do
	case $f in
	*/compat.h) checkpatch --ignore CAMELCASE,LINUX_VERSION_CODE,CONSTANT_COMPARISON \
			-f "$f" || rc=1 ;;
	*) files+=("$f") ;;
	esac
done
[ ${#files[@]} -eq 0 ] || checkpatch --ignore CAMELCASE -f "${files[@]}" || rc=1
exit $rc
