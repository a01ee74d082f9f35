#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Deterministic query mixes for the benchmarks, in dnsperf's format
("name type" per line).

  querygen.py root ZONEFILE COUNT OUT   root-server-like mix
  querygen.py tld  ZONEFILE COUNT OUT   TLD mix (mostly referrals)

root: about half NXDOMAIN for junk TLDs (typos, local names, random
strings), a third referrals under existing TLDs, DS for TLDs, queries
for the apex.  tld: 80% referrals under delegated names, 8% NXDOMAIN,
6% DS, 6% apex.  The same seed gives the same file on every machine.
"""

import random
import sys

SEED = 20261122

# Names that leak to the root in real traffic (RFC 8023, RFC 9476 studies).
JUNK_TLDS = ["local", "home", "lan", "corp", "internal", "localdomain", "domain",
             "belkin", "dlink", "router", "invalid", "wpad", "mail", "test", "intranet"]


def read_zone(path):
    """(origin, delegations): the names with NS records below the apex."""
    origin = None
    cuts = []
    seen = set()
    with open(path, "r", encoding="ascii", errors="replace") as f:
        for line in f:
            if not line or line[0] in ";$ \t\n":
                continue
            fields = line.split(None, 4)
            if len(fields) < 4:
                continue
            owner = fields[0].lower()
            if fields[3] == "SOA" or (len(fields) > 2 and fields[2] == "SOA"):
                origin = owner
                continue
            if fields[3] == "NS" and owner != origin and owner not in seen:
                seen.add(owner)
                cuts.append(owner)
    if origin is None:
        raise SystemExit("%s: no SOA found" % path)
    return origin, cuts


def junk_label(rng):
    n = rng.randint(3, 14)
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(n))


def child(rng, cut):
    """A name under a delegation, as a resolver would send it."""
    return rng.choice(["www.", "mail.", "ns1.", "", "", junk_label(rng) + "."]) + cut


def root_mix(rng, origin, cuts, count):
    out = []
    for _ in range(count):
        r = rng.random()
        if r < 0.50:    # NXDOMAIN: junk TLDs
            tld = rng.choice(JUNK_TLDS) if rng.random() < 0.4 else junk_label(rng)
            name = (junk_label(rng) + "." if rng.random() < 0.7 else "") + tld + "."
            qtype = rng.choice(["A", "A", "AAAA", "PTR", "SOA", "SRV"])
        elif r < 0.85:  # referrals under existing TLDs
            name = child(rng, rng.choice(cuts))
            qtype = rng.choice(["A", "A", "A", "AAAA", "AAAA", "NS", "MX"])
        elif r < 0.93:  # DS for a TLD
            name, qtype = rng.choice(cuts), "DS"
        else:           # the apex
            name, qtype = origin, rng.choice(["SOA", "NS", "DNSKEY", "NS", "SOA"])
        out.append("%s %s" % (name, qtype))
    return out


def tld_mix(rng, origin, cuts, count):
    out = []
    for _ in range(count):
        r = rng.random()
        if r < 0.80:    # referrals
            name = child(rng, rng.choice(cuts))
            qtype = rng.choice(["A", "A", "A", "AAAA", "AAAA", "NS", "MX"])
        elif r < 0.88:  # NXDOMAIN
            name, qtype = junk_label(rng) + "." + origin, rng.choice(["A", "AAAA"])
        elif r < 0.94:  # DS
            name, qtype = rng.choice(cuts), "DS"
        else:           # apex
            name, qtype = origin, rng.choice(["SOA", "NS", "DNSKEY"])
        out.append("%s %s" % (name, qtype))
    return out


def main(argv):
    if len(argv) != 5 or argv[1] not in ("root", "tld"):
        raise SystemExit(__doc__)
    origin, cuts = read_zone(argv[2])
    if not cuts:
        raise SystemExit("%s: no delegations" % argv[2])
    rng = random.Random(SEED)
    mix = root_mix if argv[1] == "root" else tld_mix
    lines = mix(rng, origin, cuts, int(argv[3]))
    with open(argv[4], "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv)
