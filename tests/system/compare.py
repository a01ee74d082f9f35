# SPDX-License-Identifier: BSD-3-Clause
"""Section-by-section comparison of a response from apexd with the responses
of the reference servers (NSD and Knot DNS) to the same query bytes.

A query passes when apexd's response matches at least one reference after
the normalisations below.  The references disagree in a few documented
places (../shared/notes/reference-servers.md beside the repository); in each of them one of them follows the RFC and apex must follow
the RFC, so "matches one of them" is the right test there.  Where both
references deviate from the RFC, or where the RFC leaves a choice, the rule
is written here with its RFC:

* CD flag: RFC 4035 §3.1.6 says the server MUST copy CD from the query into
  the response; NSD and Knot clear it.  apex's CD is checked against the
  query, never against a reference.
* Advertised EDNS payload size: the server's own choice (RFC 6891 §6.2.5);
  apex advertises 1232 (the DNS Flag Day 2020 value) and is checked against
  that constant.  EDNS options (NSID, RFC 5001) are configuration, not
  compared.
* Authority section of a positive authoritative answer: the zone's NS RRset
  there is optional (RFC 1034 §4.3.2 step 3 copies only the answer; RFC 2181
  §9 makes only required data count): NSD adds it, Knot does not.  It is
  removed from both sides before comparing.
* Additional section: additional-section processing (RFC 1034 §3.7, §4.3.2
  step 6; RFC 1035 §3.3) is optional, and servers differ in which target
  addresses they add and in what order they drop them for space.  apex's
  additional RRsets must each be one that a reference also returned for
  this query (no invented data, right TTLs and RRSIGs); and in a referral,
  every in-domain glue RRset a reference returned must be there too,
  because RFC 9471 §3.1 makes in-domain glue mandatory.
  Because what fits depends on each server's fill order, the pool also
  holds what the references return for the same query over TCP, where
  nothing is dropped for space.
* A CNAME chain that leaves the zone: RFC 1034 §4.3.2 step 3a restarts the
  lookup with the target, and NSD does so in every zone it serves, while
  Knot stops at the edge of the zone and leaves the rest of the chain to
  the resolver (which must follow it anyway, RFC 1034 §5.3.3).  Both are
  right: when apex's chain leaves the zone and its response matches no
  reference as it is, the responses are compared again without the RRsets
  owned by names outside the zone.
* Truncated responses (TC=1 on either side): only TC and the rcode are
  compared (RFC 2181 §9: the content of a truncated response is not
  meaningful).
* ANY (RFC 8482 §4.1): over UDP a server returns one RRset of its choice.
  apex's answer must hold exactly one RRset (with its RRSIGs), and the
  whole response must match the references' responses to a query for that
  type (the caller re-asks them); see anytype_of().  Over TCP RFC 8482 §4.4
  lets a server give the conventional full answer: then every RRset in it
  must equal the references' answer for its type (compare_any_full()).
  Below a DNAME these rules apply where the synthesised CNAME leads (RFC
  6672 section 3.3 restarts the lookup there): the DNAME and the CNAME
  before are compared as in any answer (dname_chain()).
"""

import collections
import struct

import dns.edns
import dns.exception
import dns.flags
import dns.message
import dns.name
import dns.rcode
import dns.rdatatype

T = dns.rdatatype
FLAG_NAMES = (("QR", dns.flags.QR), ("AA", dns.flags.AA), ("TC", dns.flags.TC),
              ("RD", dns.flags.RD))
APEX_EDNS_PAYLOAD = 1232
# The checks of apex's own policy (CD copied, payload advertised); off only
# when the harness is checked with a reference server as the candidate.
CHECK_APEX_POLICY = True


class Response:
    """The parts of one response message that are compared."""

    def __init__(self, wire):
        self.wire = wire
        self.error = None
        self.msg = None
        if len(wire) < 12:
            self.error = "short message (%d bytes)" % len(wire)
            self.flags = 0
            self.rcode = -1
            return
        qid, self.flags, qd, an, ns, ar = struct.unpack("!6H", wire[:12])
        self.counts = (qd, an, ns, ar)
        self.rcode = self.flags & 0xF
        try:
            self.msg = dns.message.from_wire(wire)
        except dns.exception.DNSException as e:
            self.error = "%s: %s" % (type(e).__name__, e)
            return
        self.rcode = self.msg.rcode()
        self.edns = self.msg.edns
        self.do = bool(self.msg.ednsflags & dns.flags.DO) if self.msg.edns >= 0 else False
        self.payload = self.msg.payload if self.msg.edns >= 0 else None
        self.answer = rrset_keys(self.msg.answer)
        self.authority = rrset_keys(self.msg.authority)
        self.additional = rrset_keys(self.msg.additional)

    @property
    def tc(self):
        return bool(self.flags & dns.flags.TC)

    @property
    def aa(self):
        return bool(self.flags & dns.flags.AA)

    def is_referral(self):
        return (self.msg is not None and not self.aa and self.rcode == 0
                and any(k[1] == T.NS for k in self.authority))

    def text(self):
        if self.msg is None:
            return "<%s>" % self.error
        return self.msg.to_text()


