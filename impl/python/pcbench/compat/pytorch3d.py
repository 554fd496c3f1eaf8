"""PyTorch3D's point ops, computed by pcbench: change the import

    from pytorch3d.ops import knn_points, knn_gather, ball_query, sample_farthest_points
    from pytorch3d.loss import chamfer_distance

to ``from pcbench.compat.pytorch3d import ...`` and the calls stay as they
are: the same arguments (lengths1/lengths2, K, return_nn, return_sorted,
random_start_point, the chamfer reductions and normals), the same named
tuples, shapes and dtypes. Indices are exact (pcbench's kernels, ties to the
lower index); distances are computed from the inputs by PyTorch, so they
carry gradients as PyTorch3D's do.

Where it differs from PyTorch3D (v0.7.8, commit 9381c40), and why:

- kNN rows past a cloud's points (K > lengths2) and rows of padding queries
  (past lengths1) hold index -1 at distance +inf; PyTorch3D leaves index 0
  at distance 0 there, a real point's index at a distance it is not at.
  knn_gather reads -1 as "no point" (zeros, as it does past lengths).
  ``pad="pytorch3d"`` gives PyTorch3D's zeros, a layout for code that
  indexes with them unmasked.
- Only 3-D points (D = 3) and the Euclidean norm (norm=2): pcbench's
  kernels are 3-D and Euclidean; D != 3 and norm=1 raise
  NotImplementedError rather than answer something else.
- ``version`` (knn_points' kernel choice) is accepted and ignored.
- Rows are always sorted (return_sorted=False allows any order; sorted is
  one of them).
- Pointclouds objects are not taken: pass their padded tensors and lengths.
- float16, bfloat16 and float64 points are accepted: the neighbours are
  found on the points rounded to float32 (exact for them), the distances
  computed in the input's dtype, as PyTorch3D returns them.
"""
import collections

import torch

import pcbench

__all__ = ["knn_points", "knn_gather", "ball_query", "sample_farthest_points",
           "chamfer_distance"]

_KNN = collections.namedtuple("KNN", "dists idx knn")
_BallQuery = collections.namedtuple("BallQuery", "dists idx knn")


def _points(x, fn, name):
    """A (N, P, D) tensor of 3-D points; float32 for pcbench's kernels."""
    if not isinstance(x, torch.Tensor):
        raise TypeError("pcbench.compat.pytorch3d.%s: %s must be a (N, P, 3) tensor, not %s "
                        "(Pointclouds: pass its padded points and lengths)"
                        % (fn, name, type(x).__name__))
    if x.dim() != 3:
        raise ValueError("pcbench.compat.pytorch3d.%s: %s must be (N, P, D), not %s"
                         % (fn, name, tuple(x.shape)))
    if x.shape[2] != 3:
        raise NotImplementedError("pcbench.compat.pytorch3d.%s: %s has D = %d: pcbench's "
                                  "kernels take 3-D points" % (fn, name, x.shape[2]))
    return x.detach().float().contiguous()


def _lengths(lengths, x):
    """PyTorch3D's lengths: all P where None, as int64 on x's device."""
    if lengths is None:
        return torch.full((x.shape[0],), x.shape[1], dtype=torch.int64, device=x.device)
    return lengths.to(device=x.device, dtype=torch.int64)


def _norm2(norm, fn):
    if norm not in (1, 2):
        raise ValueError("pcbench.compat.pytorch3d.%s: norm must be 1 or 2, not %r" % (fn, norm))
    if norm == 1:
        raise NotImplementedError("pcbench.compat.pytorch3d.%s: norm=1 (L1 distances): "
                                  "pcbench's neighbours are Euclidean" % fn)


def _pad(pad, fn):
    if pad not in ("pcbench", "pytorch3d"):
        raise ValueError("pcbench.compat.pytorch3d.%s: pad must be 'pcbench' or 'pytorch3d', "
                         "not %r" % (fn, pad))
    return pad == "pytorch3d"


def knn_gather(x, idx, lengths=None):
    """x (N, M, U) gathered at idx (N, L, K): (N, L, K, U); zeros where idx
    is -1 (no point) or at or past lengths (N,)."""
    if x.dim() != 3 or idx.dim() != 3 or x.shape[0] != idx.shape[0]:
        raise ValueError("pcbench.compat.pytorch3d.knn_gather: x (N, M, U) and idx (N, L, K) "
                         "of the same N, not %s and %s" % (tuple(x.shape), tuple(idx.shape)))
    n, _, u = x.shape
    _, l, k = idx.shape
    missing = idx < 0
    if lengths is not None:
        missing = missing | (idx >= lengths.to(idx.device).view(n, 1, 1))
    at = idx.clamp(min=0).masked_fill(missing, 0).reshape(n, l * k, 1).expand(n, l * k, u)
    out = x.gather(1, at).reshape(n, l, k, u)
    return out.masked_fill(missing[..., None], 0)


