# SPDX-License-Identifier: BSD-3-Clause
"""A primary that resets the connection in the middle of an IXFR.

ResettingPrimary has secret.test. at serial 2 and answers the SOA query
with it; the first RESETS transfers (IXFR or AXFR) get the first message
of their answer and then a TCP reset (SO_LINGER 0), later ones the whole
answer.  apexd, its secondary with a copy at serial 1, must go on
serving serial 1 exactly (every sampled name as serial 1 has it, never
a part of the change), log why, try again at the SOA's retry interval
(1 s, the refresh an hour) and serve serial 2 exactly once the primary answers whole.
"""

import os
import socket
import struct
import threading
import time

import dns.flags
import dns.message
import dns.rdatatype
import dns.rrset
import dns.zone

from test_crash import assert_serves_exactly, records_of, text_of
from test_secondary import ORIGIN, SecondaryApexd, serial_of, wait_serial

RESETS = 3


class ResettingPrimary:
    def __init__(self, resets):
        self.resets = resets
        self.transfers = 0  # IXFR and AXFR asked for
        records_of(1), records_of(2)  # parsed now, not while apexd waits
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def stop(self):
        self.stopping.set()
        self.thread.join(10)
        self.sock.close()

    def serve(self):
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            conn.settimeout(5)
            try:
                self.answer(conn)
            except OSError:
                pass
            finally:
                conn.close()

    @staticmethod
    def send(conn, msg):
        wire = msg.to_wire(max_size=65535)
        conn.sendall(struct.pack("!H", len(wire)) + wire)

    @staticmethod
    def rrsets(serial, without=None):
        """The rrsets of the zone at serial (SOA first), less those of without."""
        soa = [rds for (name, rdtype), rds in records_of(serial).items()
               if rdtype == dns.rdatatype.SOA]
        out = [dns.rrset.from_rdata(dns.name.from_text(ORIGIN), soa[0].ttl, *soa[0])]
        for (name, rdtype), rds in sorted(records_of(serial).items()):
            if rdtype == dns.rdatatype.SOA:
                continue
            other = (without or {}).get((name, rdtype))
            rdatas = [rd for rd in rds if other is None or rd not in other]
            if rdatas:
                out.append(dns.rrset.from_rdata(name, rds.ttl, *rdatas))
        return out

    def answer(self, conn):
        size = struct.unpack("!H", conn.recv(2, socket.MSG_WAITALL))[0]
        q = dns.message.from_wire(conn.recv(size, socket.MSG_WAITALL))
        rdtype = q.question[0].rdtype
        if rdtype == dns.rdatatype.SOA:
            r = dns.message.make_response(q)
            r.flags |= dns.flags.AA
            r.answer.append(self.rrsets(2)[0])
            self.send(conn, r)
            return
        self.transfers += 1
        soa2 = self.rrsets(2)[0]
        if rdtype == dns.rdatatype.IXFR:
            removed = self.rrsets(1, without=records_of(2))
            added = self.rrsets(2, without=records_of(1))
            parts = [[soa2] + removed, added + [soa2]]  # removed: SOA 1 first, added: SOA 2
        else:
            body = self.rrsets(2)
            parts = [body[:len(body) // 2], body[len(body) // 2:] + [soa2]]
        for i, part in enumerate(parts):
            r = dns.message.make_response(q)
            r.flags |= dns.flags.AA
            r.answer.extend(part)
            self.send(conn, r)
            if i == 0 and self.transfers <= self.resets:
                time.sleep(0.2)  # the first message taken in
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return  # closed by the caller: a reset


def test_primary_resets_mid_ixfr(tmp_path):
    primary = ResettingPrimary(RESETS)
    d = str(tmp_path / "apexd")
    os.makedirs(d)
    apex = SecondaryApexd(d, ["127.0.0.1@%d NOKEY" % primary.port])
    # the copy at serial 1: refresh 3600 s, retry 1 s (zone_text's), so
    # that only the retry after a failure brings the next attempt soon
    with open(apex.copy, "w") as f:
        f.write(text_of(1))
    try:
        apex.start()
        deadline = time.monotonic() + 30
        while primary.transfers < RESETS:
            assert time.monotonic() < deadline, apex.log_tail(40)
            assert_serves_exactly(apex.port, [1])  # exactly serial 1 meanwhile
            time.sleep(0.05)
        wait_serial(apex.port, 2, apex)
        assert_serves_exactly(apex.port, [2])
        assert primary.transfers == RESETS + 1, (primary.transfers, apex.log_tail(40))
        log = apex.log_tail(200)
        assert log.count("Connection reset by peer (the previous version, if any, is still "
                         "served)") == RESETS, log
        assert serial_of(apex.port) == 2
    finally:
        apex.stop()
        primary.stop()