def rrset_key(rrset):
    """An RRset as a comparable value: owner (case-insensitive), type,
    covered type, TTL and the set of its rdata in canonical wire form
    (RFC 4034 §6.2: names in rdata lowercased where DNSSEC does)."""
    rdatas = frozenset(rd.to_digestable(dns.name.root) for rd in rrset)
    return (rrset.name.to_text().lower(), int(rrset.rdtype), int(rrset.covers),
            int(rrset.ttl), rdatas)


def rrset_keys(section):
    return frozenset(rrset_key(r) for r in section)


def key_text(key):
    name, rdtype, covers, ttl, rdatas = key
    t = T.to_text(rdtype)
    if covers:
        t += "(%s)" % T.to_text(covers)
    return "%s %d %s [%d rr]" % (name, ttl, t, len(rdatas))


def records_in(section):
    return sum(len(r) for r in section)


def name_under(name, ancestor):
    """Text names, lowercased, absolute: is name at or below ancestor?"""
    return ancestor == "." or name == ancestor or name.endswith("." + ancestor)


def without_apex_ns(resp, authority):
    """Drop the NS RRset (and its RRSIG) from the authority section of a
    positive authoritative answer (optional data, see the module doc)."""
    if not (resp.aa and resp.rcode == 0 and resp.answer):
        return authority
    return frozenset(k for k in authority
                     if not (k[1] == T.NS or (k[1] == T.RRSIG and k[2] == T.NS)))


def set_diff(category, mine, theirs):
    if mine == theirs:
        return []
    missing = sorted(key_text(k) for k in theirs - mine)
    extra = sorted(key_text(k) for k in mine - theirs)
    return [(category, "missing %s; extra %s" % (missing or "-", extra or "-"))]


def check_own(query, cand):
    """Checks of apex's response against the query alone (no reference)."""
    diffs = []
    if cand.msg is None:
        return [("unparsable", cand.error)]
    if CHECK_APEX_POLICY and bool(cand.flags & dns.flags.CD) != query.cd:
        diffs.append(("flag-CD", "CD not copied from the query (RFC 4035 §3.1.6)"))
    if cand.rcode != dns.rcode.FORMERR:
        q = cand.msg.question
        if len(q) != 1 or q[0].name.to_text() != query.qname or q[0].rdtype != query.qtype:
            diffs.append(("question", "question not echoed as sent: %s" %
                          [x.to_text() for x in q]))
    if (CHECK_APEX_POLICY and query.edns is not None and cand.edns >= 0
            and cand.payload != APEX_EDNS_PAYLOAD):
        diffs.append(("edns-payload", "advertises %s, expected %d" % (cand.payload, APEX_EDNS_PAYLOAD)))
    limit = 512 if query.edns is None else max(512, query.edns)
    if query.transport == "udp" and len(cand.wire) > limit:
        diffs.append(("udp-size", "%d-byte UDP response, client limit %d (RFC 1035 §4.2.1, RFC 6891 §6.2.5)"
                      % (len(cand.wire), limit)))
    counted = (records_in(cand.msg.answer), records_in(cand.msg.authority))
    if not cand.tc and counted != cand.counts[1:3]:
        diffs.append(("duplicate-records", "header counts %s, distinct records %s" %
                      (cand.counts[1:3], counted)))
    return diffs


