// SPDX-License-Identifier: GPL-2.0
/*
 * workload.cc	training steps from job profiles, and background flows
 */
#include "workload.h"

#include <algorithm>
#include <cmath>
#include <iomanip>

using namespace ns3;

namespace {

/*
 * Each job and the background draw from streams of their own, fixed by
 * number rather than handed out in creation order, so that adding a
 * job or the background moves no other draw of the run.
 */
const int64_t kJobStream = 2000000;
const int64_t kBackgroundStream = 2100000;

Ptr<UniformRandomVariable> Stream(int64_t n)
{
	return CreateObjectWithAttributes<UniformRandomVariable>("Stream", IntegerValue(n));
}

double Quantile(std::vector<double> v, double q)
{
	if (v.empty())
		return 0;
	std::sort(v.begin(), v.end());
	size_t k = static_cast<size_t>(std::ceil(q * v.size()));
	return v[k ? k - 1 : 0];
}

void List(std::ostream &js, const char *key, const std::vector<double> &v)
{
	js << ", \"" << key << "\": [";
	for (size_t i = 0; i < v.size(); i++)
		js << (i ? ", " : "") << v[i];
	js << "]";
}

} // namespace

Training::Training(const Profile &p, uint32_t iters)
{
	for (const JobProfile &jp : p.jobs) {
		Job j;

		j.p = jp;
		j.iters = jp.iters ? jp.iters : iters;
		j.rng = Stream(kJobStream + m_jobs.size());
		m_jobs.push_back(std::move(j));
	}
}

void Training::Place(uint32_t hostsPerTor, std::vector<uint32_t> *torOf)
{
	uint32_t workers = 0, most = 0;

	for (const Job &j : m_jobs) {
		workers += j.p.hosts;
		most = std::max(most, j.p.hosts);
	}
	uint32_t tors = (workers + hostsPerTor - 1) / hostsPerTor;

	torOf->clear();
	for (uint32_t k = 0; k < most; k++) {
		for (Job &j : m_jobs) {
			if (k >= j.p.hosts)
				continue;
			j.hosts.push_back(torOf->size());
			torOf->push_back(k % tors);
		}
	}
	for (uint32_t i = 0; i < m_jobs.size(); i++) {
		Job &j = m_jobs[i];

		j.w.resize(j.p.hosts);
		for (uint32_t k = 0; k < j.p.hosts; k++) {
			j.w[k].host = j.hosts[k];
			j.w[k].next = (k + 1) % j.p.hosts;
			j.w[k].prev = (k + j.p.hosts - 1) % j.p.hosts;
		}
		if (j.p.collective != Collective::Ps)
			continue;
		if (j.p.serverOf >= 0) {
			j.server = m_jobs[j.p.serverOf].server;
			continue;
		}
		j.server = torOf->size();
		torOf->push_back(i % tors);
	}
}

void Training::Build(WorkloadNet *net)
{
	m_net = net;
	for (uint32_t i = 0; i < m_jobs.size(); i++) {
		Job &j = m_jobs[i];
		const uint32_t n = j.p.hosts;

		for (uint32_t k = 0; k < n; k++) {
			Worker &x = j.w[k];

			x.connTo.assign(n, ~0u);
			switch (j.p.collective) {
			case Collective::Ps:
				x.toServer = net->Connection(x.host, j.server, i);
				x.fromServer = net->Connection(j.server, x.host, i);
				break;
			case Collective::Ring:
				if (n > 1)
					x.connTo[x.next] = net->Connection(x.host, j.w[x.next].host, i);
				break;
			case Collective::AllToAll:
				for (uint32_t p = 0; p < n; p++)
					if (p != k)
						x.connTo[p] = net->Connection(x.host, j.w[p].host, i);
				break;
			}
		}
	}
}

void Training::Start(std::function<void()> allDone)
{
	m_allDone = std::move(allDone);
	m_jobsLeft = m_jobs.size();
	for (uint32_t j = 0; j < m_jobs.size(); j++)
		StartStep(j);
}

/*
 * Every worker starts the step at the job's barrier: a synchronous data
 * parallel step needs the reduced gradients of the last one before its
 * forward pass.  Its compute is the profile's, times the straggler
 * factor if it draws one, plus uniform jitter; its buckets become ready
 * at the same points of the compute, stretched with it.
 */
