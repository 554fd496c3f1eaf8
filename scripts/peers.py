#!/usr/bin/env python3
"""peers.py - time and judge the libraries people use instead, on the harness's inputs.

    peers.py [--suite S] [--problem P[,P]] [--filter TEXT] [--peer NAME[,NAME]]
             [--peer MODULE:FUNCTION --problem P]
             [--results DIR] [--pcbench PATH] [--reps R] [--budget S] [--force] [--list]

`pcbench bench --write-inputs` writes the clouds of each configuration of the suite
(same generators, same seeds as the harness). Each available peer is timed on them
the way the harness times: inputs prepared first (kd-trees built, tensors on the
GPU), one warm-up, then the median of R repetitions of the whole batch (GPU peers
timed with CUDA events). Every answer is written to a file and judged by `pcbench
check`: a peer that answers wrong is stored as "wrong", never as a timing.
Results: RESULTS/<machine>/<suite>/peers-<configuration>.json, one file per
configuration, written as soon as it is done; a later run skips peers already
stored (--force re-runs them). A peer that is not installed is stored as
"unavailable" with the reason. `make peers-deps` installs the CPU peers.
`--peer MODULE:FUNCTION --problem P` times and judges a callable of yours
(UserPeer says its signature for each problem).
"""
import argparse
import array
import concurrent.futures
import datetime
import functools
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np  # every real peer needs it; the harness side does not
except ImportError:
    np = None

FORMAT = "pcbench-peers/1"
FINAL = {"ok", "wrong", "value-only", "not-a-bijection", "skipped-budget", "unsupported", "crashed",
         "timed-out"}


# ---- inputs ------------------------------------------------------------------------------
def read_ply(path):
    """The float32 x, y, z of a binary little-endian PLY written by pcbench: an
    n x 3 numpy array, or a list of n [x, y, z] where numpy is missing."""
    with open(path, "rb") as f:
        head = b""
        while not head.endswith(b"end_header\n"):
            line = f.readline()
            if not line:
                raise ValueError("%s: no end_header" % path)
            head += line
        n = next(int(l.split()[2]) for l in head.decode("ascii").splitlines()
                 if l.startswith("element vertex"))
        data = array.array("f")
        data.frombytes(f.read(n * 12))
    if len(data) != n * 3:
        raise ValueError("%s: truncated (%d of %d floats)" % (path, len(data), n * 3))
    if sys.byteorder != "little":
        data.byteswap()
    if np is None:
        return [list(data[3 * i:3 * i + 3]) for i in range(n)]
    return np.frombuffer(data, dtype=np.float32).reshape(n, 3).copy()


