#!/usr/bin/env python3
"""plots.py RESULTS - draw RESULTS/plots/<machine>-<plot>.png and .svg with gnuplot
from the results `pcbench bench` stored under RESULTS/<machine>/<suite>/.

  fps-time-vs-points   compute time against cloud size (batch 1, m = n/10)
  fps-speedup-vs-batch speedup over the serial reference against batch size
                       (n = 10000, m = 1000), with the documents' CUDA speedup
  nn-time              compute and end-to-end time per implementation for the
                       largest lidar pair (120k x 120k in the seed suite)
  nn-time-vs-points    compute time against cloud size
  emd-time-vs-n        compute time against points per cloud (batch 1)
  emd-gap-vs-n         cost above the exact optimum against n (batch 1)
  emd-time-vs-bound-n* EMD as a loss: cuda_auction's time against its certified
                       bound (0.1% to 5%), batch 32 x 1024 and x 4096, peers placed
                       by their gap or marked "not a bijection"
  peers-<problem>      compute time of our fastest verified implementation beside
                       every peer that answered right (scripts/peers/), suites seed
                       and full
Times from different suites are separate runs (the CPU of a shared host runs at
different speeds from one run to the next), so each suite gets its own line: the
same colour, dashed for the second suite. Costs and bounds are deterministic, so
those plots merge the suites. A line needs at least two points; a plot is drawn
only when it has a line. The quick suite (OpenMP on one thread) is left out.
"""
import math
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pcbresults as R
import pcbproblems as P

SUITE_ORDER = ("seed", "full")
EXTRA_COLOURS = ['#8c564b', '#7f7f7f', '#bcbd22', '#17becf']
# The peers' points beside our lines (gnuplot's first colours draw the lines).
PEER_COLOURS = ['#d62728', '#ff7f0e', '#2ca02c', '#1f77b4', '#e377c2'] + EXTRA_COLOURS
DASHES = (1, 2, 4, 5)  # solid, then dashed patterns, in order of first use in a plot


def suites_of(suites):
    return [s for s in SUITE_ORDER if s in suites] + sorted(set(suites) - set(SUITE_ORDER) - {"quick"})


def docs_of(suites, problem, suite=None):
    """Documents of a problem from one suite, or from every suite (the first one
    listed in SUITE_ORDER winning ties) when suite is None."""
    seen, out = set(), []
    for s in [suite] if suite else suites_of(suites):
        for d in suites.get(s, []):
            cid = d["config"]["id"]
            if d["config"]["problem"] == problem and cid not in seen:
                seen.add(cid)
                out.append(d)
    return out


def series(docs, select, x_of, y_of, zero_ok=False):
    """{impl: [(x, y), ...]} over the selected documents, sorted by x."""
    out = {}
    for d in docs:
        if not select(d["config"]):
            continue
        for impl, e in R.entries(d).items():
            y = y_of(d, impl, e)
            if y is not None and (y > 0 or (zero_ok and y == 0)):
                out.setdefault(impl, []).append((x_of(d["config"]), y))
    return {k: sorted(v) for k, v in out.items() if len(v) >= 2}


def timing_lines(suites, problem, select, x_of, y_of, mark_approx=False):
    """One line per (implementation, suite): [(impl, suite or None, points)]. The suite
    is named only when several contribute."""
    per_suite = [(s, series(docs_of(suites, problem, s), select, x_of, y_of)) for s in suites_of(suites)]
    per_suite = [(s, lines) for s, lines in per_suite if lines]
    named = len(per_suite) > 1
    return [(labelled(suites, problem, impl) if mark_approx else impl, "suite " + s if named else None, pts)
            for s, lines in per_suite for impl, pts in lines.items()]


def labelled(suites, problem, impl):
    """The implementation's name, marked when it is approximate by design."""
    approx = any(e["impl"] == impl and e.get("exact") is False
                 for d in docs_of(suites, problem) for e in d.get("results", []))
    return impl + " (approx.)" if approx else impl


def spans_decades(values):
    values = [v for v in values if v > 0]
    return len(values) > 1 and max(values) / min(values) > 20


