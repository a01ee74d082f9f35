# SPDX-License-Identifier: BSD-3-Clause
"""Malformed and hostile queries sent to apexd, NSD and Knot DNS alike.

Each packet of the corpus goes to the three servers at once; the outcome
(no response, or the response's rcode) of apexd must be the one of NSD and
Knot DNS when they agree.  Where they disagree, apexd follows the RFC
(RFC_POLICY, with the RFC for each case; the shared notes on the reference
servers list them).  Where both references deviate from an RFC that is
explicit about the case, apexd follows the RFC too (OVERRIDES).
Meanwhile, and after every case, apexd must keep answering good queries.
"""

import socket
import struct
import threading
import time

import dns.message
import dns.rcode
import dns.rdatatype
import pytest

import client

WAIT = 0.8  # seconds to wait for a response that may never come


def header(qid=0x4d4d, flags=0, qd=1, an=0, ns=0, ar=0):
    return struct.pack("!6H", qid, flags, qd, an, ns, ar)


def name(text):
    out = b""
    for label in text.rstrip(".").split("."):
        if label:
            out += bytes([len(label)]) + label.encode()
    return out + b"\x00"


def question(qname="example.", qtype=6, qclass=1):
    return name(qname) + struct.pack("!HH", qtype, qclass)


def opt(payload=1232, version=0, do=False, options=b"", owner=b"\x00", ext_rcode=0):
    ttl = (ext_rcode << 24) | (version << 16) | (0x8000 if do else 0)
    return owner + struct.pack("!HHIH", 41, payload, ttl, len(options)) + options


def option(code, data):
    return struct.pack("!HH", code, len(data)) + data


A_RECORD = name("example.") + struct.pack("!HHIH", 1, 1, 60, 4) + b"\x7f\x00\x00\x01"
LONG_LABELS = b"".join(b"\x3f" + b"a" * 63 for _ in range(4))  # 256 bytes before the root
SOA_IXFR = name("example.") + struct.pack("!HHIH", 6, 1, 0, 22) + b"\x00\x00" + struct.pack(
    "!5I", 1, 0, 0, 0, 0)

# (id, bytes, transport)
CORPUS = [
    ("short-5-bytes", header()[:5], "udp"),
    ("header-only-qdcount-1", header(), "udp"),
    ("question-cut-in-label", header() + b"\x07exam", "udp"),
    ("question-without-type", header() + name("example."), "udp"),
    ("question-type-cut", header() + name("example.") + b"\x00", "udp"),
    ("pointer-loop", header() + b"\xc0\x0c" + struct.pack("!HH", 6, 1), "udp"),
    ("pointer-two-loop", header() + b"\x01a\xc0\x0e\x01b\xc0\x0c" + struct.pack("!HH", 6, 1),
     "udp"),
    ("forward-pointer", header() + b"\xc0\x12" + struct.pack("!HH", 6, 1) + name("example."),
     "udp"),
    ("pointer-past-end", header() + b"\xc0\xff" + struct.pack("!HH", 6, 1), "udp"),
    ("label-type-0x40", header() + b"\x41example\x00" + struct.pack("!HH", 6, 1), "udp"),
    ("name-over-255", header() + LONG_LABELS + b"\x00" + struct.pack("!HH", 1, 1), "udp"),
    ("ancount-lies", header(an=1) + question(), "udp"),
    ("arcount-lies", header(ar=2) + question() + opt(), "udp"),
    ("nscount-65535", header(ns=65535) + question(), "udp"),
    ("qdcount-0", header(qd=0), "udp"),
    ("qdcount-2", header(qd=2) + question() + question(), "udp"),
    ("two-opt", header(ar=2) + question() + opt() + opt(), "udp"),
    ("opt-in-answer", header(an=1) + question() + opt(), "udp"),
    ("opt-in-authority", header(ns=1) + question() + opt(), "udp"),
    ("opt-owner-not-root", header(ar=1) + question() + opt(owner=name("example.")), "udp"),
    ("opt-option-overruns", header(ar=1) + question() + opt(options=b"\x00\x0a\x00\x20abcd"),
     "udp"),
    ("edns-version-1", header(ar=1) + question() + opt(version=1), "udp"),
    ("cookie-5-bytes", header(ar=1) + question() + opt(options=option(10, b"12345")), "udp"),
    ("cookie-41-bytes", header(ar=1) + question() + opt(options=option(10, b"x" * 41)), "udp"),
    ("qr-set", header(flags=0x8000) + question(), "udp"),
    ("qr-set-tcp", header(flags=0x8000) + question(), "tcp"),
    ("opcode-iquery", header(flags=1 << 11) + question(), "udp"),
    ("opcode-status", header(flags=2 << 11) + question(), "udp"),
    ("opcode-notify", header(flags=4 << 11) + question(), "udp"),
    ("opcode-update", header(flags=5 << 11) + question(), "udp"),
    ("opcode-15", header(flags=15 << 11) + question(), "udp"),
    ("class-0", header() + question(qclass=0), "udp"),
    ("class-42", header() + question(qclass=42), "udp"),
    ("class-none", header() + question(qclass=254), "udp"),
    ("class-any", header() + question(qclass=255), "udp"),
    ("class-hesiod", header() + question(qclass=4), "udp"),
    ("trailing-garbage", header() + question() + b"\xde\xad\xbe\xef", "udp"),
    ("trailing-garbage-after-opt", header(ar=1) + question() + opt() + b"\x00", "udp"),
    ("record-rdlength-overruns", header(an=1) + question() + A_RECORD[:-2], "udp"),
    ("axfr-udp", header() + question(qtype=252), "udp"),
    ("ixfr-udp", header(ns=1) + question(qtype=251) + SOA_IXFR, "udp"),
    ("maila-udp", header() + question(qtype=254), "udp"),
    ("type-0", header() + question(qtype=0), "udp"),
    ("tcp-zero-length", b"", "tcp-zero"),
    ("tcp-truncated-message", header() + b"\x07exam", "tcp"),
]

