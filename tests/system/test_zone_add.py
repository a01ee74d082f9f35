# SPDX-License-Identifier: BSD-3-Clause
"""apexctl zone-add and zone-remove (NSD's addzone and delzone).

apexd, with a `zone-list-file` and patterns, serves a zone zone-add names
with a pattern's settings (here: a secondary of an apexd primary), keeps
it in the list file in NSD's zone.list form, and serves it again after a
restart from its copy, without transferring it again; zone-remove takes
it out and deletes its files.  A zone of the configuration file or of a
catalog is neither added nor removed this way.  The same restart checks
that a catalog's members are not transferred again either.
"""

import os
import re
import time

import servers
from test_catalog import (CATALOG, ApexdProducer, Catalog, ConsumerApexd, Pattern, axfr,
                          catalog_text, log_text, member, member_text, procs,  # noqa: F401
                          records, start, wait_path, wait_refused, wait_served)
from test_secondary import apexctl


class ListApexd(ConsumerApexd):
    """The catalog consumer of test_catalog.py with a zone-list-file."""

    def __init__(self, workdir, port, patterns, catalogs, list_file=True):
        super().__init__(workdir, port, patterns, catalogs)
        self.list_file = os.path.join(workdir, "zone.list") if list_file else None

    def config(self):
        text = super().config()
        if self.list_file is None:
            return text
        return text.replace("server:\n", 'server:\n\tzone-list-file: "%s"\n' % self.list_file, 1)

    def listed(self):
        with open(self.list_file) as f:
            return [line.split() for line in f if line.startswith("add ")]


def primary_zones():
    """The primary's zones: a catalog listing m1.test., and two zones no
    catalog lists."""
    return {CATALOG: catalog_text(CATALOG, 1, [member("m1", "m1.test.")]),
            "m1.test.": member_text("m1.test.", 1),
            "a.test.": member_text("a.test.", 1, "a"),
            "b.test.": member_text("b.test.", 1, "b")}


def start_pair(procs, tmp, list_file=True):
    apex_port = servers.free_port()
    primary = start(procs, ApexdProducer(os.path.join(tmp, "primary"), primary_zones(),
                                         apex_port))
    for origin in primary_zones():
        primary.check_serves(origin)
    xfr = ["provide-xfr: 127.0.0.0/8 NOKEY"]  # for the content's comparison
    patterns = [Pattern("members", "%s.zone", primary.port, xfr),
                Pattern("other", "other-%s.zone", primary.port, xfr)]
    apex = start(procs, ListApexd(os.path.join(tmp, "apexd"), apex_port, patterns,
                                  [Catalog(CATALOG, "members", primary.port)], list_file))
    wait_served(apex, "m1.test.", 1)
    return primary, apex


def ok(apex, *args):
    r = apexctl(apex, *args)
    assert r.returncode == 0, (args, r.stdout, r.stderr, apex.log_tail(20))
    return r.stdout


def refused(apex, *args):
    r = apexctl(apex, *args)
    assert r.returncode == 1, (args, r.stdout, r.stderr)
    return r.stderr


def test_zone_add_served_kept_and_removed(procs, tmp_path):
    """zone-add serves a.test. with the pattern "other" (its copy in
    other-a.test.zone, content equal to the primary's) and lists it in the
    zone-list-file; after a restart a.test. and the catalog's m1.test. are
    served from their copies, neither transferred again; zone-remove takes
    a.test. out (REFUSED), deletes its copy and unlists it, and a restart
    does not bring it back."""
    primary, apex = start_pair(procs, tmp_path)
    out = ok(apex, "zone-add", "a.test", "other")
    assert "added" in out
    wait_served(apex, "a.test.", 1)
    copy = apex.path("other-%s.zone", "a.test.")
    wait_path(apex, copy)
    assert records(axfr(apex.port, "a.test.")) == records(axfr(primary.port, "a.test."))
    assert apex.listed() == [["add", "a.test.", "other"]]
    assert not os.path.exists(apex.path("%s.zone", "a.test."))

    # a restart (its log starts anew), the primary still up: served from
    # the copies, no AXFR
    assert apex.stop() == 0, apex.log_tail(40)
    apex.start()
    wait_served(apex, "a.test.", 1)
    wait_served(apex, "m1.test.", 1)
    time.sleep(1)  # a first check that would transfer again has had its time
    after = log_text(apex)
    assert "zone a.test.: AXFR" not in after, after
    assert "zone m1.test.: AXFR" not in after, after
    assert re.search(r"zone a\.test\. loaded from .*other-a\.test\.zone", after), after

    out = ok(apex, "zone-remove", "a.test.")
    assert "removed" in out
    wait_refused(apex, "a.test.")
    deadline = time.monotonic() + 20
    while os.path.exists(copy) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(copy), os.listdir(apex.workdir)
    assert apex.listed() == []
    assert apex.stop() == 0, apex.log_tail(40)
    apex.start()
    wait_served(apex, "m1.test.", 1)
    wait_refused(apex, "a.test.")


def test_zone_add_refusals(procs, tmp_path):
    """What zone-add and zone-remove refuse, each with its reason, leaving
    the list as it was: an unknown pattern, a zone of the configuration
    file (the catalog), a catalog's member, a zone added twice; removing a
    zone never added, a catalog's member or a zone of the file."""
    primary, apex = start_pair(procs, tmp_path)
    assert "no pattern named nosuch" in refused(apex, "zone-add", "a.test", "nosuch")
    assert "is in the configuration file" in refused(apex, "zone-add", CATALOG, "members")
    assert "is a member of catalog %s" % CATALOG in refused(apex, "zone-add", "m1.test",
                                                             "members")
    ok(apex, "zone-add", "b.test", "members")
    assert "was added already" in refused(apex, "zone-add", "b.test", "other")
    assert "was not added by zone-add" in refused(apex, "zone-remove", "a.test")
    assert "is a member of catalog" in refused(apex, "zone-remove", "m1.test")
    assert "is in the configuration file" in refused(apex, "zone-remove", CATALOG)
    assert apex.listed() == [["add", "b.test.", "members"]]
    wait_served(apex, "b.test.", 1)
    wait_refused(apex, "a.test.")
    wait_served(apex, "m1.test.", 1)


def test_zone_add_needs_a_list_file(procs, tmp_path):
    """Without a zone-list-file, zone-add is refused: a zone it added would
    not be served after a restart."""
    primary, apex = start_pair(procs, tmp_path, list_file=False)
    err = refused(apex, "zone-add", "a.test", "members")
    assert "zone-list-file" in err
    wait_refused(apex, "a.test.")


def test_catalog_removed_from_configuration(procs, tmp_path):
    """A catalog taken out of the configuration by reconfig: its member
    m1.test. is no longer served and its copy is deleted; a zone zone-add
    added stays."""
    primary, apex = start_pair(procs, tmp_path)
    ok(apex, "zone-add", "b.test", "members")
    wait_served(apex, "b.test.", 1)
    copy = apex.path("%s.zone", "m1.test.")
    wait_path(apex, copy)
    apex.catalogs_kept = apex.catalogs
    apex.catalogs = []
    with open(apex.conf, "w") as f:
        f.write(apex.config())
    ok(apex, "reconfig")
    wait_refused(apex, "m1.test.")
    wait_refused(apex, CATALOG)
    deadline = time.monotonic() + 20
    while os.path.exists(copy) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(copy), os.listdir(apex.workdir)
    wait_served(apex, "b.test.", 1)
