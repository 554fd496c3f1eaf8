"""Reading pcbench results for tables.py and plots.py (Python 3 stdlib only).

Layout: <root>/<machine>/<suite>/<problem>-<...>.json, one file per
configuration, written by `pcbench bench`; peers-<problem>-<...>.json beside
them, written by scripts/peers/ (other libraries on the same inputs).
<root>/baseline holds the regression gate's baseline and is not a machine.
"""
import json
import os
import statistics
import sys

import pcbproblems as P

# Folders of a results root that hold no machine: the gate's baseline, the
# plots, "mine", where make bench puts this host's own figures, and the site.
NOT_MACHINES = {"baseline", "plots", "mine", "site"}
PEERS_PREFIX = "peers-"
# The format versions this reader knows (bench/harness/harness.h, scripts/peers/);
# a document of another version is refused, never guessed at.
FORMATS = {False: "pcbench-results/1", True: "pcbench-peers/1"}
PROBLEMS = P.PROBLEMS

# What the source documents report (i7-10710U CPU, MX350 GPU for FPS; NN on
# an unnamed CPU/GPU pair). FPS: (batch, n, m) -> (serial ms, CUDA ms).
DOC_FPS = {
    (1, 10000, 1000): (76, 8),
    (2, 10000, 1000): (157, 8),
    (3, 10000, 1000): (234, 8),
    (4, 10000, 1000): (311, 15),
    (5, 10000, 1000): (381, 20),
    (6, 10000, 1000): (459, 26),
    (6, 10000, 10000): (4561, 250),
}
DOC_FPS_MACHINE = "i7-10710U (serial) / GeForce MX350 (CUDA)"
DOC_NN_QUERY_S = {"cuda_attempt3": 0.12}  # the part of attempt 3's total spent in queries
# NN, 120,000 x 120,000 Velodyne sweeps: implementation -> (seconds, note).
DOC_NN = {
    "naive": (62.0, "naive serial"),
    "flann": (0.23, "FLANN k-d tree"),
    "cuda_attempt1": (9.4, "attempt 1: a launch per query"),
    "cuda_attempt2": (2.0, "attempt 2: loop inside one kernel"),
    "cuda_attempt3": (0.36, "attempt 3: 300 azimuth partitions, 0.12 s of it query"),
}
STATUS_SHORT = {
    "failed-verification": "**FAILED** (verification)",
    "failed-run": "**FAILED** (run)",
    "unsupported": "unsupported",
    "skipped-budget": "skipped (budget)",
    "unavailable": "n/a",
}


def load(root, peers=False):
    """{machine: {suite: [document, ...]}}, documents ordered by problem, size:
    the harness's documents, or with peers=True the peers' ones."""
    out = {}
    if not os.path.isdir(root):
        return out
    for machine in sorted(os.listdir(root)):
        mdir = os.path.join(root, machine)
        if machine in NOT_MACHINES or not os.path.isdir(mdir):
            continue
        suites = {}
        for suite in sorted(os.listdir(mdir)):
            sdir = os.path.join(mdir, suite)
            if not os.path.isdir(sdir):
                continue
            docs = []
            for name in sorted(os.listdir(sdir)):
                if not name.endswith(".json") or name.startswith(PEERS_PREFIX) != peers:
                    continue
                try:
                    with open(os.path.join(sdir, name), encoding="utf-8") as f:
                        doc = json.load(f)
                except (OSError, ValueError) as e:
                    print("pcbresults: skipping %s: %s" % (os.path.join(sdir, name), e))
                    continue
                if not isinstance(doc, dict) or "config" not in doc:
                    continue  # not a results document (e.g. python/binding-timing.json)
                if doc.get("format") != FORMATS[peers]:
                    print("pcbresults: %s: results format %r; this version reads %r only"
                          % (os.path.join(sdir, name), doc.get("format"), FORMATS[peers]),
                          file=sys.stderr)
                    sys.exit(3)
                doc["_file"] = "%s/%s/%s" % (machine, suite, name)  # where it came from
                docs.append(doc)
            docs.sort(key=sort_key)
            if docs:
                suites[suite] = docs
        if suites:
            out[machine] = suites
    return out


def work(cfg):
    return P.TABLE[cfg["problem"]].work(cfg)


def sort_key(doc):
    cfg = doc["config"]
    return (PROBLEMS.index(cfg["problem"]), cfg["dataset"], work(cfg), cfg["id"])


def entries(doc):
    return {e["impl"]: e for e in doc.get("results", [])}


def median_ms(entry, figure="compute"):
    """The figure's median in ms when the entry was timed, else None."""
    if entry is None or entry.get("status") != "ok":
        return None
    fig = entry.get(figure)
    return fig.get("median_ms") if fig else None


