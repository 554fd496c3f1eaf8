#!/usr/bin/env python3
"""model_timing.py - a whole network's training step with pcbench's point ops
against pointnet2_ops', and ragged batches against equal-size ones.

    model_timing.py [--out results/<gpu>/models] [--reps 20]

Models (examples/pointnet2.py; the same weights, batch and data for both op
sets): PointNet++ SSG classification, 32 x 1,024 points (ModelNet-shaped:
object surfaces), and MSG semantic segmentation, 16 x 16,384 points
(ScanNet-shaped: a room block of floor, walls and boxes). For each: the
training step (forward, cross-entropy, backward, SGD update) by CUDA events,
median of --reps after warm-up; the forward's time in sampling, grouping and
interpolation (events around each op call, a separate pass); and whether the
two op sets sample the same indices and the same groups on the step's input.

Ragged (ragged.json): 8 lidar-like sweeps of 60k-120k points, FPS of 4,096
each; 32 object clouds of 512-4,096 points, self-kNN (k = 16) and chamfer's
nearest points; each as one ragged call against one equal-size batch of the
same points (clouds of the mean length) and against one call a cloud.

Needs a CUDA GPU and pointnet2_ops built (scripts/peer_build.py build).
"""
import argparse
import math
import os
import statistics
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
import peer_build  # noqa: E402
import pointnet2  # noqa: E402
from binding_timing import gpu_env, write_json  # noqa: E402

import pcbench  # noqa: E402


def object_clouds(batch, n, gen):
    """Points on the surfaces of random boxes and spheres, in the unit ball."""
    out = torch.empty(batch, n, 3)
    for b in range(batch):
        if b % 2:
            p = torch.randn(n, 3, generator=gen)
            p = p / p.norm(dim=1, keepdim=True) * (0.5 + 0.4 * torch.rand(1, 3, generator=gen))
        else:
            p = torch.rand(n, 3, generator=gen) * 2 - 1
            face = torch.randint(0, 3, (n,), generator=gen)
            p[torch.arange(n), face] = torch.sign(p[torch.arange(n), face])
            p = p * (0.3 + 0.6 * torch.rand(1, 3, generator=gen))
        out[b] = p
    return out


def room_blocks(batch, n, gen):
    """A 1.5 m block of a room: floor, two walls, a few boxes; away from the
    origin, since pointnet2_ops' FPS never samples a point within 0.032 of
    it (its kernel skips |p|^2 <= 1e-3), which would make the two op sets
    differ by a quirk rather than by their sampling."""
    out = torch.empty(batch, n, 3)
    for b in range(batch):
        p = torch.rand(n, 3, generator=gen) * 1.5
        kind = torch.randint(0, 4, (n,), generator=gen)
        p[kind == 0, 2] = 0.0  # floor
        p[kind == 1, 0] = 0.0  # wall
        p[kind == 2, 1] = 1.5  # wall
        boxes = kind == 3  # box tops at random heights
        p[boxes, 2] = (p[boxes, 0] * 3).floor() * 0.2 + 0.3
        out[b] = p + 0.002 * torch.randn(n, 3, generator=gen) + torch.tensor([0.5, 0.5, 0.0])
    return out


def median_ms(fn, reps, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times), times


class Timed:
    """An op set whose calls are bracketed by CUDA events (the share pass)."""

    def __init__(self, ops):
        self.ops, self.events = ops, []
        self.name = ops.name

    def __getattr__(self, op):
        fn = getattr(self.ops, op)

        def timed(*args):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            out = fn(*args)
            end.record()
            self.events.append((op, start, end))
            return out
        return timed


