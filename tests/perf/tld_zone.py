#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The TLD zone and queries of the instruction guard's "tld" set
(doc/performance.md, "The guard in make check").

  tld_zone.py DIR     writes DIR/tld.zone and DIR/tld.queries

A TLD of 20,000 delegations: more than query/precompute.h's
APEX_PRECOMPUTED_CUTS_MAX (16,384), so that its referrals are written
record by record, names compressed one by one, as in every large TLD,
where the root zone's are copied from precomputed fragments.  Most name
servers are out of the zone, shared by many delegations as at hosting
providers; a fifth are in the delegation itself, with glue (IPv4, and
IPv6 for half of them).  The queries are contrib/bench/querygen.py's TLD
mix (80% referrals) over it.  The same files on every machine: a fixed
seed, and nothing but Python's random.Random(seed).random() drawn.
"""

import os
import random
import sys

ORIGIN = "tld."
DELEGATIONS = 20000
PROVIDERS = 400
QUERIES = 10000
SEED = 36


def label(rng):
    size = 5 + int(rng.random() * 10)
    return "".join("abcdefghijklmnopqrstuvwxyz"[int(rng.random() * 26)] for _ in range(size))


def zone_lines(rng):
    lines = [ORIGIN + " SOA a.nic.tld. hostmaster.tld. 2026120501 1800 900 604800 3600",
             ORIGIN + " NS a.nic.tld.", ORIGIN + " NS b.nic.tld.",
             "a.nic.tld. A 192.0.2.1", "a.nic.tld. AAAA 2001:db8::1",
             "b.nic.tld. A 192.0.2.2", "b.nic.tld. AAAA 2001:db8::2"]
    seen = {"nic"}
    for i in range(DELEGATIONS):
        name = label(rng)
        while name in seen:
            name = label(rng)
        seen.add(name)
        if rng.random() < 0.2:  # in-bailiwick name servers, with glue
            for ns in ("ns1", "ns2"):
                lines.append("%s.tld. NS %s.%s.tld." % (name, ns, name))
                lines.append("%s.%s.tld. A 198.51.%d.%d" % (ns, name, i % 256,
                                                            1 + i // 256 % 250))
                if rng.random() < 0.5:
                    lines.append("%s.%s.tld. AAAA 2001:db8:%x::%s" % (ns, name, i, ns[-1]))
        else:  # at a hosting provider's name servers
            provider = int(rng.random() * PROVIDERS)
            for ns in range(2 + (rng.random() < 0.2)):
                lines.append("%s.tld. NS ns%d.provider%d.example." % (name, ns + 1, provider))
    # owner TTL class type RDATA, as querygen.read_zone() reads them
    return [" ".join(line.split(" ", 1)[:1] + ["86400 IN"] + line.split(" ", 1)[1:])
            for line in lines]


def main(argv):
    if len(argv) != 2:
        raise SystemExit(__doc__)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "contrib", "bench"))
    import querygen  # noqa: E402

    zone = os.path.join(argv[1], "tld.zone")
    with open(zone, "w") as f:
        f.write("\n".join(zone_lines(random.Random(SEED))) + "\n")
    origin, cuts = querygen.read_zone(zone)
    lines = querygen.tld_mix(random.Random(querygen.SEED), origin, cuts, QUERIES)
    with open(os.path.join(argv[1], "tld.queries"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv)
