"""A callable of the user's own (--peer MODULE:FUNCTION)."""
import os
import sys

from ..common import np
from .base import Peer


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
