#!/usr/bin/env python3
"""switching.py - the drop-in modules beside the libraries they replace, on a
GPU: each library's usual calls made through pcbench.compat and through the
original's own CUDA kernels (built from its sources by scripts/peer_build.py,
called as the original's Python wrapper calls them), the answers compared
(equal, or where they differ, each judged by pcbench's double-precision
judge), and both timed: CUDA events, warm, median of 15 loops of calls.

Then the dtype rules: a step under torch.autocast(bfloat16) that calls every
operator on coordinates a bf16 layer made, each answer equal to the float32
call on the rounded points; float16 and bfloat16 lidar sweeps of 120,000
points, exact for the rounded points (judged), with the ties the rounding
made counted; torch_cluster's own kNN on the float16 sweep, for what it does
there.

    PYTHONPATH=impl/python:scripts python3 scripts/studies/switching.py --out FILE.json
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import binding_timing  # noqa: E402

B, N, CENTRES, SAMPLES, K, RADIUS, MAXNB = 8, 16384, 2048, 1024, 16, 0.05, 32


def gpu_ms(call):
    return binding_timing.per_call_ms(call, reps=15, min_ms=20.0)[0]


def clouds(seed, *shape):
    import torch
    g = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, 3, generator=g).cuda()


def lidar(n, seed, dtype):
    """A spinning lidar's sweep: 64 beams, ranges 2-80 m on a ground plane
    and walls, n points, in metres."""
    import torch
    g = torch.Generator().manual_seed(seed)
    az = torch.rand(n, generator=g) * 2 * math.pi
    el = (torch.randint(0, 64, (n,), generator=g).float() / 63 - 0.7) * 0.45
    rng = 2 + 78 * torch.rand(n, generator=g) ** 2
    p = torch.stack([rng * torch.cos(az) * torch.cos(el), rng * torch.sin(az) * torch.cos(el),
                     1.8 + rng * torch.sin(el)], 1)
    return p.cuda().to(dtype)


def row(lib, call, ours, theirs, same, note=""):
    t_ours, t_theirs = gpu_ms(ours), gpu_ms(theirs)
    r = {"library": lib, "call": call, "pcbench_ms": t_ours, "original_ms": t_theirs,
         "speedup": t_theirs / t_ours, "same": same, "note": note}
    print("%-12s %-48s pcbench %8.3f ms  original %8.3f ms  %6.2fx  %s %s" % (
        lib, call, t_ours, t_theirs, r["speedup"], "same" if same is True else same, note),
        flush=True)
    return r


def edges_key(row_, col):
    import torch
    keep = col >= 0
    return torch.sort(row_[keep].long() * (1 << 32) + col[keep].long()).values


def pytorch3d_rows(ext, pcbench):
    import torch
    from pcbench.compat import pytorch3d as p3d
    p, c = clouds(1, B, N), clouds(2, B, CENTRES)
    lp = torch.full((B,), N, dtype=torch.int64, device="cuda")
    lc = torch.full((B,), CENTRES, dtype=torch.int64, device="cuda")
    rows = []

    def knn_original(a, b, la, lb, k):  # the kernel, then the sort knn_points makes
        idx, d = ext.knn_points_idx(a, b, la, lb, 2, k, -1)
        d, order = d.sort(dim=2)
        return idx.gather(2, order), d

    got = p3d.knn_points(p, p, K=K)
    idx, d = knn_original(p, p, lp, lp, K)
    same, note = bool(torch.equal(got.idx, idx)), ""
    if not same:  # equal distances in float32 may come in either order
        rows_apart = int((got.idx != idx).any(-1).sum())
        both = bool(pcbench.check_knn(p, p, got.idx)) and bool(pcbench.check_knn(p, p, idx))
        same = True if both and torch.allclose(got.dists, d, rtol=1e-5, atol=1e-7) else "differs"
        note = "%d of %d rows ordered otherwise among equal distances, both judged exact" % (
            rows_apart, B * N) if same is True else "pcbench's or the original's judged wrong"
    rows.append(row("PyTorch3D", "knn_points(p, p, K=16), 8 x 16,384",
                    lambda: p3d.knn_points(p, p, K=K), lambda: knn_original(p, p, lp, lp, K), same,
                    note))
    got = p3d.ball_query(c, p, K=MAXNB, radius=RADIUS)
    idx, _ = ext.ball_query(c, p, lc, lp, MAXNB, RADIUS, False)
    rows.append(row("PyTorch3D", "ball_query(c, p, K=32, radius=0.05), 2,048 a cloud",
                    lambda: p3d.ball_query(c, p, K=MAXNB, radius=RADIUS),
                    lambda: ext.ball_query(c, p, lc, lp, MAXNB, RADIUS, False),
                    bool(torch.equal(got.idx, idx))))
    kk = torch.full((B,), SAMPLES, dtype=torch.int64, device="cuda")
    start = torch.zeros(B, dtype=torch.int64, device="cuda")
    want = ext.sample_farthest_points(p, lp, kk, start, SAMPLES)
    rows.append(row("PyTorch3D", "sample_farthest_points(p, K=1024), 8 x 16,384",
                    lambda: p3d.sample_farthest_points(p, K=SAMPLES),
                    lambda: ext.sample_farthest_points(p, lp, kk, start, SAMPLES),
                    bool(torch.equal(p3d.sample_farthest_points(p, K=SAMPLES)[1], want))))
    x, y = clouds(3, B, 4096), clouds(4, B, 4096)
    lx = torch.full((B,), 4096, dtype=torch.int64, device="cuda")

    def chamfer_original():  # chamfer_distance: K=1 both ways, squared, means
        dx = ext.knn_points_idx(x, y, lx, lx, 2, 1, -1)[1][..., 0]
        dy = ext.knn_points_idx(y, x, lx, lx, 2, 1, -1)[1][..., 0]
        return (dx.mean(1) + dy.mean(1)).mean()

    ours = p3d.chamfer_distance(x, y)[0]
    same = bool(torch.allclose(ours, chamfer_original(), rtol=1e-5, atol=0))
    rows.append(row("PyTorch3D", "chamfer_distance(x, y), 8 x 4,096",
                    lambda: p3d.chamfer_distance(x, y), chamfer_original, same))
    return rows


def torch_cluster_rows(ext, pcbench):
    import torch
    from pcbench.compat import torch_cluster as tc
    x = clouds(5, B * N)
    y = clouds(6, B * CENTRES)
    bx = torch.arange(B, device="cuda").repeat_interleave(N)
    by = torch.arange(B, device="cuda").repeat_interleave(CENTRES)
    px = torch.arange(0, B * N + 1, N, device="cuda")
    py = torch.arange(0, B * CENTRES + 1, CENTRES, device="cuda")
    rows = []
    theirs = ext.knn(x, y, px, py, K, False)
    ours = tc.knn(x, y, K, bx, by)
    rows.append(row("torch_cluster", "knn(x, y, k=16, bx, by), 8 x 16,384, 2,048 queries",
                    lambda: tc.knn(x, y, K, bx, by), lambda: ext.knn(x, y, px, py, K, False),
                    bool(torch.equal(edges_key(*ours), edges_key(theirs[0], theirs[1])))))
    theirs = ext.radius(x, y, px, py, RADIUS, MAXNB)
    ours = tc.radius(x, y, RADIUS, bx, by, max_num_neighbors=MAXNB)
    rows.append(row("torch_cluster", "radius(x, y, 0.05, bx, by, max_num_neighbors=32)",
                    lambda: tc.radius(x, y, RADIUS, bx, by, max_num_neighbors=MAXNB),
                    lambda: ext.radius(x, y, px, py, RADIUS, MAXNB),
                    bool(torch.equal(edges_key(*ours), edges_key(theirs[0], theirs[1])))))
    def graph_original(edges):  # knn_graph, radius_graph: no loops, source to target
        row, col = edges[1], edges[0]
        keep = row != col
        return torch.stack([row[keep], col[keep]])

    theirs = graph_original(ext.knn(x, x, px, px, K + 1, False))
    rows.append(row("torch_cluster", "knn_graph(x, k=16, bx), 8 x 16,384",
                    lambda: tc.knn_graph(x, K, bx),
                    lambda: graph_original(ext.knn(x, x, px, px, K + 1, False)),
                    bool(torch.equal(edges_key(*tc.knn_graph(x, K, bx)), edges_key(*theirs)))))
    theirs = graph_original(ext.radius(x, x, px, px, RADIUS, MAXNB + 1))
    rows.append(row("torch_cluster", "radius_graph(x, 0.05, bx, max_num_neighbors=32)",
                    lambda: tc.radius_graph(x, RADIUS, bx, max_num_neighbors=MAXNB),
                    lambda: graph_original(ext.radius(x, x, px, px, RADIUS, MAXNB + 1)),
                    bool(torch.equal(edges_key(*tc.radius_graph(x, RADIUS, bx, max_num_neighbors=MAXNB)),
                                     edges_key(*theirs)))))
    ratio = SAMPLES / N
    r = torch.full((B,), ratio, device="cuda")  # torch_cluster's wrapper passes a tensor
    rows.append(row("torch_cluster", "fps(x, bx, ratio=1/16, random_start=False)",
                    lambda: tc.fps(x, bx, ratio=ratio, random_start=False),
                    lambda: ext.fps(x, px, r, False),
                    bool(torch.equal(tc.fps(x, bx, ratio=ratio, random_start=False),
                                     ext.fps(x, px, r, False)))))
    return rows


def pointnet2_rows(ext, pcbench):
    import torch
    from pcbench.compat import pointnet2 as pn2
    xyz = clouds(7, B, N) + 1  # away from the origin, whose points pointnet2_ops skips
    ctr = clouds(8, B, SAMPLES) + 1
    rows = [row("pointnet2_ops", "furthest_point_sample(xyz, 1024), 8 x 16,384",
                lambda: pn2.furthest_point_sample(xyz, SAMPLES),
                lambda: ext.furthest_point_sampling(xyz, SAMPLES),
                bool(torch.equal(pn2.furthest_point_sample(xyz, SAMPLES),
                                 ext.furthest_point_sampling(xyz, SAMPLES))))]
    got = pn2.ball_query(RADIUS * 2, MAXNB, xyz, ctr)
    rows.append(row("pointnet2_ops", "ball_query(0.1, 32, xyz, new_xyz), 1,024 a cloud",
                    lambda: pn2.ball_query(RADIUS * 2, MAXNB, xyz, ctr),
                    lambda: ext.ball_query(ctr, xyz, RADIUS * 2, MAXNB),
                    bool(torch.equal(got, ext.ball_query(ctr, xyz, RADIUS * 2, MAXNB)))
                    if bool((got >= 0).all()) else "an empty ball: the layouts differ"))
    rows.append(row("pointnet2_ops", "three_nn(xyz, known), 16,384 to 1,024",
                    lambda: pn2.three_nn(xyz, ctr), lambda: ext.three_nn(xyz, ctr),
                    bool(torch.equal(pn2.three_nn(xyz, ctr)[1], ext.three_nn(xyz, ctr)[1]))))
    return rows


def autocast_step(pcbench):
    """Coordinates made by a bf16 layer inside autocast, every operator
    called on them: each answer equal to the float32 call on the rounded
    points."""
    import torch
    torch.manual_seed(9)
    lin = torch.nn.Linear(3, 3).cuda()
    x = clouds(10, 4, 2048)
    y = clouds(11, 4, 2048)
    out = {}
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        h = lin(x)  # bf16
        assert h.dtype == torch.bfloat16
        got = {"fps": pcbench.fps(h, 256), "nn": pcbench.nn(h, y)[0],
               "knn": pcbench.knn(h, k=16)[0],
               "ball_query": pcbench.ball_query(h, h[:, :256].contiguous(), 0.1, 32)[0],
               "chamfer_nearest": pcbench.chamfer_nearest(h, y)[0],
               "chamfer": pcbench.chamfer(h, y),
               "emd": pcbench.emd(h, y, max_gap=1e-2)[0],
               "emd_loss": pcbench.emd_loss(h, y, max_gap=1e-2),
               "grid": pcbench.grid(h, 0.05), "serialize": pcbench.serialize(h, 0.05)}
    r = h.float()
    want = {"fps": pcbench.fps(r, 256), "nn": pcbench.nn(r, y)[0], "knn": pcbench.knn(r, k=16)[0],
            "ball_query": pcbench.ball_query(r, r[:, :256].contiguous(), 0.1, 32)[0],
            "chamfer_nearest": pcbench.chamfer_nearest(r, y)[0],
            "chamfer": pcbench.chamfer(r, y), "emd_loss": pcbench.emd_loss(r, y, max_gap=1e-2),
            "grid": pcbench.grid(r, 0.05), "serialize": pcbench.serialize(r, 0.05)}
    for name, g in got.items():
        if name == "emd":  # a matching within 1% of the optimum: a bijection, judged
            out[name] = bool(torch.equal(g.sort(-1).values,
                                         torch.arange(2048, device="cuda").expand(4, -1)))
        elif name in ("chamfer", "emd_loss"):
            out[name] = bool(g.dtype == torch.float32 and torch.allclose(g, want[name], rtol=1e-5))
        elif name in ("grid", "serialize"):
            out[name] = all(bool(torch.equal(a, b)) for a, b in zip(g, want[name]))
        else:
            out[name] = bool(torch.equal(g, want[name]))
    print("autocast(bfloat16) step, every operator equal to float32 on the rounded points:",
          out, flush=True)
    return out


def lidar_sweeps(pcbench, tc_ext):
    import torch
    out = []
    for dtype in (torch.float16, torch.bfloat16):
        s = lidar(120000, 12, dtype)
        r = s.float()
        unique = torch.unique(r, dim=0).shape[0]
        idx, d2 = pcbench.knn(s[None], k=K)
        ridx, rd2 = pcbench.knn(r[None], k=K)
        judged = pcbench.check_knn(s[None], s[None], idx, d2)
        ball = pcbench.ball_query(s[None], s[None, :4096], 0.5, 32)[0]
        rball = pcbench.ball_query(r[None], r[None, :4096], 0.5, 32)[0]
        t16 = gpu_ms(lambda: pcbench.knn(s[None], k=K))
        t32 = gpu_ms(lambda: pcbench.knn(r[None], k=K))
        rec = {"dtype": str(dtype).replace("torch.", ""), "points": 120000,
               "distinct_after_rounding": unique, "knn_equal_float32_of_rounded":
               bool(torch.equal(idx, ridx) and torch.equal(d2, rd2)), "knn_judged": bool(judged),
               "ball_equal_float32_of_rounded": bool(torch.equal(ball, rball)),
               "knn_ms": t16, "knn_ms_float32": t32}
        if tc_ext is not None and dtype == torch.float16:
            ptr = torch.tensor([0, 120000], device="cuda")
            try:
                e = tc_ext.knn(s, s, ptr, ptr, K, False)
                counts = torch.bincount(e[0], minlength=120000)
                rec["torch_cluster_knn_float16_short_rows"] = int((counts < K).sum())
            except Exception as ex:  # noqa: BLE001  what the original does is the record
                rec["torch_cluster_knn_float16"] = "raised: %s" % str(ex).splitlines()[0][:200]
        print("lidar sweep:", rec, flush=True)
        out.append(rec)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    import torch

    import pcbench
    import peer_build
    torch.backends.cuda.matmul.allow_tf32 = False
    result = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
              "rows": [], "missing": {}}
    exts = {}
    for name, fn in (("pytorch3d", pytorch3d_rows), ("torch_cluster", torch_cluster_rows),
                     ("pointnet2_ops", pointnet2_rows)):
        ext, why = peer_build.load(name)
        exts[name] = ext
        if ext is None:
            result["missing"][name] = why
            print("%s: %s" % (name, why), flush=True)
            continue
        result["rows"] += fn(ext, pcbench)
    result["autocast"] = autocast_step(pcbench)
    result["lidar"] = lidar_sweeps(pcbench, exts.get("torch_cluster"))
    x = clouds(13, B, N)
    result["float32_knn_8x16384_k16_ms"] = gpu_ms(lambda: pcbench.knn(x, k=K))
    print("float32 knn 8 x 16,384 k=16: %.3f ms" % result["float32_knn_8x16384_k16_ms"])
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    bad = [r for r in result["rows"] if r["same"] is not True]
    return 1 if bad or not all(result["autocast"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
