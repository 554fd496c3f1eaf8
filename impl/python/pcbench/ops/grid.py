"""Grid sampling (voxel downsampling): pcbench.grid, its direct and ragged
kernels, its operator pcbench::grid, and check_grid, the judge of anyone's
voxels."""
import ctypes

from .. import _core
from .. import _native as _n
from .._core import (_as_op, _Cloud, _clouds, _host, _impl_name, _int64, _judge, _numpy,
                     _op_lengths, _ops, _ptr, _ragged_only_batched, _run, _run_indices, _run_ragged,
                     _integer, _torch, _triple)
from .. import _ragged as _r
from .._native import PcbenchError


_SELECTIONS = ("first", "nearest", "random", "mean")  # pcb_ball_select, PCB_GRID_RANDOM, _MEAN


def _grid_selection(select, fn="grid"):
    if select not in _SELECTIONS:
        raise ValueError("pcbench.%s: select must be 'first', 'nearest', 'random' or 'mean', "
                         "not %r" % (fn, select))
    return _SELECTIONS.index(select)


def grid(xyz, size, origin=None, select="first", impl=None, lengths=None, seed=0):
    """Grid sampling: the voxels of size (a number, or one an axis) that each
    cloud's points occupy. A point's voxel is floor((p - origin) / size)
    per axis in double precision (a point on a boundary goes to the voxel
    above it); origin: each cloud's minimum per axis unless given (three
    numbers). Returns (index, count, inverse): index (B, N) int64, a row a
    voxel in increasing (ix, iy, iz), the point it keeps (select="first":
    its lowest index; "nearest": the nearest to the voxel's centre, ties to
    the lowest index; "random": the point of least SplitMix64 draw of (seed,
    index), the same on every path; "mean": the lowest index, as "first"),
    then -1 past the cloud's voxels; count (B, N) int32,
    a voxel's points, 0 past them (a cloud's voxels: (count > 0).sum(-1));
    inverse (B, N) int64, each point's voxel row. (N, 3) gives (N,) each.
    select="mean" returns a fourth, mean (B, N, 3) float32: each voxel row's
    mean point (its points summed in double in increasing index, over the
    count, rounded to float32; the same bits on every path), 0 past them.
    Exact: no hashing, nothing dropped; a cloud may span 524,288 voxels an
    axis (PcbenchError beyond; on CUDA with finite_check "async" the cloud's
    rows are -1 and nonfinite_seen() says so, as for a non-finite
    coordinate). lengths (B,): a ragged batch, padding -1 and 0 past each
    cloud's own answer."""
    cell = _triple(size, "grid", "size", True)
    at = None if origin is None else _triple(origin, "grid", "origin", False)
    _grid_selection(select)
    seed = _integer(seed, "grid", "seed", 0, 2 ** 63 - 1)
    _impl_name(impl, "grid")
    if _as_op(xyz, impl):
        idx, count, mean = _ops.call(_ops.torch.ops.pcbench.grid.default, xyz.detach(), cell,
                                     at, select, _op_lengths(xyz, lengths, "grid", "lengths",
                                                             "xyz"), seed)
    elif lengths is not None:
        idx, count, mean = _grid_ragged(xyz, cell, at, select, impl, lengths, seed)
    else:
        idx, count, mean = _grid_direct(xyz, cell, at, select, impl, seed)
    return (idx[0], count, idx[1]) + ((mean,) if select == "mean" else ())


def _task(c, cell, origin, select, seed=0, fn="grid"):
    t = c.task(_n.GRID, select=_grid_selection(select, fn))
    t.seed = seed
    t.cell = (ctypes.c_double * 3)(*cell)
    if origin is not None:
        t.origin, t.origin_given = (ctypes.c_double * 3)(*origin), 1
    return t


_SPAN = 1 << 19  # PCB_GRID_AXIS_SPAN: the voxels a cloud may span an axis


def _span_check(c, cell, origin):
    """A CUDA run cannot say that a cloud spans more voxels than the keys
    hold without a wait: with finite_check "async" (the default) the
    library lowers the device's finite flag (nonfinite_seen() says so) and
    leaves that cloud's rows and inverse entries -1, as it does for a
    non-finite coordinate; with "sync" it is checked here first, with one
    wait, and raises the CPU's PcbenchError, word for word."""
    torch = _torch()
    lo, hi = c.x.reshape(c.batch, c.n, 3).aminmax(dim=1)
    lo, hi = lo.double(), hi.double()
    at = lo if origin is None else torch.tensor(origin, dtype=torch.float64, device=c.device)
    size = torch.tensor(cell, dtype=torch.float64, device=c.device)
    span = torch.floor((hi - at) / size) - torch.floor((lo - at) / size)
    bad = torch.isfinite(span) & (span >= _SPAN)
    if bool(bad.any()):
        cloud, axis = (int(v) for v in bad.nonzero()[0])
        raise PcbenchError("PCB_EUNSUPPORTED", "grid: cloud %d spans %.17g voxels along %s "
                           "(at most %d)" % (cloud, float(span[cloud, axis]) + 1, "xyz"[axis],
                                             _SPAN))


