/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sim-options.h	command line of desync-sim
 *
 * ns-3's own CommandLine prints its whole help and exits 1 on an unknown
 * option; scripts driving the model want one line and exit status 2, so
 * the --name=value options are parsed here.
 */
#ifndef DESYNC_SIM_OPTIONS_H
#define DESYNC_SIM_OPTIONS_H

#include <cstdint>
#include <string>
#include <vector>

#include "desync-opts.h"

struct SimOptions {
	std::string scenario = "incast";
	uint32_t hosts = 16;		/* workers */
	uint32_t hostsPerTor = 16;
	uint32_t spines = 2;
	uint32_t jobs = 2;		/* twojob */
	uint64_t hostRate = 100000000000ULL;	/* bit/s */
	uint64_t fabricRate = 400000000000ULL;
	uint64_t linkDelayNs = 1000;
	uint64_t buffer = 512000;	/* bytes per switch port */
	bool sharedBuf = false;		/* one buffer per switch instead */
	/*
	 * Broadcom Trident II class: 12 MB of packet memory shared by the
	 * ports; alpha 1 gives a lone busy queue half of it.
	 */
	uint64_t sharedBuffer = 12000000;
	double alpha = 1;
	uint64_t ecnK = 100000;		/* bytes */
	uint64_t msg = 262144;		/* bytes per worker per iteration */
	uint64_t computeNs = 1000000;
	uint64_t jitterNs = 0;
	uint32_t iters = 10;
	uint32_t seed = 1;
	std::string cc = "dctcp";
	uint64_t minRtoNs = 200000000;
	/* linux: LinuxTcpSocket; ns3: ns-3's own TCP, as earlier results ran */
	std::string tcp = "linux";
	bool connPerMsg = false;	/* a new connection per message */
	uint32_t connsPerPeer = 1;	/* connections a message is split over */
	std::string hostQdisc = "fq_codel";
	/* fq's ce_threshold; none by default, as in Linux */
	uint64_t ceThresholdNs = UINT64_MAX;
	/* ranks: the wait between consecutive ranks' starts, 0 = window / N */
	uint64_t rankSlotNs = 0;
	uint32_t txQueues = 1;		/* host qdisc instances, as under mq */
	/* their desyncs share a table and a hash key, as the module's do */
	bool mqShare = true;
	/* desync reads a tail loss probe as the module does, or not (ablation) */
	bool probeSign = true;
	std::string desyncWords;
	DesyncConfig desync;
	/* OSP: share of each message sent before the barrier, 0 = one stage */
	double stage1 = 0;
	uint32_t stage1Prio = 0;	/* SO_PRIORITY of the stage-1 sockets */
	std::vector<uint32_t> hostSlots;	/* a planned slot per host index */
	uint64_t timeLimitNs = 30000000000ULL;
	double lossRate = 0;		/* share of packets each host uplink loses */
	std::string json;
	std::string profile;		/* job profiles (profile.h), replacing the scenario */
	std::string background = "none";	/* websearch|datamining flows */
	double bgLoad = 0.3;		/* their share of every host link */
	std::vector<std::string> given;	/* the options on the command line */
};

/* True if option --@name was on the command line. */
bool SimGiven(const SimOptions &o, const std::string &name);
/* "25Gbps", "25Gbit/s": bits per second; as --hostRate takes them. */
bool SimParseRate(const std::string &s, uint64_t *bps);
/* "25MiB", "1MB", "65536": bytes; as --msg takes them. */
bool SimParseBytes(const std::string &s, uint64_t *bytes);

/*
 * Fills @o from argv.  Returns 0 to run, 1 after printing the help, or
 * 2 after printing a one-line error to stderr.
 */
int SimParseOptions(int argc, char **argv, SimOptions *o);

#endif /* DESYNC_SIM_OPTIONS_H */
