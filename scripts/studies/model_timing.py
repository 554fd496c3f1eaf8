#!/usr/bin/env python3
"""model_timing.py - a whole network's training step with pcbench's point ops
against pointnet2_ops', and ragged batches against equal-size ones.

    model_timing.py --out results/<gpu>/models [--reps 20]
                    [--parts steps,profile,completion,ragged,emd_loop]
                    [--epochs 20]

Models (steps, pointnet2-steps.json; examples/pointnet2.py; the same weights,
batch and data for both op sets): PointNet++ SSG classification, 32 x 1,024
points (ModelNet-shaped: object surfaces), and MSG semantic segmentation, 16 x
16,384 points (ScanNet-shaped: a room block of floor, walls and boxes). For
each: the training step (forward, cross-entropy, backward, SGD update) by CUDA
events, median of --reps after warm-up, alone (the GPU idle before each) and
in a loop (steps back to back, as training runs them: the host queues the
next step while the GPU runs this one); the forward's time in sampling,
grouping and interpolation (events around each op call, a separate pass);
and whether the two op sets sample the same indices and the same groups on
the step's input.

Profile (pointnet2-profile.json): the MSG step's kernels by kind, the GPU's
busy time against the span, the host's time to queue a step (alone and
behind a GPU sleep: a step that waits for the GPU anywhere takes the sleep
on top) and the host calls that wait.

Completion (completion-steps.json; examples/completion.py): a folding
decoder's step at 32 x 2,048 and 32 x 16,384 with pcbench's chamfer against
chamfer3D's, and at 2,048 pcbench's certified EMD (1%, 5%) against MSN's
auction at its training setting; the loss alone and its value on the same
prediction.

Ragged (ragged.json): 8 lidar-like sweeps of 60k-120k points, FPS of 4,096
each; 32 object clouds of 512-4,096 points, self-kNN (k = 16) and chamfer's
nearest points; each as one ragged call against one equal-size batch of the
same points (clouds of the mean length) and against one call a cloud.

EMD in a training loop (emd-loop.json): the folding decoder trained for
--epochs over a fixed set of 256 object clouds (8 batches of 32, shuffled each
epoch) at 2,048, 4,096 and 8,192 points; at every step each loss's forward +
backward on that step's prediction: pcbench cold (certified 1% and 5%),
pcbench.EMDLoss (1%, warm from each sample's last solve) and MSN's auction at
its training setting. The model learns from the warm loss.

Needs a CUDA GPU and pointnet2_ops built (steps, profile) (scripts/peer_build.py build); chamfer3d and
msn_emd for the completion losses (reported as not run without them).
"""
import argparse
import math
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
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


