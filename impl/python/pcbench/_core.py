"""What the package's operations share: the checked input (_Cloud), the
calls into the library on a cloud's device (_call, _run, _run_ragged), the
argument checks, the judge's call and its Verdict, the losses' helpers, and
the device's finite flag.

finite_check is the package's setting (pcbench.finite_check sets it here).
"""
import ctypes
import importlib
import importlib.util
import math
import sys

from . import _native as _n
from . import _ragged as _r
from ._native import PcbenchError

# PyTorch, where installed, is imported now: the operators (_ops) must be
# registered before torch.compile traces a call, not at the first one.
_ops = None
if importlib.util.find_spec("torch") is not None:
    _ops = importlib.import_module("._ops", __package__)

finite_check = "async"  # pcbench.finite_check, set through the package's module


def _torch():
    return _ops.torch if _ops is not None else sys.modules.get("torch")


def _as_op(x, impl):
    """Whether a call goes through the PyTorch operator: a CPU or CUDA
    tensor and no implementation named (a name takes the direct path)."""
    return (impl is None and _ops is not None and isinstance(x, _ops.torch.Tensor)
            and x.device.type in ("cpu", "cuda"))


def _is_tensor(x):
    t = _torch()
    return t is not None and isinstance(x, t.Tensor)


def _float32(x):
    """A cloud as pcbench computes on it: a float16, bfloat16 or float64
    tensor (a float16 or float64 array) rounded to float32, the 16-bit ones
    exactly, so the answers are exact for the rounded points; anything else
    as given, for the checks to name. Grid sampling and serialization take
    float32 only: a float64 coordinate rounded would move points between
    voxels."""
    if _is_tensor(x):
        torch = _torch()
        return x.float() if x.dtype in (torch.float16, torch.bfloat16, torch.float64) else x
    dtype = getattr(x, "dtype", None)
    if dtype is not None and str(dtype) in ("float16", "float64"):
        return x.astype("float32")
    return x


class _Cloud:
    """One checked input: its kind, device, pointer and shape."""

    def __init__(self, x, name, fn, rank_of=None):
        self.fn = fn
        if _is_tensor(x):
            torch = _torch()
            self.kind = "torch"
            if x.dtype != torch.float32:
                raise TypeError("pcbench.%s: %s must be float32, not %s" % (fn, name, x.dtype))
            if x.device.type not in ("cpu", "cuda"):
                raise ValueError("pcbench.%s: %s is on %s; CPU and CUDA tensors are supported"
                                 % (fn, name, x.device))
            if not x.is_contiguous():
                raise ValueError("pcbench.%s: %s is not contiguous (call .contiguous())"
                                 % (fn, name))
            self.x = x.detach()
            self.device = x.device
            self.cuda = x.device.type == "cuda"
            self.ptr = self.x.data_ptr()
        else:
            np = _numpy()
            if not isinstance(x, np.ndarray):
                raise TypeError("pcbench.%s: %s must be a torch.Tensor or a numpy.ndarray, not "
                                "%s" % (fn, name, type(x).__name__))
            if x.dtype != np.float32:
                raise TypeError("pcbench.%s: %s must be float32, not %s" % (fn, name, x.dtype))
            if not x.flags.c_contiguous:
                raise ValueError("pcbench.%s: %s is not C-contiguous (numpy.ascontiguousarray)"
                                 % (fn, name))
            self.kind, self.x, self.device, self.cuda = "numpy", x, None, False
            self.ptr = x.ctypes.data
        if x.ndim not in (2, 3) or x.shape[-1] != 3:
            raise ValueError("pcbench.%s: %s must be (B, N, 3) or (N, 3), not %s"
                             % (fn, name, tuple(x.shape)))
        self.batched = x.ndim == 3
        self.batch = int(x.shape[0]) if self.batched else 1
        self.n = int(x.shape[-2])
        if self.n < 1 or self.batch < 1:
            raise ValueError("pcbench.%s: %s is empty: %s" % (fn, name, tuple(x.shape)))
        if self.cuda and finite_check == "sync" and not bool(_torch().isfinite(self.x).all()):
            raise ValueError("pcbench.%s: %s holds a non-finite coordinate" % (fn, name))

    def same_place(self, other, names):
        if self.kind != other.kind or self.device != other.device:
            raise ValueError("pcbench.%s: %s and %s must be the same kind on the same device "
                             "(%s %s, %s %s)" % (self.fn, names[0], names[1], self.kind,
                                                 self.device or "", other.kind,
                                                 other.device or ""))
        if self.batched != other.batched or self.batch != other.batch:
            raise ValueError("pcbench.%s: %s and %s must have the same batch (%s and %s)"
                             % (self.fn, names[0], names[1], tuple(self.x.shape),
                                tuple(other.x.shape)))

    def empty(self, shape, dtype, as_is=False):
        """An output array of this input's kind and device, and rank (its
        batch dimension, the first, dropped for an unbatched input, unless
        as_is)."""
        shape = shape if self.batched or as_is else shape[1:]
        if self.kind == "torch":
            torch = _torch()
            return torch.empty(shape, dtype=getattr(torch, dtype), device=self.device)
        return _numpy().empty(shape, dtype=dtype)

    def task(self, problem, **sizes):
        t = _n.Task(problem=problem, batch=self.batch, n=self.n, a=self.ptr, **sizes)
        if self.cuda:
            torch = _torch()
            t.memory = _n.MEM_DEVICE
            t.stream = torch.cuda.current_stream(self.device).cuda_stream
        return t


