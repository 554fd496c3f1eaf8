"""Chamfer's nearest points: pcbench.chamfer_nearest (both directions at
once), its direct and ragged kernels, the fused loss's forward and backward
kernels, their operators (pcbench::chamfer_nearest, chamfer_value with its
autograd, chamfer_backward), and check_chamfer, the judge of anyone's
answers. The loss itself is losses.chamfer."""
import ctypes
import math

from .. import _native as _n
from .._core import (Verdict, _as_op, _Cloud, _clouds, _float32, _gather, _host, _int64, _judge,
                     _numpy, _on_device, _op_pair_lengths, _ops, _pair_lengths, _ptr, _run,
                     _run_ragged, _torch)

NAMES = ("a", "b", "a_lengths", "b_lengths")


def chamfer_nearest(a, b, impl=None, a_lengths=None, b_lengths=None):
    """Both directions of a chamfer distance at once: every point of a's
    nearest point of b, and every point of b's nearest point of a, exact.
    Returns (idx_ab, d2_ab, idx_ba, d2_ba): int64 indices and float32
    squared distances, (B, Na) and (B, Nb), or unbatched for (N, 3) clouds.
    On CUDA, clouds up to 16,384 points run both directions of the whole
    batch in one launch (cuda_tiles). a_lengths, b_lengths: a ragged batch
    (PyTorch3D's convention); a point of a pair whose other cloud is empty,
    and every padding slot, answers -1 at +inf."""
    a, b = _float32(a), _float32(b)
    if _as_op(a, impl):
        idx, d2 = _ops.call(_ops.torch.ops.pcbench.chamfer_nearest.default, a.detach(), b.detach(),
                            *_op_pair_lengths(a, b, a_lengths, b_lengths, "chamfer_nearest",
                                              NAMES))
    elif a_lengths is not None or b_lengths is not None:
        idx, d2 = _chamfer_ragged(a, b, impl, a_lengths, b_lengths)
    else:
        idx, d2 = _chamfer_nearest_flat(a, b, impl)
    lead, na, nb = tuple(a.shape[:-2]), a.shape[-2], b.shape[-2]
    first = idx.shape[0] * na // (na + nb)
    shape_a, shape_b = lead + (na,), lead + (nb,)
    return (idx[:first].reshape(shape_a), d2[:first].reshape(shape_a),
            idx[first:].reshape(shape_b), d2[first:].reshape(shape_b))


def _chamfer_nearest_flat(a, b, impl):
    """Both directions' nearest points as one int64 array and one float32
    array: a's points of the whole batch, then b's."""
    ca, cb = _Cloud(a, "a", "chamfer_nearest"), _Cloud(b, "b", "chamfer_nearest")
    ca.same_place(cb, ("a", "b"))
    count = ca.batch * (ca.n + cb.n)
    idx, d2 = ca.empty((1, count), "int32"), ca.empty((1, count), "float32")
    task = ca.task(_n.CHAMFER, nq=cb.n)
    task.b = cb.ptr
    _run(ca, task, impl, _n.Result(index=_ptr(idx), dist2=_ptr(d2)))
    return _int64(idx.reshape(-1)), d2.reshape(-1)


def _chamfer_ragged(a, b, impl, a_lengths, b_lengths):
    ca, cb = _Cloud(a, "a", "chamfer_nearest"), _Cloud(b, "b", "chamfer_nearest")
    lengths = _pair_lengths(ca, cb, a_lengths, b_lengths, NAMES)
    count = ca.batch * (ca.n + cb.n)
    idx, d2 = ca.empty((1, count), "int32"), ca.empty((1, count), "float32")
    idx, d2 = idx.reshape(-1), d2.reshape(-1)
    task = ca.task(_n.CHAMFER, nq=cb.n)
    task.b = cb.ptr
    first = ca.batch * ca.n

    def one(i, n, nq):
        if n and nq:
            ia, da, ib, db = chamfer_nearest(a[i:i + 1, :n], b[i:i + 1, :nq], impl)
            idx[i * ca.n:i * ca.n + n], d2[i * ca.n:i * ca.n + n] = ia[0], da[0]
            at = first + i * cb.n
            idx[at:at + nq], d2[at:at + nq] = ib[0], db[0]
    _run_ragged(ca, task, lengths, impl, _n.Result(index=_ptr(idx), dist2=_ptr(d2)),
                [(idx, -1), (d2, math.inf)], one)
    return _int64(idx), d2