def speedup(doc, impl, figure="compute"):
    e = entries(doc)
    ref, mine = median_ms(e.get(doc.get("reference")), figure), median_ms(e.get(impl), figure)
    return ref / mine if ref and mine else None


def impl_order(docs):
    """Reference first, then CPU before CUDA, in order of first appearance."""
    seen = []
    for d in docs:
        for e in d.get("results", []):
            if e["impl"] not in seen:
                seen.append(e["impl"])
    devices = {}
    refs = {d.get("reference") for d in docs}
    for d in docs:
        for e in d.get("results", []):
            devices.setdefault(e["impl"], e.get("device", "cpu"))
    return sorted(seen, key=lambda i: (i not in refs, devices.get(i) == "cuda", seen.index(i)))


def has_gpu(suites):
    return bool(latest_env(suites).get("gpu"))


def short_label(suites):
    """A column label for a machine: its GPU's model, else its CPU core count."""
    env = latest_env(suites)
    gpu = (env.get("gpu") or {}).get("name")
    if gpu:
        words = [w for w in gpu.split() if w.upper() not in ("NVIDIA", "GEFORCE", "AMD", "TESLA")]
        return "%s host" % (words[0] if words else gpu)
    cpu = str(env.get("cpu", ""))
    family = next((f for f in ("Xeon", "EPYC", "Ryzen", "Core") if f in cpu), "")
    return "%s-core %sCPU" % (env.get("cores", "?"), family + " " if family else "")


