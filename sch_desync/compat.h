/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels sch_desync builds for, keyed on
 * LINUX_VERSION_CODE, so that sch_desync.c reads like in-tree code with no
 * conditionals of its own.  Checked: Debian's 6.1 and 6.12, and the newest
 * headers Debian ships (tools/testing/check/build-newest.sh).
 */
#ifndef _DESYNC_COMPAT_H
#define _DESYNC_COMPAT_H

#include <linux/version.h>

/*
 * 6.1 is the oldest kernel built and tested: an older one fails here, with
 * a message that says so, rather than somewhere in the qdisc API.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "sch_desync needs Linux 6.1 or later"
#endif

/* Set by Kbuild from git or the VERSION file; a bare compile still builds. */
#ifndef DESYNC_VERSION
#define DESYNC_VERSION "unknown"
#endif

#endif /* _DESYNC_COMPAT_H */
