"""Serialization: pcbench.serialize, its kernel, its operator
pcbench::serialize, check_serialize (the judge of anyone's codes and
order), and curve_encode / curve_decode (a voxel's index on a curve and
back)."""
import ctypes

from .. import _core
from .. import _native as _n
from .._core import (_as_op, _Cloud, _clouds, _host, _impl_name, _int64, _judge, _numpy,
                     _op_lengths, _ops, _ptr, _ragged_only_batched, _run, _run_indices, _torch,
                     _triple)
from .. import _ragged as _r


def _curve(curve, fn):
    if curve not in _n.CURVES:
        raise ValueError("pcbench.%s: unknown curve %r (%s)" % (fn, curve, ", ".join(_n.CURVES)))
    return _n.CURVES.index(curve)


def _depth(depth, fn, least=0):
    """None: 0 (the least that holds the batch); else an int least..21."""
    if depth is None and not least:
        return 0
    if isinstance(depth, bool) or not isinstance(depth, int):
        raise TypeError("pcbench.%s: depth must be an int%s, not %s"
                        % (fn, "" if least else " or None", type(depth).__name__))
    if not max(least, 1) <= depth <= _n.MAX_DEPTH:
        raise ValueError("pcbench.%s: depth %d: need 1 to %d bits an axis"
                         % (fn, depth, _n.MAX_DEPTH))
    return depth


def serialize(xyz, size, curve="hilbert", depth=None, origin=None, impl=None, lengths=None):
    """Serialization, as Point Transformer V3 orders its points: each point's
    voxel is grid sampling's (floor((p - origin) / size) per axis in double
    precision, origin each cloud's minimum unless given, at or below every
    point), its code the voxel's index on the curve at depth bits an axis
    ("morton": z-order, x the highest bit of each triple; "hilbert": John
    Skilling's curve, axes x, y, z; both as Pointcept's "z" and "hilbert"),
    its cloud's number shifted left by 3 depth bits above it. depth None:
    the least that holds every cloud of the batch (1 to 21). Returns (code,
    order, inverse), each (B, N) int64 ((N,) for (N, 3)): each point's code,
    the points by ascending code (equal codes by increasing index), and
    each point's place in that order. lengths (B,): a ragged batch read
    whole (one depth, each cloud's own number), -1 past each cloud's length
    in all three. A voxel coordinate past the depth, or below an origin
    given, raises ValueError (on CUDA with finite_check "async": the
    answer is -1 and nonfinite_seen() says so)."""
    cell = _triple(size, "serialize", "size", True)
    at = None if origin is None else _triple(origin, "serialize", "origin", False)
    _curve(curve, "serialize")
    d = _depth(depth, "serialize")
    _impl_name(impl, "serialize")
    if _as_op(xyz, impl):
        code, idx = _ops.call(_ops.torch.ops.pcbench.serialize.default, xyz.detach(), cell, at,
                              curve, d, _op_lengths(xyz, lengths, "serialize", "lengths", "xyz"))
    else:
        code, idx = _serialize(xyz, cell, at, curve, d, impl, lengths)
    return code, idx[0], idx[1]


def _task(c, cell, origin, curve, depth):
    t = c.task(_n.SERIALIZE)
    t.cell, t.curve, t.depth = (ctypes.c_double * 3)(*cell), _curve(curve, "serialize"), depth
    if origin is not None:
        t.origin, t.origin_given = (ctypes.c_double * 3)(*origin), 1
    return t


def _frame_check(c, task, lengths):
    """A CUDA run cannot say that a voxel coordinate is outside the depth
    (or below an origin given) without a wait: with finite_check "async"
    (the default) the library lowers the device's finite flag and the
    answer is -1; with "sync" the task is first checked as the CPU checks
    it, on a host copy (one wait), and raises the CPU's ValueError, word for
    word."""
    np = _numpy()
    host = np.ascontiguousarray(c.x.detach().cpu().numpy())
    held = None if lengths is None else np.ascontiguousarray(lengths.cpu().numpy())
    copy = _n.Task.from_buffer_copy(task)
    copy.a, copy.memory, copy.stream = host.ctypes.data, _n.MEM_HOST, None
    copy.lengths_a = None if held is None else held.ctypes.data
    try:
        _n.check(_n.lib.pcb_task_check(ctypes.byref(copy)))
    except ValueError as e:
        e.args = ("pcbench.serialize: %s" % e.args[0],) + e.args[1:]
        raise


