# SPDX-License-Identifier: BSD-3-Clause
"""Zone reload under load, the control socket and apexctl.

apexd serves a zone, reload.test., that exists in two versions (A and B)
with different serials and different data everywhere: the SOA serial, a
TXT marker, a CNAME target, the address of an MX target (additional
section) and the addresses of a couple of thousand hosts.  While dnsperf
sends a bounded stream of queries over loopback, the zone is reloaded
again and again through `apexctl reload`; dnsperf must lose no query,
every sampled answer must come entirely from one version, and once
apexctl has returned the new serial must be served.

Environment:
  APEX_RELOAD_WORKERS   worker threads of apexd (default 4)
  APEX_RELOAD_QPS       dnsperf's query rate (default 4000)
  APEX_RELOAD_LOG_DIR   copy apexd's logs there (contrib/tsan-reload.sh
                        checks them for ThreadSanitizer reports)
"""

import json
import os
import random
import re
import shutil
import signal
import socket
import stat
import subprocess
import threading
import time

import dns.message
import dns.query
import dns.rcode
import dns.rdatatype
import dns.rrset
import pytest

import servers

T = dns.rdatatype
ORIGIN = "reload.test."
HOSTS = 2000
WORKERS = int(os.environ.get("APEX_RELOAD_WORKERS", "4"))
QPS = int(os.environ.get("APEX_RELOAD_QPS", "4000"))
APEXCTL_TIMEOUT = 120
VERSIONS = {"A": 2026010101, "B": 2026010202}

# Only the tests that put the server under load need dnsperf.
needs_dnsperf = pytest.mark.skipif(shutil.which("dnsperf") is None,
                                   reason="dnsperf is not installed (Debian package dnsperf)")