void Training::StartStep(uint32_t ji)
{
	Job &j = m_jobs[ji];
	const uint32_t nb = j.p.buckets.size();

	j.start = Simulator::Now();
	j.pending = j.p.hosts;
	std::fill(j.serverRcvd.begin(), j.serverRcvd.end(), 0);
	j.serverRcvd.resize(nb, 0);
	for (uint32_t k = 0; k < j.p.hosts; k++) {
		Worker &x = j.w[k];
		double d = j.p.computeNs;

		x.computed = false;
		x.launched = x.finished = 0;
		x.ready.assign(nb, false);
		x.go.assign(nb, false);
		x.reduced.assign(nb, false);
		x.sent.assign(nb, 0);
		x.rcvd.assign(nb, 0);
		if (j.p.stragglerRate > 0 && j.rng->GetValue() < j.p.stragglerRate)
			d *= j.p.stragglerFactor;
		if (j.p.jitterNs)
			d += j.rng->GetValue(0, j.p.jitterNs);
		j.computeSum += d;
		double scale = d / j.p.computeNs;
		for (uint32_t b = 0; b < nb; b++)
			Simulator::Schedule(NanoSeconds(std::llround(j.p.buckets[b].readyNs * scale)),
					    &Training::BucketReady, this, ji, k, b);
		Simulator::Schedule(NanoSeconds(std::llround(d)), &Training::Computed, this, ji, k);
	}
}

void Training::Computed(uint32_t ji, uint32_t k)
{
	Worker &x = m_jobs[ji].w[k];

	x.computed = true;
	if (x.finished == m_jobs[ji].p.buckets.size())
		WorkerDone(ji, k);
}

void Training::BucketReady(uint32_t ji, uint32_t k, uint32_t b)
{
	m_jobs[ji].w[k].ready[b] = true;
	TryLaunch(ji, k);
}

/*
 * Start the collectives of the ready buckets.  NCCL runs a rank's
 * collectives one after the other on its stream, so a ring or an
 * all-to-all begins only when the bucket before it is reduced here; a
 * parameter server's pushes go as soon as their bucket is ready.  The
 * jitter baseline sleeps before each bucket's first send.
 */
void Training::TryLaunch(uint32_t ji, uint32_t k)
{
	Job &j = m_jobs[ji];
	Worker &x = j.w[k];
	const bool serial = j.p.collective != Collective::Ps;

	while (x.launched < j.p.buckets.size() && x.ready[x.launched] &&
	       (!serial || x.finished == x.launched)) {
		uint32_t b = x.launched++;
		Time d = m_net->AppDelay();

		if (d.IsZero())
			Launch(ji, k, b);
		else
			Simulator::Schedule(d, &Training::Launch, this, ji, k, b);
	}
}

void Training::Launch(uint32_t ji, uint32_t k, uint32_t b)
{
	Job &j = m_jobs[ji];
	Worker &x = j.w[k];
	const uint64_t bytes = j.p.buckets[b].bytes;
	const uint32_t n = j.p.hosts;

	x.go[b] = true;
	switch (j.p.collective) {
	case Collective::Ps:
		x.sent[b] = 1;
		j.stats.sentBytes += bytes;
		m_net->Post(x.toServer, bytes, [this, ji, b]() { ServerGot(ji, b); });
		break;
	case Collective::AllToAll:
		for (uint32_t p = 0; p < n; p++) {
			if (p == k)
				continue;
			uint64_t c = Chunk(bytes, n, p);

			x.sent[b]++;
			j.stats.sentBytes += c;
			m_net->Post(x.connTo[p], c, [this, ji, p, b]() { Received(ji, p, b); });
		}
		CheckReduced(ji, k, b);
		break;
	case Collective::Ring:
		Advance(ji, k, b);
		break;
	}
}

/*
 * Ring all-reduce (NCCL's ring, as Patarasuk and Yuan's bandwidth
 * optimal all-reduce): N - 1 reduce-scatter steps, then N - 1
 * all-gather steps, each sending one chunk of bucket/N to the next rank.
 * Step s may go once the chunk of step s - 1 has come in from the
 * previous rank, since it carries that chunk reduced with (or, in the
 * all-gather, copied from) what arrived; the first needs only the
 * bucket.  Each worker so sends 2(N-1)/N of the bucket.
 */
void Training::Advance(uint32_t ji, uint32_t k, uint32_t b)
{
	Job &j = m_jobs[ji];
	Worker &x = j.w[k];
	const uint32_t n = j.p.hosts, steps = 2 * (n - 1);

	while (x.go[b] && x.sent[b] < steps && x.sent[b] <= x.rcvd[b]) {
		uint32_t s = x.sent[b]++;
		/* Reduce-scatter sends chunk k - s, all-gather k + 1 - s. */
		uint32_t c = s < n - 1 ? (k + n - s) % n : (k + 1 + 2 * n - (s - (n - 1))) % n;
		uint64_t bytes = Chunk(j.p.buckets[b].bytes, n, c);
		uint32_t to = x.next;

		j.stats.sentBytes += bytes;
		m_net->Post(x.connTo[to], bytes, [this, ji, to, b]() { Received(ji, to, b); });
	}
	CheckReduced(ji, k, b);
}

