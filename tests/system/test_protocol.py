# SPDX-License-Identifier: BSD-3-Clause
"""Targeted protocol tests of apexd: transport, malformed and unusual
queries, and the cases of the shared notes where NSD and Knot disagree and
apex follows the RFC."""

import socket
import struct

import dns.edns
import dns.flags
import dns.message
import dns.name
import dns.opcode
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import pytest

import client
import compare
import querygen

T = dns.rdatatype


def udp_raw(port, wire, timeout=1.0):
    """Send raw bytes over UDP; the response bytes, or None if none came."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(timeout)
        s.sendto(wire, (client.LOOPBACK, port))
        try:
            return s.recvfrom(65535)[0]
        except socket.timeout:
            return None


def query(name, rdtype, flags=0, **kw):
    m = dns.message.make_query(name, rdtype, **kw)
    m.flags = flags
    return m


def ask(port, msg, transport="udp"):
    c = client.Client(port)
    try:
        wire = c.exchange(msg.to_wire(), transport)
    finally:
        c.close()
    assert wire is not None, "no response from 127.0.0.1@%d" % port
    return dns.message.from_wire(wire)


def header(qid=0x1234, flags=0, qd=1, an=0, ns=0, ar=0):
    return struct.pack("!6H", qid, flags, qd, an, ns, ar)


def still_answers(port):
    r = ask(port, query("example.", T.SOA))
    return r.rcode() == dns.rcode.NOERROR and len(r.answer) == 1


@pytest.fixture
def apex(server_sets):
    """apexd serving only the NSEC-signed example. zone."""
    return server_sets("nsec").candidate


def test_tcp_pipelining(apex):
    """RFC 7766 §6.2.1: several queries sent at once on one connection are
    all answered (in any order)."""
    names = ["example.", "www.example.", "nothere.example.", "a.b.c.ent.example.",
             "x.wild.example.", "chain1.example.", "sub.example.", "mail.example."]
    msgs = []
    for i, n in enumerate(names):
        m = query(n, T.A)
        m.id = 1000 + i
        msgs.append(m)
    data = b"".join(struct.pack("!H", len(w)) + w for w in (m.to_wire() for m in msgs))
    with socket.create_connection((client.LOOPBACK, apex.port), timeout=5) as s:
        s.sendall(data)
        got = {}
        for _ in msgs:
            (size,) = struct.unpack("!H", client.recv_exact(s, 2))
            r = dns.message.from_wire(client.recv_exact(s, size))
            got[r.id] = r
        # The connection stays open for more queries.
        m = query("ns1.example.", T.AAAA)
        m.id = 2000
        w = m.to_wire()
        s.sendall(struct.pack("!H", len(w)) + w)
        (size,) = struct.unpack("!H", client.recv_exact(s, 2))
        assert dns.message.from_wire(client.recv_exact(s, size)).id == 2000
    assert sorted(got) == [m.id for m in msgs]
    for m in msgs:
        r = got[m.id]
        assert r.question[0].name == m.question[0].name
        assert r.flags & dns.flags.QR
    assert got[1002].rcode() == dns.rcode.NXDOMAIN
    assert got[1001].answer[0].rdtype == T.A and len(got[1001].answer[0]) == 2


def test_refused_outside_served_zones(apex):
    for name in ("www.example.org.", ".", "org.", "exampl."):
        r = ask(apex.port, query(name, T.A))
        assert r.rcode() == dns.rcode.REFUSED, name
        assert not r.flags & dns.flags.AA
        assert not r.answer


def ede_codes(r):
    """The Extended DNS Errors (RFC 8914) of response r: [(code, text)]."""
    return [(o.code, o.text) for o in r.options if o.otype == dns.edns.EDE]


def test_extended_dns_errors(apex):
    """REFUSED carries an Extended DNS Error when the query had EDNS: Not
    Authoritative (20) for a name in no zone served, Not Supported (21) for
    a class other than IN, CH and ANY; none without EDNS, none on answers."""
    r = ask(apex.port, query("www.example.org.", T.A, use_edns=0))
    assert r.rcode() == dns.rcode.REFUSED
    assert ede_codes(r) == [(dns.edns.EDECode.NOT_AUTHORITATIVE, None)], r
    r = ask(apex.port, query("www.example.org.", T.A, use_edns=0), "tcp")
    assert ede_codes(r) == [(dns.edns.EDECode.NOT_AUTHORITATIVE, None)], r
    r = ask(apex.port, query("www.example.org.", T.A))
    assert r.rcode() == dns.rcode.REFUSED and r.edns < 0
    r = ask(apex.port, query("www.example.org.", T.A, use_edns=0,
                             rdclass=dns.rdataclass.HS))
    assert r.rcode() == dns.rcode.REFUSED
    assert ede_codes(r) == [(dns.edns.EDECode.NOT_SUPPORTED, None)], r
    r = ask(apex.port, query("example.", T.SOA, use_edns=0))
    assert r.rcode() == dns.rcode.NOERROR and ede_codes(r) == [], r


ZONEVERSION = 19  # RFC 9660


def zoneversion(r):
    """The ZONEVERSION options of response r, each (label count, type, serial)."""
    out = []
    for o in r.options:
        if o.otype == ZONEVERSION:
            data = o.to_wire() if not hasattr(o, "data") else o.data
            out.append((data[0], data[1], int.from_bytes(data[2:], "big")))
    return out


def test_zoneversion(server_sets):
    """RFC 9660: an empty ZONEVERSION option in the query brings the label
    count and SOA serial of the zone the answer came from (the parent's for
    a referral or a DS at a child's apex), over UDP and TCP, also on
    NXDOMAIN; not without the option, not for a non-empty one (ignored),
    not on REFUSED."""
    port = server_sets("tld").candidate.port
    ask_zv = dns.edns.GenericOption(ZONEVERSION, b"")
    root_serial, example_serial, fj_serial = 2024101100, 2025010101, 2024101207

    def versions(name, rdtype, transport="udp", options=(ask_zv,)):
        r = ask(port, query(name, rdtype, use_edns=0, options=list(options)), transport)
        return r, zoneversion(r)

    assert versions("www.example.", T.A)[1] == [(1, 0, example_serial)]
    assert versions("www.example.", T.A, "tcp")[1] == [(1, 0, example_serial)]
    r, v = versions("nowhere.example.", T.A)
    assert r.rcode() == dns.rcode.NXDOMAIN and v == [(1, 0, example_serial)]
    assert versions(".", T.SOA)[1] == [(0, 0, root_serial)]
    assert versions("fj.", T.DNSKEY)[1] == [(1, 0, fj_serial)]
    # a referral from the root, and a DS at a child's apex: the root's
    r, v = versions("www.example.com.", T.A)
    assert not r.answer and r.authority and v == [(0, 0, root_serial)], r
    assert versions("fj.", T.DS)[1] == [(0, 0, root_serial)]
    # not asked, asked with data (ignored), or no zone
    assert versions("www.example.", T.A, options=())[1] == []
    assert versions("www.example.", T.A,
                    options=(dns.edns.GenericOption(ZONEVERSION, b"\x01"),))[1] == []
    r = ask(port, query("www.example.", T.A, use_edns=0, options=[ask_zv],
                        rdclass=dns.rdataclass.HS))
    assert r.rcode() == dns.rcode.REFUSED and zoneversion(r) == []


def test_chaos_identity_off_by_default(apex):
    """CHAOS id.server/version.bind are off by default: REFUSED."""
    for name in ("id.server.", "version.bind.", "hostname.bind."):
        m = dns.message.make_query(name, T.TXT, rdclass=dns.rdataclass.CH)
        r = ask(apex.port, m)
        assert r.rcode() == dns.rcode.REFUSED, name
        assert not r.answer


@pytest.mark.parametrize("opcode", [dns.opcode.IQUERY, dns.opcode.STATUS, 3, 15])
def test_notimp_for_other_opcodes(apex, opcode):
    m = query("example.", T.SOA)
    wire = bytearray(m.to_wire())
    wire[2] = (wire[2] & 0x87) | (opcode << 3)
    r = udp_raw(apex.port, bytes(wire))
    assert r is not None and len(r) >= 12
    assert r[:2] == wire[:2]
    assert r[2] & 0x80, "QR not set"
    assert (r[2] >> 3) & 0xF == opcode
    assert r[3] & 0xF == dns.rcode.NOTIMP


def test_badvers_for_edns_version_1(apex):
    """RFC 6891 §6.1.3: BADVERS, with an OPT of version 0."""
    m = query("example.", T.SOA)
    m.use_edns(edns=1, payload=1232)
    wire = m.to_wire()
    assert wire[-5] == 1, "the query does not carry EDNS version 1"
    r = dns.message.from_wire(udp_raw(apex.port, wire))
    assert r.rcode() == dns.rcode.BADVERS
    assert r.edns == 0
    assert not r.answer


def test_formerr_for_opt_with_non_root_owner(apex):
    """RFC 6891 §6.1.2: the OPT owner MUST be the root (NSD and BIND:
    FORMERR; Knot accepts it)."""
    q = header(ar=1) + dns.name.from_text("example.").to_wire() + struct.pack("!HH", T.SOA, 1)
    opt = dns.name.from_text("example.").to_wire() + struct.pack("!HHIH", T.OPT, 1232, 0, 0)
    r = udp_raw(apex.port, q + opt)
    assert r is not None and len(r) >= 12
    assert r[3] & 0xF == dns.rcode.FORMERR


def test_formerr_for_malformed_cookie(apex):
    """RFC 7873 §5.2.2: a COOKIE option of a length other than 8 or 16 to 40
    is FORMERR."""
    cookie = dns.edns.GenericOption(10, b"\x01\x02\x03\x04\x05")
    m = query("example.", T.SOA, use_edns=0, payload=1232, options=[cookie])
    r = udp_raw(apex.port, m.to_wire())
    assert r is not None and len(r) >= 12
    assert r[3] & 0xF == dns.rcode.FORMERR


def qsection(name_wire, qtype=T.A):
    return name_wire + struct.pack("!HH", qtype, 1)


MALFORMED = {
    "pointer-loop": header() + qsection(b"\xc0\x0c"),
    "pointer-forward": header() + qsection(b"\xc0\x20") + b"\x00" * 20,
    "label-type-0x40": header() + qsection(b"\x41abc\x00"),
    "label-type-0x80": header() + qsection(b"\x81abc\x00"),
    "name-over-255": header() + qsection(b"".join(b"\x3f" + b"a" * 63 for _ in range(4)) + b"\x00"),
    "qdcount-2": header(qd=2) + qsection(b"\x07example\x00") + qsection(b"\x03www\x07example\x00"),
    "qdcount-0": header(qd=0),
    "truncated-question": header() + b"\x07examp",
    "question-without-type": header() + b"\x07example\x00",
    "arcount-without-records": header(ar=2) + qsection(b"\x07example\x00"),
    "short-header": b"\x12\x34\x00",
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_query_formerr_or_dropped(apex, case):
    """Malformed queries: FORMERR or no answer (both acceptable per the
    shared notes; FORMERR is friendlier), and the server keeps serving."""
    r = udp_raw(apex.port, MALFORMED[case], timeout=0.5)
    if r is not None:
        assert len(r) >= 12
        qid, flags = struct.unpack("!HH", r[:4])
        assert qid == 0x1234
        assert flags & dns.flags.QR
        assert flags & 0xF == dns.rcode.FORMERR, "rcode %d" % (flags & 0xF)
    assert apex.alive()
    assert still_answers(apex.port)


def test_response_is_dropped(apex):
    """A message with QR=1 is never answered (no reflection loops)."""
    m = query("example.", T.SOA)
    wire = bytearray(m.to_wire())
    wire[2] |= 0x80
    assert udp_raw(apex.port, bytes(wire), timeout=0.7) is None
    assert still_answers(apex.port)


def test_question_echoed_with_client_case(apex):
    r = ask(apex.port, query("WwW.eXaMpLe.", T.A))
    assert r.question[0].name.to_text() == "WwW.eXaMpLe."
    assert r.answer[0].name.to_text().lower() == "www.example."


def test_cd_copied_and_payload_advertised(apex):
    """RFC 4035 §3.1.6: CD copied; apex advertises 1232 (RFC 6891 §6.2.5)."""
    r = ask(apex.port, query("www.example.", T.A, flags=dns.flags.CD | dns.flags.RD,
                             use_edns=0, payload=4096, want_dnssec=True))
    assert r.flags & dns.flags.CD and r.flags & dns.flags.RD
    assert r.flags & dns.flags.AA
    assert r.edns == 0 and r.payload == compare.APEX_EDNS_PAYLOAD
    assert r.ednsflags & dns.flags.DO
    assert any(rr.rdtype == T.RRSIG for rr in r.answer)


def test_small_edns_buffer_counts_as_512(apex):
    """RFC 6891 §6.2.5: a payload size below 512 is treated as 512."""
    m = query("example.", T.DNSKEY, use_edns=0, payload=100, want_dnssec=True)
    wire = udp_raw(apex.port, m.to_wire())
    assert wire is not None and len(wire) <= 512
    r = dns.message.from_wire(wire)
    assert r.rcode() == dns.rcode.NOERROR
    assert r.answer or r.flags & dns.flags.TC


def test_large_answer_truncated_then_complete_over_tcp(server_sets):
    """The root DNSKEY RRset with its RRSIG is over 1000 bytes: with a
    512-byte EDNS buffer the UDP answer sets TC, over TCP it is complete."""
    apexd = server_sets("tld").candidate
    m = query(".", T.DNSKEY, use_edns=0, payload=512, want_dnssec=True)
    wire = udp_raw(apexd.port, m.to_wire())
    assert wire is not None and len(wire) <= 512
    assert dns.message.from_wire(wire).flags & dns.flags.TC
    r = ask(apexd.port, m, "tcp")
    assert not r.flags & dns.flags.TC
    assert {rr.rdtype for rr in r.answer} == {T.DNSKEY, T.RRSIG}


def _same_query_both(server_sets, set_name, q):
    s = server_sets(set_name)
    wire = client.make_wire(q, 0x4321)
    out = {}
    for label, srv in [("apex", s.candidate)] + sorted(s.references.items()):
        c = client.Client(srv.port)
        try:
            out[label] = compare.Response(c.exchange(wire, q.transport))
        finally:
            c.close()
    return out


def test_referral_in_domain_glue_sets_tc(server_sets):
    """RFC 9471 §3.1: in-domain glue is mandatory; a referral whose glue
    does not fit 512 bytes sets TC (Knot) rather than dropping glue (NSD)."""
    q = querygen.Query("b.fi.", T.A, "udp", None, False, False, False)
    r = _same_query_both(server_sets, "tld", q)
    assert r["knot"].tc, "the premise no longer holds: Knot answers without TC"
    assert r["apex"].tc
    assert r["apex"].rcode == dns.rcode.NOERROR


def test_dname_to_nxdomain_has_full_nsec_proof(server_sets):
    """RFC 4035 §3.1.3.2 / RFC 6672: the synthesised target does not exist:
    both NSEC records of the NXDOMAIN proof (Knot; NSD omits one)."""
    q = querygen.Query("nothere.dname.example.", T.A, "udp", 1232, True, False, False)
    r = _same_query_both(server_sets, "nsec", q)
    assert r["apex"].rcode == dns.rcode.NXDOMAIN
    assert r["apex"].answer == r["knot"].answer

    def nsec(resp):
        return {k for k in resp.authority if T.NSEC in (k[1], k[2])}
    assert len(nsec(r["knot"])) == 4, "the premise no longer holds: Knot's proof changed"
    assert nsec(r["apex"]) == nsec(r["knot"])


@pytest.mark.parametrize("qtype", [T.NSEC, T.RRSIG])
def test_nsec_or_rrsig_query_at_cname_follows_it(server_sets, qtype):
    """RFC 1034 §3.6.2 / RFC 5155 §8.5: in an unsigned zone there is no
    NSEC or RRSIG at a CNAME owner, so the CNAME is followed (NSD; Knot
    answers NODATA)."""
    q = querygen.Query("chain1.example.", qtype, "udp", 1232, False, False, False)
    r = _same_query_both(server_sets, "tld", q)
    assert r["apex"].rcode == r["nsd"].rcode
    assert r["apex"].answer == r["nsd"].answer
    assert any(k[1] == T.CNAME for k in r["apex"].answer)
