# SPDX-License-Identifier: BSD-3-Clause
"""apexd -t: checks a configuration and its zones as they would be served,
without a listen address; exit status 0 only when every zone would be
served."""

import os
import re
import subprocess

import servers
from conftest import SRCDIR, zone as zone_path


def check(*args):
    return subprocess.run([servers.apexd_path(), "-t"] + list(args), capture_output=True,
                          text=True, timeout=120)


def test_zones_without_a_listen_address():
    r = check("-z", ".=" + zone_path("root.zone"), "-z", "example.=" + zone_path("example.zone"))
    assert r.returncode == 0, r.stderr
    assert "configuration OK; 2 of 2 zone(s) loaded" in r.stderr, r.stderr
    assert "ZONEMD verified (SHA-384, serial 2024101100)" in r.stderr, r.stderr


def test_a_zone_that_would_not_be_served(tmp_path):
    broken = os.path.join(str(tmp_path), "broken.zone")
    with open(zone_path("example.zone")) as f:
        lines = f.read().splitlines()
    lines.insert(20, "broken A not-an-address")
    with open(broken, "w") as f:
        f.write("\n".join(lines) + "\n")
    r = check("-z", ".=" + zone_path("root.zone"), "-z", "example.=" + broken)
    assert r.returncode == 1, r.stderr
    assert "%s:21:" % broken in r.stderr, r.stderr
    assert "1 of 2 zone(s) loaded" in r.stderr, r.stderr

    tampered = os.path.join(str(tmp_path), "root.zone")
    with open(zone_path("root.zone")) as f:
        text = f.read()
    with open(tampered, "w") as f:
        f.write(text.replace("\t198.41.0.4\n", "\t198.41.0.5\n", 1))
    r = check("-z", ".=" + tampered)
    assert r.returncode == 1 and "ZONEMD digest mismatch (SHA-384)" in r.stderr, r.stderr


def test_a_bad_configuration(tmp_path):
    conf = os.path.join(str(tmp_path), "apex.conf")
    with open(conf, "w") as f:
        f.write("zone:\n    name: example.\n    file: %s\n    zonemd-verify: maybe\n"
                % zone_path("example.zone"))
    r = check("-c", conf)
    assert r.returncode == 1 and "%s:4:" % conf in r.stderr, r.stderr


def test_control_socket_in_a_missing_directory(tmp_path):
    """A control socket configured in a directory that does not exist:
    apexd says so (binding there would only say "permission denied") and
    does not start."""
    sock = os.path.join(str(tmp_path), "missing", "ctl.sock")
    r = subprocess.run([servers.apexd_path(), "-f", "-l", "127.0.0.1@%d" % servers.free_port(),
                        "-s", sock, "-z", "example.=" + zone_path("example.zone")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "the directory %s does not exist" % os.path.dirname(sock) in r.stderr, r.stderr


def test_a_secondary_without_its_copy_yet(tmp_path):
    """A secondary zone whose copy does not exist yet is served after its
    first transfer: apexd -t (the unit's ExecStartPre) accepts it."""
    conf = os.path.join(str(tmp_path), "apex.conf")
    with open(conf, "w") as f:
        f.write("zone:\n    name: example.\n    file: %s\n"
                "    request-xfr: 127.0.0.1@%d NOKEY\n"
                % (os.path.join(str(tmp_path), "example.zone"), servers.free_port()))
    r = check("-c", conf)
    assert r.returncode == 0, r.stderr
    assert "0 of 1 zone(s) loaded, 1 awaiting their first transfer" in r.stderr, r.stderr


def test_the_migration_guide_examples(tmp_path):
    """doc/migrating-from-nsd.md's worked example: the NSD configuration
    without hide-version, which the guide says to drop, and its apex
    rewrite both pass apexd -t (paths moved into the test's directory)."""
    with open(os.path.join(SRCDIR, "doc", "migrating-from-nsd.md")) as f:
        blocks = re.findall(r"```\n(.*?)```", f.read(), re.S)
    nsd = [b for b in blocks if "ip-address:" in b]
    apex = [b for b in blocks if "listen: 192.0.2.53" in b]
    assert len(nsd) == 1 and len(apex) == 1, blocks
    d = str(tmp_path)
    nsd = re.sub(r"\n    hide-version: [^\n]*", "", nsd[0])
    assert "hide-version" not in nsd
    for name, text in (("nsd.conf", nsd), ("apex.conf", apex[0])):
        text = (text.replace("/var/lib/apex", d).replace("/var/lib/nsd", d)
                .replace("/run/nsd", d).replace("/run/apex", d)
                .replace("username: nsd", "username: nobody").replace("user: apex", "user: nobody"))
        conf = os.path.join(d, name)
        with open(conf, "w") as f:
            f.write(text)
        r = check("-c", conf)
        assert r.returncode == 0, (name, r.stderr)
        assert "1 awaiting their first transfer" in r.stderr, r.stderr
        assert "no copy in %s/example.zone yet" % d in r.stderr, r.stderr


def test_pid_file_in_a_missing_directory(tmp_path):
    """A pid file in a directory that does not exist is reported as such."""
    pid = os.path.join(str(tmp_path), "missing", "apexd.pid")
    r = subprocess.run([servers.apexd_path(), "-f", "-l", "127.0.0.1@%d" % servers.free_port(),
                        "-s", "none", "-P", pid, "-z", "example.=" + zone_path("example.zone")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "pid file %s: the directory %s does not exist" % (pid, os.path.dirname(pid)) \
        in r.stderr, r.stderr