def model_figures(name, make, data, labels, backends, reps):
    torch.manual_seed(0)
    weights = make(backends[0]).state_dict()
    row = {"model": name, "batch": data.shape[0], "points": data.shape[1]}
    for ops in backends:
        model = make(ops).cuda()
        model.load_state_dict(weights)
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
        step = lambda: pointnet2.train_step(model, opt, data, labels)  # noqa: E731
        ms, times = median_ms(step, reps)
        # the share: one more forward with every op bracketed
        timed = Timed(ops)
        for module in model.modules():
            if hasattr(module, "ops"):
                module.ops = timed
        torch.cuda.synchronize()
        fwd_start, fwd_end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(
            enable_timing=True)
        fwd_start.record()
        model(data)
        fwd_end.record()
        torch.cuda.synchronize()
        per_op = {}
        for op, s, e in timed.events:
            per_op[op] = per_op.get(op, 0.0) + s.elapsed_time(e)
        row[ops.name] = {"step_ms": ms, "step_ms_all": times,
                         "forward_ms": fwd_start.elapsed_time(fwd_end),
                         "forward_point_ops_ms": per_op}
    a, b = backends
    row["speedup"] = row[b.name]["step_ms"] / row[a.name]["step_ms"]
    return row


def same_semantics(pc, p2, data, npoint, radius, k):
    """Whether the two op sets sample the same centres and group the same
    points on data (the first layer's FPS and ball query)."""
    i1, i2 = pc.fps(data, npoint), p2.fps(data, npoint).long()
    centres = data.gather(1, i1.unsqueeze(-1).expand(-1, -1, 3)).contiguous()
    g1, g2 = pc.ball(data, centres, radius, k), p2.ball(data, centres, radius, k).long()
    return {"fps_identical": bool((i1 == i2).all()),
            "fps_rows_differing": int((i1 != i2).any(1).sum()),
            "groups_identical": bool((g1 == g2).all()),
            "group_rows_differing": int((g1 != g2).any(-1).sum())}


def lidar_sweeps(lengths, gen):
    """Rings of returns around a sensor at random ranges: lidar-shaped."""
    clouds = []
    for n in lengths:
        az = torch.rand(n, generator=gen) * 2 * math.pi
        ring = torch.randint(0, 64, (n,), generator=gen).float()
        el = (ring / 63.0 - 0.7) * 0.45
        rng = 3 + 60 * torch.rand(n, generator=gen) ** 2
        clouds.append(torch.stack([rng * torch.cos(el) * torch.cos(az),
                                   rng * torch.cos(el) * torch.sin(az),
                                   1.8 + rng * torch.sin(el)], 1))
    return clouds


