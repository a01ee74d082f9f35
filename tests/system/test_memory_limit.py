# SPDX-License-Identifier: BSD-3-Clause
"""memory-limit: a reload, a transfer or an added zone whose estimated peak
would cross the limit is refused, and apexd keeps serving what it served.

The main test puts apexd in a cgroup v1 memory group of its own (made here
under the test's own memory cgroup, removed at the end), loads a zone of
900,000 records, sets the group's limit to 1.5 times apexd's steady memory
with `memory-limit: 95%`, and reloads a new version of the file, which
needs about twice the steady memory at its peak: without the check the
kernel kills apexd for memory in the middle of the build.  apexd must be
alive, serve the old serial and name the refusal in its log, in
`apexctl reload` and in `zone-status`; with the group's limit raised, the
same reload must pass.  It is skipped only when the memory controller is
not there as cgroup v1 or its groups cannot be made.

The others use a fixed limit in bytes (no cgroup): an AXFR abandoned as
its records arrive, and a zone added by a reconfig that is refused.
"""

import json
import os
import subprocess
import time

import dns.message
import dns.query
import dns.rcode
import dns.rdatatype
import pytest

import servers

ORIGIN = "big.test."
DELEGATIONS = 300000  # three records each: 900,003 records, about 20 MB of text
SMALL_DELEGATIONS = 100000  # 300,003 records, for the fixed limits
APEXCTL_TIMEOUT = 120
CGROUP_V1 = "/sys/fs/cgroup/memory"


def zone_text(serial, delegations, outside="ns.example.net.", edited=()):
    """The zone: each delegation with an in-zone name server and its glue,
    and one outside the zone (outside), or "ns.edited." for those in edited.
    A new outside name changes a third of the records: too much for a
    reload to derive from the version served, it is built whole."""
    lines = ["$ORIGIN %s" % ORIGIN, "$TTL 3600",
             "@ SOA ns1 hostmaster %d 3600 600 86400 300" % serial,
             "@ NS ns1", "ns1 A 192.0.2.1"]
    for i in range(delegations):
        lines.append("d%d NS ns1.d%d\nd%d NS %s\nns1.d%d A 10.%d.%d.%d"
                     % (i, i, i, "ns.edited." if i in edited else outside, i,
                        i >> 16, (i >> 8) & 255, i & 255))
    return "\n".join(lines) + "\n"


