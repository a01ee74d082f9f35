#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The TLD zone and queries of the instruction guard's "tld" set
(doc/performance.md, "The guard in make check").

  tld_zone.py DIR     writes DIR/tld.zone, DIR/tld-nsec3.zone and
                      DIR/tld.queries

A TLD of 20,000 delegations: more than query/precompute.h's
APEX_PRECOMPUTED_CUTS_MAX (16,384), so that its referrals are written
record by record, names compressed one by one, as in every large TLD,
where the root zone's are copied from precomputed fragments.  Most name
servers are out of the zone, shared by many delegations as at hosting
providers; a fifth are in the delegation itself, with glue (IPv4, and
IPv6 for half of them).  The queries are contrib/bench/querygen.py's TLD
mix (80% referrals) over it.  The same files on every machine: a fixed
seed, and nothing but Python's random.Random(seed).random() drawn.

tld-nsec3.zone is the same TLD signed as large TLDs are: NSEC3 with
opt-out (RFC 5155; no salt and no extra iterations, RFC 9276), DS for
three delegations in ten, and NSEC3 records for the apex, the names of
its own data and the delegations with DS only.  Its signatures are
placeholders of the right size (apexd serves a zone's signatures as
they are): the queries at DO=1 carry the NSEC3 proofs, DS and RRSIGs a
signed TLD's answers do, and hash their names as a signed TLD's
NXDOMAIN answers do.
"""

import base64
import hashlib

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


SIGNATURE = base64.b64encode(bytes(range(64))).decode()  # an ECDSA P-256 signature's size
KEY = base64.b64encode(bytes(range(64, 128))).decode()


def wire(name):
    """The lowercase wire form of a presentation name."""
    out = b""
    for part in name.lower().rstrip(".").split("."):
        out += bytes([len(part)]) + part.encode()
    return out + b"\0"


def nsec3_hash(name):
    """RFC 5155 section 5: SHA-1, no salt, no extra iterations; base32hex."""
    return base64.b32hexencode(hashlib.sha1(wire(name)).digest()).decode().lower()


def rrsig(owner, rtype, labels):
    return "%s 86400 IN RRSIG %s 13 %d 86400 20361231000000 20261201000000 4242 %s %s" % (
        owner, rtype, labels, ORIGIN, SIGNATURE)


def signed_lines(lines, rng):
    """lines (zone_lines()'s) signed with NSEC3 opt-out, DS for 30% of the
    delegations drawn from rng."""
    out, types, cuts = [], {}, set()
    for line in lines:
        owner, rtype = line.split()[0], line.split()[3]
        out.append(line)
        first_cut = rtype == "NS" and owner != ORIGIN and owner not in cuts
        if first_cut:
            cuts.add(owner)
        if owner in (ORIGIN, "a.nic.tld.", "b.nic.tld.") or owner in cuts:
            types.setdefault(owner, set()).add(rtype)  # not glue's
        if first_cut and rng.random() < 0.3:
            digest = "".join("%02x" % int(rng.random() * 256) for _ in range(32))
            out.append("%s 86400 IN DS 4242 13 2 %s" % (owner, digest))
            types[owner].add("DS")
    signed = {o: t for o, t in types.items() if o not in cuts or "DS" in t}
    signed["nic.tld."] = {"TXT"}
    out.append('nic.tld. 86400 IN TXT "the TLD\'s own name servers"')
    out += [ORIGIN + " 86400 IN DNSKEY 257 3 13 " + KEY, ORIGIN + " 86400 IN NSEC3PARAM 1 0 0 -"]
    signed[ORIGIN] |= {"DNSKEY", "NSEC3PARAM"}
    for owner, rtypes in sorted(signed.items()):
        labels = owner.count(".")
        for rtype in sorted(rtypes - ({"NS"} if owner != ORIGIN else set())):
            out.append(rrsig(owner, rtype, labels))
    chain = sorted((nsec3_hash(owner), owner) for owner in signed)
    for i, (hashed, owner) in enumerate(chain):
        bitmap = " ".join(sorted(signed[owner] | ({"RRSIG"} if owner not in cuts or
                                                  "DS" in signed[owner] else set())))
        out.append("%s.%s 86400 IN NSEC3 1 1 0 - %s %s" % (
            hashed, ORIGIN, chain[(i + 1) % len(chain)][0], bitmap))
        out.append(rrsig("%s.%s" % (hashed, ORIGIN), "NSEC3", 2))
    return out


def main(argv):
    if len(argv) != 2:
        raise SystemExit(__doc__)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "contrib", "bench"))
    import querygen  # noqa: E402

    zone = os.path.join(argv[1], "tld.zone")
    lines = zone_lines(random.Random(SEED))
    with open(zone, "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(argv[1], "tld-nsec3.zone"), "w") as f:
        f.write("\n".join(signed_lines(lines, random.Random(SEED + 1))) + "\n")
    origin, cuts = querygen.read_zone(zone)
    lines = querygen.tld_mix(random.Random(querygen.SEED), origin, cuts, QUERIES)
    with open(os.path.join(argv[1], "tld.queries"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv)