def loop_ms(fn, reps, warmup=5):
    """fn run back to back, as a training loop runs its steps: no wait
    between them, so the host queues the next step while the GPU runs this
    one. Each step's time is between CUDA events around it (median of reps);
    also the mean over the whole loop."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(reps)]
    for start, end in events:
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    times = [s.elapsed_time(e) for s, e in events]
    return statistics.median(times), times, events[0][0].elapsed_time(events[-1][1]) / reps


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
        loop, loop_times, loop_mean = loop_ms(step, reps)
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
        row[ops.name] = {"step_ms": ms, "step_ms_all": times, "loop_step_ms": loop,
                         "loop_step_ms_all": loop_times, "loop_mean_ms": loop_mean,
                         "forward_ms": fwd_start.elapsed_time(fwd_end),
                         "forward_point_ops_ms": per_op}
    a, b = backends
    row["speedup"] = row[b.name]["step_ms"] / row[a.name]["step_ms"]
    row["loop_speedup"] = row[b.name]["loop_step_ms"] / row[a.name]["loop_step_ms"]
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


# Kernel names by what they do, for the profile of a step (first match wins).
KERNEL_KINDS = [
    ("point ops", ("fps", "farthest", "furthest", "tiles", "ball", "grid", "three_nn", "knn",
                   "ragged", "distinct", "group_points", "gather_points", "three_interpolate",
                   "pcb_")),
    ("gather and scatter", ("gather", "scatter", "index", "embedding")),
    ("convolution and GEMM", ("conv", "gemm", "xmma", "cutlass", "sm90", "sm80", "cudnn",
                              "implicit", "wgrad", "dgrad")),
    ("batch norm", ("batch_norm", "bn_", "welford", "batchnorm")),
    ("reductions", ("reduce", "max", "amax", "sum", "nll", "softmax")),
]


def kernel_kind(name):
    low = name.lower()
    for kind, words in KERNEL_KINDS:
        if any(w in low for w in words):
            return kind
    return "other elementwise and copies"


# Host calls that wait for the GPU (or may), looked for in a step's profile.
WAITS = ("aten::item", "aten::_local_scalar_dense", "aten::nonzero", "aten::is_nonzero")
WAIT_WORDS = ("Synchronize", "Free", "Malloc", "Memcpy")


def host_ms(step, reps=10, sleep_ms=50):
    """The host's time to queue a step, median of reps: alone, and behind a
    GPU sleep of sleep_ms. A step that never waits for the GPU takes the same
    host time in both; one that waits anywhere takes the sleep on top."""
    cycles = int(sleep_ms * 1e-3 * 1.98e9)  # at an H100's 1,980 MHz; longer if slower
    out = {}
    for name, sleep in (("alone", False), ("behind_gpu_sleep", True)):
        times = []
        for _ in range(reps):
            torch.cuda.synchronize()
            if sleep:
                torch.cuda._sleep(cycles)
            t0 = time.perf_counter()
            step()
            times.append((time.perf_counter() - t0) * 1e3)
        out[name] = statistics.median(times)
    torch.cuda.synchronize()
    out["sleep_ms"] = sleep_ms
    return out


def step_profile(step, steps=3):
    """Where a step's GPU time goes: every kernel of `steps` steps (after
    warm-up) by kind, the top kernels, and how much of the span the GPU sat
    idle waiting for the host (the union of kernel intervals against the span)."""
    from torch.profiler import ProfilerActivity, profile
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    spans, kinds, names = [], {}, {}
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA or not e.name:
            continue
        start, end = e.time_range.start, e.time_range.end
        if end <= start:
            continue
        spans.append((start, end))
        us = (end - start) / steps
        kind = kernel_kind(e.name)
        kinds[kind] = kinds.get(kind, 0.0) + us
        names[e.name[:90]] = names.get(e.name[:90], 0.0) + us
    host = {}
    for e in prof.key_averages():  # the host's share: pcbench's calls, and what waits
        if e.key.startswith("pcbench::") or e.key in WAITS or (
                e.key.startswith("cuda") and any(w in e.key for w in WAIT_WORDS)):
            host[e.key] = {"calls": e.count / steps, "cpu_ms": e.cpu_time_total / steps / 1e3}
    spans.sort()
    busy, cur_s, cur_e = 0.0, None, None
    for s_, e_ in spans:
        if cur_e is None or s_ > cur_e:
            if cur_e is not None:
                busy += cur_e - cur_s
            cur_s, cur_e = s_, e_
        else:
            cur_e = max(cur_e, e_)
    if cur_e is not None:
        busy += cur_e - cur_s
    span = (spans[-1][1] - spans[0][0]) if spans else 0.0
    top = sorted(names.items(), key=lambda kv: -kv[1])[:15]
    return {"steps": steps, "gpu_busy_ms": busy / steps / 1e3, "span_ms": span / steps / 1e3,
            "host_calls": host, "host_ms": host_ms(step),
            "gpu_idle_share": 1 - busy / span if span else None,
            "kernel_ms_by_kind": {k: v / 1e3 for k, v in sorted(kinds.items(),
                                                                key=lambda kv: -kv[1])},
            "top_kernels_ms": [[k, v / 1e3] for k, v in top]}


def profiles(backends, data, labels):
    """The MSG segmentation step's profile with each op set."""
    torch.manual_seed(0)
    weights = pointnet2.MSGSegmenter(backends[0]).state_dict()
    out = {}
    for ops in backends:
        model = pointnet2.MSGSegmenter(ops).cuda()
        model.load_state_dict(weights)
        opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
        out[ops.name] = step_profile(lambda: pointnet2.train_step(model, opt, data, labels))
        out[ops.name]["op_host_ms"] = op_waits(ops, data)
    return out


