"""The CPU libraries: fpsample, SciPy's and pykdtree's k-d trees, SciPy's assignment,
POT's EMD."""

from ..common import np
from .base import Peer


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
