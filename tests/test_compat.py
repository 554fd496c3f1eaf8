"""pytest: pcbench.compat.pytorch3d against PyTorch3D's documented behaviour,
written here as brute force in float64 (PyTorch3D itself is built only on
GPU hosts, by the peers' setup): kNN rows, knn_gather, ball query, farthest
point sampling with lengths, per-cloud K and random starts, the chamfer
distance's reductions, weights, normals and gradients; the signatures
against a recorded copy of PyTorch3D's; 16-bit and float64 inputs. Skipped
without torch. Run by tests/python.sh (make test)."""
import inspect

import pytest

import pcbench

torch = pytest.importorskip("torch")
p3d = pytest.importorskip("pcbench.compat.pytorch3d")

# PyTorch3D's parameters (v0.7.8, commit 9381c40), recorded from its sources
SIGNATURES = {
    "knn_points": ["p1", "p2", "lengths1", "lengths2", "norm", "K", "version", "return_nn",
                   "return_sorted"],
    "knn_gather": ["x", "idx", "lengths"],
    "ball_query": ["p1", "p2", "lengths1", "lengths2", "K", "radius", "return_nn"],
    "sample_farthest_points": ["points", "lengths", "K", "random_start_point"],
    "chamfer_distance": ["x", "y", "x_lengths", "y_lengths", "x_normals", "y_normals", "weights",
                         "batch_reduction", "point_reduction", "norm", "single_directional",
                         "abs_cosine"],
}


def clouds(seed, *shape):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, 3, generator=g)


def brute_knn(p1, p2, l1, l2, k):
    """Rows of (index, squared distance) in float64, ties to the lower index;
    -1 / inf past a cloud's points and for padding queries."""
    n, q = p1.shape[:2]
    idx = torch.full((n, q, k), -1, dtype=torch.int64)
    d2 = torch.full((n, q, k), float("inf"), dtype=torch.float64)
    for i in range(n):
        a, b = p1[i, :l1[i]].double(), p2[i, :l2[i]].double()
        d = ((a[:, None] - b[None]) ** 2).sum(-1)
        order = torch.sort(d, dim=1, stable=True).indices[:, :k]
        idx[i, :l1[i], :order.shape[1]] = order
        d2[i, :l1[i], :order.shape[1]] = d.gather(1, order)
    return idx, d2


def test_signatures_are_pytorch3ds():
    for name, params in SIGNATURES.items():
        got = [p.name for p in inspect.signature(getattr(p3d, name)).parameters.values()
               if p.kind != p.KEYWORD_ONLY]
        assert got == params, name


def test_knn_points_rows_padding_and_gather():
    p1, p2 = clouds(1, 3, 40), clouds(2, 3, 30)
    l1, l2 = torch.tensor([40, 7, 0]), torch.tensor([30, 5, 12])
    for k in (1, 4, 8):
        got = p3d.knn_points(p1, p2, l1, l2, K=k, return_nn=True)
        want_i, want_d = brute_knn(p1, p2, l1, l2, k)
        assert torch.equal(got.idx, want_i)
        torch.testing.assert_close(got.dists.double(), want_d, rtol=1e-6, atol=1e-7)
        assert got.knn.shape == (3, 40, k, 3)
        assert torch.equal(got.knn, p3d.knn_gather(p2, got.idx, l2))
        assert bool((got.knn[got.idx < 0] == 0).all())
        # PyTorch3D's layout: index 0 at distance 0 where there is no point
        z = p3d.knn_points(p1, p2, l1, l2, K=k, pad="pytorch3d")
        assert bool((z.idx[want_i < 0] == 0).all()) and bool((z.dists[want_i < 0] == 0).all())
        assert torch.equal(z.idx[want_i >= 0], want_i[want_i >= 0])
    full = p3d.knn_points(p1, p2, K=3)
    assert full.knn is None and torch.equal(full.idx, brute_knn(p1, p2, [40] * 3, [30] * 3, 3)[0])