def check_chamfer(a, b, idx_ab=None, idx_ba=None, d2_ab=None, d2_ba=None, value=None,
                  convention="squared-mean-sum"):
    """Judge a chamfer answer made anywhere, as `pcbench check chamfer` does:
    idx_ab and idx_ba, each point's nearest point in the other cloud, as
    chamfer_nearest returns them ((B, Na) and (B, Nb), or unbatched), with
    d2_ab and d2_ba when given (else the distances the indices give); and/or
    value, each pair's chamfer distance (a number, or B) in convention (see
    chamfer). The indices, the value, or both."""
    fn = "check_chamfer"
    cs = _clouds(fn, a=a, b=b)
    ca, cb = cs["a"], cs["b"]
    ca.same_place(cb, ("a", "b"))
    if not isinstance(convention, str):
        raise TypeError("pcbench.check_chamfer: convention must be a name (str), not %s"
                        % type(convention).__name__)
    _convention(convention, fn)
    if (idx_ab is None) != (idx_ba is None) or (d2_ab is None) != (d2_ba is None):
        raise ValueError("pcbench.check_chamfer: give both directions (idx_ab and idx_ba, "
                         "d2_ab and d2_ba) or neither")
    if idx_ab is None and value is None:
        raise ValueError("pcbench.check_chamfer: give the indices, the value or both")
    if d2_ab is not None and idx_ab is None:
        raise ValueError("pcbench.check_chamfer: d2_ab and d2_ba go with idx_ab and idx_ba")
    np = _numpy()
    verdict = None
    if idx_ab is not None:
        na, nb, batch = ca.n, cb.n, ca.batch
        ia = _host(idx_ab, "int32", fn, "idx_ab", batch * na).reshape(batch, na)
        ib = _host(idx_ba, "int32", fn, "idx_ba", batch * nb).reshape(batch, nb)
        if d2_ab is None:  # the distances the indices give (one out of range is still judged)
            pa, pb = ca.x.reshape(batch, na, 3), cb.x.reshape(batch, nb, 3)
            near_b = np.take_along_axis(pb, np.clip(ia, 0, nb - 1)[..., None], 1)
            near_a = np.take_along_axis(pa, np.clip(ib, 0, na - 1)[..., None], 1)
            da, db = ((pa - near_b) ** 2).sum(-1), ((pb - near_a) ** 2).sum(-1)
        else:
            da = _host(d2_ab, "float32", fn, "d2_ab", batch * na)
            db = _host(d2_ba, "float32", fn, "d2_ba", batch * nb)
        idx = np.ascontiguousarray(np.concatenate([ia.reshape(-1), ib.reshape(-1)]))
        d2 = np.ascontiguousarray(np.concatenate([np.reshape(da, -1), np.reshape(db, -1)]),
                                  dtype="float32")
        task = ca.task(_n.CHAMFER, nq=nb)
        task.b = cb.ptr
        verdict = _judge(task, _n.Result(index=idx.ctypes.data, dist2=_ptr(d2)),
                         _n.Promise(exact=1), clouds=cs)
        if not verdict:
            return verdict
    if value is not None:
        values = _host(value, "float64", fn, "value", ca.batch).reshape(-1)
        conv = _n.ChamferConvention()
        _n.check(_n.lib.pcb_chamfer_convention_parse(convention.encode(), ctypes.byref(conv)))
        for p in range(ca.batch):  # the library's value check is a pair's
            pair = ca.task(_n.CHAMFER, nq=cb.n)
            pair.batch, pair.a = 1, ca.ptr + 12 * p * ca.n
            pair.b = cb.ptr + 12 * p * cb.n
            want, ok = ctypes.c_double(), ctypes.c_int()
            _n.check(_n.lib.pcb_chamfer_check_value(ctypes.byref(pair), float(values[p]),
                                                    ctypes.byref(conv), ctypes.byref(want),
                                                    ctypes.byref(ok)))
            if not ok.value:
                j = _n.Judgement(verdict=1)
                j.detail = (("pair %d: value %.9g, the nearest distances give %.9g (%s)"
                             % (p, values[p], want.value, convention)).encode()[:319])
                return Verdict(j)
        if verdict is None:
            j = _n.Judgement(verdict=0)
            j.detail = ("%d value%s right (%s)" % (ca.batch, "" if ca.batch == 1 else "s",
                                                     convention)).encode()
            verdict = Verdict(j)
    return verdict


_CONVENTION_WORDS = (("squared", "euclidean"), ("mean", "sum"), ("sum", "average", "forward"))


def _convention(name, fn="chamfer"):
    words = str(name).split("-")
    if len(words) != 3 or any(w not in allowed for w, allowed in zip(words, _CONVENTION_WORDS)):
        raise ValueError("pcbench.%s: convention %r: need DISTANCE-POINTS-DIRECTIONS, " % (fn, name) +
                         "DISTANCE squared or euclidean, POINTS mean or sum, DIRECTIONS sum, "
                         "average or forward (e.g. 'squared-mean-sum')")
    return words


