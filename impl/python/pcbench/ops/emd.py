"""Earth mover's distance: pcbench.emd (a certified auction), its direct,
ragged and host kernels, its operator pcbench::emd, and check_emd, the
judge of anyone's matchings. The losses are losses.emd_loss and EMDLoss."""
import ctypes
import math
import os

from .. import _native as _n
from .._core import (_as_op, _Cloud, _clouds, _float32, _gap, _host, _impl_name, _int64, _judge,
                     _numpy, _op_pair_lengths, _ops, _pair_lengths, _ptr, _run, _torch)
from .._native import PcbenchError

NAMES = ("a", "b", "lengths", "")


def emd(a, b, max_gap=1e-3, impl=None, lengths=None):
    """Earth mover's distance between clouds of equal size by a certified
    auction: (matching, value, bound). matching[i] is the point of b matched
    to point i of a (int64, a bijection); value the mean matched distance
    (float64, per pair); bound the certified relative gap (P - D) / D of that
    value above the optimum, at most max_gap. lengths (B,): a ragged batch
    of pairs of equal sizes, run pair by pair; past a pair's length the
    matching is -1; an empty pair's value is NaN (a mean of no terms), its
    bound 0."""
    max_gap = _gap(max_gap, "emd")
    _impl_name(impl, "emd")
    a, b = _float32(a), _float32(b)
    if _as_op(a, impl):
        return _ops.torch.ops.pcbench.emd.default(
            a.detach(), b.detach(), float(max_gap),
            _op_pair_lengths(a, b, lengths, None, "emd", NAMES)[0])
    if lengths is not None:
        return _emd_ragged(a, b, max_gap, impl, lengths)
    return _emd_direct(a, b, max_gap, impl)


def _emd_direct(a, b, max_gap, impl, warm=None):
    ca, cb = _Cloud(a, "a", "emd"), _Cloud(b, "b", "emd")
    ca.same_place(cb, ("a", "b"))
    if ca.n != cb.n:
        raise ValueError("pcbench.emd: a and b must have as many points (%d and %d)"
                         % (ca.n, cb.n))
    max_gap = _gap(max_gap, "emd")
    match, value = ca.empty((ca.batch, ca.n), "int32"), ca.empty((ca.batch,), "float64")
    bound = ca.empty((ca.batch,), "float64")
    task = ca.task(_n.EMD, nq=ca.n)
    task.b, task.opt.max_gap = cb.ptr, float(max_gap)
    if warm is not None:  # (price, eps, budget), read and written in place (EMDLoss)
        task.warm = _n.EmdWarm(*(_ptr(x) for x in warm))
    if ca.cuda:  # the auction stops on its certificate: bound <= max_gap
        _run(ca, task, impl, _n.Result(index=_ptr(match), value=_ptr(value), bound=_ptr(bound)))
        return _int64(match), value, bound
    return _emd_host(ca, task, impl, match, value, bound, max_gap)


def _emd_ragged(a, b, max_gap, impl, lengths):
    ca, cb = _Cloud(a, "a", "emd"), _Cloud(b, "b", "emd")
    la, _ = _pair_lengths(ca, cb, lengths, None, NAMES)
    if ca.n != cb.n:
        raise ValueError("pcbench.emd: a and b must have as many points (%d and %d)"
                         % (ca.n, cb.n))
    match, value = ca.empty((ca.batch, ca.n), "int64"), ca.empty((ca.batch,), "float64")
    bound = ca.empty((ca.batch,), "float64")
    match[:], value[:], bound[:] = -1, math.nan, 0
    for i, n in enumerate(la.tolist()):
        if n:
            m, v, g = emd(a[i:i + 1, :n], b[i:i + 1, :n], max_gap, impl)
            match[i, :n], value[i], bound[i] = m[0], v[0], g[0]
    return match, value, bound