def test_knn_points_gradients_and_dtypes():
    p1, p2 = clouds(3, 2, 20).double().requires_grad_(), clouds(4, 2, 25).double().requires_grad_()
    out = p3d.knn_points(p1, p2, K=3)
    assert out.dists.dtype == torch.float64
    out.dists.sum().backward()
    assert p1.grad is not None and p2.grad is not None and p1.grad.abs().sum() > 0
    torch.autograd.gradcheck(lambda a, b: p3d.knn_points(a, b, K=2).dists,
                             (p1.detach().clone().requires_grad_(),
                              p2.detach().clone().requires_grad_()))
    for dtype in (torch.float16, torch.bfloat16):
        a, b = clouds(5, 2, 30).to(dtype), clouds(6, 2, 30).to(dtype)
        got = p3d.knn_points(a, b, K=4)
        assert got.dists.dtype == dtype
        want = brute_knn(a.float(), b.float(), [30, 30], [30, 30], 4)[0]
        assert torch.equal(got.idx, want)  # exact for the rounded points


def test_knn_points_refuses_what_it_cannot_do():
    p1, p2 = clouds(1, 2, 10), clouds(2, 2, 10)
    with pytest.raises(NotImplementedError, match="norm=1"):
        p3d.knn_points(p1, p2, norm=1)
    with pytest.raises(NotImplementedError, match="D = 2"):
        p3d.knn_points(p1[..., :2], p2[..., :2])
    with pytest.raises(ValueError, match="pad must be"):
        p3d.knn_points(p1, p2, pad="zeros")
    with pytest.raises(TypeError, match="Pointclouds"):
        p3d.knn_points([p1], p2)


def test_ball_query_first_inside_by_index():
    p1, p2 = clouds(7, 2, 25), clouds(8, 2, 200)
    l1, l2 = torch.tensor([25, 10]), torch.tensor([200, 60])
    r, k = 0.3, 6
    got = p3d.ball_query(p1, p2, l1, l2, K=k, radius=r)
    for i in range(2):
        for q in range(25):
            row = got.idx[i, q]
            if q >= l1[i]:
                assert bool((row == -1).all())
                continue
            d = ((p2[i, :l2[i]] - p1[i, q]) ** 2).sum(-1)
            inside = torch.nonzero(d < r * r).flatten()[:k]
            assert torch.equal(row[:inside.numel()], inside)
            assert bool((row[inside.numel():] == -1).all())
            torch.testing.assert_close(got.dists[i, q, :inside.numel()], d[inside])
            assert bool((got.dists[i, q, inside.numel():] == 0).all())
    assert torch.equal(got.knn, p3d.knn_gather(p2, got.idx, l2))
    assert p3d.ball_query(p1, p2, K=k, radius=r, return_nn=False).knn is None


def brute_fps(x, m, start=0):
    chosen, d = [start], ((x - x[start]) ** 2).sum(-1).double()
    for _ in range(m - 1):
        j = int(torch.argmax(d))  # the first of equal maxima
        chosen.append(j)
        d = torch.minimum(d, ((x - x[j]) ** 2).sum(-1).double())
    return torch.tensor(chosen)


def test_sample_farthest_points():
    x = clouds(9, 3, 50)
    lengths = torch.tensor([50, 20, 0])
    pts, idx = p3d.sample_farthest_points(x, lengths, K=30)
    assert idx.shape == (3, 30) and pts.shape == (3, 30, 3)
    assert torch.equal(idx[0], brute_fps(x[0], 30))
    assert torch.equal(idx[1, :20], brute_fps(x[1, :20], 20)) and bool((idx[1, 20:] == -1).all())
    assert bool((idx[2] == -1).all()) and bool((pts[2] == 0).all())
    assert torch.equal(pts[0], x[0, idx[0]])
    # K a cloud, and K past the clouds' size
    _, idx = p3d.sample_farthest_points(x, K=[5, 12, 60])
    assert idx.shape == (3, 60)
    assert torch.equal(idx[0, :5], brute_fps(x[0], 5)) and bool((idx[0, 5:] == -1).all())
    assert torch.equal(idx[2, :50], brute_fps(x[2], 50)) and bool((idx[2, 50:] == -1).all())
    # random starts: a sequence from some start within each cloud's points
    torch.manual_seed(0)
    _, idx = p3d.sample_farthest_points(x, lengths, K=8, random_start_point=True)
    for i, n in enumerate(lengths.tolist()):
        if n:
            assert torch.equal(idx[i], brute_fps(x[i, :n], 8, int(idx[i, 0])))


def brute_chamfer(x, y, xl, yl):
    """Per-point squared distances to the nearest point of the other cloud,
    both ways, zero past a cloud's points."""
    cx = torch.zeros(x.shape[:2], dtype=torch.float64)
    cy = torch.zeros(y.shape[:2], dtype=torch.float64)
    for i in range(x.shape[0]):
        a, b = x[i, :xl[i]].double(), y[i, :yl[i]].double()
        d = ((a[:, None] - b[None]) ** 2).sum(-1)
        cx[i, :xl[i]], cy[i, :yl[i]] = d.min(1).values, d.min(0).values
    return cx, cy


