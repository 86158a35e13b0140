// SPDX-License-Identifier: GPL-2.0
/*
 * sim-options.cc	command line of desync-sim
 */
#include "sim-options.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <vector>

namespace {

struct Unit {
	const char *name;
	double mult;
};

/*
 * A number with one of @units after it, scaled to the base unit; false
 * unless it starts with a digit and ends with a known unit.
 */
template <size_t N>
bool ParseScaled(const std::string &s, const Unit (&units)[N], double *v)
{
	char *end;

	if (s.empty() || !isdigit(static_cast<unsigned char>(s[0])))
		return false;
	*v = strtod(s.c_str(), &end);
	for (const auto &u : units) {
		if (std::string(end) == u.name) {
			*v *= u.mult;
			return true;
		}
	}
	return false;
}

/* "100Gbps", "25Gbit/s", "10G": bits per second. */
bool ParseRate(const std::string &s, uint64_t *bps)
{
	static const Unit units[] = {
		{ "bps", 1 }, { "bit/s", 1 }, { "", 1 },
		{ "Kbps", 1e3 }, { "Kbit/s", 1e3 }, { "K", 1e3 },
		{ "Mbps", 1e6 }, { "Mbit/s", 1e6 }, { "M", 1e6 },
		{ "Gbps", 1e9 }, { "Gbit/s", 1e9 }, { "G", 1e9 },
		{ "Tbps", 1e12 }, { "Tbit/s", 1e12 },
	};
	double v;

	if (!ParseScaled(s, units, &v))
		return false;
	*bps = static_cast<uint64_t>(v + 0.5);
	return *bps >= 1000 && v < 1e14;
}

/* "65536", "64KiB", "1MB", "2MiB": bytes. */
bool ParseBytes(const std::string &s, uint64_t *bytes)
{
	static const Unit units[] = {
		{ "", 1 }, { "B", 1 },
		{ "KB", 1e3 }, { "kB", 1e3 }, { "KiB", 1024 },
		{ "MB", 1e6 }, { "MiB", 1048576 },
		{ "GB", 1e9 }, { "GiB", 1073741824 },
	};
	double v;

	if (!ParseScaled(s, units, &v))
		return false;
	*bytes = static_cast<uint64_t>(v + 0.5);
	return v < 1e13;
}

bool ParseU32(const std::string &s, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (s.empty() || !isdigit(static_cast<unsigned char>(s[0])))
		return false;
	errno = 0;
	v = strtoull(s.c_str(), &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = static_cast<uint32_t>(v);
	return true;
}

/* "1" or "0": a switch */
bool ParseFlag(const std::string &s, bool *on)
{
	uint32_t b;

	if (!ParseU32(s, 0, 1, &b))
		return false;
	*on = b;
	return true;
}

/* "0.25": a fraction in [0, 1) */
bool ParseFraction(const std::string &s, double *v)
{
	char *end;

	if (s.empty() || !(isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.'))
		return false;
	*v = strtod(s.c_str(), &end);
	return !*end && *v >= 0 && *v < 1;
}

/* "0.5", "2": a positive number up to @max */
bool ParsePositive(const std::string &s, double max, double *v)
{
	char *end;

	if (s.empty() || !(isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.'))
		return false;
	*v = strtod(s.c_str(), &end);
	return !*end && *v > 0 && *v <= max;
}

/* "3,0,1": one slot per host index */
bool ParseSlots(const std::string &s, std::vector<uint32_t> *slots)
{
	size_t pos = 0;

	slots->clear();
	while (pos <= s.size()) {
		size_t comma = s.find(',', pos);
		uint32_t v;

		if (comma == std::string::npos)
			comma = s.size();
		if (!ParseU32(s.substr(pos, comma - pos), 0, 1023, &v))
			return false;
		slots->push_back(v);
		pos = comma + 1;
	}
	return true;
}

bool OneOf(const std::string &s, std::initializer_list<const char *> names)
{
	for (const char *n : names)
		if (s == n)
			return true;
	return false;
}

struct Opt {
	const char *name;
	const char *help;
	std::function<bool(const std::string &)> set;
};

} // namespace

int SimParseOptions(int argc, char **argv, SimOptions *o)
{
	bool sharedGiven = false;	/* --sharedBuffer or --alpha */
	const std::vector<Opt> opts = {
		{ "scenario", "incast|ring|alltoall|twojob|burst",
		  [o](const std::string &v) {
			  o->scenario = v;
			  return OneOf(v, { "incast", "ring", "alltoall", "twojob", "burst" });
		  } },
		{ "hosts", "workers (incast, burst and twojob add aggregators)",
		  [o](const std::string &v) { return ParseU32(v, 2, 65536, &o->hosts); } },
		{ "hostsPerTor", "hosts under one ToR",
		  [o](const std::string &v) { return ParseU32(v, 1, 254, &o->hostsPerTor); } },
		{ "spines", "spine switches",
		  [o](const std::string &v) { return ParseU32(v, 1, 64, &o->spines); } },
		{ "jobs", "jobs of the twojob scenario",
		  [o](const std::string &v) { return ParseU32(v, 1, 64, &o->jobs); } },
		{ "hostRate", "host link rate, e.g. 100Gbps",
		  [o](const std::string &v) { return ParseRate(v, &o->hostRate); } },
		{ "fabricRate", "ToR-spine link rate",
		  [o](const std::string &v) { return ParseRate(v, &o->fabricRate); } },
		{ "linkDelay", "propagation delay per link, e.g. 1us",
		  [o](const std::string &v) { return DesyncParseTimeNs(v, &o->linkDelayNs); } },
		{ "buffer", "bytes per switch port (--switchBuffer=static)",
		  [o](const std::string &v) { return ParseBytes(v, &o->buffer) && o->buffer >= 3000; } },
		{ "switchBuffer", "static|shared: a buffer of --buffer bytes per port, or "
				  "one of --sharedBuffer bytes per switch with a dynamic threshold",
		  [o](const std::string &v) {
			  o->sharedBuf = v == "shared";
			  return OneOf(v, { "static", "shared" });
		  } },
		{ "sharedBuffer", "bytes of packet memory per switch (--switchBuffer=shared), "
				  "at least 3000",
		  [o, &sharedGiven](const std::string &v) {
			  sharedGiven = true;
			  return ParseBytes(v, &o->sharedBuffer) && o->sharedBuffer >= 3000;
		  } },
		{ "alpha", "dynamic threshold: a queue may hold alpha times the free shared "
			   "buffer, 0 < alpha <= 64 (--switchBuffer=shared)",
		  [o, &sharedGiven](const std::string &v) {
			  sharedGiven = true;
			  return ParsePositive(v, 64, &o->alpha);
		  } },
		{ "ecnK", "step ECN threshold in bytes",
		  [o](const std::string &v) { return ParseBytes(v, &o->ecnK) && o->ecnK >= 1; } },
		{ "msg", "bytes per worker per iteration",
		  [o](const std::string &v) { return ParseBytes(v, &o->msg) && o->msg >= 1; } },
		{ "compute", "compute time per iteration",
		  [o](const std::string &v) { return DesyncParseTimeNs(v, &o->computeNs); } },
		{ "jitter", "uniform compute noise in [0, jitter]",
		  [o](const std::string &v) { return DesyncParseTimeNs(v, &o->jitterNs); } },
		{ "iters", "iterations",
		  [o](const std::string &v) { return ParseU32(v, 1, 100000, &o->iters); } },
		{ "seed", "run number of the random streams",
		  [o](const std::string &v) { return ParseU32(v, 1, 0x7fffffff, &o->seed); } },
		{ "cc", "dctcp|cubic",
		  [o](const std::string &v) { o->cc = v; return OneOf(v, { "dctcp", "cubic" }); } },
		{ "minRto", "TCP minimum retransmit timeout",
		  [o](const std::string &v) { return DesyncParseTimeNs(v, &o->minRtoNs) && o->minRtoNs; } },
		{ "tcp", "linux|ns3: Linux 6.1's timers, probes and ACKs, or ns-3's TCP "
			 "as earlier results ran it",
		  [o](const std::string &v) { o->tcp = v; return OneOf(v, { "linux", "ns3" }); } },
		{ "conn", "persistent|message: one connection for all, or one per message",
		  [o](const std::string &v) {
			  o->connPerMsg = v == "message";
			  return OneOf(v, { "persistent", "message" });
		  } },
		{ "connsPerPeer", "connections each message to a peer is split over, "
				  "1..64, all starting together (NCCL channels, socket pools)",
		  [o](const std::string &v) { return ParseU32(v, 1, 64, &o->connsPerPeer); } },
		{ "hostQdisc", "pfifo|fq_codel|fq|jitter|ranks|desync",
		  [o](const std::string &v) {
			  o->hostQdisc = v;
			  return OneOf(v, { "pfifo", "fq_codel", "fq", "jitter", "ranks", "desync" });
		  } },
		{ "ceThreshold", "fq's ce_threshold: CE on a packet that waited longer "
				 "in the host qdisc (--hostQdisc=fq)",
		  [o](const std::string &v) { return DesyncParseTimeNs(v, &o->ceThresholdNs); } },
		{ "rankSlot", "ranks: rank r starts its sends r x this after its compute "
			      "(--hostQdisc=ranks; default the offset_max of --desync over "
			      "the job's workers)",
		  [o](const std::string &v) {
			  return DesyncParseTimeNs(v, &o->rankSlotNs) && o->rankSlotNs;
		  } },
		{ "txQueues", "TX queues of each host, 1..64: an mq root with one host qdisc "
			      "per queue, a connection's queue by the hash of its addresses and ports",
		  [o](const std::string &v) { return ParseU32(v, 1, 64, &o->txQueues); } },
		{ "mqShare", "1|0: the desyncs of a host's TX queues share what their groups "
			     "learn and one hash key, as the module's do under mq, or learn "
			     "alone (--txQueues above 1, --hostQdisc=desync)",
		  [o](const std::string &v) { return ParseFlag(v, &o->mqShare); } },
		{ "probeSign", "1|0: desync sees a tail loss probe as the module does, or "
			       "not, as before it read one (--hostQdisc=desync)",
		  [o](const std::string &v) { return ParseFlag(v, &o->probeSign); } },
		{ "desync", "\"OPTIONS\" as for tc qdisc add ... desync",
		  [o](const std::string &v) { o->desyncWords = v; return true; } },
		{ "stage1", "share of each message sent with stage1Prio before the barrier "
			    "(OSP), the rest overlapping the next compute; 0 = one stage",
		  [o](const std::string &v) { return ParseFraction(v, &o->stage1); } },
		{ "stage1Prio", "SO_PRIORITY of the stage-1 traffic, 0..63",
		  [o](const std::string &v) { return ParseU32(v, 0, 63, &o->stage1Prio); } },
		{ "hostSlots", "desync slot of each host in index order, e.g. 0,2,1 "
			       "(from desync-plan); later hosts keep --desync's",
		  [o](const std::string &v) { return ParseSlots(v, &o->hostSlots); } },
		{ "lossRate", "share of the packets each host's uplink loses at random, "
			      "e.g. 1e-4: timeouts that no collision caused",
		  [o](const std::string &v) { return ParseFraction(v, &o->lossRate); } },
		{ "timeLimit", "simulated time after which the run is invalid",
		  [o](const std::string &v) { return DesyncParseTimeNs(v, &o->timeLimitNs) && o->timeLimitNs; } },
		{ "json", "write the results object to FILE",
		  [o](const std::string &v) { o->json = v; return !v.empty(); } },
		{ "profile", "FILE: jobs of a JSON profile (compute, gradient buckets, "
			     "collective) instead of --scenario",
		  [o](const std::string &v) { o->profile = v; return !v.empty(); } },
		{ "background", "none|websearch|datamining: Poisson flows of the DCTCP "
				"paper's sizes between random hosts",
		  [o](const std::string &v) {
			  o->background = v;
			  return OneOf(v, { "none", "websearch", "datamining" });
		  } },
		{ "bgLoad", "share of each host link the background flows load, 0 < load < 1",
		  [o](const std::string &v) { return ParseFraction(v, &o->bgLoad) && o->bgLoad > 0; } },
	};

	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		const Opt *found = nullptr;

		if (a == "--help" || a == "-h" || a == "--PrintHelp") {
			std::cout << "Usage: desync-sim [--name=value]...\n";
			for (const Opt &op : opts)
				std::cout << "  --" << op.name << "=  " << op.help << "\n";
			return 1;
		}
		size_t eq = a.find('=');
		if (a.compare(0, 2, "--") || eq == std::string::npos) {
			std::cerr << "desync-sim: expected --name=value, got \"" << a << "\"\n";
			return 2;
		}
		std::string name = a.substr(2, eq - 2), val = a.substr(eq + 1);
		for (const Opt &op : opts)
			if (name == op.name)
				found = &op;
		if (!found) {
			std::cerr << "desync-sim: unknown option --" << name << "\n";
			return 2;
		}
		if (!found->set(val)) {
			std::cerr << "desync-sim: bad value for --" << name << ": \"" << val
				  << "\" (want " << found->help << ")\n";
			return 2;
		}
		o->given.push_back(name);
	}

	std::string err = DesyncParseWords(o->desyncWords, &o->desync);
	if (!err.empty()) {
		std::cerr << "desync-sim: --desync: " << err << "\n";
		return 2;
	}
	if (o->ceThresholdNs != UINT64_MAX && o->hostQdisc != "fq") {
		std::cerr << "desync-sim: --ceThreshold needs --hostQdisc=fq\n";
		return 2;
	}
	if (o->rankSlotNs && o->hostQdisc != "ranks") {
		std::cerr << "desync-sim: --rankSlot needs --hostQdisc=ranks\n";
		return 2;
	}
	if (SimGiven(*o, "probeSign") && o->hostQdisc != "desync") {
		std::cerr << "desync-sim: --probeSign needs --hostQdisc=desync\n";
		return 2;
	}
	if (SimGiven(*o, "mqShare") && (o->txQueues < 2 || o->hostQdisc != "desync")) {
		std::cerr << "desync-sim: --mqShare needs --txQueues above 1 and --hostQdisc=desync\n";
		return 2;
	}
	if (sharedGiven && !o->sharedBuf) {
		std::cerr << "desync-sim: --sharedBuffer and --alpha need --switchBuffer=shared\n";
		return 2;
	}
	if (!o->sharedBuf && o->ecnK > o->buffer) {
		std::cerr << "desync-sim: --ecnK must not exceed --buffer\n";
		return 2;
	}
	if (o->sharedBuf && o->ecnK > o->sharedBuffer) {
		std::cerr << "desync-sim: --ecnK must not exceed --sharedBuffer\n";
		return 2;
	}
	for (uint32_t s : o->hostSlots) {
		if (s >= o->desync.slots) {
			std::cerr << "desync-sim: --hostSlots must be below the slots of --desync\n";
			return 2;
		}
	}
	/* A profile says what the scenario's options would. */
	for (const char *n : { "scenario", "jobs", "msg", "compute", "jitter", "stage1",
			       "connsPerPeer", "conn" }) {
		if (!o->profile.empty() && SimGiven(*o, n)) {
			std::cerr << "desync-sim: --" << n << " does not go with --profile\n";
			return 2;
		}
	}
	if (SimGiven(*o, "bgLoad") && o->background == "none") {
		std::cerr << "desync-sim: --bgLoad needs --background\n";
		return 2;
	}
	if (o->scenario == "twojob" && o->hosts < o->jobs) {
		std::cerr << "desync-sim: --hosts must be at least --jobs\n";
		return 2;
	}
	return 0;
}

bool SimGiven(const SimOptions &o, const std::string &name)
{
	return std::find(o.given.begin(), o.given.end(), name) != o.given.end();
}

bool SimParseRate(const std::string &s, uint64_t *bps)
{
	return ParseRate(s, bps);
}

bool SimParseBytes(const std::string &s, uint64_t *bytes)
{
	return ParseBytes(s, bytes);
}
