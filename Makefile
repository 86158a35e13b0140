# SPDX-License-Identifier: GPL-2.0
#
# sch_desync: burst desynchronization qdisc for distributed training hosts.
#
#   make                 module (for the running kernel, or KDIR=), tc plugin, tools
#   make install         install the module (+ depmod), the tc plugin,
#                        tc-desync(8), desync-apply(8) with desync@.service,
#                        and desyncctl with desyncctl(8) and its
#                        exporter units (PREFIX=/usr); says how to sign the
#                        module for Secure Boot
#   make uninstall       remove what make install installed
#   make deb             Debian packages sch-desync-dkms and tc-desync into
#                        build/deb/ (debhelper, dh-dkms, lintian)
#   make check-deb       install both packages in a VM on 6.1 and 6.12
#   make check-walk      README as written with both packages, top to bottom,
#                        then their autopkgtest (autopkgtest-pkg-dkms), in
#                        a VM booted with systemd (mmdebstrap), on 6.1
#                        and on 6.12, one after the other
#   make release VERSION=X.Y  changelog entry, commit and tag vX.Y
#                        (Documentation/process.md)
#   make check-newest    build the module against the newest kernel headers
#                        Debian ships (not booted)
#   make version         print the version the module and packages carry
#   make check           every gate: unit tests, checkpatch, sparse W=1 on
#                        6.1 and 6.12, plugin tests, instruction budget, and
#                        the VM selftests on both kernels
#   make demo            short effectiveness comparison in an emulated cluster
#   make bench-effect    full effectiveness matrix (long), into results/cluster/
#   make bench-cost      per-packet cost against pfifo, fq_codel and fq, into
#                        results/bench-cost/<kernel>/
#   make stress          netlink fuzzer (100k messages) and long lifecycle
#                        torture on 6.1, 6.12 and the debug kernel, and the
#                        selftests on the debug kernel (hours)
#   make sim             the ns-3 model tools/eval/sim/desync-sim (installs libns3-dev)
#   make bench-sim       the scenario matrix in the ns-3 model, into results/sim/
#   make tcp-vm          the model's loss recovery against 6.1's and 6.12's
#                        TCP in the VM, into results/sim-tcp-vm/
#   make plan-test       unit tests of tools/ops/desync-plan/desync-plan
#   make bench-plan      desync-plan's heuristic against exact, and the
#                        planned slots and OSP's two stages in the ns-3 model,
#                        into results/osp-deft/
#   make clean

KVER	?= $(shell uname -r)
KDIR	?= /lib/modules/$(KVER)/build
DEPMOD	?= depmod
PREFIX	?= /usr
MANDIR	?= $(PREFIX)/share/man

include version.mk
KMAKE	= $(MAKE) -C "$(KDIR)" M="$(CURDIR)/sch_desync" \
	  DESYNC_VERSION="$(DESYNC_VERSION)"

all: module plugin tools

# A host without headers for its own kernel (a build box, CI) still builds
# everything else; the VM tools build the module for each target kernel.
module:
	@if [ -d "$(KDIR)" ]; then \
		$(KMAKE) modules; \
	else \
		echo "module: no kernel headers at $(KDIR); set KDIR= (skipped)"; \
	fi

plugin:
	$(MAKE) -C tc-plugin

tools:
	$(MAKE) -C tools/testing/unit
	$(MAKE) -C tools/testing/probe
	$(MAKE) -C tools/testing/fuzz
	@if pkg-config --exists libnl-route-3.0 2>/dev/null; then \
		$(MAKE) -C tools/ops/desyncctl; \
	else \
		echo "desyncctl: needs libnl-3-dev libnl-route-3-dev pkg-config (skipped)"; \
	fi

# desyncctl needs libnl-3: a host without it still installs the rest.
CTLMAKE	= $(MAKE) -C tools/ops/desyncctl PREFIX="$(PREFIX)" MANDIR="$(MANDIR)" \
	  VERSION="$(DESYNC_VERSION)"
BOOTMAKE = $(MAKE) -C tools/ops/desync-apply PREFIX="$(PREFIX)" MANDIR="$(MANDIR)"
HAVE_LIBNL := $(shell pkg-config --exists libnl-route-3.0 2>/dev/null && echo yes)

install: plugin
	$(KMAKE) modules
	$(KMAKE) INSTALL_MOD_DIR=extra INSTALL_MOD_PATH=$(DESTDIR) modules_install
	$(DEPMOD) $(if $(DESTDIR),-b $(DESTDIR)) -a $(KVER)
	$(MAKE) -C tc-plugin install
	install -D -m 0644 man/tc-desync.8 $(DESTDIR)$(MANDIR)/man8/tc-desync.8
	$(BOOTMAKE) install
ifeq ($(HAVE_LIBNL),yes)
	$(CTLMAKE) install
else
	@echo "desyncctl: needs libnl-3-dev libnl-route-3-dev pkg-config (not installed)"
endif
	@tools/ops/pkg/secure-boot-note.sh $(KVER)

uninstall:
	rm -f $(DESTDIR)/lib/modules/$(KVER)/extra/sch_desync.ko \
		$(DESTDIR)/lib/modules/$(KVER)/extra/sch_desync.ko.xz \
		$(DESTDIR)/lib/modules/$(KVER)/extra/sch_desync.ko.zst
	$(DEPMOD) $(if $(DESTDIR),-b $(DESTDIR)) -a $(KVER)
	$(MAKE) -C tc-plugin uninstall
	rm -f $(DESTDIR)$(MANDIR)/man8/tc-desync.8
	$(BOOTMAKE) uninstall
	$(CTLMAKE) uninstall

version:
	@echo $(DESYNC_VERSION)

deb:
	tools/ops/pkg/build-deb.sh

check-deb:
	tools/ops/pkg/test-deb-vm.sh 6.1 6.12

check-walk:
	tools/ops/pkg/test-walk-vm.sh 6.1 6.12

release:
	tools/ops/pkg/release.sh "$(VERSION)"

check-newest:
	tools/testing/check/build-newest.sh

check:
	tools/testing/check/run-all.sh

demo:
	tools/eval/cluster/demo.sh

bench-effect:
	tools/eval/cluster/bench-effect.sh

bench-cost:
	tools/eval/bench-cost/run.sh

stress:
	tools/testing/fuzz/stress.sh

sim:
	tools/eval/sim/build.sh

bench-sim: sim
	tools/eval/sim/bench.sh

# The model's loss recovery against the kernel's, in the VM (a calibration).
tcp-vm: sim
	tools/eval/sim/tcp-vm.sh

plan-test:
	$(MAKE) -C tools/ops/desync-plan check

bench-plan: sim
	tools/eval/plan/bench.sh

clean:
	@if [ -d "$(KDIR)" ]; then \
		$(KMAKE) clean; \
	fi
	$(MAKE) -C tc-plugin clean
	rm -rf build/deb
	$(MAKE) -C tools/testing/unit clean
	$(MAKE) -C tools/testing/probe clean
	$(MAKE) -C tools/testing/fuzz clean
	$(MAKE) -C tools/ops/desyncctl clean
	$(MAKE) -C tools/eval/sim clean

.PHONY: all module plugin tools install uninstall version deb check-deb check-walk \
	release check-newest check demo bench-effect bench-cost stress sim bench-sim \
	tcp-vm plan-test bench-plan clean
