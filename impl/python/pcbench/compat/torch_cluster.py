"""torch_cluster's point ops, computed by pcbench: change the import

    from torch_cluster import knn, knn_graph, radius, radius_graph, fps, nearest

to ``from pcbench.compat.torch_cluster import ...`` and the calls stay as
they are: packed points (P, 3) with torch_cluster's sorted batch vectors,
its edge layout (row 0 the query or target, row 1 the neighbour; the graphs'
``flow``, ``loop``), global indices.

Where it differs from torch_cluster 1.6.3 (deprecated upstream for
pyg-lib, the same kernels), and why:

- No cap on k (torch_cluster asserts k <= 100) and no truncation: its CUDA
  kNN starts each list at 1e10 and its FPS at 5e4, so points farther than
  those bounds (1e5 and 224 units) are never found or always taken; here
  every answer is exact at any scale.
- Neighbours come nearest first with ties to the lower index, and a
  radius query keeps the max_num_neighbors inside points of lowest index
  (its GPU kernel's choice; its docs say "randomly").
- ``cosine=True`` raises NotImplementedError (pcbench's metric is
  Euclidean); ``num_workers`` is accepted and ignored.
- 3-D points only; 16-bit and float64 points are searched as float32.
"""
import torch

import pcbench

__all__ = ["knn", "knn_graph", "radius", "radius_graph", "fps", "nearest"]


def _no_cosine(cosine, fn):
    if cosine:
        raise NotImplementedError("pcbench.compat.torch_cluster.%s: cosine=True: pcbench's "
                                  "distances are Euclidean" % fn)


def _packed(x, batch, clouds, fn, name):
    """Packed points and their sorted batch vector -> (padded (B, N, 3)
    float32, lengths (B,), each cloud's first packed index (B,))."""
    if not isinstance(x, torch.Tensor) or x.dim() != 2 or x.shape[1] != 3:
        raise ValueError("pcbench.compat.torch_cluster.%s: %s must be a (P, 3) tensor, not %s"
                         % (fn, name, tuple(getattr(x, "shape", ())) or type(x).__name__))
    if batch is None:
        batch = torch.zeros(x.shape[0], dtype=torch.int64, device=x.device)
    lengths = pcbench.lengths_from_batch(batch.to(x.device), clouds)
    padded = pcbench.to_padded(x.detach().float().contiguous(), lengths)
    return padded.contiguous(), lengths, torch.cumsum(lengths, 0) - lengths


def _clouds(batch_x, batch_y, batch_size):
    """How many clouds: batch_size, else one more than the largest id."""
    if batch_size is not None:
        return int(batch_size)
    top = [int(b.max()) + 1 for b in (batch_x, batch_y) if b is not None and b.numel()]
    return max(top) if top else 1


def _edges(rows, q_start, r_start):
    """Rows (B, Q, k) of local neighbour indices (-1: none) -> edges
    (2, E): the query's global index, the neighbour's; by query, nearest or
    lowest first."""
    b, q, s = torch.nonzero(rows >= 0, as_tuple=True)
    return torch.stack([q_start[b] + q, r_start[b] + rows[b, q, s]])


def knn(x, y, k, batch_x=None, batch_y=None, cosine=False, num_workers=1, batch_size=None):
    """For each point of y, its k nearest points of x in the same cloud:
    edges (2, E), row 0 indices into y, row 1 into x."""
    del num_workers
    _no_cosine(cosine, "knn")
    clouds = _clouds(batch_x, batch_y, batch_size)
    px, lx, sx = _packed(x, batch_x, clouds, "knn", "x")
    py, ly, sy = _packed(y, batch_y, clouds, "knn", "y")
    rows = pcbench.knn(px, py, int(k), ref_lengths=lx, query_lengths=ly)[0]
    return _edges(rows, sy, sx)


def radius(x, y, r, batch_x=None, batch_y=None, max_num_neighbors=32, num_workers=1,
           batch_size=None):
    """For each point of y, the points of x of its cloud within r (squared
    distance below r**2), at most max_num_neighbors of lowest index: edges
    (2, E), row 0 indices into y, row 1 into x."""
    del num_workers
    clouds = _clouds(batch_x, batch_y, batch_size)
    px, lx, sx = _packed(x, batch_x, clouds, "radius", "x")
    py, ly, sy = _packed(y, batch_y, clouds, "radius", "y")
    rows = pcbench.ball_query(px, py, float(r), int(max_num_neighbors), xyz_lengths=lx,
                              centres_lengths=ly)[0]
    return _edges(rows, sy, sx)


