#!/usr/bin/env python3
"""tables.py RESULTS [--front-door] - write RESULTS/TABLES.md and RESULTS/HEADLINE.md
from the results `pcbench bench` stored under RESULTS/<machine>/<suite>/, the headline
into RESULTS/README.md (where it has the markers) and, with --front-door (make tables
on the project's results), a short summary into the front door README.md beside
RESULTS, each between its markers (stdlib only)."""
import os
import sys

import pcbresults as R
import pcbproblems as P

LEGEND = (
    "Times are medians of interleaved samples, in ms unless marked. A sample is one repetition\n"
    "of many iterations (about 0.1 s; 0.03 s in suites seed and quick); samples are taken until\n"
    "the median's relative standard error (its distribution-free 95% interval, half-width over\n"
    "1.96) is under 0.5%, the figure's time is up (seed 1 s, full 1.5 s, quick 0.25 s; seed\n"
    "results before 2026-11-29: 3 s, samples of 0.1 s), its share of the run's budget is spent\n"
    "(seed: 270 s in all) or 100\n"
    "are kept, with at least 10 for GPU figures and the suite's count for CPU ones (results\n"
    "from before November 2026: a fixed count). **~** before a time: the figure stopped short\n"
    "of its noise target (time, budget, the most samples) or is a single run longer than twice\n"
    "the figure time (the verification run); its noise is in the results file. A GPU sample during which NVML saw the SM\n"
    "clock under 75% of its maximum is dropped; a figure with dropped samples says so, one\n"
    "with more dropped than kept is marked *unreliable*. **compute**: the\n"
    "work with inputs already prepared (uploaded to the GPU, indexes built); CUDA rows are\n"
    "device event times, warm (caches as the previous iteration left them). **compute cold**:\n"
    "the same with the GPU's L2 overwritten before every iteration (CPU rows: 64 MiB written\n"
    "and read, only with `--cpu-cold`). **end-to-end**: host arrays to host results (allocation, transfers,\n"
    "index build, compute, download), wall clock. (Nx): speedup over the problem's serial\n"
    "reference on the same configuration, measured in the same run. Every timed result was\n"
    "verified first; *skipped (budget)*: predicted or measured over the per-run budget\n"
    "(when it was verified anyway, the one run's time is shown); *n/a*: not available on\n"
    "this machine (no CUDA device, not built, or the dataset or validator missing).\n")


def md_table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def with_speedup(doc, entry, impl, figure="compute"):
    text = R.cell(entry, figure)
    s = R.speedup(doc, impl, figure) if entry else None
    if s is not None and impl != doc.get("reference"):
        text += " (%s)" % R.fmt_x(s)
    return text


def find(docs, **want):
    """The first document whose configuration has every wanted value; an EMD
    configuration in loss mode (max_gap) only when its max_gap is asked for."""
    want.setdefault("max_gap", 0)
    for d in docs:
        c = d["config"]
        if all(c.get(k, 0 if k == "max_gap" else None) == v for k, v in want.items()):
            return d
    return None


# ---- sections ------------------------------------------------------------------------
def env_section(machine, suites):
    env = R.latest_env(suites)
    gpu = env.get("gpu") or {}
    gits = sorted({e.get("git", "?") for docs in suites.values() for d in docs
                   for e in d.get("results", []) if e.get("git")})
    dates = sorted(e.get("when", "") for docs in suites.values() for d in docs
                   for e in d.get("results", []) if e.get("when"))
    loads = R.load_averages(suites)
    lines = ["- CPU: %s, %s cores" % (env.get("cpu", "?"), env.get("cores", "?"))]
    if gpu:
        lines.append("- GPU: %s (compute capability %s, %s SMs, L2 %.0f MiB), CUDA driver %s, runtime %s"
                     % (gpu.get("name"), gpu.get("compute_capability"), gpu.get("sms"),
                        gpu.get("l2_bytes", 0) / 2 ** 20, gpu.get("cuda_driver"), gpu.get("cuda_runtime")))
        lines.append("- nvidia-smi once, before timing (name, driver, SM clock, max SM clock, memory clock, max, power limit): %s"
                     % env.get("nvidia_smi"))
        if env.get("nvml"):
            lines.append("- Clocks per sample: %s" % env["nvml"])
        dropped = R.dropped_samples(suites)
        if dropped is not None:
            lines.append("- Samples dropped as throttled: %d of %d GPU samples; %d figure%s unreliable"
                         % (dropped[0], dropped[1], dropped[2], "" if dropped[2] == 1 else "s"))
    else:
        lines.append("- GPU: none (CUDA implementations not run here)")
    lines.append("- Compilers: %s; nvcc: %s; flags: %s" % (env.get("cc"), env.get("nvcc"), env.get("cflags")))
    lines.append("- OS: %s; OpenMP threads: %s" % (env.get("os"), env.get("openmp_threads", "?")))
    lines.append("- Source: %s; runs from %s to %s" % (", ".join(gits) or "?", dates[0] if dates else "?",
                                                       dates[-1] if dates else "?"))
    if loads:
        busy = max(loads) > float(env.get("cores") or 1) + 0.5  # beyond what the runs themselves add
        lines.append("- Load average (1 min) when timing started: %.1f to %.1f on %s cores%s"
                     % (min(loads), max(loads), env.get("cores", "?"),
                        "; other work shared the machine, so wall times of CPU runs are inflated "
                        "(the CPU-time tables are steadier)" if busy else ""))
    return "\n".join(lines) + "\n"


