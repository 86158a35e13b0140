# SPDX-License-Identifier: GPL-2.0
#
# Sourced by smoke.sh (which defines SIM, OUT, ok, not_ok and field):
# job profiles and background flows.  A profile's buckets overlap its
# compute, a ring all-reduce moves 2(N-1)/N of the buckets per worker,
# a parameter server and an all-to-all move theirs, stragglers stretch
# the compute, jobs of different periods share the uplinks, a job may
# share another's parameter server and run its own steps, background
# flows all complete and are reported apart, and bad profiles exit 2.
# shellcheck shell=bash

# Whether the Python expression $2 over j, the JSON object in file $1, holds.
wl_py()
{
	/usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(not eval("(" + sys.argv[2] + ")"))' "$1" "$2"
}

# Four 200 kB buckets, ready at the quarters of a 1 ms backward, on a
# ring of 4 hosts two racks apart at 10 Gbit/s: a bucket's all-reduce
# takes about a quarter of the compute, so overlapping it with backward
# hides all but the last one.  The same buckets all ready at once (a
# compute of 1 us) take the communication alone.
wl_ring()	# COMPUTE AT...
{
	local compute=$1 sep=''

	shift
	printf '{"rate": "10Gbps", "jobs": [{"name": "r", "hosts": 4, "compute": "%s",' "$compute"
	printf ' "backward": "%s", "collective": "ring", "buckets": [' "$compute"
	for at in "$@"; do
		printf '%s{"bytes": 200000, "at": "%s"}' "$sep" "$at"
		sep=', '
	done
	printf ']}]}\n'
}
wl_ring 1ms 250us 500us 750us 1ms >"$OUT/ring.json"
wl_ring 1us 1us 1us 1us 1us >"$OUT/ring-comm.json"
WL=(--hostsPerTor=2 --iters=3 --seed=4)
if "$SIM" --profile="$OUT/ring.json" "${WL[@]}" --json="$OUT/ring.out" >/dev/null &&
   "$SIM" --profile="$OUT/ring-comm.json" "${WL[@]}" --json="$OUT/ring-comm.out" >/dev/null &&
   comm=$(field "$OUT/ring-comm.out" iter_mean_us) &&
   wl_py "$OUT/ring.out" "j['valid'] and j['iters_done'] == 3 and
	max(1000, $comm) <= j['iter_mean_us'] < 0.85 * (1000 + $comm)"; then
	ok "a profile's buckets overlap its compute: max(compute, comm) <= step < compute + comm"
else
	not_ok "a profile's buckets overlap its compute: max(compute, comm) <= step < compute + comm" \
	       "(step $(field "$OUT/ring.out" iter_mean_us) us, comm ${comm:-?} us)"
fi

# Per worker and step: a ring sends 2(N-1)/N of the buckets (chunks of
# bucket/N, up to a byte off each), a parameter server's worker all of
# them, an all-to-all's (N-1)/N.
if wl_py "$OUT/ring.out" "abs(j['job_sent_bytes_per_worker_step'][0] -
	2 * 3 / 4 * j['job_bucket_bytes'][0]) <= 2 * j['job_buckets'][0]"; then
	ok "a ring all-reduce moves 2(N-1)/N of the buckets per worker"
else
	not_ok "a ring all-reduce moves 2(N-1)/N of the buckets per worker"
fi

# Two jobs of different periods on the same ToRs (worker k of each
# under ToR k mod 2): a parameter server job and an all-to-all job
# whose every worker straggles at three times its compute.
cat >"$OUT/two.json" <<EOF
{"rate": "10Gbps", "jobs": [
 {"name": "ps", "hosts": 4, "compute": "1ms", "gradients": "300kB",
  "bucket_cap": "100kB", "first_bucket": "100kB", "collective": "ps"},
 {"name": "moe", "hosts": 4, "compute": "2ms", "bytes": "300kB",
  "collective": "alltoall", "straggler_rate": 1, "straggler_factor": 3}]}
EOF
if "$SIM" --profile="$OUT/two.json" "${WL[@]}" --json="$OUT/two.out" >/dev/null &&
   wl_py "$OUT/two.out" "j['valid'] and j['iters_done'] == 6 and
	j['job_buckets'] == [3, 1] and j['job_sent_bytes_per_worker_step'][0] == 300000 and
	abs(j['job_sent_bytes_per_worker_step'][1] - 3 / 4 * 300000) <= 1 and
	j['job_compute_us'] == [1000, 6000] and
	1000 < j['job_iter_mean_us'][0] < 6000 <= j['job_iter_mean_us'][1]"; then
	ok "jobs of different periods share the uplinks; ps and all-to-all volumes, stragglers"
else
	not_ok "jobs of different periods share the uplinks; ps and all-to-all volumes, stragglers"
fi