def write_atomically(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def apexctl(sock, *args):
    builddir = os.environ.get("APEX_BUILDDIR") or os.environ.get("APEX_SRCDIR") or os.getcwd()
    return subprocess.run([os.path.join(builddir, "apexctl"), "-s", sock] + list(args),
                          capture_output=True, text=True, timeout=APEXCTL_TIMEOUT)


def ctl_json(sock, *args):
    r = apexctl(sock, "--json", *args)
    assert r.returncode == 0, "apexctl %s: %s%s" % (" ".join(args), r.stdout, r.stderr)
    return json.loads(r.stdout)


def query(port, name, rdtype=dns.rdatatype.SOA):
    return dns.query.udp(dns.message.make_query(name, rdtype), servers.LOOPBACK, port=port,
                         timeout=2.0)


def serial(port):
    r = query(port, ORIGIN)
    assert r.rcode() == dns.rcode.NOERROR, r
    return r.answer[0][0].serial


def status_value(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no %s for pid %d" % (key, pid))


def log_of(server):
    with open(server.logpath, "rb") as f:
        return f.read().decode("utf-8", "replace")


class Apexd(servers.Apexd):
    """apexd started through sh, which first puts itself (then apexd, which
    it becomes) in the cgroup whose cgroup.procs is given."""

    def __init__(self, workdir, zones, extra_args=(), cgroup_procs=None):
        super().__init__(workdir, zones, label="apexd-memory", extra_args=extra_args)
        self.cgroup_procs = cgroup_procs

    def command(self):
        cmd = super().command()
        if self.cgroup_procs is None:
            return cmd
        return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', self.cgroup_procs] + cmd


# ---------------------------------------------------------------- the cgroup


def own_memory_cgroup():
    """The directory of this process's cgroup v1 memory group, or a reason
    why there is none."""
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if "memory" in controllers.split(","):
                d = os.path.join(CGROUP_V1, path.lstrip("/"))
                if os.path.isdir(d):
                    return d, None
                return None, "%s is not there (a cgroup namespace?)" % d
    return None, "no cgroup v1 memory controller in /proc/self/cgroup (cgroup v2 only?)"


class Cgroup:
    """A memory group of its own under the test's, removed at the end."""

    def __init__(self, name):
        parent, why = own_memory_cgroup()
        if parent is None:
            pytest.skip("the memory controller is not writable as cgroup v1: " + why)
        self.dir = os.path.join(parent, name)
        try:
            os.mkdir(self.dir)
        except OSError as e:
            pytest.skip("the memory controller is not writable: mkdir %s: %s" % (self.dir, e))
        self.procs = os.path.join(self.dir, "cgroup.procs")

    def write(self, name, value):
        with open(os.path.join(self.dir, name), "w") as f:
            f.write(str(value))

    def read(self, name):
        with open(os.path.join(self.dir, name)) as f:
            return f.read()

    def oom_kills(self):
        for line in self.read("memory.oom_control").splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return 0

    def remove(self):
        for _ in range(50):  # the group empties once its last process is reaped
            try:
                os.rmdir(self.dir)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.1)
        raise AssertionError("cgroup %s could not be removed" % self.dir)


def test_reload_refused_under_cgroup_limit(workdir):
    d = os.path.join(workdir, "memory-limit-cgroup")
    os.makedirs(d, exist_ok=True)
    zonefile = os.path.join(d, "big.test.zone")
    sock = os.path.join(d, "ctl.sock")
    conf = os.path.join(d, "apex.conf")
    write_atomically(zonefile, zone_text(1, DELEGATIONS))
    with open(conf, "w") as f:
        f.write("server:\n    memory-limit: 95%\n")
    cg = Cgroup("apex-memory-test-%d" % os.getpid())
    apexd = None
    try:
        cg.write("memory.limit_in_bytes", 4 << 30)  # room to load; lowered below
        apexd = Apexd(d, [(ORIGIN, zonefile)], cgroup_procs=cg.procs,
                      extra_args=["-n", "1", "-c", conf, "-s", sock])
        apexd.start()
        pid = apexd.proc.pid
        assert str(pid) in cg.read("cgroup.procs").split()
        assert serial(apexd.port) == 1
        time.sleep(1.0)  # the loader's memory given back
        steady = max(status_value(pid, "VmRSS"), int(cg.read("memory.usage_in_bytes")))
        limit = steady * 3 // 2 // 4096 * 4096
        cg.write("memory.limit_in_bytes", limit)

        # a new version built whole needs about twice the steady memory at
        # its peak
        write_atomically(zonefile, zone_text(2, DELEGATIONS, outside="ns.example.org."))
        r = apexctl(sock, "reload", ORIGIN)
        assert apexd.alive(), "apexd died (OOM kills in its cgroup: %d):\n%s" % (
            cg.oom_kills(), apexd.log_tail())
        assert cg.oom_kills() == 0
        assert r.returncode == 1, r.stdout + r.stderr
        assert "refused by memory-limit" in r.stderr and "MiB" in r.stderr, r.stderr
        assert serial(apexd.port) == 1
        z = ctl_json(sock, "zone-status", ORIGIN)["zones"][0]
        assert z["state"] == "failed" and z["serial"] == 1, z
        assert "refused by memory-limit: reloading %s" % zonefile in z["error"], z
        assert "resident" in z["error"] and "95% of the cgroup's" in z["error"], z
        log = log_of(apexd)
        assert "zone %s: refused by memory-limit" % ORIGIN in log, log[-3000:]
        stats = ctl_json(sock, "stats")
        assert stats["memory_limit"]["refused_reloads"] == 1, stats["memory_limit"]
        assert stats["memory_limit"]["bytes"] == limit * 95 // 100

        # with room for it, the same reload passes
        cg.write("memory.limit_in_bytes", steady * 4 // 4096 * 4096)
        r = apexctl(sock, "reload", ORIGIN)
        assert r.returncode == 0, r.stdout + r.stderr
        assert serial(apexd.port) == 2
        z = ctl_json(sock, "zone-status", ORIGIN)["zones"][0]
        assert z["state"] == "loaded" and "error" not in z, z
        assert apexd.alive() and cg.oom_kills() == 0

        # a small edit under the low limit again: derived from the version
        # served, it needs no whole build and is not refused
        time.sleep(1.0)
        cg.write("memory.limit_in_bytes", limit)
        write_atomically(zonefile, zone_text(3, DELEGATIONS, outside="ns.example.org.",
                                             edited=range(0, DELEGATIONS, 3000)))
        r = apexctl(sock, "reload", ORIGIN)
        assert r.returncode == 0, r.stdout + r.stderr
        assert serial(apexd.port) == 3
        assert "derived in place" in log_of(apexd), log_of(apexd)[-3000:]
        assert apexd.alive() and cg.oom_kills() == 0
        assert ctl_json(sock, "stats")["memory_limit"]["refused_reloads"] == 1
    finally:
        status = apexd.stop() if apexd is not None else 0
        cg.remove()
    assert status == 0, "apexd exited with %s:\n%s" % (status, apexd.log_tail())


def test_percentage_without_a_limit_is_an_error(workdir):
    """memory-limit: P% with no limit on apexd's cgroup: apexd does not start,
    and says why."""
    d = os.path.join(workdir, "memory-limit-none")
    os.makedirs(d, exist_ok=True)
    conf = os.path.join(d, "apex.conf")
    with open(conf, "w") as f:
        f.write("server:\n    memory-limit: 80%\n")
    cg = Cgroup("apex-memory-none-%d" % os.getpid())
    try:
        # a new group has no limit of its own; neither must its parents
        parent_limits = []
        p = os.path.dirname(cg.dir)
        while p.startswith(CGROUP_V1):
            with open(os.path.join(p, "memory.limit_in_bytes")) as f:
                parent_limits.append(int(f.read()))
            p = os.path.dirname(p)
        if any(v < 1 << 62 for v in parent_limits):
            pytest.skip("a parent of the test's cgroup has a memory limit")
        apexd = Apexd(d, [], cgroup_procs=cg.procs, extra_args=["-t", "-c", conf])
        apexd.port = servers.free_port()
        r = subprocess.run(apexd.command(), capture_output=True, text=True, timeout=60)
        assert r.returncode == 1, r.stdout + r.stderr
        assert "memory-limit: 80%: the cgroup apexd runs in" in r.stderr, r.stderr
        assert "has no memory limit" in r.stderr and "memory.limit_in_bytes" in r.stderr
    finally:
        cg.remove()


# ---------------------------------------------------------------- a fixed limit


@pytest.fixture(scope="module")
def small_zone(workdir):
    d = os.path.join(workdir, "memory-limit-fixed")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "big.test.zone")
    write_atomically(path, zone_text(7, SMALL_DELEGATIONS))
    return path


def test_axfr_abandoned_as_it_arrives(workdir, small_zone):
    """A secondary with nothing served yet: the AXFR's estimate grows with
    its records, and the transfer is abandoned once it would cross."""
    d = os.path.join(workdir, "memory-limit-axfr")
    os.makedirs(d, exist_ok=True)
    primary_conf = os.path.join(d, "primary.conf")
    with open(primary_conf, "w") as f:
        f.write("zone:\n    name: %s\n    file: %s\n    provide-xfr: 127.0.0.1 NOKEY\n"
                % (ORIGIN, small_zone))
    primary = servers.Apexd(os.path.join(d, "primary"), [], label="apexd-primary",
                            extra_args=["-n", "1", "-c", primary_conf, "-s", "none"])
    secondary = None
    primary.start()
    try:
        deadline = time.monotonic() + 60
        while not servers.answers_soa(primary.port, ORIGIN):
            assert time.monotonic() < deadline and primary.alive(), primary.log_tail()
            time.sleep(0.1)
        sock = os.path.join(d, "secondary.sock")
        conf = os.path.join(d, "secondary.conf")
        with open(conf, "w") as f:
            # 300,003 records need about 70 MiB at the peak: more than is left
            f.write("server:\n    memory-limit: 64M\n"
                    "zone:\n    name: %s\n    file: %s\n    request-xfr: 127.0.0.1@%d NOKEY\n"
                    % (ORIGIN, os.path.join(d, "copy.zone"), primary.port))
        secondary = servers.Apexd(os.path.join(d, "secondary"), [], label="apexd-secondary",
                                  extra_args=["-n", "1", "-c", conf, "-s", sock])
        secondary.start()
        deadline = time.monotonic() + 60
        while True:
            assert secondary.alive(), secondary.log_tail()
            r = apexctl(sock, "--json", "zone-status", ORIGIN)
            z = json.loads(r.stdout)["zones"][0] if r.returncode == 0 else None
            if z is not None and z["secondary"]["failures"] > 0:
                break
            assert time.monotonic() < deadline, z
            time.sleep(0.2)
        assert secondary.alive()
        result = z["secondary"]["last_result"]
        assert "refused by memory-limit: an AXFR of %s (" % ORIGIN in result, z
        assert "received so far" in result, z
        assert z["state"] == "failed" and "refused by memory-limit" in z["error"], z
        assert not z["served"]
        assert query(secondary.port, ORIGIN).rcode() == dns.rcode.SERVFAIL
        assert not os.path.exists(os.path.join(d, "copy.zone"))
        stats = ctl_json(sock, "stats")
        assert stats["memory_limit"]["refused_transfers"] >= 1, stats["memory_limit"]
        assert stats["memory_limit"]["refused_reloads"] == 0
        assert "refused by memory-limit: an AXFR" in log_of(secondary)
    finally:
        if secondary is not None:
            assert secondary.stop() == 0, secondary.log_tail()
        primary.stop()


def test_zone_added_by_reconfig_refused(workdir, small_zone):
    """A zone added by a reconfig, with nothing to scale from: estimated from
    its file's size and lines, refused; the zone served before stays."""
    d = os.path.join(workdir, "memory-limit-reconfig")
    os.makedirs(d, exist_ok=True)
    small = os.path.join(d, "small.test.zone")
    write_atomically(small, "$ORIGIN small.test.\n$TTL 300\n@ SOA ns1 h 3 3600 600 86400 300\n"
                     "@ NS ns1\nns1 A 192.0.2.1\n")
    conf = os.path.join(d, "apex.conf")
    sock = os.path.join(d, "ctl.sock")
    with open(conf, "w") as f:
        f.write("server:\n    memory-limit: 64M\n")
    # small.test. from the command line (-z), which a reconfig keeps
    apexd = servers.Apexd(d, [("small.test.", small)], label="apexd-reconfig",
                          extra_args=["-n", "1", "-c", conf, "-s", sock])
    apexd.start()
    try:
        with open(conf, "a") as f:
            f.write("zone:\n    name: %s\n    file: %s\n" % (ORIGIN, small_zone))
        r = apexctl(sock, "reconfig")
        assert r.returncode == 1, r.stdout + r.stderr
        assert "refused by memory-limit: loading %s" % small_zone in r.stderr, r.stderr
        assert "lines" in r.stderr
        z = ctl_json(sock, "zone-status", ORIGIN)["zones"][0]
        assert z["state"] == "failed" and not z["served"], z
        assert "refused by memory-limit" in z["error"], z
        assert query(apexd.port, "small.test.").rcode() == dns.rcode.NOERROR
        assert ctl_json(sock, "stats")["memory_limit"]["refused_reloads"] == 1
        assert apexd.alive()
    finally:
        assert apexd.stop() == 0, apexd.log_tail()