def seed_fps(docs):
    rows, impls = [], R.impl_order([d for d in docs if d["config"]["problem"] == "fps"])
    for (b, n, m), (serial, cuda) in sorted(R.DOC_FPS.items(), key=lambda kv: (kv[0][2], kv[0][0])):
        d = find(docs, problem="fps", batch=b, n=n, m=m)
        row = ["%d x %d, m=%d" % (b, n, m), serial, cuda, "%.1fx" % (serial / cuda)]
        e = R.entries(d) if d else {}
        row += [with_speedup(d, e.get(i), i) if d else "" for i in impls]
        rows.append(row)
    head = ["batch x n, samples", "doc serial", "doc CUDA", "doc speedup"] + impls
    return ("FPS on uniform random clouds (the document used real clouds). Documents: %s.\n\n"
            % R.DOC_FPS_MACHINE) + md_table(head, rows)


def seed_nn(docs):
    d = find(docs, problem="nn", n=120000, nq=120000)
    if not d:
        return ""
    rows = []
    impls = R.impl_order([d])
    for impl in impls + [i for i in R.DOC_NN if i not in impls]:
        e = R.entries(d).get(impl)
        doc = R.DOC_NN.get(impl)
        verify = (e or {}).get("verify", {}) if (e or {}).get("status") == "ok" else {}
        recall = verify.get("recall")
        rows.append([impl, ("%g s (%s)" % doc) if doc else "-",
                     R.fmt_s(R.median_ms(e)) if R.median_ms(e) else R.cell(e),
                     R.fmt_s(R.median_ms(e, "e2e")) if R.median_ms(e, "e2e") else "-",
                     R.fmt_x(R.speedup(d, impl)) if e else "-",
                     ("%.4f" % recall) if isinstance(recall, (int, float)) and recall >= 0 else "-"])
    head = ["implementation", "document", "compute", "end-to-end", "vs naive", "recall"]
    return ("NN, %s: two 120,000-point lidar sweeps (sensor moved 0.8 m; dataset `%s`).\n\n"
            % (d["config"]["id"], d["config"]["dataset"])) + md_table(head, rows)


def gap_cell(entry):
    v = (entry or {}).get("verify", {})
    gap, bound = v.get("gap"), v.get("bound")
    parts = []
    if isinstance(gap, (int, float)) and gap >= 0:
        parts.append("gap %.3g%%" % (100 * gap))
    if isinstance(bound, (int, float)) and bound >= 0:
        parts.append("bound %.3g%%" % (100 * bound))
    if v.get("unmatched"):
        parts.append("%d unmatched" % v["unmatched"])
    return ", ".join(parts) or "-"


def cpu_cell(entry):
    if entry is None or entry.get("status") != "ok":
        return R.cell(entry)
    return R.fmt_ms((entry.get("compute") or {}).get("cpu_median_ms"))


def stages_cell(e):
    st = ((e or {}).get("e2e") or {}).get("stages_ms")
    if not st:
        return "-"
    return " / ".join(R.fmt_ms(st[k]) for k in ("prepare", "compute", "fetch", "release"))


def problem_tables(problem, docs):
    docs = [d for d in docs if d["config"]["problem"] == problem]
    if not docs:
        return ""
    impls = R.impl_order(docs)
    ref = docs[0].get("reference") or "-"
    out = ["Reference: %s.\n" % (P.TABLE[problem].reference if problem in P.TABLE else ref)]
    rows = [[d["config"]["id"]] + [with_speedup(d, R.entries(d).get(i), i) for i in impls] for d in docs]
    out.append("\ncompute, ms (speedup over %s)\n\n" % ref + md_table(["configuration"] + impls, rows))
    cold = [i for i in impls if any(R.median_ms(R.entries(d).get(i), "compute_cold") for d in docs)]
    if cold:
        rows = [[d["config"]["id"]] + [R.cell(R.entries(d).get(i), "compute_cold") for i in cold]
                for d in docs]
        out.append("\ncompute cold (caches flushed before every iteration), ms\n\n"
                   + md_table(["configuration"] + cold, rows))
    rows = [[d["config"]["id"]] + [R.cell(R.entries(d).get(i), "e2e") for i in impls] for d in docs]
    out.append("\nend-to-end, ms\n\n" + md_table(["configuration"] + impls, rows))
    staged = [i for i in impls if any(stages_cell(R.entries(d).get(i)) != "-" for d in docs)]
    if staged:
        rows = [[d["config"]["id"]] + [stages_cell(R.entries(d).get(i)) for i in staged] for d in docs]
        out.append("\nwhere an end-to-end run goes, ms a run: prepare (allocation, uploads, index "
                   "build) / compute / fetch (results to the host) / release\n\n"
                   + md_table(["configuration"] + staged, rows))
    cpu_impls = [i for i in impls if any(R.entries(d).get(i, {}).get("device") == "cpu" for d in docs)]
    rows = [[d["config"]["id"]] + [cpu_cell(R.entries(d).get(i)) for i in cpu_impls] for d in docs]
    out.append("\ncompute, CPU time of the whole process (all threads), ms: steadier than wall time "
               "on a shared machine\n\n" + md_table(["configuration"] + cpu_impls, rows))
    if problem == "emd":
        rows = [[d["config"]["id"]] + [gap_cell(R.entries(d).get(i)) for i in impls] for d in docs]
        out.append("\ncost above the exact optimum (gap) and certified bound, from verification\n\n"
                   + md_table(["configuration"] + impls, rows))
    if problem == "nn" and any(not e.get("exact", True) for d in docs for e in d["results"]):
        rows = [[d["config"]["id"]] + ["%.4f" % R.entries(d)[i]["verify"]["recall"]
                                        if i in R.entries(d) and R.entries(d)[i].get("verify", {}).get("recall", -1) >= 0
                                        else "-" for i in impls] for d in docs]
        out.append("\nrecall (share of queries answered exactly)\n\n" + md_table(["configuration"] + impls, rows))
    return "".join(out)