def _numpy():
    import numpy
    return numpy


def _ptr(a):
    return None if a is None else (a.data_ptr() if _is_tensor(a) else a.ctypes.data)


def _int64(idx):
    return idx.to(_torch().int64) if _is_tensor(idx) else idx.astype("int64")


_flags = {}


def _finite_flag(device):
    """The device's finite flag: one int32 1 a device, kept (an allocation a
    call cost more than the kernels at small sizes). A run that meets a
    non-finite coordinate sets it to 0, until nonfinite_seen() reads it."""
    flag = _flags.get(device)
    if flag is None:
        torch = _torch()
        flag = _flags[device] = torch.ones((), dtype=torch.int32, device=device)
    return flag


def _on_device(device, fn):
    """fn() with device current (the library takes the current one); entering
    a device costs more than some calls, so only when it is not current."""
    torch = _torch()
    if torch.cuda.current_device() == device.index:
        return fn()
    with torch.cuda.device(device):
        return fn()


def _call(cloud, what, run):
    """run(finite) on cloud's device (the library takes the current one),
    library errors prefixed with "pcbench.<what>". On CUDA with the
    asynchronous check, finite points to the device's flag, which the
    library's copy-in clears on a non-finite coordinate (no wait, no
    assertion). Elsewhere finite is None."""
    try:
        if not cloud.cuda:
            return run(None)
        flag = _finite_flag(cloud.device) if finite_check == "async" else None
        return _on_device(cloud.device, lambda: run(_ptr(flag)))
    except (ValueError, PcbenchError) as e:
        e.args = ("pcbench.%s: %s" % (what, e.args[0]),) + e.args[1:]
        raise


def _run(cloud, task, impl, result):
    """The named or fastest verified implementation on the task, through
    _call; its name."""
    def run(finite):
        chosen = _n.implementation(task, _n.CUDA if cloud.cuda else _n.CPU, impl)
        result.finite = finite
        _n.run(chosen, task, result)
        return chosen
    return _n.lib.pcb_impl_name(_call(cloud, cloud.fn, run)).decode()


def _run_indices(cloud, task, impl, shape, result):
    """_run on CUDA with the indices' output (shape) made in the chosen
    implementation's type: int64 where it writes pcb_result.index64 (no cast
    after the run), else int32; returned as int64."""
    def run(finite):
        chosen = _n.implementation(task, _n.CUDA, impl)
        wide = bool(_n.lib.pcb_impl_index64(chosen))
        idx = cloud.empty(shape, "int64" if wide else "int32", as_is=True)
        result.finite = finite
        setattr(result, "index64" if wide else "index", _ptr(idx))
        _n.run(chosen, task, result)
        return idx
    return _int64(_call(cloud, cloud.fn, run))


def _run_ragged(cloud, task, lengths, impl, result, outputs, one):
    """_run on a ragged task (lengths: (a's, b's) arrays or None). Where the
    library says that the CUDA implementation that would run it does not
    read the lengths on the device, the clouds run here one at a time:
    outputs [(array, padding)] are filled with their padding, then
    one(i, length a, length b) runs cloud i alone."""
    la, lb = lengths
    task.lengths_a, task.lengths_b = _ptr(la), _ptr(lb)
    if not cloud.cuda or not _r.needs_host_loop(
            _call(cloud, cloud.fn, lambda finite: _n.ragged_choice(task, impl))):
        _run(cloud, task, impl, result)
        return
    for array, padding in outputs:
        array.fill_(padding)
    sizes_a = la.tolist() if la is not None else [cloud.n] * cloud.batch
    sizes_b = lb.tolist() if lb is not None else [task.nq] * cloud.batch
    for i in range(cloud.batch):
        one(i, int(sizes_a[i]), int(sizes_b[i]))


