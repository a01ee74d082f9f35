# SPDX-License-Identifier: BSD-3-Clause
"""apexd -t: checks a configuration and its zones as they would be served,
without a listen address; exit status 0 only when every zone would be
served."""

import os
import subprocess

import servers
from conftest import zone as zone_path


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