# ---- headline ------------------------------------------------------------------------
# Every figure the documents report, with ours from each machine beside it. A figure
# comes from the seed suite (the documents' configurations), else from the full suite.
HEADLINE_SUITES = ("seed", "full", "knn", "ball")


class Machine:
    def __init__(self, name, suites):
        self.name, self.suites = name, suites
        self.label, self.gpu = R.short_label(suites), R.has_gpu(suites)
        self.borrowed = False  # whether a figure came from a suite other than seed

    def has(self, problem, loss=False):
        """Whether a headline suite holds figures of the problem (loss: EMD
        configurations in loss mode; else the others)."""
        return any(d["config"]["problem"] == problem and bool(d["config"].get("max_gap")) == loss
                   for s in HEADLINE_SUITES for d in self.suites.get(s, []))

    def find(self, **want):
        """The configuration's document, '[suite]' when not from seed."""
        for suite in HEADLINE_SUITES:
            d = find(self.suites.get(suite, []), **want)
            if d:
                self.borrowed |= suite != "seed"
                return d, R.suite_mark(suite)
        return None, ""


def ms_and_x(doc, impl):
    """'compute ms (speedup over the reference)', or the status in words."""
    e = R.entries(doc).get(impl) if doc else None
    if e is None:
        return "-"
    s = R.speedup(doc, impl)
    return R.cell(e) + (" (%s)" % R.fmt_x(s) if s and impl != doc.get("reference") else "")


def both(doc, impl, fmt):
    """'compute / end-to-end' of fmt(doc, impl, figure); the status in words when not timed."""
    e = R.entries(doc).get(impl) if doc else None
    if e is None:
        return "-"
    if R.median_ms(e) is None:
        return R.cell(e)
    text = "%s / %s" % (fmt(doc, impl, "compute"), fmt(doc, impl, "e2e"))
    return "-" if text == "- / -" else text


def time_ms(doc, impl, figure):
    return R.fmt_ms(R.median_ms(R.entries(doc)[impl], figure))


def time_s(doc, impl, figure):
    return R.fmt_s(R.median_ms(R.entries(doc)[impl], figure))


def speed(doc, impl, figure):
    return R.fmt_x(R.speedup(doc, impl, figure))


def hardware_line(machines, documents, data):
    ours = "; ".join("%s: %s" % (m.label, R.hardware(m.suites)) for m in machines)
    return "\nHardware. Documents: %s. Ours: %s. %s\n" % (documents, ours, data)


def headline_fps(machines):
    head = ["batch x n, m", "doc serial", "doc CUDA", "doc speedup"]
    for m in machines:
        head += ["%s dp" % m.label, "%s omp (speedup)" % m.label]
        if m.gpu:
            head += ["%s cuda_unrolled" % m.label, "%s CUDA speedup" % m.label]
    rows = []
    for (b, n, k), (serial, cuda) in sorted(R.DOC_FPS.items(), key=lambda kv: (kv[0][2], kv[0][0])):
        row = ["%d x %d, %d" % (b, n, k), serial, cuda, R.fmt_x(serial / cuda)]
        for m in machines:
            d, mark = m.find(problem="fps", batch=b, n=n, m=k)
            row += [ms_and_x(d, "dp") + mark, ms_and_x(d, "omp")]
            if m.gpu:
                cuda_ok = d and R.median_ms(R.entries(d).get("cuda_unrolled"))
                row += [both(d, "cuda_unrolled", time_ms), both(d, "cuda_unrolled", speed) if cuda_ok else "-"]
        rows.append(row)
    return md_table(head, rows) + (
        "\nms; speedups over the serial FPS of the same run (documents: serial / CUDA; ours: dp, the O(n m) "
        "serial loop, / each implementation); CUDA cells: compute (CUDA events) / end-to-end (host to host).\n"
        + hardware_line(machines, R.DOC_FPS_MACHINE,
                        "The documents timed real point clouds; ours are seeded uniform random clouds."))


# Where exact FPS goes past the field: the documents' sizes, the lidar sweep, fpsample's size,
# the sizes of the batch targets and the small clouds of a network's later layers.
FPS_OURS_ROWS = [("uniform", b, 10000, 1000) for b in (1, 6)] + [
    ("uniform", 6, 10000, 10000), ("lidar", 1, 120000, 4096), ("uniform", 1, 50000, 4096),
    ("uniform", 1, 100000, 10000), ("uniform", 32, 16384, 4096), ("uniform", 1, 1000000, 16384),
    ("uniform", 32, 1000, 100), ("uniform", 32, 1000, 250), ("uniform", 32, 1024, 256),
    ("uniform", 32, 256, 64)]


def ratio_cell(doc, impl, over):
    """'median ms (x over `over`)': the speedup over another implementation of the same run."""
    e = R.entries(doc) if doc else {}
    mine, base = R.median_ms(e.get(impl)), R.median_ms(e.get(over))
    if mine is None:
        return R.cell(e.get(impl)) or "-"
    return R.fmt_ms(mine) + (" (%s)" % R.fmt_x(base / mine) if base else "")


