# SPDX-License-Identifier: BSD-3-Clause
"""Fixtures for the apex system tests: servers on free loopback ports.

Each zone set is served by three processes started once per test session
and stopped by PID at its end: apexd (the server under test, from
$APEX_BUILDDIR, default the source tree), NSD and Knot DNS (the reference
servers).  Their files live in a private temporary directory.
"""

import os
import re
import shutil
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import servers  # noqa: E402

SRCDIR = os.environ.get("APEX_SRCDIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
ZONEDIR = os.path.join(SRCDIR, "zones")


def zone(name):
    return os.path.join(ZONEDIR, name)


# The zone sets, each served by one process of each server.  The three
# copies of example. need a process each; the real zones share one, which
# also makes root (parent) and fj./sl. (children) served side by side.
ZONE_SETS = {
    "tld": [(".", zone("root.zone")), ("fj.", zone("fj.zone")),
            ("sl.", zone("sl.zone")), ("example.", zone("example.zone"))],
    "nsec": [("example.", zone("example.nsec.zone"))],
    "nsec3": [("example.", zone("example.nsec3.zone"))],
    "occlusion": [("occlusion.", zone("occlusion.zone"))],
}

# The references of a zone set, when not NSD and Knot DNS: both refuse to
# load data below a DNAME's owner, as RFC 6672 section 2.4 allows; BIND
# loads it and occludes it, as apex does.
REFERENCES_OF = {"occlusion": ("bind",)}

# For checking the harness itself without apexd: APEX_SYSTEM_CANDIDATE=nsd
# or knot puts a second reference server in apexd's place.
CANDIDATE = os.environ.get("APEX_SYSTEM_CANDIDATE", "apexd")
CANDIDATES = {"apexd": servers.Apexd, "nsd": servers.Nsd, "knot": servers.Knot}
if CANDIDATE != "apexd":
    import compare  # noqa: E402
    compare.CHECK_APEX_POLICY = False

# What in apexd's log means a memory or undefined-behaviour error.
SANITIZER_RE = re.compile(r"ERROR: (Address|Leak|Thread)Sanitizer|runtime error:|SUMMARY: \w+Sanitizer")


class ServerSet:
    def __init__(self, name, workdir):
        self.name = name
        self.zones = ZONE_SETS[name]
        self.workdir = os.path.join(workdir, name)
        self.candidate = CANDIDATES[CANDIDATE](
            os.path.join(self.workdir, "candidate"), self.zones, label="apexd" if CANDIDATE == "apexd"
            else "candidate-" + CANDIDATE)
        kinds = {"nsd": servers.Nsd, "knot": servers.Knot, "bind": servers.Bind}
        self.references = {
            label: kinds[label](os.path.join(self.workdir, label), self.zones)
            for label in REFERENCES_OF.get(name, ("nsd", "knot"))
        }

    def start(self):
        for ref in self.references.values():
            ref.start()
        self.candidate.start()
        return self

    def stop(self):
        """Stop everything; return a list of problems found with apexd."""
        problems = []
        if self.candidate.proc is not None and not self.candidate.alive():
            problems.append("%s exited during the tests with status %s" % (
                self.candidate.label, self.candidate.proc.returncode))
        status = self.candidate.stop()
        if status not in (0, None) and not problems:
            problems.append("%s exited with status %s on SIGTERM" % (self.candidate.label, status))
        for ref in self.references.values():
            ref.stop()
        if os.path.exists(self.candidate.logpath):
            with open(self.candidate.logpath, "rb") as f:
                log = f.read().decode("utf-8", "replace")
            if SANITIZER_RE.search(log):
                problems.append("sanitizer errors in %s's log" % self.candidate.label)
        if problems:
            problems.append("last lines of its log:\n" + self.candidate.log_tail(60))
        return problems


@pytest.fixture(scope="session")
def workdir():
    d = tempfile.mkdtemp(prefix="apex-system-")
    yield d
    if os.environ.get("APEX_KEEP_TMP"):
        print("system test files kept in", d)
    else:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def server_sets(workdir):
    """A function name -> started ServerSet, started on first use.  At the
    end of the session every process is stopped; a crash of apexd, an exit
    status other than 0 on SIGTERM or a sanitizer report fails the run."""
    started = {}

    def get(name):
        if name not in started:
            s = ServerSet(name, workdir)
            started[name] = s
            try:
                s.start()
            except Exception as e:
                s.error = e
                raise
        if getattr(started[name], "error", None) is not None:
            raise RuntimeError("the %s servers failed to start: %s" % (name, started[name].error))
        return started[name]

    yield get
    problems = []
    for s in started.values():
        problems += s.stop()
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


@pytest.fixture
def tld_servers(server_sets):
    return server_sets("tld")


@pytest.fixture
def nsec3_servers(server_sets):
    return server_sets("nsec3")
