#!/usr/bin/env python3
"""site.py RESULTS [--out DIR] [--compare A B ...] - a static site of the
results `pcbench bench` and the peers stored under RESULTS/<machine>/<suite>/
(Python 3 stdlib only; no GPU, no build, seconds).

Pages: index.html (each problem's headline by machine, the machines);
problem-<p>-<input>.html (time against size, every implementation and peer,
each point marked by its verdict, the data below it by configuration, each
configuration a deep link: #<machine>--<id>); impl-<p>-<name>.html and
peer-<p>-<name>.html (everything one of them ran); compare.html (the
regression view: two machine folders figure by figure, faster / slower /
same / cannot tell, by the Mann-Whitney test `pcbench compare` uses). Every
table has a CSV beside it under data/ and each row its results file, copied
under data/json/. Charts are drawn by Chart.js, copied from ASSETS (Debian's
libjs-chart.js) into the site, never fetched; without it, or with JavaScript
off, the pages are their tables. --compare A B: two machine folders to
compare (default: every two machines of the same kind, GPU or CPU, that
share configurations)."""
import argparse
import csv
import html
import io
import json
import os
import re
import shutil
import sys
import time

import pcbproblems as P
import pcbresults as R
import pcbstats

CHART_JS = ("/usr/share/javascript/chart.js/chart.min.js", "/usr/share/nodejs/chart.js/dist/chart.min.js",
            "/usr/share/nodejs/chart.js/dist/chart.umd.js")
VERDICTS = {  # verdict: (legend words, point style, colour)
    "right": ("right (verified exact)", "circle", "#1b7837"),
    "approximate": ("approximate (within its stated gap)", "triangle", "#2166ac"),
    "wrong": ("wrong (shown, never dropped)", "crossRot", "#b2182b"),
}
PEER_WORDS = {"wrong": "wrong", "not-a-bijection": "wrong: not a bijection",
              "value-only": "approximate: a value, no answer to judge"}
ALPHA, TOLERANCE = 0.01, 0.25  # pcbench compare's defaults
GAP_FLOOR = 1e-4  # %: where an exact answer (gap 0) sits on the gap chart's log axis


def slug(text):
    return re.sub(r"[^A-Za-z0-9._-]+", "-", str(text)).strip("-")


def esc(text):
    return html.escape(str(text), quote=True)


# ---- what the results say --------------------------------------------------------------
class Point:
    """One implementation's or peer's outcome on one configuration."""

    def __init__(self, machine, suite, doc, entry, peer, src):
        cfg = doc["config"]
        self.machine, self.suite, self.cfg, self.src = machine, suite, cfg, src
        self.problem, self.dataset, self.id = cfg["problem"], cfg["dataset"], cfg["id"]
        self.peer = peer
        self.name = entry["peer"] if peer else entry["impl"]
        self.device = entry.get("device", "cpu")
        self.status = entry.get("status", "?")
        self.detail = entry.get("detail", "")
        fig = entry.get("compute") or {}
        self.ms = fig.get("median_ms") if fig else None
        self.noise = fig.get("noise")
        self.samples = {k: ((entry.get(k) or {}).get("samples_ms") or [],
                            (entry.get(k) or {}).get("clock"))
                        for k in ("compute", "compute_cold", "e2e")} if not peer else {}
        self.cold = ((entry.get("compute_cold") or {}).get("median_ms")
                     if not peer and self.status == "ok" else None)
        self.e2e = (entry.get("e2e") or {}).get("median_ms") if not peer and self.status == "ok" else None
        self.gap = None
        v = entry.get("verify") or {}
        if not peer and isinstance(v.get("bound"), (int, float)) and v["bound"] >= 0:
            self.gap = v["bound"]  # certified: the gap is at most this
        elif not peer and isinstance(v.get("gap"), (int, float)) and v["gap"] >= 0:
            self.gap = v["gap"]
        elif peer and isinstance(entry.get("gap"), (int, float)):
            self.gap = abs(entry["gap"])
        elif peer and isinstance((entry.get("bijection") or {}).get("pairs_gap"), (int, float)):
            self.gap = abs(entry["bijection"]["pairs_gap"])  # the pairs that are a bijection
        self.verdict, self.why = self._verdict(entry)
        self.when = entry.get("when", "")

    def _verdict(self, e):
        """right / approximate / wrong, with a time; else None and why not."""
        s = self.status
        if self.peer:
            if s == "ok":
                return ("right" if e.get("exact") else "approximate"), ""
            if s in ("wrong", "not-a-bijection"):  # timed or not, a wrong answer is shown
                return "wrong", PEER_WORDS[s] + ": " + self.detail
            if s == "value-only" and self.ms is not None:
                return "approximate", PEER_WORDS[s]
            return None, "%s: %s" % (s, self.detail)
        if s == "ok":
            return ("right" if e.get("exact") else "approximate"), ""
        if s == "failed-verification":
            return "wrong", "failed verification: " + self.detail
        return None, "%s: %s" % (s, self.detail)

    def anchor(self):
        return "%s--%s" % (slug(self.machine), slug(self.id))

    def command(self):
        if self.peer:
            return ("make peers SUITE=%s PROBLEM=%s PEER=%s FILTER=%s"
                    % (self.suite, self.problem, self.name, self.id))
        return "pcbench bench --suite %s --filter %s --impl %s --force" % (
            self.suite, self.id, self.name)

    def label(self):
        return self.name + (" (peer)" if self.peer and self.name != R.OURS_PY else
                            " (from Python)" if self.peer else "")


