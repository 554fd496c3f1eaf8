#!/usr/bin/env python3
"""tables.py RESULTS - write RESULTS/TABLES.md and RESULTS/HEADLINE.md from the
results `pcbench bench` stored under RESULTS/<machine>/<suite>/ (stdlib only)."""
import os
import sys

import pcbresults as R

LEGEND = (
    "Times are medians of interleaved repetitions, in ms unless marked. **compute**: the\n"
    "work with inputs already prepared (uploaded to the GPU, indexes built); CUDA rows are\n"
    "device event times. **end-to-end**: host arrays to host results (allocation, transfers,\n"
    "index build, compute, download), wall clock. (Nx): speedup over the problem's serial\n"
    "reference on the same configuration, measured in the same run. Every timed result was\n"
    "verified first; *skipped (budget)*: predicted or measured over the per-run budget\n"
    "(when it was verified anyway, the one run's time is shown); *n/a*: not available on\n"
    "this machine (no CUDA device, not built, or the dataset or validator missing).\n")


def md_table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def with_speedup(doc, entry, impl, figure="compute"):
    text = R.cell(entry, figure)
    s = R.speedup(doc, impl, figure) if entry else None
    if s is not None and impl != doc.get("reference"):
        text += " (%.3gx)" % s
    return text


def find(docs, **want):
    for d in docs:
        c = d["config"]
        if all(c.get(k) == v for k, v in want.items()):
            return d
    return None


def fastest(doc, device=None, exact_only=False):
    best = None
    for impl, e in R.entries(doc).items():
        ms = R.median_ms(e)
        if ms is None or (device and e.get("device") != device) or (exact_only and not e.get("exact")):
            continue
        if best is None or ms < best[1]:
            best = (impl, ms)
    return best


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
        lines.append("- nvidia-smi (name, driver, SM clock, max SM clock, memory clock, max, power limit): %s"
                     % env.get("nvidia_smi"))
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
                     ("%.3gx" % R.speedup(d, impl)) if e and R.speedup(d, impl) else "-",
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


def problem_tables(problem, docs):
    docs = [d for d in docs if d["config"]["problem"] == problem]
    if not docs:
        return ""
    impls = R.impl_order(docs)
    ref = docs[0].get("reference") or "-"
    out = ["Reference: %s.\n" % R.REFERENCE_NOTE.get(problem, ref)]
    rows = [[d["config"]["id"]] + [with_speedup(d, R.entries(d).get(i), i) for i in impls] for d in docs]
    out.append("\ncompute, ms (speedup over %s)\n\n" % ref + md_table(["configuration"] + impls, rows))
    rows = [[d["config"]["id"]] + [R.cell(R.entries(d).get(i), "e2e") for i in impls] for d in docs]
    out.append("\nend-to-end, ms\n\n" + md_table(["configuration"] + impls, rows))
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
def headline(results):
    machines = list(results)
    lines = []

    def pick(machine, **want):
        return find(results[machine].get("seed", []), **want)

    def fps(machine, which):
        d = pick(machine, problem="fps", batch=6, n=10000, m=10000)
        if not d:
            return "-"
        e = R.entries(d)
        if which == "serial":
            return R.cell(e.get("dp")) + " ms" if "dp" in e else "-"
        best = fastest(d, device="cuda")
        if not best:
            return "not run"
        s = R.speedup(d, best[0])
        return "%s ms, %s%s" % (R.fmt_ms(best[1]), best[0], " (%.3gx)" % s if s else "")

    def nn(machine, which):
        d = pick(machine, problem="nn", n=120000, nq=120000)
        if not d:
            return "-"
        e = R.entries(d)
        if which in ("naive", "flann"):
            ent = e.get(which)
            return R.fmt_s(R.median_ms(ent)) if R.median_ms(ent) else R.cell(ent) or "-"
        best = fastest(d, device="cuda", exact_only=which == "cuda_exact")
        if not best:
            return "not run"
        ent = e[best[0]]
        return "%s compute, %s end-to-end, %s" % (R.fmt_s(best[1]), R.fmt_s(R.median_ms(ent, "e2e")), best[0])

    def emd(machine, which):
        d = pick(machine, problem="emd", batch=1, n=4096)
        if not d:
            return "-"
        e = R.entries(d)
        if which == "exact":
            return R.cell(e.get("exact")) + " ms" if "exact" in e else "-"
        best = fastest(d, device="cuda") or fastest(d)
        if not best:
            return "-"
        return "%s ms, %s (%s)" % (R.fmt_ms(best[1]), best[0], gap_cell(e[best[0]]))

    rows = [
        ["FPS 6 x 10000 points, 10000 samples: serial (dp)", "4561 ms"] + [fps(m, "serial") for m in machines],
        ["FPS same: fastest CUDA", "250 ms (18.2x)"] + [fps(m, "cuda") for m in machines],
        ["NN 120k x 120k lidar: naive serial", "62 s"] + [nn(m, "naive") for m in machines],
        ["NN same: FLANN k-d tree (exact)", "0.23 s"] + [nn(m, "flann") for m in machines],
        ["NN same: fastest exact CUDA", "0.36 s total, 0.12 s query (approximate)"]
        + [nn(m, "cuda_exact") for m in machines],
        ["EMD 4096 points, batch 1: exact", "-"] + [emd(m, "exact") for m in machines],
        ["EMD same: fastest auction", "-"] + [emd(m, "auction") for m in machines],
    ]
    lines.append(md_table(["figure", "documents"] + machines, rows))
    return "".join(lines)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "results"
    results = R.load(root)
    if not results:
        print("tables.py: no results under %s (run make bench first)" % root, file=sys.stderr)
        return 1
    head = headline(results)
    out = ["# pcbench results\n\n",
           "Generated by `make tables` from %s/<machine>/<suite>/*.json; do not edit by hand.\n\n" % root,
           "## Headline\n\n", head, "\n", LEGEND]
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
    write(os.path.join(root, "TABLES.md"), "".join(out))
    write(os.path.join(root, "HEADLINE.md"),
          "# pcbench headline figures\n\nGenerated by `make tables`; details in TABLES.md.\n\n" + head)
    print("tables.py: wrote %s and %s (%d machine%s)" % (os.path.join(root, "TABLES.md"),
          os.path.join(root, "HEADLINE.md"), len(results), "" if len(results) == 1 else "s"))
    return 0


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