def _means(c, select):
    """mean's output ([B,] N, 3), or an empty ([B,] 0, 3) for the other rules."""
    lead = (c.batch,) if c.batched else ()
    return c.empty(lead + ((c.n if select == "mean" else 0), 3), "float32", as_is=True)


def _grid_direct(xyz, cell, origin, select, impl, seed=0):
    """(index (2, B, N): the voxels' rows, then the inverse map; count (B, N);
    mean ([B,] N, 3), or ([B,] 0, 3) but for select="mean")"""
    c = _Cloud(xyz, "xyz", "grid")
    if c.cuda and _core.finite_check == "sync":
        try:
            _span_check(c, cell, origin)
        except PcbenchError as e:
            e.args = ("pcbench.grid: %s" % e.args[0],) + e.args[1:]
            raise
    shape = (2,) + ((c.batch,) if c.batched else ()) + (c.n,)
    count, task = c.empty((c.batch, c.n), "int32"), _task(c, cell, origin, select, seed)
    mean = _means(c, select)
    means = _ptr(mean) if select == "mean" else None
    if not c.cuda:
        idx = c.empty(shape, "int32", as_is=True)
        _run(c, task, impl, _n.Result(index=_ptr(idx), count=_ptr(count), mean=means))
        return _int64(idx), count, mean
    return (_run_indices(c, task, impl, shape, _n.Result(count=_ptr(count), mean=means)),
            count, mean)


def _grid_ragged(xyz, cell, origin, select, impl, lengths, seed=0):
    c = _Cloud(xyz, "xyz", "grid")
    _ragged_only_batched(c, "lengths")
    la = _r.as_lengths(lengths, c, "lengths", c.n)
    idx, count = c.empty((2, c.batch, c.n), "int32", as_is=True), c.empty((c.batch, c.n), "int32")
    mean = _means(c, select)

    def one(i, n, _):
        if n:
            ci, cc, cm = _grid_direct(xyz[i:i + 1, :n], cell, origin, select, impl, seed)
            idx[:, i, :n], count[i, :n] = ci[:, 0], cc[0]
            if select == "mean":
                mean[i, :n] = cm[0]
    _run_ragged(c, _task(c, cell, origin, select, seed), (la, None), impl,
                _n.Result(index=_ptr(idx), count=_ptr(count),
                          mean=_ptr(mean) if select == "mean" else None),
                [(idx, -1), (count, 0), (mean, 0)], one)
    return _int64(idx), count, mean


def check_grid(xyz, index, count, inverse, size, origin=None, select="first", seed=0,
               mean=None):
    """Judge a grid-sampling answer made anywhere, in grid's layout: index
    and count of each voxel row (sorted by voxel, -1 and 0 past the last),
    inverse each point's row; (B, N) or (N,) each; select="mean" judges
    mean (B, N, 3) too, within the rounding of its double sum (any order)."""
    fn = "check_grid"
    c = _clouds(fn, xyz=xyz)["xyz"]
    cell = _triple(size, fn, "size", True)
    at = None if origin is None else _triple(origin, fn, "origin", False)
    points = c.batch * c.n
    idx = _host(index, "int32", fn, "index", points).reshape(-1)
    inv = _host(inverse, "int32", fn, "inverse", points).reshape(-1)
    counts = _host(count, "int32", fn, "count", points)
    both = _numpy().ascontiguousarray(_numpy().concatenate([idx, inv]), dtype="int32")
    seed = _integer(seed, fn, "seed", 0, 2 ** 63 - 1)
    task = _task(c, cell, at, select, seed, fn)
    means = None
    if select == "mean":
        if mean is None:
            raise ValueError("pcbench.check_grid: select='mean' needs mean, the voxels' mean "
                             "points")
        means = _host(mean, "float32", fn, "mean", points * 3)
    elif mean is not None:
        raise ValueError("pcbench.check_grid: mean is judged with select='mean' only, not %r"
                         % select)
    return _judge(task, _n.Result(index=both.ctypes.data, count=counts.ctypes.data,
                                  mean=None if means is None else means.ctypes.data),
                  _n.Promise(exact=1))


def _kernel(xyz, size, origin, select, lengths=None, seed=0):
    if lengths is None:
        return _grid_direct(xyz, size, origin, select, None, seed)
    return _grid_ragged(xyz, size, origin, select, None, lengths, seed)


def _fake(xyz, size, origin, select, lengths=None, seed=0):
    _ops.check_cloud(xyz, "grid", "xyz")
    _ops.check_lengths(xyz, lengths, "grid", "lengths")
    _grid_selection(select)
    lead = _ops.lead(xyz)
    return (xyz.new_empty((2,) + lead + (xyz.shape[-2],), dtype=_ops.torch.int64),
            xyz.new_empty(lead + (xyz.shape[-2],), dtype=_ops.torch.int32),
            xyz.new_empty(lead + (xyz.shape[-2] if select == "mean" else 0, 3)))


if _ops is not None:
    _ops.add("grid(Tensor xyz, float[] size, float[]? origin, str select, Tensor? lengths=None, "
             "int seed=0) -> (Tensor, Tensor, Tensor)", _kernel, _fake)
