"""The run: each peer timed and judged on each configuration, in a process of its own."""
import argparse
import concurrent.futures
import datetime
import functools
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pcbproblems as P

from .adapters import PEERS, UserPeer
from .common import FINAL, np
from .inputs import read_configs, read_ply
from .store import env_record, results_dir, store_entry, stored_entry


# ---- timing ------------------------------------------------------------------------------
def clock(peer):
    """A timer for one call: CUDA events for GPU peers, else the wall clock (ms)."""
    if peer.device == "cuda":
        import torch

        def run(fn):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            out = fn()
            stop.record()
            torch.cuda.synchronize()
            return out, start.elapsed_time(stop)
        return run

    def run(fn):
        t0 = time.perf_counter()
        out = fn()
        return out, (time.perf_counter() - t0) * 1e3
    return run


def median(xs):
    s = sorted(xs)
    k = len(s) // 2
    return s[k] if len(s) % 2 else 0.5 * (s[k - 1] + s[k])


def figure(samples, device):
    return {"clock": "cuda-events" if device == "cuda" else "real", "reps": len(samples),
            "iterations": 1, "median_ms": median(samples), "min_ms": min(samples),
            "samples_ms": samples}


def as_list(x):
    """A flat list of an answer: a numpy array, a torch tensor or a list."""
    if hasattr(x, "detach"):
        x = x.detach().cpu()
    if hasattr(x, "tolist"):
        x = x.tolist()
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in as_list(item)]
    return [x]


# ---- judging -----------------------------------------------------------------------------
def on_every_core(fn, items):
    """[fn(item) for item in items], the items spread over the cores: each is a
    pcbench process of its own (an exact EMD optimum takes seconds at n = 8192)."""
    items = list(items)
    if len(items) < 2:
        return [fn(x) for x in items]
    with concurrent.futures.ThreadPoolExecutor(min(len(items), os.cpu_count() or 1)) as pool:
        return list(pool.map(fn, items))


def number(v):
    """An answer's entry as the check reads it: an integer as one (an index
    held in a float too), any other number in full (grid's mean points)."""
    return "%d" % int(v) if isinstance(v, int) or float(v).is_integer() else repr(float(v))


def judge(pcbench, cfg, folder, peer, answers, scratch):
    """(ok, detail) from pcbench check over the clouds answered (all checked at
    once; the first wrong cloud in order is the one reported)."""
    cmds = []
    for i, ans in enumerate(answers):
        path = os.path.join(scratch, "answer-%d.txt" % i)
        flat = as_list(ans)
        a = os.path.join(folder, "a-%d.ply" % i)
        b = os.path.join(folder, "b-%d.ply" % i)
        problem = P.TABLE[cfg["problem"]]
        check = [pcbench, "check", cfg["problem"]]
        if problem.value_answers:
            cmds.append(check + problem.check(cfg, a, b, repr(float(flat[0])), peer))
            continue
        row = problem.row(cfg)  # a line a query: its indices
        with open(path, "w", encoding="ascii") as f:
            f.writelines(" ".join(number(v) for v in flat[i:i + row]) + "\n"
                         for i in range(0, len(flat), row))
        if getattr(peer, "own_start", False):  # FPS from a point of its own
            cfg = dict(cfg, start=int(flat[0]))
        cmds.append(check + problem.check(cfg, a, b, path, peer))
    summaries = []
    runs = on_every_core(lambda c: subprocess.run(c, capture_output=True, text=True), cmds)
    for i, p in enumerate(runs):
        lines = (p.stdout + p.stderr).strip().splitlines() or ["(no output)"]
        if p.returncode == 1:  # check saw cloud i alone, as its cloud (or pair) 0
            said = re.sub(r"\b(cloud|pair) 0\b", lambda m: "%s %d" % (m.group(1), i),
                          " / ".join(lines[:2]))
            return False, "cloud %d: %s" % (i, said)
        if p.returncode != 0:
            raise RuntimeError("pcbench check exit %d: %s" % (p.returncode, " ".join(lines)))
        summaries.append(lines[-1])
    more = "; %d clouds, all pass" % len(answers) if len(answers) > 1 else ""
    return True, summaries[0] + more