def headline_fps_ours(machines):
    head = ["dataset: batch x n, m"]
    for m in machines:
        if m.gpu:
            head += ["%s cuda_unrolled" % m.label, "%s cuda_pruned (x unrolled)" % m.label]
        head += ["%s dp" % m.label, "%s pruned (x dp)" % m.label]
    rows = []
    for ds, b, n, k in FPS_OURS_ROWS:
        row = ["%s: %d x %d, %d" % (ds, b, n, k)]
        for m in machines:
            d, mark = m.find(problem="fps", dataset=ds, batch=b, n=n, m=k)
            if m.gpu:
                row += [ratio_cell(d, "cuda_unrolled", None) + mark, ratio_cell(d, "cuda_pruned", "cuda_unrolled")]
            row += [ratio_cell(d, "dp", None), ratio_cell(d, "pruned", "dp")]
        rows.append(row)
    return md_table(head, rows) + (
        "\nms, compute (GPU: CUDA events, including the spatial sort); both pruned implementations return dp's "
        "sequence bit for bit. fpsample (QuickFPS-style, one CPU thread) reports 25 ms for 4,096 of 50,000 "
        "points; `pruned` runs one thread a cloud.\n")


NN_ROWS = [
    ("cuda_bvh", "cuda_bvh (ours: GPU BVH, exact)"),
    ("kdtree", "kdtree (ours: CPU k-d tree, exact)"),
    ("nanoflann", "nanoflann (k-d tree, exact, OpenMP)"),
    ("naive", "naive"),
    ("flann", "flann (k-d tree, exact)"),
    ("cuda_attempt1", "cuda_attempt1 (a launch per query)"),
    ("cuda_attempt2", "cuda_attempt2 (one launch, loop inside)"),
    ("cuda_attempt3", "cuda_attempt3 (300 azimuth wedges)"),
    ("omp", "omp (brute force, all cores)"),
]


def headline_nn(machines):
    head = ["implementation", "documents", "doc vs naive"]
    for m in machines:
        head += ["%s compute / e2e" % m.label, "%s vs naive" % m.label, "%s recall" % m.label]
    doc_naive = R.DOC_NN["naive"][0]
    found = [m.find(problem="nn", dataset="lidar", batch=1, n=120000, nq=120000) for m in machines]
    rows = []
    for impl, label in NN_ROWS:
        total, query = R.DOC_NN.get(impl, (None,))[0], R.DOC_NN_QUERY_S.get(impl)
        if total is None:
            row = [label, "-", "-"]
        elif query:
            row = [label, "%g s / %g s" % (query, total),
                   "%s / %s" % (R.fmt_x(doc_naive / query), R.fmt_x(doc_naive / total))]
        else:
            row = [label, "%g s" % total, R.fmt_x(doc_naive / total)]
        for d, mark in found:
            e = R.entries(d).get(impl) if d else None
            recall = (e or {}).get("verify", {}).get("recall") if R.median_ms(e) else None
            row += [both(d, impl, time_s) + mark,
                    "" if not R.median_ms(e) else "1x" if impl == d.get("reference") else both(d, impl, speed),
                    ("%.4g" % recall) if isinstance(recall, (int, float)) and recall >= 0 else ""]
        rows.append(row)
    return md_table(head, rows) + (
        "\nseconds, compute / end-to-end: flann's and kdtree's compute is the query, their end-to-end adds the "
        "index build; cuda_bvh's compute sorts and answers the queries, its end-to-end adds the uploads, the "
        "index build on the GPU and the download; "
        "cuda_attempt3's compute is the query, its end-to-end adds partitioning and transfers (the documents' "
        "0.12 s query / 0.36 s total). Speedups over naive of the same run; recall: share of exact answers.\n"
        + hardware_line(machines, "not named in the slides",
                        "The documents timed real Velodyne sweeps; ours are the seeded `lidar` generator's."))


def gap_text(entry):
    """The cost above the optimum and the certified bound, in percent."""
    if R.median_ms(entry) is None:
        return ""
    v = entry.get("verify") or {}
    gap, bound = v.get("gap"), v.get("bound")
    text = "%.2f%%" % (100 * gap) if isinstance(gap, (int, float)) and gap >= 0 else "n/c"
    text += " / %.2f%%" % (100 * bound) if isinstance(bound, (int, float)) and bound >= 0 else ""
    return text + (", %d unmatched" % v["unmatched"] if v.get("unmatched") else "")


def headline_emd(machines):
    head = ["clouds: batch x n", "host", "exact", "auction", "auction_omp", "cuda_auction_match",
            "its gap / bound", "cuda_auction", "its gap / bound"]
    rows, cpu_bounds, ours_bounds = [], [], []
    for dataset in ("uniform", "sphere"):
        for b in (1, 32):
            for n in (1024, 2048, 4096):
                for m in machines:
                    d, mark = m.find(problem="emd", dataset=dataset, batch=b, n=n)
                    label = "%s: %d x %d" % (dataset, b, n)
                    if not d:
                        if dataset == "uniform":  # sphere surfaces are newer: absent rows omitted
                            rows.append([label, m.label, "not measured"] + [""] * 6)
                        continue
                    e = R.entries(d)
                    cpu_bounds += [e[i]["verify"]["bound"] for i in ("auction", "auction_omp")
                                   if R.median_ms(e.get(i)) and e[i].get("verify", {}).get("bound", -1) >= 0]
                    cells = []
                    for impl in ("cuda_auction_match", "cuda_auction"):
                        run = e.get(impl)
                        x = " (%s)" % speed(d, impl, "compute") if R.median_ms(run) else ""
                        cells += [both(d, impl, time_ms) + x, gap_text(run)]
                    ours = e.get("cuda_auction")
                    if R.median_ms(ours) and ours.get("verify", {}).get("bound", -1) >= 0:
                        ours_bounds.append(ours["verify"]["bound"])
                    rows.append([label, m.label + mark, ms_and_x(d, "exact"), ms_and_x(d, "auction"),
                                 ms_and_x(d, "auction_omp")] + cells)
    cpu = (" Our CPU auctions' bound stays under %.4f%%." % (100 * max(cpu_bounds))) if cpu_bounds else ""
    ours = (" cuda_auction's certified bound stays under %.3f%% (it promises 0.1%%)."
            % (100 * max(ours_bounds))) if ours_bounds else ""
    return md_table(head, rows) + (
        "\nms, (speedup over exact of the same run); GPU columns: compute / end-to-end. gap: cost above "
        "the exact optimum (n/c: not computed, n > 2048); bound: certified (primal - dual) bound on it "
        "(inf: the prices prove nothing). cuda_auction_match is the documents' kernel, cuda_auction ours. "
        "The documents give no EMD timings; simulated, the seed kernel lands +0.9%% (uniform) to +3.9%% "
        "(sphere) above the optimum at n = 4096.%s%s\n" % (cpu, ours)
        + hardware_line(machines, "no EMD figures", "Seeded random clouds: uniform in the unit cube, "
                        "uniform on the unit sphere's surface."))