def hardware(suites):
    """One line: the GPU (driver, clocks) and CPU the results were measured on."""
    env = latest_env(suites)
    cpu = "%s x %s cores" % (env.get("cpu", "?"), env.get("cores", "?"))
    gpu = env.get("gpu")
    if not gpu:
        return cpu + ", no GPU"
    text = gpu.get("name", "?")
    smi = [f.strip() for f in str(env.get("nvidia_smi", "")).split(",")]
    drv = gpu.get("cuda_driver")
    cuda = ", CUDA %d.%d" % (drv // 1000, drv % 1000 // 10) if isinstance(drv, int) and drv > 0 else ""
    sm, mem, dropped = sample_clocks(suites)
    if len(smi) >= 7 and sm:  # name, driver, SM clock, max SM clock, memory clock, max, power limit
        text += (" (driver %s%s, SM clock while timed %d MHz median, %d to %d, of max %s over "
                 "%d samples read by NVML, %d dropped as throttled; memory %d MHz; %s limit)" % (
                     smi[1], cuda, statistics.median(sm), min(sm), max(sm), smi[3], len(sm), dropped,
                     statistics.median(mem), smi[6]))
    elif len(smi) >= 7:
        text += " (driver %s%s, SM %s of max %s at the start, memory %s, %s limit)" % (
            smi[1], cuda, smi[2], smi[3], smi[4], smi[6])
    return "%s with %s" % (text, cpu)


def sample_clocks(suites):
    """The SM and memory clocks NVML read after every GPU sample kept, over
    every figure of these results, and the count of samples dropped."""
    sm, mem, dropped = [], [], 0
    for docs in suites.values():
        for d in docs:
            for e in d.get("results", []):
                for key in ("compute", "compute_cold"):
                    fig = e.get(key) or {}
                    sm += [c for c in (fig.get("gpu") or {}).get("sm_mhz", []) if c]
                    mem += [c for c in (fig.get("gpu") or {}).get("mem_mhz", []) if c]
                    dropped += fig.get("dropped") or 0
    return sm, mem, dropped


def latest_env(suites):
    best = None
    for docs in suites.values():
        for d in docs:
            env = d.get("env") or {}
            if best is None or env.get("date", "") > best.get("date", ""):
                best = env
    return best or {}


def load_averages(suites):
    """One-minute load averages when each configuration's timing started."""
    return [d["load_avg"] for docs in suites.values() for d in docs
            if isinstance(d.get("load_avg"), (int, float)) and d["load_avg"] >= 0]


def fmt_ms(v):
    if v is None:
        return "-"
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    if v >= 1:
        return "%.2f" % v
    return "%.3g" % v


def fmt_x(ratio):
    """A speedup: three significant digits, never in exponent form."""
    if ratio is None:
        return "-"
    return ("%.0fx" % ratio) if ratio >= 100 else ("%.3gx" % ratio)


def fmt_s(ms):
    if ms is None:
        return "-"
    s = ms / 1e3
    return "%.3g s" % s


# Why sampling stopped, when it stopped short of the noise target: the time
# allowed a figure, the budget's share, the most samples, too many throttled.
SHORT_STOPS = ("time", "budget", "samples", "throttled")


def short_of_target(fig):
    """Whether a figure stopped before its noise target (or is one run): '~' in the tables."""
    return fig.get("stop") in SHORT_STOPS or fig.get("clock") == "verification run"


def cell(entry, figure="compute"):
    """A table cell: the median (with its dropped samples, if any; '~' before it when it
    stopped short of the noise target), or the status in words."""
    if entry is None:
        return ""
    status = entry.get("status")
    if status == "ok":
        fig = entry.get(figure) or {}
        text = fmt_ms(median_ms(entry, figure))
        if short_of_target(fig) and text != "-":
            text = "~" + text
        if fig.get("unreliable"):
            text += " (unreliable: %d of %d samples throttled)" % (
                fig.get("dropped", 0), fig.get("dropped", 0) + fig.get("reps", 0))
        elif fig.get("dropped"):
            text += " (%d dropped)" % fig["dropped"]
        return text
    text = STATUS_SHORT.get(status, status)
    if status == "skipped-budget":
        e2e = entry.get("e2e")
        if e2e and e2e.get("clock") == "verification run":
            text = "skipped (one run %s)" % fmt_s(e2e["median_ms"])
    return text


def dropped_samples(suites):
    """(dropped, taken, unreliable figures) over a machine's GPU figures, or None
    when none recorded the GPU's state."""
    dropped = taken = unreliable = 0
    seen = False
    for docs in suites.values():
        for d in docs:
            for e in d.get("results", []):
                for name in ("compute", "compute_cold", "e2e"):
                    f = e.get(name) or {}
                    if "gpu" not in f:
                        continue
                    seen = True
                    dropped += f.get("dropped", 0)
                    taken += f.get("dropped", 0) + f.get("reps", 0)
                    unreliable += bool(f.get("unreliable"))
    return (dropped, taken, unreliable) if seen else None


# ---- peers (scripts/peers/) -------------------------------------------------------------
def suite_mark(suite):
    """What a figure from a suite other than seed carries in the tables: ' [full]'."""
    return "" if suite == "seed" else " [%s]" % suite


def fastest_ours(doc, exact_only=True):
    """(entry, compute ms) of our fastest implementation verified on doc (exact
    ones only, or any), or None."""
    best = None
    for e in doc.get("results", []) if doc else []:
        ms = median_ms(e)
        if (e.get("exact") or not exact_only) and ms is not None and (best is None or ms < best[1]):
            best = (e, ms)
    return best


def peer_ms(entry):
    """A peer's compute median when it answered right and was timed, else None."""
    if entry.get("status") != "ok" or not entry.get("compute"):
        return None
    return entry["compute"].get("median_ms")


OURS_PY = "pcbench_py"  # pcbench itself, called from Python like the peers: not a peer


def fastest_peer(pdoc, device=None):
    """The fastest peer entry (on that device: "cpu", "cuda") that answered
    exactly right, or None."""
    best = None
    for e in pdoc.get("results", []) if pdoc else []:
        ms = peer_ms(e)
        if ms is not None and e.get("exact") and e["peer"] != OURS_PY and (
                device is None or e.get("device") == device) and (
                best is None or ms < peer_ms(best)):
            best = e
    return best


def ours_python(pdoc):
    """pcbench's entry timed through Python in the peers' run, or None."""
    return next((e for e in (pdoc or {}).get("results", []) if e["peer"] == OURS_PY), None)


def short_version(v):
    """A version for a table cell: a commit's first 7 hex digits."""
    v = str(v or "")
    return "commit " + v.split()[1][:7] if v.startswith("commit ") and len(v.split()) > 1 else v


def peer_label(e):
    """'name version (device, threads)'."""
    where = e.get("device", "cpu")
    if where == "cpu" and e.get("threads") not in (None, "-"):
        where += ", %s thread%s" % (e["threads"], "" if e["threads"] == "1" else "s")
    return "%s %s (%s)" % (e["peer"], short_version(e.get("version")), where)


PEER_STATUS = {"wrong": "**WRONG**", "unavailable": "n/a", "skipped-budget": "skipped (budget)",
               "failed-run": "**FAILED** (run)", "value-only": "value only",
               "crashed": "**CRASHED**", "timed-out": "**TIMED OUT**"}


def peer_cell(e):
    ms = peer_ms(e)
    if ms is not None:
        return fmt_ms(ms)
    if e.get("status") == "value-only" and e.get("compute"):
        return "%s (gap %+.2g%%)" % (fmt_ms(e["compute"]["median_ms"]), 100 * e.get("gap", 0))
    if e.get("status") == "not-a-bijection" and e.get("compute"):
        b = e.get("bijection") or {}
        return "%s (**not a bijection**: %s shared, %s unmatched)" % (
            fmt_ms(e["compute"]["median_ms"]), b.get("shared", "?"), b.get("unmatched", "?"))
    cell = PEER_STATUS.get(e.get("status"), e.get("status", "?"))
    return "%s (%s)" % (cell, e["why"]) if e.get("status") == "wrong" and e.get("why") else cell