# NSD and Knot DNS disagree: what apexd does and why.
RFC_POLICY = {
    # A question that cannot be read (cut short, pointer loops, forward
    # pointers or pointers past the end, bad label types, names over 255
    # bytes, two questions): NSD answers FORMERR, Knot drops.  RFC 1035
    # 4.1.1 defines FORMERR ("unable to interpret the query") for exactly
    # this; RFC 1035 4.1.4 allows pointers only to a prior occurrence, and
    # RFC 9619 allows one question.  Dropping is allowed too, FORMERR tells
    # a confused client why.
    "header-only-qdcount-1": "FORMERR",
    "question-cut-in-label": "FORMERR",
    "question-without-type": "FORMERR",
    "question-type-cut": "FORMERR",
    "pointer-loop": "FORMERR",
    "pointer-two-loop": "FORMERR",
    "forward-pointer": "FORMERR",
    "pointer-past-end": "FORMERR",
    "label-type-0x40": "FORMERR",
    "name-over-255": "FORMERR",
    "qdcount-2": "FORMERR",
    # TCP: a complete length-prefixed message whose question is cut short
    # (NSD FORMERR, Knot closes the connection): RFC 1035 4.1.1 as above;
    # RFC 7766 section 6.2.4 wants the connection kept open, not closed.
    "tcp-truncated-message": "FORMERR",
    # RFC 6891 6.1.1: the OPT owner MUST be the root; RFC 6891 7: a
    # malformed OPT is FORMERR (NSD FORMERR, Knot ignores the owner).
    "opt-owner-not-root": "FORMERR",
    # Bytes after the last record the counts announce (NSD ignores them,
    # Knot FORMERR): the message does not match its header, RFC 1035 4.1.1.
    "trailing-garbage": "FORMERR",
    "trailing-garbage-after-opt": "FORMERR",
    # NOTIFY (RFC 1996) and UPDATE (RFC 2136) are not implemented by apex:
    # RFC 1035 4.1.1 NOTIMP, "the name server does not support the
    # requested kind of query", and RFC 2136 section 3 names NOTIMP for a
    # server that does not support UPDATE (NSD REFUSED/NOTIMP, Knot NOTAUTH,
    # which RFC 2136 reserves for zones the server is not authoritative for).
    "opcode-notify": "NOTIMP",
    "opcode-update": "NOTIMP",
    # IXFR over UDP with the client's SOA: RFC 1995 section 2 asks for the
    # SOA alone when the client is up to date, else a TC answer that sends
    # it to TCP: NOERROR either way.  NSD 4.6 refuses (it serves no IXFR
    # over UDP), Knot answers NOTAUTH (the test zone allows no transfer).
    "ixfr-udp": "NOERROR",
    # TYPE 0 (reserved, RFC 6895 3.1): looked up like any unknown type
    # (RFC 3597 section 2), NODATA, as NSD; Knot answers NOTIMP.
    "type-0": "NOERROR",
}

# Both references deviate from an explicit RFC requirement: apexd follows the RFC.
OVERRIDES = {
    # RFC 7873 5.2.2: a COOKIE option shorter than 8 bytes, 9 to 15, or
    # longer than 40 is malformed: FORMERR.  NSD 4.6 and Knot 3.2 ignore it.
    "cookie-5-bytes": "FORMERR",
    "cookie-41-bytes": "FORMERR",
}