# ---- peers ---------------------------------------------------------------------------
def config_label(cfg):
    """A configuration in words; a ragged batch says its clouds' sizes."""
    label = config_words(cfg)
    if cfg.get("lengths"):
        sizes = cfg["lengths"][0]
        label += " (ragged: %d-%d points a cloud)" % (min(sizes), max(sizes))
    elif cfg["id"].endswith("/ragged"):
        label += " (ragged)"
    return label


def config_words(cfg):
    return P.TABLE[cfg["problem"]].words(cfg)


def ours_cell(doc, exact_only=True):
    best = R.fastest_ours(doc, exact_only)
    if not best:
        return "not measured"
    e, ms = best
    v = e.get("verify") or {}
    gap, bound = v.get("gap", -1), v.get("bound", -1)
    note = "" if e.get("exact") else " (gap %.2g%%)" % (100 * gap) if gap >= 0 else \
        " (bound %.2g%%)" % (100 * bound) if bound >= 0 else " (approximate)"
    return "%s %s%s" % (e["impl"], R.fmt_ms(ms), note)


def ratio(peer_ms, doc, exact_only=True):
    best = R.fastest_ours(doc, exact_only)
    return R.fmt_x(peer_ms / best[1]) if best and peer_ms else "-"


def no_peer(pdoc, device=None):
    """Why no peer (of that device) is in the fastest-peer cell."""
    mine = [e for e in pdoc.get("results", []) if device is None or e.get("device") == device]
    if not mine:
        return "not run"
    st = {e.get("status") for e in mine}
    approx = [e["peer"] for e in mine if e.get("status") in ("not-a-bijection", "value-only")
              or (e.get("status") == "ok" and not e.get("exact") and e["peer"] != R.OURS_PY)]
    if approx and "ok" not in {e.get("status") for e in mine if e.get("exact")}:
        return "none exact (approximate: %s)" % ", ".join(approx)
    return "skipped (budget)" if "skipped-budget" in st else "none answered right"


def wrong_peers(pdoc):
    return ", ".join("%s %s%s" % (e["peer"], R.short_version(e.get("version")),
                                  ": " + e["why"] if e.get("why") else "")
                     for e in pdoc.get("results", []) if e.get("status") == "wrong") or "none"


def peers_table(docs, pdocs):
    """Every peer on every configuration of one suite, beside our fastest verified
    implementation (EMD: cuda_auction within its certified 0.1% where the exact
    solver was not run)."""
    rows = []
    for pd in pdocs:
        doc = find(docs, id=pd["config"]["id"], max_gap=pd["config"].get("max_gap", 0))
        for e in pd.get("results", []):
            detail = e.get("detail", "")
            if e.get("status") in ("ok", "value-only"):
                detail = ""
            label = R.peer_label(e) + (", %s" % e["ragged"] if e.get("ragged") else "")
            rows.append([config_label(doc["config"] if doc else pd["config"]), label, R.peer_cell(e),
                         ours_cell(doc, False), ratio(R.peer_ms(e), doc, False),
                         detail[:160]])
    return md_table(["configuration", "peer (version, where)", "peer compute", "ours: fastest verified",
                     "peer / ours", "why not timed"], rows) + (
        "\nms, compute medians; peer / ours above 1 means ours is faster. Peers ran on the "
        "harness's inputs (same generators and seeds) and every answer was judged by `pcbench "
        "check`: **WRONG** answers are never timed. A peer's compute excludes what the harness "
        "also leaves out (k-d tree builds, uploads to the GPU). On a ragged batch a peer "
        "takes it whole (its lengths or batch pointers) or runs one call a cloud.\n")




def loss_cell(doc, impl):
    """'ms (bound b%)' of a run, or its status."""
    e = R.entries(doc).get(impl) if doc else None
    if R.median_ms(e) is None:
        return R.cell(e) or "-"
    bound = (e.get("verify") or {}).get("bound")
    return "%s (bound %.2g%%)" % (R.fmt_ms(R.median_ms(e)), 100 * bound) \
        if isinstance(bound, (int, float)) and bound >= 0 else R.fmt_ms(R.median_ms(e))


