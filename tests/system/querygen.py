# SPDX-License-Identifier: BSD-3-Clause
"""Deterministic generation of test queries from a zone file.

For a zone, the generator makes queries for: every owner name (or a seeded
sample of them for the large real zones) with each of its types and a
random other type; DS and names under every sampled delegation; names
below existing names; random nonexistent names and names right next to
existing ones (to hit many NSEC/NSEC3 spans); names that match wildcards;
empty non-terminals.  About a third of the query names get their letter
case randomised.  Each query also draws its transport (UDP/TCP), EDNS
(none, 1232 or 4096 bytes), DO, RD and CD bits.  The same seed gives the
same queries, so a failure can be reproduced.
"""

import dataclasses
import random

import dns.name
import dns.rdatatype
import dns.zone

T = dns.rdatatype

# Types drawn at random (besides the types that exist at a name).
RANDOM_TYPES = [T.A, T.AAAA, T.NS, T.SOA, T.MX, T.TXT, T.SRV, T.CNAME, T.DNAME,
                T.DS, T.DNSKEY, T.NSEC, T.NSEC3, T.NSEC3PARAM, T.RRSIG, T.ANY,
                T.CAA, T.PTR, T.HINFO, T.HTTPS, T.SVCB, T.ZONEMD, 65280]

LABEL_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789-"


@dataclasses.dataclass(frozen=True)
class Query:
    qname: str          # text, absolute, in the letter case to send
    qtype: int
    transport: str      # "udp" or "tcp"
    edns: object        # None (no OPT) or the advertised payload size
    do: bool
    rd: bool
    cd: bool

    def describe(self):
        bits = [self.transport]
        bits.append("noedns" if self.edns is None else "edns%d" % self.edns)
        if self.do:
            bits.append("DO")
        if self.rd:
            bits.append("RD")
        if self.cd:
            bits.append("CD")
        return "%s %s (%s)" % (self.qname, dns.rdatatype.to_text(self.qtype), " ".join(bits))


class ZoneInfo:
    """What the generator needs to know about a zone: its owner names with
    their types, delegation points, wildcards and empty non-terminals."""

    def __init__(self, origin, path):
        self.origin = dns.name.from_text(origin)
        self.path = path
        self.types = {}          # dns.name.Name (case-insensitive) -> set of types
        self.display = {}        # name -> the name as written in the file
        self._read()
        self.cuts = sorted(n for n, ts in self.types.items()
                           if T.NS in ts and n != self.origin)
        self.wildcards = sorted(n for n in self.types if n.labels[0] == b"*")
        self.nsec3_owners = sorted(n for n, ts in self.types.items() if ts == {T.NSEC3}
                                   or ts == {T.NSEC3, T.RRSIG})
        # Empty non-terminals of the authoritative data (not under a cut).
        cutset = set(self.cuts)
        ents = set()
        for n in self.types:
            if any(a in cutset for a in self._ancestors(n)):
                continue
            p = n.parent() if n != self.origin else None
            while p is not None and p != self.origin and p.is_subdomain(self.origin):
                if p not in self.types:
                    ents.add(p)
                p = p.parent()
        self.ents = sorted(ents)

    def _ancestors(self, name):
        p = name
        while p != self.origin and len(p) > 1:
            p = p.parent()
            yield p

    def _add(self, name, rdtype):
        self.types.setdefault(name, set()).add(rdtype)
        self.display.setdefault(name, name.to_text())

    def _read(self):
        # Fast path for files with one record per line and absolute owner
        # names ("owner ttl class type rdata"): the real zones and the
        # signed feature zones.  Anything else goes through dnspython.
        with open(self.path, encoding="utf-8") as f:
            lines = f.readlines()
        fast = []
        for line in lines:
            if not line.strip() or line.startswith(";"):
                continue
            fields = line.split()
            if (line[0] in " \t$" or len(fields) < 5 or not fields[0].endswith(".")
                    or not fields[1].isdigit() or fields[2].upper() != "IN"):
                fast = None
                break
            fast.append((fields[0], fields[3]))
        if fast is not None:
            cache = {}
            for owner, rtype in fast:
                name = cache.get(owner)
                if name is None:
                    name = cache[owner] = dns.name.from_text(owner)
                self._add(name, dns.rdatatype.from_text(rtype))
            return
        zone = dns.zone.from_file(self.path, self.origin, relativize=False,
                                  check_origin=True)
        for name, node in zone.nodes.items():
            for rds in node.rdatasets:
                self._add(name, rds.rdtype)
        # dnspython keeps the owner's case as written; nothing else to do.


def below(label, name):
    """The text of label prepended to name (a text name, possibly ".")."""
    return label + "." if name == "." else "%s.%s" % (label, name)


