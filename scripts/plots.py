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
A plot is drawn only when there is data for it (at least two points on a line).
"""
import os
import shutil
import subprocess
import sys
import tempfile

import pcbresults as R


def docs_of(suites, problem, prefer=("full", "seed", "quick")):
    """Documents of a problem from every suite, the preferred suite winning ties."""
    seen, out = set(), []
    for suite in list(prefer) + sorted(set(suites) - set(prefer)):
        for d in suites.get(suite, []):
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


def spans_decades(values):
    values = [v for v in values if v > 0]
    return len(values) > 1 and max(values) / min(values) > 20


class Plotter:
    def __init__(self, outdir, machine, tmp):
        self.outdir, self.machine, self.tmp, self.count = outdir, machine, tmp, 0

    def data_file(self, name, rows):
        path = os.path.join(self.tmp, "%s-%d.dat" % (name, self.count))
        self.count += 1
        with open(path, "w", encoding="utf-8") as f:
            for row in rows:
                f.write(" ".join(str(c) for c in row) + "\n")
        return path

    def draw(self, name, title, xlabel, ylabel, body, logx=False, logy=False, extra=""):
        for term, ext in (("pngcairo size 960,640 font 'Sans,11' noenhanced", "png"),
                          ("svg size 960,640 dynamic font 'Sans,11' noenhanced", "svg")):
            out = os.path.join(self.outdir, "%s-%s.%s" % (self.machine, name, ext))
            script = "\n".join([
                "set terminal " + term,
                "set output '%s'" % out,
                "set title '%s (%s)'" % (title, self.machine),
                "set xlabel '%s'" % xlabel,
                "set ylabel '%s'" % ylabel,
                "set grid",
                "set key below",
                "set logscale x" if logx else "unset logscale x",
                "set logscale y" if logy else "unset logscale y",
                "set format y '%g'",
                "set format x '%g'",
                extra,
                body,
                "unset output",
            ])
            run = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
            if run.returncode != 0:
                raise RuntimeError("gnuplot failed on %s: %s" % (out, run.stderr.strip()))
        print("plots.py: %s-%s.png/.svg" % (os.path.join(self.outdir, self.machine), name))

    def lines(self, name, title, xlabel, ylabel, lines, dashed=None, extra_series=()):
        """lines: {label: [(x, y)...]}, solid; dashed: {label: points}, drawn dashed in the
        colour of the solid line of the same label; extra_series: (label, points, style)."""
        plots, xs, ys, colour = [], [], [], {}
        for label in list(lines) + [k for k in (dashed or {}) if k not in lines]:
            colour[label] = len(colour) + 1
        for group, style, suffix in ((lines, "lw 2 pt 7", ""), (dashed or {}, "dt 2 lw 1 pt 6", " bound")):
            for label, pts in group.items():
                path = self.data_file(name, pts)
                plots.append("'%s' using 1:2 with linespoints %s lc %d title '%s%s'"
                             % (path, style, colour[label], label, suffix if group is not lines else ""))
                xs += [p[0] for p in pts]
                ys += [p[1] for p in pts]
        for label, pts, style in extra_series:
            path = self.data_file(name, pts)
            plots.append("'%s' using 1:2 with %s title '%s'" % (path, style, label))
            xs += [p[0] for p in pts]
            ys += [p[1] for p in pts]
        self.draw(name, title, xlabel, ylabel, "plot " + ", \\\n     ".join(plots),
                  logx=spans_decades(xs), logy=spans_decades(ys))


def fps_plots(p, suites):
    docs = docs_of(suites, "fps")
    t = series(docs, lambda c: c["batch"] == 1 and c["m"] == c["n"] // 10,
               lambda c: c["n"], lambda d, i, e: R.median_ms(e))
    if t:
        p.lines("fps-time-vs-points", "FPS compute time, batch 1, m = n/10", "points per cloud n",
                "median time (ms)", t)
    s = series(docs, lambda c: c["n"] == 10000 and c["m"] == 1000,
               lambda c: c["batch"], lambda d, i, e: R.speedup(d, i) if i != d.get("reference") else None)
    if s:
        ref = next((d.get("reference") for d in docs if d.get("reference")), "reference")
        doc = sorted((b, serial / cuda) for (b, n, m), (serial, cuda) in R.DOC_FPS.items()
                     if n == 10000 and m == 1000)
        p.lines("fps-speedup-vs-batch", "FPS speedup over %s, n = 10000, m = 1000" % ref,
                "batch size (clouds)", "speedup over %s (x)" % ref, s,
                extra_series=[("documents: MX350 CUDA over i7 serial", doc, "linespoints dt 3 lw 2 pt 6 lc rgb 'black'")])


def nn_plots(p, suites):
    docs = docs_of(suites, "nn", prefer=("seed", "full", "quick"))
    timed = [d for d in docs if any(R.median_ms(e) for e in R.entries(d).values())]
    if timed:
        d = max(timed, key=lambda d: (d["config"]["dataset"] == "lidar", d["config"]["n"] == 120000,
                                      R.work(d["config"])))
        rows = []
        for impl in R.impl_order([d]):
            e = R.entries(d).get(impl)
            c, e2e = R.median_ms(e), R.median_ms(e, "e2e")
            doc = R.DOC_NN.get(impl, (None,))[0] if d["config"]["n"] == 120000 else None
            if c or doc:
                rows.append(['"%s"' % impl, c or "NaN", e2e or "NaN", doc * 1e3 if doc else "NaN"])
        if rows:
            path = p.data_file("nn-time", rows)
            vals = [float(v) for r in rows for v in r[1:] if v != "NaN"]
            # Only the columns with data: gnuplot refuses an all-empty series.
            cols = [(k, t) for k, t in ((2, "compute"), (3, "end-to-end"), (4, "documents"))
                    if any(r[k - 1] != "NaN" for r in rows)]
            body = ("set style data histograms\nset style histogram clustered gap 1\n"
                    "set style fill solid 0.8 border -1\nset xtics rotate by -30\n"
                    "set yrange [%g:%g]\n" % (min(vals) / 2, max(vals) * 2)
                    + "plot " + ", ".join("'%s' using %d%s title '%s'" % (path, k, ":xtic(1)" if i == 0 else "", t)
                                          for i, (k, t) in enumerate(cols)))
            p.draw("nn-time", "NN time per implementation, %s" % d["config"]["id"], "implementation",
                   "median time (ms)", body, logy=spans_decades(vals))
    t = series(docs, lambda c: c["batch"] == 1 and c["dataset"] == "lidar",
               lambda c: c["n"], lambda d, i, e: R.median_ms(e))
    if t:
        p.lines("nn-time-vs-points", "NN compute time, lidar pairs of n points", "points per cloud n",
                "median time (ms)", t)


def emd_plots(p, suites):
    docs = docs_of(suites, "emd")
    t = series(docs, lambda c: c["batch"] == 1, lambda c: c["n"], lambda d, i, e: R.median_ms(e))
    if t:
        p.lines("emd-time-vs-n", "EMD compute time, batch 1", "points per cloud n", "median time (ms)", t)

    def percent(key):
        def get(d, impl, e):
            v = (e or {}).get("verify", {}).get(key)
            ok = e and e.get("status") == "ok" and isinstance(v, (int, float)) and v >= 0
            return 100 * v if ok else None
        return get

    gap = series(docs, lambda c: c["batch"] == 1, lambda c: c["n"], percent("gap"), zero_ok=True)
    bound = series(docs, lambda c: c["batch"] == 1, lambda c: c["n"], percent("bound"), zero_ok=True)
    if gap or bound:
        p.lines("emd-gap-vs-n", "EMD cost above the exact optimum (solid) and certified bound (dashed), "
                "batch 1", "points per cloud n", "percent of the optimum", gap, dashed=bound)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "results"
    if not shutil.which("gnuplot"):
        print("plots.py: gnuplot not found (apt-get install gnuplot-nox, or make deps)", file=sys.stderr)
        return 1
    results = R.load(root)
    if not results:
        print("plots.py: no results under %s (run make bench first)" % root, file=sys.stderr)
        return 1
    outdir = os.path.join(root, "plots")
    os.makedirs(outdir, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for machine, suites in results.items():
            p = Plotter(outdir, machine, tmp)
            fps_plots(p, suites)
            nn_plots(p, suites)
            emd_plots(p, suites)
    return 0


if __name__ == "__main__":
    sys.exit(main())