def knn_points(p1, p2, lengths1=None, lengths2=None, norm=2, K=1, version=-1,
               return_nn=False, return_sorted=True, *, pad="pcbench"):
    """The K nearest points of p2 to each point of p1: KNN(dists (N, P1, K)
    squared distances, idx (N, P1, K) int64, knn (N, P1, K, 3) or None)."""
    del version, return_sorted  # one exact kernel; rows always sorted
    zeros = _pad(pad, "knn_points")
    _norm2(norm, "knn_points")
    a, b = _points(p1, "knn_points", "p1"), _points(p2, "knn_points", "p2")
    l1, l2 = _lengths(lengths1, p1), _lengths(lengths2, p2)
    ragged = lengths1 is not None or lengths2 is not None
    idx = pcbench.knn(b, a, int(K), ref_lengths=l2 if ragged else None,
                      query_lengths=l1 if ragged else None)[0]
    near = knn_gather(p2, idx, l2)
    dists = ((p1[:, :, None, :] - near) ** 2).sum(-1)
    missing = idx < 0
    if zeros:
        idx = idx.masked_fill(missing, 0)
        dists = dists.masked_fill(missing, 0)
    else:
        dists = dists.masked_fill(missing, float("inf"))
    return _KNN(dists, idx, near if return_nn else None)


def ball_query(p1, p2, lengths1=None, lengths2=None, K=500, radius=0.2, return_nn=True):
    """For each point of p1, the first K points of p2 (in index order) whose
    squared distance is below radius**2: BallQuery(dists (N, P1, K), idx
    (N, P1, K) int64 padded with -1, knn (N, P1, K, 3) or None); dists and
    knn are 0 past a row's points, as PyTorch3D's."""
    a, b = _points(p1, "ball_query", "p1"), _points(p2, "ball_query", "p2")
    l1, l2 = _lengths(lengths1, p1), _lengths(lengths2, p2)
    ragged = lengths1 is not None or lengths2 is not None
    idx = pcbench.ball_query(b, a, float(radius), int(K), xyz_lengths=l2 if ragged else None,
                             centres_lengths=l1 if ragged else None)[0]
    near = knn_gather(p2, idx, l2)
    dists = ((p1[:, :, None, :] - near) ** 2).sum(-1).masked_fill(idx < 0, 0)
    return _BallQuery(dists, idx, near if return_nn else None)


def sample_farthest_points(points, lengths=None, K=50, random_start_point=False):
    """Farthest point sampling of each cloud: (sampled points (N, K, 3), idx
    (N, K) int64), from index 0 (or a random index below the cloud's length),
    padded with -1 (and zero points) past a cloud's points or its own K (K
    an int or one a cloud)."""
    x = _points(points, "sample_farthest_points", "points")
    n, p = x.shape[:2]
    l = _lengths(lengths, points)
    ks = torch.as_tensor(K, dtype=torch.int64).reshape(-1).to(x.device)
    if ks.numel() == 1:
        ks = ks.expand(n)
    if ks.numel() != n:
        raise ValueError("pcbench.compat.pytorch3d.sample_farthest_points: K must be an int or "
                         "one a cloud (%d), not %d" % (n, ks.numel()))
    k_max = int(ks.max().item()) if n else 0
    m = max(1, min(k_max, p))
    if random_start_point:  # a start of its own a cloud: one call a cloud
        starts = (torch.rand(n, device=x.device) * l.clamp(min=1)).long()
        idx = torch.full((n, m), -1, dtype=torch.int64, device=x.device)
        for i in range(n):
            ni = int(l[i])
            if ni:
                got = pcbench.fps(x[i, :ni], min(m, ni), start=int(starts[i]))
                idx[i, :got.shape[0]] = got
    else:
        idx = pcbench.fps(x, m, lengths=l if lengths is not None else None)
    if k_max > m:  # K past the clouds' size: padding
        idx = torch.cat([idx, idx.new_full((n, k_max - m), -1)], 1)
    idx = idx[:, :k_max].masked_fill(torch.arange(k_max, device=x.device) >= ks[:, None], -1)
    sampled = knn_gather(points, idx[:, :, None], l)[:, :, 0, :]
    return sampled, idx


def _check_reductions(batch_reduction, point_reduction):
    if batch_reduction is not None and batch_reduction not in ("mean", "sum"):
        raise ValueError('batch_reduction must be one of ["mean", "sum"] or None')
    if point_reduction is not None and point_reduction not in ("mean", "sum", "max"):
        raise ValueError('point_reduction must be one of ["mean", "sum", "max"] or None')
    if point_reduction is None and batch_reduction is not None:
        raise ValueError("Batch reduction must be None if point_reduction is None")


