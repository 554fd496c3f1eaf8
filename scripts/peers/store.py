"""Where the peers' results go: one JSON file a configuration, beside the harness's."""
import datetime
import json
import os
import platform
import sys
import tempfile

import pcbproblems as P

from .common import FORMAT, np


# ---- the whole run -----------------------------------------------------------------------
def env_record(machine):
    env = {"machine": machine, "python": platform.python_version(),
           "numpy": np.__version__ if np else None,
           "os": "%s %s %s" % (platform.system(), platform.release(), platform.machine()),
           "cores": os.cpu_count(),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            env["cpu"] = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        env["cpu"] = platform.processor() or "?"
    try:
        import torch
        env["torch"] = torch.__version__
        if torch.cuda.is_available():
            env["gpu"] = torch.cuda.get_device_name(0)
            env["torch_cuda"] = torch.version.cuda
    except Exception:
        pass
    return env


def write_json(path, doc):
    """doc into path, whole or not at all: a private temporary file beside it
    (mkstemp: created anew, never through a link planted under its name),
    then renamed over path (a link at path is replaced, not followed)."""
    folder, name = os.path.split(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=name + ".tmp.", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # an ordinary results file, not mkstemp's 0600
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def read_results(path, set_aside=False):
    """The entries stored in a configuration's file ([] where there is none).
    A file that is not such JSON is named, with its position, and ignored;
    set_aside moves it to PATH.corrupt first, so that nothing is lost when
    the file is written anew."""
    if not os.path.exists(path):
        return []
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        results = doc.get("results", []) if isinstance(doc, dict) else None
        if not isinstance(results, list) or not all(isinstance(e, dict) and "peer" in e
                                                     for e in results):
            raise ValueError("no list of peers' results in it")
        return results
    except (ValueError, UnicodeDecodeError) as e:
        where = (" (line %d, column %d)" % (e.lineno, e.colno)
                 if isinstance(e, json.JSONDecodeError) else "")
        aside = path + ".corrupt"
        if set_aside:
            os.replace(path, aside)
        print("peers: ignoring %s%s: %s%s" % (path, where, e.msg if isinstance(
            e, json.JSONDecodeError) else e, "; set aside as " + aside if set_aside else ""),
            file=sys.stderr)
        return []


def results_dir(args, meta):
    return os.path.join(args.results, meta["machine"], args.suite)


def peers_file(outdir, cfg):
    """By the id: a loss-mode EMD configuration shares its twin's clouds (dir)."""
    return os.path.join(outdir, "peers-%s.json" % cfg["id"].replace("/", "-"))


def store_entry(outdir, suite, env, cfg, entry, candidates):
    """Read, update and rewrite a configuration's file with one peer's entry
    (re-read every time: each peer may run in a process of its own)."""
    path = peers_file(outdir, cfg)
    doc = {"format": FORMAT, "suite": suite, "env": env, "results": []}
    doc["results"] = read_results(path, set_aside=True)
    doc["config"] = {"id": cfg["id"], "problem": cfg["problem"], "dataset": cfg["dataset"],
                     "batch": cfg["batch"], "n": cfg["n"], "nq": cfg["nq"], "m": cfg["m"]}
    doc["config"].update((key, cfg[key]) for key in P.TABLE[cfg["problem"]].fields)
    if cfg.get("max_gap"):
        doc["config"]["max_gap"] = cfg["max_gap"]
    stored = {e["peer"]: e for e in doc["results"]}
    stored[entry["peer"]] = entry
    order = dict.fromkeys([p.name for p in candidates] + sorted(stored))  # pcbench_py: once
    doc["results"] = [stored[n] for n in order if n in stored]
    write_json(path, doc)


def stored_entry(outdir, cfg, name):
    return next((e for e in read_results(peers_file(outdir, cfg)) if e["peer"] == name), None)