def optimum(pcbench, folder, i):
    """The exact EMD of pair i (mean matched distance), from pcbench's exact
    solver; kept beside the pair (the run's own inputs) for the next peer."""
    kept = os.path.join(folder, "optimum-%d.txt" % i)
    try:
        with open(kept, encoding="ascii") as f:
            return float(f.read())
    except (OSError, ValueError):
        pass
    p = subprocess.run([pcbench, "emd", "-a", os.path.join(folder, "a-%d.ply" % i), "-b",
                        os.path.join(folder, "b-%d.ply" % i), "--impl", "exact", "-o",
                        os.devnull], capture_output=True, text=True, check=True)
    best = float(p.stdout.split()[1])
    tmp = "%s.%d.tmp" % (kept, os.getpid())  # peers' processes may race to keep it
    with open(tmp, "w", encoding="ascii") as f:
        f.write(repr(best))
    os.replace(tmp, kept)
    return best


# ---- one peer on one configuration ------------------------------------------------------
@functools.lru_cache(maxsize=1)  # every peer of a configuration reads the same clouds
def load_clouds(folder, batch, pairs):
    """[{"a": cloud, "b": second cloud when pairs}] for the clouds of a batch."""
    clouds = []
    for i in range(batch):
        c = {"a": read_ply(os.path.join(folder, "a-%d.ply" % i))}
        if pairs:
            c["b"] = read_ply(os.path.join(folder, "b-%d.ply" % i))
        clouds.append(c)
    return clouds


def entry_head(peer):
    """What every stored entry says of its peer, before any outcome."""
    return {"peer": peer.name, "library": getattr(peer, "library", peer.module),
            "device": peer.device, "threads": peer.threads, "exact": peer.exact, "what": peer.what,
            "when": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "compute": None}


def run_peer(peer, cfg, folder, args, meta):
    why = peer.available() or peer.unsupported(cfg)  # first: it may learn the peer's device
    if not why and cfg.get("max_gap") and peer.exact:
        why = "exact: its answer is the one of the configuration without /gap"
    entry = entry_head(peer)
    if why:
        entry.update(status="unavailable", detail=why, version=None)
        return entry
    entry["version"] = peer.version()
    batch = cfg["batch"]
    clouds = load_clouds(folder, batch, P.TABLE[cfg["problem"]].sides == 2)
    timer = clock(peer)
    budget = args.budget if args.budget else float(meta.get("run_budget", meta.get("budget", 30)))
    reps = args.reps or int(meta.get("reps", 5))
    # inside the run's inputs, which the parent removes even when a peer kills this process
    scratch = tempfile.mkdtemp(prefix=".scratch-", dir=folder)
    ragged = any(len({len(c[k]) for c in clouds}) > 1 for k in clouds[0])
    try:
        if ragged and not peer.ragged:  # clouds of different sizes: one call a cloud
            entry["ragged"] = "one call a cloud"
            states, prep_ms = timer(lambda: [s for c in clouds for s in peer.prepare([c], cfg)])
        else:
            if ragged:
                entry["ragged"] = "the batch whole"
            states, prep_ms = timer(lambda: peer.prepare(clouds, cfg))
        # One state first, twice (a warm-up, then a measure): the batch's predicted time.
        timer(lambda: peer.solve(states[0]))
        first, one_ms = timer(lambda: peer.solve(states[0]))
        predicted_s = one_ms * len(states) / 1e3
        first = first[:1] if peer.batched else [first]
        if predicted_s > budget:
            ok, detail, _ = judge_or_value(args.pcbench, cfg, folder, peer, first, scratch)
            entry.update(status="skipped-budget" if ok else "wrong", predicted_s=predicted_s,
                         detail="predicted %.3g s per run, over the budget of %g s; cloud 0 "
                                "judged: %s" % (predicted_s, budget, detail))
            if not ok:
                entry["why"] = why_wrong(cfg, clouds, first, detail)
            return entry
        solve_all = lambda: ([a for s in states for a in peer.solve(s)] if peer.batched
                             else [peer.solve(s) for s in states])
        answers, _ = timer(solve_all)  # warm-up of the whole batch; its answers are judged
        ok, detail, gap = judge_or_value(args.pcbench, cfg, folder, peer, answers, scratch)
        status = "value-only" if peer.value_only else "ok"
        if not ok and cfg["problem"] == "emd":
            note, counts = not_a_bijection(args.pcbench, folder, clouds, answers)
            if counts["shared"] or counts["unmatched"]:
                detail = "%s; %s" % (note, detail)
                entry["bijection"] = counts
                status = "not-a-bijection"
            else:  # a bijection whose value breaks its promise: wrong, whatever it promised
                entry.update(status="wrong", detail=detail)
                return entry
        if not ok and peer.bijection:  # wrong: never timed
            entry.update(status="wrong", detail=detail, why=why_wrong(cfg, clouds, answers, detail))
            return entry
        if gap is not None:
            entry["gap"] = gap
        entry["compute"] = figure([timer(solve_all)[1] for _ in range(reps)], peer.device)
        entry["prepare_ms"] = prep_ms
        entry.update(status=status, detail=detail)
    except Exception as e:  # a peer that crashes or refuses the input
        entry.update(status="failed-run", detail="%s: %s" % (type(e).__name__, str(e)[:200]))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return entry


