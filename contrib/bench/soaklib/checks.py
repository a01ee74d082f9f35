# SPDX-License-Identifier: BSD-3-Clause
"""What the soak checks while it runs, and after.

  Sampler    every second, for each zone, the marker and a name of a
             recent serial asked with ZONEVERSION: the answer must name a
             serial the soak made, and hold what the soak put at that
             serial (content.py); the zone's NS RRset must be the file's
  GapProber  an SOA query of nu. every 10 ms over UDP: the longest time
             without an answer, per phase
  Resources  apexd's RSS and open descriptors every second
  log_lines  apexd's warning and error lines, each matched against the
             causes the soak knows of, or unexplained
"""

import random
import re
import socket
import threading
import time

import dns.rcode
import dns.rdatatype

from . import dnsutil


class Sampler:
    def __init__(self, port, histories, ns_sets):
        self.port = port
        self.histories = histories  # origin -> ZoneHistory
        self.ns_sets = ns_sets      # origin -> the NS targets of its file
        self.rng = random.Random(9660)
        self.checked = 0
        self.timeouts = 0
        self.wrong = []  # [(seconds since start, text)]
        self.t0 = time.monotonic()

    def fail(self, text):
        self.wrong.append((time.monotonic() - self.t0, text))

    def sample(self):
        for origin, h in self.histories.items():
            for qname in h.sample_names(self.rng):
                self.check_name(h, qname)
            self.check_ns(origin)

    def check_name(self, h, qname):
        r = dnsutil.udp(self.port, dnsutil.query(qname, dns.rdatatype.TXT), 1.0)
        if r is None:
            self.timeouts += 1
            return
        self.checked += 1
        zv = dnsutil.zone_version(r)
        if zv is None:
            return self.fail("%s TXT: no ZONEVERSION in a %s answer" % (
                qname, dns.rcode.to_text(r.rcode())))
        labels, serial = zv
        want_labels = len([x for x in h.origin.split(".") if x])
        if labels != want_labels or not h.known(serial):
            return self.fail("%s TXT: ZONEVERSION names serial %d (%d labels), never made" % (
                qname, serial, labels))
        expected = h.expected_txt(qname, serial)
        got = dnsutil.txt_of(r, qname)
        if expected is None:
            if r.rcode() != dns.rcode.NXDOMAIN or got:
                self.fail("%s TXT at serial %d: %s %s, expected NXDOMAIN" % (
                    qname, serial, dns.rcode.to_text(r.rcode()), got))
        elif r.rcode() != dns.rcode.NOERROR or got != [expected]:
            self.fail("%s TXT at serial %d: %s %s, expected %r" % (
                qname, serial, dns.rcode.to_text(r.rcode()), got, expected))

    def check_ns(self, origin):
        r = dnsutil.udp(self.port, dnsutil.query(origin, dns.rdatatype.NS, False), 1.0)
        if r is None:
            self.timeouts += 1
            return
        self.checked += 1
        got = sorted(rd.target.to_text().lower() for rrset in r.answer
                     if rrset.rdtype == dns.rdatatype.NS for rd in rrset)
        if r.rcode() != dns.rcode.NOERROR or got != self.ns_sets[origin]:
            self.fail("%s NS: %s %s, expected %s" % (origin, dns.rcode.to_text(r.rcode()), got,
                                                     self.ns_sets[origin]))


class GapProber(threading.Thread):
    """One SOA query at a time, every 10 ms; an answer's gap is the time
    since the answer before it."""

    def __init__(self, port, origin, stop):
        super().__init__(name="gap-prober", daemon=True)
        self.port = port
        self.wire_query = dnsutil.query(origin, dns.rdatatype.SOA, False)
        self.stop_event = stop
        self.phase = "baseline"
        self.longest = {}  # phase -> (gap seconds, seconds since start at its end)
        self.sent = {}
        self.answered = {}
        self.t0 = time.monotonic()

    def run(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(0.5)
        last = time.monotonic()
        qid = 0
        try:
            while not self.stop_event.is_set():
                phase = self.phase
                qid = (qid + 1) & 0xFFFF
                self.wire_query.id = qid
                self.sent[phase] = self.sent.get(phase, 0) + 1
                try:
                    s.sendto(self.wire_query.to_wire(), (dnsutil.LOOPBACK, self.port))
                    while True:
                        data = s.recv(65535)
                        if len(data) >= 2 and (data[0] << 8 | data[1]) == qid:
                            break
                except OSError:
                    continue  # lost: the gap grows until the next answer
                now = time.monotonic()
                self.answered[phase] = self.answered.get(phase, 0) + 1
                gap = now - last
                if gap > self.longest.get(phase, (0.0, 0.0))[0]:
                    self.longest[phase] = (gap, now - self.t0)
                last = now
                self.stop_event.wait(0.01)
        finally:
            s.close()


class Resources:
    """(seconds since start, phase, RSS bytes, descriptors), every second."""

    def __init__(self, apexd):
        self.apexd = apexd
        self.samples = []
        self.phase = "baseline"
        self.t0 = time.monotonic()

    def sample(self):
        rss, fds = self.apexd.rss_and_fds()
        self.samples.append((time.monotonic() - self.t0, self.phase, rss, fds))


def slope(points):
    """The least-squares slope of [(x, y)] (0 for fewer than two points)."""
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0


LOG_LINE = re.compile(r"^\S+ apexd (error|warning): (.*)$")

# Warnings and errors the soak causes on purpose: (pattern, cause).  None
# today: apexd closes the vanishing TCP clients (no answer read, half a
# message, a reset) without a warning, and every transfer, reload and
# reconfig the soak asks for is meant to succeed.  Anything at warning or
# error level that no pattern here explains fails the run.
EXPECTED = []


def log_lines(path):
    """([(level, text, cause)] explained, [(level, text)] unexplained)."""
    explained, unexplained = [], []
    with open(path, errors="replace") as f:
        for line in f:
            m = LOG_LINE.match(line.rstrip("\n"))
            if not m:
                continue
            level, text = m.groups()
            for pattern, cause in EXPECTED:
                if re.search(pattern, text):
                    explained.append((level, text, cause))
                    break
            else:
                unexplained.append((level, text))
    return explained, unexplained