class _Shape:
    """What _ragged.as_lengths reads of a cloud, from a tensor's shape alone
    (a fake tensor's too): the operators' lengths are checked before the call."""

    def __init__(self, x, fn):
        self.fn, self.kind, self.device = fn, "torch", x.device
        self.batch, self.n = int(x.shape[0]), int(x.shape[-2])


def _op_lengths(x, lengths, fn, name, what):
    """A public function's lengths for its operator: None, or int64 on x's
    device, checked as the direct path checks them, after x's own checks
    (what: x's name)."""
    if lengths is None:
        return None
    _ops.check_cloud(x, fn, what)
    if x.dim() != 3:
        raise ValueError("pcbench.%s: lengths need a batch of clouds (B, N, 3)" % fn)
    if _is_tensor(lengths):  # its values are the kernel's to check: no wait while tracing
        _ops.check_lengths(x, lengths, fn, name)
        return lengths
    return _r.as_lengths(lengths, _Shape(x, fn), name, int(x.shape[-2]))


def _op_pair_lengths(a, b, la, lb, fn, names):
    """_op_lengths of a pair of clouds (names: a's, b's, la's, lb's), after
    the pair's own checks."""
    if la is None and lb is None:
        return None, None
    if not _is_tensor(b):  # the direct path's words
        _Cloud(a, names[0], fn).same_place(_Cloud(b, names[1], fn), names[:2])
    _ops.check_pair(a, b, fn, names[:2])
    return (_op_lengths(a, la, fn, names[2], names[0]) if la is not None else None,
            _op_lengths(b, lb, fn, names[3], names[1]) if lb is not None else None)


def _ragged_only_batched(c, name):
    if not c.batched:
        raise ValueError("pcbench.%s: %s need a batch of clouds (B, N, 3)" % (c.fn, name))


def _pair_lengths(a, b, la, lb, names):
    """Two clouds' lengths (None: full) as arrays beside them."""
    _ragged_only_batched(a, "lengths")
    a.same_place(b, names[:2])
    return (None if la is None else _r.as_lengths(la, a, names[2], a.n),
            None if lb is None else _r.as_lengths(lb, b, names[3], b.n))


def _selection(select, fn):
    if select not in _n.SELECTIONS:
        raise ValueError("pcbench.%s: select must be 'first' or 'nearest', not %r" % (fn, select))
    return _n.SELECTIONS.index(select)


_FLT_OVERFLOW = 3.4028235677973366e38  # float32's largest plus half an ulp: rounds to inf


def _number(v, fn, name):
    """v as a float: a number, never a string or a bool."""
    if isinstance(v, (str, bytes, bool)) or not hasattr(v, "__float__"):
        raise TypeError("pcbench.%s: %s must be a number, not %s" % (fn, name, type(v).__name__))
    return float(v)


def _triple(v, fn, name, positive):
    """A number for every axis, or three: finite floats (> 0 where positive)."""
    if isinstance(v, (str, bytes)):
        raise TypeError("pcbench.%s: %s must be a number or three numbers, not str" % (fn, name))
    one = not hasattr(v, "__len__") or getattr(v, "ndim", 1) == 0  # a 0-d array is one
    values = [v] * 3 if one else list(v)
    if len(values) != 3:
        raise TypeError("pcbench.%s: %s must be a number or three numbers, not %d of them"
                        % (fn, name, len(values)))
    values = [_number(x, fn, name) for x in values]
    if not all(math.isfinite(x) and (x > 0 or not positive) for x in values):
        raise ValueError("pcbench.%s: %s %r: need finite numbers%s"
                         % (fn, name, values, " > 0" if positive else ""))
    return values


def _radius(radius, fn):
    r = _number(radius, fn, "radius")
    if not (r > 0 and math.isfinite(r)):
        raise ValueError("pcbench.%s: radius must be a finite number > 0, not %r" % (fn, radius))
    if r * r >= _FLT_OVERFLOW:  # the library compares float32 squares
        raise ValueError("pcbench.%s: radius %r: its float32 square is not finite" % (fn, radius))
    return r


