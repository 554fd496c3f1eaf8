"""Ball query: pcbench.ball_query, its direct and ragged kernels, its
operator pcbench::ball_query, and check_ball, the judge of anyone's rows."""
from .. import _native as _n
from .._core import (_as_op, _Cloud, _clouds, _float32, _host, _impl_name, _int64, _integer, _judge,
                     _numpy, _op_pair_lengths, _ops, _pair_lengths, _ptr, _radius, _run,
                     _run_ragged, _selection)

NAMES = ("xyz", "centres", "xyz_lengths", "centres_lengths")


def ball_query(xyz, centres, radius, k, select="first", pad="none", impl=None,
               xyz_lengths=None, centres_lengths=None):
    """Ball query: for every centre, at most k points of xyz whose float32
    squared distance to it is below radius**2 (PointNet++'s strict test).
    select="first" keeps the k inside points of lowest index, in increasing
    index (the PointNet++ contract, what pointnet2_ops and PyTorch3D return);
    select="nearest" the k nearest, ascending, ties to the lower index.
    Returns (index int64, count int32): index (B, M, k) or (M, k), padded with
    -1 past count (an empty ball is all -1, never point 0); pad="first"
    repeats each row's first hit instead (pointnet2_ops' layout; an empty ball
    stays -1). On CUDA it runs without a host sync (k <= 128 there).
    xyz_lengths, centres_lengths: a ragged batch (PyTorch3D's convention)."""
    if pad not in ("none", "first"):
        raise ValueError("pcbench.ball_query: pad must be 'none' or 'first', not %r" % (pad,))
    k = _integer(k, "ball_query", "k", 1, 2**31 - 1)
    radius = _radius(radius, "ball_query")
    _selection(select, "ball_query")
    _impl_name(impl, "ball_query")
    xyz, centres = _float32(xyz), _float32(centres)
    if _as_op(xyz, impl):
        idx, count = _ops.torch.ops.pcbench.ball_query.default(
            xyz.detach(), centres.detach(), float(radius), k, select,
            *_op_pair_lengths(xyz, centres, xyz_lengths, centres_lengths, "ball_query", NAMES))
    elif xyz_lengths is not None or centres_lengths is not None:
        idx, count = _ball_ragged(xyz, centres, radius, k, select, impl, xyz_lengths,
                                  centres_lengths)
    else:
        idx, count = _ball_direct(xyz, centres, radius, k, select, impl)
    if pad == "first":
        lib = _ops.torch if _ops is not None and isinstance(idx, _ops.torch.Tensor) else _numpy()
        idx = lib.where(idx < 0, idx[..., :1], idx)
    return idx, count


def _ball_direct(xyz, centres, radius, k, select, impl):
    x = _Cloud(xyz, "xyz", "ball_query")
    c = _Cloud(centres, "centres", "ball_query")
    x.same_place(c, ("xyz", "centres"))
    if c.batch != x.batch:
        raise ValueError("pcbench.ball_query: xyz has %d clouds, centres %d" % (x.batch, c.batch))
    k = _integer(k, "ball_query", "k", 1, max(x.n, _n.PAD_K))
    sel = _selection(select, "ball_query")
    idx = x.empty((x.batch, c.n, k), "int32")
    count = x.empty((x.batch, c.n), "int32")
    task = x.task(_n.BALL, nq=c.n, k=k, radius=_radius(radius, "ball_query"), select=sel)
    task.b = c.ptr
    _run(x, task, impl, _n.Result(index=_ptr(idx), count=_ptr(count)))
    return _int64(idx), count


def _ball_ragged(xyz, centres, radius, k, select, impl, xyz_lengths, centres_lengths):
    x, c = _Cloud(xyz, "xyz", "ball_query"), _Cloud(centres, "centres", "ball_query")
    lengths = _pair_lengths(x, c, xyz_lengths, centres_lengths, NAMES)
    k = _integer(k, "ball_query", "k", 1, max(x.n, _n.PAD_K))
    sel = _selection(select, "ball_query")
    idx, count = x.empty((x.batch, c.n, k), "int32"), x.empty((x.batch, c.n), "int32")
    task = x.task(_n.BALL, nq=c.n, k=k, radius=_radius(radius, "ball_query"), select=sel)
    task.b = c.ptr

    def one(i, n, nq):
        if n and nq:
            idx[i, :nq], count[i, :nq] = (y[0] for y in _ball_direct(
                xyz[i:i + 1, :n], centres[i:i + 1, :nq], radius, k, select, impl))
    _run_ragged(x, task, lengths, impl, _n.Result(index=_ptr(idx), count=_ptr(count)),
                [(idx, -1), (count, 0)], one)
    return _int64(idx), count


