// SPDX-License-Identifier: GPL-2.0
/*
 * profile.cc	job profiles: a small JSON reader and the checks
 *
 * The model has no JSON library to lean on (Debian's ns-3 brings none),
 * and a profile is a few hundred bytes: a recursive descent reader of
 * RFC 8259 JSON is enough, and it tells the line of a syntax error.
 */
#include "profile.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "desync-opts.h"
#include "sim-options.h"

namespace {

struct Json {
	enum Type { Null, Bool, Number, String, Array, Object } type = Null;
	bool b = false;
	double num = 0;
	std::string str;
	std::vector<Json> arr;
	std::vector<std::pair<std::string, Json>> obj;

	const Json *Get(const std::string &k) const
	{
		for (const auto &kv : obj)
			if (kv.first == k)
				return &kv.second;
		return nullptr;
	}
};

class JsonReader
{
  public:
	explicit JsonReader(const std::string &s) : m_s(s) {}

	/* The whole text as one value; false with m_err set on an error. */
	bool Read(Json *v)
	{
		if (!Value(v, 0))
			return false;
		Space();
		if (m_i != m_s.size())
			return Fail("text after the value");
		return true;
	}

	std::string Error() const { return m_err; }

  private:
	bool Fail(const std::string &what)
	{
		size_t line = 1;

		for (size_t k = 0; k < m_i && k < m_s.size(); k++)
			line += m_s[k] == '\n';
		m_err = "line " + std::to_string(line) + ": " + what;
		return false;
	}

	void Space()
	{
		while (m_i < m_s.size() && isspace(static_cast<unsigned char>(m_s[m_i])))
			m_i++;
	}

	bool Literal(const char *word)
	{
		size_t n = std::char_traits<char>::length(word);

		if (m_s.compare(m_i, n, word))
			return false;
		m_i += n;
		return true;
	}

	bool Str(std::string *out)
	{
		out->clear();
		m_i++;	/* the opening quote */
		while (m_i < m_s.size() && m_s[m_i] != '"') {
			char c = m_s[m_i++];

			if (static_cast<unsigned char>(c) < 0x20)
				return Fail("control character in a string");
			if (c != '\\') {
				*out += c;
				continue;
			}
			if (m_i >= m_s.size())
				break;
			c = m_s[m_i++];
			switch (c) {
			case '"': case '\\': case '/': *out += c; break;
			case 'b': *out += '\b'; break;
			case 'f': *out += '\f'; break;
			case 'n': *out += '\n'; break;
			case 'r': *out += '\r'; break;
			case 't': *out += '\t'; break;
			case 'u':
				/* Names and units are ASCII: keep other code points out. */
				if (m_i + 4 > m_s.size())
					return Fail("bad \\u escape");
				{
					unsigned long cp = strtoul(m_s.substr(m_i, 4).c_str(), nullptr, 16);

					if (cp == 0 || cp > 0x7f)
						return Fail("\\u escape outside ASCII");
					*out += static_cast<char>(cp);
				}
				m_i += 4;
				break;
			default:
				return Fail("bad escape in a string");
			}
		}
		if (m_i >= m_s.size())
			return Fail("unterminated string");
		m_i++;
		return true;
	}

