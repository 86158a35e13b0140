/* SPDX-License-Identifier: GPL-2.0 */
/*
 * profile.h	job profiles: what each training job computes and sends
 *
 * One JSON format for desync-sim (--profile) and desync-plan: a cluster
 * of jobs, each with its hosts, its compute time per step, its gradient
 * buckets and the collective that carries them.  The planner reads the
 * bytes each host sends per step; the model runs the steps.  The format
 * is described in Documentation/sim.md ("Workloads").
 */
#ifndef DESYNC_SIM_PROFILE_H
#define DESYNC_SIM_PROFILE_H

#include <cstdint>
#include <string>
#include <vector>

enum class Collective {
	Ps,		/* push to a parameter server, pull back the sum */
	Ring,		/* ring all-reduce: reduce-scatter, then all-gather */
	AllToAll,	/* each worker sends 1/N of the bucket to every other */
};

struct Bucket {
	uint64_t bytes;
	uint64_t readyNs;	/* into the step, at the nominal compute time */
};

struct JobProfile {
	std::string name;
	uint32_t hosts = 0;		/* workers; a parameter server adds one */
	uint64_t computeNs = 0;		/* forward and backward */
	uint64_t backwardNs = 0;	/* the last part of the compute */
	std::vector<Bucket> buckets;	/* in the order they become ready */
	Collective collective = Collective::Ps;
	uint64_t jitterNs = 0;		/* uniform [0, jitter] added per step */
	double stragglerRate = 0;	/* chance a worker's step is slow */
	double stragglerFactor = 1;	/* its compute multiplied by this */
	uint32_t iters = 0;		/* steps; 0: desync-sim's --iters */
	int32_t serverOf = -1;		/* ps: the earlier job whose server it shares */
};

struct Profile {
	uint64_t rateBps = 0;		/* host link rate, 0 if not given */
	std::vector<JobProfile> jobs;
};

/*
 * Reads the profile at @path into @p.  Returns an empty string, or a
 * one-line error naming the file and, where it applies, the job.
 */
std::string ProfileLoad(const std::string &path, Profile *p);

/* Overrides every job's worker count (--hosts with --profile). */
void ProfileSetHosts(Profile *p, uint32_t hosts);

const char *CollectiveName(Collective c);

#endif /* DESYNC_SIM_PROFILE_H */
