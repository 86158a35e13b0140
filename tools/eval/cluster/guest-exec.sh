#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage (inside the test VM, as root):
#   guest-exec.sh [-n HOSTS] [-q "QDISC SPEC"] [-m MODULE.ko] -- CMD [ARGS...]
#
# Any workload on the emulated cluster: builds it as guest-bench.sh does,
# installs the host qdisc (default fq_codel; {rank} and {nhosts} are
# replaced per host), then runs CMD once in every host namespace at the
# same time, with RANK, WORLD_SIZE, HOST_IP, MASTER_ADDR (h0) and
# GLOO_SOCKET_IFNAME=eth0 in its environment, as torch.distributed expects.
# Each host's output goes to /tmp/exec-h<i>.log; the bottleneck queue is
# sampled to /tmp/exec-queue.txt.  Exits non-zero if any host's CMD did.
#
# Example, a Gloo all-reduce on 4 hosts:
#   tools/testing/vm/run.sh --bench -- tools/eval/cluster/guest-exec.sh -n 4 -- \
#     /usr/bin/python3 tools/eval/cluster/examples/allreduce.py

set -uo pipefail

HERE=$(dirname "$(readlink -f "$0")")
spec=fq_codel
module=

while getopts "n:q:m:" opt; do
	case $opt in
	n) NHOSTS=$OPTARG ;;
	q) spec=$OPTARG ;;
	m) module=$OPTARG ;;
	*) sed -n '3,18s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" = -- ] && shift
[ $# -ge 1 ] || { echo "guest-exec: no command" >&2; exit 2; }

# shellcheck source=tools/eval/cluster/cluster.sh
source "$HERE/cluster.sh"
export TC_LIB_DIR=${TC_LIB_DIR:-$HERE/../../../tc-plugin}
[ -z "$module" ] || insmod "$module" || exit 1
cluster_up
reset_run "$spec" || { echo "guest-exec: cannot install $spec" >&2; exit 1; }

ip netns exec sw "$HERE/qsample" p0 2: 1000 /tmp/exec-queue.txt &
qpid=$!
pids=()
for ((i = 0; i < NHOSTS; i++)); do
	RANK=$i WORLD_SIZE=$NHOSTS HOST_IP=$(host_ip "$i") \
		MASTER_ADDR=$(host_ip 0) MASTER_PORT=29500 GLOO_SOCKET_IFNAME=eth0 \
		ip netns exec "h$i" "$@" > "/tmp/exec-h$i.log" 2>&1 &
	pids+=($!)
done
rc=0
for ((i = 0; i < NHOSTS; i++)); do
	wait "${pids[i]}" || { rc=1; echo "guest-exec: h$i failed" >&2; }
done
kill -INT "$qpid"
wait "$qpid"
for ((i = 0; i < NHOSTS; i++)); do
	sed "s/^/h$i: /" "/tmp/exec-h$i.log"
done
tc -n sw -s qdisc show dev p0
exit $rc
