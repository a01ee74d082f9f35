#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate the seed corpus of fuzz_query: tests/fuzz/corpus/query/.

Real queries made with dnspython for every kind of answer apex gives
on the zones fuzz_query serves (root., fj., example.): referrals,
NXDOMAIN, NODATA, DS at and above cuts, ANY, DNSSEC types, wildcards,
CNAME and DNAME chains, CHAOS; with and without EDNS (DO, payload
sizes, NSID, cookies, padding, unknown options, version 1); and
malformed messages (truncated, pointer loops and forward pointers,
counts that lie, two OPT records, OPT outside the additional section,
QR=1, other opcodes, trailing garbage, oversized names).

The output is deterministic (fixed random seed, fixed IDs).  Run from
the source tree:  python3 tests/fuzz/gen_corpus.py
Each file is named by the SHA-1 of its content, as libFuzzer names
corpus entries; files already there are removed first.
"""
import hashlib
import os
import random
import struct
import sys

import dns.edns
import dns.flags
import dns.message
import dns.name
import dns.opcode
import dns.rdataclass
import dns.rdatatype

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.normpath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(HERE, "corpus", "query")

rng = random.Random(5)


def owners(path, origin, limit):
    """Owner names of the first `limit` distinct owners in a master file
    (a light reader: enough for the repository's zones)."""
    names = []
    seen = set()
    cur_origin = origin
    with open(path, encoding="ascii", errors="replace") as f:
        for line in f:
            if not line.strip() or line.startswith(";") or line[0] in " \t":
                continue
            tok = line.split()[0]
            if tok == "$ORIGIN":
                cur_origin = line.split()[1]
                continue
            if tok.startswith("$"):
                continue
            if tok == "@":
                name = cur_origin
            elif tok.endswith("."):
                name = tok
            else:
                name = tok + "." + cur_origin if cur_origin != "." else tok + "."
            if name.lower() not in seen:
                seen.add(name.lower())
                names.append(name)
                if len(names) >= limit:
                    break
    return names


def sample(names, k):
    return names if len(names) <= k else rng.sample(names, k)


queries = []  # bytes


def q(name, rdtype, rdclass="IN", edns=None, do=False, payload=1232, options=None,
      flags=None, qid=None, version=0):
    msg = dns.message.make_query(name, rdtype, rdclass)
    msg.id = qid if qid is not None else rng.randrange(65536)
    msg.flags = flags if flags is not None else 0
    if edns is not None or do or options:
        msg.use_edns(version, dns.flags.DO if do else 0, payload, options=options or [])
    queries.append(msg.to_wire())


def raw(b):
    queries.append(bytes(b))


def header(qid=0x4242, flags=0, qd=1, an=0, ns=0, ar=0):
    return struct.pack("!HHHHHH", qid, flags, qd, an, ns, ar)


def wire_name(text):
    return dns.name.from_text(text).to_wire()


def main():
    zones = os.path.join(SRCDIR, "zones")
    root = owners(os.path.join(zones, "root.zone"), ".", 400)
    fj = owners(os.path.join(zones, "fj.zone"), "fj.", 200)
    example = owners(os.path.join(zones, "example.zone"), "example.", 100)
    tlds = [n for n in root if n.count(".") == 1 and n != "."]
    glue = [n for n in root if n.endswith(".net.") or "root-servers" in n]

    nsid = dns.edns.GenericOption(dns.edns.NSID, b"")
    cookie = dns.edns.GenericOption(dns.edns.COOKIE, bytes(range(8)))
    cookie_full = dns.edns.GenericOption(dns.edns.COOKIE, bytes(range(24)))
    padding = dns.edns.GenericOption(12, b"\x00" * 40)
    unknown = dns.edns.GenericOption(65001, b"apex")
    ecs = dns.edns.GenericOption(8, bytes.fromhex("00011800c00002"))

    types = ["A", "AAAA", "NS", "SOA", "MX", "TXT", "DS", "DNSKEY", "RRSIG", "NSEC",
             "NSEC3", "NSEC3PARAM", "CNAME", "DNAME", "SRV", "PTR", "CAA", "ANY", "TYPE65534"]

    # The root zone: apex, referrals, DS at cuts, glue, NXDOMAIN.
    for t in types:
        q(".", t)
        q(".", t, do=True)
    for tld in sample(tlds, 40):
        q(tld, rng.choice(["NS", "DS", "A", "SOA", "ANY"]), do=rng.random() < 0.7)
        q("www." + tld, "A", do=rng.random() < 0.5)
    for g in sample(glue, 10):
        q(g, rng.choice(["A", "AAAA"]))
    for i in range(20):
        label = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789-") for _ in range(rng.randint(1, 20)))
        q(label + ".", rng.choice(["A", "NS", "DS", "TXT"]), do=rng.random() < 0.7)

    # fj.: NSEC3 proofs, delegations, DS at the apex (answered from the root).
    q("fj.", "DS", do=True)
    q("fj.", "NSEC3PARAM", do=True)
    q("fj.", "DNSKEY", do=True, payload=4096)
    for n in sample(fj, 30):
        q(n, rng.choice(types), do=rng.random() < 0.7)
    for i in range(10):
        q("nx%d.fj." % i, "A", do=True)
        q("nx%d.sub.%s" % (i, rng.choice(fj)), "AAAA", do=True)

    # example.: every feature, unsigned answers and both DNSSEC flavours.
    for n in example:
        for t in ("A", "ANY", "TXT"):
            q(n, t, do=rng.random() < 0.7)
    specials = ["x.wild.example.", "a.b.wild.example.", "explicit.wild.example.",
                "foo.wc.example.", "chain1.example.", "chainout.example.", "loop1.example.",
                "dangling.example.", "tosub.example.", "host.dname.example.",
                "deep.host.dname.example.", "x.y.dname.example.", "c.ent.example.",
                "b.c.ent.example.", "sub.example.", "ns1.sub.example.", "x.sub.example.",
                "nods.example.", "nothere.example.", "MiXeD.cAsE.example.",
                "_sip._tcp.example.", "ww.example.", "zzzz.example."]
    for n in specials:
        for t in ("A", "AAAA", "DS", "NSEC", "CNAME", "DNAME", "ANY"):
            q(n, t, do=rng.random() < 0.8)
    q("sub.example.", "DS", do=True)
    q("nods.example.", "DS", do=True)
    q("example.", "DS", do=True)
    q("example.", "DNSKEY", do=True, payload=512)
    q("example.", "ANY", do=True, payload=512)

    # CHAOS, other classes.
    for n in ("version.bind.", "version.server.", "id.server.", "hostname.bind.", "authors.bind."):
        q(n, "TXT", "CH")
        q(n, "ANY", "CH", edns=0, options=[nsid])
    q("example.", "A", "HS")
    q("example.", "A", "ANY")
    q("example.", "A", "NONE")
    q("example.", "A", "CLASS4711")

    # EDNS variants.
    for opts in ([nsid], [cookie], [cookie_full], [padding], [unknown], [ecs],
                 [nsid, cookie, padding], [cookie, cookie]):
        q(rng.choice(tlds), "A", edns=0, do=rng.random() < 0.5, options=opts)
        q("www.example.", "A", edns=0, do=True, options=opts)
    for payload in (0, 1, 511, 512, 513, 1220, 1232, 1400, 4096, 65535):
        q("example.", "DNSKEY", edns=0, do=True, payload=payload)
        q(rng.choice(tlds), "NS", edns=0, do=True, payload=payload)
    q("example.", "SOA", edns=0, version=1)
    q("example.", "SOA", edns=0, version=255, do=True)
    for flags in (dns.flags.RD, dns.flags.CD, dns.flags.AD, dns.flags.TC,
                  dns.flags.RD | dns.flags.CD | dns.flags.AA | dns.flags.RA):
        q("www.example.", "A", flags=flags, do=True)
    q("example.", "AXFR")
    q("example.", "IXFR")
    q("example.", "MAILB")
    q("example.", "MAILA")
    q("example.", "OPT")
    q("example.", "TYPE0")

    # Malformed or unusual messages, written by hand.
    qd = wire_name("www.example.") + struct.pack("!HH", 1, 1)
    opt = b"\x00" + struct.pack("!HHIH", 41, 1232, 0x8000, 0)
    raw(b"")
    raw(b"\x12")
    raw(header()[:11])
    raw(header(qd=0))
    raw(header(qd=0, ar=1) + opt)
    raw(header(qd=2) + qd + qd)
    raw(header() + qd[:5])
    raw(header() + qd[:-2])
    raw(header() + qd + b"garbage")
    raw(header(flags=0x8000) + qd)
    raw(header(flags=0x8400) + qd)
    for opcode in (1, 2, 4, 5, 6, 15):
        raw(header(flags=opcode << 11) + qd)
        raw(header(flags=opcode << 11, qd=0))
    raw(header(ar=1) + qd)                       # ARCOUNT lies
    raw(header(an=1) + qd + opt)                 # OPT in the answer section
    raw(header(ns=1) + qd + opt)                 # OPT in the authority section
    raw(header(ar=2) + qd + opt + opt)           # two OPT records
    raw(header(ar=1) + qd + b"\x03com\x00" + opt[1:])  # OPT not owned by the root
    raw(header(ar=1) + qd + opt[:-2] + struct.pack("!H", 4) + b"\x00\x03\x00\x08")  # option overruns
    raw(header(ar=1) + qd + opt[:-2] + struct.pack("!H", 3) + b"\x00\x03\x00")      # option header cut
    raw(header(ar=1) + qd + opt[:-2] + struct.pack("!H", 8) + b"\x00\x0a\x00\x04abcd")  # bad cookie length
    raw(header(ar=1) + qd + opt[:-2] + struct.pack("!H", 44) + b"\x00\x0a\x00\x28" + bytes(40))
    raw(header(ar=1) + qd + opt[:-2] + struct.pack("!H", 45) + b"\x00\x0a\x00\x29" + bytes(41))
    raw(header(ar=1) + qd + opt[:-2] + struct.pack("!H", 200))  # RDLENGTH past the end
    # compression: a pointer to itself, a loop, a forward pointer, one to the header
    raw(header() + b"\xc0\x0c" + struct.pack("!HH", 1, 1))
    raw(header() + b"\x03www\xc0\x0c" + struct.pack("!HH", 1, 1))
    raw(header() + b"\xc0\x12" + struct.pack("!HH", 1, 1) + b"\x03www\x00")
    raw(header() + b"\xc0\x00" + struct.pack("!HH", 1, 1))
    raw(header() + b"\x03www\xc0\x14\x00\x01\x00\x01\x07example\x00")
    raw(header(an=1) + qd + b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 300, 4) + bytes(4))
    raw(header(an=1) + qd + b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 300, 4) + bytes(2))
    raw(header(an=1, ar=1) + qd + b"\xc0\x40" + struct.pack("!HHIH", 1, 1, 300, 0) + opt)
    raw(header() + b"\x80abc\x00" + struct.pack("!HH", 1, 1))  # label type 10
    raw(header() + b"\x40abc\x00" + struct.pack("!HH", 1, 1))  # label type 01 (EDNS0 extended)
    # oversized names: 63-byte labels up to and past 255 bytes, a 64-byte label
    label = b"\x3f" + b"a" * 63
    raw(header() + label * 3 + b"\x3da" + b"a" * 60 + b"\x00" + struct.pack("!HH", 1, 1))
    raw(header() + label * 4 + b"\x00" + struct.pack("!HH", 1, 1))
    raw(header() + b"\x40" + b"a" * 64 + b"\x00" + struct.pack("!HH", 1, 1))
    raw(header() + b"\x01a" * 127 + b"\x00" + struct.pack("!HH", 1, 1))
    raw(header() + b"\x01a" * 128 + b"\x00" + struct.pack("!HH", 1, 1))
    # names with odd bytes: NUL and dot inside labels, upper case, a long chain of pointers
    raw(header() + b"\x03a\x00b\x07example\x00" + struct.pack("!HH", 1, 1))
    raw(header() + b"\x03a.b\x07EXAMPLE\x00" + struct.pack("!HH", 255, 1))
    chain = header(qd=1, an=20) + qd
    prev = 12
    for i in range(20):
        here = len(chain)
        chain += b"\x01x" + struct.pack("!H", 0xC000 | prev) + struct.pack("!HHIH", 1, 1, 0, 0)
        prev = here
    raw(chain)
    # counts claim far more records than the message holds
    raw(header(an=0xFFFF, ns=0xFFFF, ar=0xFFFF) + qd)
    raw(header(qd=0xFFFF) + qd)
    # opcode QUERY with every header bit set but QR
    raw(header(flags=0x7FFF) + qd)
    # a 1232-byte query padded with a PADDING option
    pad = 1232 - len(header(ar=1) + qd) - 11 - 4
    raw(header(ar=1) + qd + b"\x00" + struct.pack("!HHIH", 41, 1232, 0, pad + 4) +
        struct.pack("!HH", 12, pad) + bytes(pad))
    # truncations of a good EDNS query at every length
    good = dns.message.make_query("www.example.", "A", use_edns=0, want_dnssec=True)
    good.id = 0x0101
    g = good.to_wire()
    for cut in range(12, len(g)):
        raw(g[:cut])

    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.unlink(os.path.join(OUT, f))
    written = set()
    for b in queries:
        h = hashlib.sha1(b).hexdigest()
        if h in written:
            continue
        written.add(h)
        with open(os.path.join(OUT, h), "wb") as f:
            f.write(b)
    print("%d queries in %s" % (len(written), os.path.relpath(OUT, SRCDIR)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