def headline_loss(machines, peers):
    """EMD as a training loss (batch 32; 64 and 128 at 2,048 points): cuda_auction
    certified within 0.1%, 1%, 5% and 10% beside the documents' kernel and MSN's emd at its
    training setting, GPU hosts only."""
    rows = []
    for m in [m for m in machines if m.gpu]:
        pdocs = [d for s in HEADLINE_SUITES for d in peers.get(m.name, {}).get(s, [])]
        for dataset in ("uniform", "sphere"):
            for batch, n in ((32, 1024), (32, 2048), (64, 2048), (128, 2048), (32, 4096),
                             (32, 8192)):
                want = dict(problem="emd", dataset=dataset, batch=batch, n=n)
                at = {g: m.find(max_gap=g, **want)[0] for g in (0, 0.01, 0.05, 0.1)}
                if not any(at.values()):
                    continue
                pd = find(pdocs, **want)

                def peer_at(gap, name):
                    d = find(pdocs, max_gap=gap, **want) if gap else pd
                    return next((e for e in (d or {}).get("results", []) if e["peer"] == name), None)
                msn = next(filter(None, (peer_at(g, "msn_emd_train") for g in (0.05, 0.1, 0.01, 0))),
                           None)  # from the run of the figures from Python where there is one
                py = [peer_at(g, R.OURS_PY) for g in (0.01, 0.05, 0.1)]
                rows.append(["%s: %d x %d" % (dataset, batch, n), m.label, loss_cell(at[0], "cuda_auction"),
                             loss_cell(at[0.01], "cuda_auction"), loss_cell(at[0.05], "cuda_auction"),
                             loss_cell(at[0.1], "cuda_auction"),
                             " / ".join(R.peer_cell(e) if e else "-" for e in py)
                             if any(py) else "not run",
                             loss_cell(at[0], "cuda_auction_match"),
                             R.peer_cell(msn) if msn else "not run"])
    if not rows:
        return "No loss-mode results yet (suite seed's /gap0.01 configurations on a GPU host).\n"
    return md_table(["clouds", "host", "cuda_auction 0.1%", "1%", "5% [full]", "10% [full]",
                     "from Python 1% / 5% / 10%, MSN's run", "the documents' kernel",
                     "MSN emd, training setting"], rows) + (
        "\nms, compute medians; bound: the certificate the answer carries (always a bijection). "
        "From Python: `pcbench.emd` on CUDA tensors in the peers' run, timed as MSN's emd is. "
        "The documents' kernel promises no bound (its own is shown); MSN's emd (eps 0.005, 50 "
        "iterations) promises no bijection.\n")


def headline_peers(machines, peers):
    rows = []
    for m in machines:
        pdocs = [(s, pd) for s in HEADLINE_SUITES for pd in peers.get(m.name, {}).get(s, [])]
        for suite, pd in pdocs:
            cfg = pd["config"]
            if cfg["problem"] == "fps" and cfg["n"] == 10000 and cfg["m"] == 1000 \
                    and cfg["batch"] not in (1, 6) or cfg.get("max_gap"):  # loss mode: its table
                continue
            doc = find(m.suites.get(suite, []), id=cfg["id"])
            mark = R.suite_mark(suite)
            py = R.ours_python(pd)
            py_ms = R.peer_ms(py) if py else None

            def peer(device):
                fp = R.fastest_peer(pd, device)
                if not fp:
                    return "-" if device == "cuda" and not m.gpu else no_peer(pd, device)
                vs = [R.fmt_x(R.peer_ms(fp) / py_ms)] if py_ms and device == "cuda" else []
                return "%s %s (%s)" % (R.peer_label(fp), R.fmt_ms(R.peer_ms(fp)),
                                       " / ".join(vs + [ratio(R.peer_ms(fp), doc)]))
            rows.append([config_label(cfg) + mark, m.label, ours_cell(doc), ours_cell(doc, False),
                         R.fmt_ms(py_ms) if py_ms else R.peer_cell(py) if py else "-",
                         peer("cuda"), peer("cpu"), wrong_peers(pd)])
    if not rows:
        return "No peer results yet (make peers-deps, then make peers).\n"
    return md_table(["configuration", "host", "ours: fastest exact", "ours: fastest verified",
                     "ours from Python", "fastest GPU peer answering right (x ours from Python / "
                     "x ours)", "fastest CPU peer answering right (x ours)", "peers judged wrong"],
                    rows) + (
        "\nms, compute medians, suite seed ([full]: suite full); ratios are the peer's time over "
        "ours (above 1: ours "
        "is faster). *Ours from Python*: pcbench's fastest GPU implementation called through "
        "its Python package on the same CUDA tensors, timed with CUDA events around the call "
        "like the GPU peers and in the same run as them (EMD: `cuda_auction` at 0.1%): the "
        "first ratio compares like with like, launch and wrapper costs on both sides; the "
        "second divides by our fastest exact implementation's device-event figure. Fastest "
        "verified includes our approximate implementations with their gap to the optimum. Peers "
        "ran on the same inputs on the same host; every answer was judged by `pcbench check`. "
        "fpsample's kd-line sampler does not start at the index asked for, so it is judged "
        "wrong as asked; `fpsample_ownstart` is the same call judged from its own first "
        "sample. Details, versions and every peer: results/TABLES.md.\n")