def _graph(edges, loop, flow, fn):
    if flow not in ("source_to_target", "target_to_source"):
        raise ValueError("pcbench.compat.torch_cluster.%s: flow must be 'source_to_target' or "
                         "'target_to_source', not %r" % (fn, flow))
    row, col = (edges[1], edges[0]) if flow == "source_to_target" else (edges[0], edges[1])
    if not loop:
        keep = row != col
        row, col = row[keep], col[keep]
    return torch.stack([row, col])


def knn_graph(x, k, batch=None, loop=False, flow="source_to_target", cosine=False,
              num_workers=1, batch_size=None):
    """The k-nearest-neighbour graph of x's points within their clouds:
    edges (2, E), source then target for flow="source_to_target"; without
    loop each point's own edge is dropped (k + 1 asked, as torch_cluster
    does)."""
    edges = knn(x, x, k if loop else k + 1, batch, batch, cosine, num_workers, batch_size)
    return _graph(edges, loop, flow, "knn_graph")


def radius_graph(x, r, batch=None, loop=False, max_num_neighbors=32, flow="source_to_target",
                 num_workers=1, batch_size=None):
    """The radius graph of x's points within their clouds (max_num_neighbors
    a point, one more asked without loop, as torch_cluster does)."""
    edges = radius(x, x, r, batch, batch, max_num_neighbors if loop else max_num_neighbors + 1,
                   num_workers, batch_size)
    return _graph(edges, loop, flow, "radius_graph")


def fps(src, batch=None, ratio=0.5, random_start=True, batch_size=None, ptr=None):
    """Farthest point sampling of each cloud: ceil(ratio n) samples a cloud
    of n points (ratio a number or one a cloud), from a random point
    (random_start) or the first; the global indices, cloud after cloud."""
    if ptr is not None:
        ptr = torch.as_tensor(ptr, device=src.device).long()
        lengths = ptr[1:] - ptr[:-1]
        batch = torch.repeat_interleave(torch.arange(lengths.numel(), device=src.device),
                                        lengths)
    clouds = _clouds(batch, None, batch_size)
    px, lx, sx = _packed(src, batch, clouds, "fps", "src")
    ratio = torch.as_tensor(ratio, dtype=torch.float32, device=src.device)
    if not bool(((ratio > 0) & (ratio <= 1)).all()):
        raise ValueError("pcbench.compat.torch_cluster.fps: ratio must be in (0, 1]")
    counts = (lx.float() * ratio).ceil().long()  # torch_cluster's float32 rounding
    picked = []
    if random_start:
        starts = (torch.rand(clouds, device=src.device) * lx.float()).long()
        for b in range(clouds):
            if counts[b]:
                picked.append(sx[b] + pcbench.fps(px[b, :lx[b]], int(counts[b]),
                                                  start=int(starts[b])))
    elif clouds:
        rows = pcbench.fps(px, max(1, int(counts.max())), lengths=lx)
        for b in range(clouds):
            picked.append(sx[b] + rows[b, :counts[b]])
    return torch.cat(picked) if picked else torch.empty(0, dtype=torch.int64, device=src.device)


def nearest(x, y, batch_x=None, batch_y=None):
    """For each point of x, the global index of its nearest point of y in
    the same cloud (ties to the lower index)."""
    clouds = _clouds(batch_x, batch_y, None)
    px, lx, sx = _packed(x, batch_x, clouds, "nearest", "x")
    py, ly, sy = _packed(y, batch_y, clouds, "nearest", "y")
    if bool(((lx > 0) & (ly == 0)).any()):
        raise ValueError("pcbench.compat.torch_cluster.nearest: a cloud of x has no point of y")
    idx = pcbench.nn(py, px, ref_lengths=ly, query_lengths=lx)[0]
    cloud = torch.repeat_interleave(torch.arange(clouds, device=x.device), lx)
    slot = torch.arange(x.shape[0], device=x.device) - sx[cloud]
    return sy[cloud] + idx[cloud, slot]

