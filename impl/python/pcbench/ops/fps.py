"""Farthest point sampling: pcbench.fps, its direct and ragged kernels, its
operator pcbench::fps, and check_fps, the judge of anyone's samples."""
from .. import _native as _n
from .. import _ragged as _r
from .._core import (_as_op, _Cloud, _clouds, _count, _float32, _host, _impl_name, _int64, _integer,
                     _judge, _op_lengths, _ops, _ptr, _ragged_only_batched, _run, _run_ragged)


def fps(xyz, m, start=0, impl=None, lengths=None):
    """Farthest point sampling: m indices of each cloud of xyz, in selection
    order, from index start (ties to the lowest index: the canonical
    sequence). The samples are distinct (m <= N): once every remaining point
    duplicates a chosen one, the lowest unchosen index comes next.
    (B, N, 3) -> (B, m) int64; (N, 3) -> (m,).
    lengths (B,): a ragged batch, cloud i its first lengths[i] points
    (PyTorch3D's convention); a cloud of fewer than m points gives them all,
    then -1 (start must be below every non-zero length)."""
    m, start = _count(m, "fps", "m (samples)"), _count(start, "fps", "start")
    _impl_name(impl, "fps")
    xyz = _float32(xyz)
    if _as_op(xyz, impl):
        return _ops.call(_ops.torch.ops.pcbench.fps.default, xyz.detach(), m, start,
                         _op_lengths(xyz, lengths, "fps", "lengths", "xyz"))
    if lengths is not None:
        return _fps_ragged(xyz, m, start, impl, lengths)
    return _fps_direct(xyz, m, start, impl)


def _fps_direct(xyz, m, start, impl):
    c = _Cloud(xyz, "xyz", "fps")
    m = _integer(m, "fps", "m (samples)", 1, c.n)  # checked before anything is allocated
    start = _integer(start, "fps", "start", 0, c.n - 1)
    idx = c.empty((c.batch, m), "int32")
    _run(c, c.task(_n.FPS, m=m, start=start), impl, _n.Result(index=_ptr(idx)))
    return _int64(idx)


def _fps_ragged(xyz, m, start, impl, lengths):
    c = _Cloud(xyz, "xyz", "fps")
    _ragged_only_batched(c, "lengths")
    m = _integer(m, "fps", "m (samples)", 1, c.n)
    start = _integer(start, "fps", "start", 0, c.n - 1)
    la = _r.as_lengths(lengths, c, "lengths", c.n)
    idx = c.empty((c.batch, m), "int32")

    def one(i, n, _):
        if n:
            idx[i, :min(m, n)] = _fps_direct(xyz[i:i + 1, :n], min(m, n), start, impl)[0]
    _run_ragged(c, c.task(_n.FPS, m=m, start=start), (la, None), impl,
                _n.Result(index=_ptr(idx)), [(idx, -1)], one)
    return _int64(idx)


def check_fps(xyz, idx, start=0, canonical=False):
    """Judge an FPS answer: idx (B, m) or (m,) are farthest point samples of
    xyz from start, any choice among tied points accepted; canonical=True
    also demands the lowest-index sequence (compared with the serial
    reference, which it runs)."""
    cs = _clouds("check_fps", xyz=xyz)
    c = cs["xyz"]
    idx = _host(idx, "int32", "check_fps", "idx")
    m = idx.shape[-1] if idx.ndim else 0
    if idx.size != c.batch * m or m < 1:
        raise ValueError("pcbench.check_fps: idx %s does not fit %d clouds"
                         % (idx.shape, c.batch))
    start = _integer(start, "check_fps", "start", 0, c.n - 1)
    task = c.task(_n.FPS, m=m, start=start)
    promise = _n.Promise(exact=1, canonical=int(bool(canonical)))
    return _judge(task, _n.Result(index=idx.ctypes.data), promise, full=canonical, clouds=cs)


def _kernel(xyz, m, start, lengths=None):
    if lengths is None:
        return _fps_direct(xyz, m, start, None)
    return _fps_ragged(xyz, m, start, None, lengths)


def _fake(xyz, m, start, lengths=None):
    _ops.check_cloud(xyz, "fps", "xyz")
    _ops.check_lengths(xyz, lengths, "fps", "lengths")
    return xyz.new_empty(_ops.lead(xyz) + (m,), dtype=_ops.torch.int64)


if _ops is not None:
    _ops.add("fps(Tensor xyz, int m, int start, Tensor? lengths=None) -> Tensor", _kernel, _fake)
