/* SPDX-License-Identifier: GPL-2.0 */
/*
 * desync-opts.h	the option words of "tc qdisc add ... desync" for the model
 *
 * The model takes its desync configuration in the words an operator types
 * for tc, with the module's defaults and range checks, so that a setting
 * found in simulation can be pasted onto a host unchanged.  The words,
 * units, bounds and defaults are those of the tc plugin's table
 * (tools/lib/desync_opts.c, sch_desync/desync_defaults.h), compiled as C.
 */
#ifndef DESYNC_SIM_OPTS_H
#define DESYNC_SIM_OPTS_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "desync_opts.h"

struct DesyncConfig {
	uint32_t limit = DESYNC_DEF_LIMIT;
	uint32_t group_by = DESYNC_DEF_GROUP_BY;	/* enum tc_desync_group_by */
	uint32_t groups = DESYNC_DEF_GROUPS;
	uint32_t idle_us = DESYNC_DEF_IDLE;
	uint32_t offset_max_us = DESYNC_DEF_OFFSET_MAX;
	uint32_t slots = DESYNC_DEF_SLOTS;
	uint32_t slot = DESYNC_DEF_SLOT;
	bool slot_rank = false;		/* "slot rank": the host's rank mod slots */
	uint32_t hold_limit = DESYNC_DEF_HOLD_LIMIT;
	uint32_t ce_threshold_us = DESYNC_DEF_CE_THRESHOLD;
	uint32_t ce_backlog = DESYNC_DEF_CE_BACKLOG;	/* segments */
	uint32_t widen = DESYNC_DEF_WIDEN;	/* offset_max steps timeouts may add */
	uint32_t arm = DESYNC_DEF_ARM;		/* enum tc_desync_arm */
	uint32_t spread = DESYNC_DEF_SPREAD;	/* percent of the last burst */
	bool sticky = DESYNC_DEF_STICKY;	/* keep offsets that met no loss */
	uint64_t bypass_prio = DESYNC_DEF_BYPASS_PRIO;
	/* slot_map: {mark or priority, slot}; the model has no marks */
	std::vector<std::pair<uint32_t, uint32_t>> slot_map;
	bool seed_given = false;
	uint64_t seed = 0;
};

/*
 * Parse @words (space separated, as after "desync" on a tc command line)
 * on top of @cfg.  Returns an empty string, or a one-line error.
 */
std::string DesyncParseWords(const std::string &words, DesyncConfig *cfg);

/* Parse a tc TIME ("200us", "1ms", "1s"; a bare number is in us) into ns. */
bool DesyncParseTimeNs(const std::string &arg, uint64_t *ns);

#endif /* DESYNC_SIM_OPTS_H */
