/* SPDX-License-Identifier: GPL-2.0 */
/*
 * desync-opts.h	the option words of "tc qdisc add ... desync" for the model
 *
 * The model takes its desync configuration in the words an operator types
 * for tc, with the module's defaults and range checks, so that a setting
 * found in simulation can be pasted onto a host unchanged.
 */
#ifndef DESYNC_SIM_OPTS_H
#define DESYNC_SIM_OPTS_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

struct DesyncConfig {
	uint32_t limit = 10000;
	uint32_t group_by = 0;		/* enum tc_desync_group_by */
	uint32_t groups = 1024;
	uint32_t idle_us = 2000;
	uint32_t offset_max_us = 4000;
	uint32_t slots = 1;
	uint32_t slot = 0xffffffffU;	/* TC_DESYNC_SLOT_RANDOM */
	bool slot_rank = false;		/* "slot rank": the host's rank mod slots */
	uint32_t hold_limit = 1024;
	uint32_t ce_threshold_us = 1000;
	uint32_t ce_backlog = 44;	/* segments */
	uint32_t widen = 7;		/* offset_max steps timeouts may add */
	uint32_t spread = 0;		/* percent of the last burst */
	bool sticky = true;		/* keep offsets that met no loss */
	uint64_t bypass_prio = 0;
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