def ragged_figures(reps):
    gen = torch.Generator().manual_seed(7)
    lengths = [60000 + int(x) for x in torch.linspace(0, 60000, 8)]
    clouds = lidar_sweeps(lengths, gen)
    width, m = max(lengths), 4096
    padded = torch.zeros(8, width, 3)
    for i, c in enumerate(clouds):
        padded[i, :len(c)] = c
    mean = sum(lengths) // 8
    equal = torch.cat(clouds)[:8 * mean].reshape(8, mean, 3)  # the same points, 8 equal clouds
    padded, equal = padded.cuda(), equal.cuda()
    singles = [c.cuda().unsqueeze(0) for c in clouds]
    lens = torch.tensor(lengths).cuda()
    ragged_ms, _ = median_ms(lambda: pcbench.fps(padded, m, lengths=lens), reps)
    equal_ms, _ = median_ms(lambda: pcbench.fps(equal, m), reps)
    loop_ms, _ = median_ms(lambda: [pcbench.fps(c, m) for c in singles], reps)
    got = pcbench.fps(padded, m, lengths=lens)
    same = all(bool((got[i] == pcbench.fps(singles[i], m)[0]).all()) for i in range(8))
    rows = [{"what": "FPS of 4,096 samples, 8 lidar-like sweeps of 60k-120k points",
             "lengths": lengths, "ragged_ms": ragged_ms,
             "equal_size_batch_ms": equal_ms, "equal_size_points": mean,
             "one_call_a_cloud_ms": loop_ms, "ragged_over_equal": ragged_ms / equal_ms,
             "each_cloud_equals_its_own_call": same}]
    # 32 object clouds of 512-4,096 points: self-kNN (k = 16) and chamfer
    # against a second batch of the same sizes
    lengths = [512 + (3584 * i) // 31 for i in range(32)]
    a = [object_clouds(1, n, gen)[0] for n in lengths]
    b = [object_clouds(1, n, gen)[0] for n in lengths]
    pa, pb = torch.zeros(32, 4096, 3), torch.zeros(32, 4096, 3)
    for i, n in enumerate(lengths):
        pa[i, :n], pb[i, :n] = a[i], b[i]
    mean = sum(lengths) // 32
    ea, eb = (torch.cat(x)[:32 * mean].reshape(32, mean, 3).cuda() for x in (a, b))
    pa, pb, lens = pa.cuda(), pb.cuda(), torch.tensor(lengths).cuda()
    sa, sb = [x.cuda().unsqueeze(0) for x in a], [x.cuda().unsqueeze(0) for x in b]
    calls = {
        "self-kNN, k = 16": (lambda: pcbench.knn(pa, k=16, ref_lengths=lens),
                             lambda: pcbench.knn(ea, k=16),
                             lambda: [pcbench.knn(x, k=16) for x in sa],
                             lambda i: pcbench.knn(pa, k=16, ref_lengths=lens)[0][i, :lengths[i]],
                             lambda i: pcbench.knn(sa[i], k=16)[0][0]),
        "chamfer nearest, both ways": (
            lambda: pcbench.chamfer_nearest(pa, pb, a_lengths=lens, b_lengths=lens),
            lambda: pcbench.chamfer_nearest(ea, eb),
            lambda: [pcbench.chamfer_nearest(x, y) for x, y in zip(sa, sb)],
            lambda i: pcbench.chamfer_nearest(pa, pb, a_lengths=lens,
                                              b_lengths=lens)[0][i, :lengths[i]],
            lambda i: pcbench.chamfer_nearest(sa[i], sb[i])[0][0])}
    for what, (ragged, equal, loop, part, alone) in calls.items():
        r_ms, e_ms, l_ms = (median_ms(f, reps)[0] for f in (ragged, equal, loop))
        rows.append({"what": what + ", 32 object clouds of 512-4,096 points",
                     "lengths": lengths, "ragged_ms": r_ms, "equal_size_batch_ms": e_ms,
                     "equal_size_points": mean, "one_call_a_cloud_ms": l_ms,
                     "ragged_over_equal": r_ms / e_ms,
                     "each_cloud_equals_its_own_call": all(
                         bool((part(i) == alone(i)).all()) for i in range(32))})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    module, why = peer_build.load("pointnet2_ops")
    if module is None:
        sys.exit("model_timing: pointnet2_ops: %s" % why)
    pc, p2 = pointnet2.PcbenchOps(), pointnet2.Pointnet2Ops(module)
    gen = torch.Generator().manual_seed(1)
    env = gpu_env(torch)
    env["pointnet2_ops"] = module.build.get("version", "")
    rows = []
    cls_data = object_clouds(32, 1024, gen).cuda()
    cls_labels = torch.randint(0, 40, (32,), generator=gen).cuda()
    seg_data = room_blocks(16, 16384, gen).cuda()
    seg_labels = torch.randint(0, 13, (16, 16384), generator=gen).cuda()
    for name, make, data, labels, layer in [
            ("PointNet++ SSG classification", pointnet2.SSGClassifier, cls_data, cls_labels,
             (512, 0.2, 32)),
            ("PointNet++ MSG segmentation", pointnet2.MSGSegmenter, seg_data, seg_labels,
             (1024, 0.1, 32))]:
        row = model_figures(name, make, data, labels, [pc, p2], args.reps)
        row["semantics"] = same_semantics(pc, p2, data, *layer)
        rows.append(row)
        print("%s %d x %d: pcbench %.2f ms, pointnet2_ops %.2f ms a step (%.2fx); %s" % (
            name, row["batch"], row["points"], row["pcbench"]["step_ms"],
            row["pointnet2_ops"]["step_ms"], row["speedup"], row["semantics"]), flush=True)
    write_json(os.path.join(args.out, "pointnet2-steps.json"),
               {"env": env, "reps": args.reps, "rows": rows})
    ragged = ragged_figures(args.reps)
    for row in ragged:
        print("ragged: %s" % {k: v for k, v in row.items() if k != "lengths"}, flush=True)
    write_json(os.path.join(args.out, "ragged.json"), {"env": env, "reps": args.reps,
                                                        "rows": ragged})


if __name__ == "__main__":
    main()