def op_waits(ops, xyz):
    """Each point op of the first layer alone: its host time, and behind a
    GPU sleep (host_ms): which op, if any, waits for the GPU."""
    centres_idx = ops.fps(xyz, 1024)
    xyz_t = xyz.transpose(1, 2).contiguous()
    centres = ops.gather(xyz_t, centres_idx).transpose(1, 2).contiguous()
    idx = ops.ball(xyz, centres, 0.1, 32)
    d2, near = ops.three_nn(xyz, centres)
    feats = torch.randn(xyz.shape[0], 32, 1024, device=xyz.device)
    calls = {"fps": lambda: ops.fps(xyz, 1024), "gather": lambda: ops.gather(xyz_t, centres_idx),
             "ball": lambda: ops.ball(xyz, centres, 0.1, 32),
             "group": lambda: ops.group(xyz_t, idx), "three_nn": lambda: ops.three_nn(xyz, centres),
             "interpolate": lambda: ops.interpolate(feats, near, torch.softmax(-d2, -1))}
    out = {}
    for name, call in calls.items():
        call()
        out[name] = host_ms(call, reps=5, sleep_ms=20)
    return out


def partial_of(complete):
    """A partial scan of each cloud: the half of its points on one side of a
    plane through its centre (the side is the cloud's own)."""
    b, n, _ = complete.shape
    normal = torch.nn.functional.normalize(torch.randn(b, 1, 3, generator=torch.Generator()
                                                       .manual_seed(3)), dim=-1)
    normal = normal.to(complete.device)
    side = ((complete - complete.mean(1, keepdim=True)) * normal).sum(-1)
    keep = side.argsort(dim=1)[:, : n // 2]
    return complete.gather(1, keep.unsqueeze(-1).expand(-1, -1, 3)).contiguous()


def completion_figures(reps, emd_sizes=(2048,)):
    """A completion network's step (examples/completion.py) at 32 x 2,048 and
    32 x 16,384 with each loss: pcbench's chamfer against chamfer3D's (the same
    convention, the value compared), and at emd_sizes pcbench's certified EMD
    (1% and 5%) against MSN's auction at its training setting; the loss's own
    forward + backward timed alone, and its value, on the untrained network's
    prediction (one for every loss)."""
    import completion
    from peers.adapters.built import chamfer3d_distances, msn_emd_distances
    c3d, why_c = peer_build.load("chamfer3d")
    msn, why_m = peer_build.load("msn_emd")
    losses = {"pcbench chamfer": pcbench.chamfer}
    if c3d is not None:
        losses["chamfer3D"] = lambda p, t: sum(d.mean() for d in chamfer3d_distances(c3d, p, t))
    emd = {"pcbench EMD certified 1%": lambda p, t: completion.emd_certified(p, t, 0.01),
           "pcbench EMD certified 5%": lambda p, t: completion.emd_certified(p, t, 0.05)}
    if msn is not None:
        emd["MSN EMD training setting (eps 0.005, 50 iterations)"] = (
            lambda p, t: msn_emd_distances(msn, p, t, 0.005, 50).clamp(min=0).sqrt().mean())
    gen = torch.Generator().manual_seed(5)
    rows = []
    for n in (2048, 16384):
        complete = object_clouds(32, n, gen).cuda()
        partial = partial_of(complete)
        torch.manual_seed(0)
        first = completion.FoldingCompletion(n).cuda()
        weights = first.state_dict()
        with torch.no_grad():  # one prediction every loss's value is taken on
            pred = first(partial)
        chosen = dict(losses, **(emd if n in emd_sizes else {}))
        for name, loss_fn in chosen.items():
            model = completion.FoldingCompletion(n).cuda()
            model.load_state_dict(weights)
            opt = torch.optim.Adam(model.parameters(), lr=1e-4)
            step = lambda: completion.train_step(model, opt, partial, complete,  # noqa: E731
                                                 loss_fn)
            ms, times = median_ms(step, reps)
            leaf = pred.clone().requires_grad_()

            def loss_alone():
                leaf.grad = None
                loss_fn(leaf, complete).backward()
            loss_ms, _ = median_ms(loss_alone, reps)
            rows.append({"batch": 32, "points": n, "loss": name, "step_ms": ms,
                         "step_ms_all": times, "loss_forward_backward_ms": loss_ms,
                         "loss_share_of_step": loss_ms / ms,
                         "loss_value_on_prediction": float(loss_fn(pred, complete))})
            print("completion 32 x %d, %s: step %.2f ms, loss alone %.2f ms, value %.5f" % (
                n, name, ms, loss_ms, rows[-1]["loss_value_on_prediction"]), flush=True)
    missing = {k: w for k, w in (("chamfer3d", why_c), ("msn_emd", why_m)) if w}
    return rows, missing


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


def emd_loop_figures(epochs, sizes=(2048,), batches=8, warm_rules=((1, 1), (16, 1))):
    """Issue 71's training-loop figure: every EMD loss timed on the same
    predictions of a decoder that trains on the warm loss; per epoch the
    median of each loss's forward + backward (CUDA events, the GPU idle
    before each), the mean values, and how many of the warm loss's samples
    were solved cold (first sight, or a start dropped by its budget)."""
    import completion
    from peers.adapters.built import msn_emd_distances
    msn, why = peer_build.load("msn_emd")
    samples = batches * 32
    rows = []
    for n in sizes:
        gen = torch.Generator().manual_seed(7)
        data = object_clouds(samples, n, gen).cuda()
        partial = partial_of(data)
        torch.manual_seed(0)
        model = completion.FoldingCompletion(n).cuda()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        cold = lambda p, t, i: pcbench.emd_loss(p, t, max_gap=0.01)  # noqa: E731
        losses = {"pcbench cold 1%": cold,
                  "pcbench cold 5%": lambda p, t, i: pcbench.emd_loss(p, t, max_gap=0.05)}
        warms = {}
        for scale, share in warm_rules:
            name = "pcbench EMDLoss warm 1%% (eps x %g, budget %g)" % (scale, share)
            warms[name] = losses[name] = pcbench.EMDLoss(samples, n, max_gap=0.01,
                                                         warm_eps=scale, budget=share)
        warm = next(iter(warms.values()))  # the model learns from the first
        if msn is not None:
            losses["MSN training setting"] = (
                lambda p, t, i: msn_emd_distances(msn, p, t, 0.005, 50).clamp(min=0).sqrt().mean())
        order = torch.Generator().manual_seed(11)
        epochs_out = []
        for epoch in range(epochs):
            times, values = {k: [] for k in losses}, {k: [] for k in losses}
            cold_solves = {k: 0 for k in warms}
            for batch in torch.randperm(samples, generator=order).view(batches, 32):
                idx = batch.cuda()
                target, pred = data[idx], model(partial[idx])
                before = {k: None if w._state is None else (w._state[1].index_select(0, idx),
                                                          w._state[2].index_select(0, idx))
                          for k, w in warms.items()}
                grad = None
                for name, fn in losses.items():
                    leaf = pred.detach().clone().requires_grad_()
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(
                        enable_timing=True)
                    torch.cuda.synchronize()
                    start.record()
                    loss = fn(leaf, target, idx)
                    loss.backward()
                    end.record()
                    torch.cuda.synchronize()
                    times[name].append(start.elapsed_time(end))
                    values[name].append(float(loss.detach()))
                    if fn is warm:
                        grad = leaf.grad
                for k, w in warms.items():  # first sight, or a start dropped
                    if before[k] is None:
                        cold_solves[k] += 32
                        continue
                    eps_in, budget_in = before[k]
                    cold = (eps_in <= 0) | (w._state[2].index_select(0, idx) != budget_in)
                    cold_solves[k] += int(cold.sum())
                opt.zero_grad(set_to_none=True)
                pred.backward(grad)
                opt.step()
            epochs_out.append({
                "epoch": epoch + 1, "cold_solves": cold_solves,
                "median_ms": {k: statistics.median(v) for k, v in times.items()},
                "mean_ms": {k: statistics.fmean(v) for k, v in times.items()},
                "mean_value": {k: statistics.fmean(v) for k, v in values.items()}})
            e = epochs_out[-1]
            print("emd loop 32 x %d, %d samples, epoch %d: %s; cold solves %s; values %s"
                  % (n, samples, epoch + 1, {k: round(v, 2) for k, v in e["median_ms"].items()},
                     cold_solves, {k: round(v, 4) for k, v in e["mean_value"].items()}),
                  flush=True)
        whole = {k: statistics.fmean(e["mean_ms"][k] for e in epochs_out) for k in losses}
        rows.append({"batch": 32, "points": n, "samples": samples, "epochs": epochs,
                     "learns_from": next(iter(warms)),
                     "per_epoch": epochs_out, "mean_ms_over_run": whole,
                     "msn": None if msn is not None else why})
    return rows


PARTS = ("steps", "profile", "completion", "ragged", "emd_loop")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--parts", default=",".join(PARTS),
                    help="which figures, comma-separated (default: %(default)s)")
    args = ap.parse_args()
    parts = args.parts.split(",")
    if any(p not in PARTS for p in parts):
        sys.exit("model_timing: --parts takes %s" % ", ".join(PARTS))
    env = gpu_env(torch)
    if "emd_loop" in parts:
        rows = []
        for n, batches, epochs in [(2048, 8, args.epochs), (2048, 1, 3 * args.epochs),
                                   (4096, 1, 2 * args.epochs)]:
            rows += emd_loop_figures(epochs, (n,), batches)
            write_json(os.path.join(args.out, "emd-loop.json"), {"env": env, "rows": rows})
    if not {"steps", "profile"} & set(parts) and "completion" not in parts and \
            "ragged" not in parts:
        return
    module, why = peer_build.load("pointnet2_ops")
    if module is None:
        sys.exit("model_timing: pointnet2_ops: %s" % why)
    pc, p2 = pointnet2.PcbenchOps(), pointnet2.Pointnet2Ops(module)
    gen = torch.Generator().manual_seed(1)
    env["pointnet2_ops"] = module.build.get("version", "")
    cls_data = object_clouds(32, 1024, gen).cuda()
    cls_labels = torch.randint(0, 40, (32,), generator=gen).cuda()
    seg_data = room_blocks(16, 16384, gen).cuda()
    seg_labels = torch.randint(0, 13, (16, 16384), generator=gen).cuda()
    if "steps" in parts:
        rows = []
        for name, make, data, labels, layer in [
                ("PointNet++ SSG classification", pointnet2.SSGClassifier, cls_data, cls_labels,
                 (512, 0.2, 32)),
                ("PointNet++ MSG segmentation", pointnet2.MSGSegmenter, seg_data, seg_labels,
                 (1024, 0.1, 32))]:
            row = model_figures(name, make, data, labels, [pc, p2], args.reps)
            row["semantics"] = same_semantics(pc, p2, data, *layer)
            rows.append(row)
            print("%s %d x %d: pcbench %.2f ms, pointnet2_ops %.2f ms a step alone (%.2fx); "
                  "in a loop %.2f and %.2f ms (%.2fx); %s" % (
                      name, row["batch"], row["points"], row["pcbench"]["step_ms"],
                      row["pointnet2_ops"]["step_ms"], row["speedup"],
                      row["pcbench"]["loop_step_ms"], row["pointnet2_ops"]["loop_step_ms"],
                      row["loop_speedup"], row["semantics"]), flush=True)
        write_json(os.path.join(args.out, "pointnet2-steps.json"),
                   {"env": env, "reps": args.reps, "rows": rows})
    if "profile" in parts:
        prof = profiles([pc, p2], seg_data, seg_labels)
        for name, p in prof.items():
            print("MSG step profile, %s: GPU busy %.2f ms of a %.2f ms span; %s" % (
                name, p["gpu_busy_ms"], p["span_ms"],
                {k: round(v, 2) for k, v in p["kernel_ms_by_kind"].items()}), flush=True)
        write_json(os.path.join(args.out, "pointnet2-profile.json"),
                   {"env": env, "model": "PointNet++ MSG segmentation 16 x 16384", "ops": prof})
    if "completion" in parts:
        rows, missing = completion_figures(args.reps)
        write_json(os.path.join(args.out, "completion-steps.json"),
                   {"env": env, "reps": args.reps, "rows": rows, "not_run": missing})
    if "ragged" in parts:
        ragged = ragged_figures(args.reps)
        for row in ragged:
            print("ragged: %s" % {k: v for k, v in row.items() if k != "lengths"}, flush=True)
        write_json(os.path.join(args.out, "ragged.json"), {"env": env, "reps": args.reps,
                                                            "rows": ragged})


if __name__ == "__main__":
    main()