def not_a_bijection(pcbench, folder, clouds, answers):
    """An EMD answer judged wrong, in a few words and in numbers: how many
    points of A share a target with another or have none, over the batch,
    and cloud 0's matched pairs' mean against the exact optimum (where the
    exact solver takes seconds, n <= 4096)."""
    shared = unmatched = 0
    gap = None
    for i, ans in enumerate(answers):
        flat = [int(v) for v in as_list(ans)]
        taken = [v for v in flat if v >= 0]
        unmatched += len(flat) - len(taken)
        shared += len(taken) - len(set(taken))
        if i == 0 and len(flat) <= 4096 and np is not None and taken:  # one exact solve
            a, b = clouds[i]["a"], clouds[i]["b"]
            pairs = np.array([(k, v) for k, v in enumerate(flat) if v >= 0])
            value = float(np.linalg.norm(a[pairs[:, 0]].astype(np.float64)
                                         - b[pairs[:, 1]].astype(np.float64), axis=1).mean())
            best = optimum(pcbench, folder, i)
            gap = (value - best) / best if best > 0 else 0.0
    text = "not a bijection: %d point%s of A share a target, %d unmatched" % (
        shared, "" if shared == 1 else "s", unmatched)
    if gap is not None:
        text += "; cloud 0's matched pairs' mean %+.3g%% from the optimum" % (100 * gap)
    return text, {"shared": shared, "unmatched": unmatched, "pairs_gap": gap}