def _chamfer_value_direct(a, b):
    """The fused chamfer's forward (pcbench::chamfer_value's kernel): each
    pair's value (float32, default convention) and both directions' nearest
    points as one int32 array (a's points, then b's), kept for the backward.
    On CUDA one library call (two launches)."""
    ca, cb = _Cloud(a, "a", "chamfer"), _Cloud(b, "b", "chamfer")
    ca.same_place(cb, ("a", "b"))  # the library reads batch x nq points of b
    torch = _torch()
    count = ca.batch * (ca.n + cb.n)
    idx = torch.empty(count, dtype=torch.int32, device=a.device)
    d2 = torch.empty(count, dtype=torch.float32, device=a.device)
    value = torch.empty(ca.batch, dtype=torch.float64, device=a.device)
    task = ca.task(_n.CHAMFER, nq=cb.n)
    task.b = cb.ptr
    _run(ca, task, None, _n.Result(index=_ptr(idx), dist2=_ptr(d2), value=_ptr(value)))
    return value.to(torch.float32).reshape(a.shape[:-2]), idx


def _chamfer_backward_direct(a, b, idx, grad):
    """The gradient of chamfer_value with the nearest points held fixed: on
    CUDA one library call (pcb_chamfer_backward) into zeroed tensors; on the
    CPU the same sums by torch."""
    torch = _torch()
    grad = grad.to(torch.float32).contiguous().reshape(-1)
    if a.is_cuda:
        ca, cb = _Cloud(a, "a", "chamfer"), _Cloud(b, "b", "chamfer")
        grad_a, grad_b = torch.zeros_like(a), torch.zeros_like(b)
        task = ca.task(_n.CHAMFER, nq=cb.n)
        task.b = cb.ptr
        _on_device(a.device, lambda: _n.check(_n.lib.pcb_chamfer_backward(
            ctypes.byref(task), _ptr(idx), _ptr(grad), _ptr(grad_a), _ptr(grad_b))))
        return grad_a, grad_b
    a3, b3 = a.reshape(-1, a.shape[-2], 3), b.reshape(-1, b.shape[-2], 3)
    first = a3.shape[0] * a3.shape[1]
    ia = idx[:first].long().reshape(a3.shape[:2])
    ib = idx[first:].long().reshape(b3.shape[:2])
    g = grad.reshape(-1, 1, 1)
    da = 2 * g * (a3 - _gather(b3, ia)) / a3.shape[1]  # a's points pulled to their nearest
    db = 2 * g * (b3 - _gather(a3, ib)) / b3.shape[1]
    grad_a = da.clone()
    grad_b = db.clone()
    grad_b.scatter_add_(1, ia.unsqueeze(-1).expand(*ia.shape, 3), -da)
    grad_a.scatter_add_(1, ib.unsqueeze(-1).expand(*ib.shape, 3), -db)
    return grad_a.reshape(a.shape), grad_b.reshape(b.shape)


def _kernel(a, b, a_lengths=None, b_lengths=None):
    if a_lengths is None and b_lengths is None:
        return _chamfer_nearest_flat(a, b, None)
    return _chamfer_ragged(a, b, None, a_lengths, b_lengths)


def _both_ways(a, b):
    count = a.shape[-2] + b.shape[-2]
    for size in _ops.lead(a):
        count = count * size
    return (count,)


def _fake_nearest(a, b, a_lengths=None, b_lengths=None):
    _ops.check_pair(a, b, "chamfer_nearest", NAMES)
    _ops.check_lengths(a, a_lengths, "chamfer_nearest", NAMES[2])
    _ops.check_lengths(b, b_lengths, "chamfer_nearest", NAMES[3])
    shape = _both_ways(a, b)
    return a.new_empty(shape, dtype=_ops.torch.int64), a.new_empty(shape)


def _fake_value(a, b):
    _ops.check_pair(a, b, "chamfer", ("a", "b"))
    return a.new_empty(_ops.lead(a)), a.new_empty(_both_ways(a, b), dtype=_ops.torch.int32)


def _fake_backward(a, b, idx, grad):
    return _ops.torch.empty_like(a), _ops.torch.empty_like(b)


def _value_setup(ctx, inputs, output):
    a, b = inputs
    ctx.save_for_backward(a, b, output[1])


def _value_grad(ctx, grad_value, grad_idx):
    a, b, idx = ctx.saved_tensors
    return _ops.torch.ops.pcbench.chamfer_backward.default(a, b, idx, grad_value)


if _ops is not None:
    _ops.add("chamfer_nearest(Tensor a, Tensor b, Tensor? a_lengths=None, "
             "Tensor? b_lengths=None) -> (Tensor, Tensor)", _kernel, _fake_nearest)
    _ops.add("chamfer_value(Tensor a, Tensor b) -> (Tensor, Tensor)", _chamfer_value_direct,
             _fake_value)
    _ops.add("chamfer_backward(Tensor a, Tensor b, Tensor idx, Tensor grad) -> (Tensor, Tensor)",
             _chamfer_backward_direct, _fake_backward)
    _ops.autograd("chamfer_value", _value_grad, _value_setup)