def _serialize(xyz, cell, origin, curve, depth, impl, lengths):
    """(code (B, N), index (2, B, N): the order, then the inverse)"""
    c = _Cloud(xyz, "xyz", "serialize")
    la = None
    if lengths is not None:
        _ragged_only_batched(c, "lengths")
        la = _r.as_lengths(lengths, c, "lengths", c.n)
    shape = (2,) + ((c.batch,) if c.batched else ()) + (c.n,)
    code, task = c.empty((c.batch, c.n), "int64"), _task(c, cell, origin, curve, depth)
    task.lengths_a = _ptr(la)  # every implementation reads them, on the device too
    if c.cuda and _core.finite_check == "sync":
        _frame_check(c, task, la)
    if not c.cuda:
        idx = c.empty(shape, "int32", as_is=True)
        _run(c, task, impl, _n.Result(index=_ptr(idx), code=_ptr(code)))
        return code, _int64(idx)
    return code, _run_indices(c, task, impl, shape, _n.Result(code=_ptr(code)))


def check_serialize(xyz, code, order, inverse, size, curve="hilbert", depth=None, origin=None,
                    lengths=None):
    """Judge a serialization made anywhere, in serialize's layout: each
    point's code, the order and its inverse, (B, N) or (N,) each (-1 past a
    ragged cloud's length); depth None: the least that holds the batch."""
    fn = "check_serialize"
    c = _clouds(fn, xyz=xyz)["xyz"]
    cell = _triple(size, fn, "size", True)
    at = None if origin is None else _triple(origin, fn, "origin", False)
    _curve(curve, fn)
    points = c.batch * c.n
    np = _numpy()
    both = np.ascontiguousarray(np.concatenate(
        [_host(order, "int32", fn, "order", points).reshape(-1),
         _host(inverse, "int32", fn, "inverse", points).reshape(-1)]), dtype="int32")
    codes = np.ascontiguousarray(_host(code, "int64", fn, "code", points).reshape(-1))
    task = _task(c, cell, at, curve, _depth(depth, fn))
    la = None
    if lengths is not None:
        _ragged_only_batched(c, "lengths")
        la = np.ascontiguousarray(_host(lengths, "int64", fn, "lengths", c.batch))
        task.lengths_a = la.ctypes.data
    return _judge(task, _n.Result(index=both.ctypes.data, code=codes.ctypes.data),
                  _n.Promise(exact=1))


def _curve_call(fn, entry, values, depth, curve, encode):
    """values through the library's entry point: voxels (..., 3) to codes
    (...) where encode, else codes (...) to voxels (..., 3)."""
    np = _numpy()
    d, which = _depth(depth, fn, least=1), _curve(curve, fn)
    torch = _torch() if _core._is_tensor(values) else None
    if torch is not None and values.device.type != "cpu":
        raise ValueError("pcbench.%s: a host array, not one on %s" % (fn, values.device))
    a = np.ascontiguousarray(values.numpy() if torch is not None else np.asarray(values),
                             dtype="int64")
    if encode and (a.ndim == 0 or a.shape[-1] != 3):
        raise ValueError("pcbench.%s: need voxel coordinates (..., 3), not shape %s"
                         % (fn, a.shape))
    out = np.empty(a.shape[:-1] if encode else a.shape + (3,), dtype="int64")
    try:
        _n.check(entry(which, d, a.ctypes.data, a.size // 3 if encode else a.size,
                       out.ctypes.data))
    except ValueError as e:
        e.args = ("pcbench.%s: %s" % (fn, e.args[0]),) + e.args[1:]
        raise
    return torch.from_numpy(out) if torch is not None else out


def curve_encode(voxels, depth, curve="hilbert"):
    """Integer voxel coordinates (..., 3), each 0..2^depth-1, to their index
    on the curve at depth (1 to 21), int64 (...): serialize's codes without
    the cloud's number. A numpy array or CPU tensor, returned alike."""
    return _curve_call("curve_encode", _n.lib.pcb_curve_encode, voxels, depth, curve, True)


def curve_decode(codes, depth, curve="hilbert"):
    """curve_encode's inverse: codes (...) to voxel coordinates (..., 3)."""
    return _curve_call("curve_decode", _n.lib.pcb_curve_decode, codes, depth, curve, False)


def _kernel(xyz, size, origin, curve, depth, lengths=None):
    return _serialize(xyz, size, origin, curve, depth, None, lengths)


def _fake(xyz, size, origin, curve, depth, lengths=None):
    _ops.check_cloud(xyz, "serialize", "xyz")
    _ops.check_lengths(xyz, lengths, "serialize", "lengths")
    lead = _ops.lead(xyz)
    return (xyz.new_empty(lead + (xyz.shape[-2],), dtype=_ops.torch.int64),
            xyz.new_empty((2,) + lead + (xyz.shape[-2],), dtype=_ops.torch.int64))


if _ops is not None:
    _ops.add("serialize(Tensor xyz, float[] size, float[]? origin, str curve, int depth, "
             "Tensor? lengths=None) -> (Tensor, Tensor)", _kernel, _fake)