def diff_against(query, cand, ref, pool):
    """Differences between apex's response and one reference response."""
    diffs = []
    if ref.msg is None:
        return [("reference-unparsable", ref.error)]
    if cand.rcode != ref.rcode:
        diffs.append(("rcode", "%s, reference %s" % (dns.rcode.to_text(cand.rcode),
                                                     dns.rcode.to_text(ref.rcode))))
    for name, bit in FLAG_NAMES:
        if (cand.flags & bit) != (ref.flags & bit):
            diffs.append(("flag-" + name, "%s=%d, reference %d" % (
                name, bool(cand.flags & bit), bool(ref.flags & bit))))
    if (cand.edns >= 0) != (ref.edns >= 0) or cand.do != ref.do:
        diffs.append(("edns", "OPT %s DO %s, reference OPT %s DO %s" % (
            cand.edns >= 0, cand.do, ref.edns >= 0, ref.do)))
    if cand.tc or ref.tc:
        return diffs
    diffs += set_diff("answer", cand.answer, ref.answer)
    diffs += set_diff("authority", without_apex_ns(cand, cand.authority),
                      without_apex_ns(ref, ref.authority))
    invented = cand.additional - pool
    if invented:
        diffs.append(("additional-extra", "not returned by any reference: %s" %
                      sorted(key_text(k) for k in invented)))
    if ref.is_referral():
        cuts = [k[0] for k in ref.authority if k[1] == T.NS]
        glue = frozenset(k for k in ref.additional
                         if k[1] in (T.A, T.AAAA) and any(name_under(k[0], c) for c in cuts))
        missing = glue - cand.additional
        if missing:
            diffs.append(("additional-missing-glue", "in-domain glue missing (RFC 9471): %s" %
                          sorted(key_text(k) for k in missing)))
    return diffs


def dname_chain(resp):
    """The DNAME RRsets and the CNAMEs synthesised from them (with their
    RRSIGs) that lead from the query name to where an ANY query's data
    is: a name below a DNAME is answered with the DNAME and a CNAME, and
    the lookup goes on at the CNAME's target (RFC 6672 section 3.3), where
    RFC 8482 applies.  Returns (the keys of the chain, the final name)."""
    if resp.msg is None or not resp.msg.question:
        return frozenset(), None
    cur = resp.msg.question[0].name.to_text().lower()
    dnames = {}
    cnames = {}
    for rrset in resp.msg.answer:
        owner = rrset.name.to_text().lower()
        if rrset.rdtype == T.DNAME:
            dnames[owner] = rrset
        elif rrset.rdtype == T.CNAME:
            cnames[owner] = rrset[0].target.to_text().lower()
    chain_names = set()
    while cur in cnames and (cur, T.CNAME) not in chain_names:
        dname = next((d for d in dnames if cur != d and name_under(cur, d)), None)
        if dname is None:
            break
        chain_names.update([(dname, T.DNAME), (cur, T.CNAME)])
        cur = cnames[cur]
    keys = frozenset(k for k in resp.answer
                     if (k[0], k[1]) in chain_names or (k[1] == T.RRSIG and (k[0], k[2]) in chain_names))
    return keys, cur


def any_data(resp):
    """An ANY answer's RRsets at the end of its DNAME chain, if any."""
    chain, _ = dname_chain(resp)
    return resp.answer - chain


def anytype_of(cand):
    """For an ANY query: the one type in apex's answer at the end of its
    DNAME chain (None if there is no data there or not a single RRset)."""
    if cand.msg is None:
        return None
    data = any_data(cand)
    types = {k[1] for k in data if k[1] != T.RRSIG}
    owners = {k[0] for k in data if k[1] != T.RRSIG}
    if len(types) == 1 and len(owners) == 1:
        return types.pop()
    return None


def leaves_zone(resp, origin):
    """Does a CNAME in the answer point outside the zone origin (text,
    lowercased)?"""
    for rrset in resp.msg.answer:
        if rrset.rdtype == T.CNAME:
            for rd in rrset:
                if not name_under(rd.target.to_text().lower(), origin):
                    return True
    return False


def inside_zone(resp, origin):
    """resp with the RRsets owned by names outside the zone removed."""
    def keep(keys):
        return frozenset(k for k in keys if name_under(k[0], origin))
    resp.answer = keep(resp.answer)
    resp.authority = keep(resp.authority)
    resp.additional = keep(resp.additional)
    return resp