	bool Value(Json *v, int depth)
	{
		if (depth > 32)
			return Fail("nested too deep");
		Space();
		if (m_i >= m_s.size())
			return Fail("unexpected end");
		char c = m_s[m_i];

		if (c == '{') {
			v->type = Json::Object;
			m_i++;
			Space();
			if (m_i < m_s.size() && m_s[m_i] == '}') {
				m_i++;
				return true;
			}
			for (;;) {
				std::pair<std::string, Json> kv;

				Space();
				if (m_i >= m_s.size() || m_s[m_i] != '"')
					return Fail("expected a key");
				if (!Str(&kv.first))
					return false;
				if (v->Get(kv.first))
					return Fail("key \"" + kv.first + "\" twice");
				Space();
				if (m_i >= m_s.size() || m_s[m_i] != ':')
					return Fail("expected ':'");
				m_i++;
				if (!Value(&kv.second, depth + 1))
					return false;
				v->obj.push_back(std::move(kv));
				Space();
				if (m_i < m_s.size() && m_s[m_i] == ',') {
					m_i++;
					continue;
				}
				if (m_i < m_s.size() && m_s[m_i] == '}') {
					m_i++;
					return true;
				}
				return Fail("expected ',' or '}'");
			}
		}
		if (c == '[') {
			v->type = Json::Array;
			m_i++;
			Space();
			if (m_i < m_s.size() && m_s[m_i] == ']') {
				m_i++;
				return true;
			}
			for (;;) {
				v->arr.emplace_back();
				if (!Value(&v->arr.back(), depth + 1))
					return false;
				Space();
				if (m_i < m_s.size() && m_s[m_i] == ',') {
					m_i++;
					continue;
				}
				if (m_i < m_s.size() && m_s[m_i] == ']') {
					m_i++;
					return true;
				}
				return Fail("expected ',' or ']'");
			}
		}
		if (c == '"') {
			v->type = Json::String;
			return Str(&v->str);
		}
		if (Literal("true")) {
			v->type = Json::Bool;
			v->b = true;
			return true;
		}
		if (Literal("false")) {
			v->type = Json::Bool;
			return true;
		}
		if (Literal("null"))
			return true;
		if (c == '-' || isdigit(static_cast<unsigned char>(c))) {
			const char *start = m_s.c_str() + m_i;
			char *end;

			v->type = Json::Number;
			v->num = strtod(start, &end);
			if (end == start || !std::isfinite(v->num))
				return Fail("bad number");
			m_i += end - start;
			return true;
		}
		return Fail("unexpected character");
	}

