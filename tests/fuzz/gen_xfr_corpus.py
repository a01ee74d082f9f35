#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate the seed corpus of fuzz_xfr_in: tests/fuzz/corpus/xfr_in/.

Each seed is one byte (0: AXFR request, 1: IXFR from serial 3) and the
response messages, each after a two-byte length as on TCP, made with
dnspython: whole zones in one and in several messages, with compression
and with records outside the zone; IXFR change sets, the up-to-date
answer and an IXFR answered with the whole zone; and broken streams
(closing SOA with another serial, a message after the end, a cut record,
an error RCODE).

The output is deterministic. Run from the source tree:
python3 tests/fuzz/gen_xfr_corpus.py
"""
import hashlib
import os
import struct

import dns.message
import dns.name
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rrset

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "xfr_in")
ZONE = dns.name.from_text("example.")


def soa(serial):
    return dns.rrset.from_text(ZONE, 3600, "IN", "SOA",
                               "ns1.example. host.example. %d 7200 3600 1209600 300" % serial)


def rr(owner, rdtype, *rdatas, ttl=3600):
    return dns.rrset.from_text(owner, ttl, "IN", rdtype, *rdatas)


def message(qtype, rrsets, first=True, rcode=0, qid=0x4242):
    q = dns.message.make_query(ZONE, qtype)
    q.id = qid
    r = dns.message.make_response(q)
    r.flags |= 0x0400  # AA
    r.set_rcode(rcode)
    if not first:
        r.question = []
    for s in rrsets:
        r.answer.append(s)
    return r.to_wire()


def stream(ixfr, *messages, cut=0):
    out = bytes([1 if ixfr else 0])
    for m in messages:
        if cut:
            m = m[:-cut]
        out += struct.pack("!H", len(m)) + m
    return out


def main():
    ns = rr("example.", "NS", "ns1.example.", "ns2.example.")
    glue = rr("ns1.example.", "A", "192.0.2.1")
    mx = rr("example.", "MX", "10 mail.example.")
    www = rr("www.example.", "A", "192.0.2.10", "192.0.2.11")
    txt = rr("t.example.", "TXT", '"hello world"')
    deleg = rr("sub.example.", "NS", "ns.sub.example.")
    outside = rr("www.example.org.", "A", "192.0.2.99")
    cname = rr("alias.example.", "CNAME", "www.example.")
    # the types a signed TLD is made of, which the copy's writer
    # (lib/xfr/record_text.c) writes without ldns
    signed = [
        rr("ns1.example.", "AAAA", "2001:db8::1"),
        rr("sub.example.", "DS", "12345 13 2 " + "ab" * 32),
        rr("example.", "RRSIG", "SOA 13 1 3600 20351231000000 20250101000000 40731 example. "
           "EhvkALM8CdlJvjk74o92pTEDr5o4AxNcmOKcSyt53LM4h9FYClF6igvf"),
        rr("example.", "NSEC", "alias.example. NS SOA RRSIG NSEC DNSKEY TYPE65000"),
        rr("0p9mhaveqvm6t7vbl5lop2u3t2rp3tom.example.", "NSEC3",
           "1 1 0 aabb 2vptu5timamqttgl4luu9kg21e0aor3s A RRSIG"),
        rr("dn.example.", "DNAME", "target.example."),
        rr("1.2.0.192.example.", "PTR", "www.example."),
    ]
    seeds = [
        stream(False, message("AXFR", [soa(5)] + signed + [soa(5)])),
        stream(True, message("IXFR", [soa(5), soa(3)] + signed[:3] + [soa(5)] + signed[3:] +
                             [soa(5)])),
        stream(False, message("AXFR", [soa(5), ns, glue, mx, www, txt, soa(5)])),
        stream(False, message("AXFR", [soa(5), ns, glue]),
               message("AXFR", [mx, www, outside], first=False),
               message("AXFR", [deleg, cname, soa(5)], first=False)),
        stream(False, message("AXFR", [soa(5), soa(5)])),
        stream(True, message("IXFR", [soa(5), soa(3), www, soa(4), txt,
                                      soa(4), txt, soa(5), cname, soa(5)])),
        stream(True, message("IXFR", [soa(5), soa(3), www]),
               message("IXFR", [soa(5), txt, soa(5)], first=False)),
        stream(True, message("IXFR", [soa(3)])),
        stream(True, message("IXFR", [soa(5), ns, glue, www, soa(5)])),
        # broken
        stream(False, message("AXFR", [soa(5), ns, soa(6)])),
        stream(False, message("AXFR", [soa(5), soa(5)]), message("AXFR", [ns], first=False)),
        stream(False, message("AXFR", [soa(5), ns, www, soa(5)]), cut=3),
        stream(False, message("AXFR", [], rcode=dns.rcode.NOTAUTH)),
        stream(True, message("IXFR", [], rcode=dns.rcode.NOTIMP)),
        stream(True, message("IXFR", [soa(5), soa(3), soa(4), soa(7)])),
    ]
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))
    for s in seeds:
        name = hashlib.sha1(s).hexdigest()
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(s)
    print("%d seeds in %s" % (len(seeds), OUT))


if __name__ == "__main__":
    main()
