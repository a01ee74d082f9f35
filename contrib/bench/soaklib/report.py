# SPDX-License-Identifier: BSD-3-Clause
"""The soak's table (Markdown) and the list of what failed."""

from . import checks

MiB = 1 << 20


def loss_pct(r):
    return 100.0 * r["lost"] / r["sent"] if r.get("sent") else 0.0


def fmt_loss(results):
    return "UDP %.3f%% of %d, TCP %.3f%% of %d" % (
        loss_pct(results["udp"]), results["udp"]["sent"],
        loss_pct(results["tcp"]), results["tcp"]["sent"])


def trend(soak):
    """RSS and descriptors after warm-up (the first minute of churn, or its
    first third if shorter): (samples, RSS slope in MiB/h, descriptor slope
    per hour, warm-up seconds, seconds fitted)."""
    churn = [s for s in soak.resources.samples if s[1] == "churn"]
    if len(churn) < 2:
        return [], 0.0, 0.0, 0.0, 0.0
    warmup = min(60.0, (churn[-1][0] - churn[0][0]) / 3)
    after = [s for s in churn if s[0] >= churn[0][0] + warmup]
    rss = checks.slope([(t, r) for t, _, r, _ in after]) * 3600 / MiB
    fds = checks.slope([(t, f) for t, _, _, f in after]) * 3600
    return after, rss, fds, warmup, after[-1][0] - after[0][0] if after else 0.0


def report(soak):
    a = soak.args
    rows, failures = [], []

    def row(check, value, bound="", ok=True, why=None):
        rows.append([check, value, bound, "ok" if ok else "FAIL"])
        if not ok:
            failures.append(why or "%s: %s" % (check, value))

    res = soak.results
    rows.append(["zone nu.", soak.nu_zone, "", ""])
    rows.append(["duration", "%.0f s baseline + %.0f s churn (apexd served every zone %.1f s "
                 "after start)" % (soak.baseline_s, soak.churn_s, soak.load_seconds), "", ""])
    rows.append(["load", "%.0f q/s UDP + %.0f q/s TCP (capacity %s)" % (
        soak.udp_qps, soak.tcp_qps, "%.0f q/s" % soak.capacity if soak.capacity else
        "not measured: --qps"), "", ""])
    row("answers lost, baseline", fmt_loss(res["baseline"]))
    extra = max(loss_pct(res["churn"][t]) - loss_pct(res["baseline"][t]) for t in ("udp", "tcp"))
    row("answers lost, churn", fmt_loss(res["churn"]), "+%.1f points" % a.loss_bound,
        extra <= a.loss_bound)
    c = soak.churn
    row("IXFRs made (nu. / root)", "%d / %d" % (c.ixfrs["nu."], c.ixfrs["."]), "> 0",
        c.ixfrs["nu."] > 0)
    row("zone-file reloads", str(c.reloads), "> 0 if the churn lasts 30 s",
        c.reloads > 0 or soak.churn_s < a.reload_interval + 5)
    row("reconfigs (zone added or removed, checked)", str(c.reconfigs))
    row("metrics scrapes", str(c.scrapes), "> 0", c.scrapes > 0)
    row("vanishing TCP clients", str(c.tcp_clients))
    for name, task in soak.tasks.items():
        if task.failures:
            t, msg = task.failures[0]
            row("failures of: " + name, "%d (first at %.0f s: %s)" % (len(task.failures), t, msg),
                "0", False)
    caught = ", ".join("%s %s/%s" % (o, s, last) for o, (s, last) in soak.caught_up.items())
    row("last serial served (served/made)", caught, "equal",
        all(s == last for s, last in soak.caught_up.values()))
    s = soak.sampler
    row("answers checked against their serial", "%d checked, %d wrong, %d unanswered" % (
        s.checked, len(s.wrong), s.timeouts), "0 wrong", not s.wrong and s.checked > 0)
    for t, text in s.wrong[:20]:
        failures.append("wrong answer at %.0f s: %s" % (t, text))
    frames = 'apex_dnstap_frames_total{outcome="%s"}'
    m = soak.final_metrics
    written, dropped = m.get(frames % "written", 0), m.get(frames % "dropped", 0)
    col = soak.dnstap
    row("dnstap frames received (apexd's last scrape: written, dropped by the workers)",
        "%d (%d, %d); %d connection(s)" % (col["frames"], written, dropped,
                                           col["connections"]),
        ">= written, none malformed", col["frames"] >= written > 0 and
        col["bad_frames"] == 0 and not col["errors"],
        "dnstap: %d frames received, %d written, %d malformed, errors %s" % (
            col["frames"], written, col["bad_frames"], col["errors"]))
    for phase in ("baseline", "churn"):
        gap, at = soak.prober.longest.get(phase, (0.0, 0.0))
        sent = soak.prober.sent.get(phase, 0)
        answered = soak.prober.answered.get(phase, 0)
        row("longest gap in answers, %s" % phase, "%.0f ms (at %.0f s; %d/%d probes answered)" % (
            gap * 1000, at, answered, sent))
    after, rss_slope, fd_slope, warmup, fitted = trend(soak)
    samples = soak.resources.samples
    if samples:
        rss = [r for _, _, r, _ in samples]
        fds = [f for _, _, _, f in samples]
        # the bound is on the rise of the fitted line over the seconds
        # fitted: a version being built or a copy being written comes and
        # goes within seconds, and in a short run it moves the slope more
        # than a slow leak would
        rss_rise = rss_slope * fitted / 3600
        fd_rise = fd_slope * fitted / 3600
        row("RSS (first, max, last)", "%.0f, %.0f, %.0f MiB" % (
            rss[0] / MiB, max(rss) / MiB, rss[-1] / MiB))
        row("RSS after %.0f s of churn: least-squares slope" % warmup,
            "%+.1f MiB/h, %+.1f MiB over %.0f s" % (rss_slope, rss_rise, fitted),
            "rise <= %.0f MiB" % a.rss_bound, rss_rise <= a.rss_bound)
        row("open descriptors (first, max, last)", "%d, %d, %d" % (fds[0], max(fds), fds[-1]))
        row("descriptors after %.0f s of churn: least-squares slope" % warmup,
            "%+.1f /h, %+.1f over %.0f s" % (fd_slope, fd_rise, fitted),
            "rise <= %.0f" % a.fd_bound, fd_rise <= a.fd_bound)
    row("apexd's exit on SIGTERM", str(soak.apexd_exit), "0", soak.apexd_exit == 0)
    row("log: warnings and errors caused by the soak", str(len(soak.explained)))
    row("log: warnings and errors unexplained", str(len(soak.unexplained)), "0",
        not soak.unexplained)
    for level, text in soak.unexplained[:20]:
        failures.append("log %s: %s" % (level, text))
    lines = _table(["check", "value", "bound", "verdict"], rows)
    causes = {}
    for _, _, cause in soak.explained:
        causes[cause] = causes.get(cause, 0) + 1
    if causes:
        lines += "\n\nExpected log lines: " + "; ".join("%d %s" % (n, c) for c, n in
                                                          causes.items())
    return lines, failures


def _table(headers, rows):
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)
