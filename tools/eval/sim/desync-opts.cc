// SPDX-License-Identifier: GPL-2.0
/*
 * desync-opts.cc	the option words of "tc qdisc add ... desync" for the model
 *
 * The words, their units and bounds are the tc plugin's own table
 * (tools/lib/desync_opts.c); what the module checks beyond the bounds
 * (desync_parse(): the relations between options) is mirrored here, since
 * the model has no kernel to ask.  One addition: "slot rank" gives each
 * simulated host its own rank, which on a real cluster the operator
 * writes as a number per host.
 */
#include "desync-opts.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <strings.h>
#include <vector>

namespace {

bool IsPowerOfTwo(uint32_t v)
{
	return v && !(v & (v - 1));
}

} // namespace

bool DesyncParseTimeNs(const std::string &arg, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {
		{ "s", 1e9 }, { "sec", 1e9 }, { "secs", 1e9 },
		{ "ms", 1e6 }, { "msec", 1e6 }, { "msecs", 1e6 },
		{ "us", 1e3 }, { "usec", 1e3 }, { "usecs", 1e3 }, { "", 1e3 },
		{ "ns", 1 }, { "nsec", 1 }, { "nsecs", 1 },
	};
	char *end;
	double v;

	/* Decimal only, as the plugin: strtod() would also read "0x1p3". */
	if (arg.empty() || !(isdigit(static_cast<unsigned char>(arg[0])) ||
			     arg[0] == '.') || strncasecmp(arg.c_str(), "0x", 2) == 0)
		return false;
	v = strtod(arg.c_str(), &end);
	for (const auto &u : units) {
		/* Units in any case, as tc's. */
		if (strcasecmp(end, u.unit) == 0) {
			v *= u.ns;
			if (v > 1e18)
				return false;
			*ns = static_cast<uint64_t>(v + 0.5);
			return true;
		}
	}
	return false;
}

std::string DesyncParseWords(const std::string &words, DesyncConfig *cfg)
{
	std::stringstream ss(words);
	std::vector<std::string> argv;
	bool hold_limit_given = false;
	std::string w;

	while (ss >> w)
		argv.push_back(w);

	for (size_t i = 0; i < argv.size(); i++) {
		const std::string &name = argv[i];
		const struct desync_opt *o = desync_opt_find(name.c_str());
		uint64_t v = 0;
		bool ok;

		if (!o)
			return "desync: unknown option \"" + name + "\"";
		/* "sticky" and "nosticky" stand alone. */
		if (o->unit == DESYNC_UNIT_BOOL) {
			cfg->sticky = !(o->flags & DESYNC_OPT_OFF);
			continue;
		}

		if (i + 1 >= argv.size())
			return "desync: \"" + name + "\" needs a value";
		const std::string &arg = argv[++i];

		if (o->attr == TCA_DESYNC_SLOT && arg == "rank") {
			cfg->slot_rank = true;
			cfg->slot = TC_DESYNC_SLOT_RANDOM;
			continue;
		}
		if (o->unit == DESYNC_UNIT_MAP) {
			struct tc_desync_slot_entry e[TC_DESYNC_SLOT_MAP_MAX];
			unsigned int n;

			ok = !desync_opt_parse_map(arg.c_str(), e, &n);
			if (ok) {
				cfg->slot_map.clear();
				for (unsigned int k = 0; k < n; k++)
					cfg->slot_map.emplace_back(e[k].key, e[k].slot);
			}
		} else {
			/* No kernel behind the model: it checks every bound. */
			ok = !desync_opt_parse(o, arg.c_str(), &v) &&
			     desync_opt_in_bounds(o, v);
		}
		if (!ok)
			return "desync: illegal \"" + name + "\" value \"" + arg + "\"";

		switch (o->attr) {
		case TCA_DESYNC_LIMIT:
			cfg->limit = static_cast<uint32_t>(v);
			break;
		case TCA_DESYNC_GROUP_BY:
			cfg->group_by = static_cast<uint32_t>(v);
			break;
		case TCA_DESYNC_GROUPS:
			cfg->groups = static_cast<uint32_t>(v);
			break;
		case TCA_DESYNC_IDLE:
			cfg->idle_us = static_cast<uint32_t>(v);
			break;
		case TCA_DESYNC_OFFSET_MAX:
			cfg->offset_max_us = static_cast<uint32_t>(v);
			break;
		case TCA_DESYNC_SLOTS:
			cfg->slots = static_cast<uint32_t>(v);
			break;
		case TCA_DESYNC_SLOT:
			cfg->slot = static_cast<uint32_t>(v);
			cfg->slot_rank = false;
			break;
		case TCA_DESYNC_SEED:
			cfg->seed = v;
			cfg->seed_given = true;
			break;
		case TCA_DESYNC_HOLD_LIMIT:
			cfg->hold_limit = static_cast<uint32_t>(v);
			hold_limit_given = true;
			break;
		case TCA_DESYNC_CE_THRESHOLD:
			cfg->ce_threshold_us = static_cast<uint32_t>(v);
			break;
		case TCA_DESYNC_CE_BACKLOG:
			cfg->ce_backlog = static_cast<uint32_t>(v);
			break;
		case TCA_DESYNC_WIDEN:
			cfg->widen = static_cast<uint32_t>(v);
			break;
		case TCA_DESYNC_ARM:
			cfg->arm = static_cast<uint32_t>(v);
			break;
		case TCA_DESYNC_SPREAD:
			cfg->spread = static_cast<uint32_t>(v);
			break;
		case TCA_DESYNC_BYPASS_PRIO:
			cfg->bypass_prio = v;
			break;
		default:
			break;	/* the slot map, read above */
		}
	}

	if (!IsPowerOfTwo(cfg->groups))
		return "desync: groups must be a power of two";
	if (!cfg->slot_rank && cfg->slot != TC_DESYNC_SLOT_RANDOM &&
	    cfg->slot >= cfg->slots)
		return "desync: slot must be below slots, random or rank";
	/* As the module: a hold_limit not given follows a lower limit. */
	if (!hold_limit_given && cfg->hold_limit > cfg->limit)
		cfg->hold_limit = cfg->limit;
	if (cfg->hold_limit > cfg->limit)
		return "desync: hold_limit must not exceed limit";
	/* desync_check_slot_map() of the module */
	for (size_t i = 0; i < cfg->slot_map.size(); i++) {
		if (cfg->group_by != TC_DESYNC_GROUP_BY_MARK &&
		    cfg->group_by != TC_DESYNC_GROUP_BY_PRIO)
			return "desync: slot_map needs group_by mark or prio";
		if (cfg->slot_map[i].second >= cfg->slots)
			return "desync: slot_map slots must be below slots";
		for (size_t j = 0; j < i; j++)
			if (cfg->slot_map[i].first == cfg->slot_map[j].first)
				return "desync: slot_map gives a key twice";
	}
	return "";
}