def why_wrong(cfg, clouds, answers, detail):
    """A wrong answer's cause in a few words, where it matches a defect the
    catalog knows (pcbench list --defects: each planted and caught by pcbench
    verify --defects), else None. Read off the answer and the check's first
    failure (of the cloud it names: 'cloud K: ...')."""
    named = re.match(r"cloud (\d+):", detail)
    k = int(named.group(1)) if named and int(named.group(1)) < min(len(clouds), len(answers)) else 0
    cloud = clouds[k] if clouds else None
    flat = [int(v) for v in as_list(answers[k])] if answers else []
    if cfg["problem"] == "fps":
        seen = set()
        repeat = next((v for v in flat if v in seen or seen.add(v)), None)
        if len(flat) > 2 and not any(flat[1:]):
            return "answers zeros"
        if repeat is not None:
            return "repeats index %d" % repeat
        if re.search(r"first index \d+, start is \d+", detail):
            return "starts from a point of its own, not the one asked for"
        m = re.search(r"chose (\d+) \(d2=([-0-9.e+]+)\) but (\d+) has d2=([-0-9.e+]+)", detail)
        if m:
            d_chose, missed = float(m.group(2)), int(m.group(3))
            x, y, z = (float(c) for c in cloud["a"][missed])
            if x * x + y * y + z * z <= 1e-3:
                return ("skips points within 0.032 of the origin (squared norm <= 1e-3, "
                        "a test meant for zero padding; defect near_origin_skip)")
            if d_chose >= 5e4:
                return ("sees every squared distance over 5e4 (224 units) as 5e4: "
                        "its running minimum starts there, not at infinity; defect capped_init")
    if cfg["problem"] == "nn":
        m = re.search(r"worst distance ratio ([0-9.e+]+)", detail)
        if m and float(m.group(1)) < 1.1:
            return ("misses near ties (worst distance %.3gx the nearest): float32 rounding, "
                    "as of the expanded form a.a - 2a.b + b.b; defect expanded_norm"
                    % float(m.group(1)))
        miss = re.search(r"query (\d+) of cloud \d+ got index (\d+) at d2 ([-0-9.e+]+), nearest is "
                         r"(\d+) at ([-0-9.e+]+)", detail)
        if m and miss:  # far from the origin a.a and b.b swamp the float32 difference
            q, got, best = (cloud["b"][int(miss.group(1))], cloud["a"][int(miss.group(2))],
                            cloud["a"][int(miss.group(4))])
            norms = sum(float(c) ** 2 for c in q) + max(sum(float(c) ** 2 for c in r)
                                                        for r in (got, best))
            if float(miss.group(3)) - float(miss.group(5)) <= 16 * 2.0 ** -24 * norms:
                return ("misses neighbours closer than the float32 expanded form a.a - 2a.b + b.b "
                        "resolves (a.a + b.b up to %.3g here; worst distance %.3gx the nearest); "
                        "defect expanded_norm" % (norms, float(m.group(1))))
    return None


def judge_or_value(pcbench, cfg, folder, peer, answers, scratch):
    """(ok, detail, gap): assignments go to pcbench check; a value-only EMD is
    measured against the exact optimum (gap: the worst relative one)."""
    if not peer.value_only:
        ok, detail = judge(pcbench, cfg, folder, peer, answers, scratch)
        # an approximate EMD answer's gap, where check computed the optimum
        found = re.search(r"gap (-?[0-9.]+(?:e[-+]?[0-9]+)?) \(allowed", detail) \
            if ok and cfg["problem"] == "emd" and not peer.exact else None
        return ok, detail, float(found.group(1)) if found else None
    bests = on_every_core(lambda i: optimum(pcbench, folder, i), range(len(answers)))
    gaps = [(float(as_list(v)[0]) - best) / best if best > 0 else 0.0
            for v, best in zip(answers, bests)]
    worst = max(gaps, key=abs)
    return True, ("a value, no assignment: worst relative gap to the exact optimum %+.3g "
                  "over %d pair%s" % (worst, len(gaps), "" if len(gaps) == 1 else "s")), worst


def run_configs(peers, configs, inputs, meta, args, candidates, after=None):
    """Every peer on every configuration of its problem (those after the
    configuration id `after` only). Before each run the file inputs/.running
    names it, so that a parent can tell which run a crash ended."""
    outdir = results_dir(args, meta)
    os.makedirs(outdir, exist_ok=True)
    env = env_record(meta["machine"])
    running = os.path.join(inputs, ".running")
    wrong = 0
    first = 0 if after is None else 1 + [c["id"] for c in configs].index(after)
    for cfg in configs[first:]:
        for peer in (p for p in peers if p.problem == cfg["problem"]):
            old = stored_entry(outdir, cfg, peer.name)
            if old and old.get("status") in FINAL and not args.force:
                print("%-32s %-12s stored: %s" % (cfg["id"], peer.name, old["status"]))
                continue
            with open(running, "w", encoding="utf-8") as f:
                f.write(cfg["id"])
            e = run_peer(peer, cfg, os.path.join(inputs, cfg["dir"]), args, meta)
            store_entry(outdir, args.suite, env, cfg, e, candidates)
            os.remove(running)
            wrong += e["status"] == "wrong"
            fig = e.get("compute")
            print("%-32s %-12s %-14s %s%s" % (cfg["id"], peer.name, e["status"],
                  "%.4g ms  " % fig["median_ms"] if fig else "", e.get("detail", "")[:110]),
                  flush=True)
    return wrong


