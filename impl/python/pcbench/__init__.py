"""pcbench from Python: the verified fastest FPS, nearest neighbour and
certified EMD of libpcbench on PyTorch tensors (CPU or CUDA) and numpy
arrays, the validators that judge anyone's answers, and two losses.

Clouds are float32, (B, N, 3) or (N, 3), contiguous. CUDA tensors run the
fastest verified CUDA implementation on the current stream, without a host
copy or a synchronisation; CPU tensors and numpy arrays run the CPU ones
(the losses, chamfer, emd_loss and EMDLoss, take torch tensors).
Answers come back in the input's kind and device, int64 indices, with the
input's rank ((B, m) or (m,)).

Non-finite coordinates: CPU inputs are checked and refused (ValueError naming
the point). A CUDA check would wait for the GPU, so by default
(finite_check = "async") the library's copy-in raises the device's flag and
the call runs on, with each non-finite coordinate read as 0;
nonfinite_seen() reads the flag (one wait) and lowers it. Nothing poisons
the CUDA context: a training loop that meets a NaN can skip the batch, save
a checkpoint and go on. "sync" checks before running, with a ValueError (it
waits); "off" does not check. The library never reads past its arrays.
"""
import sys
import types

from . import _core
from . import _native as _n  # noqa: F401 (pcbench._n: the binding, for tests and tools)
from . import _ragged as _r  # noqa: F401
from ._core import Verdict, _ops, clear_device_cache, nonfinite_seen
from ._native import PcbenchError
from ._ragged import lengths_from_batch, lengths_from_offsets, to_padded
from .index import NNIndex
from .losses import EMDLoss, chamfer, emd_loss
from .ops.ball import ball_query, check_ball
from .ops.chamfer import _chamfer_nearest_flat, _chamfer_value_direct, chamfer_nearest, \
    check_chamfer
from .ops.emd import _emd_direct, check_emd, emd
from .ops.fps import _fps_direct, check_fps, fps
from .ops.grid import check_grid, grid
from .ops.knn import _knn_direct, check_knn, knn
from .ops.nn import _nn_direct, check_nn, nn
from .ops.serialize import check_serialize, curve_decode, curve_encode, serialize

__all__ = ["fps", "nn", "knn", "ball_query", "check_ball", "NNIndex", "emd", "check_fps", "check_nn",
           "check_knn", "check_emd", "check_chamfer", "emd_loss", "EMDLoss", "chamfer",
           "chamfer_nearest", "Verdict", "PcbenchError", "clear_device_cache", "nonfinite_seen",
           "lengths_from_batch", "lengths_from_offsets", "to_padded", "grid", "check_grid",
           "serialize", "check_serialize", "curve_encode", "curve_decode"]
__version__ = "0.1.0"
# the direct kernels, for the tests that compare the operators with them
_direct = (_fps_direct, _nn_direct, _knn_direct, _chamfer_nearest_flat, _chamfer_value_direct,
           _emd_direct)

finite_check = _core.finite_check


class _Module(types.ModuleType):
    """The package's module: setting finite_check tells the operations
    (_core) and the compiled operators."""

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if name == "finite_check":
            _core.finite_check = value
            if _ops is not None:
                _ops.finite_mode(value)


if _ops is not None:
    _ops.finish()
    _ops.finite_mode(finite_check)
sys.modules[__name__].__class__ = _Module