void Training::Received(uint32_t ji, uint32_t k, uint32_t b)
{
	Job &j = m_jobs[ji];

	j.w[k].rcvd[b]++;
	if (j.p.collective == Collective::Ring)
		Advance(ji, k, b);
	else
		CheckReduced(ji, k, b);
}

/* Parameter server: the sum goes back to every worker once all pushed. */
void Training::ServerGot(uint32_t ji, uint32_t b)
{
	Job &j = m_jobs[ji];

	if (++j.serverRcvd[b] < j.p.hosts)
		return;
	for (uint32_t k = 0; k < j.p.hosts; k++)
		m_net->Post(j.w[k].fromServer, j.p.buckets[b].bytes,
			    [this, ji, k, b]() { Received(ji, k, b); });
}

/* Whether worker @k holds bucket @b reduced now; the step goes on if so. */
void Training::CheckReduced(uint32_t ji, uint32_t k, uint32_t b)
{
	Job &j = m_jobs[ji];
	Worker &x = j.w[k];
	const uint32_t n = j.p.hosts;
	bool done;

	switch (j.p.collective) {
	case Collective::Ring:
		done = x.sent[b] == 2 * (n - 1) && x.rcvd[b] == 2 * (n - 1);
		break;
	case Collective::AllToAll:
		done = x.go[b] && x.rcvd[b] == n - 1;
		break;
	default:
		done = x.rcvd[b] == 1;
		break;
	}
	if (!done || x.reduced[b])
		return;
	x.reduced[b] = true;
	x.finished++;
	TryLaunch(ji, k);
	if (x.computed && x.finished == j.p.buckets.size())
		WorkerDone(ji, k);
}

void Training::WorkerDone(uint32_t ji, uint32_t)
{
	Job &j = m_jobs[ji];

	if (--j.pending)
		return;
	j.stats.iterUs.push_back((Simulator::Now() - j.start).GetNanoSeconds() / 1e3);
	if (++j.iter < j.iters) {
		StartStep(ji);
		return;
	}
	j.stats.done = true;
	j.stats.end = Simulator::Now();
	if (!--m_jobsLeft && m_allDone)
		m_allDone();
}

/* Chunk @k of @n of a bucket of @bytes: the first bytes % n one byte more. */
uint64_t Training::Chunk(uint64_t bytes, uint32_t n, uint32_t k) const
{
	return std::max<uint64_t>(1, bytes / n + (k < bytes % n));
}

void Training::Report(std::ostream &js) const
{
	std::vector<double> mean, compute, sent, grads, buckets;

	for (const Job &j : m_jobs) {
		const JobStats &st = j.stats;
		double m = 0, g = 0;
		/* Steps begun: the last may not have ended. */
		double begun = j.p.hosts * (st.done ? j.iters : j.iter + 1.0);

		for (double v : st.iterUs)
			m += v / st.iterUs.size();
		for (const Bucket &b : j.p.buckets)
			g += b.bytes;
		mean.push_back(m);
		compute.push_back(j.computeSum / 1e3 / begun);
		sent.push_back(st.sentBytes / begun);
		grads.push_back(g);
		buckets.push_back(j.p.buckets.size());
	}
	js << ", \"job_names\": [";
	for (size_t i = 0; i < m_jobs.size(); i++)
		js << (i ? ", " : "") << "\"" << m_jobs[i].p.name << "\"";
	js << "], \"job_collectives\": [";
	for (size_t i = 0; i < m_jobs.size(); i++)
		js << (i ? ", " : "") << "\"" << CollectiveName(m_jobs[i].p.collective) << "\"";
	js << "], \"job_workers\": [";
	for (size_t i = 0; i < m_jobs.size(); i++)
		js << (i ? ", " : "") << m_jobs[i].p.hosts;
	js << "]";
	List(js, "job_iter_mean_us", mean);
	List(js, "job_compute_us", compute);
	js << std::setprecision(0);
	List(js, "job_bucket_bytes", grads);
	List(js, "job_buckets", buckets);
	List(js, "job_sent_bytes_per_worker_step", sent);
	js << std::setprecision(1);
}

/*
 * Flow sizes of the DCTCP paper (Alizadeh et al., "Data Center TCP
 * (DCTCP)", SIGCOMM 2010, section 2: the background flows of a
 * web-search cluster) and of VL2's data-mining cluster (Greenberg et al., "VL2: A
 * Scalable and Flexible Data Center Network", SIGCOMM 2009, section 3),
 * as pFabric's simulations tabulate them (Alizadeh et al., SIGCOMM 2013)
 * in packets of 1460 bytes: {packets, P(size <= packets)}, sizes linear
 * between the points.
 */
