/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dsched_types.h	fixed-width types for the desync core
 *
 * The core (dsched.h) is shared by the kernel module, the userspace
 * unit tests and the evaluation tools, so it must not depend on kernel
 * headers.  This is the one place that maps the kernel's type names onto
 * C99 ones outside the kernel.
 */
#ifndef _DSCHED_TYPES_H
#define _DSCHED_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stddef.h>

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef int s32;
typedef unsigned long long u64;
typedef long long s64;
#endif

#endif /* _DSCHED_TYPES_H */
