# SPDX-License-Identifier: GPL-2.0
#
# What every userspace Makefile of the tree shares.  A Makefile sets TOP to
# the tree's root from its own location, then includes this file:
#
#   TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/../../..)
#   include $(TOP)/tools/build.mk
#
# and then has the targets all, check (where there are tests),
# install/uninstall (where something ships) and clean.

CC	?= gcc
CFLAGS	?= -O2 -g
# Warnings are errors: a tool that mismeasures because of a sloppy cast
# must not land.  The Debian build (debian/rules) sets WERROR= empty: a
# newer compiler's new warning must not fail a distribution's build.
WERROR	?= -Werror
WARNINGS := -Wall -Wextra $(WERROR)
# The netlink contract, the defaults, the core and the option table.
CPPFLAGS += -I$(TOP)/sch_desync -I$(TOP)/tools/lib

PREFIX	?= /usr
SBINDIR	?= $(PREFIX)/sbin
MANDIR	?= $(PREFIX)/share/man
UNITDIR	?= /lib/systemd/system
SYSCONFDIR ?= /etc
INSTALL	?= install
PYTHON	?= /usr/bin/python3

# libnl-3 for the programs that read qdiscs (desyncctl, qsample).
NL_CFLAGS := $(shell pkg-config --cflags libnl-3.0 libnl-route-3.0 2>/dev/null || \
	echo -I/usr/include/libnl3)
NL_LIBS	:= $(shell pkg-config --libs libnl-3.0 libnl-route-3.0 2>/dev/null || \
	echo -lnl-route-3 -lnl-3)

# One version for the module, the plugin and the tools (git or VERSION).
include $(TOP)/version.mk