def config_words(cfg):
    """A configuration in words, less its problem and input: '32 x 1024, k = 16',
    'first: 1 x 120000, 4096 centres' (what else the words name is kept)."""
    words = P.TABLE[cfg["problem"]].words(cfg)
    if ": " not in words:
        return words
    head, sizes = words.split(": ", 1)
    rest = [w for w in head.split() if w not in (cfg["problem"], cfg["dataset"])]
    return "%s: %s" % (" ".join(rest), sizes) if rest else sizes


def collect(root):
    """Every point, and each machine's environment, from root."""
    points, envs = [], {}
    for peer in (False, True):
        for machine, suites in R.load(root, peers=peer).items():
            for suite, docs in suites.items():
                for doc in docs:
                    for e in doc.get("results", []):
                        points.append(Point(machine, suite, doc, e, peer, doc["_file"]))
                    env = doc.get("env") or {}
                    if not peer and env.get("date", "") >= envs.get(machine, {}).get("date", ""):
                        envs[machine] = env
    return points, envs


# ---- the pages' pieces -------------------------------------------------------------------
STYLE = """body{font-family:system-ui,sans-serif;margin:1.2em auto;max-width:76em;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.9em}th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
th{background:#f2f2f2}tbody:target{outline:3px solid #e08214}tbody:target th{background:#fee0b6}
code{font-size:.85em}.right{color:#1b7837}.wrong{color:#b2182b;font-weight:bold}.approximate{color:#2166ac}.none{color:#777}
nav a{margin-right:1em}.chart{position:relative;height:26em;margin:1em 0}.small{font-size:.85em;color:#555}"""


def page(title, body, charts=False, depth=""):
    head = ('<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>%s</title>'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<style>%s</style></head><body>\n<nav><a href="%sindex.html">pcbench results</a>'
            '<a href="%scompare.html">regression view</a></nav>\n<h1>%s</h1>\n'
            % (esc(title), STYLE, depth, depth, esc(title)))
    tail = ""
    if charts:
        tail = ('<script src="%sassets/chart.min.js"></script>\n<script src="%sassets/charts.js"></script>\n'
                % (depth, depth))
    return head + body + tail + "</body></html>\n"


def table(head, rows, row_attrs=None):
    out = ["<table><thead><tr>%s</tr></thead>" % "".join("<th>%s</th>" % esc(h) for h in head)]
    out.append("<tbody>")
    for r in rows:
        out.append("<tr>%s</tr>" % "".join("<td>%s</td>" % c for c in r))
    out.append("</tbody></table>")
    return "\n".join(out)


