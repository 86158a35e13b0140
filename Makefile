# SPDX-License-Identifier: GPL-2.0
#
# sch_desync: burst desynchronization qdisc for distributed training hosts.
#
#   make                 module (for the running kernel, or KDIR=), tc plugin, tools
#   make install         install the module (+ depmod) and the tc plugin
#   make check           every gate: unit tests, checkpatch, sparse W=1 on
#                        6.1 and 6.12, plugin tests, instruction budget, and
#                        the VM selftests on both kernels
#   make demo            short effectiveness comparison in an emulated cluster
#   make bench-effect    full effectiveness matrix (long)
#   make bench-cost      per-packet cost against pfifo, fq_codel and fq
#   make stress          netlink fuzzer (100k messages) and long lifecycle
#                        torture on 6.1, 6.12 and the debug kernel (long)
#   make sim             the ns-3 model tools/sim/desync-sim (installs libns3-dev)
#   make bench-sim       the scenario matrix in the ns-3 model
#   make clean

KVER	?= $(shell uname -r)
KDIR	?= /lib/modules/$(KVER)/build
DEPMOD	?= depmod

all: module plugin tools

# A host without headers for its own kernel (a build box, CI) still builds
# everything else; the VM tools build the module for each target kernel.
module:
	@if [ -d "$(KDIR)" ]; then \
		$(MAKE) -C "$(KDIR)" M="$(CURDIR)/sch_desync" modules; \
	else \
		echo "module: no kernel headers at $(KDIR); set KDIR= (skipped)"; \
	fi

plugin:
	$(MAKE) -C tc-plugin

tools:
	$(MAKE) -C tools/unit
	$(MAKE) -C tools/probe
	$(MAKE) -C tools/fuzz
	@if pkg-config --exists libnl-route-3.0 2>/dev/null; then \
		$(MAKE) -C tools/desyncctl; \
	else \
		echo "desyncctl: needs libnl-3-dev libnl-route-3-dev pkg-config (skipped)"; \
	fi

install: plugin
	$(MAKE) -C "$(KDIR)" M="$(CURDIR)/sch_desync" modules
	$(MAKE) -C "$(KDIR)" M="$(CURDIR)/sch_desync" INSTALL_MOD_DIR=extra \
		modules_install
	$(DEPMOD) -a $(KVER)
	$(MAKE) -C tc-plugin install

check:
	tools/check/run-all.sh

demo:
	tools/cluster/demo.sh

bench-effect:
	tools/cluster/bench-effect.sh

bench-cost:
	tools/bench/cost/run.sh

stress:
	tools/fuzz/stress.sh

sim:
	tools/sim/build.sh

bench-sim: sim
	tools/sim/bench.sh

clean:
	@if [ -d "$(KDIR)" ]; then \
		$(MAKE) -C "$(KDIR)" M="$(CURDIR)/sch_desync" clean; \
	fi
	$(MAKE) -C tc-plugin clean
	$(MAKE) -C tools/unit clean
	$(MAKE) -C tools/probe clean
	$(MAKE) -C tools/fuzz clean
	$(MAKE) -C tools/desyncctl clean
	$(MAKE) -C tools/sim clean

.PHONY: all module plugin tools install check demo bench-effect bench-cost stress \
	sim bench-sim clean
