"""The problems as the scripts see them (tables, plots, the peers): one
entry a problem, in the library's order (PCB_PROBLEM_MAP, impl/pcbench.h),
the scripts' side of its faces (impl/<p>/<p>_problem.c, bench/problems/<p>.c).
Python 3 stdlib only."""
import math


class Problem:
    """name; reference: the speedups' base in words; work(cfg): a brute
    force's work (the order of a problem's configurations); words(cfg): a
    configuration in words; label(cfg): its distinguishing sizes in a plot's
    legend; fields: its own keys of a configuration; row(cfg): integers a
    line of an answer file; sides: its clouds, 1 or 2; check(cfg, a, b, answer, peer): the `pcbench check`
    arguments that judge an answer file (after "pcbench check <name>"; where
    value_answers, the answer is a value, given in place of the file)."""

    def __init__(self, name, reference, work, words, label, check, fields=(), row=None,
                 value_answers=False, sides=2):
        self.name, self.reference, self.work, self.words = name, reference, work, words
        self.label, self.check, self.fields = label, check, fields
        self.sides = sides  # clouds a configuration has: 1 (a) or 2 (a and b)
        self.row = row or (lambda cfg: 1)
        self.value_answers = value_answers  # a peer's answer a value a pair, not a file


def _k(cfg):
    return cfg.get("k") or int(cfg["id"].rsplit("/k", 1)[1].split("/")[0])


def _fps_check(cfg, a, b, answer, peer):
    return ["-i", a, "-m", str(cfg["m"]), "--start", str(cfg["start"]), "--answer", answer]


def _ball_check(cfg, a, b, answer, peer):
    return (["-r", a, "-q", b, "-k", str(cfg["k"]), "--radius", repr(cfg["radius"]),
             "--select", cfg["select"], "--answer", answer]
            + (["--pad", "first"] if getattr(peer, "pad_first", False) else []))


def _emd_check(cfg, a, b, answer, peer):
    """an approximate peer is held to a bijection; its gap is reported"""
    gap = peer.promised_gap(cfg)
    bound = gap if gap is not None else 0 if peer.exact else "inf"
    return ["-a", a, "-b", b, "--answer", answer] + (["--max-gap", str(bound)] if bound else [])


def _emd_words(cfg):
    gap = cfg.get("max_gap") or 0
    return "emd %s: %d x %d%s" % (cfg["dataset"], cfg["batch"], cfg["n"],
                                  ", within %g%%" % (100 * gap) if gap else "")


def _pairs(cfg):
    return cfg["batch"] * cfg["n"] * cfg["nq"]


def _rows_of_k(cfg):
    return _pairs(cfg) * (1 + cfg.get("k", 0) / 64.0)


def _grid_check(cfg, a, b, answer, peer):
    return ["-i", a, "--size", repr(cfg["cell"]), "--select", cfg["select"], "--answer", answer]


def _serialize_check(cfg, a, b, answer, peer):
    depth = ["--depth", str(cfg["depth"])] if cfg.get("depth") else []
    return ["-i", a, "--size", repr(cfg["cell"]), "--curve", cfg["curve"]] + depth + \
        ["--answer", answer]


PROBLEMS = ["fps", "nn", "emd", "chamfer", "knn", "ball", "grid", "serialize"]
TABLE = {p.name: p for p in [
    Problem("fps", "dp (the O(n m) serial version the FPS document times as 'serial')",
            lambda c: c["batch"] * c["n"] * c["m"],
            lambda c: "fps %s: %d x %d, %d" % (c["dataset"], c["batch"], c["n"], c["m"]),
            lambda c: " m%d" % c["m"], _fps_check, sides=1),
    Problem("nn", "naive (serial double loop)", _pairs,
            lambda c: "nn %s: %d x %d, %d queries" % (c["dataset"], c["batch"], c["n"], c["nq"]),
            lambda c: "",
            lambda c, a, b, answer, peer: ["-r", a, "-q", b, "--answer", answer]),
    Problem("emd", "exact (assignment by shortest augmenting paths)",
            lambda c: c["batch"] * c["n"] ** 3, _emd_words,
            lambda c: " %g%%" % (100 * c["max_gap"]) if c.get("max_gap") else "", _emd_check),
    Problem("chamfer", "naive (nn naive each way)", lambda c: 2 * _pairs(c),
            lambda c: "chamfer %s: %d x %d and %d" % (c["dataset"], c["batch"], c["n"], c["nq"]),
            lambda c: "",
            # a value a pair, in the default convention
            lambda c, a, b, value, peer: ["-a", a, "-b", b, "--value", value],
            value_answers=True),
    Problem("knn", "naive (serial double loop, a sorted row a query)", _rows_of_k,
            lambda c: "knn %s: %d x %d, %s, k = %d" % (
                c["dataset"], c["batch"], c["n"],
                "self" if c.get("self") or "/self/" in c["id"] else "%d queries" % c["nq"],
                _k(c)),
            lambda c: "%s k%d" % (" self" if c.get("self") or "/self/" in c["id"] else "",
                                  c.get("k", 0)),
            # any order among equal distances
            lambda c, a, b, answer, peer: ["-r", a, "-q", b, "-k", str(c["k"]), "--answer",
                                           answer],
            fields=("k",), row=lambda c: c["k"]),
    Problem("ball", "naive (serial scan of every point a centre, in index order)", _rows_of_k,
            lambda c: "ball %s %s: %d x %d, %d centres, r = %g, k = %d" % (
                c.get("select") or c["id"].rsplit("/", 1)[1], c["dataset"], c["batch"],
                c["n"], c["nq"], c.get("radius") or float(c["id"].split("/r")[1].split("/")[0]),
                _k(c)),
            lambda c: " q%d r%g k%d" % (c["nq"], c.get("radius", 0), c.get("k", 0)),
            # under the suite's selection, the peer's own padding
            _ball_check, fields=("k", "radius", "select"), row=lambda c: c["k"]),
    Problem("grid", "naive (serial: qsort of the voxel keys)",
            lambda c: c["batch"] * c["n"] * math.log2(c["n"] + 2),
            lambda c: "grid %s %s: %d x %d, cell %g" % (
                c.get("select") or c["id"].rsplit("/", 1)[1], c["dataset"], c["batch"], c["n"],
                c.get("cell") or float(c["id"].split("/c")[1].split("/")[0])),
            lambda c: " c%g" % c.get("cell", 0),
            _grid_check, fields=("cell", "select"),
            row=lambda c: 8 if c.get("select") == "mean" else 5, sides=1),  # mean: mx my mz
    Problem("serialize", "naive (serial: qsort of the codes)",
            lambda c: c["batch"] * c["n"] * math.log2(c["n"] + 2),
            lambda c: "serialize %s %s: %d x %d, cell %g%s" % (
                c.get("curve") or c["id"].split("/")[5], c["dataset"], c["batch"], c["n"],
                c.get("cell") or float(c["id"].split("/c")[1].split("/")[0]),
                ", depth %d" % c["depth"] if c.get("depth") else ""),
            lambda c: " %s c%g%s" % (c.get("curve", ""), c.get("cell", 0),
                                     " d%d" % c["depth"] if c.get("depth") else ""),
            _serialize_check, fields=("cell", "curve", "depth"), row=lambda c: 2, sides=1),
]}