	const std::string m_s;
	size_t m_i = 0;
	std::string m_err;
};

/* What a value says, for an error message. */
std::string Show(const Json &v)
{
	std::ostringstream os;

	switch (v.type) {
	case Json::String: return "\"" + v.str + "\"";
	case Json::Number: os << v.num; return os.str();
	case Json::Bool: return v.b ? "true" : "false";
	case Json::Array: return "an array";
	case Json::Object: return "an object";
	default: return "null";
	}
}

/* A time as tc writes it ("100ms"), or a number of microseconds. */
bool TimeNs(const Json &v, uint64_t *ns)
{
	if (v.type == Json::Number) {
		if (v.num < 0 || v.num > 1e12)
			return false;
		*ns = static_cast<uint64_t>(v.num * 1e3 + 0.5);
		return true;
	}
	return v.type == Json::String && DesyncParseTimeNs(v.str, ns);
}

/* A size ("25MiB") or a number of bytes. */
bool Bytes(const Json &v, uint64_t *b)
{
	if (v.type == Json::Number) {
		if (v.num < 0 || v.num > 1e13 || v.num != std::floor(v.num))
			return false;
		*b = static_cast<uint64_t>(v.num);
		return true;
	}
	return v.type == Json::String && SimParseBytes(v.str, b);
}

bool Rate(const Json &v, uint64_t *bps)
{
	if (v.type == Json::Number) {
		if (v.num < 1000 || v.num >= 1e14)
			return false;
		*bps = static_cast<uint64_t>(v.num + 0.5);
		return true;
	}
	return v.type == Json::String && SimParseRate(v.str, bps);
}

/*
 * PyTorch DDP's bucketing (torch/csrc/distributed/c10d/reducer.hpp,
 * kDefaultFirstBucketBytes and kDefaultBucketBytesCap, bucket_cap_mb):
 * gradients fill buckets in the reverse order of the parameters, which
 * is about the order backward produces them; the first bucket holds up
 * to 1 MiB so that communication starts early, the others up to the cap.
 * A bucket is ready once backward has produced all of it; the model
 * takes backward to produce gradient bytes at an even rate, so the last
 * bucket is ready when backward ends.
 */
void DdpBuckets(JobProfile *j, uint64_t total, uint64_t first, uint64_t cap)
{
	uint64_t done = 0;
	uint64_t fwd = j->computeNs - j->backwardNs;

	while (done < total) {
		uint64_t b = std::min(total - done, j->buckets.empty() ? first : cap);

		done += b;
		j->buckets.push_back({ b, fwd + static_cast<uint64_t>(
			std::llround(static_cast<double>(j->backwardNs) * done / total)) });
	}
}

const std::set<std::string> kTopKeys = {
	"rate", "jobs", "offset_max", "slots", "dev",	/* the planner's */
	"name", "gpu", "network", "source", "notes",	/* prose, not read */
};
const std::set<std::string> kJobKeys = {
	"name", "hosts", "mark", "bytes", "compute", "backward", "gradients",
	"bucket_cap", "first_bucket", "buckets", "collective", "jitter",
	"straggler_rate", "straggler_factor", "iters", "server",
	"model", "batch", "source", "notes",		/* prose, not read */
};

std::string UnknownKey(const Json &obj, const std::set<std::string> &known)
{
	for (const auto &kv : obj.obj)
		if (!known.count(kv.first))
			return kv.first;
	return "";
}

/* Fills @j from @v; an error without the job's name, or "". */
std::string ReadJob(const Json &v, JobProfile *j)
{
	const Json *x;
	std::string bad;

	if (v.type != Json::Object)
		return "is not an object";
	if (!(bad = UnknownKey(v, kJobKeys)).empty())
		return "unknown key \"" + bad + "\"";
	if ((x = v.Get("hosts"))) {
		if (x->type == Json::Array)
			j->hosts = x->arr.size();
		else if (x->type == Json::Number && x->num >= 1 && x->num <= 65536 &&
			 x->num == std::floor(x->num))
			j->hosts = static_cast<uint32_t>(x->num);
		else
			return "bad hosts " + Show(*x) + " (want a count or a list of names)";
	}
	if (!j->hosts)
		return "has no hosts";

	if (!(x = v.Get("compute")))
		return "lacks compute";
	if (!TimeNs(*x, &j->computeNs) || !j->computeNs)
		return "bad compute " + Show(*x) + " (want a time above 0)";
	/*
	 * Backward takes about twice the forward's arithmetic (one matrix
	 * product for the activations' gradients, one for the weights'),
	 * so two thirds of the step unless the profile says otherwise.
	 */
	j->backwardNs = j->computeNs * 2 / 3;
	if ((x = v.Get("backward")) &&
	    (!TimeNs(*x, &j->backwardNs) || !j->backwardNs || j->backwardNs > j->computeNs))
		return "bad backward " + Show(*x) + " (want a time in (0, compute])";

	if ((x = v.Get("collective"))) {
		if (x->type == Json::String && x->str == "ps")
			j->collective = Collective::Ps;
		else if (x->type == Json::String && x->str == "ring")
			j->collective = Collective::Ring;
		else if (x->type == Json::String && x->str == "alltoall")
			j->collective = Collective::AllToAll;
		else
			return "bad collective " + Show(*x) + " (want ps, ring or alltoall)";
	}
	if (j->collective != Collective::Ps && j->hosts < 2)
		return std::string("a ") + CollectiveName(j->collective) + " needs 2 hosts or more";

	const Json *bytes = v.Get("bytes"), *grads = v.Get("gradients"),
		   *list = v.Get("buckets");
	if (!!bytes + !!grads + !!list != 1)
		return "needs exactly one of bytes, gradients and buckets";
	if ((v.Get("bucket_cap") || v.Get("first_bucket")) && !grads)
		return "bucket_cap and first_bucket need gradients";
	if (bytes) {
		/* One message per step when the compute ends: the old workload. */
		uint64_t b;

		if (!Bytes(*bytes, &b) || !b)
			return "bad bytes " + Show(*bytes) + " (want a size above 0)";
		j->buckets.push_back({ b, j->computeNs });
	} else if (grads) {
		uint64_t total, cap = 25ULL << 20, first = 1ULL << 20;

		if (!Bytes(*grads, &total) || !total)
			return "bad gradients " + Show(*grads) + " (want a size above 0)";
		if ((x = v.Get("bucket_cap")) && (!Bytes(*x, &cap) || !cap))
			return "bad bucket_cap " + Show(*x) + " (want a size above 0)";
		if ((x = v.Get("first_bucket")) && (!Bytes(*x, &first) || !first))
			return "bad first_bucket " + Show(*x) + " (want a size above 0)";
		if ((total - std::min(total, first)) / cap > 100000)
			return "more than 100000 buckets";
		DdpBuckets(j, total, first, cap);
	} else {
		if (list->type != Json::Array || list->arr.empty() || list->arr.size() > 100000)
			return "bad buckets (want a list of {\"bytes\": SIZE, \"at\": TIME})";
		for (size_t i = 0; i < list->arr.size(); i++) {
			const Json &e = list->arr[i];
			std::string where = "bucket " + std::to_string(i) + ": ";
			Bucket b;

			if (e.type != Json::Object || !e.Get("bytes") || !e.Get("at") ||
			    e.obj.size() != 2)
				return where + "want {\"bytes\": SIZE, \"at\": TIME}";
			if (!Bytes(*e.Get("bytes"), &b.bytes) || !b.bytes)
				return where + "bad bytes " + Show(*e.Get("bytes"));
			if (!TimeNs(*e.Get("at"), &b.readyNs) || b.readyNs > j->computeNs)
				return where + "bad at " + Show(*e.Get("at")) +
				       " (want a time within compute)";
			if (!j->buckets.empty() && b.readyNs < j->buckets.back().readyNs)
				return where + "ready before the bucket ahead of it";
			j->buckets.push_back(b);
		}
	}

	if ((x = v.Get("jitter")) && !TimeNs(*x, &j->jitterNs))
		return "bad jitter " + Show(*x) + " (want a time)";
	if ((x = v.Get("straggler_rate")) &&
	    (x->type != Json::Number || x->num < 0 || x->num > 1))
		return "bad straggler_rate " + Show(*x) + " (want a probability in [0, 1])";
	if (x)
		j->stragglerRate = x->num;
	if ((x = v.Get("straggler_factor")) &&
	    (x->type != Json::Number || x->num < 1 || x->num > 100))
		return "bad straggler_factor " + Show(*x) + " (want a number in [1, 100])";
	if (x)
		j->stragglerFactor = x->num;
	if (j->stragglerRate > 0 && !x)
		return "straggler_rate needs straggler_factor";
	if ((x = v.Get("iters")) &&
	    (x->type != Json::Number || x->num < 1 || x->num > 100000 ||
	     x->num != std::floor(x->num)))
		return "bad iters " + Show(*x) + " (want a count of steps, 1..100000)";
	if (x)
		j->iters = static_cast<uint32_t>(x->num);
	return "";
}

/*
 * A job's "server": the name of an earlier parameter-server job whose
 * server it pushes to as well, as the jobs of the emulated cluster's
 * twojob scenario share one aggregator.
 */
std::string ReadServer(const Json &v, const std::vector<JobProfile> &before, JobProfile *j)
{
	const Json *x = v.Get("server");

	if (!x)
		return "";
	if (j->collective != Collective::Ps)
		return "server needs collective ps";
	for (size_t i = 0; x->type == Json::String && i < before.size(); i++) {
		if (before[i].name != x->str)
			continue;
		if (before[i].collective != Collective::Ps)
			return "server " + Show(*x) + " is not a ps job";
		j->serverOf = static_cast<int32_t>(i);
		return "";
	}
	return "bad server " + Show(*x) + " (want the name of an earlier job)";
}

} // namespace

