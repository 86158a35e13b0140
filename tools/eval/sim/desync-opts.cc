// SPDX-License-Identifier: GPL-2.0
/*
 * desync-opts.cc	the option words of "tc qdisc add ... desync" for the model
 *
 * This mirrors the parser of tc-plugin/q_desync.c and the checks of the
 * module's desync_parse(): same words, same units, same bounds.  One
 * addition: "slot rank" gives each simulated host its own rank, which
 * on a real cluster the operator writes as a number per host.
 */
#include "desync-opts.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <strings.h>
#include <vector>

namespace {

const uint32_t kLimitMax = 1000000;
const uint32_t kGroupsMax = 1U << 18;
const uint64_t kIdleMaxUs = 10000000;
const uint64_t kOffsetMaxUs = 1000000;
const uint32_t kSlotsMax = 1024;
const uint64_t kCeMaxUs = 1000000;
const unsigned kBypassPrioMax = 63;
const size_t kSlotMapMax = 64;
const uint32_t kWidenMax = 7;

bool ParseUnsigned(const std::string &arg, uint64_t max, uint64_t *val)
{
	int base = 10;
	char *end;

	if (arg.empty() || !isdigit(static_cast<unsigned char>(arg[0])))
		return false;
	if (arg.size() > 1 && arg[0] == '0' && (arg[1] == 'x' || arg[1] == 'X'))
		base = 16;
	errno = 0;
	*val = strtoull(arg.c_str(), &end, base);
	return !errno && *end == '\0' && *val <= max;
}

bool ParsePrios(const std::string &arg, uint64_t *val)
{
	std::stringstream ss(arg);
	std::string item;
	uint64_t mask = 0;

	if (arg == "none") {
		*val = 0;
		return true;
	}
	if (arg.empty() || arg.back() == ',')
		return false;
	while (std::getline(ss, item, ',')) {
		uint64_t prio;

		if (item.size() > 2 || !ParseUnsigned(item, kBypassPrioMax, &prio))
			return false;
		mask |= 1ULL << prio;
	}
	*val = mask;
	return true;
}

/* "KEY:SLOT[,KEY:SLOT...]" or "none", as tc-plugin's desync_get_slot_map() */
bool ParseSlotMap(const std::string &arg,
		  std::vector<std::pair<uint32_t, uint32_t>> *map)
{
	std::stringstream ss(arg);
	std::string item;

	map->clear();
	if (arg == "none")
		return true;
	if (arg.empty() || arg.back() == ',')
		return false;
	while (std::getline(ss, item, ',')) {
		size_t colon = item.find(':');
		uint64_t key, slot;

		if (colon == std::string::npos || map->size() == kSlotMapMax ||
		    !ParseUnsigned(item.substr(0, colon), UINT32_MAX, &key) ||
		    !ParseUnsigned(item.substr(colon + 1), UINT32_MAX, &slot))
			return false;
		map->emplace_back(key, slot);
	}
	return true;
}

bool ParseTimeUs(const std::string &arg, uint32_t *us, uint64_t max_us)
{
	uint64_t ns;

	/* As the plugin: whole microseconds, a fraction is refused. */
	if (!DesyncParseTimeNs(arg, &ns) || ns % 1000 || ns / 1000 > max_us)
		return false;
	*us = static_cast<uint32_t>(ns / 1000);
	return true;
}

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