class Verdict:
    """What the judge said of an answer: ok (also its truth value), verdict
    ("pass", "fail", "known"), detail (the first thing wrong, or a summary),
    and the validator's figures (recall, worst_ratio, gap, bound, unmatched:
    -1 where they do not apply)."""

    def __init__(self, j):
        self.verdict = ("pass", "fail", "known")[j.verdict]
        self.ok = j.verdict == 0
        self.detail = j.detail.decode(errors="replace")
        r = j.rep
        self.recall, self.worst_ratio = r.recall, r.worst_ratio
        self.gap, self.bound, self.unmatched = r.gap, r.bound, r.unmatched
        self.rounding_ties = None  # 16-bit inputs: points that coincide once rounded

    def __bool__(self):
        return self.ok

    def __repr__(self):
        return "Verdict(%s: %s)" % (self.verdict, self.detail)


def _host(x, dtype, fn="check", name="array", count=None):
    """x as a host numpy array of dtype (a copy where it must move): numbers
    only; indices (int32) of an integer type, never floats or bools, which
    would be truncated or read as 0 and 1; count, where given, the number of
    elements it must have (the library reads exactly that many)."""
    np = _numpy()
    if _is_tensor(x):
        x = x.detach().cpu()
        x = (x.float() if x.dtype == _torch().bfloat16 else x).numpy()  # numpy has no bfloat16
    try:
        x = np.asarray(x)
    except (TypeError, ValueError) as e:
        raise TypeError("pcbench.%s: %s must be an array of numbers (%s)" % (fn, name, e))
    kind = x.dtype.kind
    if kind not in "biuf" or (dtype == "int32" and kind not in "iu"):
        raise TypeError("pcbench.%s: %s must be an array of %s, not %s"
                        % (fn, name, "integers" if dtype == "int32" else "numbers", x.dtype))
    if count is not None and x.size != count:
        raise ValueError("pcbench.%s: %s has %d elements, need %d" % (fn, name, x.size, count))
    if dtype == "int32":  # anything out of range stays out of range
        x = np.clip(x, -(2 ** 31), 2 ** 31 - 1)
    return np.ascontiguousarray(x, dtype=dtype)


def _count(v, fn, name):
    """v as a Python int that the operators' int64 takes (its range against
    the clouds is the kernels' check)."""
    return _integer(v, fn, name, -2 ** 63, 2 ** 63 - 1)


def _impl_name(impl, fn):
    if impl is not None and not isinstance(impl, str):
        raise TypeError("pcbench.%s: impl must be an implementation's name (str), not %s"
                        % (fn, type(impl).__name__))


def _gap(max_gap, fn):
    """A certificate's relative gap: a number in (0, 1]."""
    gap = _number(max_gap, fn, "max_gap")
    if not 0 < gap <= 1:  # NaN fails too
        raise ValueError("pcbench.%s: max_gap %r: need a relative gap in (0, 1]" % (fn, max_gap))
    return gap


def _integer(v, fn, name, lo, hi):
    """v as a Python int in [lo, hi]: never a float, a bool or a value that
    would wrap in the library's int64."""
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise TypeError("pcbench.%s: %s must be an integer, not %s" % (fn, name, type(v).__name__))
    v = v.__index__()
    if not lo <= v <= hi:
        raise ValueError("pcbench.%s: %s = %d is outside %d..%d" % (fn, name, v, lo, hi))
    return v


def _judge(task, result, promise, full=False, clouds=None):
    j = _n.Judgement()
    f = _n.lib.pcb_judge_full if full else _n.lib.pcb_judge
    args = (ctypes.byref(task), ctypes.byref(result), ctypes.byref(promise))
    _n.check(f(*args, ctypes.byref(j)) if full else f(*args, None, ctypes.byref(j)))
    verdict = Verdict(j)
    if clouds is not None and clouds.ties is not None:
        verdict.rounding_ties = clouds.ties
        verdict.detail += ("; 16-bit coordinates, judged as rounded: %d point%s coincide%s with "
                           "another of %s cloud (ties the rounding may have made)"
                           % (clouds.ties, "" if clouds.ties == 1 else "s",
                              "s" if clouds.ties == 1 else "", "its" if clouds.ties == 1
                              else "their"))
    return verdict


class _Clouds(dict):
    """A judge's checked inputs by name; ties: the points of its 16-bit
    inputs that coincide with another point of their cloud once rounded
    (None where no input is 16-bit)."""
    ties = None