const char *CollectiveName(Collective c)
{
	switch (c) {
	case Collective::Ring: return "ring";
	case Collective::AllToAll: return "alltoall";
	default: return "ps";
	}
}

std::string ProfileLoad(const std::string &path, Profile *p)
{
	std::ifstream f(path);
	std::stringstream text;
	Json doc;
	const Json *x;
	std::string bad;

	if (!f)
		return path + ": cannot read";
	text << f.rdbuf();
	JsonReader r(text.str());
	if (!r.Read(&doc))
		return path + ": " + r.Error();
	if (doc.type != Json::Object)
		return path + ": not a JSON object";
	if (!(bad = UnknownKey(doc, kTopKeys)).empty())
		return path + ": unknown key \"" + bad + "\"";
	if ((x = doc.Get("rate")) && !Rate(*x, &p->rateBps))
		return path + ": bad rate " + Show(*x) + " (want e.g. \"100Gbps\")";
	x = doc.Get("jobs");
	if (!x || x->type != Json::Array || x->arr.empty())
		return path + ": want a non-empty list of jobs";
	if (x->arr.size() > 64)
		return path + ": more than 64 jobs";
	p->jobs.clear();
	for (size_t k = 0; k < x->arr.size(); k++) {
		JobProfile j;
		const Json *name = x->arr[k].type == Json::Object ? x->arr[k].Get("name") : nullptr;

		/* The planner's default names: job0, job1, ... */
		j.name = name && name->type == Json::String ? name->str : "job" + std::to_string(k);
		std::string err = ReadJob(x->arr[k], &j);
		if (err.empty())
			err = ReadServer(x->arr[k], p->jobs, &j);
		if (!err.empty())
			return path + ": job " + j.name + ": " + err;
		p->jobs.push_back(std::move(j));
	}
	return "";
}

void ProfileSetHosts(Profile *p, uint32_t hosts)
{
	for (JobProfile &j : p->jobs)
		j.hosts = hosts;
}