def zone_text(version, hosts=HOSTS):
    """The master file of one version; every datum tells its version."""
    n = 1 if version == "A" else 2
    v = version.lower()
    lines = [
        "$ORIGIN %s" % ORIGIN,
        "$TTL 300",
        "@ SOA ns1 hostmaster %d 3600 600 86400 300" % VERSIONS[version],
        "@ NS ns1",
        "ns1 A 192.0.2.53",
        'marker TXT "v%s"' % v,
        "alias CNAME target-%s" % v,
        'target-%s TXT "v%s"' % (v, v),
        "mx MX 10 mail",
        "mail A 192.0.2.%d" % n,
        "mail AAAA 2001:db8::%d" % n,
        "only-%s A 198.51.100.%d" % (v, n),
    ]
    for i in range(hosts):
        lines.append("host%d A 10.%d.%d.%d" % (i, n, i // 256, i % 256))
    return "\n".join(lines) + "\n"


def write_atomically(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def apexctl_path():
    builddir = os.environ.get("APEX_BUILDDIR") or os.environ.get("APEX_SRCDIR") or os.getcwd()
    return os.path.join(builddir, "apexctl")


def versions_in(response):
    """The set of versions the data of a response comes from."""
    seen = set()
    for section in (response.answer, response.authority, response.additional):
        for rrset in section:
            for rr in rrset:
                if rr.rdtype == T.SOA:
                    seen.add({v: k for k, v in VERSIONS.items()}.get(rr.serial, "?"))
                elif rr.rdtype == T.TXT:
                    seen.add(b"".join(rr.strings).decode()[1:].upper())
                elif rr.rdtype == T.CNAME:
                    seen.add(str(rr.target).split(".")[0].split("-")[1].upper())
                elif rr.rdtype == T.A and str(rrset.name).startswith("host"):
                    seen.add({"1": "A", "2": "B"}.get(rr.address.split(".")[1], "?"))
                elif rr.rdtype == T.A and str(rrset.name).startswith(("mail", "only-")):
                    seen.add({"1": "A", "2": "B"}.get(rr.address.split(".")[3], "?"))
                elif rr.rdtype == T.AAAA and str(rrset.name).startswith("mail"):
                    seen.add({"1": "A", "2": "B"}.get(rr.address.split(":")[-1], "?"))
    return seen


class ReloadServer:
    """apexd serving reload.test. from a file the tests rewrite."""

    def __init__(self, workdir, name, workers=WORKERS, extra=(), text=None):
        self.dir = os.path.join(workdir, name)
        os.makedirs(self.dir, exist_ok=True)
        self.zonefile = os.path.join(self.dir, "reload.test.zone")
        self.socket = os.path.join(self.dir, "ctl.sock")
        write_atomically(self.zonefile, zone_text("A") if text is None else text)
        self.apexd = servers.Apexd(self.dir, [(ORIGIN, self.zonefile)], label="apexd-" + name,
                                   extra_args=["-n", str(workers), "-s", self.socket] + list(extra))
        self.apexd.start()
        self.port = self.apexd.port

    def ctl(self, *args, timeout=APEXCTL_TIMEOUT):
        return subprocess.run([apexctl_path(), "-s", self.socket] + list(args),
                              capture_output=True, text=True, timeout=timeout)

    def ctl_ok(self, *args):
        r = self.ctl(*args)
        assert r.returncode == 0, "apexctl %s: %s%s" % (" ".join(args), r.stdout, r.stderr)
        return r.stdout

    def ctl_json(self, *args):
        return json.loads(self.ctl_ok("--json", *args))

    def query(self, name, rdtype, tcp=False, timeout=2.0):
        q = dns.message.make_query(name, rdtype)
        if tcp:
            return dns.query.tcp(q, "127.0.0.1", port=self.port, timeout=timeout)
        return dns.query.udp(q, "127.0.0.1", port=self.port, timeout=timeout)

    def serial(self, tcp=False):
        r = self.query(ORIGIN, T.SOA, tcp=tcp)
        assert r.rcode() == dns.rcode.NOERROR
        return r.answer[0][0].serial

    def log(self):
        with open(self.apexd.logpath, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stop(self):
        status = self.apexd.stop()
        log_dir = os.environ.get("APEX_RELOAD_LOG_DIR")
        if log_dir and os.path.exists(self.apexd.logpath):
            os.makedirs(log_dir, exist_ok=True)
            shutil.copy(self.apexd.logpath, os.path.join(log_dir, os.path.basename(self.dir) + ".log"))
        return status


def check_clean_exit(server, status):
    log = server.log()
    assert "ThreadSanitizer" not in log, "ThreadSanitizer report in apexd's log:\n" + log[-4000:]
    assert not re.search(r"ERROR: (Address|Leak)Sanitizer|runtime error:", log), log[-4000:]
    assert status == 0, "apexd exited with status %s:\n%s" % (status, log[-3000:])


@pytest.fixture(scope="module")
def reload_server(workdir):
    s = ReloadServer(workdir, "reload")
    yield s
    check_clean_exit(s, s.stop())


class Dnsperf:
    """dnsperf in the background for a bounded time at a bounded rate."""

    def __init__(self, port, workdir, seconds, qps=QPS):
        names = ["host%d A" % i for i in range(0, HOSTS, 7)]
        names += ["marker TXT", "alias TXT", "mx MX", "only-a A", "only-b A", "@ SOA", "nowhere A"]
        self.datafile = os.path.join(workdir, "dnsperf-queries.txt")
        with open(self.datafile, "w") as f:
            for line in names:
                owner, rdtype = line.split()
                f.write("%s %s\n" % (ORIGIN if owner == "@" else owner + "." + ORIGIN, rdtype))
        self.seconds = seconds
        # -t 3: a query is lost only if no answer comes within 3 s
        self.proc = subprocess.Popen(
            ["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", self.datafile,
             "-l", str(seconds), "-Q", str(qps), "-c", "4", "-t", "3"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def result(self):
        out, _ = self.proc.communicate(timeout=self.seconds + 30)
        sent = int(re.search(r"Queries sent:\s+(\d+)", out).group(1))
        completed = int(re.search(r"Queries completed:\s+(\d+)", out).group(1))
        lost = int(re.search(r"Queries lost:\s+(\d+)", out).group(1))
        return sent, completed, lost, out

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Sampler(threading.Thread):
    """Queries that touch every kind of versioned datum, checked one by one."""

    QUERIES = [("alias", T.TXT), ("marker", T.TXT), ("mx", T.MX), ("only-a", T.A),
               ("only-b", T.A), ("@", T.SOA), ("host1234", T.A), ("nowhere", T.A)]

    def __init__(self, server):
        super().__init__(daemon=True)
        self.server = server
        self.stop_event = threading.Event()
        self.samples = 0
        self.seen = {"A": 0, "B": 0}
        self.problems = []

    def run(self):
        rnd = random.Random(3)
        deadline = time.monotonic() + 120
        while not self.stop_event.is_set() and time.monotonic() < deadline:
            owner, rdtype = rnd.choice(self.QUERIES)
            name = ORIGIN if owner == "@" else owner + "." + ORIGIN
            try:
                r = self.server.query(name, rdtype, tcp=self.samples % 5 == 0)
            except Exception as e:  # a timeout is a lost query
                self.problems.append("%s %s: %r" % (name, T.to_text(rdtype), e))
                continue
            self.samples += 1
            v = versions_in(r)
            if len(v) != 1 or not v <= {"A", "B"}:
                self.problems.append("%s %s: data of versions %s:\n%s" % (
                    name, T.to_text(rdtype), sorted(v), r))
            else:
                self.seen[v.pop()] += 1


def test_versions_are_told_apart():
    """The checker itself: each version alone is one version; a mix is seen."""
    a = dns.message.make_response(dns.message.make_query("alias." + ORIGIN, T.TXT))
    a.answer.append(dns.rrset.from_text("alias." + ORIGIN, 300, "IN", "CNAME", "target-a." + ORIGIN))
    a.answer.append(dns.rrset.from_text("target-a." + ORIGIN, 300, "IN", "TXT", '"va"'))
    assert versions_in(a) == {"A"}
    a.answer[1] = dns.rrset.from_text("target-a." + ORIGIN, 300, "IN", "TXT", '"vb"')
    assert versions_in(a) == {"A", "B"}


@needs_dnsperf
def test_reload_under_load(reload_server, workdir):
    """20 reloads alternating two versions under dnsperf load: 0 lost, no
    mixed answer, the new serial served as soon as apexctl returns."""
    s = reload_server
    write_atomically(s.zonefile, zone_text("A"))
    s.ctl_ok("reload", ORIGIN)
    assert s.serial() == VERSIONS["A"]

    perf = Dnsperf(s.port, s.dir, seconds=6)
    sampler = Sampler(s)
    try:
        time.sleep(0.5)
        sampler.start()
        for i in range(20):
            version = "B" if i % 2 == 0 else "A"
            write_atomically(s.zonefile, zone_text(version))
            out = s.ctl_ok("reload", ORIGIN)
            assert "serial %d" % VERSIONS[version] in out, out
            # once apexctl has returned, every worker serves the new version
            assert s.serial() == VERSIONS[version]
            assert s.serial(tcp=True) == VERSIONS[version]
            time.sleep(0.15)
        sent, completed, lost, out = perf.result()
    finally:
        perf.kill()
        sampler.stop_event.set()
        sampler.join(10)
    assert lost == 0, "dnsperf lost queries during the reloads:\n" + out
    assert completed == sent and completed > 0, out
    assert not sampler.problems, "\n".join(sampler.problems[:5])
    assert sampler.samples > 50 and sampler.seen["A"] > 0 and sampler.seen["B"] > 0, (
        sampler.samples, sampler.seen)
    zs = s.ctl_json("zone-status", ORIGIN)["zones"][0]
    assert zs["state"] == "loaded" and zs["serial"] == VERSIONS["A"]
    stats = s.ctl_json("stats")
    assert stats["total"]["zone_pickups"] >= 20 * 1  # at least one worker picked up each


@needs_dnsperf
def test_corrupt_zone_keeps_old_version(reload_server):
    """A broken file under load: error with file:line, old serial served, 0 lost."""
    s = reload_server
    write_atomically(s.zonefile, zone_text("B"))
    s.ctl_ok("reload", ORIGIN)
    assert s.serial() == VERSIONS["B"]

    good = zone_text("A").splitlines()
    bad = good[:6] + ["broken A not-an-address"] + good[6:]  # line 7
    perf = Dnsperf(s.port, s.dir, seconds=3)
    try:
        time.sleep(0.5)
        write_atomically(s.zonefile, "\n".join(bad) + "\n")
        r = s.ctl("reload", ORIGIN)
        assert r.returncode != 0
        err = r.stderr.strip()
        assert len(err.splitlines()) == 1, err
        assert err.startswith("apexctl: ") and "%s:7:" % s.zonefile in err, err
        assert s.serial() == VERSIONS["B"]
        sent, completed, lost, out = perf.result()
    finally:
        perf.kill()
    assert lost == 0 and completed == sent, out

    zs = s.ctl_json("zone-status", ORIGIN)["zones"][0]
    assert zs["state"] == "failed" and zs["served"] and zs["serial"] == VERSIONS["B"]
    assert "%s:7:" % s.zonefile in zs["error"]
    text = s.ctl_ok("zone-status")
    assert "failed" in text and ":7:" in text
    # a missing file is reported too, and the zone still answers
    os.rename(s.zonefile, s.zonefile + ".away")
    r = s.ctl("reload")
    assert r.returncode != 0 and s.zonefile in r.stderr
    os.rename(s.zonefile + ".away", s.zonefile)
    assert s.serial() == VERSIONS["B"]
    # fixed: loaded again
    write_atomically(s.zonefile, zone_text("A"))
    s.ctl_ok("reload")
    assert s.serial() == VERSIONS["A"]
    assert s.ctl_json("zone-status")["zones"][0]["state"] == "loaded"


def test_concurrent_reloads_are_coalesced_not_lost(reload_server):
    """Many reload requests at once: each returns success with the version
    the file held when it asked, and fewer loads than requests may run."""
    s = reload_server
    write_atomically(s.zonefile, zone_text("A"))
    s.ctl_ok("reload", ORIGIN)
    loads_before = s.ctl_json("zone-status")["zones"][0]["loads"]
    write_atomically(s.zonefile, zone_text("B"))
    procs = [subprocess.Popen([apexctl_path(), "-s", s.socket, "reload", ORIGIN],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(8)]
    outs = [p.communicate(timeout=APEXCTL_TIMEOUT) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert "serial %d" % VERSIONS["B"] in out, out
    assert s.serial() == VERSIONS["B"]
    loads = s.ctl_json("zone-status")["zones"][0]["loads"] - loads_before
    assert 1 <= loads <= 8, loads


def test_sighup_reloads(reload_server):
    s = reload_server
    write_atomically(s.zonefile, zone_text("A"))
    s.ctl_ok("reload")
    write_atomically(s.zonefile, zone_text("B"))
    os.kill(s.apexd.proc.pid, signal.SIGHUP)
    deadline = time.monotonic() + 30
    while s.serial() != VERSIONS["B"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert s.serial() == VERSIONS["B"]


SCHED_OTHER, SCHED_IDLE = 0, 5  # scheduling policies, as /proc shows them


def thread_priorities(pid):
    """{tid: (name, nice, policy)} of the live threads of pid."""
    found = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                text = f.read()
        except OSError:
            continue  # ended meanwhile
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text.rsplit(")", 1)[1].split()  # fields[0] is field 3 of proc(5)
        found[tid] = (name, int(fields[16]), int(fields[38]))
    return found


def test_reload_thread_runs_below_the_workers(reload_server):
    """By default (reload-priority: idle) the reload thread, named
    apexd-reload, runs under SCHED_IDLE, and so does the transfer thread
    (apexd-xfr, started even without secondary zones: a reconfig may add
    some); the other threads keep SCHED_OTHER at nice 0; the log says so."""
    s = reload_server
    s.ctl_ok("reload")  # the thread exists from the start; make sure it has run
    threads = thread_priorities(s.apexd.proc.pid)
    below = ("apexd-reload", "apexd-xfr")
    reload = [(nice, policy) for name, nice, policy in threads.values() if name == "apexd-reload"]
    xfr = [(nice, policy) for name, nice, policy in threads.values() if name == "apexd-xfr"]
    others = [(nice, policy) for name, nice, policy in threads.values() if name not in below]
    assert reload == [(0, SCHED_IDLE)], threads
    assert xfr == [(0, SCHED_IDLE)], threads
    assert len(others) >= 1 + WORKERS and set(others) == {(0, SCHED_OTHER)}, threads
    assert "reload thread: scheduling policy idle (reload-priority idle)" in s.log()


def write_config(directory, text):
    path = os.path.join(directory, "apex.conf")
    with open(path, "w") as f:
        f.write(text)
    return path


def test_reload_priority_nice(workdir):
    """reload-priority: N runs the reload thread under SCHED_OTHER at nice
    N instead, and reloads still work."""
    conf = write_config(workdir, "server:\n    reload-priority: 13\n")
    s = ReloadServer(workdir, "nice", workers=2, extra=["-c", conf])
    try:
        write_atomically(s.zonefile, zone_text("B"))
        s.ctl_ok("reload")
        assert s.serial() == VERSIONS["B"]
        threads = thread_priorities(s.apexd.proc.pid)
        reload = [(nice, policy) for name, nice, policy in threads.values()
                  if name == "apexd-reload"]
        assert reload == [(13, SCHED_OTHER)], threads
        assert "reload thread: nice 13 (reload-priority 13)" in s.log()
    finally:
        check_clean_exit(s, s.stop())


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2,
                    reason="one CPU: the zone loader parses on one thread")
def test_loader_threads_inherit_the_reload_priority(workdir):
    """A zone file large enough to be parsed on several threads: while it
    reloads, every thread named apexd-reload (the reload thread and the
    parser threads it starts, which inherit its name) runs under
    SCHED_IDLE, and there are more than one of them."""
    s = ReloadServer(workdir, "inherit", workers=1)
    try:
        big = os.path.join(s.dir, "big.zone")
        with open(big, "w") as f:  # about 24 MB, several parser chunks
            f.write(zone_text("A", hosts=0))
            pad = "x" * 60
            for i in range(300000):
                f.write('t%d TXT "%s"\n' % (i, pad))
        os.rename(big, s.zonefile)
        pid = s.apexd.proc.pid
        done = threading.Event()
        result = {}

        def reload():
            result["r"] = s.ctl("reload")
            done.set()

        worker = threading.Thread(target=reload)
        worker.start()
        seen = {}
        deadline = time.monotonic() + APEXCTL_TIMEOUT
        while not done.is_set() and time.monotonic() < deadline:
            for tid, t in thread_priorities(pid).items():
                if t[0] == "apexd-reload":
                    seen[tid] = t
            time.sleep(0.002)
        worker.join(APEXCTL_TIMEOUT)
        assert result["r"].returncode == 0, result["r"].stderr
        assert s.query("t299999." + ORIGIN, T.TXT).answer
        assert len(seen) >= 2, seen
        assert {(nice, policy) for _, nice, policy in seen.values()} == {(0, SCHED_IDLE)}, seen
    finally:
        check_clean_exit(s, s.stop())


def test_status(reload_server):
    s = reload_server
    mode = os.stat(s.socket).st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
    st = s.ctl_json("status")
    assert st["pid"] == s.apexd.proc.pid
    assert st["workers"] == WORKERS
    assert st["zones"] == {"configured": 1, "served": 1, "loaded": 1, "failed": 0, "loading": 0}
    assert st["uptime"] > 0 and st["rss_bytes"] > 0
    text = s.ctl_ok("status")
    assert "workers: %d" % WORKERS in text and "version: apexd" in text


def test_zone_status(reload_server):
    s = reload_server
    write_atomically(s.zonefile, zone_text("A"))
    s.ctl_ok("reload")
    zs = s.ctl_json("zone-status")["zones"]
    assert len(zs) == 1
    z = zs[0]
    assert z["name"] == ORIGIN and z["file"] == s.zonefile and z["state"] == "loaded"
    assert z["serial"] == VERSIONS["A"] and z["records"] == 10 + HOSTS
    assert z["memory_bytes"] > 0 and re.match(r"\d{4}-\d\d-\d\dT", z["loaded_at"])
    r = s.ctl("zone-status", "nonexistent.")
    assert r.returncode == 1 and r.stderr == "apexctl: zone nonexistent. is not configured\n"
    r = s.ctl("reload", "nonexistent.")
    assert r.returncode == 1 and "not configured" in r.stderr


def test_stats(reload_server):
    s = reload_server
    before = s.ctl_json("stats")["total"]
    for _ in range(10):
        s.query("marker." + ORIGIN, T.TXT)
    for _ in range(3):
        assert s.query("nowhere." + ORIGIN, T.A).rcode() == dns.rcode.NXDOMAIN
    s.query("marker." + ORIGIN, T.TXT, tcp=True)
    st = s.ctl_json("stats")
    total = st["total"]
    assert len(st["workers"]) == WORKERS
    assert total["qtype"]["TXT"] - before["qtype"].get("TXT", 0) >= 11
    assert total["rcode"]["NXDOMAIN"] - before["rcode"].get("NXDOMAIN", 0) >= 3
    assert total["tcp"] - before["tcp"] >= 1
    for key in ("queries", "udp", "tcp", "truncated", "dropped", "udp_batches", "lock_wait_ns",
                "zone_pickups"):
        assert total[key] == sum(w[key] for w in st["workers"]), key
    for key in ("queries", "handshakes", "resumed"):
        assert total["tls"][key] == sum(w["tls"][key] for w in st["workers"]), key
    assert total["tls"]["failed"] == {"protocol": 0, "certificate": 0, "timeout": 0}
    assert total["udp_batches"] == sum(total["batch_fill"].values())
    assert total["queries"] == total["udp"] + total["tcp"]
    text = s.ctl_ok("stats")
    assert "worker %d:" % (WORKERS - 1) in text and "lock wait:" in text
    # apexctl stats --json (the option after the command) is the same as --json stats
    assert json.loads(s.ctl_ok("stats", "--json"))["total"]["queries"] >= total["queries"]


def control_exchange(path, data, timeout=5):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
        c.settimeout(timeout)
        c.connect(path)
        c.sendall(data)
        c.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            chunk = c.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)


def test_control_protocol_garbage(reload_server):
    s = reload_server
    cases = [b"\x00\xff\xfe garbage\n", b"text\n", b"json frobnicate\n", b"yaml status\n",
             b"text status extra\n", b"text status\ntext stats\n", b"x" * 5000, b"\n",
             b"text reload " + b"z. " * 300 + b"\n"]
    for data in cases:
        reply = control_exchange(s.socket, data)
        assert reply.startswith(b"error ") and reply.count(b"\n") == 1, (data[:40], reply)
    # raw protocol, both formats
    assert control_exchange(s.socket, b"text status\n").startswith(b"ok\nversion: apexd")
    reply = control_exchange(s.socket, b"json zone-status reload.test.\r\n")
    assert reply.startswith(b"ok\n")
    assert json.loads(reply[3:])["zones"][0]["name"] == ORIGIN
    # a client that says nothing is dropped after a while, and others are still served
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as idle:
        idle.connect(s.socket)
        assert s.ctl_json("status")["workers"] == WORKERS
    # apexctl's own usage errors
    assert s.ctl("frobnicate").returncode == 2
    assert s.ctl("status", "extra").returncode == 2
    r = subprocess.run([apexctl_path(), "-s", os.path.join(s.dir, "nothing.sock"), "status"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and r.stderr.startswith("apexctl: cannot connect")


def settled_rss(s, bound=30):
    """apexd's resident size once it stops falling: a reload of a file under
    1 MiB is not followed by a purge (src/apexd/zones/reload.c), and what it
    let go of goes back through jemalloc's decay, over about ten seconds.
    Two samples a second apart within 256 KiB of each other, or the last
    after bound seconds."""
    rss = s.ctl_json("status")["rss_bytes"]
    for _ in range(bound):
        time.sleep(1)
        now = s.ctl_json("status")["rss_bytes"]
        if abs(now - rss) <= 256 << 10:
            return now
        rss = now
    return rss


@pytest.mark.skipif(os.environ.get("APEX_RELOAD_SKIP_RSS") == "1",
                    reason="APEX_RELOAD_SKIP_RSS=1 (sanitizer allocators keep freed memory)")
def test_rss_returns_to_baseline_after_100_reloads(reload_server):
    """Nothing leaks across 100 reloads: the resident size comes back."""
    s = reload_server
    big_a, big_b = zone_text("A", hosts=30000), zone_text("B", hosts=30000)
    # Warm up until the resident size stops growing: each load's parser
    # threads are new threads, which jemalloc spreads over its arenas (4
    # per CPU), and the first use of an arena maps it its own 2 MiB pages
    # (apexd asks for transparent huge pages), so a baseline taken after a
    # few reloads may lack some of them (the likely cause of a CI run that
    # grew by 10.6 MiB over the 100 reloads from a baseline of 40.9 MiB, to
    # the 51.5 this module otherwise settles at, after 4 warm-up reloads).
    # A leak never settles: it is in both the warm-up and the 100 reloads.
    # Each sample is taken with the allocator's decay over (settled_rss()).
    baseline, warm_up = None, 0
    for batch in range(8):
        for i in range(10):
            write_atomically(s.zonefile, big_a if i % 2 else big_b)
            s.ctl_ok("reload")
        warm_up += 10
        rss = settled_rss(s)
        if baseline is not None and rss <= baseline + (1 << 20):
            baseline = min(baseline, rss)
            break
        baseline = rss
    for i in range(100):
        write_atomically(s.zonefile, big_a if i % 2 else big_b)
        s.ctl_ok("reload")
    after = settled_rss(s)
    zone_memory = s.ctl_json("zone-status")["zones"][0]["memory_bytes"]
    assert s.serial() == VERSIONS["A"]  # i == 99: version A
    print("RSS: %.1f MiB after %d reloads, %.1f MiB after 100 more; one version: %.1f MiB" % (
        baseline / 2**20, warm_up, after / 2**20, zone_memory / 2**20))
    # at most a fraction of one version more than before (allocator slack),
    # where a leak of one version per reload would be 100 versions
    assert after <= baseline + zone_memory // 2 + (4 << 20), (baseline, after, zone_memory)
    write_atomically(s.zonefile, zone_text("A"))
    s.ctl_ok("reload")


class ConfApexd(servers.Apexd):
    """apexd with its zones in a config file only (no -z), so reconfig sees them all."""

    def command(self):
        return [servers.apexd_path(), "-f", "-n", "2", "-l",
                "%s@%d" % (servers.LOOPBACK, self.port)] + self.extra_args


def test_stop_and_reconfig(workdir):
    """reconfig adds and removes zones from the config file; stop ends apexd."""
    d = os.path.join(workdir, "reconfig")
    os.makedirs(d, exist_ok=True)
    one, two = os.path.join(d, "one.zone"), os.path.join(d, "two.zone")
    for path, origin in ((one, "one.test."), (two, "two.test.")):
        with open(path, "w") as f:
            f.write("$ORIGIN %s\n$TTL 60\n@ SOA ns hm 7 1 1 1 1\n@ NS ns\nns A 192.0.2.1\n" % origin)
    conf = os.path.join(d, "apex.conf")
    sock = os.path.join(d, "ctl.sock")

    def write_conf(zones):
        with open(conf, "w") as f:
            f.write("server:\n    control-socket: %s\n" % sock)
            for origin, path in zones:
                f.write("zone:\n    name: %s\n    file: %s\n" % (origin, path))

    write_conf([("one.test.", one)])
    apexd = ConfApexd(d, [("one.test.", one)], label="apexd-reconfig", extra_args=["-c", conf])
    apexd.start()
    try:
        def ctl(*args):
            return subprocess.run([apexctl_path(), "-s", sock] + list(args), capture_output=True,
                                  text=True, timeout=APEXCTL_TIMEOUT)

        def rcode(origin):
            q = dns.message.make_query(origin, T.SOA)
            return dns.query.udp(q, "127.0.0.1", port=apexd.port, timeout=2).rcode()

        assert rcode("one.test.") == dns.rcode.NOERROR
        write_conf([("two.test.", two)])
        r = ctl("--json", "reconfig")
        assert r.returncode == 0, r.stderr
        j = json.loads(r.stdout)
        assert (j["added"], j["removed"]) == (1, 1) and j["zones"][0]["name"] == "two.test."
        assert rcode("two.test.") == dns.rcode.NOERROR
        assert rcode("one.test.") == dns.rcode.REFUSED
        write_conf([("two.test.", two), ("three.test.", os.path.join(d, "missing.zone"))])
        r = ctl("reconfig")
        assert r.returncode == 1 and "missing.zone" in r.stderr, r.stderr
        assert "three.test." in ctl("zone-status").stdout
        with open(conf, "a") as f:
            f.write("bogus-key: 1\n")
        r = ctl("reconfig")
        assert r.returncode == 1 and "%s:" % conf in r.stderr, r.stderr
        assert rcode("two.test.") == dns.rcode.NOERROR

        r = ctl("stop")
        assert r.returncode == 0, r.stderr
        apexd.proc.wait(30)
        assert apexd.proc.returncode == 0
        assert not os.path.exists(sock)
    finally:
        status = apexd.stop()
        log_dir = os.environ.get("APEX_RELOAD_LOG_DIR")
        if log_dir:
            os.makedirs(log_dir, exist_ok=True)
            shutil.copy(apexd.logpath, os.path.join(log_dir, "reconfig.log"))
        log = open(apexd.logpath, "rb").read().decode("utf-8", "replace")
        assert "ThreadSanitizer" not in log, log[-4000:]
        assert status == 0, log[-3000:]