def read_configs(folder):
    with open(os.path.join(folder, "configs.tsv"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    words = lines[0].lstrip("# ").split()
    meta = dict(zip(words[0::2], words[1::2]))
    head = lines[1].split("\t")
    configs = []
    for line in lines[2:]:
        row = dict(zip(head, line.split("\t")))
        for k in ("batch", "n", "nq", "m", "start"):
            row[k] = int(row[k])
        configs.append(row)
    return meta, configs


# ---- peers -------------------------------------------------------------------------------
class Peer:
    """One library's way of solving one problem. prepare() turns the clouds of a
    batch into per-cloud states outside the timing (like the harness's prepare);
    solve(state) answers one cloud."""
    name = problem = module = what = ""
    dist = None  # the distribution's name where it differs from the module's
    device = "cpu"
    threads = "1"
    exact = True
    value_only = False  # answers a value and no assignment (approximations)
    own_start = False   # FPS: judged from its own first sample
    batched = False     # prepare makes one state of the whole batch; solve answers every cloud
    bijection = True    # EMD: promises a bijection (else one that is not is timed and marked)
    max_gap = None      # EMD: the bound it promises on its gap to the optimum (None: exact,
                        # or only reported where exact is False)

    def available(self):
        """None when it can run here, else the reason."""
        try:
            __import__(self.module)
        except Exception as e:  # ImportError, or a broken install
            return "%s not importable: %s" % (self.module, str(e).splitlines()[0][:120])
        return None

    def version(self):
        """The installed distribution's version (not every module has __version__)."""
        from importlib.metadata import PackageNotFoundError, version
        try:
            return version(self.dist or self.module)
        except PackageNotFoundError:
            return getattr(sys.modules.get(self.module), "__version__", "?")

    def prepare(self, clouds, cfg):
        return clouds

    def sync(self):
        pass


class Fpsample(Peer):
    """Asked for the suite's start index. With own_start the answer is judged
    from whatever first sample it returns (fpsample's kd-line sampler does not
    always start where asked), so its speed can still be shown."""
    problem, module = "fps", "fpsample"

    def __init__(self, own_start):
        self.own_start = own_start
        self.name = "fpsample_ownstart" if own_start else "fpsample"
        self.what = ("bucket_fps_kdline_sampling (QuickFPS), one cloud at a time; " +
                     ("judged from the first sample it returns" if own_start
                      else "judged from the start index asked for"))

    def solve(self, st):
        import fpsample
        a, cfg = st
        n = len(a)
        h = 5 if n <= 20000 else 7 if n <= 200000 else 9  # the QuickFPS paper's advice
        return fpsample.bucket_fps_kdline_sampling(a, cfg["m"], h, start_idx=cfg["start"])

    def prepare(self, clouds, cfg):
        return [(c["a"], cfg) for c in clouds]


class CKDTree(Peer):
    problem, module = "nn", "scipy"

    def __init__(self, workers):
        self.workers = workers
        self.name = "ckdtree" if workers == 1 else "ckdtree_all"
        self.threads = "1" if workers == 1 else "all"
        self.what = "scipy.spatial.cKDTree(ref).query(q, workers=%d), tree built in prepare" % workers

    def prepare(self, clouds, cfg):
        from scipy.spatial import cKDTree
        return [(cKDTree(c["a"]), c["b"]) for c in clouds]

    def solve(self, st):
        tree, q = st
        return tree.query(q, k=1, workers=self.workers)[1]


class PyKDTree(Peer):
    name, problem, module = "pykdtree", "nn", "pykdtree"
    threads = "all"
    what = "pykdtree.kdtree.KDTree(ref).query(q) (OpenMP), tree built in prepare"

    def prepare(self, clouds, cfg):
        from pykdtree.kdtree import KDTree
        return [(KDTree(c["a"]), c["b"]) for c in clouds]

    def solve(self, st):
        tree, q = st
        return tree.query(q, k=1)[1]


class TorchPeer(Peer):
    module, device, threads = "torch", "cuda", "-"

    def available(self):
        why = Peer.available(self)
        if why:
            return why
        import torch
        return None if torch.cuda.is_available() else "torch has no CUDA device here"

    def sync(self):
        import torch
        torch.cuda.synchronize()


class TorchCdist(TorchPeer):
    name, problem = "torch_cdist", "nn"
    what = "torch.cdist(q, ref).argmin(1) on the GPU, queries in chunks of <= 1 GiB of distances"

    def prepare(self, clouds, cfg):
        import torch
        return [(torch.from_numpy(c["a"]).cuda(), torch.from_numpy(c["b"]).cuda())
                for c in clouds]

    def solve(self, st):
        import torch
        ref, q = st
        rows = max(1, (1 << 28) // len(ref))
        out = [torch.cdist(q[i:i + rows], ref).argmin(1) for i in range(0, len(q), rows)]
        return torch.cat(out)


class ScipyLSA(Peer):
    name, problem, module = "scipy_lsa", "emd", "scipy"
    what = "scipy.optimize.linear_sum_assignment on the cdist cost matrix (float64)"

    def solve(self, st):
        from scipy.optimize import linear_sum_assignment
        from scipy.spatial.distance import cdist
        a, b = st["a"], st["b"]
        rows, cols = linear_sum_assignment(cdist(a.astype("f8"), b.astype("f8")))
        return cols[rows.argsort()]


class PotEMD(Peer):
    name, problem, module, dist = "pot_emd", "emd", "ot", "pot"
    what = "POT ot.emd (network simplex, numItermax 1e8) on ot.dist(metric='euclidean'); argmax per row"

    def solve(self, st):
        import ot
        a, b = st["a"].astype("f8"), st["b"].astype("f8")
        n = len(a)
        w = np.full(n, 1.0 / n)
        plan = ot.emd(w, w, ot.dist(a, b, metric="euclidean"), numItermax=100_000_000)
        return plan.argmax(1)


class GeomlossSinkhorn(TorchPeer):
    name, problem, module = "geomloss", "emd", "geomloss"
    exact, value_only = False, True
    what = ("geomloss SamplesLoss('sinkhorn', p=1, blur=1e-3 x extent, scaling=0.9, "
            "debias=False) on the GPU: a value, no assignment")

    def available(self):
        return Peer.available(self) or TorchPeer.available(self)

    def prepare(self, clouds, cfg):
        import torch
        from geomloss import SamplesLoss
        out = []
        for c in clouds:
            ext = float(max(c["a"].max(0).max(), c["b"].max(0).max())
                        - min(c["a"].min(0).min(), c["b"].min(0).min()))
            loss = SamplesLoss("sinkhorn", p=1, blur=1e-3 * ext, scaling=0.9, debias=False,
                               backend="tensorized")
            out.append((loss, torch.from_numpy(c["a"]).cuda(), torch.from_numpy(c["b"]).cuda()))
        return out

    def solve(self, st):
        loss, a, b = st
        return loss(a, b)


def cuda_batch(clouds):
    """(a, b) of a batch as CUDA tensors (batch, n, 3); b None without second clouds."""
    import torch
    stack = lambda k: torch.from_numpy(np.stack([c[k] for c in clouds])).cuda()  # noqa: E731
    return stack("a"), stack("b") if "b" in clouds[0] else None


class PcbenchPython(TorchPeer):
    """pcbench itself through its Python package on CUDA tensors: the same
    Python path and CUDA-event timing as the GPU peers, so their figures
    compare like with like (the harness's device-event figure stays in the
    table beside them). The batch is one call, as a network makes it."""
    module, batched = "pcbench", True

    def __init__(self, problem):
        self.problem = problem
        self.name = "pcbench_py"
        if problem == "emd":  # held to the bound it asks for, as the harness holds cuda_auction
            self.exact, self.max_gap = False, 1e-3
        impl = {"fps": "cuda_pruned", "nn": "cuda_bvh (index built in the call)",
                "emd": "cuda_auction, max_gap %g" % (self.max_gap or 0)}[problem]
        self.what = "pcbench.%s on CUDA tensors, the whole batch in one call: %s" % (problem, impl)

    def available(self):
        return Peer.available(self) or TorchPeer.available(self)

    def prepare(self, clouds, cfg):
        return [cuda_batch(clouds) + (cfg,)]

    def solve(self, st):
        import pcbench
        a, b, cfg = st
        if self.problem == "fps":
            return list(pcbench.fps(a, cfg["m"], start=cfg["start"]))
        if self.problem == "nn":
            return list(pcbench.nn(a, b)[0])
        return list(pcbench.emd(a, b, max_gap=self.max_gap)[0])


class TorchFps(TorchPeer):
    """torch-fps (PyPI, pure Python): Triton kernels compiled for the GPU present
    on first use; the batch in one call, from the suite's start."""
    name, problem, module, dist, batched = "torch_fps", "fps", "torch_fps", "torch-fps", True
    what = ("torch_fps.farthest_point_sampling (Triton), the batch in one call, start_idx = "
            "the suite's start")

    def available(self):
        return Peer.available(self) or TorchPeer.available(self)

    def prepare(self, clouds, cfg):
        import torch
        a, _ = cuda_batch(clouds)
        mask = torch.ones(a.shape[:2], dtype=torch.bool, device=a.device)
        start = torch.full((a.shape[0],), cfg["start"], dtype=torch.long, device=a.device)
        return [(a, mask, start, cfg["m"])]

    def solve(self, st):
        import torch_fps
        a, mask, start, m = st
        return list(torch_fps.farthest_point_sampling(a, mask, m, start_idx=start,
                                                      random_start=False))


# ---- GPU peers built from their sources (scripts/peer_build.py) ---------------------------
class BuiltPeer(TorchPeer):
    """A peer whose CUDA code scripts/peer_build.py compiled into .peers/build/<build>/;
    the batch in one call, on CUDA tensors, as a network calls it."""
    build = ""
    batched = True

    @property
    def library(self):
        return self.build

    def available(self):
        why = TorchPeer.available(self)
        if why:
            return why
        import peer_build
        try:
            self.ext, why = peer_build.load(self.build)
        except Exception as e:  # built for another PyTorch or Python
            return "the build in .peers/build/%s does not load: %s" % (self.build, str(e)[:150])
        import torch
        if not why and self.ext.build["torch"] != torch.__version__:
            why = "built for torch %s, this is %s (make peers-deps rebuilds it)" % (
                self.ext.build["torch"], torch.__version__)
        return why

    def version(self):
        return self.ext.build["version"]

    def prepare(self, clouds, cfg):
        return [cuda_batch(clouds) + (cfg,)]


class Pytorch3dFps(BuiltPeer):
    name, problem, build = "pytorch3d_fps", "fps", "pytorch3d"
    what = "PyTorch3D sample_farthest_points (random_start_point False: from the suite's start)"

    def solve(self, st):
        import torch
        a, _, cfg = st
        bsz, n = a.shape[0], a.shape[1]
        full = torch.full((bsz,), n, dtype=torch.int64, device=a.device)
        k = torch.full((bsz,), cfg["m"], dtype=torch.int64, device=a.device)
        start = torch.full((bsz,), cfg["start"], dtype=torch.int64, device=a.device)
        return list(self.ext.sample_farthest_points(a, full, k, start, cfg["m"]))


class Pytorch3dKnn(BuiltPeer):
    name, problem, build = "pytorch3d_knn", "nn", "pytorch3d"
    what = "PyTorch3D knn_points K = 1 (its fastest kernel version chosen)"

    def solve(self, st):
        import torch
        a, b, _ = st
        bsz = a.shape[0]
        nq = torch.full((bsz,), b.shape[1], dtype=torch.int64, device=a.device)
        nr = torch.full((bsz,), a.shape[1], dtype=torch.int64, device=a.device)
        idx, _ = self.ext.knn_points_idx(b, a, nq, nr, 2, 1, -1)
        return list(idx[:, :, 0])


class TorchClusterPeer(BuiltPeer):
    build = "torch_cluster"

    def flat(self, x):
        import torch
        bsz, n = x.shape[0], x.shape[1]
        ptr = torch.arange(0, (bsz + 1) * n, n, dtype=torch.int64, device=x.device)
        return x.reshape(bsz * n, 3), ptr, n


class TorchClusterFps(TorchClusterPeer):
    name, problem = "torch_cluster_fps", "fps"
    what = "torch_cluster fps (random_start False: from each cloud's first point)"

    def solve(self, st):
        import torch
        a, _, cfg = st
        src, ptr, n = self.flat(a)
        # it takes ceil(ratio n) samples: a ratio half a sample short gives exactly m
        ratio = torch.full((a.shape[0],), (cfg["m"] - 0.5) / n, dtype=torch.float32,
                           device=a.device)
        idx = self.ext.fps(src, ptr, ratio, False).view(a.shape[0], -1)
        return list(idx - ptr[:-1, None])


class TorchClusterNN(TorchClusterPeer):
    """nearest or knn (k = 1): each query's global reference index, made local."""
    problem = "nn"

    def solve(self, st):
        a, b, _ = st
        ref, pr, n = self.flat(a)
        q, pq, nq = self.flat(b)
        idx = self.indices(ref, q, pr, pq).view(b.shape[0], nq)
        return list(idx - pr[:-1, None])


class TorchClusterNearest(TorchClusterNN):
    name, what = "torch_cluster_nearest", "torch_cluster nearest (brute force per batch element)"

    def indices(self, ref, q, pr, pq):
        return self.ext.nearest(q, ref, pq, pr)


class TorchClusterKnn(TorchClusterNN):
    name, what = "torch_cluster_knn", "torch_cluster knn, k = 1"

    def indices(self, ref, q, pr, pq):
        return self.ext.knn(ref, q, pr, pq, 1, False)[1]  # rows (query, reference), by query


class Pointnet2Fps(BuiltPeer):
    name, problem, build = "pointnet2_ops", "fps", "pointnet2_ops"
    what = "pointnet2_ops furthest_point_sample (from index 0), the original of cuda_unrolled"

    def solve(self, st):
        a, _, cfg = st
        return list(self.ext.furthest_point_sampling(a, cfg["m"]))


class MsnEmd(BuiltPeer):
    """MSN's auction EMD as its emd_module calls it (buffers allocated per call),
    at its evaluation (eps 0.002, 10,000 iterations) or training (0.005, 50)
    setting; n must be a multiple of 1024. Not promised to be a bijection."""
    problem, build, exact, bijection = "emd", "msn_emd", False, False

    def __init__(self, setting):
        self.eps, self.iters = (0.002, 10000) if setting == "eval" else (0.005, 50)
        self.name = "msn_emd_" + setting
        self.what = "MSN emd auction, eps %g, %d iterations (its %s setting)" % (
            self.eps, self.iters, "evaluation" if setting == "eval" else "training")

    def solve(self, st):
        import torch
        a, b, _ = st
        bsz, n = a.shape[0], a.shape[1]
        if n % 1024 or bsz > 512:
            raise ValueError("MSN's emd takes n a multiple of 1024 and batch <= 512")
        z = lambda *shape, t=torch.float32: torch.zeros(*shape, device=a.device, dtype=t)
        i32 = torch.int32
        dist, assignment, inv = z(bsz, n), z(bsz, n, t=i32) - 1, z(bsz, n, t=i32) - 1
        self.ext.forward(a, b, dist, assignment, z(bsz, n), inv, z(bsz, n, t=i32), z(bsz, n),
                         z(bsz, n), z(bsz * n, t=i32), z(512, t=i32), z(512, t=i32), z(512, t=i32),
                         z(bsz * n, t=i32), self.eps, self.iters)
        return list(assignment)


class PytorchEmd(BuiltPeer):
    """PyTorchEMD's approxmatch: a soft matching and its cost, no assignment:
    judged by its value's gap to the optimum."""
    name, problem, build = "pytorch_emd", "emd", "pytorch_emd"
    exact, value_only = False, True
    what = "PyTorchEMD approxmatch + matchcost (a value, no assignment)"

    def solve(self, st):
        a, b, _ = st
        match = self.ext.approxmatch_forward(a, b)
        cost = self.ext.matchcost_forward(a, b, match)  # summed over the points
        return [[float(c) / a.shape[1]] for c in cost]


class KeopsNN(TorchPeer):
    """KeOps' exact brute force: a symbolic distance matrix reduced by argmin,
    compiled by KeOps on first use (the warm-up), the batch in one call."""
    name, problem, module, batched = "keops", "nn", "pykeops", True
    what = "pykeops LazyTensor ((q_i - r_j)^2).sum().argmin(j), exact brute force"

    def available(self):
        why = Peer.available(self) or TorchPeer.available(self)
        if why:
            return why
        import pykeops
        folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".peers", "keops")
        pykeops.set_build_folder(folder)  # its compiled kernels, kept between runs
        return None

    def prepare(self, clouds, cfg):
        return [cuda_batch(clouds)]

    def solve(self, st):
        from pykeops.torch import LazyTensor
        a, b = st
        q = LazyTensor(b[:, :, None, :])
        r = LazyTensor(a[:, None, :, :])
        return list(((q - r) ** 2).sum(-1).argmin(dim=2)[:, :, 0])


class UserPeer(Peer):
    """A callable of the user's, named MODULE:FUNCTION (make peers PEER=... PROBLEM=...;
    the module from the current folder or PYTHONPATH), called once per cloud on
    float32 numpy arrays of shape (n, 3), timed by the wall clock (with the
    attribute device = "cuda": on CUDA tensors, timed by CUDA events) and judged
    like every peer:
      fps(points, m, start) -> m indices into points, the first one start
      nn(ref, queries)      -> for each query, the index of its nearest point in ref
      emd(a, b)             -> for each point of a, the index of its match in b
    Any sequence of integers will do: a list, a numpy array, a tensor."""

    def __init__(self, spec, problem):
        self.module, _, self.function = spec.partition(":")
        self.name, self.problem = spec, problem
        self.what = "the user's %s, one cloud a call" % spec
        self.fn = None

    def available(self):
        if os.getcwd() not in sys.path:
            sys.path.append(os.getcwd())
        if np is None:
            return "numpy is not importable (a callable of yours is given numpy arrays)"
        why = Peer.available(self)
        if why:
            return why
        self.fn = getattr(sys.modules[self.module], self.function, None)
        if not callable(self.fn):
            return "%s has no callable %s" % (self.module, self.function)
        self.device = getattr(self.fn, "device", "cpu")
        return None

    def prepare(self, clouds, cfg):
        if self.device == "cuda":  # on the GPU before the timing, as for the GPU peers
            import torch
            clouds = [{k: torch.from_numpy(v).cuda() for k, v in c.items()} for c in clouds]
        return [(c["a"], c.get("b"), cfg) for c in clouds]

    def solve(self, st):
        a, b, cfg = st
        return self.fn(a, cfg["m"], cfg["start"]) if self.problem == "fps" else self.fn(a, b)

    def sync(self):
        if self.device == "cuda":
            import torch
            torch.cuda.synchronize()


PEERS = [Fpsample(False), Fpsample(True), CKDTree(1), CKDTree(-1), PyKDTree(), TorchCdist(), ScipyLSA(), PotEMD(),
         GeomlossSinkhorn(), TorchFps(), Pytorch3dFps(), TorchClusterFps(), Pointnet2Fps(), Pytorch3dKnn(),
         TorchClusterNearest(), TorchClusterKnn(), KeopsNN(), MsnEmd("eval"), MsnEmd("train"), PytorchEmd(),
         PcbenchPython("fps"), PcbenchPython("nn"), PcbenchPython("emd")]


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


def judge(pcbench, cfg, folder, peer, answers, scratch):
    """(ok, detail) from pcbench check over the clouds answered (all checked at
    once; the first wrong cloud in order is the one reported)."""
    cmds = []
    for i, ans in enumerate(answers):
        path = os.path.join(scratch, "answer-%d.txt" % i)
        flat = as_list(ans)
        with open(path, "w", encoding="ascii") as f:
            f.writelines("%d\n" % int(v) for v in flat)
        a = os.path.join(folder, "a-%d.ply" % i)
        b = os.path.join(folder, "b-%d.ply" % i)
        if cfg["problem"] == "fps":
            start = int(flat[0]) if peer.own_start else cfg["start"]
            cmd = [pcbench, "check", "fps", "-i", a, "-m", str(cfg["m"]), "--start",
                   str(start), "--answer", path]
        elif cfg["problem"] == "nn":
            cmd = [pcbench, "check", "nn", "-r", a, "-q", b, "--answer", path]
        else:  # an approximate peer is held to a bijection; its gap is reported
            cmd = [pcbench, "check", "emd", "-a", a, "-b", b, "--answer", path]
            bound = peer.max_gap if peer.max_gap is not None else 0 if peer.exact else "inf"
            cmd += ["--max-gap", str(bound)] if bound else []
        cmds.append(cmd)
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
    why = peer.available()  # first: it may learn the peer's device
    entry = entry_head(peer)
    if why:
        entry.update(status="unavailable", detail=why, version=None)
        return entry
    entry["version"] = peer.version()
    batch = cfg["batch"]
    clouds = load_clouds(folder, batch, cfg["problem"] != "fps")
    timer = clock(peer)
    budget = args.budget if args.budget else float(meta.get("budget", 30))
    reps = args.reps or int(meta.get("reps", 5))
    # inside the run's inputs, which the parent removes even when a peer kills this process
    scratch = tempfile.mkdtemp(prefix=".scratch-", dir=folder)
    try:
        states, prep_ms = timer(lambda: peer.prepare(clouds, cfg))
        # One cloud first, twice (a warm-up, then a measure): the batch's predicted time.
        timer(lambda: peer.solve(states[0]))
        first, one_ms = timer(lambda: peer.solve(states[0]))
        predicted_s = one_ms * (1 if peer.batched else batch) / 1e3
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
    return os.path.join(outdir, "peers-%s.json" % cfg["dir"])


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


def run_isolated(name, peers, configs, inputs, meta, args):
    """One peer's runs in a process of its own (python peers.py --worker): a
    peer that kills its process (a segmentation fault in its extension) is
    stored as crashed on the configuration it was running, and goes on with
    the next. Returns the wrong answers it gave."""
    outdir = results_dir(args, meta)
    running = os.path.join(inputs, ".running")
    tally = os.path.join(inputs, ".wrong")
    after = None
    while True:
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", inputs, "--peer", name,
               "--suite", args.suite, "--results", args.results, "--pcbench", args.pcbench]
        for flag in ("problem", "reps", "budget"):
            if getattr(args, flag):
                cmd += ["--" + flag, str(getattr(args, flag))]
        cmd += ["--force"] if args.force else []
        cmd += ["--after", after] if after else []
        # the worker finds what this process finds (a user's module on sys.path)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        proc, hung = subprocess.Popen(cmd, env=env), False
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
        if not os.path.exists(running):  # finished, or failed outside a run
            if rc != 0:
                print("peers.py: %s stopped with exit status %d outside a run" % (name, rc),
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
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", default="seed")
    ap.add_argument("--problem")
    ap.add_argument("--filter")
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
        print("peers.py: %s is not built (make tool)" % args.pcbench, file=sys.stderr)
        return 2
    inputs = tempfile.mkdtemp(prefix="pcbench-inputs-")
    try:
        cmd = [args.pcbench, "bench", "--suite", args.suite, "--write-inputs", inputs]
        cmd += ["--problem", args.problem] if args.problem else []
        cmd += ["--filter", args.filter] if args.filter else []
        cmd += ["--machine", args.machine] if args.machine else []
        if subprocess.run(cmd).returncode != 0:
            return 2
        meta, configs = read_configs(inputs)
        if isolate and not args.in_process:
            wrong = sum(run_isolated(name, peers, configs, inputs, meta, args)
                        for name in dict.fromkeys(p.name for p in peers))
        else:
            wrong = run_configs(peers, configs, inputs, meta, args, candidates)
        print("peers.py: results in %s%s" % (results_dir(args, meta), "; %d wrong answers (see the tables)" % wrong
                                                 if wrong else ""))
        return 0
    finally:
        shutil.rmtree(inputs, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
