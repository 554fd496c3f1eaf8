"""NNIndex: an exact nearest-neighbour index kept on the device, built once
and searched many times (ICP, scan matching)."""
import ctypes

from . import _native as _n
from ._core import _call, _Cloud, _int64, _integer, _ptr, _torch
from .ops.nn import nn


class NNIndex:
    """An exact nearest-neighbour index of ref, built once and searched many
    times: ICP and scan matching search one reference sweep with a moving
    source again and again. On CUDA the index stays on the device (cuda_tiles'
    copy, cuda_grid's grid or cuda_bvh's tree, by the cloud's size):
    a search costs the search alone, queued on the current stream without
    waiting; max_queries bounds the queries a cloud of a search (default:
    as many as ref's points). On the CPU each search runs nn() afresh.
    The index keeps its own copy of ref."""

    def __init__(self, ref, max_queries=None, impl=None):
        c = _Cloud(ref, "ref", "NNIndex")
        self._cloud, self._index, self._impl = c, None, impl
        self.max_queries = c.n if max_queries is None else _integer(
            max_queries, "NNIndex", "max_queries", 1, 2**31 - 1)
        if not c.cuda:
            self._ref = c.x.copy() if c.kind == "numpy" else c.x.clone()
            return
        task = c.task(_n.NN, nq=self.max_queries)
        task.b = c.ptr  # not read by the build; the choice checks a task with queries

        def build(finite):
            chosen = _n.implementation(task, _n.CUDA, impl)
            index = _n._P()
            _n.check(_n.lib.pcb_nn_index_build(chosen, ctypes.byref(task), finite,
                                               ctypes.byref(index)))
            return index.value
        self._index = _call(c, "NNIndex", build)

    def query(self, query):
        """(index int64, squared distance float32) of query's points, each
        (B, Nq), or (Nq,) for an unbatched ref."""
        c = self._cloud
        if not c.cuda:
            return nn(self._ref, query, impl=self._impl)
        q = _Cloud(query, "query", "NNIndex.query")
        c.same_place(q, ("ref", "query"))
        if q.n > self.max_queries:
            raise ValueError("pcbench.NNIndex.query: %d queries a cloud, the index was built for "
                             "at most %d (max_queries)" % (q.n, self.max_queries))
        idx, d2 = c.empty((c.batch, q.n), "int32"), c.empty((c.batch, q.n), "float32")
        stream = _torch().cuda.current_stream(c.device).cuda_stream

        def search(finite):
            result = _n.Result(index=_ptr(idx), dist2=_ptr(d2), finite=finite)
            _n.check(_n.lib.pcb_nn_index_query(self._index, q.ptr, q.n, ctypes.byref(result),
                                               stream))
        _call(q, "NNIndex.query", search)
        return _int64(idx), d2

    def close(self):
        """Free the device index now (it waits for the searches queued)."""
        if self._index is not None:
            _n.lib.pcb_nn_index_free(self._index)
            self._index = None

    def __del__(self):
        if getattr(self, "_index", None) is not None and _n is not None:
            self.close()