def test_chamfer_distance_reductions_and_weights():
    x, y = clouds(10, 3, 40), clouds(11, 3, 30)
    xl, yl = torch.tensor([40, 12, 25]), torch.tensor([30, 30, 9])
    cx, cy = brute_chamfer(x, y, xl, yl)
    close = lambda a, b: torch.testing.assert_close(a.double(), b, rtol=1e-5, atol=1e-7)  # noqa
    loss, normals = p3d.chamfer_distance(x, y, xl, yl)
    close(loss, (cx.sum(1) / xl + cy.sum(1) / yl).mean())
    assert normals is None
    close(p3d.chamfer_distance(x, y, xl, yl, batch_reduction="sum", point_reduction="sum")[0],
          cx.sum() + cy.sum())
    close(p3d.chamfer_distance(x, y, xl, yl, point_reduction="max", batch_reduction=None)[0],
          torch.maximum(cx.max(1).values, cy.max(1).values))
    got = p3d.chamfer_distance(x, y, xl, yl, point_reduction=None, batch_reduction=None)[0]
    close(got[0], cx)
    close(got[1], cy)
    close(p3d.chamfer_distance(x, y, xl, yl, single_directional=True)[0],
          (cx.sum(1) / xl).mean())
    w = torch.tensor([1.0, 0.0, 2.0])
    close(p3d.chamfer_distance(x, y, xl, yl, weights=w)[0],
          ((cx.sum(1) / xl + cy.sum(1) / yl) * w.double()).sum() / 3)
    with pytest.raises(ValueError, match="Batch reduction must be None"):
        p3d.chamfer_distance(x, y, point_reduction=None)
    with pytest.raises(ValueError, match="weights cannot be negative"):
        p3d.chamfer_distance(x, y, weights=torch.tensor([1.0, -1.0, 1.0]))
    with pytest.raises(NotImplementedError, match="norm=1"):
        p3d.chamfer_distance(x, y, norm=1)


def test_chamfer_distance_normals_and_gradient():
    x, y = clouds(12, 2, 30).requires_grad_(), clouds(13, 2, 35).requires_grad_()
    nx, ny = clouds(14, 2, 30) - 0.5, clouds(15, 2, 35) - 0.5
    loss, normals = p3d.chamfer_distance(x, y, x_normals=nx, y_normals=ny, abs_cosine=False)
    ix = torch.cdist(x.detach().double(), y.detach().double()).argmin(2)
    iy = torch.cdist(y.detach().double(), x.detach().double()).argmin(2)
    cos = torch.nn.functional.cosine_similarity
    want = ((1 - cos(nx, ny.gather(1, ix[..., None].expand(-1, -1, 3)), dim=2, eps=1e-6)).mean(1)
            + (1 - cos(ny, nx.gather(1, iy[..., None].expand(-1, -1, 3)), dim=2, eps=1e-6))
            .mean(1)).mean()
    torch.testing.assert_close(normals, want)
    loss.backward()
    assert x.grad.abs().sum() > 0 and y.grad.abs().sum() > 0
    a, b = clouds(16, 2, 12).double(), clouds(17, 2, 14).double()
    torch.autograd.gradcheck(lambda p, q: p3d.chamfer_distance(p, q)[0],
                             (a.requires_grad_(), b.requires_grad_()))


# ---- torch_cluster ------------------------------------------------------------------
tc = pytest.importorskip("pcbench.compat.torch_cluster")

TC_SIGNATURES = {  # torch_cluster 1.6.3's parameters, recorded from its sources
    "knn": ["x", "y", "k", "batch_x", "batch_y", "cosine", "num_workers", "batch_size"],
    "knn_graph": ["x", "k", "batch", "loop", "flow", "cosine", "num_workers", "batch_size"],
    "radius": ["x", "y", "r", "batch_x", "batch_y", "max_num_neighbors", "num_workers",
               "batch_size"],
    "radius_graph": ["x", "r", "batch", "loop", "max_num_neighbors", "flow", "num_workers",
                     "batch_size"],
    "fps": ["src", "batch", "ratio", "random_start", "batch_size", "ptr"],
    "nearest": ["x", "y", "batch_x", "batch_y"],
}