def _sixteen_bit(x):
    if _is_tensor(x):
        torch = _torch()
        return x.dtype in (torch.float16, torch.bfloat16)
    np = _numpy()
    return isinstance(x, np.ndarray) and x.dtype == np.float16


def _coinciding(points):
    """How many points of each cloud of points ((N, 3) or (B, N, 3),
    float32) share their coordinates with another of the same cloud."""
    np = _numpy()
    clouds = points.reshape(-1, points.shape[-2], 3) if points.ndim >= 2 else points.reshape(0, 0, 3)
    total = 0
    for c in clouds:
        if len(c):
            counts = np.unique(c, axis=0, return_counts=True)[1]
            total += int(counts[counts > 1].sum())
    return total


def _clouds(fn, **arrays):
    cs, seen = _Clouds(), []
    for k, v in arrays.items():
        host = _host(v, "float32", fn, k)
        cs[k] = _Cloud(host, k, fn)
        if _sixteen_bit(v):  # the judge sees the rounded points: say where they tie
            cs.ties = (cs.ties or 0) + (0 if any(v is w for w in seen) else _coinciding(host))
        seen.append(v)
    return cs


def _reduce(per_pair, reduction, fn):
    if reduction == "mean":
        return per_pair.mean()
    if reduction == "sum":
        return per_pair.sum()
    if reduction == "none":
        return per_pair
    raise ValueError("pcbench.%s: reduction %r: need 'mean', 'sum' or 'none'" % (fn, reduction))


def _gather(cloud, idx):
    """cloud's points at idx: (..., N, 3) and (..., K) -> (..., K, 3)."""
    return cloud.gather(-2, idx.unsqueeze(-1).expand(*idx.shape, 3))


def _loss_inputs(a, b, fn):
    torch = _torch()
    if torch is None or not (_is_tensor(a) and _is_tensor(b)):
        raise TypeError("pcbench.%s: needs torch tensors" % fn)
    floats = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
    if a.dtype not in floats or b.dtype not in floats:
        raise TypeError("pcbench.%s: a and b must be float32, float64, float16 or bfloat16 "
                        "(%s, %s)" % (fn, a.dtype, b.dtype))
    # the pairing is computed on float32 copies; the loss in the inputs' dtypes,
    # promoted as torch promotes them (a bf16 prediction, a float32 target: float32)
    return a.detach().float().contiguous(), b.detach().float().contiguous()


def _wide(x):
    """A loss's tensor for its distances: 16-bit ones in float32 (through
    autograd: the gradient comes back in the input's dtype), so nothing is
    summed in 16 bits."""
    torch = _torch()
    return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x


def _masked_mean(per_point, lengths):
    """Each pair's mean over its first lengths[i] points (NaN for none)."""
    torch = _torch()
    keep = torch.arange(per_point.shape[-1], device=per_point.device) < lengths.unsqueeze(-1)
    total = torch.where(keep, per_point, torch.zeros_like(per_point)).sum(-1)
    return total / lengths.to(per_point.dtype), keep


def nonfinite_seen(device=None):
    """Whether a CUDA call on device (default: the current one) met a
    non-finite coordinate since the last read, with finite_check "async":
    it waits for the work queued on the device, reads its flag and lowers
    it. The calls that met one ran with the coordinate read as 0; the CUDA
    context is unharmed, so a loop can skip the batch and go on."""
    torch = _torch()
    if torch is None:  # no PyTorch: no CUDA call was made
        return False
    if device is not None:
        try:
            dev = None if isinstance(device, bool) else torch.device(device)
        except (RuntimeError, TypeError, ValueError):
            dev = None
        if dev is None or dev.type != "cuda":
            raise ValueError("pcbench.nonfinite_seen: device must be a CUDA device (an index, "
                             "'cuda:N' or a torch.device), not %r" % (device,))
    if not torch.cuda.is_available():
        return False
    device = torch.device("cuda", torch.cuda.current_device() if device is None
                          else dev.index or 0)
    seen = False
    flag = _flags.get(device)
    if flag is not None:
        seen = not bool(flag.item())  # item() waits for the stream
        flag.fill_(1)
    if _ops is not None and _ops.compiled_flag_lowered(device.index):
        seen = True
    return seen


def clear_device_cache(graphs=False):
    """Free the GPU scratch memory pcbench keeps between calls of the same
    sizes (it waits for the work queued with it). A call captured in a CUDA
    graph keeps the scratch it ran on for the graph's replays: graphs=True
    frees that too, only once those graphs are deleted."""
    _n.lib.pcb_device_cache_clear(1 if graphs else 0)