def write_csv(out, name, head, rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(head)
    w.writerows(rows)
    write(os.path.join(out, "data", name), buf.getvalue())
    return "data/" + name


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def verdict_cell(p):
    if p.verdict is None:
        return '<span class="none">not timed: %s</span>' % esc(p.why[:300])
    words = VERDICTS[p.verdict][0].split(" (")[0]
    if p.gap is not None and p.problem == "emd":
        words += ", gap %s %.3g%%" % ("at most" if not p.peer else "", 100 * p.gap)
    extra = (": " + esc(p.why[:200])) if p.verdict == "wrong" and p.why else ""
    if p.ms is None:
        extra += " (not timed)"
    return '<span class="%s">%s</span>%s' % (p.verdict, esc(words), extra)


def ms_cell(v, noise=None):
    if v is None:
        return "-"
    text = R.fmt_ms(v)
    if isinstance(noise, (int, float)) and noise == noise and noise > 0:
        text += " &plusmn;%.2g%%" % (100 * noise)
    return text


def chart_block(cid, title, spec):
    """A canvas with its data (the series, their points) beside it as JSON."""
    return ('<div class="chart"><canvas id="%s" data-series="%d" aria-label="%s"></canvas></div>\n'
            '<script type="application/json" id="%s-data">%s</script>\n'
            % (cid, len(spec["datasets"]), esc(title), cid, json.dumps(spec).replace("</", "<\\/")))


COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd"]


def series(points, x_of, xlabel, log_x=False):
    """Chart.js data: a series a name, a point a timed outcome, styled by verdict."""
    names = []
    for p in points:
        if p.ms is not None and p.verdict and p.label() not in names:
            names.append(p.label())
    datasets = []
    for i, name in enumerate(names):
        mine = [p for p in points if p.label() == name and p.ms is not None and p.verdict]
        datasets.append({
            "label": name, "borderColor": COLOURS[i % len(COLOURS)],
            "backgroundColor": COLOURS[i % len(COLOURS)], "showLine": not log_x,
            "data": [{"x": x_of(p), "y": p.ms, "verdict": p.verdict, "config": p.id,
                      "noise": p.noise, "anchor": p.anchor()} for p in mine],
            "pointStyle": [VERDICTS[p.verdict][1] for p in mine],
            "pointBorderColor": [VERDICTS[p.verdict][2] if p.verdict != "right" else
                                 COLOURS[i % len(COLOURS)] for p in mine],
            "pointRadius": [7 if p.verdict == "wrong" else 4 for p in mine]})
    return {"datasets": datasets, "xlabel": xlabel, "logx": log_x}


# ---- the pages ------------------------------------------------------------------------------
def problem_pages(out, points, envs):
    """A page a problem and input: per machine, a chart and the data by configuration."""
    pages = {}
    for p in points:
        pages.setdefault((p.problem, p.dataset), []).append(p)
    links = {}
    for (prob, dataset), pts in sorted(pages.items(), key=lambda kv: (R.PROBLEMS.index(kv[0][0]), kv[0][1])):
        name = "problem-%s-%s.html" % (prob, slug(dataset))
        links[(prob, dataset)] = name
        body = ['<p class="small">Compute times (median; CUDA events on the GPU, wall clock on the CPU) '
                'of every implementation and peer, each point marked by its verdict: %s. Points not timed '
                'are in the table with the reason. Hover a point for its figure and noise; click a legend '
                'entry to hide a series.</p>' % ", ".join(
                    '<span class="%s">%s</span>' % (v, esc(w[0])) for v, w in VERDICTS.items())]
        for machine in sorted({p.machine for p in pts}):
            mine = [p for p in pts if p.machine == machine]
            configs = []
            for p in sorted(mine, key=lambda p: (R.work(p.cfg), p.id)):
                if p.id not in [c.id for c in configs]:
                    configs.append(p)
            body.append('<h2 id="%s">%s</h2><p class="small">%s</p>' % (
                slug(machine), esc(machine), esc(machine_line(envs.get(machine, {})))))
            order = {c.id: i for i, c in enumerate(configs)}
            labels = ["%s [%s]" % (config_words(c.cfg), c.suite) for c in configs]
            if prob == "emd":  # the Pareto front: time against the gap each answer is within
                placed = [p for p in mine if p.gap is not None or (p.verdict == "right" and not p.peer)]
                spec = series(placed, lambda p: max(100 * (p.gap or 0), GAP_FLOOR),
                              "gap to the optimum, %% (certified bound, or measured; exact at %g)"
                              % GAP_FLOOR, log_x=True)
                title = "%s %s on %s: time against gap" % (prob, dataset, machine)
                body.append(chart_block("c-" + slug(machine), title, spec))
                unplaced = sorted({p.label() for p in mine if p not in placed and p.ms is not None})
                if unplaced:
                    body.append('<p class="small">Not on the gap chart (no gap to place them at: '
                                'see their verdicts below): %s.</p>' % esc(", ".join(unplaced)))
            spec = series(mine, lambda p: labels[order[p.id]], "configuration (ordered by work)")
            spec["labels"] = labels
            body.append(chart_block("s-" + slug(machine), "%s %s on %s: time against size"
                                    % (prob, dataset, machine), spec))
            head = ["implementation or peer", "verdict", "compute ms", "cold ms", "end-to-end ms",
                    "command", "results file"]
            rows_csv = []
            body.append('<p>Configurations: %s</p>' % " &middot; ".join(
                '<a href="#%s">%s</a>' % (c.anchor(), esc(config_words(c.cfg))) for c in configs))
            body.append("<table><thead><tr>%s</tr></thead>" % "".join("<th>%s</th>" % h for h in head))
            for c in configs:
                rows = [p for p in mine if p.id == c.id]
                rows.sort(key=lambda p: (p.peer, p.ms is None, p.ms or 0))
                body.append('<tbody id="%s"><tr><th colspan="%d">%s [suite %s] <code>%s</code></th></tr>'
                            % (c.anchor(), len(head), esc(config_words(c.cfg)), esc(c.suite), esc(c.id)))
                for p in rows:
                    link = "impl" if not p.peer else "peer"
                    body.append("<tr><td><a href=\"%s-%s-%s.html\">%s</a></td><td>%s</td><td>%s</td>"
                                "<td>%s</td><td>%s</td><td><code>%s</code></td><td><a href=\"data/json/%s\">"
                                "JSON</a></td></tr>" % (
                                    link, prob, slug(p.name), esc(p.label()), verdict_cell(p),
                                    ms_cell(p.ms, p.noise), ms_cell(p.cold), ms_cell(p.e2e),
                                    esc(p.command()), esc(p.src)))
                    rows_csv.append([machine, p.suite, p.id, p.name, "peer" if p.peer else "pcbench",
                                     p.device, p.verdict or "not timed", p.ms, p.noise, p.cold, p.e2e,
                                     p.gap, p.command(), p.why])
                body.append("</tbody>")
            body.append("</table>")
            csv_name = write_csv(out, "%s-%s-%s.csv" % (prob, slug(dataset), slug(machine)),
                                 ["machine", "suite", "configuration", "name", "kind", "device",
                                  "verdict", "compute_ms", "noise", "cold_ms", "e2e_ms", "gap",
                                  "command", "why"], rows_csv)
            body.append('<p class="small">The data: <a href="%s">CSV</a>.</p>' % csv_name)
        write(os.path.join(out, name), page("%s: %s inputs" % (prob, dataset), "\n".join(body), True))
    return links


def machine_line(env):
    gpu = env.get("gpu") or {}
    smi = [f.strip() for f in str(env.get("nvidia_smi", "")).split(",")]
    parts = []
    if gpu.get("name"):
        drv = gpu.get("cuda_driver")
        parts.append("%s, driver %s, CUDA %s, SM clock max %s, power limit %s" % (
            gpu["name"], smi[1] if len(smi) > 1 else "?",
            "%d.%d" % (drv // 1000, drv % 1000 // 10) if isinstance(drv, int) and drv > 0 else "?",
            smi[3] if len(smi) > 3 else "?", smi[6] if len(smi) > 6 else "?"))
    parts.append("%s x %s cores" % (env.get("cpu", "?"), env.get("cores", "?")))
    parts.append("last measured %s, commit %s" % (env.get("date", "?"), env.get("git", "?")))
    return "; ".join(parts)


def who_pages(out, points, links):
    """A page an implementation or peer: every configuration it ran, by machine."""
    groups = {}
    for p in points:
        groups.setdefault((p.peer, p.problem, p.name), []).append(p)
    made = {}
    for (peer, prob, name), pts in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
        fname = "%s-%s-%s.html" % ("peer" if peer else "impl", prob, slug(name))
        made[(peer, prob, name)] = fname
        body = ['<p>%s %s of %s: every configuration it ran, its verdict, its compute figure (median '
                '&plusmn; noise: the median\'s relative standard error), cold and end-to-end.</p>' % (
                    "The peer" if peer else "The implementation", esc(name), esc(prob))]
        for machine in sorted({p.machine for p in pts}):
            mine = sorted((p for p in pts if p.machine == machine), key=lambda p: (R.work(p.cfg), p.id))
            body.append("<h2>%s</h2>" % esc(machine))
            rows = [['<a href="%s#%s">%s</a>' % (links[(prob, p.dataset)], p.anchor(),
                                                 esc("%s: %s" % (p.dataset, config_words(p.cfg)))),
                     esc(p.suite), verdict_cell(p), ms_cell(p.ms, p.noise), ms_cell(p.cold),
                     ms_cell(p.e2e), "<code>%s</code>" % esc(p.command())] for p in mine]
            body.append(table(["configuration", "suite", "verdict", "compute ms", "cold ms",
                               "end-to-end ms", "command"], rows))
            csv_name = write_csv(out, "%s-%s-%s-%s.csv" % ("peer" if peer else "impl", prob, slug(name),
                                                           slug(machine)),
                                 ["configuration", "suite", "verdict", "compute_ms", "noise", "cold_ms",
                                  "e2e_ms", "command"],
                                 [[p.id, p.suite, p.verdict or "not timed", p.ms, p.noise, p.cold,
                                   p.e2e, p.command()] for p in mine])
            body.append('<p class="small">The data: <a href="%s">CSV</a>.</p>' % csv_name)
        write(os.path.join(out, fname), page("%s (%s, %s)" % (name, prob, "peer" if peer else "pcbench"),
                                             "\n".join(body)))
    return made


def index_page(out, points, envs, links, who, compared):
    body = ['<p>Every problem, input, implementation and peer pcbench has measured, with its verdict: '
            'the answer judged by pcbench\'s double-precision validators before it was timed. '
            'Built by <code>make site</code> from the results files alone.</p>', "<h2>Headlines</h2>"]
    rows = []
    for prob in R.PROBLEMS:
        for machine in sorted(envs):
            mine = [p for p in points if p.problem == prob and p.machine == machine]
            if not mine:
                continue
            # EMD's own answers are certified within a gap: right within it, as its peers' values
            fine = ("right", "approximate") if prob == "emd" else ("right",)
            ours = [p for p in mine if not p.peer and p.verdict in fine and p.ms is not None]
            if not ours:
                continue
            # the largest configuration measured with a right peer beside it, else the largest
            def best_on(cid, peer):
                c = [p for p in mine if p.id == cid and p.peer == peer and p.ms is not None and
                     p.verdict == "right" and p.name != R.OURS_PY]
                return min(c, key=lambda p: p.ms) if c else None
            ids = sorted({p.id for p in ours}, key=lambda i: R.work(next(p.cfg for p in ours if p.id == i)))
            with_peer = [i for i in ids if best_on(i, True)]
            cid = (with_peer or ids)[-1]
            o = min((p for p in ours if p.id == cid), key=lambda p: p.ms)
            peer = best_on(cid, True)
            py = [p for p in mine if p.id == cid and p.peer and p.name == R.OURS_PY and p.ms is not None]
            rows.append(['<a href="%s#%s">%s %s: %s</a>' % (links[(prob, o.dataset)], o.anchor(), esc(prob),
                                                             esc(o.dataset), esc(config_words(o.cfg))),
                         esc(machine), '<a href="impl-%s-%s.html">%s</a> %s' % (prob, slug(o.name), esc(o.name),
                                                                                   R.fmt_ms(o.ms)),
                         ('<a href="peer-%s-%s.html">%s</a> %s' % (prob, slug(peer.name), esc(peer.name),
                                                                    R.fmt_ms(peer.ms)) if peer else "none measured"),
                         (R.fmt_x(peer.ms / o.ms) + (" (%s from Python, %s ms)" % (
                             R.fmt_x(peer.ms / py[0].ms), R.fmt_ms(py[0].ms)) if py else "")) if peer else "-"])
    body.append(table(["largest configuration with a peer (else the largest)", "machine",
                       "fastest right pcbench, ms (EMD: certified within its gap)",
                       "fastest right peer, ms", "ratio (pcbench called from Python)"], rows))
    body.append("<h2>Problems</h2>")
    rows = []
    for prob in R.PROBLEMS:
        inputs = [(d, n) for (p, d), n in links.items() if p == prob]
        if not inputs:
            continue
        count = lambda d: len({(p.machine, p.id) for p in points if p.problem == prob and p.dataset == d})
        rows.append([esc(prob), ", ".join('<a href="%s">%s</a> (%d)' % (n, esc(d), count(d)) for d, n in inputs),
                     ", ".join('<a href="%s">%s</a>' % (f, esc(n)) for (peer, p, n), f in who.items()
                               if p == prob and not peer),
                     ", ".join('<a href="%s">%s</a>' % (f, esc(n)) for (peer, p, n), f in who.items()
                               if p == prob and peer)])
    body.append(table(["problem", "inputs (configurations measured)", "implementations", "peers"], rows))
    body.append("<h2>Machines</h2>")
    body.append(table(["machine", "hardware, software, date"],
                      [[esc(m), esc(machine_line(envs[m]))] for m in sorted(envs)]))
    body.append('<p><a href="compare.html">The regression view</a>: %s.</p>' % (
        esc(", ".join("%s against %s" % (b, a) for a, b in compared)) or "no two machines to compare"))
    write(os.path.join(out, "index.html"), page("pcbench results", "\n".join(body)))


def compare_page(out, points, pairs):
    """Two machine folders figure by figure: faster, slower, same, cannot tell."""
    body = ['<p>Each figure both runs measured on the same configuration and implementation, compared '
            'as <code>pcbench compare</code> compares them: a Mann-Whitney test over the samples '
            '(p &lt; %g) and the Hodges-Lehmann ratio of the times beyond %d%%. <b>cannot tell</b>: too '
            'few samples a side ever to reach significance.</p>' % (ALPHA, 100 * TOLERANCE)]
    made = []
    for a, b in pairs:
        pa = {(p.suite, p.id, p.name): p for p in points if p.machine == a and not p.peer}
        pb = {(p.suite, p.id, p.name): p for p in points if p.machine == b and not p.peer}
        rows, tally, data = [], {}, []
        for key in sorted(set(pa) & set(pb), key=lambda k: (R.work(pa[k].cfg), k)):
            for fig in ("compute", "compute_cold", "e2e"):
                (sa, ca), (sb, cb) = pa[key].samples[fig], pb[key].samples[fig]
                if not sa and not sb:
                    continue  # a figure neither run takes
                word, ratio, pv = pcbstats.verdict(sa, sb, ALPHA, TOLERANCE) if ca == cb else (
                    "cannot tell", None, None)
                tally[word] = tally.get(word, 0) + 1
                ma, mb = pcbstats.median(sa), pcbstats.median(sb)
                rows.append([esc(key[0]), esc(key[1]), esc(key[2]), esc(fig), R.fmt_ms(ma),
                             R.fmt_ms(mb), "%.3gx" % ratio if ratio else "-",
                             "%.2g" % pv if pv is not None else "-",
                             '<span class="%s">%s</span>' % (
                                 {"faster": "right", "slower": "wrong"}.get(word, "none"), word)])
                data.append([key[0], key[1], key[2], fig, ma, mb, ratio, pv, word])
        made.append((a, b, len(rows)))
        body.append("<h2>%s against %s</h2><p>%s</p>" % (esc(b), esc(a), esc(", ".join(
            "%d %s" % (n, w) for w, n in sorted(tally.items())) or "no figure in common")))
        body.append(table(["suite", "configuration", "implementation", "figure", "%s ms" % a,
                           "%s ms" % b, "ratio", "p", "verdict"], rows))
        csv_name = write_csv(out, "compare-%s-%s.csv" % (slug(a), slug(b)),
                             ["suite", "configuration", "implementation", "figure", "a_ms", "b_ms",
                              "ratio", "p", "verdict"], data)
        body.append('<p class="small">The data: <a href="%s">CSV</a>.</p>' % csv_name)
    write(os.path.join(out, "compare.html"), page("Regression view", "\n".join(body)))
    return made


CHARTS_JS = r"""// Draws each canvas from the JSON beside it (Chart.js, vendored in assets/).
(function () {
  if (typeof Chart === "undefined") return;  // the tables stand alone
  document.querySelectorAll("canvas[data-series]").forEach(function (canvas) {
    var spec = JSON.parse(document.getElementById(canvas.id + "-data").textContent);
    var x = spec.labels ? {type: "category", labels: spec.labels, title: {display: true, text: spec.xlabel},
                           ticks: {autoSkip: spec.labels.length > 30, maxRotation: 60, minRotation: 30}}
                        : {type: spec.logx ? "logarithmic" : "linear", title: {display: true, text: spec.xlabel}};
    new Chart(canvas, {
      type: "scatter",
      data: {labels: spec.labels, datasets: spec.datasets},
      options: {
        responsive: true, maintainAspectRatio: false, animation: false,
        scales: {x: x, y: {type: "logarithmic", title: {display: true, text: "compute, ms (log)"}}},
        plugins: {tooltip: {callbacks: {label: function (c) {
          var d = c.raw;
          return c.dataset.label + ": " + d.y.toPrecision(3) + " ms" +
                 (d.noise ? " \u00b1" + (100 * d.noise).toPrecision(2) + "%" : "") +
                 " (" + d.verdict + ") " + d.config;
        }}}},
        onClick: function (e, items) {
          if (items.length) location.hash = spec.datasets[items[0].datasetIndex].data[items[0].index].anchor;
        }
      }
    });
  });
})();
"""


def pairs_of(points):
    """Every two machines of one kind (GPU, CPU) with a figure in common."""
    keys = {}
    for p in points:
        if not p.peer and p.samples["compute"][0]:
            keys.setdefault(p.machine, set()).add((p.suite, p.id, p.name))
    machines = sorted(keys)
    return [(a, b) for i, a in enumerate(machines) for b in machines[i + 1:]
            if a.startswith("gpu-") == b.startswith("gpu-") and keys[a] & keys[b]]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("--out", default=None, help="the site's folder (default RESULTS/site)")
    ap.add_argument("--compare", nargs=2, action="append", metavar=("A", "B"),
                    help="two machine folders of RESULTS to compare (repeatable)")
    ap.add_argument("--assets", default=None, help="Chart.js to vendor (default: Debian's libjs-chart.js)")
    args = ap.parse_args(argv[1:])
    started = time.time()
    out = args.out or os.path.join(args.results, "site")
    if os.path.isdir(out):
        shutil.rmtree(out)
    points, envs = collect(args.results)
    if not points:
        print("site: no results under %s" % args.results, file=sys.stderr)
        return 1
    # the results files, beside the pages that link them
    for src in sorted({p.src for p in points}):
        dst = os.path.join(out, "data", "json", src)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(os.path.join(args.results, src), dst)
    chart = next((c for c in ([args.assets] if args.assets else CHART_JS) if c and os.path.exists(c)), None)
    os.makedirs(os.path.join(out, "assets"), exist_ok=True)
    if chart:
        shutil.copyfile(chart, os.path.join(out, "assets", "chart.min.js"))
    else:
        write(os.path.join(out, "assets", "chart.min.js"),
              "// Chart.js was not found (apt-get install libjs-chart.js): the pages are their tables\n")
    write(os.path.join(out, "assets", "charts.js"), CHARTS_JS)
    pairs = [tuple(p) for p in args.compare] if args.compare else pairs_of(points)
    links = problem_pages(out, points, envs)
    who = who_pages(out, points, links)
    compared = compare_page(out, points, pairs)
    index_page(out, points, envs, links, who, [(a, b) for a, b, _ in compared])
    pages = sum(1 for n in os.listdir(out) if n.endswith(".html"))
    print("site: %d pages of %d results (%d machines) in %s, in %.1f s%s" % (
        pages, len(points), len(envs), out, time.time() - started,
        "" if chart else "; no Chart.js here (apt-get install libjs-chart.js): tables only"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