	for (size_t i = 0; i < argv.size(); i += 2) {
		const std::string &name = argv[i];
		uint64_t v;
		bool ok;

		/* The words that stand alone, as q_desync.c's DESYNC_ARG_ON/OFF. */
		if (name == "sticky" || name == "nosticky") {
			cfg->sticky = name == "sticky";
			i--;
			continue;
		}

		if (i + 1 >= argv.size())
			return "desync: \"" + name + "\" needs a value";
		const std::string &arg = argv[i + 1];

		if (name == "limit") {
			ok = ParseUnsigned(arg, kLimitMax, &v) && v >= 1;
			cfg->limit = static_cast<uint32_t>(v);
		} else if (name == "group_by") {
			static const char *const names[] = { "dst", "flow", "mark", "prio" };

			ok = false;
			for (uint32_t k = 0; k < 4; k++) {
				if (arg == names[k]) {
					cfg->group_by = k;
					ok = true;
				}
			}
		} else if (name == "groups") {
			ok = ParseUnsigned(arg, kGroupsMax, &v) && v >= 1;
			cfg->groups = static_cast<uint32_t>(v);
		} else if (name == "idle") {
			ok = ParseTimeUs(arg, &cfg->idle_us, kIdleMaxUs);
		} else if (name == "offset_max") {
			ok = ParseTimeUs(arg, &cfg->offset_max_us, kOffsetMaxUs);
		} else if (name == "slots") {
			ok = ParseUnsigned(arg, kSlotsMax, &v) && v >= 1;
			cfg->slots = static_cast<uint32_t>(v);
		} else if (name == "slot") {
			ok = true;
			cfg->slot_rank = arg == "rank";
			if (arg == "random" || cfg->slot_rank)
				cfg->slot = 0xffffffffU;
			/* 2^32 - 1 is "random" in the plugin too. */
			else if ((ok = ParseUnsigned(arg, 0xffffffffU, &v)))
				cfg->slot = static_cast<uint32_t>(v);
		} else if (name == "seed") {
			ok = ParseUnsigned(arg, UINT64_MAX, &cfg->seed);
			cfg->seed_given = true;
		} else if (name == "hold_limit") {
			ok = ParseUnsigned(arg, UINT32_MAX, &v) && v >= 1;
			cfg->hold_limit = static_cast<uint32_t>(v);
			hold_limit_given = true;
		} else if (name == "ce_threshold") {
			ok = ParseTimeUs(arg, &cfg->ce_threshold_us, kCeMaxUs);
		} else if (name == "ce_backlog") {
			ok = ParseUnsigned(arg, kLimitMax, &v);
			cfg->ce_backlog = static_cast<uint32_t>(v);
		} else if (name == "widen") {
			ok = ParseUnsigned(arg, kWidenMax, &v);
			cfg->widen = static_cast<uint32_t>(v);
		} else if (name == "spread") {
			std::string num = arg;

			if (!num.empty() && num.back() == '%')
				num.pop_back();
			ok = ParseUnsigned(num, 100, &v);
			cfg->spread = static_cast<uint32_t>(v);
		} else if (name == "bypass_prio") {
			ok = ParsePrios(arg, &cfg->bypass_prio);
		} else if (name == "slot_map") {
			ok = ParseSlotMap(arg, &cfg->slot_map);
		} else {
			return "desync: unknown option \"" + name + "\"";
		}
		if (!ok)
			return "desync: illegal \"" + name + "\" value \"" + arg + "\"";
	}

	if (!IsPowerOfTwo(cfg->groups))
		return "desync: groups must be a power of two";
	if (!cfg->slot_rank && cfg->slot != 0xffffffffU && cfg->slot >= cfg->slots)
		return "desync: slot must be below slots, random or rank";
	/* As the module: a hold_limit not given follows a lower limit. */
	if (!hold_limit_given && cfg->hold_limit > cfg->limit)
		cfg->hold_limit = cfg->limit;
	if (cfg->hold_limit > cfg->limit)
		return "desync: hold_limit must not exceed limit";
	/* desync_check_slot_map() of the module */
	for (size_t i = 0; i < cfg->slot_map.size(); i++) {
		if (cfg->group_by != 2 && cfg->group_by != 3)
			return "desync: slot_map needs group_by mark or prio";
		if (cfg->slot_map[i].second >= cfg->slots)
			return "desync: slot_map slots must be below slots";
		for (size_t j = 0; j < i; j++)
			if (cfg->slot_map[i].first == cfg->slot_map[j].first)
				return "desync: slot_map gives a key twice";
	}
	return "";
}