const double kWebSearch[][2] = {
	{ 6, 0 }, { 6, 0.15 }, { 13, 0.2 }, { 19, 0.3 }, { 33, 0.4 }, { 53, 0.53 },
	{ 133, 0.6 }, { 667, 0.7 }, { 1333, 0.8 }, { 3333, 0.9 }, { 6667, 0.97 },
	{ 20000, 1 },
};
const double kDataMining[][2] = {
	{ 1, 0 }, { 1, 0.5 }, { 2, 0.6 }, { 3, 0.7 }, { 7, 0.8 }, { 267, 0.9 },
	{ 2107, 0.95 }, { 66667, 0.99 }, { 666667, 1 },
};
const double kCdfPacket = 1460;

Background::Background(const std::string &kind, double load, uint64_t rateBps, uint32_t hosts)
	: m_kind(kind), m_load(load), m_rate(rateBps), m_hosts(hosts)
{
	auto fill = [this](const auto &t) {
		for (const auto &pt : t)
			m_cdf.push_back({ pt[0] * kCdfPacket, pt[1] });
	};

	if (kind == "datamining")
		fill(kDataMining);
	else
		fill(kWebSearch);
	m_rng = Stream(kBackgroundStream);
}

double Background::MeanBytes() const
{
	double m = 0;

	for (size_t i = 1; i < m_cdf.size(); i++)
		m += (m_cdf[i].second - m_cdf[i - 1].second) *
		     (m_cdf[i].first + m_cdf[i - 1].first) / 2;
	return m;
}

uint64_t Background::DrawSize()
{
	double u = m_rng->GetValue();
	size_t i = 1;

	while (i + 1 < m_cdf.size() && m_cdf[i].second < u)
		i++;
	const auto &a = m_cdf[i - 1], &b = m_cdf[i];
	double f = b.second > a.second ? (u - a.second) / (b.second - a.second) : 1;
	return std::max<uint64_t>(1, std::llround(a.first + f * (b.first - a.first)));
}

void Background::Start(WorkloadNet *net)
{
	m_net = net;
	Arrive();
}

/*
 * One flow now, between a random pair of hosts, and the next after an
 * exponential gap: Poisson arrivals whose bytes make @load of every
 * host's link on average (each host sends and receives 1/hosts of them).
 */
void Background::Arrive()
{
	uint32_t src = m_rng->GetInteger(0, m_hosts - 1);
	uint32_t dst = m_rng->GetInteger(0, m_hosts - 2);
	uint64_t size = DrawSize();
	Time t0 = Simulator::Now();
	double perS = m_load * m_rate * m_hosts / (8 * MeanBytes());

	dst += dst >= src;
	m_started++;
	m_bytes += size;
	m_net->Flow(src, dst, size, [this, size, t0]() {
		m_done.push_back({ size, (Simulator::Now() - t0).GetNanoSeconds() / 1e3 });
		if (m_stopped && m_done.size() == m_started && m_drained)
			m_drained();
	});
	m_next = Simulator::Schedule(Seconds(-std::log(1 - m_rng->GetValue()) / perS),
				     &Background::Arrive, this);
}

void Background::Stop(std::function<void()> drained)
{
	m_stopped = true;
	m_next.Cancel();
	if (m_done.size() == m_started)
		drained();
	else
		m_drained = std::move(drained);
}

/*
 * Small flows are those of up to 100 KB, as the DCTCP paper (its query
 * and short-message traffic) and pFabric report them; large ones above
 * 10 MB.
 */
void Background::Report(std::ostream &js) const
{
	std::vector<double> all, small, large;

	for (const auto &d : m_done) {
		all.push_back(d.second);
		if (d.first <= 100000)
			small.push_back(d.second);
		else if (d.first > 10000000)
			large.push_back(d.second);
	}
	js << ", \"background\": \"" << m_kind << "\", \"bg_load\": " << std::setprecision(3)
	   << m_load << std::setprecision(1) << ", \"bg_flows\": " << m_started
	   << ", \"bg_done\": " << m_done.size() << ", \"bg_bytes\": " << m_bytes
	   << ", \"bg_small_flows\": " << small.size()
	   << ", \"bg_fct_p50_us\": " << Quantile(all, 0.5)
	   << ", \"bg_fct_p99_us\": " << Quantile(all, 0.99)
	   << ", \"bg_small_fct_p50_us\": " << Quantile(small, 0.5)
	   << ", \"bg_small_fct_p99_us\": " << Quantile(small, 0.99)
	   << ", \"bg_large_fct_p99_us\": " << Quantile(large, 0.99);
}
