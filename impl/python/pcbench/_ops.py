"""pcbench's calls as PyTorch operators (torch.library), registered when
PyTorch is installed: pcbench::fps, nn, knn, ball_query, chamfer_nearest,
chamfer_value (with its autograd), chamfer_backward and emd.

The public functions call them for tensors, so torch.compile(fullgraph=True)
and torch.export hold a whole step: each operator has a fake implementation
that gives its outputs' shapes, dtypes and device without running it. Their
kernels (CPU and CUDA) are the package's direct calls through ctypes.

Defined with torch.library.Library and called by their overloads, not with
the custom_op decorator: its wrapper costs about 20 us a call, the
dispatcher's Python kernel about 1.5 (measured on a CPU), and at training
batches a call's host time is a share of its kernels'.

Outputs never alias their inputs or each other (a rule of custom
operators): chamfer's two directions come back as one array each, split by
the Python function that called the operator.

Where the compiled operators were built for this PyTorch (make torch-ops:
libpcbench_torch.so in torch-<version>/ beside libpcbench.so), their CUDA
kernels and chamfer_value's autograd are C++ (pcbench_torch.cpp: a call's
host time is then the dispatcher's and the launches', not Python's); the
CPU kernels stay these. PCBENCH_TORCH_OPS=0 keeps the Python kernels
everywhere; PCBENCH_TORCH_OPS=<path> names the library.
"""
import ctypes
import os
import re
import warnings
from pathlib import Path

import torch

from . import _native

_lib = torch.library.Library("pcbench", "DEF")
_DEFS = {
    "fps": "fps(Tensor xyz, int m, int start) -> Tensor",
    "nn": "nn(Tensor ref, Tensor query) -> (Tensor, Tensor)",
    "knn": "knn(Tensor ref, Tensor query, int k) -> (Tensor, Tensor)",
    "ball_query": "ball_query(Tensor xyz, Tensor centres, float radius, int k, str select) "
                  "-> (Tensor, Tensor)",
    "chamfer_nearest": "chamfer_nearest(Tensor a, Tensor b) -> (Tensor, Tensor)",
    "chamfer_value": "chamfer_value(Tensor a, Tensor b) -> (Tensor, Tensor)",
    "chamfer_backward": "chamfer_backward(Tensor a, Tensor b, Tensor idx, Tensor grad) "
                        "-> (Tensor, Tensor)",
    "emd": "emd(Tensor a, Tensor b, float max_gap) -> (Tensor, Tensor, Tensor)",
}
for _schema in _DEFS.values():
    _lib.define(_schema)


def _load_compiled():
    """The compiled operators' library for this PyTorch, loaded, or None."""
    choice = os.environ.get("PCBENCH_TORCH_OPS", "")
    if choice == "0":
        return None
    path = Path(choice) if choice else (Path(_native.lib._name).parent /
                                        ("torch-" + torch.__version__) / "libpcbench_torch.so")
    if not path.is_file():
        return None
    try:
        so = ctypes.CDLL(str(path))
        # an older build lacks what this package calls: never loaded half
        so.pcbench_torch_ops.restype = ctypes.c_char_p
        so.pcbench_torch_finite_check.argtypes = [ctypes.c_int]
        so.pcbench_torch_finite_read.argtypes = [ctypes.c_int]
        torch.ops.load_library(str(path))
    except (OSError, AttributeError) as e:  # a library it links to is gone, an old build
        warnings.warn("pcbench: the compiled operators at %s did not load (%s); using the "
                      "Python kernels (make torch-ops rebuilds them)" % (path, e))
        return None
    return so


_compiled = _load_compiled()
compiled = frozenset(_compiled.pcbench_torch_ops().decode().split()) if _compiled else frozenset()
compiled_path = _compiled._name if _compiled else None
_FINITE_MODES = {"off": 0, "async": 1, "sync": 2}


def finite_mode(mode):
    """pcbench.finite_check, told to the compiled kernels (anything but
    "async" and "sync" is off, as in the Python kernels)."""
    if _compiled is not None:
        _compiled.pcbench_torch_finite_check(_FINITE_MODES.get(mode, 0))


def compiled_flag_lowered(device):
    """Whether the compiled kernels' finite flag of a CUDA device was
    lowered (a non-finite coordinate met); it waits for the device's
    current stream and raises the flag again."""
    return _compiled is not None and _compiled.pcbench_torch_finite_read(device) == 1


_STATUS = re.compile(r"\[pcbench (PCB_[A-Z]+)\] ")


def call(op, *args):
    """op(*args), a compiled kernel's library error raised as the package's
    PcbenchError (its RuntimeError says "[pcbench PCB_<STATUS>] ...")."""
    try:
        return op(*args)
    except RuntimeError as e:
        found = _STATUS.match(str(e))
        if not found or isinstance(e, _native.PcbenchError):
            raise
        raise _native.PcbenchError(found.group(1), str(e)[found.end():]) from None


def _lead(x):
    """The batch part of a cloud's shape: (B,) or ()."""
    return tuple(x.shape[:-2])


