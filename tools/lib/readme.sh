# SPDX-License-Identifier: GPL-2.0
# README.md's blocks that tests run as written.  A block follows a comment
# "... this block as written: NAME -->" naming the tests that run it, so
# the page cannot drift from what was tested.  Source it, do not run it.
# shellcheck shell=bash

# The fenced block of README $1 that follows the comment for NAME $2.
readme_block()	# README NAME
{
	awk -v name="$2" '
		index($0, "this block as written: " name " -->") { want = 1; next }
		want && /^```/ { if (inside) exit; inside = 1; next }
		inside { print }' "$1"
}
