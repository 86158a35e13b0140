#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Build and read the rtnetlink messages of the plugin's host tests.

  nlmsg.py decode FILE
      Print one line per RTM_NEWQDISC request in FILE (as recorded by
      nlfake.so), e.g. "RTM_NEWQDISC kind=desync options=nested limit=100
      seed=0x7b".  u32 attributes print in decimal, u64 ones in hex; an
      attribute of the wrong size prints as name=<len N>.

  nlmsg.py qdisc FILE [KEY=VALUE ...]
      Write an RTM_NEWQDISC message as the kernel dumps a desync qdisc on
      ifindex 1.  KEY is an option (limit, seed, ...: the value is sent
      as the kernel would, u64 ones padded with TCA_DESYNC_PAD;
      slot_map=K:S,K:S... the array of pairs, slot_map= an empty one), attrN
      (a u32 attribute of type N, e.g. one newer than the header),
      options=none (no TCA_OPTIONS), xstats=N,N,... (struct
      tc_desync_xstats in field order, missing fields 0) and
      xstats_len=N (send only the first N bytes of it).

The attribute numbers are read from sch_desync/pkt_sched_desync.h, the
contract shared with the kernel module.
"""

import os
import re
import struct
import sys

HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      '..', 'sch_desync', 'pkt_sched_desync.h')

RTM_NEWQDISC = 36
NLM_F_MULTI = 0x2
NLA_F_NESTED = 0x8000
TCA_KIND, TCA_OPTIONS, TCA_STATS2 = 1, 2, 7
TCA_STATS_BASIC, TCA_STATS_QUEUE, TCA_STATS_APP = 1, 3, 4
TC_H_ROOT = 0xffffffff

# struct tc_desync_xstats: eight __u64, two __u32, then held_bursts
XSTATS_FMT = '=8Q2IQ'
XSTATS_FIELDS = 11


def read_header():
    """Map lower-case option names to TCA_DESYNC_* numbers."""
    text = open(HEADER).read()
    body = re.search(r'enum\s*{([^}]*TCA_DESYNC_UNSPEC[^}]*)}', text).group(1)
    body = re.sub(r'/\*.*?\*/', '', body, flags=re.S)
    attrs = {}
    for num, entry in enumerate(e.strip() for e in body.split(',')):
        if '=' in entry:
            raise ValueError('explicit enum values are not handled')
        if entry.startswith('TCA_DESYNC_'):
            attrs[entry[len('TCA_DESYNC_'):].lower()] = num
    return attrs


ATTRS = read_header()
NAMES = {num: name for name, num in ATTRS.items()}
U64_ATTRS = {ATTRS['seed'], ATTRS['bypass_prio']}
SLOT_MAP = ATTRS['slot_map']


def pack_slot_map(text):
    """'1:0,0x10:3' as struct tc_desync_slot_entry[]; '' is empty."""
    out = b''
    for pair in filter(None, text.split(',')):
        key, _, slot = pair.partition(':')
        out += struct.pack('=II', int(key, 0), int(slot, 0))
    return out


def unpack_slot_map(value):
    return ','.join('%d:%d' % struct.unpack_from('=II', value, off)
                    for off in range(0, len(value), 8))


def nla(kind, payload):
    hdr = struct.pack('=HH', 4 + len(payload), kind)
    return hdr + payload + b'\0' * (-len(payload) % 4)


def build_options(opts, base):
    """Like the kernel: u64 values 8-byte aligned by a pad attribute.

    base is the offset of the nest in the message, which tc reads into an
    8-byte aligned buffer.
    """
    out = b''
    for kind, value in sorted(opts.items()):
        if isinstance(value, bytes):
            out += nla(kind, value)
        elif kind in U64_ATTRS:
            if (base + 4 + len(out) + 4) % 8:
                out += nla(ATTRS['pad'], b'')
            out += nla(kind, struct.pack('=Q', value))
        else:
            out += nla(kind, struct.pack('=I', value))
    return nla(TCA_OPTIONS | NLA_F_NESTED, out)


def build_qdisc(path, args):
    opts, xstats, xstats_len, with_options = {}, [], None, True
    for arg in args:
        key, _, value = arg.partition('=')
        if key == 'options' and value == 'none':
            with_options = False
        elif key == 'xstats':
            xstats = [int(v, 0) for v in value.split(',')]
        elif key == 'xstats_len':
            xstats_len = int(value, 0)
        elif key == 'slot_map':
            opts[SLOT_MAP] = pack_slot_map(value)
        elif key.startswith('attr'):
            opts[int(key[4:])] = int(value, 0)
        elif key in ATTRS:
            opts[ATTRS[key]] = int(value, 0)
        else:
            sys.exit('nlmsg.py: unknown key ' + key)

    xstats += [0] * (XSTATS_FIELDS - len(xstats))
    app = struct.pack(XSTATS_FMT, *xstats)
    if xstats_len is not None:
        app = (app + b'\0' * xstats_len)[:xstats_len]

    attrs = nla(TCA_KIND, b'desync\0')
    if with_options:
        attrs += build_options(opts, 16 + 20 + len(attrs))
    # gnet_stats_basic (bytes, packets), gnet_stats_queue (5 x u32)
    stats = nla(TCA_STATS_BASIC, struct.pack('=QI4x', 123456, 789))
    stats += nla(TCA_STATS_QUEUE, struct.pack('=5I', 3, 7, 1500, 11, 2))
    stats += nla(TCA_STATS_APP, app)
    attrs += nla(TCA_STATS2 | NLA_F_NESTED, stats)

    tcm = struct.pack('=BxHiIII', 0, 0, 1, 0x80010000, TC_H_ROOT, 1)
    body = tcm + attrs
    msg = struct.pack('=IHHII', 16 + len(body), RTM_NEWQDISC, NLM_F_MULTI,
                      0, 0) + body
    with open(path, 'ab') as f:
        f.write(msg)


def walk(buf):
    """Yield (type, payload) of the attributes in buf."""
    off = 0
    while off + 4 <= len(buf):
        length, kind = struct.unpack_from('=HH', buf, off)
        if length < 4 or off + length > len(buf):
            raise ValueError('bad attribute length %d at %d' % (length, off))
        yield kind, buf[off + 4:off + length]
        off += (length + 3) & ~3
    if off < len(buf):
        raise ValueError('%d bytes of junk after attributes'
                         % (len(buf) - off))


def decode_options(kind, payload):
    words = ['options=nested' if kind & NLA_F_NESTED else 'options=flat']
    for atype, value in walk(payload):
        name = NAMES.get(atype, 'attr%d' % atype)
        if atype == SLOT_MAP:
            words.append('%s=%s' % (name, unpack_slot_map(value)
                                    if len(value) % 8 == 0
                                    else '<len %d>' % len(value)))
            continue
        size = 8 if atype in U64_ATTRS else 4
        if len(value) != size:
            words.append('%s=<len %d>' % (name, len(value)))
        elif size == 8:
            words.append('%s=%#x' % (name, struct.unpack('=Q', value)[0]))
        else:
            words.append('%s=%d' % (name, struct.unpack('=I', value)[0]))
    return words


def decode(path):
    data = open(path, 'rb').read()
    off = 0
    while off + 16 <= len(data):
        length, mtype = struct.unpack_from('=IH', data, off)
        if mtype != RTM_NEWQDISC:
            off += (length + 3) & ~3
            continue
        words, options = ['RTM_NEWQDISC'], ['options=none']
        for kind, value in walk(data[off + 16 + 20:off + length]):
            if kind == TCA_KIND:
                words.append('kind=' + value.rstrip(b'\0').decode())
            elif kind & ~NLA_F_NESTED == TCA_OPTIONS:
                options = decode_options(kind, value)
        print(' '.join(words + options))
        off += (length + 3) & ~3


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == 'decode':
        decode(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == 'qdisc':
        build_qdisc(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
