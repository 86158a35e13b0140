# SPDX-License-Identifier: GPL-2.0
"""The options' defaults and bounds as the code defines them (sch_desync/).

Read by tools/eval/docnum.py (study "code"), so that a page stating a
default or a bound fails the check when the header changes and the page
does not.  The headers are read as desync-plan's generator reads them
(tools/ops/desync-plan/gen_consts.py): every integer #define of
pkt_sched_desync.h (TC_DESYNC_<OPT>_MIN and _MAX) and desync_defaults.h
(DESYNC_DEF_<OPT>), in netlink units.

OPT is an option as tc spells it (limit, idle, offset_max, ...).  A value
is written as the tools print it (tools/lib/desync_opts.c): a time in the
largest unit that holds it whole ("2ms", "10s"; 0 as "0"), a group_by,
arm or slot by its word, a flag by the word that sets it, bypass_prio's empty
bitmap as "none".
"""
import importlib.util
import os

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "gen_consts", os.path.join(_here, "..", "ops", "desync-plan", "gen_consts.py"))
gen_consts = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_consts)

HEADERS = ("pkt_sched_desync.h", "desync_defaults.h")

# The options whose values cross netlink in microseconds.
TIMES = {"idle", "offset_max", "ce_threshold"}

consts = {}


def load(src):
    consts.update(gen_consts.read([os.path.join(src, h) for h in HEADERS]))


def const(name):
    """A constant of either header, by its C name."""
    if name not in consts:
        raise LookupError(f"no constant {name} in {', '.join(HEADERS)}")
    return consts[name]


def time_word(us):
    if us == 0:
        return "0"
    if us % 1000000 == 0:
        return f"{us // 1000000}s"
    if us % 1000 == 0:
        return f"{us // 1000}ms"
    return f"{us}us"


def word(opt, v):
    """V of option OPT as the tools print it."""
    if opt in TIMES:
        return time_word(v)
    if opt in ("group_by", "arm"):
        prefix = f"TC_DESYNC_{opt.upper()}_"
        for name, val in consts.items():
            if name.startswith(prefix) and val == v:
                return name[len(prefix):].lower()
        raise LookupError(f"no {opt} of value {v}")
    if opt == "slot" and v == const("TC_DESYNC_SLOT_RANDOM"):
        return "random"
    if opt == "sticky":
        return "sticky" if v else "nosticky"
    if opt == "bypass_prio" and v == 0:
        return "none"
    return str(v)


def default(opt):
    """DESYNC_DEF_<OPT>, what desync_init() configures without the option."""
    return word(opt, const("DESYNC_DEF_" + opt.upper()))


def minimum(opt):
    return word(opt, const(f"TC_DESYNC_{opt.upper()}_MIN"))


def maximum(opt):
    return word(opt, const(f"TC_DESYNC_{opt.upper()}_MAX"))


def bounds(opt):
    """TC_DESYNC_<OPT>_MIN..TC_DESYNC_<OPT>_MAX, as the netlink policy enforces them."""
    return f"{minimum(opt)}..{maximum(opt)}"


NUMBERS = {
    "const": const,
    "default": default,
    "min": minimum,
    "max": maximum,
    "bounds": bounds,
}
TABLES = {}


def format(v, f=None):
    if f:
        return f % v
    return str(v)