def headline(results, level="##", peers=None):
    # a machine with none of the headline's suites (only train, say) would
    # add empty columns: its figures are in its own section of TABLES.md
    machines = sorted((Machine(name, suites) for name, suites in results.items()
                       if any(suites.get(s) for s in HEADLINE_SUITES)),
                      key=lambda m: (not m.gpu, m.name))
    # each table's columns: the machines with figures of its problem
    fps, nn, emd = ([m for m in machines if m.has(p)] for p in ("fps", "nn", "emd"))
    parts = ["%s FPS: serial vs CUDA (the documents' table)\n\n" % level, headline_fps(fps),
             "\n%s FPS: exact pruning (ours) beside the classic kernel and dp\n\n" % level,
             headline_fps_ours(fps),
             "\n%s NN: 120k x 120k lidar sweeps\n\n" % level, headline_nn(nn),
             "\n%s EMD: exact vs auction\n\n" % level, headline_emd(emd),
             "\n%s EMD as a training loss: time at a certified bound\n\n" % level,
             headline_loss([m for m in machines if m.has("emd", True)], peers or {}),
             "\n%s Peers: the libraries people use instead, beside our fastest\n\n" % level,
             headline_peers(machines, peers or {})]
    where = ", ".join("%s = `%s`" % (m.label, m.name) for m in machines)
    parts.append("\nMachines: %s. From suite seed%s.\n" % (
        where, "; [full]: from suite full where seed lacks the configuration"
        if any(m.borrowed for m in machines) else ""))
    return "".join(parts)


# The front door's summary: per problem, the seed documents' fastest kernel beside ours, on
# the first GPU machine (compute, CUDA events), and where to read on.
SUMMARY_ROWS = [
    ("FPS", dict(problem="fps", dataset="uniform", batch=6, n=10000, m=10000), "cuda_unrolled", "cuda_pruned"),
    ("FPS", dict(problem="fps", dataset="lidar", batch=1, n=120000, m=4096), "cuda_unrolled", "cuda_pruned"),
    ("NN", dict(problem="nn", dataset="lidar", batch=1, n=120000, nq=120000), "cuda_attempt2", "cuda_bvh"),
    ("EMD", dict(problem="emd", dataset="uniform", batch=32, n=4096), "cuda_auction_match", "cuda_auction"),
    ("EMD", dict(problem="emd", dataset="sphere", batch=32, n=4096), "cuda_auction_match", "cuda_auction"),
    ("kNN", dict(problem="knn", dataset="sphere", batch=16, n=4096, nq=4096, k=16), "cuda_brute",
     "cuda_grid"),
    ("ball, first", dict(problem="ball", dataset="uniform", batch=32, n=16384, nq=4096,
                         select="first"), "cuda_classic", "cuda_grid"),
    ("ball, nearest", dict(problem="ball", dataset="uniform", batch=32, n=16384, nq=4096,
                           select="nearest"), "cuda_classic", "cuda_grid"),
]


SUMMARY_PEER_ROWS = [
    dict(problem="fps", dataset="uniform", batch=1, n=10000, m=1000),
    dict(problem="fps", dataset="lidar", batch=1, n=120000, m=4096),
    dict(problem="fps", dataset="uniform", batch=32, n=16384, m=4096),
    dict(problem="nn", dataset="lidar", batch=1, n=120000, nq=120000),
    dict(problem="nn", dataset="lidar", batch=1, n=1000000, nq=1000000),
    dict(problem="emd", dataset="uniform", batch=32, n=1024),
    dict(problem="emd", dataset="sphere", batch=32, n=8192),
    dict(problem="knn", dataset="sphere", batch=32, n=1024, nq=1024, k=16),
    dict(problem="knn", dataset="lidar", batch=1, n=120000, nq=120000, k=16),
    dict(problem="ball", dataset="uniform", batch=32, n=1024, nq=512, select="first"),
    dict(problem="ball", dataset="uniform", batch=32, n=16384, nq=4096, select="first"),
    dict(problem="ball", dataset="lidar", batch=1, n=120000, nq=4096, select="first"),
]


def newest(machines, docs_of):
    """The machine whose figure of a row is newest, its document(s) and a mark
    naming it when it is not the first machine (the front door's own); None
    when no machine has the row. docs_of(machine): a tuple of documents whose
    first is dated, or None."""
    best = None
    for i, m in enumerate(machines):
        docs = docs_of(m)
        if docs and (best is None or docs[0]["env"].get("date", "") > best[1][0]["env"].get("date", "")):
            best = (i, docs)
    if best is None:
        return None
    i, docs = best
    return machines[i], docs, "" if i == 0 else " (%s)" % machines[i].label


def summary_peers(machines, peers):
    """Ours beside the fastest GPU library answering right, from the peers' run
    (suite seed, else full: ours from the same suite), on the machine that
    measured the row last."""
    rows = []
    for want in SUMMARY_PEER_ROWS:
        def docs_of(m):
            suite, pd = next(((s, p) for s in HEADLINE_SUITES for p in peers.get(m.name, {}).get(s, [])
                              if all(p["config"].get(k) == v for k, v in want.items())
                              and not p["config"].get("max_gap")), (None, None))
            doc = find(m.suites.get(suite, []), **want) if pd else None
            return (pd, doc, suite) if doc else None
        got = newest(machines, docs_of)
        if not got:
            continue
        (pd, doc, suite), where = got[1], got[2]
        py = R.ours_python(pd)
        py_ms = R.peer_ms(py) if py else None
        fp = R.fastest_peer(pd, "cuda")
        off = ["%s (%s)" % (e["peer"], e["why"] if e.get("why") else
                            R.PEER_STATUS.get(e["status"], e["status"]).strip("*").lower())
               for e in pd.get("results", []) if e.get("device") == "cuda" and e["peer"] != R.OURS_PY
               and e.get("status") in ("wrong", "not-a-bijection", "value-only", "crashed")]
        rows.append([config_label(pd["config"]) + R.suite_mark(suite) + where,
                     ours_cell(doc, False),
                     R.fmt_ms(py_ms) if py_ms else "-",
                     "%s %s (%s)" % (fp["peer"], R.fmt_ms(R.peer_ms(fp)),
                                     R.fmt_x(R.peer_ms(fp) / py_ms) if py_ms else "-")
                     if fp else no_peer(pd, "cuda"), "; ".join(off) or "none"])
    if not rows:
        return ""
    return "\n" + md_table(["configuration", "ours, ms", "ours from Python, ms",
                            "fastest GPU library answering right, ms (x ours from Python)",
                            "GPU libraries not counted, and why"], rows) + (
        "\nThe GPU libraries PyTorch users call, built from their sources and run on the same "
        "inputs in one run with pcbench called the same way from Python (CUDA events around "
        "the call); every answer judged by `pcbench check`.\n")


