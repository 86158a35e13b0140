# SPDX-License-Identifier: GPL-2.0
#
# One version for the module, the tc plugin, the tools and the packages,
# from git or, in a copy without git, the VERSION file (sch_desync/version.sh).
# Include it, then use $(DESYNC_VERSION) or $(DESYNC_VERSION_CPPFLAGS).

DESYNC_TOP := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
ifeq ($(origin DESYNC_VERSION),undefined)
DESYNC_VERSION := $(shell $(DESYNC_TOP)/sch_desync/version.sh)
endif
DESYNC_VERSION_CPPFLAGS := -DDESYNC_VERSION='"$(DESYNC_VERSION)"'
