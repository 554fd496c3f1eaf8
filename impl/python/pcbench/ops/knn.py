"""k nearest neighbours: pcbench.knn, its direct and ragged kernels, its
operator pcbench::knn, and check_knn, the judge of anyone's rows."""
import math

from .. import _native as _n
from .._core import (_as_op, _Cloud, _clouds, _float32, _host, _impl_name, _int64, _integer, _judge,
                     _op_pair_lengths, _ops, _pair_lengths, _ptr, _run, _run_ragged)
from .nn import NAMES


def knn(ref, query=None, k=16, impl=None, ref_lengths=None, query_lengths=None):
    """Exact k nearest neighbours of every query point among ref's points (a
    batch of pairs; query None: ref itself, self-kNN as DGCNN and Point
    Transformer run it). Returns (index int64, squared distance float32),
    each (B, Nq, k), or (Nq, k) for unbatched clouds: a row ascending, equal
    distances by increasing index with the default implementations; where
    ref has fewer than k points the row ends in padding that is no point,
    index -1 at distance +inf. On CUDA it runs without a host sync (k <= 64
    there). ref_lengths, query_lengths: a ragged batch (query None: the
    queries are ref's points, query_lengths ref_lengths)."""
    k = _integer(k, "knn", "k", 1, 2**31 - 1)
    _impl_name(impl, "knn")
    ref, query = _float32(ref), _float32(query)
    ragged = ref_lengths is not None or query_lengths is not None
    if ragged and query is None:
        query, query_lengths = ref, ref_lengths
    if _as_op(ref, impl):
        q = ref if query is None else query
        lr, lq = _op_pair_lengths(ref, q, ref_lengths, query_lengths, "knn", NAMES)
        if q is ref and query_lengths is ref_lengths:  # self: one lengths tensor, one grid
            lq = lr
        return _ops.call(_ops.torch.ops.pcbench.knn.default, ref.detach(), q.detach(), k, lr, lq)
    if ragged:
        return _knn_ragged(ref, query, k, impl, ref_lengths, query_lengths)
    return _knn_direct(ref, query, k, impl)


def _knn_direct(ref, query, k, impl):
    r = _Cloud(ref, "ref", "knn")
    q = r if query is None else _Cloud(query, "query", "knn")
    r.same_place(q, ("ref", "query"))
    k = _integer(k, "knn", "k", 1, max(r.n, _n.PAD_K))  # checked before anything is allocated
    idx, d2 = r.empty((r.batch, q.n, k), "int32"), r.empty((r.batch, q.n, k), "float32")
    task = r.task(_n.KNN, nq=q.n, k=k)
    task.b = q.ptr
    _run(r, task, impl, _n.Result(index=_ptr(idx), dist2=_ptr(d2)))
    return _int64(idx), d2


def _knn_ragged(ref, query, k, impl, ref_lengths, query_lengths):
    r, q = _Cloud(ref, "ref", "knn"), _Cloud(query, "query", "knn")
    lengths = _pair_lengths(r, q, ref_lengths, query_lengths, NAMES)
    k = _integer(k, "knn", "k", 1, max(r.n, _n.PAD_K))  # checked before anything is allocated
    idx, d2 = r.empty((r.batch, q.n, k), "int32"), r.empty((r.batch, q.n, k), "float32")
    task = r.task(_n.KNN, nq=q.n, k=k)
    task.b = q.ptr

    def one(i, n, nq):
        if n and nq:
            idx[i, :nq], d2[i, :nq] = (x[0] for x in _knn_direct(
                ref[i:i + 1, :n], query[i:i + 1, :nq], k, impl))
    _run_ragged(r, task, lengths, impl, _n.Result(index=_ptr(idx), dist2=_ptr(d2)),
                [(idx, -1), (d2, math.inf)], one)
    return _int64(idx), d2


def check_knn(ref, query, idx, dist2=None, k=None, canonical=False):
    """Judge a kNN answer made anywhere: idx (and dist2, when given) of shape
    (Nq, k) or (B, Nq, k), rows ascending, padded with -1 (and +inf) past
    the reference's points. Any order among equal distances is right unless
    canonical=True asks for naive's rows (ties to the lower index)."""
    cs = _clouds("check_knn", ref=ref, query=query)
    r, q = cs["ref"], cs["query"]
    r.same_place(q, ("ref", "query"))
    ia = _host(idx, "int32", "check_knn", "idx")
    if k is None:
        k = ia.shape[-1] if ia.ndim >= 2 else 0
    k = _integer(k, "check_knn", "k", 1, 2**31 - 1)
    ia = _host(idx, "int32", "check_knn", "idx", count=r.batch * q.n * k)
    da = None if dist2 is None else _host(dist2, "float32", "check_knn", "dist2",
                                          count=r.batch * q.n * k)
    task = r.task(_n.KNN, nq=q.n, k=k)
    task.b = q.ptr
    promise = _n.Promise(exact=1, max_gap=_n.ANY_GAP, canonical=1 if canonical else 0)
    return _judge(task, _n.Result(index=ia.ctypes.data,
                                  dist2=None if da is None else da.ctypes.data),
                  promise, full=canonical, clouds=cs)


def _kernel(ref, query, k, ref_lengths=None, query_lengths=None):
    if ref_lengths is None and query_lengths is None:
        return _knn_direct(ref, query, k, None)
    return _knn_ragged(ref, query, k, None, ref_lengths, query_lengths)


def _fake(ref, query, k, ref_lengths=None, query_lengths=None):
    _ops.check_pair(ref, query, "knn", NAMES)
    _ops.check_lengths(ref, ref_lengths, "knn", NAMES[2])
    _ops.check_lengths(query, query_lengths, "knn", NAMES[3])
    shape = _ops.lead(query) + (query.shape[-2], k)
    return (query.new_empty(shape, dtype=_ops.torch.int64), query.new_empty(shape))


if _ops is not None:
    _ops.add("knn(Tensor ref, Tensor query, int k, Tensor? ref_lengths=None, "
             "Tensor? query_lengths=None) -> (Tensor, Tensor)", _kernel, _fake)
