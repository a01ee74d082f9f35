# SPDX-License-Identifier: BSD-3-Clause
"""TLS for the system tests: certificates made with the openssl command at
test time, and a DNS-over-TLS client that pipelines (RFC 7858, RFC 7766).

The client drives the TLS session over memory BIOs (ssl.SSLObject) on a
non-blocking socket, so a test decides exactly what goes on the wire: how
many DNS messages one TLS record carries (one SSLObject.write() is one
record up to 16 KiB), a message split over two records, half a ClientHello.
Every wait is bounded by a deadline.
"""

import os
import select
import shutil
import socket
import ssl
import struct
import subprocess
import time

import dns.message
import dns.xfr
import dns.zone

LOOPBACK = "127.0.0.1"
SERVER_NAME = "primary.example"
SECONDARY_NAME = "secondary.example"


# ---------------------------------------------------------------- certificates

def openssl(*args, cwd):
    """Run the openssl command (it must be there: contrib/test-all.sh
    installs it), failing with its output."""
    path = shutil.which("openssl")
    assert path is not None, "the openssl command is needed for the TLS tests"
    r = subprocess.run([path] + list(args), cwd=cwd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, "openssl %s: %s%s" % (" ".join(args), r.stdout, r.stderr)
    return r.stdout


def make_ca(d, name):
    """A CA: name.key and name.pem in d (EC P-256, self-signed)."""
    openssl("req", "-x509", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-nodes", "-keyout", name + ".key", "-out", name + ".pem", "-days", "30",
            "-subj", "/CN=%s" % name,
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d)
    return os.path.join(d, name + ".pem")


def make_cert(d, ca, host, serial, out=None):
    """A certificate for host issued by the CA ca (make_ca()'s name):
    out.key and out.pem in d (out defaults to host), EC P-256, the
    subjectAltName DNS:host, usable by a server and a client.  Returns
    (pem, key) as paths."""
    out = out or host
    ext = os.path.join(d, out + ".ext")
    with open(ext, "w") as f:
        f.write("basicConstraints=CA:FALSE\n"
                "keyUsage=critical,digitalSignature\n"
                "extendedKeyUsage=serverAuth,clientAuth\n"
                "subjectAltName=DNS:%s\n" % host)
    openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", out + ".key", "-out", out + ".csr", "-subj", "/CN=%s" % host, cwd=d)
    openssl("x509", "-req", "-in", out + ".csr", "-CA", ca + ".pem", "-CAkey", ca + ".key",
            "-set_serial", str(serial), "-days", "30", "-extfile", ext, "-out", out + ".pem",
            cwd=d)
    return os.path.join(d, out + ".pem"), os.path.join(d, out + ".key")


class Certs:
    """The certificates of the TLS tests, in d: the CA "ca" and another,
    "otherca"; the server's (primary.example, from ca); clients'
    certificates secondary.example from ca, secondary.example from otherca
    (other-ca-client) and wrong.example from ca."""

    def __init__(self, d):
        os.makedirs(d, exist_ok=True)
        self.dir = d
        self.ca = make_ca(d, "ca")
        self.other_ca = make_ca(d, "otherca")
        self.server, self.server_key = make_cert(d, "ca", SERVER_NAME, 1001)
        self.client, self.client_key = make_cert(d, "ca", SECONDARY_NAME, 1002)
        self.other_client, self.other_client_key = make_cert(
            d, "otherca", SECONDARY_NAME, 1003, out="other-ca-client")
        self.wrong_client, self.wrong_client_key = make_cert(d, "ca", "wrong.example", 1004)

    def context(self, cert=None, key=None):
        """A client context trusting the CA, checking the server's name,
        with a client certificate when given."""
        return client_context(self.ca, cert, key)


def client_context(ca, cert=None, key=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_verify_locations(ca)
    ctx.check_hostname = True
    if cert is not None:
        ctx.load_cert_chain(cert, key)
    return ctx


# ---------------------------------------------------------------- the client

def wait_io(sock, read, write, timeout):
    """Wait up to timeout seconds for sock to be readable (if read) or
    writable (if write): (readable, writable).  poll(), not select(): the
    test process may hold descriptors beyond select()'s 1024."""
    p = select.poll()
    p.register(sock, (select.POLLIN if read else 0) | (select.POLLOUT if write else 0))
    events = 0
    for _, ev in p.poll(max(0.0, timeout) * 1000):
        events |= ev
    readable = bool(events & (select.POLLIN | select.POLLHUP | select.POLLERR))
    writable = bool(events & (select.POLLOUT | select.POLLHUP | select.POLLERR))
    return readable, writable


def frame(wire):
    return struct.pack("!H", len(wire)) + wire


class Closed(Exception):
    """The server closed the connection (a TCP FIN or reset, or
    close_notify); .alert holds the TLS error that came with it, if any."""

    def __init__(self, what, alert=None):
        super().__init__(what)
        self.alert = alert


class Dot:
    """One connection to a DNS-over-TLS server on 127.0.0.1:port."""

    def __init__(self, port, ctx, server_name=SERVER_NAME, timeout=10.0, session=None):
        self.timeout = timeout
        self.sock = socket.create_connection((LOOPBACK, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)
        self.incoming = ssl.MemoryBIO()
        self.outgoing = ssl.MemoryBIO()
        self.tls = ctx.wrap_bio(self.incoming, self.outgoing, server_hostname=server_name,
                                session=session)
        self.plain = b""  # plaintext received, not yet taken as messages
        self.eof = False
        self.handshake()

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- raw I/O

    def _deadline(self, timeout):
        return time.monotonic() + (self.timeout if timeout is None else timeout)

    def _send_out(self, deadline):
        """Send all the ciphertext the session has produced."""
        data = self.outgoing.read()
        while data:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the server does not read")
            wait_io(self.sock, False, True, left)
            try:
                n = self.sock.send(data)
            except BlockingIOError:
                continue
            data = data[n:]

    def _receive(self, deadline):
        """Wait for ciphertext (until deadline) and feed it to the session;
        False when the server closed."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("nothing from the server")
        r, _ = wait_io(self.sock, True, False, left)
        if not r:
            raise TimeoutError("nothing from the server")
        try:
            data = self.sock.recv(65536)
        except BlockingIOError:
            return True
        except ConnectionResetError:
            data = b""
        if not data:
            self.eof = True
            self.incoming.write_eof()
            return False
        self.incoming.write(data)
        return True

    def handshake(self, timeout=None):
        """The handshake, until timeout; Closed if the server ends it."""
        deadline = self._deadline(timeout)
        while True:
            try:
                self.tls.do_handshake()
                self._send_out(deadline)
                return
            except ssl.SSLWantReadError:
                self._send_out(deadline)
                self._receive(deadline)
            except ssl.SSLError as e:
                raise Closed("the handshake failed: %s" % e, e) from e

    def peer_cert(self):
        return self.tls.getpeercert(binary_form=True)

    def write(self, data, deadline=None):
        """data encrypted as one TLS record (up to 16 KiB: more is split)
        and sent."""
        self.tls.write(data)
        self._send_out(deadline or self._deadline(None))

    def _read_plain(self):
        """The plaintext of the records received so far."""
        while True:
            try:
                chunk = self.tls.read(65536)
            except ssl.SSLWantReadError:
                return
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                self.eof = True  # close_notify, or the connection closed without it
                return
            except ssl.SSLError as e:
                raise Closed("TLS error from the server: %s" % e, e) from e
            if not chunk:
                return
            self.plain += chunk

    def _take_message(self):
        if len(self.plain) < 2:
            return None
        (size,) = struct.unpack("!H", self.plain[:2])
        if len(self.plain) < 2 + size:
            return None
        wire, self.plain = self.plain[2:2 + size], self.plain[2 + size:]
        return wire

    def read_message(self, timeout=None):
        """The next DNS message (wire form), waiting until timeout."""
        deadline = self._deadline(timeout)
        while True:
            self._read_plain()
            wire = self._take_message()
            if wire is not None:
                return wire
            if self.eof:
                raise Closed("closed by the server")
            self._receive(deadline)

    def alert_and_close(self, timeout):
        """Wait (at most timeout seconds) for the server to end the session:
        the TLS alert it sent (an ssl.SSLError), or None when it closed
        without one; TimeoutError if it did neither."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._read_plain()
            except Closed as e:
                return e.alert
            if self.eof:
                return None
            self._receive(deadline)

    def closed_by_server(self, timeout):
        """Whether the server closes the connection within timeout seconds
        (reading whatever it sends meanwhile)."""
        deadline = time.monotonic() + timeout
        while not self.eof:
            try:
                self._receive(deadline)
            except TimeoutError:
                return False
            try:
                self._read_plain()
            except Closed:
                pass
        return True

    # -- DNS

    def exchange(self, wire, timeout=None):
        self.write(frame(wire))
        return self.read_message(timeout)

    def pipeline(self, wires, per_record=20, timeout=60.0):
        """Send every message in wires, per_record framed messages in each
        TLS record (the last message of every other record split over two
        records), reading answers while sending; return the answers in
        the order they came."""
        deadline = time.monotonic() + timeout
        stream = b"".join(frame(w) for w in wires)
        starts = [0]  # where each framed message starts in the stream, and its end
        for w in wires:
            starts.append(starts[-1] + 2 + len(w))
        records = []
        pos = k = 0  # k: the first message not yet wholly in a record
        while pos < len(stream):
            k = min(k + per_record, len(wires))
            end = starts[k]
            if len(records) % 2 == 1 and k < len(wires):
                end += 3  # message k begins here and ends in the next record
                k += 1
            records.append(stream[pos:end])
            pos = end
        self.records_sent = len(records)
        answers = []
        pending = b""
        while len(answers) < len(wires):
            if time.monotonic() > deadline:
                raise TimeoutError("%d of %d answers" % (len(answers), len(wires)))
            if not pending and records and self.outgoing.pending == 0:
                self.tls.write(records.pop(0))
                pending = self.outgoing.read()
            r, w = wait_io(self.sock, True, bool(pending), deadline - time.monotonic())
            if w:
                try:
                    sent = self.sock.send(pending)
                    pending = pending[sent:]
                except BlockingIOError:
                    pass
            if r:
                if not self._receive(deadline):
                    self._read_plain()
                    while (wire := self._take_message()) is not None:
                        answers.append(wire)
                    raise Closed("closed by the server after %d of %d answers"
                                 % (len(answers), len(wires)))
                self._read_plain()
                while (wire := self._take_message()) is not None:
                    answers.append(wire)
        return answers

    def xfr(self, query, origin, timeout=30.0, send=True):
        """A zone transfer over this connection: query (a dns.message with
        its TSIG, if any) sent, the answers read and checked with dnspython
        (TSIG, SOA at both ends) into a new zone.  Returns (the RCODE and
        the answer count of the first answer, from its header, and the
        zone, or None when the first answer's RCODE is not NOERROR: a
        refusal is not parsed further, it may carry a TSIG error).  send:
        False when the query went already (with others before it)."""
        deadline = time.monotonic() + timeout
        if send:
            self.write(frame(query.to_wire()))
        wire = self.read_message(timeout)
        rcode, ancount = wire[3] & 0x0F, struct.unpack("!H", wire[6:8])[0]
        if rcode != 0:
            return rcode, ancount, None
        zone = dns.zone.Zone(origin, relativize=False)
        rdtype = query.question[0].rdtype
        tsig_ctx = None
        with dns.xfr.Inbound(zone, rdtype, dns.xfr.extract_serial_from_query(query)) as inbound:
            while True:
                r = dns.message.from_wire(wire, keyring=query.keyring, request_mac=query.mac,
                                          xfr=True, origin=zone.from_wire_origin(),
                                          tsig_ctx=tsig_ctx,
                                          multi=True, one_rr_per_rrset=False)
                tsig_ctx = r.tsig_ctx
                if inbound.process_message(r):
                    break
                wire = self.read_message(max(deadline - time.monotonic(), 0.01))
        if query.keyring and not r.had_tsig:
            raise AssertionError("the transfer's last message has no TSIG")
        return rcode, ancount, zone


def half_client_hello(ctx, server_name=SERVER_NAME):
    """The first half of the ClientHello that ctx sends."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(incoming, outgoing, server_hostname=server_name)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    hello = outgoing.read()
    assert len(hello) > 100 and hello[0] == 0x16, hello[:8]  # a handshake record
    return hello[:len(hello) // 2]
