# SPDX-License-Identifier: BSD-3-Clause
"""What the soak put in each zone at each serial, so that any answer can
be checked against the serial it names.

A zone starts at its file's serial (base) with none of the soak's names.
Each serial k the soak makes (through the primary, or the zone file)
holds a marker, soak-marker.<origin> TXT "serial k", and NAMES names
soak-k-i.<origin> TXT "soak k i"; the names and marker of the serial
before are gone.  So at serial S a name soak-k-i exists only if k == S.
"""

import re
import threading

NAMES = 4
MARKER = "soak-marker"
NAME_RE = re.compile(r"^soak-(\d+)-(\d+)\.")


def fqdn(label, origin):
    return label + "." + (origin if origin != "." else "")


class ZoneHistory:
    def __init__(self, origin, base_serial):
        self.origin = origin
        self.base = base_serial
        self.made = {base_serial}
        self.last = base_serial
        self.lock = threading.Lock()

    def next_serial(self):
        """The next serial, registered as made before it is published (an
        answer may name it as soon as the primary commits it)."""
        with self.lock:
            self.last = (self.last + 1) & 0xFFFFFFFF
            self.made.add(self.last)
            return self.last

    def forget(self, serial):
        """A serial that failed to be made."""
        with self.lock:
            self.made.discard(serial)
            self.last = (serial - 1) & 0xFFFFFFFF

    def latest(self):
        with self.lock:
            return self.last

    def known(self, serial):
        with self.lock:
            return serial in self.made

    def records(self, serial):
        """[(owner, ttl, type, rdata)] the soak added at serial."""
        if serial == self.base:
            return []
        out = [(fqdn(MARKER, self.origin), 3600, "TXT", '"serial %d"' % serial)]
        out += [(fqdn("soak-%d-%d" % (serial, i), self.origin), 3600, "TXT",
                 '"soak %d %d"' % (serial, i)) for i in range(NAMES)]
        return out

    def expected_txt(self, qname, serial):
        """The TXT string qname holds at serial, or None if it does not exist."""
        qname = qname.lower()
        if qname == fqdn(MARKER, self.origin):
            return None if serial == self.base else "serial %d" % serial
        m = NAME_RE.match(qname)
        if m and serial != self.base and int(m.group(1)) == serial and \
                int(m.group(2)) < NAMES:
            return "soak %s %s" % (m.group(1), m.group(2))
        return None

    def sample_names(self, rng):
        """Names worth asking now: the marker, and a name of the latest
        serial or of one of the two before it."""
        k = self.latest() - rng.choice([0, 0, 1, 2])
        return [fqdn(MARKER, self.origin),
                fqdn("soak-%d-%d" % (max(k, 0), rng.randrange(NAMES)), self.origin)]