def progress_line(i, count, name, spent, done, total):
    """'peers [3/12 1:20, ~4:00 left]: pykdtree': the time left from the runs done
    so far (a run: one peer on one configuration), corrected as they come in."""
    left = ""
    if done:
        rest = spent / done * (total - done)
        left = ", ~%d:%02d left" % (rest // 60, rest % 60)
    return "peers [%d/%d %d:%02d%s]: %s" % (i + 1, count, spent // 60, spent % 60, left, name)


def run_isolated(name, peers, configs, inputs, meta, args):
    """One peer's runs in a process of its own (python3 -m peers --worker): a
    peer that kills its process (a segmentation fault in its extension) is
    stored as crashed on the configuration it was running, and goes on with
    the next. Returns the wrong answers it gave."""
    outdir = results_dir(args, meta)
    running = os.path.join(inputs, ".running")
    tally = os.path.join(inputs, ".wrong")
    after = None
    while True:
        cmd = [sys.executable, "-m", "peers", "--worker", inputs, "--peer", name,
               "--suite", args.suite, "--results", args.results, "--pcbench", args.pcbench]
        for flag in ("problem", "reps", "budget"):
            if getattr(args, flag):
                cmd += ["--" + flag, str(getattr(args, flag))]
        cmd += ["--force"] if args.force else []
        cmd += ["--after", after] if after else []
        # the worker finds what this process finds (a user's module on sys.path)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        # a session of its own: a signal the peer sends its group (os.killpg(0, ...))
        # cannot reach the harness, and what it forks is ended with it
        proc, hung = subprocess.Popen(cmd, env=env, start_new_session=True), False
        while True:  # a run past --run-timeout is stopped (a peer that hangs the GPU, say)
            try:
                rc = proc.wait(timeout=1)
                break
            except subprocess.TimeoutExpired:
                try:
                    hung = time.time() - os.path.getmtime(running) > args.run_timeout
                except OSError:  # between runs
                    hung = False
                if hung:
                    proc.kill()
                    rc = proc.wait()
                    break
        try:  # children the peer left behind, in the worker's group
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if not os.path.exists(running):  # finished, or failed outside a run
            if rc != 0:
                print("peers: %s stopped with exit status %d outside a run" % (name, rc),
                      file=sys.stderr)
            break
        with open(running, encoding="utf-8") as f:
            after = f.read().strip()
        os.remove(running)
        cfg = next(c for c in configs if c["id"] == after)
        peer = next(p for p in peers if p.name == name and p.problem == cfg["problem"])
        how = "exit status %d" % rc
        if rc < 0:
            try:
                how = "signal %d (%s)" % (-rc, signal.Signals(-rc).name)
            except ValueError:
                how = "signal %d" % -rc
        e = dict(entry_head(peer), status="timed-out" if hung else "crashed",
                 detail=("this run took over %g s (--run-timeout) and was stopped" % args.run_timeout
                         if hung else "its process ended with %s during this run" % how)
                 + "; the other runs went on")
        store_entry(outdir, args.suite, env_record(meta["machine"]), cfg, e, PEERS)
        print("%-32s %-12s %-14s %s" % (cfg["id"], name, e["status"], e["detail"]), flush=True)
    wrong = 0
    if os.path.exists(tally):
        with open(tally, encoding="utf-8") as f:
            wrong = int(f.read() or 0)
        os.remove(tally)
    return wrong


def main(argv=None, candidates=None):
    """candidates: the peers to choose from (default PEERS, each run in a process
    of its own; tests plant their own, run in this process)."""
    isolate = candidates is None
    candidates = candidates or PEERS
    ap = argparse.ArgumentParser(prog="peers", description="time and judge the libraries people use "
                                 "instead, on the harness's inputs")
    ap.add_argument("--suite", default="seed")
    ap.add_argument("--problem")
    ap.add_argument("--filter")
    ap.add_argument("--shard", help="only the i-th of N shards of the configurations (1-based, "
                    "pcbench bench's --shard; a scheduler's variables are read without it)")
    ap.add_argument("--peer", help="only these peers (comma-separated); MODULE:FUNCTION "
                    "names a callable of yours (with one --problem; see UserPeer)")
    ap.add_argument("--results", default="results")
    ap.add_argument("--pcbench", default="build/pcbench")
    ap.add_argument("--machine", help="machine folder name (default: pcbench's)")
    ap.add_argument("--reps", type=int, help="repetitions (default: the suite's)")
    ap.add_argument("--budget", type=float, help="seconds per run (default: the suite's)")
    ap.add_argument("--force", action="store_true", help="re-run peers already stored")
    ap.add_argument("--list", action="store_true", help="show the peers and whether they can run")
    ap.add_argument("--run-timeout", type=float, default=900,
                    help="seconds one peer's run on one configuration may take before it is "
                    "stopped and stored as timed-out (default 900)")
    ap.add_argument("--in-process", action="store_true",
                    help="run every peer in this process (default: each in its own, so that "
                    "one that crashes its process is stored as crashed and the rest run on)")
    ap.add_argument("--worker", metavar="INPUTS", help=argparse.SUPPRESS)  # one peer's process
    ap.add_argument("--after", help=argparse.SUPPRESS)  # the worker's first run follows this one
    args = ap.parse_args(argv)
    asked = args.peer.split(",") if args.peer else []
    specs = [n for n in asked if ":" in n]
    if specs and (not args.problem or args.problem not in ("fps", "nn", "emd")):
        ap.error("--peer %s: a callable of yours needs --problem fps, nn or emd (one)" % specs[0])
    peers = [p for p in candidates if not asked or p.name in asked]
    peers += [UserPeer(n, args.problem) for n in specs]
    unknown = [n for n in asked if ":" not in n and n not in {p.name for p in candidates}]
    if unknown:
        ap.error("unknown peer in --peer %s (peers: %s)" % (unknown[0], ", ".join(
            sorted({p.name for p in candidates}))))
    if args.list:
        for p in peers:
            why = p.available()
            print("%-4s %-21s %-5s %s" % (p.problem, p.name, p.device, why or "ok: " + p.what))
        return 0
    if args.worker:
        meta, configs = read_configs(args.worker)
        wrong = run_configs(peers, configs, args.worker, meta, args, candidates, args.after)
        tally = os.path.join(args.worker, ".wrong")
        before = 0
        if os.path.exists(tally):
            with open(tally, encoding="utf-8") as f:
                before = int(f.read() or 0)
        with open(tally, "w", encoding="utf-8") as f:
            f.write(str(before + wrong))
        return 0
    if not os.access(args.pcbench, os.X_OK):
        print("peers: %s is not built (make tool)" % args.pcbench, file=sys.stderr)
        return 2
    inputs = tempfile.mkdtemp(prefix="pcbench-inputs-")
    try:
        cmd = [args.pcbench, "bench", "--suite", args.suite, "--write-inputs", inputs]
        cmd += ["--problem", args.problem] if args.problem else []
        cmd += ["--filter", args.filter] if args.filter else []
        cmd += ["--machine", args.machine] if args.machine else []
        cmd += ["--shard", args.shard] if args.shard else []
        if subprocess.run(cmd).returncode != 0:
            return 2
        if not os.path.exists(os.path.join(inputs, "configs.tsv")):
            print("peers: no configuration falls to this shard", file=sys.stderr)
            return 0
        meta, configs = read_configs(inputs)
        if isolate and not args.in_process:
            names = list(dict.fromkeys(p.name for p in peers))
            runs = {n: sum(1 for p in peers if p.name == n for c in configs
                           if c["problem"] == p.problem) for n in names}
            names = [n for n in names if runs[n]]  # no process for a peer with nothing to run
            wrong, done, began = 0, 0, time.time()
            for i, name in enumerate(names):
                print(progress_line(i, len(names), name, time.time() - began, done,
                                    sum(runs.values())), flush=True)
                wrong += run_isolated(name, peers, configs, inputs, meta, args)
                done += runs[name]
        else:
            wrong = run_configs(peers, configs, inputs, meta, args, candidates)
        print("peers: results in %s%s" % (results_dir(args, meta), "; %d wrong answers (see the tables)" % wrong
                                                 if wrong else ""))
        return 0
    finally:
        shutil.rmtree(inputs, ignore_errors=True)