# Two parameter-server jobs of 4 workers, the second sharing the
# first's server over 2 of its 3 steps, as the emulated cluster's
# twojob: while both push, the server's port drains 8 pushes, not 4.
ps2()	# SERVER-KEY
{
	printf '{"rate": "10Gbps", "jobs": [
 {"name": "a", "hosts": 4, "compute": "1ms", "bytes": "500kB", "collective": "ps"},
 {"name": "b", "hosts": 4, "compute": "1ms", "bytes": "500kB", "collective": "ps",
  "iters": 2%s}]}\n' "$1"
}
ps2 ', "server": "a"' >"$OUT/shared.json"
ps2 '' >"$OUT/apart.json"
if "$SIM" --profile="$OUT/shared.json" "${WL[@]}" --json="$OUT/shared.out" >/dev/null &&
   "$SIM" --profile="$OUT/apart.json" "${WL[@]}" --json="$OUT/apart.out" >/dev/null &&
   wl_py "$OUT/shared.out" "j['valid'] and j['iters_done'] == 5 and j['conns'] == 16" &&
   /usr/bin/python3 -c 'import json,sys; s, a = (json.load(open(f))["iter_us"] for f in sys.argv[1:])
sys.exit(not (s[0] > 1.5 * a[0] and s[3] > 1.5 * a[3]))' "$OUT/shared.out" "$OUT/apart.out"; then
	ok "a job's own iters; two ps jobs share a server's port"
else
	not_ok "a job's own iters; two ps jobs share a server's port"
fi

# Web-search flows at a fifth of every host link beside the ring: every
# flow started completes, reported apart from the job's messages.
if "$SIM" --profile="$OUT/ring.json" --hostsPerTor=2 --iters=10 --seed=4 \
	--background=websearch --bgLoad=0.2 --json="$OUT/bg.out" >/dev/null &&
   wl_py "$OUT/bg.out" "j['valid'] and j['background'] == 'websearch' and
	j['bg_flows'] >= 5 and j['bg_done'] == j['bg_flows'] and j['bg_small_flows'] > 0 and
	0 < j['bg_small_fct_p99_us'] <= j['bg_fct_p99_us'] and
	len(j['iter_us']) == 10"; then
	ok "background flows complete and are reported apart (bg_flows $(field "$OUT/bg.out" bg_flows))"
else
	not_ok "background flows complete and are reported apart"
fi

# The shipped profiles load (a run of two hosts cut off at once).
shipped=0
for p in "$SIM_DIR"/profiles/*.json; do
	"$SIM" --profile="$p" --hosts=2 --timeLimit=1us --json="$OUT/shipped.out" >/dev/null &&
		wl_py "$OUT/shipped.out" "j['scenario'] == 'profile' and min(j['job_buckets']) >= 1" &&
		shipped=$((shipped + 1))
done
if [ "$shipped" -ge 4 ] && [ "$shipped" -eq "$(find "$SIM_DIR/profiles" -name '*.json' | wc -l)" ]; then
	ok "the $shipped shipped profiles load"
else
	not_ok "the shipped profiles load ($shipped of them)"
fi

# Each bad profile: exit 2, one line on stderr naming the file.
bad_profile()	# TEXT
{
	local err rc

	printf '%s\n' "$1" >"$OUT/bad.json"
	err=$("$SIM" --profile="$OUT/bad.json" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] &&
	   [[ $err == *bad.json* ]]; then
		ok "bad profile $1 exits 2 with one line"
	else
		not_ok "bad profile $1 exits 2 with one line (rc $rc: $err)"
	fi
}

J='"hosts": 2, "compute": "1ms"'
bad_profile '{"jobs": [{'"$J"', "bytes": 1000}'
bad_profile '{"jobs": []}'
bad_profile '{"jobs": [{'"$J"', "bytes": 1000, "colective": "ring"}]}'
bad_profile '{"jobs": [{'"$J"', "bytes": 1000, "collective": "tree"}]}'
bad_profile '{"jobs": [{"hosts": 2, "bytes": 1000}]}'
bad_profile '{"jobs": [{'"$J"', "bytes": 1000, "gradients": "1MB"}]}'
bad_profile '{"jobs": [{'"$J"'}]}'
bad_profile '{"jobs": [{'"$J"', "bytes": "1 parsec"}]}'
bad_profile '{"jobs": [{'"$J"', "backward": "2ms", "bytes": 1000}]}'
bad_profile '{"jobs": [{'"$J"', "buckets": [{"bytes": 1000, "at": "2ms"}]}]}'
bad_profile '{"jobs": [{'"$J"', "buckets": [{"bytes": 1, "at": "1ms"}, {"bytes": 1, "at": "0"}]}]}'
bad_profile '{"jobs": [{'"$J"', "bytes": 1000, "straggler_rate": 0.1}]}'
bad_profile '{"jobs": [{'"$J"', "bytes": 1000, "straggler_rate": 2, "straggler_factor": 2}]}'
bad_profile '{"jobs": [{"hosts": 1, "compute": "1ms", "bytes": 1000, "collective": "ring"}]}'
bad_profile '{"jobs": [{'"$J"', "bytes": 1000, "iters": 0}]}'
bad_profile '{"jobs": [{'"$J"', "bytes": 1000, "server": "a"}]}'
bad_profile '{"jobs": [{"name": "a", '"$J"', "bytes": 1000, "collective": "ring"}, {'"$J"', "bytes": 1000, "server": "a"}]}'
bad_profile '{"rate": "fast", "jobs": [{'"$J"', "bytes": 1000}]}'
bad_opt --profile="$OUT/none.json"
bad_opt --profile="$OUT/ring.json" --msg=1MB
bad_opt --background=uniform
bad_opt --background=websearch --bgLoad=1
bad_opt --bgLoad=0.3
