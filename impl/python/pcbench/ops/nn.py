"""Nearest neighbour: pcbench.nn, its direct and ragged kernels, its
operator pcbench::nn, and check_nn, the judge of anyone's answers."""
import math

from .. import _native as _n
from .._core import (_as_op, _Cloud, _clouds, _float32, _host, _impl_name, _int64, _judge,
                     _op_pair_lengths, _ops, _pair_lengths, _ptr, _run, _run_ragged)

NAMES = ("ref", "query", "ref_lengths", "query_lengths")


def nn(ref, query, impl=None, ref_lengths=None, query_lengths=None):
    """Exact nearest neighbour of every query point among ref's points (a
    batch of pairs): (index int64, squared distance float32), each
    (B, Nq), or (Nq,) for unbatched clouds. ref_lengths, query_lengths:
    a ragged batch (PyTorch3D's convention); a query of an empty reference,
    and every padding slot, answers -1 at +inf."""
    _impl_name(impl, "nn")
    ref, query = _float32(ref), _float32(query)
    if _as_op(ref, impl):
        return _ops.call(_ops.torch.ops.pcbench.nn.default, ref.detach(), query.detach(),
                         *_op_pair_lengths(ref, query, ref_lengths, query_lengths, "nn", NAMES))
    if ref_lengths is not None or query_lengths is not None:
        return _nn_ragged(ref, query, impl, ref_lengths, query_lengths)
    return _nn_direct(ref, query, impl)


def _nn_ragged(ref, query, impl, ref_lengths, query_lengths):
    r, q = _Cloud(ref, "ref", "nn"), _Cloud(query, "query", "nn")
    lengths = _pair_lengths(r, q, ref_lengths, query_lengths, NAMES)
    idx, d2 = r.empty((r.batch, q.n), "int32"), r.empty((r.batch, q.n), "float32")
    task = r.task(_n.NN, nq=q.n)
    task.b = q.ptr

    def one(i, n, nq):
        if n and nq:
            idx[i, :nq], d2[i, :nq] = (x[0] for x in _nn_direct(ref[i:i + 1, :n],
                                                                 query[i:i + 1, :nq], impl))
    _run_ragged(r, task, lengths, impl, _n.Result(index=_ptr(idx), dist2=_ptr(d2)),
                [(idx, -1), (d2, math.inf)], one)
    return _int64(idx), d2


def _nn_direct(ref, query, impl):
    r, q = _Cloud(ref, "ref", "nn"), _Cloud(query, "query", "nn")
    r.same_place(q, ("ref", "query"))
    idx, d2 = r.empty((r.batch, q.n), "int32"), r.empty((r.batch, q.n), "float32")
    task = r.task(_n.NN, nq=q.n)
    task.b = q.ptr
    _run(r, task, impl, _n.Result(index=_ptr(idx), dist2=_ptr(d2)))
    return _int64(idx), d2


def check_nn(ref, query, idx, dist2=None, exact=True):
    """Judge a nearest-neighbour answer: idx (and dist2, if given) for every
    query point; exact=False accepts approximate answers and reports their
    recall."""
    cs = _clouds("check_nn", ref=ref, query=query)
    r, q = cs["ref"], cs["query"]
    r.same_place(q, ("ref", "query"))
    idx = _host(idx, "int32", "check_nn", "idx")
    if idx.size != r.batch * q.n:
        raise ValueError("pcbench.check_nn: idx %s does not fit %d x %d queries"
                         % (idx.shape, r.batch, q.n))
    d2 = None if dist2 is None else _host(dist2, "float32", "check_nn", "dist2", idx.size)
    task = r.task(_n.NN, nq=q.n)
    task.b = q.ptr
    return _judge(task, _n.Result(index=idx.ctypes.data, dist2=_ptr(d2)),
                  _n.Promise(exact=int(bool(exact))), clouds=cs)


def _kernel(ref, query, ref_lengths=None, query_lengths=None):
    if ref_lengths is None and query_lengths is None:
        return _nn_direct(ref, query, None)
    return _nn_ragged(ref, query, None, ref_lengths, query_lengths)


def _fake(ref, query, ref_lengths=None, query_lengths=None):
    _ops.check_pair(ref, query, "nn", NAMES)
    _ops.check_lengths(ref, ref_lengths, "nn", NAMES[2])
    _ops.check_lengths(query, query_lengths, "nn", NAMES[3])
    shape = _ops.lead(query) + (query.shape[-2],)
    return (query.new_empty(shape, dtype=_ops.torch.int64), query.new_empty(shape))


if _ops is not None:
    _ops.add("nn(Tensor ref, Tensor query, Tensor? ref_lengths=None, "
             "Tensor? query_lengths=None) -> (Tensor, Tensor)", _kernel, _fake)