def random_label(rng, lo=1, hi=12):
    n = rng.randint(lo, hi)
    s = "".join(rng.choice(LABEL_CHARS) for _ in range(n))
    return s.strip("-") or "x"


def randomise_case(rng, text):
    return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in text)


class Generator:
    def __init__(self, zone, seed, max_names=None, repeat=1):
        self.zone = zone
        self.repeat = repeat
        self.rng = random.Random("apex-system-%s-%s" % (zone.origin.to_text(), seed))
        self.max_names = max_names
        self.queries = []

    def _variant(self):
        rng = self.rng
        transport = "tcp" if rng.random() < 0.25 else "udp"
        r = rng.random()
        edns = None if r < 0.15 else (1232 if r < 0.60 else 4096)
        do = edns is not None and rng.random() < 0.6
        return transport, edns, do, rng.random() < 0.3, rng.random() < 0.1

    def add(self, name, qtype):
        text = name if isinstance(name, str) else name.to_text()
        if self.rng.random() < 0.3:
            text = randomise_case(self.rng, text)
        self.queries.append(Query(text, int(qtype), *self._variant()))

    def _sample(self, items, limit):
        items = list(items)
        if limit is None or len(items) <= limit:
            return items
        return self.rng.sample(items, limit)

    def generate(self):
        z = self.zone
        rng = self.rng
        origin = z.origin
        cuts = set(z.cuts)

        # The apex: every type, with and without DNSSEC.
        for t in sorted(z.types[origin]) + [T.ANY, T.DS, T.A]:
            self.add(z.display[origin], t)
            self.add(z.display[origin], t)

        # Owner names with their own types and one random other type.
        # NSEC3 owners are few on purpose: they are not names of the zone.
        hashed = set(z.nsec3_owners)
        names = [n for n in z.types if n != origin and n not in hashed]
        names = self._sample(sorted(names), self.max_names)
        names += self._sample(z.nsec3_owners, 20)
        for n in names:
            shown = z.display[n]
            for _ in range(self.repeat):
                for t in sorted(z.types[n]):
                    if t == T.RRSIG and rng.random() < 0.7:
                        continue
                    self.add(shown, t)
                self.add(shown, rng.choice(RANDOM_TYPES))
            if n in cuts:
                # Referrals and the parent side of the cut.
                self.add(shown, T.DS)
                self.add(below(random_label(rng), shown), rng.choice([T.A, T.AAAA, T.NS, T.DS, T.MX]))
            elif rng.random() < 0.3:
                # A name below an existing name (NXDOMAIN, wildcard or ENT).
                self.add(below(random_label(rng), shown), rng.choice(RANDOM_TYPES))

        # Random nonexistent names under the apex, and names next to
        # existing names, so that many different NSEC/NSEC3 spans are used.
        n_random = 300
        for _ in range(n_random):
            self.add(below(random_label(rng), z.display[origin]),
                     rng.choice(RANDOM_TYPES))
        pool = sorted(n for n in z.types if n != origin)
        for n in self._sample(pool, n_random // 3):
            label = n.labels[0].decode("ascii", "replace")
            rest = n.parent().to_text()
            near = label + rng.choice(LABEL_CHARS[:36])
            self.add(below(near, rest), rng.choice([T.A, T.NS, T.DS, T.TXT]))
            if len(label) > 1:
                self.add(below(label[:-1], rest), rng.choice([T.A, T.NS, T.DS]))

        # Wildcards: names they synthesise for, one and two labels deep.
        for w in z.wildcards:
            parent = w.parent().to_text()
            for _ in range(15 * self.repeat):
                self.add(below(random_label(rng), parent), rng.choice(RANDOM_TYPES))
            for _ in range(5):
                self.add(below(random_label(rng), below(random_label(rng), parent)),
                         rng.choice([T.A, T.TXT, T.AAAA]))
            self.add(w, rng.choice([T.A, T.TXT, T.MX]))

        # Empty non-terminals (NODATA) and names under them.
        for e in self._sample(z.ents, 60):
            self.add(e, rng.choice(RANDOM_TYPES))
            self.add(below(random_label(rng), e.to_text()), T.A)
        return self.queries


# The types every name of a feature zone is asked for, besides its own:
# those whose handling differs by kind of name, a type absent almost
# everywhere (HINFO), an obsolete one (MD, RFC 973) and a meta type asked
# as a query type (MAILB, RFC 1035 §3.2.3).
SYSTEMATIC_TYPES = [T.CNAME, T.DNAME, T.NS, T.DS, T.SOA, T.NSEC, T.NSEC3, T.RRSIG, T.ANY,
                    T.HINFO, T.MD, T.MAILB]
# Transport, EDNS payload and DO: without EDNS, with EDNS and DO off, with
# EDNS and DO on, each over UDP and TCP.
SYSTEMATIC_VARIANTS = [(transport, edns, do) for transport in ("udp", "tcp")
                       for edns, do in ((None, False), (1232, False), (1232, True))]


# The kinds of name every copy of the feature zone (zones/example.zone) has.
FEATURE_KINDS = ("apex", "ordinary", "cname", "dname", "below-dname-1", "below-dname-2",
                 "below-dname-3", "wildcard", "wildcard-covered-1", "wildcard-covered-2",
                 "ent", "below-ent", "cut", "cut-ds", "below-cut", "glue", "nxdomain-near",
                 "nxdomain-far")


def name_kinds(z, rng):
    """Every kind of name of zone z, as (kind, text name) pairs: the apex,
    each owner by what it holds (ordinary, CNAME, DNAME, wildcard, cut, glue
    or data under a cut, occluded below a DNAME, NSEC3 owner), names below
    a DNAME at one to three labels, names a wildcard covers (one and two
    labels), empty non-terminals and names below them, names below a cut,
    and NXDOMAIN names next to existing ones and far from any."""
    origin = z.origin
    cuts = set(z.cuts)
    dnames = sorted(n for n, ts in z.types.items() if T.DNAME in ts)
    hashed = set(z.nsec3_owners)
    kinds = [("apex", z.display[origin])]

    def under(n, ancestors):
        return any(n != a and n.is_subdomain(a) for a in ancestors)

    # the NSEC3 owners are not names of the zone: a few of them suffice
    sampled = set(rng.sample(sorted(hashed), min(len(hashed), 6)))
    for n in sorted(z.types):
        if n == origin or (n in hashed and n not in sampled):
            continue
        ts = z.types[n]
        shown = z.display[n]
        if n in hashed:
            kind = "nsec3-owner"
        elif under(n, dnames):
            kind = "occluded"
        elif under(n, cuts):
            kind = "glue"
        elif n in cuts:
            kind = "cut-ds" if T.DS in ts else "cut"
        elif n.labels[0] == b"*":
            kind = "wildcard"
        elif T.CNAME in ts:
            kind = "cname"
        elif T.DNAME in ts:
            kind = "dname"
        else:
            kind = "ordinary"
        kinds.append((kind, shown))
        if kind == "dname":
            name = shown
            for depth in (1, 2, 3):
                name = below(random_label(rng, 2, 8), name)
                kinds.append(("below-dname-%d" % depth, name))
        elif kind in ("cut", "cut-ds"):
            kinds.append(("below-cut", below(random_label(rng, 2, 8), shown)))
        elif kind == "wildcard":
            parent = n.parent().to_text()
            one = below(random_label(rng, 2, 8), parent)
            kinds.append(("wildcard-covered-1", one))
            kinds.append(("wildcard-covered-2", below(random_label(rng, 2, 8), one)))
        if kind in ("ordinary", "cname", "cut", "cut-ds", "dname"):
            # NXDOMAIN right next to the name, in the same parent
            label = n.labels[0].decode("ascii", "replace")
            kinds.append(("nxdomain-near", below(label + "0", n.parent().to_text())))
    for e in z.ents:
        kinds.append(("ent", e.to_text()))
        kinds.append(("below-ent", below(random_label(rng, 2, 8), e.to_text())))
    for _ in range(8):
        kinds.append(("nxdomain-far", below(random_label(rng, 6, 14), z.display[origin])))
    return kinds


def systematic(origin, path, seed=1, skip_types=()):
    """For each kind of name of a (small) zone, every type that can
    matter there (its own, SYSTEMATIC_TYPES, A), each in every
    SYSTEMATIC_VARIANTS, with random letter case half the time (except
    skip_types): the queries and the count per kind."""
    z = ZoneInfo(origin, path)
    rng = random.Random("apex-systematic-%s-%s" % (z.origin.to_text(), seed))
    queries, per_kind = [], {}
    for kind, name in name_kinds(z, rng):
        own = z.types.get(dns.name.from_text(name), set())
        for t in sorted((set(own) | set(SYSTEMATIC_TYPES) | {T.A}) - set(skip_types)):
            for transport, edns, do in SYSTEMATIC_VARIANTS:
                text = randomise_case(rng, name) if rng.random() < 0.5 else name
                queries.append(Query(text, int(t), transport, edns, do, False, False))
                per_kind[kind] = per_kind.get(kind, 0) + 1
    return queries, per_kind


def generate(origin, path, seed=1, max_names=None, repeat=1):
    return Generator(ZoneInfo(origin, path), seed, max_names, repeat).generate()
