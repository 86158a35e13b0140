/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dsched_types.h	fixed-width types for the desync core
 *
 * The core (dsched.h) is shared by the kernel module, the userspace
 * unit tests and the evaluation tools, so it must not depend on kernel
 * headers.  This is the one place that maps the kernel's type names onto
 * C99 ones outside the kernel, and the kernel's lockless accessors onto
 * the compiler's.
 */
#ifndef _DSCHED_TYPES_H
#define _DSCHED_TYPES_H

#ifdef __KERNEL__
#include <linux/compiler.h>
#include <linux/types.h>

#define dsched_load_u32(p)	READ_ONCE(*(p))
#define dsched_store_u32(p, v)	WRITE_ONCE(*(p), (v))
#else
#include <stdbool.h>
#include <stddef.h>

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef int s32;
typedef unsigned long long u64;
typedef long long s64;

/*
 * A word other instances of the core read and write without a lock
 * (dsched.share): each access is whole, as READ_ONCE() and WRITE_ONCE()
 * make it in the kernel.
 */
#define dsched_load_u32(p)	__atomic_load_n((p), __ATOMIC_RELAXED)
#define dsched_store_u32(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)
#endif

#endif /* _DSCHED_TYPES_H */