def tic_label(x):
    if x >= 1e6 and x % 1e6 == 0:
        return "%dM" % (x // 1e6)
    if x >= 1e4 and x % 1e3 == 0:
        return "%dk" % (x // 1e3)
    return "%g" % x


def decade_below(xs):
    """The exponent of the power of ten at or below the least of xs, with the
    axis margin x_axis leaves."""
    return math.floor(math.log10(min(xs) / 1.15))


def x_axis(xs, names=None):
    """gnuplot lines for the x axis: log scale when the values span 8x or more, a small
    margin so edge points are not cut, tics at the values themselves when few (names:
    {x: label} in place of a value)."""
    lo, hi = min(xs), max(xs)
    logx = lo > 0 and hi / lo >= 8
    if logx:
        out = ["set logscale x", "set xrange [%g:%g]" % (lo / 1.15, hi * 1.15)]
    else:
        pad = 0.04 * (hi - lo) or 0.5
        out = ["unset logscale x", "set xrange [%g:%g]" % (lo - pad, hi + pad)]
    distinct = sorted(set(xs))
    if names and logx:  # named points at one end, powers of ten between
        k = decade_below([x for x in xs if x not in names])
        tics = dict(names)
        while 10 ** k <= hi * 1.15:
            tics[10 ** k] = tic_label(10 ** k)
            k += 1
        out.append("set xtics (%s)" % ", ".join("'%s' %g" % (t, x) for x, t in sorted(tics.items())))
    elif len(distinct) <= 10:
        out.append("set xtics (%s)" % ", ".join("'%s' %g" % ((names or {}).get(x, tic_label(x)), x)
                                                  for x in distinct))
    return out


def with_variant(name, variant):
    """'name (variant)', or 'name (note, variant)' when the name has a note already."""
    if not variant:
        return name
    return name[:-1] + ", %s)" % variant if name.endswith(")") else "%s (%s)" % (name, variant)


def provenance(suites):
    """What measured a machine's figures, for the plots' titles: the hardware,
    the dates and the latest commit ("NVIDIA H100 80GB HBM3 + 16-core Intel
    Xeon; 2026-11-12 to 2026-11-24; commit 40f8702 (and 12 earlier)")."""
    envs = [d.get("env") or {} for docs in suites.values() for d in docs]
    if not envs:
        return ""
    last = envs[-1]
    gpu = (last.get("nvidia_smi") or "").split(",")[0].strip()
    if not gpu.startswith("NVIDIA"):  # "not available" on a host without one
        gpu = ""
    model = " ".join(w for w in str(last.get("cpu", "CPU")).replace("(R)", "").replace("(TM)", "")
                     .split() if w not in ("Processor", "CPU"))
    cpu = "%s-core %s" % (last.get("cores", "?"), model)
    days = sorted({e["date"][:10] for e in envs if isinstance(e.get("date"), str)})
    commits = sorted({e["git"][:7] for e in envs if isinstance(e.get("git"), str) and e["git"]})
    when = days[0] if len(days) == 1 else "%s to %s" % (days[0], days[-1]) if days else "undated"
    latest = sorted((e.get("date", ""), e.get("git", "")[:7]) for e in envs)[-1][1]
    more = "" if len(commits) <= 1 else " (and %d earlier)" % (len(commits) - 1)
    return "%s; %s; commit %s%s" % ((gpu + " + " + cpu) if gpu else cpu, when,
                                    latest or "unknown", more)


class Plotter:
    def __init__(self, outdir, machine, tmp, about=""):
        self.outdir, self.machine, self.tmp, self.count = outdir, machine, tmp, 0
        self.about = about

    def data_file(self, name, rows):
        path = os.path.join(self.tmp, "%s-%d.dat" % (name, self.count))
        self.count += 1
        with open(path, "w", encoding="utf-8") as f:
            for row in rows:
                f.write(" ".join(str(c) for c in row) + "\n")
        return path

    def draw(self, name, title, xlabel, ylabel, body, logy=False, axis=(), size=(960, 640)):
        """Write the plot; the title gets the machine and what measured it on a second line."""
        for term, ext in (("pngcairo size %d,%d font 'Sans,11' noenhanced" % size, "png"),
                          ("svg size %d,%d dynamic font 'Sans,11' noenhanced" % size, "svg")):
            out = os.path.join(self.outdir, "%s-%s.%s" % (self.machine, name, ext))
            script = "\n".join([
                "set terminal " + term,
                "set output '%s'" % out,
                'set title "%s\\n%s%s"' % (title, self.machine,
                                           ("\\n" + self.about.replace('"', "'")) if self.about else ""),
                "set xlabel '%s'" % xlabel,
                "set ylabel '%s'" % ylabel,
                "set grid",
                "set key below height 1",
                "unset logscale x",
                "set logscale y" if logy else "unset logscale y",
                "set format y '%g'",
                "set format x '%g'",
            ] + list(axis) + [body, "unset output"])
            run = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
            if run.returncode != 0:
                raise RuntimeError("gnuplot failed on %s: %s" % (out, run.stderr.strip()))
        print("plots.py: %s-%s.png/.svg" % (os.path.join(self.outdir, self.machine), name))

    def lines(self, name, title, xlabel, ylabel, lines, extra=(), notes=(), dashes=None,
              tic_names=None):
        """lines: [(impl, variant or None, points)], one colour per implementation, one
        dash pattern per variant (a suite, a bound: in order of first use unless dashes
        maps it); extra: [(title, points, gnuplot style)]; notes: lines of text for the key."""
        plots, xs, ys, colour, dash = [], [], [], {}, dict(dashes or {})
        for impl, suite, pts in lines:
            colour.setdefault(impl, len(colour) + 1)
            dash.setdefault(suite, DASHES[min(len(dash), len(DASHES) - 1)])
            path = self.data_file(name, pts)
            c = colour[impl]  # gnuplot's own 8 colours, then more: they would repeat
            lc = str(c) if c <= 8 else "rgb '%s'" % EXTRA_COLOURS[(c - 9) % len(EXTRA_COLOURS)]
            plots.append("'%s' using 1:2 with linespoints lw 2 pt %d lc %s dt %d title '%s'"
                         % (path, 7 if c <= 8 else 5, lc, dash[suite], with_variant(impl, suite)))
        for label, pts, style in extra:
            path = self.data_file(name, pts)
            plots.append("'%s' using 1:2 with %s title '%s'" % (path, style, label))
        for pts in [l[2] for l in lines] + [e[1] for e in extra]:
            xs += [p[0] for p in pts]
            ys += [p[1] for p in pts]
        plots += ["keyentry title '%s'" % n for n in notes]
        self.draw(name, title, xlabel, ylabel, "plot " + ", \\\n     ".join(plots),
                  logy=spans_decades(ys), axis=x_axis(xs, tic_names))


def fps_plots(p, suites):
    t = timing_lines(suites, "fps", lambda c: c["batch"] == 1 and c["m"] == c["n"] // 10,
                     lambda c: c["n"], lambda d, i, e: R.median_ms(e))
    if t:
        p.lines("fps-time-vs-points", "FPS compute time against cloud size, batch 1, m = n/10 samples",
                "points per cloud n", "median compute time (ms; CUDA: device events)", t)
    s = timing_lines(suites, "fps", lambda c: c["n"] == 10000 and c["m"] == 1000, lambda c: c["batch"],
                     lambda d, i, e: R.speedup(d, i) if i != d.get("reference") else None)
    if s:
        ref = next((d.get("reference") for d in docs_of(suites, "fps") if d.get("reference")), "reference")
        doc = sorted((b, serial / cuda) for (b, n, m), (serial, cuda) in R.DOC_FPS.items()
                     if n == 10000 and m == 1000)
        p.lines("fps-speedup-vs-batch", "FPS speedup over %s (serial) against batch size, n = 10000, m = 1000"
                % ref, "batch size (clouds)", "speedup over %s, compute (x)" % ref, s,
                extra=[("documents: MX350 CUDA over i7-10710U serial (real clouds)", doc,
                        "linespoints dt 3 lw 2 pt 6 lc rgb 'black'")])


def nn_plots(p, suites):
    docs = docs_of(suites, "nn")
    timed = [d for d in docs if any(R.median_ms(e) for e in R.entries(d).values())]
    if timed:
        d = max(timed, key=lambda d: (d["config"]["dataset"] == "lidar", d["config"]["n"] == 120000,
                                      d["config"]["batch"] == 1, R.work(d["config"])))
        rows, not_run = [], []
        for impl in R.impl_order([d]):
            e = R.entries(d).get(impl)
            c, e2e = R.median_ms(e), R.median_ms(e, "e2e")
            doc = R.DOC_NN.get(impl, (None,))[0] if d["config"]["n"] == 120000 else None
            if c or doc:
                rows.append(['"%s"' % labelled(suites, "nn", impl), c or "NaN", e2e or "NaN",
                             doc * 1e3 if doc else "NaN"])
                if not c:
                    not_run.append(impl)
        if rows:
            path = p.data_file("nn-time", rows)
            vals = [float(v) for r in rows for v in r[1:] if v != "NaN"]
            # Only the columns with data: gnuplot refuses an all-empty series.
            cols = [(k, t) for k, t in ((2, "ours: compute"), (3, "ours: end-to-end"),
                                        (4, "documents (their CPU and GPU, real sweeps)"))
                    if any(r[k - 1] != "NaN" for r in rows)]
            plots = ["'%s' using %d%s title '%s'" % (path, k, ":xtic(1)" if i == 0 else "", t)
                     for i, (k, t) in enumerate(cols)]
            if not_run:
                plots.append("keyentry title 'not run here: %s'" % ", ".join(not_run))
            # Room under the plot for the slanted names, the axis label and the key.
            longest = max(len(r[0]) for r in rows)
            body = ("set style data histograms\nset style histogram clustered gap 1\n"
                    "set style fill solid 0.8 border -1\nset xtics rotate by -30 nomirror\n"
                    "set bmargin %d\nset yrange [%g:%g]\n" % (longest * 0.3 + 6, min(vals) / 2, max(vals) * 2)
                    + "plot " + ", ".join(plots))
            c = d["config"]
            p.draw("nn-time", "NN time per implementation, %s: %s x %s points, suite %s"
                   % (c["dataset"], c["n"], c["nq"], d["suite"]), "implementation",
                   "median time (ms)", body, logy=spans_decades(vals))
    t = timing_lines(suites, "nn", lambda c: c["batch"] == 1 and c["dataset"] == "lidar",
                     lambda c: c["n"], lambda d, i, e: R.median_ms(e), mark_approx=True)
    if t:
        p.lines("nn-time-vs-points", "NN compute time against size, two lidar sweeps of n points each",
                "points per sweep n (references = queries)", "median compute time (ms)", t)


def train_plots(p, suites, root):
    """NN and chamfer at training batches (suite train): compute time against points
    per cloud, a line per implementation and batch; beside them, where the Python
    timings of the same machine were stored, torch.cdist's per call from Python."""
    docs = suites.get("train", [])
    timing = os.path.join(root, p.machine, "python", "train-timing.json")
    rows = []
    if os.path.exists(timing):
        with open(timing, encoding="utf-8") as f:
            rows = json.load(f).get("rows", [])
    what = {"nn": ("cdist_nn_ms", "torch.cdist(q, r).min(-1), from Python, batch 32"),
            "chamfer": ("cdist_chamfer_fwd_bwd_ms",
                        "chamfer by torch.cdist, forward + backward, from Python, batch 32")}
    for problem in ("nn", "chamfer"):
        lines = []
        for batch in (32, 8):
            got = series([d for d in docs if d["config"]["problem"] == problem],
                         lambda c: c["batch"] == batch and c["dataset"] == "uniform" and
                         c["n"] == c["nq"], lambda c: c["n"], lambda d, i, e: R.median_ms(e))
            lines += [(impl, "batch %d" % batch, pts) for impl, pts in got.items()]
        if not lines:
            continue
        key, label = what[problem]
        cdist = sorted((r["n"], r[key]) for r in rows
                       if r["kind"] == "uniform" and r["batch"] == 32 and r.get(key))
        extra = [(label, cdist, "linespoints dt 3 lw 2 pt 6 lc rgb 'black'")] if cdist else []
        p.lines("%s-train" % problem, "%s at training batches: compute time against points "
                "per cloud, uniform clouds" % problem.upper(), "points per cloud (both clouds)",
                "median compute time (ms; CUDA: device events)", lines, extra=extra)


def knn_plots(p, suites, peer_suites):
    """kNN (suite knn): compute time against k, self-kNN of 32 sphere clouds of 1,024
    points, a line per implementation; the peers' calls from Python dashed beside
    them (pcbench's own call among them), those that answered right."""
    cfg = lambda c: c["batch"] == 32 and c["n"] == 1024 and c["dataset"] == "sphere"  # noqa: E731
    k_of = lambda c: c.get("k") or int(c["id"].rsplit("/k", 1)[1])  # noqa: E731
    got = series(suites.get("knn", []), cfg, k_of, lambda d, i, e: R.median_ms(e))
    lines = [(impl, None, pts) for impl, pts in got.items()]
    if not lines:
        return
    peers = {}
    for pd in peer_suites.get("knn", []):
        if cfg(pd["config"]):
            for e in pd["results"]:
                if R.peer_ms(e):
                    peers.setdefault(e["peer"], []).append((k_of(pd["config"]), R.peer_ms(e)))
    extra = [("%s (from Python)" % name, sorted(pts), "linespoints dt 3 lw 2 pt 6")
             for name, pts in sorted(peers.items())]
    p.lines("knn-time-vs-k", "kNN compute time against k: self-kNN of 32 clouds of 1,024 points "
            "(sphere surfaces)", "neighbours k", "median time (ms; CUDA: device events)", lines,
            extra=extra)


def emd_plots(p, suites):
    cube = lambda c: c["batch"] == 1 and c["dataset"] == "uniform"  # noqa: E731
    t = timing_lines(suites, "emd", cube, lambda c: c["n"], lambda d, i, e: R.median_ms(e))
    if t:
        p.lines("emd-time-vs-n", "EMD compute time against points per cloud, batch 1, uniform clouds",
                "points per cloud n", "median compute time (ms)", t)

    def percent(key):
        def get(d, impl, e):
            v = (e or {}).get("verify", {}).get(key)
            ok = e and e.get("status") == "ok" and impl != d.get("reference") and isinstance(v, (int, float)) \
                and v >= 0
            return 100 * v if ok else None
        return get

    # Deterministic figures: every suite's documents together.
    docs = docs_of(suites, "emd")
    b1 = cube
    gap = series(docs, b1, lambda c: c["n"], percent("gap"), zero_ok=True)
    bound = series(docs, b1, lambda c: c["n"], percent("bound"), zero_ok=True)
    # A log scale cannot show a gap of zero: say so instead of drawing an empty line.
    zero = sorted(i for i, pts in gap.items() if all(y == 0 for _, y in pts))
    lines = [(i, None, pts) for i, pts in gap.items() if i not in zero]
    lines += [(i, "certified bound", pts) for i, pts in bound.items() if any(y > 0 for _, y in pts)]
    if lines:
        extra = []
        if "cuda_auction_match" in gap or "cuda_auction_match" in bound:
            extra.append(("classic kernel, simulated (uniform cube): +0.9% at n = 4096",
                          [(4096, 0.9)], "points pt 9 ps 2 lc rgb 'black'"))
        p.lines("emd-gap-vs-n", "EMD gap above the optimum (solid, computed up to n = 2048) "
                "and certified bound (dashed), batch 1, uniform",
                "points per cloud n", "percent above the optimum", lines, extra=extra,
                notes=["gap 0 (optimal) at every n: %s" % ", ".join(zero)] if zero else [],
                dashes={None: 1, "certified bound": 2})


def emd_bound_plot(p, suites, peer_suites):
    """EMD as a training loss, batch 32: cuda_auction's compute time against the
    certified bound it reached (asked 0.1% to 5%: the /gap configurations),
    one line per cloud kind, the suites merged; the peers placed by their
    measured gap to the optimum where they answer a bijection, and at the left
    edge, marked, where they do not. A peer keeps its colour on both kinds of
    cloud; the shape says the kind and whether it answered a bijection. Ours
    from Python (pcbench_py) is cuda_auction itself, the line, not a peer."""
    shapes = {("uniform", False): 9, ("sphere", False): 13, ("uniform", True): 6, ("sphere", True): 4}
    for n in (1024, 4096):
        lines, peers_at = [], []
        for kind in ("uniform", "sphere"):
            pts = []
            for d in docs_of(suites, "emd"):
                c = d["config"]
                if (c["batch"], c["n"], c["dataset"]) != (32, n, kind):
                    continue
                e = R.entries(d).get("cuda_auction")
                ms, bound = R.median_ms(e), (e or {}).get("verify", {}).get("bound")
                if ms and isinstance(bound, (int, float)) and bound > 0:
                    pts.append((100 * bound, ms))
            if len(set(pts)) >= 2:
                lines.append(("cuda_auction, " + kind, None, sorted(set(pts))))
            for pd in [d for s in ("seed", "full") for d in peer_suites.get(s, [])]:
                c = pd["config"]
                if (c["problem"], c["batch"], c["n"], c["dataset"]) != ("emd", 32, n, kind):
                    continue
                for e in pd.get("results", []):
                    ms = (e.get("compute") or {}).get("median_ms")
                    if (not ms or e.get("peer") == "pcbench_py"
                            or e.get("status") not in ("ok", "value-only", "not-a-bijection")):
                        continue
                    if any(q[:2] == (e["peer"], kind) for q in peers_at):
                        continue  # its answer on the clouds again, in a /gap configuration
                    gap = e.get("gap")
                    peers_at.append((e["peer"], kind, e["status"] == "not-a-bijection",
                                     abs(gap) * 100 if isinstance(gap, (int, float)) and gap else None,
                                     ms))
        if not lines:
            continue
        peers_at = [q for q in peers_at if q[2] or q[3]]
        # "no bijection" sits a decade left of the decade below every real point
        real = [x for _, _, pts in lines for x, _ in pts] + [q[3] for q in peers_at if not q[2]]
        left = 10 ** (decade_below(real) - 1)
        colour = {}
        for peer, *_ in peers_at:
            colour.setdefault(peer, PEER_COLOURS[len(colour) % len(PEER_COLOURS)])
        extra = [("%s, %s%s" % (peer, kind, ": not a bijection" if marked else ""),
                  [(left if marked else x, ms)],
                  "points pt %d ps 2 lc rgb '%s'" % (shapes[(kind, marked)], colour[peer]))
                 for peer, kind, marked, x, ms in peers_at]
        p.lines("emd-time-vs-bound-n%d" % n, "EMD as a loss: compute time against the certified "
                "bound, batch 32 x %d" % n, "certified bound (ours) or gap to the optimum (peers), %",
                "median compute time (ms)", lines, extra=extra, tic_names={left: "no bijection"})


def peer_plots(p, suites, peer_suites):
    """Bars per configuration (suite seed, then full, knn, ball, grid): our fastest
    verified beside each peer judged right."""
    # a problem with a selection rule (ball, grid): a plot a selection
    for problem, select in [(q, s) for q in R.PROBLEMS for s in (
            ("first", "nearest", "mean") if "select" in P.TABLE[q].fields else (None,))]:
        rows = [(pd, next((d for d in suites.get(s, []) if d["config"]["id"] == pd["config"]["id"]),
                          None), s)
                for s in ("seed", "full", "knn", "ball", "grid") for pd in peer_suites.get(s, [])
                if pd["config"]["problem"] == problem and
                pd["config"].get("select", select) == select]
        if not rows:
            continue
        names = []
        for pd, _, _ in rows:
            names += [e["peer"] for e in pd["results"] if R.peer_ms(e) and e["peer"] not in names]
        if not names:
            continue
        table, fastest, low = [], set(), math.inf
        for k, (pd, doc, suite) in enumerate(rows):
            c = pd["config"]
            label = "%s b%d n%d%s%s" % (c["dataset"], c["batch"], c["n"],
                                        P.TABLE[problem].label(c), R.suite_mark(suite))
            best = R.fastest_ours(doc, False)
            ours = best[1] if best else None
            if best:
                fastest.add(best[0]["impl"])
            got = {e["peer"]: R.peer_ms(e) for e in pd["results"]}
            cells = [ours] + [got.get(n) for n in names]
            if all(v is None for v in cells):
                continue
            table.append([k, '"%s"' % label] + ["%g" % v if v else "NaN" for v in cells])
            low = min([low] + [v for v in cells if v])
        name = "peers-" + problem + ("-" + select if select else "")
        path = p.data_file(name, table)
        ours_label = "ours: fastest verified (%s)" % ", ".join(sorted(fastest))
        # a peer's label from an answer it timed (its refusals may carry no version)
        titles = [ours_label] + [next(R.peer_label(e) for pd, _, _ in rows for e in pd["results"]
                                      if e["peer"] == n and R.peer_ms(e)) for n in names]
        # bars grow from the axis: a decade below the shortest keeps it visible
        floor = 10.0 ** (math.floor(math.log10(low)) - 1) if low < math.inf else 0
        plots = ["'%s' using %d:xtic(2) title '%s'" % (path, 3 + i, t.replace("'", ""))
                 for i, t in enumerate(titles)]
        # many configurations: a wider canvas (48 px a group), labels turned further down
        many = len(table) > 16
        p.draw(name, "%s%s: our fastest verified implementation beside the peers "
               "that answered right" % (problem.upper(), " (%s)" % select if select else ""), "configuration ([full]: suite full)",
               "median compute time (ms)", "plot " + ", \\\n     ".join(plots), logy=True,
               axis=["set style data histogram", "set style histogram clustered gap 1",
                     "set style fill solid 0.8 border -1",
                     "set xtics rotate by %d" % (-50 if many else -20),
                     "set yrange [%g:*]" % floor if floor else "set yrange [*:*]",
                     # the last rotated label runs past the last bar: room for all of it
                     # (about cos 20 deg of a character a character, less the bar group)
                     "set rmargin %d" % max(8, int((0.6 if many else 0.85) * len(table[-1][1])) - 4),
                     "set datafile missing 'NaN'"],
               size=(max(960, 48 * len(table)), 760 if many else 640))


def emd_loop_plots(p, root):
    """EMD in a training loop (model_timing.py --parts emd_loop): a loss's forward +
    backward a step (median of the epoch) against the epoch, a line per loss, one plot
    per run (points, samples)."""
    path = os.path.join(root, p.machine, "models", "emd-loop.json")
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as f:
        rows = json.load(f).get("rows", [])
    for row in rows:
        names = list(row["per_epoch"][0]["median_ms"])
        lines = [(name, None, [(e["epoch"], e["median_ms"][name]) for e in row["per_epoch"]])
                 for name in names]
        every = "a sample every step" if row["samples"] == row["batch"] else \
            "%d samples, %d steps between a sample's calls" % (row["samples"],
                                                               row["samples"] // row["batch"])
        p.lines("emd-loop-n%d-s%d" % (row["points"], row["samples"]),
                "EMD in a folding decoder's training loop, %d x %d, %s"
                % (row["batch"], row["points"], every), "epoch",
                "forward + backward a step, median of the epoch (ms)", lines,
                notes=["the decoder learns from the first warm loss"])


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "results"
    if not shutil.which("gnuplot"):
        print("plots.py: gnuplot not found (apt-get install gnuplot-nox, or make deps)", file=sys.stderr)
        return 1
    results = R.load(root)
    peers = R.load(root, peers=True)
    if not results:
        print("plots.py: no results under %s (run make bench first)" % root, file=sys.stderr)
        return 1
    outdir = os.path.join(root, "plots")
    os.makedirs(outdir, exist_ok=True)
    for name in os.listdir(outdir):  # the folder is all generated: no stale plot survives
        if name.endswith((".png", ".svg")):
            os.remove(os.path.join(outdir, name))
    with tempfile.TemporaryDirectory() as tmp:
        for machine, suites in results.items():
            p = Plotter(outdir, machine, tmp, provenance(suites))
            fps_plots(p, suites)
            nn_plots(p, suites)
            train_plots(p, suites, root)
            knn_plots(p, suites, peers.get(machine, {}))
            emd_plots(p, suites)
            emd_bound_plot(p, suites, peers.get(machine, {}))
            peer_plots(p, suites, peers.get(machine, {}))
            emd_loop_plots(p, root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