def check_ball(xyz, centres, idx, radius, k=None, select="first", count=None, dist2=None,
               canonical=False, pad="none"):
    """Judge a ball-query answer made anywhere: idx of shape (M, k) or
    (B, M, k), each row's selected points then -1 padding (count, when
    given, how many a row holds). Points within float32 rounding of the
    radius may be in or out; canonical=True asks for naive's rows exactly.
    pad="first": the rows are padded by repeating their first point
    (ball_query(pad="first"), pointnet2_ops' layout)."""
    cs = _clouds("check_ball", xyz=xyz, centres=centres)
    x, c = cs["xyz"], cs["centres"]
    x.same_place(c, ("xyz", "centres"))
    if pad not in ("none", "first"):
        raise ValueError("pcbench.check_ball: pad must be 'none' or 'first', not %r" % (pad,))
    ia = _host(idx, "int32", "check_ball", "idx")
    if k is None:
        k = ia.shape[-1] if ia.ndim >= 2 else 0
    k = _integer(k, "check_ball", "k", 1, 2**31 - 1)
    ia = _host(idx, "int32", "check_ball", "idx", count=x.batch * c.n * k)
    if pad == "first":
        ia = _unpad_first(ia.reshape(-1, k))
    ca = None if count is None else _host(count, "int32", "check_ball", "count",
                                          count=x.batch * c.n)
    da = None if dist2 is None else _host(dist2, "float32", "check_ball", "dist2",
                                          count=x.batch * c.n * k)
    task = x.task(_n.BALL, nq=c.n, k=k, radius=_radius(radius, "check_ball"),
                  select=_selection(select, "check_ball"))
    task.b = c.ptr
    promise = _n.Promise(exact=1, max_gap=_n.ANY_GAP, canonical=1 if canonical else 0)
    return _judge(task, _n.Result(index=ia.ctypes.data, count=_ptr(ca),
                                  dist2=None if da is None else da.ctypes.data),
                  promise, full=canonical, clouds=cs)


def _unpad_first(rows):
    """Rows padded by repeating their first entry, padded with -1 instead:
    the padding is the run of first entries that ends the row (a row's
    points are distinct, so a repeat elsewhere stays, and is judged)."""
    np = _numpy()
    repeat = rows[:, 1:] == rows[:, :1]
    tail = np.flip(np.cumprod(np.flip(repeat, 1), 1), 1).astype(bool)
    out = rows.copy()
    out[:, 1:][tail] = -1
    return np.ascontiguousarray(out.reshape(-1))


def _kernel(xyz, centres, radius, k, select, xyz_lengths=None, centres_lengths=None):
    if xyz_lengths is None and centres_lengths is None:
        return _ball_direct(xyz, centres, radius, k, select, None)
    return _ball_ragged(xyz, centres, radius, k, select, None, xyz_lengths, centres_lengths)


def _fake(xyz, centres, radius, k, select, xyz_lengths=None, centres_lengths=None):
    _ops.check_pair(xyz, centres, "ball_query", NAMES)
    _ops.check_lengths(xyz, xyz_lengths, "ball_query", NAMES[2])
    _ops.check_lengths(centres, centres_lengths, "ball_query", NAMES[3])
    shape = _ops.lead(centres) + (centres.shape[-2],)
    return (centres.new_empty(shape + (k,), dtype=_ops.torch.int64),
            centres.new_empty(shape, dtype=_ops.torch.int32))


if _ops is not None:
    _ops.add("ball_query(Tensor xyz, Tensor centres, float radius, int k, str select, "
             "Tensor? xyz_lengths=None, Tensor? centres_lengths=None) -> (Tensor, Tensor)",
             _kernel, _fake)
