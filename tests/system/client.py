# SPDX-License-Identifier: BSD-3-Clause
"""A minimal DNS client for the system tests: the same query bytes go to
every server, over UDP or over one persistent TCP connection per server
(RFC 7766), with bounded timeouts."""

import socket
import struct

import dns.flags
import dns.message
import dns.rdatatype

LOOPBACK = "127.0.0.1"
UDP_TIMEOUT = 2.0
TCP_TIMEOUT = 5.0


def make_wire(query, qid):
    """Wire form of a querygen.Query with message ID qid."""
    m = dns.message.make_query(query.qname, query.qtype,
                               use_edns=False if query.edns is None else 0,
                               payload=query.edns or 512,
                               want_dnssec=query.do)
    m.id = qid
    m.flags = (dns.flags.RD if query.rd else 0) | (dns.flags.CD if query.cd else 0)
    return m.to_wire()


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("connection closed by the server")
        buf += chunk
    return buf


class Client:
    """Talks to one server on 127.0.0.1:port."""

    def __init__(self, port):
        self.port = port
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.connect((LOOPBACK, port))
        self.tcp = None

    def close(self):
        self.udp.close()
        if self.tcp is not None:
            self.tcp.close()
            self.tcp = None

    def exchange_udp(self, wire, tries=2):
        qid = wire[:2]
        for _ in range(tries):
            self.udp.send(wire)
            self.udp.settimeout(UDP_TIMEOUT)
            try:
                # Skip late answers to earlier (timed-out) queries.
                for _ in range(16):
                    data = self.udp.recv(65535)
                    if data[:2] == qid:
                        return data
            except socket.timeout:
                continue
            except ConnectionRefusedError:
                return None
        return None

    def _tcp_connect(self):
        s = socket.create_connection((LOOPBACK, self.port), timeout=TCP_TIMEOUT)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.tcp = s

    def exchange_tcp(self, wire):
        """One query on the persistent connection; reconnect once if the
        server closed it (idle timeout, connection limit)."""
        for attempt in range(2):
            try:
                if self.tcp is None:
                    self._tcp_connect()
                self.tcp.sendall(struct.pack("!H", len(wire)) + wire)
                (size,) = struct.unpack("!H", recv_exact(self.tcp, 2))
                return recv_exact(self.tcp, size)
            except socket.timeout:
                self.tcp.close()
                self.tcp = None
                return None
            except OSError:
                if self.tcp is not None:
                    self.tcp.close()
                    self.tcp = None
                if attempt == 1:
                    return None
        return None

    def exchange(self, wire, transport):
        if transport == "tcp":
            return self.exchange_tcp(wire)
        return self.exchange_udp(wire)
