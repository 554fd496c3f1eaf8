"""Ragged batches: clouds of different sizes in one call, PyTorch3D's
layout (a padded (B, N, 3) tensor and the B lengths), and converters from
the other layouts: torch_cluster's batch vector, pointops' offsets,
packed points.

A call with lengths runs every cloud as the call on that cloud alone: the
library goes cloud by cloud for CPU inputs, and reads the lengths on the
GPU where its CUDA implementation does (FPS); other CUDA calls run here one
cloud at a time (they read the lengths on the host: one wait, and no CUDA
graph capture). Answers keep the padded shape; beyond a cloud's own answer
they hold padding: index -1, squared distance +inf, count 0. A pair with an
empty cloud has a NaN chamfer or EMD value (a mean of no terms), never 0.
"""
import sys

from . import _native as _n


def _torch():
    import torch
    return torch


def lengths_from_batch(batch, size=None):
    """torch_cluster's sorted batch vector (cloud id of every packed point)
    -> lengths (size clouds; default: the largest id + 1)."""
    torch = _torch()
    if batch.dim() != 1:
        raise ValueError("pcbench.lengths_from_batch: batch must be 1-D, not %s"
                         % (tuple(batch.shape),))
    if batch.numel() and bool((batch[1:] < batch[:-1]).any()):
        raise ValueError("pcbench.lengths_from_batch: batch must be sorted (torch_cluster's "
                         "layout)")
    if batch.numel() and int(batch[0]) < 0:
        raise ValueError("pcbench.lengths_from_batch: batch holds a negative cloud id")
    return torch.bincount(batch.long(), minlength=0 if size is None else int(size))[
        :None if size is None else int(size)]


def lengths_from_offsets(offsets):
    """pointops' cumulative int32 offsets (the end of every cloud in the
    packed points) -> lengths; a decreasing or negative offset is refused
    (pointops reads out of bounds there)."""
    torch = _torch()
    if offsets.dim() != 1:
        raise ValueError("pcbench.lengths_from_offsets: offsets must be 1-D")
    o = offsets.long()
    lengths = torch.diff(o, prepend=o.new_zeros(1))
    if o.numel() and bool((lengths < 0).any()):
        raise ValueError("pcbench.lengths_from_offsets: offsets must be non-decreasing and "
                         ">= 0 (pointops' cumulative ends)")
    return lengths


def to_padded(points, lengths, pad_value=0.0):
    """Packed points (sum of lengths, 3) -> a padded (B, max length, 3)
    tensor for pcbench's calls (pad_value in the padding, never read)."""
    torch = _torch()
    lengths = lengths.long().to(points.device)
    count = int(lengths.sum()) if lengths.numel() else 0
    if points.dim() != 2 or points.shape[-1] != 3 or points.shape[0] != count:
        raise ValueError("pcbench.to_padded: points must be (%d, 3) for these lengths, not %s"
                         % (count, tuple(points.shape)))
    width = max(int(lengths.max()) if lengths.numel() else 0, 1)
    out = points.new_full((lengths.numel(), width, 3), pad_value)
    cloud = torch.repeat_interleave(torch.arange(lengths.numel(), device=points.device), lengths)
    start = torch.cumsum(lengths, 0) - lengths
    slot = torch.arange(count, device=points.device) - start[cloud]
    out[cloud, slot] = points
    return out


def _host_values(lengths, fn, name):
    """Host lengths as a list of Python ints: integers only (a float or a
    bool would be truncated, or read as 0 and 1)."""
    import numpy
    if isinstance(lengths, (list, tuple)) and not any(isinstance(v, (list, tuple))
                                                      for v in lengths):
        bad = [v for v in lengths if isinstance(v, bool) or not hasattr(v, "__index__")]
        if bad:  # (numpy would make floats of ints past int64)
            raise TypeError("pcbench.%s: %s must be integers, not %s"
                            % (fn, name, type(bad[0]).__name__))
        return (len(lengths),), [v.__index__() for v in lengths]
    try:
        a = numpy.asarray(lengths)
    except (TypeError, ValueError) as e:
        raise TypeError("pcbench.%s: %s must be integers (%s)" % (fn, name, e))
    if a.dtype == object:  # Python ints too large for int64, or mixed items
        bad = [v for v in a.reshape(-1).tolist() if isinstance(v, bool) or not isinstance(v, int)]
        if bad:
            raise TypeError("pcbench.%s: %s must be integers, not %s"
                            % (fn, name, type(bad[0]).__name__))
    elif a.dtype.kind not in "iu":
        raise TypeError("pcbench.%s: %s must be integers, not %s" % (fn, name, a.dtype))
    return a.shape, a.reshape(-1).tolist()


def as_lengths(lengths, cloud, name, limit):
    """lengths as an int64 array beside cloud (its kind and device), each
    in 0..limit. Lengths on the host are checked before any work and moved
    where the cloud is; lengths already on a GPU are checked for their type
    and shape only (their values would cost a wait) and clamped to 0..limit
    there, so that no length makes a kernel read past the cloud."""
    fn = cloud.fn

    def count(shape):
        if tuple(shape) != (cloud.batch,):
            raise ValueError("pcbench.%s: %s must hold %d lengths, not shape %s"
                             % (fn, name, cloud.batch, tuple(shape)))
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(lengths, torch.Tensor):
        t = lengths.dtype
        if t.is_floating_point or t.is_complex or t == torch.bool:
            raise TypeError("pcbench.%s: %s must be integers, not %s" % (fn, name, t))
        if lengths.device.type != "cpu" and cloud.kind == "torch" and \
                lengths.device == cloud.device:
            count(lengths.shape)
            return lengths.to(torch.int64).clamp(0, limit).contiguous()
        lengths = lengths.cpu().numpy()  # on the host, or another device: read here
    shape, values = _host_values(lengths, fn, name)
    count(shape)
    bad = [i for i, v in enumerate(values) if not 0 <= v <= limit]
    if bad:
        raise ValueError("pcbench.%s: %s[%d] = %d is outside 0..%d"
                         % (fn, name, bad[0], values[bad[0]], limit))
    if cloud.kind == "torch":
        return _torch().tensor(values, dtype=_torch().int64).to(cloud.device)
    import numpy
    return numpy.array(values, dtype="int64")


def needs_host_loop(chosen):
    """Whether a ragged CUDA call runs here cloud by cloud: chosen, the
    implementation that would run it (_native.ragged_choice), does not read
    the lengths on the device, or none accepts the task."""
    return not chosen or not _n.lib.pcb_impl_ragged(chosen)