def _one_way(x, y, idx, x_lengths, y_lengths, x_normals, y_normals, weights, point_reduction,
             abs_cosine):
    """One direction of chamfer_distance: x's nearest points in y, idx (N,
    P1), -1 where y's cloud is empty or x's point is padding."""
    n, p1 = x.shape[:2]
    near = knn_gather(y, idx[..., None], y_lengths)[..., 0, :]
    cham = ((x - near) ** 2).sum(-1)
    outside = torch.arange(p1, device=x.device)[None] >= x_lengths[:, None]
    cham = cham.masked_fill(outside | (idx < 0), 0.0)
    if weights is not None:
        cham = cham * weights.view(n, 1)
    norms = None
    if x_normals is not None and y_normals is not None:  # PyTorch3D's index 0 where none
        near = knn_gather(y_normals, idx.clamp(min=0)[..., None], y_lengths)[..., 0, :]
        cos = torch.nn.functional.cosine_similarity(x_normals, near, dim=2, eps=1e-6)
        norms = (1 - (cos.abs() if abs_cosine else cos)).masked_fill(outside, 0.0)
        if weights is not None:
            norms = norms * weights.view(n, 1)
    if point_reduction == "max":
        cham = cham.max(1).values
        norms = norms.max(1).values if norms is not None else None
    elif point_reduction is not None:
        cham = cham.sum(1)
        norms = norms.sum(1) if norms is not None else None
        if point_reduction == "mean":
            count = x_lengths.clamp(min=1)
            cham = cham / count
            norms = norms / count if norms is not None else None
    return cham, norms


def chamfer_distance(x, y, x_lengths=None, y_lengths=None, x_normals=None, y_normals=None,
                     weights=None, batch_reduction="mean", point_reduction="mean", norm=2,
                     single_directional=False, abs_cosine=True):
    """PyTorch3D's chamfer distance: squared distances to the nearest point
    the other way, reduced over points (mean, sum, max or None) and batch
    (mean, sum or None), with the normals' 1 - |cos| (or 1 - cos) term where
    both normals are given: (loss, loss of the normals or None)."""
    _check_reductions(batch_reduction, point_reduction)
    _norm2(norm, "chamfer_distance")
    a, b = _points(x, "chamfer_distance", "x"), _points(y, "chamfer_distance", "y")
    n = x.shape[0]
    xl, yl = _lengths(x_lengths, x), _lengths(y_lengths, y)
    if weights is not None:
        if weights.size(0) != n:
            raise ValueError("weights must be of shape (N,).")
        if not (weights >= 0).all():
            raise ValueError("weights cannot be negative.")
        if weights.sum() == 0.0:
            zero = (x.sum((1, 2)) * weights) * 0.0
            if batch_reduction is not None:
                zero = zero.sum()
            return zero, zero if x_normals is not None and y_normals is not None else None
    # the nearest points: both ways in one call (pcbench.chamfer_nearest)
    ragged = x_lengths is not None or y_lengths is not None
    la, lb = (xl, yl) if ragged else (None, None)
    if single_directional:
        ix = pcbench.knn(b, a, 1, ref_lengths=lb, query_lengths=la)[0][..., 0]
    else:
        ix, _, iy, _ = pcbench.chamfer_nearest(a, b, a_lengths=la, b_lengths=lb)
    cham_x, norm_x = _one_way(x, y, ix, xl, yl, x_normals, y_normals, weights, point_reduction,
                              abs_cosine)
    if single_directional:
        loss, loss_normals = cham_x, norm_x
    else:
        cham_y, norm_y = _one_way(y, x, iy, yl, xl, y_normals, x_normals, weights,
                                  point_reduction, abs_cosine)
        if point_reduction == "max":
            loss = torch.maximum(cham_x, cham_y)
            loss_normals = torch.maximum(norm_x, norm_y) if norm_x is not None else None
        elif point_reduction is not None:
            loss = cham_x + cham_y
            loss_normals = norm_x + norm_y if norm_x is not None else None
        else:
            loss = (cham_x, cham_y)
            loss_normals = (norm_x, norm_y) if norm_x is not None else None
    if batch_reduction is None:
        return loss, loss_normals
    loss = loss.sum()
    loss_normals = loss_normals.sum() if loss_normals is not None else None
    if batch_reduction == "mean":
        div = max(n, 1) if weights is None else (1 if weights.sum() == 0.0 else weights.sum())
        loss = loss / div
        loss_normals = loss_normals / div if loss_normals is not None else None
    return loss, loss_normals
