#!/usr/bin/env python3
"""emd_dual_study.py - how close a parallel dual (Sinkhorn) comes to the EMD optimum.

    emd_dual_study.py [--kind uniform|sphere] [--n N] [--seed S] [--iters K]
                      [--floor F] [--pcbench PATH]

A pricing study for impl/emd/README.md ("Where issue 28's figures stand"), not a
test. It makes the pair the replay calls pair 0 (clouds of seeds S and S + 1000,
`pcbench gen`), solves it exactly (scipy's linear_sum_assignment on the float64
costs), then runs log-domain Sinkhorn with eps-scaling (temperature from C / 16,
halved each level down to F times the mean optimal cost, K alternating row and
column updates a level: 2K dense n x n passes) and prints, after each level, how
far below the optimum the lower bound of its column potentials g lies
(sum_i min_j (c_ij - g_j) + sum_j g_j, the auction's certificate D with prices -g).
Last, it asks how close those potentials are to a primal: the rows a maximum
matching leaves free among the edges whose reduced cost is within delta of tight
(each would still need an augmenting path). Needs numpy and scipy (PyPI).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching
from scipy.special import logsumexp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from peers import read_ply  # noqa: E402  (the harness's PLY reader, scripts/peers)


def cloud(pcbench, kind, n, seed, folder):
    path = os.path.join(folder, "%s-%d.ply" % (kind, seed))
    subprocess.run([pcbench, "gen", kind, "-n", str(n), "--seed", str(seed), "-o", path], check=True)
    return np.asarray(read_ply(path), dtype=np.float64)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", default="sphere")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--floor", type=float, default=0.01)
    ap.add_argument("--pcbench", default="build/pcbench")
    o = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        a = cloud(o.pcbench, o.kind, o.n, o.seed, tmp)
        b = cloud(o.pcbench, o.kind, o.n, o.seed + 1000, tmp)
    c = np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(-1))
    rows, cols = linear_sum_assignment(c)
    opt = c[rows, cols].sum()
    mean = opt / o.n
    diag = np.linalg.norm(np.maximum(a.max(0), b.max(0)) - np.minimum(a.min(0), b.min(0)))
    print("%s, n = %d, seeds %d and %d: optimum %.5f a point, C = %.3f"
          % (o.kind, o.n, o.seed, o.seed + 1000, mean, diag))
    g = np.zeros(o.n)
    t, passes = diag / 16, 0
    while True:
        for _ in range(o.iters):  # uniform marginals: the log n terms cancel
            f = -t * logsumexp((g[None, :] - c) / t, axis=1)
            g = -t * logsumexp((f[:, None] - c) / t, axis=0)
            passes += 2
        fc = (c - g[None, :]).min(axis=1)
        dual = fc.sum() + g.sum()
        print("  temperature %8.4f x mean, %4d dense passes: bound %7.3f%% below the optimum"
              % (t / mean, passes, 100 * (opt - dual) / opt))
        if t <= o.floor * mean:
            break
        t = max(t / 2, o.floor * mean)
    reduced = c - fc[:, None] - g[None, :]
    for delta in (0.001, 0.004, 0.016, 0.064):
        m = maximum_bipartite_matching(csr_matrix(reduced <= delta * mean), perm_type="column")
        print("  edges within %.3f x mean of tight: %d rows left free" % (delta, int((m < 0).sum())))


if __name__ == "__main__":
    main()
