"""Where the peers' results go: one JSON file a configuration, beside the harness's."""
import datetime
import json
import os
import platform

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
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


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
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            doc["results"] = json.load(f).get("results", [])
    doc["config"] = {"id": cfg["id"], "problem": cfg["problem"], "dataset": cfg["dataset"],
                     "batch": cfg["batch"], "n": cfg["n"], "nq": cfg["nq"], "m": cfg["m"]}
    if cfg["problem"] in ("knn", "ball"):
        doc["config"]["k"] = cfg["k"]
    if cfg["problem"] == "ball":
        doc["config"].update(radius=cfg["radius"], select=cfg["select"])
    if cfg.get("max_gap"):
        doc["config"]["max_gap"] = cfg["max_gap"]
    stored = {e["peer"]: e for e in doc["results"]}
    stored[entry["peer"]] = entry
    order = dict.fromkeys([p.name for p in candidates] + sorted(stored))  # pcbench_py: once
    doc["results"] = [stored[n] for n in order if n in stored]
    write_json(path, doc)


def stored_entry(outdir, cfg, name):
    path = peers_file(outdir, cfg)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return next((e for e in json.load(f).get("results", []) if e["peer"] == name), None)