def outcome(port, wire, transport):
    """'drop', 'closed' (TCP connection closed with no response) or the rcode name."""
    try:
        if transport == "udp":
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.settimeout(WAIT)
                s.sendto(wire, (client.LOOPBACK, port))
                data = s.recv(65535)
        else:
            with socket.create_connection((client.LOOPBACK, port), timeout=WAIT) as s:
                if transport == "tcp-zero":
                    # an empty message, then a good query on the same connection
                    good = dns.message.make_query("example.", "SOA").to_wire()
                    s.sendall(b"\x00\x00" + struct.pack("!H", len(good)) + good)
                else:
                    s.sendall(struct.pack("!H", len(wire)) + wire)
                    if transport == "tcp":
                        s.shutdown(socket.SHUT_WR)
                size = s.recv(2)
                if len(size) < 2:
                    return "closed"
                data = client.recv_exact(s, struct.unpack("!H", size)[0])
    except (socket.timeout, TimeoutError):
        return "drop"
    except (ConnectionError, OSError):
        return "closed"
    if len(data) < 12:
        return "short"
    rcode = data[3] & 0xF
    try:
        m = dns.message.from_wire(data)
        rcode = m.rcode()
    except Exception:
        pass
    return dns.rcode.to_text(rcode)


def outcomes(servers, wire, transport):
    """The outcome at every server, asked concurrently."""
    results = {}

    def ask(label, port):
        results[label] = outcome(port, wire, transport)

    threads = [threading.Thread(target=ask, args=(label, port)) for label, port in servers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    return results


def good_query_answered(port):
    r = client.Client(port)
    try:
        wire = r.exchange_udp(dns.message.make_query("example.", "SOA").to_wire())
    finally:
        r.close()
    return wire is not None and dns.message.from_wire(wire).rcode() == dns.rcode.NOERROR


def test_malformed_corpus(tld_servers):
    servers = [("apexd", tld_servers.candidate.port),
               ("nsd", tld_servers.references["nsd"].port),
               ("knot", tld_servers.references["knot"].port)]
    problems, table = [], []
    for case, wire, transport in CORPUS:
        got = outcomes(servers, wire, transport)
        table.append("%-28s apexd=%-9s nsd=%-9s knot=%s" % (case, got["apexd"], got["nsd"],
                                                            got["knot"]))
        if case in OVERRIDES:
            want = OVERRIDES[case]
        elif got["nsd"] == got["knot"]:
            want = got["nsd"]
        elif case in RFC_POLICY:
            want = RFC_POLICY[case]
        else:
            problems.append("%s: NSD (%s) and Knot (%s) disagree and no RFC policy is set" % (
                case, got["nsd"], got["knot"]))
            continue
        if got["apexd"] != want:
            problems.append("%s: apexd %s, expected %s (nsd %s, knot %s)" % (
                case, got["apexd"], want, got["nsd"], got["knot"]))
        if not good_query_answered(tld_servers.candidate.port):
            problems.append("%s: apexd stopped answering good queries" % case)
            break
    print("\n".join(table))
    assert tld_servers.candidate.alive(), "apexd exited"
    assert not problems, "\n".join(problems) + "\n\n" + "\n".join(table)


def test_good_queries_answered_during_a_malformed_flood(tld_servers):
    """The whole corpus sent 20 times over UDP as fast as possible while
    good queries are asked: every good query is answered."""
    port = tld_servers.candidate.port
    stop = time.monotonic() + 10
    udp_cases = [w for _, w, t in CORPUS if t == "udp"]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as flood:
        answered = 0
        for round_ in range(20):
            for wire in udp_cases:
                flood.sendto(wire, (client.LOOPBACK, port))
            if good_query_answered(port):
                answered += 1
            if time.monotonic() > stop:
                break
    assert answered == round_ + 1
    assert tld_servers.candidate.alive()


def flags_of(port, wire):
    """The response's ID and flags, or None if none came."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(WAIT)
        s.sendto(wire, (client.LOOPBACK, port))
        try:
            data = s.recv(65535)
        except (socket.timeout, TimeoutError):
            return None
    return struct.unpack("!HH", data[:4])


@pytest.mark.parametrize("opcode", [1, 2, 3, 5, 6, 15])
def test_unknown_opcode_notimp_copies_no_query_flag(tld_servers, opcode):
    """An opcode apex does not implement: NOTIMP with the ID and the opcode
    copied and QR set, and no other flag of the query: RD and CD belong to
    a QUERY (RFC 1035 4.1.1, RFC 4035 3.2.2), and BIND 9 clears them."""
    rd, cd = 0x0100, 0x0010
    qid = 0x5a17
    wire = header(qid=qid, flags=(opcode << 11) | rd | cd) + question()
    got = flags_of(tld_servers.candidate.port, wire)
    assert got is not None, "no answer to opcode %d" % opcode
    assert got == (qid, 0x8000 | (opcode << 11) | dns.rcode.NOTIMP), (
        "opcode %d: flags 0x%04x" % (opcode, got[1]))
    # a QUERY is still answered with RD and CD copied (RFC 1035, RFC 4035)
    got = flags_of(tld_servers.candidate.port, header(qid=qid, flags=rd | cd) + question())
    assert got is not None and got[1] & (rd | cd) == rd | cd