def _check_cloud(x, fn, name):
    """The kernels' checks of a cloud (_Cloud's and pcbench_torch.cpp's),
    in their order and words, on shapes alone (fake tensors have no data)."""
    if x.dtype != torch.float32:
        raise TypeError("pcbench.%s: %s must be float32, not %s" % (fn, name, x.dtype))
    if not x.is_contiguous():
        raise ValueError("pcbench.%s: %s is not contiguous (call .contiguous())" % (fn, name))
    if x.dim() not in (2, 3) or x.shape[-1] != 3:
        raise ValueError("pcbench.%s: %s must be (B, N, 3) or (N, 3), not %s"
                         % (fn, name, tuple(x.shape)))
    if x.numel() == 0:
        raise ValueError("pcbench.%s: %s is empty: %s" % (fn, name, tuple(x.shape)))


def _check_pair(a, b, fn, names):
    _check_cloud(a, fn, names[0])
    _check_cloud(b, fn, names[1])
    same_batch(a, b, fn, names)


def same_batch(a, b, fn, names):
    """_Cloud.same_place's checks, and words, from two tensors' devices and
    shapes alone (no data pointer)."""
    if a.device != b.device:
        raise ValueError("pcbench.%s: %s and %s must be the same kind on the same device "
                         "(torch %s, torch %s)" % (fn, names[0], names[1], a.device, b.device))
    if a.dim() != b.dim() or _lead(a) != _lead(b):
        raise ValueError("pcbench.%s: %s and %s must have the same batch (%s and %s)"
                         % (fn, names[0], names[1], tuple(a.shape), tuple(b.shape)))


def register(direct):
    """Register the kernels (direct: the package's module, whose _*_direct
    functions run the library) and the fake implementations."""

    def kernel(name, fn):
        _lib.impl(name, fn, "CPU")
        if name not in compiled:
            _lib.impl(name, fn, "CUDA")

    kernel("fps", lambda xyz, m, start: direct._fps_direct(xyz, m, start, None))
    kernel("nn", lambda ref, query: direct._nn_direct(ref, query, None))
    kernel("knn", lambda ref, query, k: direct._knn_direct(ref, query, k, None))
    kernel("ball_query", lambda xyz, centres, radius, k, select: direct._ball_direct(
        xyz, centres, radius, k, select, None))
    kernel("chamfer_nearest", lambda a, b: direct._chamfer_nearest_flat(a, b, None))
    kernel("chamfer_value", direct._chamfer_value_direct)
    kernel("chamfer_backward", direct._chamfer_backward_direct)
    kernel("emd", lambda a, b, max_gap: direct._emd_direct(a, b, max_gap, None))

    fake = torch.library.register_fake

    @fake("pcbench::fps")
    def _(xyz, m, start):
        _check_cloud(xyz, "fps", "xyz")
        return xyz.new_empty(_lead(xyz) + (m,), dtype=torch.int64)

    @fake("pcbench::nn")
    def _(ref, query):
        _check_pair(ref, query, "nn", ("ref", "query"))
        shape = _lead(query) + (query.shape[-2],)
        return (query.new_empty(shape, dtype=torch.int64), query.new_empty(shape))

    @fake("pcbench::knn")
    def _(ref, query, k):
        _check_pair(ref, query, "knn", ("ref", "query"))
        shape = _lead(query) + (query.shape[-2], k)
        return (query.new_empty(shape, dtype=torch.int64), query.new_empty(shape))

    @fake("pcbench::ball_query")
    def _(xyz, centres, radius, k, select):
        _check_pair(xyz, centres, "ball_query", ("xyz", "centres"))
        shape = _lead(centres) + (centres.shape[-2],)
        return (centres.new_empty(shape + (k,), dtype=torch.int64),
                centres.new_empty(shape, dtype=torch.int32))

    def both_ways(a, b):
        count = a.shape[-2] + b.shape[-2]
        for size in _lead(a):
            count = count * size
        return (count,)

    @fake("pcbench::chamfer_nearest")
    def _(a, b):
        _check_pair(a, b, "chamfer_nearest", ("a", "b"))
        shape = both_ways(a, b)
        return a.new_empty(shape, dtype=torch.int64), a.new_empty(shape)

    @fake("pcbench::chamfer_value")
    def _(a, b):
        _check_pair(a, b, "chamfer", ("a", "b"))
        return a.new_empty(_lead(a)), a.new_empty(both_ways(a, b), dtype=torch.int32)

    @fake("pcbench::chamfer_backward")
    def _(a, b, idx, grad):
        return torch.empty_like(a), torch.empty_like(b)

    @fake("pcbench::emd")
    def _(a, b, max_gap):
        _check_pair(a, b, "emd", ("a", "b"))
        lead = _lead(a)
        return (a.new_empty(lead + (a.shape[-2],), dtype=torch.int64),
                a.new_empty(lead, dtype=torch.float64), a.new_empty(lead, dtype=torch.float64))

    def chamfer_setup(ctx, inputs, output):
        a, b = inputs
        ctx.save_for_backward(a, b, output[1])

    def chamfer_grad(ctx, grad_value, grad_idx):
        a, b, idx = ctx.saved_tensors
        grad_a, grad_b = torch.ops.pcbench.chamfer_backward.default(a, b, idx, grad_value)
        return grad_a, grad_b

    if "chamfer_value" not in compiled:  # else the compiled library's, for every device
        torch.library.register_autograd("pcbench::chamfer_value", chamfer_grad,
                                        setup_context=chamfer_setup)