def packed(seed, sizes):
    """Packed points of clouds of these sizes and their sorted batch vector."""
    x = clouds(seed, sum(sizes))
    batch = torch.repeat_interleave(torch.arange(len(sizes)), torch.tensor(sizes))
    return x, batch


def brute_edges(x, y, bx, by, keep):
    """Edges (y index, x index) of each y's chosen x points (keep(d2 of the
    cloud's x points in index order) -> their local order), by y."""
    rows, cols = [], []
    for j in range(y.shape[0]):
        members = torch.nonzero(bx == by[j]).flatten()
        if not members.numel():
            continue
        d = ((x[members].double() - y[j].double()) ** 2).sum(-1)
        chosen = members[keep(d)]
        rows += [j] * chosen.numel()
        cols += chosen.tolist()
    return torch.tensor([rows, cols], dtype=torch.int64).reshape(2, -1)


def test_torch_cluster_signatures():
    for name, params in TC_SIGNATURES.items():
        assert list(inspect.signature(getattr(tc, name)).parameters) == params, name


def test_torch_cluster_knn_and_graph():
    x, bx = packed(20, [30, 0, 12])
    y, by = packed(21, [10, 5, 8])
    got = tc.knn(x, y, 4, bx, by)
    want = brute_edges(x, y, bx, by, lambda d: torch.sort(d, stable=True).indices[:4])
    assert torch.equal(got, want)
    # no cap on k: more than torch_cluster's 100
    assert tc.knn(x, y, 150, bx, by).shape[1] == 10 * 30 + 8 * 12
    g = tc.knn_graph(x, 3, bx)
    own = brute_edges(x, x, bx, bx, lambda d: torch.sort(d, stable=True).indices[:4])
    keep = own[0] != own[1]
    assert torch.equal(g, torch.stack([own[1][keep], own[0][keep]]))
    assert torch.equal(tc.knn_graph(x, 3, bx, flow="target_to_source"),
                       torch.stack([own[0][keep], own[1][keep]]))
    assert tc.knn_graph(x, 3, bx, loop=True).shape[1] == 3 * 42
    with pytest.raises(NotImplementedError, match="cosine"):
        tc.knn(x, y, 2, bx, by, cosine=True)


def test_torch_cluster_radius_and_graph():
    x, bx = packed(22, [200, 50])
    y, by = packed(23, [20, 20])
    r = 0.25
    got = tc.radius(x, y, r, bx, by, max_num_neighbors=7)
    want = brute_edges(x, y, bx, by, lambda d: torch.nonzero(d < r * r).flatten()[:7])
    assert torch.equal(got, want)
    g = tc.radius_graph(x, r, bx, max_num_neighbors=5)
    own = brute_edges(x, x, bx, bx, lambda d: torch.nonzero(d < r * r).flatten()[:6])
    keep = own[0] != own[1]
    assert torch.equal(g, torch.stack([own[1][keep], own[0][keep]]))


def test_torch_cluster_fps_and_nearest():
    x, bx = packed(24, [40, 9, 25])
    got = tc.fps(x, bx, ratio=0.5, random_start=False)
    want = torch.cat([brute_fps(x[:40], 20), 40 + brute_fps(x[40:49], 5),
                      49 + brute_fps(x[49:], 13)])
    assert torch.equal(got, want)
    assert torch.equal(tc.fps(x, ratio=0.5, random_start=False, ptr=[0, 40, 49, 74]), want)
    torch.manual_seed(3)
    rnd = tc.fps(x, bx, ratio=0.25)
    assert rnd.numel() == 10 + 3 + 7
    assert torch.equal(rnd[:10], brute_fps(x[:40], 10, int(rnd[0])))
    y, by = packed(25, [11, 3, 6])
    near = tc.nearest(x, y, bx, by)
    for i in range(x.shape[0]):
        members = torch.nonzero(by == bx[i]).flatten()
        d = ((y[members].double() - x[i].double()) ** 2).sum(-1)
        assert int(near[i]) == int(members[torch.argmin(d)])


# ---- pointnet2_ops -------------------------------------------------------------------
pn2 = pytest.importorskip("pcbench.compat.pointnet2")

PN2_SIGNATURES = {  # pointnet2_ops' parameters (pointnet2_utils, commit b5ceb6d)
    "furthest_point_sample": ["xyz", "npoint"],
    "gather_operation": ["features", "idx"],
    "ball_query": ["radius", "nsample", "xyz", "new_xyz"],
    "grouping_operation": ["features", "idx"],
    "three_nn": ["unknown", "known"],
    "three_interpolate": ["features", "idx", "weight"],
}


