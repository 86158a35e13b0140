/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the desync qdisc: a burst start with the offset it
 * drew, the steps its window grew by (widen; with any arm but always
 * the steps of offset_max its window is, 0 while disarmed) and the worst
 * sign of congestion the group's senders gave in the burst before, and
 * the end of a hold.  The core reports both through its
 * desync_event_*() hooks, which sch_desync.c defines before including it;
 * the core itself stays free of kernel headers, and a disabled tracepoint
 * costs a static key at a burst start or a hold's end, never per packet.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM desync

#if !defined(_DESYNC_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _DESYNC_TRACE_H

#include <linux/netdevice.h>
#include <linux/tracepoint.h>
#include <net/sch_generic.h>

TRACE_EVENT(desync_burst,
	    TP_PROTO(const struct Qdisc *sch, u32 group, u64 offset_ns, u32 slot,
		     u32 steps, u32 sign),
	    TP_ARGS(sch, group, offset_ns, slot, steps, sign),
	    TP_STRUCT__entry(__field(int, ifindex)
			     __field(u32, handle)
			     __field(u32, group)
			     __field(u32, slot)
			     __field(u64, offset_ns)
			     __field(u32, steps)
			     __field(u32, sign)),
	    TP_fast_assign(__entry->ifindex = qdisc_dev(sch)->ifindex;
			   __entry->handle = sch->handle;
			   __entry->group = group;
			   __entry->slot = slot;
			   __entry->offset_ns = offset_ns;
			   __entry->steps = steps;
			   __entry->sign = sign;),
	    TP_printk("ifindex=%d handle=0x%x group=%u offset_ns=%llu slot=%u steps=%u sign=%s",
		      __entry->ifindex, __entry->handle, __entry->group,
		      __entry->offset_ns, __entry->slot, __entry->steps,
		      /* enum dsched_sign of dsched.h */
		      __print_symbolic(__entry->sign, { 0, "none" }, { 1, "marks" },
				       { 2, "loss" }, { 3, "timeout" }))
);

TRACE_EVENT(desync_release,
	    TP_PROTO(const struct Qdisc *sch, u32 group, u64 held_ns, bool early),
	    TP_ARGS(sch, group, held_ns, early),
	    TP_STRUCT__entry(__field(int, ifindex)
			     __field(u32, handle)
			     __field(u32, group)
			     __field(u32, early)
			     __field(u64, held_ns)),
	    TP_fast_assign(__entry->ifindex = qdisc_dev(sch)->ifindex;
			   __entry->handle = sch->handle;
			   __entry->group = group;
			   __entry->early = early;
			   __entry->held_ns = held_ns;),
	    TP_printk("ifindex=%d handle=0x%x group=%u held_ns=%llu early=%u",
		      __entry->ifindex, __entry->handle, __entry->group,
		      __entry->held_ns, __entry->early)
);

#endif /* _DESYNC_TRACE_H */

/* Out of tree, define_trace.h must find this file by its own path. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE desync_trace
#include <trace/define_trace.h>
