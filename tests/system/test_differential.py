# SPDX-License-Identifier: BSD-3-Clause
"""apexd against NSD and Knot DNS: thousands of generated queries per zone,
each sent with the same bytes to all three, the responses compared section
by section (see compare.py for the rules and their RFCs)."""

import dataclasses
import os
import time

import dns.rdatatype
import pytest

import client
import compare
import querygen
from conftest import ZONE_SETS

# How many owner names of each large real zone are queried (a seeded
# sample); the small feature zones are queried in full, several times.
MAX_NAMES = int(os.environ.get("APEX_SYSTEM_MAX_NAMES", "4000"))
SEED = int(os.environ.get("APEX_SYSTEM_SEED", "1"))
# The references compared with (both by default; one of them when checking
# the harness with APEX_SYSTEM_CANDIDATE).
REFERENCES = os.environ.get("APEX_SYSTEM_REFERENCES", "nsd,knot,bind").split(",")

# (test id, zone set, origin, repeat count for each name of the zone)
CASES = [
    ("root", "tld", ".", 1),
    ("fj", "tld", "fj.", 1),
    ("sl", "tld", "sl.", 1),
    ("example", "tld", "example.", 7),
    ("example-nsec", "nsec", "example.", 5),
    ("example-nsec3", "nsec3", "example.", 4),
]


def zone_file(zone_set, origin):
    return dict(ZONE_SETS[zone_set])[origin]


def ask(refs, query, qid, transport=None):
    wire = client.make_wire(query, qid)
    return {label: c.exchange(wire, transport or query.transport) for label, c in refs.items()}


def check_query(q, qid, wire, cand_wire, refs, origin):
    """Compare apexd's response to query q with the references' responses
    (asking them more where compare.py's rules need it)."""
    if q.qtype == dns.rdatatype.ANY and cand_wire is not None:
        types = compare.types_in_answer(cand_wire)
        resp = compare.Response(cand_wire)
        if len(types) > 1 and q.transport == "tcp" and not resp.tc:
            # A full ANY answer over TCP (RFC 8482 §4.4): check each RRset.
            return compare.compare_any_full(q, cand_wire, {
                t: ask(refs, dataclasses.replace(q, qtype=t), qid) for t in types})
        if len(types) == 1 and not resp.tc:
            # RFC 8482 §4.1: compare with the references' answers for the
            # one type apexd chose (see compare.py).
            t = compare.anytype_of(resp)
            if t is not None:
                return compare.compare(q, cand_wire, ask(refs, dataclasses.replace(q, qtype=t), qid),
                                       origin=origin)
    ref_wires = {label: c.exchange(wire, q.transport) for label, c in refs.items()}
    result = compare.compare(q, cand_wire, ref_wires, origin=origin)
    if result and all(any(c == "additional-extra" for c, _ in d) for d in result.values()):
        # What fits in the additional section depends on each server's fill
        # order: let the references show what they would add with room.
        roomy = dataclasses.replace(q, transport="tcp", edns=4096 if q.edns is None else q.edns)
        pool = compare.additional_pool(ask(refs, roomy, qid, "tcp"))
        result = compare.compare(q, cand_wire, ref_wires, extra_pool=pool, origin=origin)
    return result


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_reference_servers(case, server_sets):
    name, zone_set, origin, repeat = case
    queries = querygen.generate(origin, zone_file(zone_set, origin), SEED,
                                MAX_NAMES, repeat)
    assert len(queries) >= 1000, "too few queries generated for %s" % name
    run_against_references(name, server_sets(zone_set), origin, queries)


# The feature zones, asked systematically: every kind of name, every type
# that can matter there, with and without EDNS and DO, over UDP and TCP.
# (test id, zone set, origin, kinds of name the zone must have, types not
# asked)
SYSTEMATIC = [
    ("example", "tld", "example.", querygen.FEATURE_KINDS, ()),
    ("example-nsec", "nsec", "example.", querygen.FEATURE_KINDS, ()),
    ("example-nsec3", "nsec3", "example.", querygen.FEATURE_KINDS + ("nsec3-owner",), ()),
    # data below a DNAME's owner, against BIND alone (conftest.py), without
    # the types where BIND's own policy differs and NSD and Knot DNS decide
    # in the cases above: ANY (BIND gives every RRset, RFC 8482 allows
    # one), MAILB (BIND answers NOTIMP) and SOA (BIND gives the SOA of an
    # NXDOMAIN answer to an SOA query TTL 0, RFC 2308 section 3 the lower
    # of its TTL and MINIMUM)
    ("occlusion", "occlusion", "occlusion.", ("dname", "occluded", "below-dname-3", "ent"),
     (dns.rdatatype.ANY, dns.rdatatype.MAILB, dns.rdatatype.SOA)),
]


@pytest.mark.parametrize("case", SYSTEMATIC, ids=[c[0] for c in SYSTEMATIC])
def test_every_kind_of_name(case, server_sets):
    name, zone_set, origin, kinds, skip = case
    queries, per_kind = querygen.systematic(origin, zone_file(zone_set, origin), SEED, skip)
    assert all(per_kind.get(k) for k in kinds), per_kind
    print("\n%s: queries per kind of name: %s" % (name, per_kind))
    run_against_references(name + " (systematic)", server_sets(zone_set), origin, queries)


def run_against_references(name, servers, origin, queries):
    """Send queries to apexd and the references; fail with the report of
    every difference."""
    cand = client.Client(servers.candidate.port)
    refs = {label: client.Client(s.port) for label, s in servers.references.items()
            if label in REFERENCES}
    report = compare.Report("%s (%s vs %s)" % (name, servers.candidate.label, "/".join(refs)))
    started = time.monotonic()
    try:
        for i, q in enumerate(queries):
            wire = client.make_wire(q, i & 0xFFFF)
            cand_wire = cand.exchange(wire, q.transport)
            report.add(q, check_query(q, i & 0xFFFF, wire, cand_wire, refs, origin))
            if not servers.candidate.alive():
                pytest.fail("%s died at query %d (%s)\n%s" % (
                    servers.candidate.label, i, q.describe(), servers.candidate.log_tail()))
    finally:
        cand.close()
        for c in refs.values():
            c.close()
    elapsed = time.monotonic() - started
    print("\n%s: %d queries in %.1f s" % (name, report.total, elapsed))
    if report.failures:
        pytest.fail(report.summary(), pytrace=False)