def _emd_host(ca, task, impl, match, value, bound, max_gap):
    """The CPU auctions run to an eps, not a certificate: the bound is
    computed from their prices; above max_gap, one more run at the eps the
    bound asks for (the mean gap is at most eps)."""
    np = _numpy()
    price = np.empty(ca.batch * ca.n, dtype="float64")
    value_np, bound_np = np.empty(ca.batch), np.empty(ca.batch)
    match_ptr = _ptr(match)
    result = _n.Result(index=match_ptr, value=value_np.ctypes.data, price=price.ctypes.data)
    for attempt in range(2):
        _run(ca, task, impl, result)
        _n.check(_n.lib.pcb_emd_bound(ctypes.byref(task), ctypes.byref(result),
                                      bound_np.ctypes.data))
        worst = float(np.max(bound_np))
        if worst <= max_gap or attempt == 1:
            break
        # D >= value / (1 + bound): an eps of half max_gap x D keeps the gap below max_gap
        task.opt.eps = 0.5 * max_gap * float(np.min(value_np / (1 + bound_np)))
    if worst > max_gap:
        raise PcbenchError("PCB_EUNSUPPORTED", "pcbench.emd: the CPU auction certified only "
                           "%.3g, above max_gap %.3g" % (worst, max_gap))
    if ca.kind == "torch":
        torch = _torch()
        value.copy_(torch.from_numpy(value_np if ca.batched else value_np[:1].reshape(())))
        bound.copy_(torch.from_numpy(bound_np if ca.batched else bound_np[:1].reshape(())))
    else:
        value[...] = value_np if ca.batched else value_np[0]
        bound[...] = bound_np if ca.batched else bound_np[0]
    return _int64(match), value, bound


# ---- judging: the library's validators, in double precision ---------------


def _gap_max_n():
    """The judge's limit on exact optima from PCB_EMD_GAP_MAX_N, as the
    command line reads it (0: never, else up to that many points; unset:
    the library's 2,048); the library reads no environment."""
    try:
        n = int(os.environ.get("PCB_EMD_GAP_MAX_N", ""))
    except ValueError:
        return 0
    return -1 if n == 0 else n if n > 0 else 0


def check_emd(a, b, matching, value=None, prices=None, max_gap=1e-3):
    """Judge an EMD answer: a bijection whose cost is within max_gap of the
    optimum (the exact solver's, up to 2048 points) and, with prices (the
    dual of B's points), certified within it; value, if given, must be the
    matching's mean cost. max_gap=0 demands the optimum; None a bijection
    only."""
    cs = _clouds("check_emd", a=a, b=b)
    ca, cb = cs["a"], cs["b"]
    ca.same_place(cb, ("a", "b"))
    match = _host(matching, "int32", "check_emd", "matching")
    if match.size != ca.batch * ca.n or cb.n != ca.n:
        raise ValueError("pcbench.check_emd: matching %s does not fit %d x %d points"
                         % (match.shape, ca.batch, ca.n))
    v = None if value is None else _host(value, "float64", "check_emd", "value", ca.batch)
    p = None if prices is None else _host(prices, "float64", "check_emd", "prices", match.size)
    task = ca.task(_n.EMD, nq=ca.n)
    task.b = cb.ptr
    task.opt.emd_gap_max_n = _gap_max_n()
    result = _n.Result(index=match.ctypes.data, value=_ptr(v), price=_ptr(p),
                       has_price=int(p is not None))
    gap = _n.ANY_GAP if max_gap is None else float(max_gap)
    return _judge(task, result, _n.Promise(exact=int(gap == 0), max_gap=gap),
                  clouds=cs)


# ---- losses: differentiable through torch, the pairing from pcbench -------


def _kernel(a, b, max_gap, lengths=None):
    if lengths is None:
        return _emd_direct(a, b, max_gap, None)
    return _emd_ragged(a, b, max_gap, None, lengths)


def _fake(a, b, max_gap, lengths=None):
    _ops.check_pair(a, b, "emd", ("a", "b"))
    _ops.check_lengths(a, lengths, "emd", "lengths")
    lead = _ops.lead(a)
    return (a.new_empty(lead + (a.shape[-2],), dtype=_ops.torch.int64),
            a.new_empty(lead, dtype=_ops.torch.float64), a.new_empty(lead, dtype=_ops.torch.float64))


if _ops is not None:
    _ops.add("emd(Tensor a, Tensor b, float max_gap, Tensor? lengths=None) "
             "-> (Tensor, Tensor, Tensor)", _kernel, _fake)