def test_pointnet2_signatures():
    for name, params in PN2_SIGNATURES.items():
        assert list(inspect.signature(getattr(pn2, name)).parameters) == params, name


def test_pointnet2_sampling_grouping_and_interpolation():
    xyz = clouds(30, 2, 64) - 0.5  # centred: pointnet2_ops would skip its middle points
    idx = pn2.furthest_point_sample(xyz, 16)
    assert idx.dtype == torch.int32 and idx.shape == (2, 16)
    for b in range(2):
        assert torch.equal(idx[b].long(), brute_fps(xyz[b], 16))
    feats = torch.rand(2, 5, 64, requires_grad=True)
    g = pn2.gather_operation(feats, idx)
    assert torch.equal(g, torch.stack([feats[b][:, idx[b].long()] for b in range(2)]))
    g.sum().backward()
    assert feats.grad.sum() == 2 * 5 * 16
    centres = pn2.gather_operation(xyz.transpose(1, 2).contiguous(), idx).transpose(1, 2)
    far = torch.cat([centres, torch.full((2, 1, 3), 9.0)], 1).contiguous()  # an empty ball
    groups = pn2.ball_query(0.3, 6, xyz, far)
    assert groups.dtype == torch.int32 and groups.shape == (2, 17, 6)
    for b in range(2):
        for q in range(16):
            d = ((xyz[b] - far[b, q]) ** 2).sum(-1)
            inside = torch.nonzero(d < 0.09).flatten()[:6]
            row = groups[b, q].long()
            assert torch.equal(row[:inside.numel()], inside)
            assert bool((row[inside.numel():] == inside[0]).all())
        assert bool((groups[b, 16] == -1).all())
    grouped = pn2.grouping_operation(feats.detach(), groups)
    assert grouped.shape == (2, 5, 17, 6) and bool((grouped[:, :, 16] == 0).all())
    assert torch.equal(grouped[1, :, 3, 0], feats.detach()[1, :, groups[1, 3, 0].long()])
    unknown, known = clouds(31, 2, 20), clouds(32, 2, 7)
    dist, near = pn2.three_nn(unknown, known)
    want_i, want_d = brute_knn(unknown, known, [20, 20], [7, 7], 3)
    assert near.dtype == torch.int32 and torch.equal(near.long(), want_i)
    torch.testing.assert_close(dist.double(), want_d.sqrt(), rtol=1e-6, atol=1e-7)
    w = torch.rand(2, 20, 3)
    f = torch.rand(2, 4, 7)
    out = pn2.three_interpolate(f, near, w)
    want = sum(w[:, None, :, s] * f.gather(2, near[:, None, :, s].long().expand(-1, 4, -1))
               for s in range(3))
    torch.testing.assert_close(out, want)
    few = pn2.three_nn(unknown, known[:, :2].contiguous())  # fewer than 3 known points
    assert bool((few[1][..., 2] == -1).all()) and bool(torch.isinf(few[0][..., 2]).all())


# ---- beside the originals (a GPU host where the peers' setup built them) ------------------
def original(name):
    """The original library's CUDA kernels as scripts/peer_build.py built them, or a skip."""
    import os
    import sys
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: the originals are CUDA kernels")
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "scripts"))
    import peer_build
    ext, why = peer_build.load(name)
    if ext is None:
        pytest.skip("%s: %s" % (name, why))
    return ext


def test_pytorch3d_compat_equals_pytorch3d():
    ext = original("pytorch3d")
    p1, p2 = clouds(60, 4, 500).cuda(), clouds(61, 4, 700).cuda()
    l1, l2 = torch.tensor([500, 100, 7, 0]).cuda(), torch.tensor([700, 3, 700, 40]).cuda()
    for k in (1, 5, 16):
        idx, dists = ext.knn_points_idx(p1, p2, l1, l2, 2, k, -1)
        # sorted as PyTorch3D's knn_points sorts them: slots past a cloud's points last, 0
        past = (torch.arange(k, device="cuda")[None] >= l2[:, None])[:, None].expand_as(dists)
        dists, order = dists.masked_fill(past, float("inf")).sort(dim=2)
        dists, idx = dists.masked_fill(past, 0), idx.gather(2, order)
        got = p3d.knn_points(p1, p2, l1, l2, K=k, pad="pytorch3d")
        real = torch.arange(500, device="cuda")[None, :, None] < l1[:, None, None]
        assert torch.equal(got.idx[real.expand_as(idx)], idx[real.expand_as(idx)])
        torch.testing.assert_close(got.dists, dists, rtol=1e-5, atol=1e-6)
    idx, _ = ext.ball_query(p1, p2, l1, l2, 12, 0.1, False)
    assert torch.equal(p3d.ball_query(p1, p2, l1, l2, K=12, radius=0.1).idx, idx)
    k = torch.full((4,), 50, dtype=torch.int64, device="cuda")
    start = torch.zeros(4, dtype=torch.int64, device="cuda")
    want = ext.sample_farthest_points(p2, l2, k, start, 50)
    assert torch.equal(p3d.sample_farthest_points(p2, l2, K=50)[1], want)


