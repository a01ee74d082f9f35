#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""apexd killed with SIGKILL at random moments of IXFRs and reloads.

One command: crash_runs.py [--runs N] [--seed S]

apexd serves two zones: secret.test. as the secondary of Knot DNS (IXFR
in, its copy written, its journal bounded to 4096 bytes so that its
oldest entries are dropped every few transfers) and reload.test. from a
file of its own (reloaded by `apexctl reload`, its diffs journaled).
Each run changes both at once, NOTIFYs apexd and asks for the reload,
waits a random time within 2.5 times what the two take together
(the median of five unkilled changes; --window-ms sets it), kills
apexd with SIGKILL, starts it again and checks:

  * each zone is served at a serial that existed, every sampled name as
    that version has it (never a mix): secret.test. at the serial
    before the run or the run's, reload.test. at the file's;
  * secret.test.'s journal opens (a torn entry cut, never the whole
    journal dropped) and, once apexd has caught up with the primary, an
    IXFR from two serials back is answered from it;
  * apexd catches up with the primary.

It prints a table: where the kills fell (what the killed process had
logged), what the restarts found and served, and each failure by kind.
The exit status is 1 when any run failed.  tests/system/test_crash.py
runs it with a few dozen runs (test_crash_runs); doc/reliability.md has
the figures of a long run.  Needs knotd/knotc and dnspython; apexd and
apexctl from APEX_BUILDDIR (default: this source tree).
"""

import argparse
import collections
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.abspath(os.path.join(HERE, "..", ".."))
os.environ.setdefault("APEX_BUILDDIR", SRCDIR)
sys.path.insert(0, os.path.join(SRCDIR, "tests", "system"))

import dns.name  # noqa: E402
import dns.rcode  # noqa: E402
import dns.rdatatype  # noqa: E402

import servers  # noqa: E402
import test_crash as C  # noqa: E402
from test_secondary import (KEY_NAME, KEYRING, ORIGIN, KnotPrimary, SecondaryApexd,  # noqa: E402
                            notify, query, serial_of)

RELOADED = "reload.test."
NAMES = 1500  # records of reload.test. besides the ones that change


def reload_text(serial):
    """reload.test. at serial: a TXT that names it, four names that move."""
    lines = ["$ORIGIN %s" % RELOADED, "$TTL 300",
             "@ IN SOA ns1 hostmaster %d 3600 600 86400 60" % serial, "@ IN NS ns1",
             "ns1 IN A 192.0.2.1", 'v IN TXT "serial %d"' % serial]
    lines += ["m%d IN A 192.0.2.%d" % (k, k % 250 + 1) for k in range(serial - 3, serial + 1)
              if k > 0]
    lines += ["n%04d IN A 198.51.100.%d" % (i, i % 250 + 1) for i in range(NAMES)]
    return "\n".join(lines) + "\n"


def reload_differs(port, serial):
    """Why reload.test. is not served exactly as at serial, or None."""
    origin = dns.name.from_text(RELOADED)
    r = query(port, origin, dns.rdatatype.SOA)
    if r.rcode() != dns.rcode.NOERROR or not r.answer or r.answer[0][0].serial != serial:
        return "SOA: %s" % r
    r = query(port, dns.name.from_text("v", origin), dns.rdatatype.TXT)
    if not r.answer or list(r.answer[0][0].strings) != [b"serial %d" % serial]:
        return "v TXT: %s" % r
    for k in range(max(1, serial - 5), serial + 2):
        r = query(port, dns.name.from_text("m%d" % k, origin), dns.rdatatype.A)
        present = serial - 3 <= k <= serial
        if (r.rcode() == dns.rcode.NOERROR and bool(r.answer)) != present:
            return "m%d: %s" % (k, r)
    return None


class Apexd(SecondaryApexd):
    """The SecondaryApexd of the tests with reload.test. from its own file."""

    def __init__(self, workdir, primary_port):
        super().__init__(workdir, ["127.0.0.1@%d %s" % (primary_port, KEY_NAME)],
                         port=servers.free_port(), provide="127.0.0.0/8 %s" % KEY_NAME)
        self.extra_server = ["    journal-size: 4096"]
        self.reload_file = os.path.join(workdir, "reload.test.zone")

    def command(self):
        cmd = super().command()
        with open(os.path.join(self.workdir, "apex.conf"), "a") as f:
            f.write("zone:\n    name: \"%s\"\n    file: \"%s\"\n    provide-xfr: 127.0.0.0/8 %s\n"
                    % (RELOADED, self.reload_file, KEY_NAME))
        return cmd


def apexctl(apex, *args):
    return subprocess.Popen([os.path.join(os.environ["APEX_BUILDDIR"], "apexctl"), "-s",
                             apex.socket] + list(args),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def write_reload(apex, serial):
    tmp = apex.reload_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(reload_text(serial))
    os.rename(tmp, apex.reload_file)


def wait_until(what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if what():
            return True
        time.sleep(0.01)
    return False


class Runs:
    def __init__(self, workdir, seed=None, window=None):
        self.rng = random.Random(seed)
        self.outcomes = collections.Counter()
        self.failures = []  # (run, kind, detail)
        d = os.path.join(workdir, "knot")
        os.makedirs(d)
        self.path = os.path.join(d, "secret.test.zone")
        with open(self.path, "w") as f:
            f.write(C.text_of(1))
        self.primary = KnotPrimary(d, [(ORIGIN, self.path)]).start()
        self.apex = Apexd(os.path.join(workdir, "apexd"), self.primary.port)
        os.makedirs(self.apex.workdir, exist_ok=True)
        self.serial = self.reload_serial = 1
        write_reload(self.apex, 1)
        self.apex.start()
        self.window = 0.0
        self.fixed_window = window  # seconds, or None: measured

    def prepare(self):
        """Both zones one serial on, apexd not yet told."""
        self.serial += 1
        self.reload_serial += 1
        C.change_primary(self.primary, self.path, self.serial)
        write_reload(self.apex, self.reload_serial)

    def trigger(self):
        """The NOTIFY and the reload: returns the apexctl under way."""
        notify(self.apex.port, ORIGIN, KEYRING, KEY_NAME)
        return apexctl(self.apex, "reload", RELOADED)

    def warm_up(self):
        """A few changes unkilled: the journals fill, the window is measured."""
        if not wait_until(lambda: serial_of(self.apex.port) == 1):
            raise RuntimeError("apexd did not transfer serial 1:\n" + self.apex.log_tail())
        took = []
        for _ in range(5):
            self.prepare()
            start = time.monotonic()
            reload = self.trigger()
            C.wait_line(self.apex, "IXFR serial %d" % self.serial)
            reload.wait(30)
            took.append(time.monotonic() - start)
        self.window = self.fixed_window or statistics.median(took) * 2.5

    def fail(self, run, kind, detail):
        self.outcomes["FAILED: " + kind] += 1
        self.failures.append((run, kind, str(detail)[-2000:]))

    def one(self, run):
        self.prepare()
        apex, serial = self.apex, self.serial
        reload = self.trigger()
        time.sleep(self.rng.uniform(0, self.window))
        apex.proc.send_signal(signal.SIGKILL)
        apex.proc.wait(10)
        apex.log.close()
        reload.wait(30)
        killed_log = apex.log_tail(60)
        self.outcomes["kill: after the IXFR's copy" if "IXFR serial %d" % serial in killed_log
                      else "kill: before the IXFR was whole on disk"] += 1
        reloaded = any("zone %s loaded" % RELOADED in line and "serial %d," % serial in line
                       for line in killed_log.splitlines())
        self.outcomes["kill: after the reload" if reloaded
                      else "kill: before the reload was published"] += 1
        self.outcomes["found: a copy's temporary file" if os.path.exists(apex.copy + ".xfr")
                      else "found: no temporary file"] += 1

        try:
            apex.start()
        except RuntimeError as e:
            return self.fail(run, "no restart", e)
        log = apex.log_tail(400)
        try:
            served = C.assert_serves_exactly(apex.port, [serial - 1, serial])
        except AssertionError as e:
            return self.fail(run, "secondary zone: a mix or a serial that never was", e)
        self.outcomes["restart served: the serial before" if served < serial
                      else "restart served: the run's serial"] += 1
        why = reload_differs(apex.port, self.reload_serial)
        if why is not None:
            return self.fail(run, "reloaded zone: not the file's version", why)
        if "journal %s.jnl opened" % apex.copy not in log or "no journal" in log:
            return self.fail(run, "journal not opened", log)
        if "damaged bytes at its end dropped" in log:
            self.outcomes["journal: a torn tail cut"] += 1
        if "journal replayed" in log:
            self.outcomes["journal: replayed at start"] += 1
        if served < serial:
            notify(apex.port, ORIGIN, KEYRING, KEY_NAME)
            if not wait_until(lambda: "IXFR serial %d" % serial in apex.log_tail(200)):
                return self.fail(run, "no catch-up with the primary", apex.log_tail(40))
        try:
            C.assert_serves_exactly(apex.port, [serial])
        except AssertionError as e:
            return self.fail(run, "after the catch-up", e)
        try:
            C.assert_incremental(apex.port, serial - 2, serial)
        except AssertionError as e:
            return self.fail(run, "IXFR not answered from the journal", e)
        self.outcomes["run passed"] += 1

    def stop(self):
        if self.apex.proc is not None and self.apex.proc.poll() is None:
            self.apex.stop()
        self.primary.stop()


def table(outcomes, runs, seconds):
    lines = ["%-52s %6s" % ("crash runs: %d (%.0f s)" % (runs, seconds), "count")]
    for key in sorted(outcomes):
        lines.append("%-52s %6d" % (key, outcomes[key]))
    return "\n".join(lines)


def run(runs, seed=None, workdir=None, budget=None, out=sys.stdout, window=None):
    """runs runs (fewer if budget seconds pass), killed within window
    seconds (None: measured); returns (outcomes, failures, done)."""
    own = workdir is None
    workdir = workdir or tempfile.mkdtemp(prefix="apex-crash-runs-")
    r = Runs(workdir, seed, window)
    started, done = time.monotonic(), 0
    try:
        r.warm_up()
        print("window %.0f ms" % (r.window * 1000), file=out, flush=True)
        for i in range(runs):
            if budget is not None and time.monotonic() - started > budget:
                break
            try:
                r.one(i)
            except Exception as e:  # a query timed out, a file missing: a failure too
                r.fail(i, "no answer or an error (%s)" % type(e).__name__,
                       traceback.format_exc())
            done += 1
            if r.apex.proc is None or r.apex.proc.poll() is not None:
                r.apex.start()  # a failed check left it down
            if (i + 1) % 50 == 0:
                print("%d runs, %d failed" % (i + 1, len(r.failures)), file=out, flush=True)
    finally:
        r.stop()
    print(table(r.outcomes, done, time.monotonic() - started), file=out)
    for run_, kind, detail in r.failures[:5]:
        print("run %d: %s\n%s" % (run_, kind, detail), file=out)
    if own and not r.failures:
        shutil.rmtree(workdir, ignore_errors=True)
    return r.outcomes, r.failures, done


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--seed", default=None)
    ap.add_argument("--window-ms", type=float, default=None,
                    help="kill within this many ms of the NOTIFY (default: measured)")
    args = ap.parse_args()
    if shutil.which("knotd") is None and not os.path.exists("/usr/sbin/knotd"):
        sys.exit("crash_runs.py: knotd is not installed")
    window = args.window_ms / 1000 if args.window_ms else None
    _, failures, _ = run(args.runs, args.seed, window=window)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
