/* SPDX-License-Identifier: GPL-2.0 */
/*
 * workload.h	training steps from job profiles, and background flows
 *
 * Training runs the jobs of a profile (profile.h): every step each
 * worker computes, its gradient buckets become ready during backward
 * and go out by the job's collective while the compute goes on, and the
 * step ends when every worker has computed and every bucket is reduced.
 * Background sends flows of the DCTCP paper's web-search or data-mining
 * sizes between random hosts at a share of the host links' capacity.
 * Both only post messages: the cluster (desync-sim.cc) carries them.
 */
#ifndef DESYNC_SIM_WORKLOAD_H
#define DESYNC_SIM_WORKLOAD_H

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "ns3/core-module.h"

#include "profile.h"

/* What a workload needs of the cluster. */
class WorkloadNet
{
  public:
	virtual ~WorkloadNet() = default;
	/*
	 * A persistent connection from host @src to host @dst, set up
	 * before the first step, for job @job; its index.
	 */
	virtual uint32_t Connection(uint32_t src, uint32_t dst, uint32_t job) = 0;
	/*
	 * Queues @bytes on connection @conn behind what it already
	 * carries; @done runs when the receiver has read the last byte.
	 */
	virtual void Post(uint32_t conn, uint64_t bytes, std::function<void()> done) = 0;
	/* @bytes from @src to @dst on a connection of its own, closed once sent. */
	virtual void Flow(uint32_t src, uint32_t dst, uint64_t bytes, std::function<void()> done) = 0;
	/* How long the application sleeps before a burst (the jitter baseline). */
	virtual ns3::Time AppDelay() = 0;
};

struct JobStats {
	std::vector<double> iterUs;
	uint64_t sentBytes = 0;		/* by the workers, all steps */
	ns3::Time end;
	bool done = false;
};

class Training
{
  public:
	Training(const Profile &p, uint32_t iters);

	/*
	 * Places the jobs' hosts under ToRs of @hostsPerTor: worker k of
	 * every job under ToR k mod ToRs, so that a ring's neighbours sit in
	 * different racks and every ToR uplink carries every job; parameter
	 * servers after the workers, job j's under ToR j mod ToRs.  Fills
	 * the ToR of each host index.
	 */
	void Place(uint32_t hostsPerTor, std::vector<uint32_t> *torOf);
	/* The host indices of job @j's workers. */
	const std::vector<uint32_t> &Workers(uint32_t j) const { return m_jobs[j].hosts; }
	uint32_t Jobs() const { return m_jobs.size(); }
	/* Opens the connections the collectives use. */
	void Build(WorkloadNet *net);
	/* Starts every job's first step; @allDone runs when the last job ends. */
	void Start(std::function<void()> allDone);
	const JobStats &Stats(uint32_t j) const { return m_jobs[j].stats; }
	/* The profile's fields of the results object, each after ", ". */
	void Report(std::ostream &js) const;

  private:
	struct Worker {
		uint32_t host = 0;
		uint32_t next = 0, prev = 0;	/* ring neighbours (job indices) */
		std::vector<uint32_t> connTo;	/* per peer index; ~0u: none */
		uint32_t toServer = ~0u, fromServer = ~0u;
		/* This step: */
		bool computed = false;
		uint32_t launched = 0;		/* buckets whose collective began */
		uint32_t finished = 0;		/* buckets reduced here, in order */
		/* Per bucket: its gradients are in, its collective began here, */
		std::vector<bool> ready, go, reduced;	/* and it is reduced */
		std::vector<uint32_t> sent, rcvd;	/* messages */
	};
	struct Job {
		JobProfile p;
		std::vector<uint32_t> hosts;	/* of the workers */
		uint32_t server = ~0u;		/* its host, for ps */
		std::vector<Worker> w;
		std::vector<uint32_t> serverRcvd;	/* per bucket, for ps */
		uint32_t iters = 0;		/* steps to run */
		uint32_t iter = 0;
		uint32_t pending = 0;		/* workers still in the step */
		ns3::Time start;
		double computeSum = 0;
		JobStats stats;
		ns3::Ptr<ns3::UniformRandomVariable> rng;
	};

	void StartStep(uint32_t j);
	void Computed(uint32_t j, uint32_t w);
	void BucketReady(uint32_t j, uint32_t w, uint32_t b);
	void TryLaunch(uint32_t j, uint32_t w);
	void Launch(uint32_t j, uint32_t w, uint32_t b);
	void Advance(uint32_t j, uint32_t w, uint32_t b);
	void Received(uint32_t j, uint32_t w, uint32_t b);
	void ServerGot(uint32_t j, uint32_t b);
	void CheckReduced(uint32_t j, uint32_t w, uint32_t b);
	void WorkerDone(uint32_t j, uint32_t w);
	uint64_t Chunk(uint64_t bytes, uint32_t n, uint32_t k) const;

	std::vector<Job> m_jobs;
	WorkloadNet *m_net = nullptr;
	std::function<void()> m_allDone;
	uint32_t m_jobsLeft = 0;
};

class Background
{
  public:
	/* @kind "websearch" or "datamining"; @load of @rateBps per host. */
	Background(const std::string &kind, double load, uint64_t rateBps, uint32_t hosts);
	/* Flows start now and arrive until Stop(). */
	void Start(WorkloadNet *net);
	/* No more flows; @drained runs once every flow started has ended. */
	void Stop(std::function<void()> drained);
	/* The background's fields of the results object, each after ", ". */
	void Report(std::ostream &js) const;
	/* The mean of the size distribution, in bytes. */
	double MeanBytes() const;

  private:
	void Arrive();
	uint64_t DrawSize();

	std::string m_kind;
	double m_load;
	uint64_t m_rate;
	uint32_t m_hosts;
	std::vector<std::pair<double, double>> m_cdf;	/* bytes, P(size <= bytes) */
	WorkloadNet *m_net = nullptr;
	ns3::Ptr<ns3::UniformRandomVariable> m_rng;
	ns3::EventId m_next;
	bool m_stopped = false;
	uint64_t m_started = 0, m_bytes = 0;
	std::vector<std::pair<uint64_t, double>> m_done;	/* size, FCT us */
	std::function<void()> m_drained;
};

#endif /* DESYNC_SIM_WORKLOAD_H */