def compare(query, cand_wire, ref_wires, extra_pool=frozenset(), origin=None):
    """Compare apex's response with the reference responses (a dict of
    label -> wire or None for no response).  Returns None if it matches
    one reference, else {label: [(category, detail), ...]}.  extra_pool:
    more additional-section RRsets the references consider valid.  origin:
    the zone the query is about (text), for chains that leave it."""
    refs = {label: Response(w) for label, w in ref_wires.items() if w is not None}
    if cand_wire is None:
        if not refs:
            return None  # nobody answered (e.g. a query that is dropped)
        return {label: [("no-response", "apex did not answer")] for label in refs}
    cand = Response(cand_wire)
    own = check_own(query, cand)
    if not refs:
        return {"all": [("unexpected-response", "the references did not answer")] + own}
    if cand.msg is None:
        return {label: own for label in refs}
    if query.qtype == T.ANY and any_data(cand) and not cand.tc and query.transport == "udp":
        t = anytype_of(cand)
        if t is None:
            own.append(("any", "ANY answer is not exactly one RRset (RFC 8482 §4.1): %s" %
                        sorted(key_text(k) for k in cand.answer)))
    result = _compare_parsed(query, cand, refs, own, extra_pool)
    if result and origin is not None and cand.answer and leaves_zone(cand, origin.lower()):
        inside = {label: inside_zone(r, origin.lower()) if r.msg is not None else r
                  for label, r in refs.items()}
        if _compare_parsed(query, inside_zone(cand, origin.lower()), inside, own, extra_pool) is None:
            return None
    return result


def _compare_parsed(query, cand, refs, own, extra_pool):
    pool = frozenset().union(extra_pool, *(r.additional for r in refs.values()
                                           if r.msg is not None))
    result = {}
    for label, ref in refs.items():
        d = own + diff_against(query, cand, ref, pool)
        if not d:
            return None
        result[label] = d
    return result


def additional_pool(ref_wires):
    """The additional-section RRsets of some reference responses."""
    pool = frozenset()
    for w in ref_wires.values():
        if w is not None:
            r = Response(w)
            if r.msg is not None:
                pool |= r.additional
    return pool


def types_in_answer(cand_wire):
    """The types (RRSIG aside) in a response's answer section, after its
    DNAME chain (dname_chain())."""
    cand = Response(cand_wire)
    if cand.msg is None:
        return []
    return sorted({k[1] for k in any_data(cand) if k[1] != T.RRSIG})


def compare_any_full(query, cand_wire, ref_wires_by_type):
    """A full ANY answer over TCP (RFC 8482 §4.4): every RRset in it, with
    its RRSIGs, must be exactly what a reference answers for its type.
    ref_wires_by_type: type -> {label: wire}."""
    cand = Response(cand_wire)
    problems = check_own(query, cand)
    if cand.rcode != 0:
        problems.append(("rcode", "%s with a non-empty ANY answer" % dns.rcode.to_text(cand.rcode)))
    for t, ref_wires in sorted(ref_wires_by_type.items()):
        def of_type(resp):
            # the RRsets of type t, and the DNAME chain that led to them
            chain, _ = dname_chain(resp)
            return chain | frozenset(k for k in resp.answer
                                     if k[1] == t or (k[1] == T.RRSIG and k[2] == t))
        mine = of_type(cand)
        last = [("any", "no reference answered a query for type %s" % T.to_text(t))]
        for w in ref_wires.values():
            ref = Response(w) if w is not None else None
            if ref is None or ref.msg is None:
                continue
            last = set_diff("any", mine, of_type(ref))
            if not last:
                break
        problems += last
    return {"/".join(sorted(next(iter(ref_wires_by_type.values()), {}))): problems} if problems else None


class Report:
    """Collects the failures of one differential run and summarises them
    per category, with a few examples each."""

    EXAMPLES = 4

    def __init__(self, title):
        self.title = title
        self.total = 0
        self.failures = []
        self.by_category = collections.Counter()
        self.examples = collections.defaultdict(list)
        self.stats = collections.Counter()

    def add(self, query, result, cand_wire=None, ref_wires=None):
        self.total += 1
        if result is None:
            return
        self.failures.append(query)
        # Attribute the failure to the categories of the closest reference.
        best = min(result.values(), key=len)
        cats = sorted({c for c, _ in best})
        for c in cats:
            self.by_category[c] += 1
            if len(self.examples[c]) < self.EXAMPLES:
                self.examples[c].append((query, result))

    def summary(self):
        lines = ["%s: %d of %d queries differ" % (self.title, len(self.failures), self.total)]
        for cat, n in self.by_category.most_common():
            lines.append("  %-26s %d" % (cat, n))
        for cat, n in self.by_category.most_common():
            lines.append("--- %s (%d), examples:" % (cat, n))
            for query, result in self.examples[cat]:
                lines.append("  query: %s" % query.describe())
                for label, diffs in sorted(result.items()):
                    for c, detail in diffs:
                        lines.append("    vs %s: %s: %s" % (label, c, detail))
        return "\n".join(lines)