def summary(results, peers=None):
    machines = [m for m in (Machine(name, suites) for name, suites in sorted(results.items())) if m.gpu]
    if not machines:
        return "No GPU results yet: `make bench` on a GPU machine, then `make tables`.\n"
    rows, others = [], []
    for problem, want, classic, ours in SUMMARY_ROWS:
        def docs_of(m):
            d, mark = m.find(**want)
            return (d, mark) if d and R.median_ms(R.entries(d).get(ours)) else None
        got = newest(machines, docs_of)
        (d, mark), where = got[1] if got else ((None, ""), ""), got[2] if got else ""
        if got and where and got[0] not in others:
            others.append(got[0])
        e = R.entries(d) if d else {}
        a, b = R.median_ms(e.get(classic)), R.median_ms(e.get(ours))
        rows.append([(config_label(d["config"]) if d else problem + " (not measured)") + mark + where,
                     "`%s` %s" % (classic, R.fmt_ms(a) if a else R.cell(e.get(classic)) or "-"),
                     "`%s` %s" % (ours, R.fmt_ms(b) if b else R.cell(e.get(ours)) or "-"),
                     R.fmt_x(a / b) if a and b else "-"])
    elsewhere = "".join("; rows marked (%s): %s" % (o.label, R.hardware(o.suites)) for o in others)
    return md_table(["configuration", "the documents' kernel, ms", "ours, ms", "speedup"], rows) + (
        "\nCompute (CUDA events), median, on %s%s; each row from the machine that measured it last; "
        "every answer verified before it is timed (EMD: ours certified within 0.1%% of the optimum, "
        "the classic kernel's gap measured). All figures, the CPU machines and the peers: "
        "[results/README.md](results/README.md).\n" % (R.hardware(machines[0].suites), elsewhere)
    ) + summary_peers(machines, peers or {})


def main():
    args = [a for a in sys.argv[1:] if a != "--front-door"]
    root = args[0] if args else "results"
    results = R.load(root)
    peers = R.load(root, peers=True)
    if not results:
        print("tables.py: no results under %s (run make bench first)" % root, file=sys.stderr)
        return 1
    out = ["# pcbench results\n\n",
           "Generated by `make tables` from %s/<machine>/<suite>/*.json; do not edit by hand.\n\n" % root,
           "## Headline\n\n", headline(results, "###", peers), "\n", LEGEND]
    for machine, suites in results.items():
        out.append("\n## %s\n\n" % machine)
        out.append(env_section(machine, suites))
        if "seed" in suites:
            out.append("\n### Against the documents (suite seed)\n\n")
            out.append(seed_fps(suites["seed"]))
            nn = seed_nn(suites["seed"])
            if nn:
                out.append("\n" + nn)
        for suite in ["seed", "full", "quick"] + sorted(set(suites) - {"seed", "full", "quick"}):
            if suite not in suites:
                continue
            for problem in R.PROBLEMS:
                text = problem_tables(problem, suites[suite])
                if text:
                    note = ("OpenMP implementations timed on one thread (stable ratios for the "
                            "regression gate).\n\n" if suite == "quick" else "")
                    out.append("\n### %s, suite %s\n\n%s%s" % (problem.upper(), suite, note, text))
            pdocs = peers.get(machine, {}).get(suite)
            if pdocs:
                out.append("\n### Peers, suite %s\n\n%s" % (suite, peers_table(suites[suite], pdocs)))
    write(os.path.join(root, "TABLES.md"), "".join(out))
    write(os.path.join(root, "HEADLINE.md"),
          "# pcbench headline figures\n\nGenerated by `make tables`; details in TABLES.md.\n\n"
          + headline(results, peers=peers))
    update_readme(os.path.join(root, "README.md"), headline(results, "##", peers))
    if "--front-door" in sys.argv[1:]:
        update_readme(os.path.join(os.path.dirname(os.path.abspath(root)), "README.md"),
                      summary(results, peers), SUMMARY_BEGIN, SUMMARY_END)
    print("tables.py: wrote %s and %s (%d machine%s)" % (os.path.join(root, "TABLES.md"),
          os.path.join(root, "HEADLINE.md"), len(results), "" if len(results) == 1 else "s"))
    return 0


README_BEGIN = "<!-- headline: generated by make tables -->\n"
README_END = "<!-- end of headline -->\n"
SUMMARY_BEGIN = "<!-- summary: generated by make tables -->\n"
SUMMARY_END = "<!-- end of summary -->\n"


def update_readme(path, text, begin_mark=README_BEGIN, end_mark=README_END):
    """Put text between a README's markers, if it has them."""
    try:
        with open(path, encoding="utf-8") as f:
            readme = f.read()
    except OSError:
        return
    begin, end = readme.find(begin_mark), readme.find(end_mark)
    if begin < 0 or end < begin:
        return
    write(path, readme[:begin + len(begin_mark)] + text + readme[end:])


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
