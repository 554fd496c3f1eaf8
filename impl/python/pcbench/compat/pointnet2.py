"""pointnet2_ops' functions (PointNet++'s CUDA ops), computed by pcbench:
change the import

    from pointnet2_ops.pointnet2_utils import furthest_point_sample, gather_operation, \\
        ball_query, grouping_operation, three_nn, three_interpolate

to ``from pcbench.compat.pointnet2 import ...`` and the calls stay as they
are: the same argument order (ball_query's radius and nsample first), int32
indices, (B, C, N) features, sqrt distances from three_nn. The gathers carry
gradients to the features, as pointnet2_ops' do.

Where it differs from pointnet2_ops (commit b5ceb6d), and why:

- furthest_point_sample does not skip points within 0.032 of the origin
  (pointnet2_ops drops every point whose squared norm is <= 1e-3, a test
  meant for zero padding, so a cloud centred on its mean loses its middle);
  it starts at index 0 as pointnet2_ops does.
- ball_query pads a row with its first point (pointnet2_ops' layout), but a
  ball with no point inside is all -1, never index 0 (a point that is not in
  the ball); grouping_operation gives zeros for -1.
- three_nn on fewer than 3 known points pads with index -1 at distance
  +inf (pointnet2_ops returns what its uninitialised search left);
  three_interpolate gives -1's weight nothing.
- Any device and float dtype: 16-bit and float64 points are searched as
  float32; the outputs keep pointnet2_ops' dtypes.
"""
import torch

import pcbench

__all__ = ["furthest_point_sample", "gather_operation", "ball_query", "grouping_operation",
           "three_nn", "three_interpolate"]


def _xyz(x, fn, name):
    if not isinstance(x, torch.Tensor) or x.dim() != 3 or x.shape[2] != 3:
        raise ValueError("pcbench.compat.pointnet2.%s: %s must be a (B, N, 3) tensor, not %s"
                         % (fn, name, tuple(getattr(x, "shape", ())) or type(x).__name__))
    return x.detach().float().contiguous()


def furthest_point_sample(xyz, npoint):
    """npoint farthest point samples of each cloud from index 0: (B, npoint)
    int32."""
    return pcbench.fps(_xyz(xyz, "furthest_point_sample", "xyz"), int(npoint)).int()


def gather_operation(features, idx):
    """features (B, C, N) at idx (B, npoint): (B, C, npoint)."""
    at = idx.long()[:, None, :].expand(-1, features.shape[1], -1)
    return features.gather(2, at)


def ball_query(radius, nsample, xyz, new_xyz):
    """For each centre of new_xyz (B, npoint, 3), the first nsample points of
    xyz (B, N, 3) whose squared distance is below radius**2, in index order,
    the row padded with its first point; -1 for a ball with none: (B,
    npoint, nsample) int32."""
    idx = pcbench.ball_query(_xyz(xyz, "ball_query", "xyz"),
                             _xyz(new_xyz, "ball_query", "new_xyz"), float(radius),
                             int(nsample), pad="first")[0]
    return idx.int()


def grouping_operation(features, idx):
    """features (B, C, N) at idx (B, npoint, nsample): (B, C, npoint,
    nsample), zeros where idx is -1."""
    b, c, _ = features.shape
    _, npoint, nsample = idx.shape
    missing = idx < 0
    at = idx.long().clamp(min=0).reshape(b, 1, npoint * nsample).expand(-1, c, -1)
    out = features.gather(2, at).reshape(b, c, npoint, nsample)
    return out.masked_fill(missing[:, None], 0)


def three_nn(unknown, known):
    """The 3 nearest points of known (B, m, 3) to each point of unknown (B,
    n, 3): (distances (B, n, 3), their sqrt as pointnet2_ops returns them;
    indices (B, n, 3) int32), nearest first."""
    idx, d2 = pcbench.knn(_xyz(known, "three_nn", "known"), _xyz(unknown, "three_nn", "unknown"),
                          3)
    return d2.sqrt(), idx.int()


def three_interpolate(features, idx, weight):
    """Weighted sum of the features (B, c, m) of each point's 3 neighbours
    idx (B, n, 3) with weight (B, n, 3): (B, c, n); a -1 neighbour adds
    nothing."""
    b, c, _ = features.shape
    n = idx.shape[1]
    at = idx.long().clamp(min=0).reshape(b, 1, n * 3).expand(-1, c, -1)
    near = features.gather(2, at).reshape(b, c, n, 3)
    w = weight.masked_fill(idx < 0, 0).to(features.dtype)
    return (near * w[:, None]).sum(-1)
