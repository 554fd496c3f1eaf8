"""pcbench's calls as PyTorch operators (torch.library), registered when
PyTorch is installed. Each operation's module (ops/<problem>.py) defines
its own operators here (add: schema, kernel, fake): pcbench::fps, nn, knn,
ball_query, chamfer_nearest, chamfer_value (with its autograd),
chamfer_backward, emd, grid and serialize; then finish() loads the compiled kernels and
gives the Python kernels to CUDA where none was compiled. The schemas take
the ragged batch's lengths as optional tensors: a ragged call stays one
operator inside a compiled graph.

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
_cuda = {}  # name -> the Python kernel, for CUDA where no compiled one is loaded
_autograd = {}  # name -> (backward, setup_context), where no compiled one is loaded


def add(schema, kernel, fake):
    """Define the operator pcbench::<schema>, with kernel for CPU (and for
    CUDA at finish(), where no compiled one was loaded) and its fake."""
    name = schema[:schema.index("(")]
    _lib.define(schema)
    _lib.impl(name, kernel, "CPU")
    _cuda[name] = kernel
    torch.library.register_fake("pcbench::" + name)(fake)
    # inside torch.autocast the clouds come in float32 (pcbench computes in it)
    for device in ("cpu", "cuda"):
        torch.library.register_autocast("pcbench::" + name, device, torch.float32, lib=_lib)


def autograd(name, backward, setup_context):
    """The operator's autograd, registered at finish() unless compiled."""
    _autograd[name] = (backward, setup_context)


_ABI = b"pcbench-torch-abi 4 (grid's mean: pcb_result.mean, a third output)\0"  # pcbench_torch.cpp's mark of its schemas


def _load_compiled():
    """The compiled operators' library for this PyTorch, loaded, or None."""
    choice = os.environ.get("PCBENCH_TORCH_OPS", "")
    if choice == "0":
        return None
    path = Path(choice) if choice else (Path(_native.lib._name).parent /
                                        ("torch-" + torch.__version__) / "libpcbench_torch.so")
    if not path.is_file():
        return None
    try:  # a library built for other schemas would abort the process as it loads
        if _ABI not in path.read_bytes():
            warnings.warn("pcbench: the compiled operators at %s were built for other operator "
                          "schemas than this package's; using the Python kernels (make "
                          "torch-ops rebuilds them)" % path)
            return None
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


_compiled = None
compiled = frozenset()  # the operators whose CUDA kernels are compiled (finish())
compiled_path = None


def finish():
    """Once every operator is defined: load the compiled kernels (they
    register for operators already defined), then the Python CUDA kernels
    and autograd of the others."""
    global _compiled, compiled, compiled_path
    _compiled = _load_compiled()
    if _compiled:
        compiled = frozenset(_compiled.pcbench_torch_ops().decode().split())
        compiled_path = _compiled._name
    for name, kernel in _cuda.items():
        if name not in compiled:
            _lib.impl(name, kernel, "CUDA")
    for name, (backward, setup) in _autograd.items():
        if name not in compiled:  # else the compiled library's, for every device
            torch.library.register_autograd("pcbench::" + name, backward, setup_context=setup)
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


def lead(x):
    """The batch part of a cloud's shape: (B,) or ()."""
    return tuple(x.shape[:-2])


def check_cloud(x, fn, name):
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


def check_pair(a, b, fn, names):
    check_cloud(a, fn, names[0])
    check_cloud(b, fn, names[1])
    same_batch(a, b, fn, names)


def same_batch(a, b, fn, names):
    """_Cloud.same_place's checks, and words, from two tensors' devices and
    shapes alone (no data pointer)."""
    if a.device != b.device:
        raise ValueError("pcbench.%s: %s and %s must be the same kind on the same device "
                         "(torch %s, torch %s)" % (fn, names[0], names[1], a.device, b.device))
    if a.dim() != b.dim() or lead(a) != lead(b):
        raise ValueError("pcbench.%s: %s and %s must have the same batch (%s and %s)"
                         % (fn, names[0], names[1], tuple(a.shape), tuple(b.shape)))


def check_lengths(x, lengths, fn, name):
    """A ragged call's lengths, checked on their type and shape alone (the
    kernel checks or clamps their values): integers, one a cloud of a
    batched x."""
    if lengths is None:
        return
    if x.dim() != 3:
        raise ValueError("pcbench.%s: lengths need a batch of clouds (B, N, 3)" % fn)
    t = lengths.dtype
    if t.is_floating_point or t.is_complex or t == torch.bool:
        raise TypeError("pcbench.%s: %s must be integers, not %s" % (fn, name, t))
    if tuple(lengths.shape) != (x.shape[0],):
        raise ValueError("pcbench.%s: %s must hold %d lengths, not shape %s"
                         % (fn, name, x.shape[0], tuple(lengths.shape)))
