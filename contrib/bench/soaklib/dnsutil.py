# SPDX-License-Identifier: BSD-3-Clause
"""DNS on loopback for the soak's probes: queries with the ZONEVERSION
option (RFC 9660), so that every answer names the serial it came from."""

import socket
import struct

import dns.edns
import dns.exception
import dns.flags
import dns.message
import dns.rdatatype

LOOPBACK = "127.0.0.1"
ZONEVERSION = 19


def query(qname, rdtype, zoneversion=True):
    q = dns.message.make_query(qname, rdtype, use_edns=0, payload=1232)
    q.flags &= ~dns.flags.RD
    if zoneversion:
        q.use_edns(0, 0, 1232, options=[dns.edns.GenericOption(ZONEVERSION, b"")])
    return q


def udp(port, q, timeout=1.0):
    """The answer to q from 127.0.0.1:port, or None after timeout."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(timeout)
        try:
            s.sendto(q.to_wire(), (LOOPBACK, port))
            while True:
                data = s.recv(65535)
                r = dns.message.from_wire(data)
                if r.id == q.id:
                    return r
        except (OSError, dns.exception.DNSException):
            return None


def zone_version(r):
    """(label count, serial) of the answer's ZONEVERSION option, or None."""
    for opt in r.options:
        if opt.otype == ZONEVERSION:
            data = opt.to_wire() if hasattr(opt, "to_wire") else opt.data
            if len(data) == 6 and data[1] == 0:
                return data[0], struct.unpack("!I", data[2:6])[0]
    return None


def txt_of(r, qname):
    for rrset in r.answer:
        if rrset.rdtype == dns.rdatatype.TXT and rrset.name.to_text().lower() == qname.lower():
            return [b"".join(rd.strings).decode("ascii", "replace") for rd in rrset]
    return None


def soa_serial(port, origin, timeout=1.0):
    r = udp(port, query(origin, dns.rdatatype.SOA, zoneversion=False), timeout)
    if r is None:
        return None
    for rrset in r.answer:
        if rrset.rdtype == dns.rdatatype.SOA:
            return rrset[0].serial
    return None


def tcp_connect(port, timeout=2.0):
    s = socket.create_connection((LOOPBACK, port), timeout=timeout)
    return s


def framed(q):
    wire = q.to_wire()
    return struct.pack("!H", len(wire)) + wire