def test_pointnet2_compat_equals_pointnet2_ops():
    ext = original("pointnet2_ops")
    xyz = (clouds(62, 2, 800) + 1).cuda()  # away from the origin, which pointnet2_ops skips
    centres = (clouds(63, 2, 64) + 1).cuda()
    assert torch.equal(pn2.furthest_point_sample(xyz, 64), ext.furthest_point_sampling(xyz, 64))
    got = pn2.ball_query(0.3, 16, xyz, centres)
    assert bool((got >= 0).all())  # no empty ball here: the layouts agree
    assert torch.equal(got, ext.ball_query(centres, xyz, 0.3, 16))
    assert torch.equal(pn2.three_nn(centres, xyz)[1], ext.three_nn(centres, xyz)[1])


def test_torch_cluster_compat_equals_torch_cluster():
    ext = original("torch_cluster")

    def keys(row, col):  # an edge set, whatever the order within a query
        keep = col >= 0
        return torch.sort(row[keep] * 100000 + col[keep]).values

    x, bx = packed(64, [900, 40, 300])
    y, by = packed(65, [100, 30, 50])
    x, bx, y, by = x.cuda(), bx.cuda(), y.cuda(), by.cuda()
    px = torch.tensor([0, 900, 940, 1240], device="cuda")
    py = torch.tensor([0, 100, 130, 180], device="cuda")
    theirs = ext.knn(x, y, px, py, 8, False)
    assert torch.equal(keys(*tc.knn(x, y, 8, bx, by)), keys(theirs[0], theirs[1]))
    row, col = ext.radius(x, y, px, py, 0.15, 10)
    assert torch.equal(keys(*tc.radius(x, y, 0.15, bx, by, max_num_neighbors=10)), keys(row, col))
    ratio = torch.full((3,), 0.25, device="cuda")  # torch_cluster's wrapper passes a tensor
    assert torch.equal(tc.fps(x, bx, ratio=0.25, random_start=False), ext.fps(x, px, ratio, False))


def test_compat_bad_input_gets_clear_errors():
    """The drop-in modules' plain mistakes: k = 0, an empty cloud, NaN, a
    wrong batch, lengths past N, an unsorted batch vector."""
    p1, p2 = clouds(70, 2, 20), clouds(71, 2, 30)
    with pytest.raises(ValueError, match="k = 0 is outside"):
        p3d.knn_points(p1, p2, K=0)
    with pytest.raises(ValueError, match="empty"):
        p3d.knn_points(p1, p2[:, :0].contiguous())
    with pytest.raises(ValueError, match="same batch"):
        p3d.knn_points(p1, p2[:1].contiguous())
    with pytest.raises(ValueError, match="outside 0..30"):
        p3d.knn_points(p1, p2, lengths2=torch.tensor([30, 31]))
    bad = p2.clone()
    bad[0, 3, 1] = float("nan")
    with pytest.raises(ValueError, match="not finite|non-finite"):
        pcbench.finite_check = "sync"
        try:
            p3d.ball_query(p1, bad, K=4, radius=0.2)
        finally:
            pcbench.finite_check = "async"
    with pytest.raises(ValueError, match="radius must be a finite number > 0"):
        p3d.ball_query(p1, p2, K=4, radius=-1.0)
    x, bx = packed(72, [10, 10])
    with pytest.raises(ValueError, match="sorted"):
        tc.knn(x, x, 3, bx.flip(0), bx.flip(0))
    with pytest.raises(ValueError, match="ratio must be in"):
        tc.fps(x, bx, ratio=0.0)
    with pytest.raises(ValueError, match=r"\(B, N, 3\)"):
        pn2.furthest_point_sample(x, 4)
