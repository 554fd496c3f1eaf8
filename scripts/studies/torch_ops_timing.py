#!/usr/bin/env python3
"""torch_ops_timing.py - what pcbench's PyTorch operators cost a training
loop on a GPU: the host time of a call beyond its kernels, the call's GPU
time, and a whole training step eager against the same step captured in a
CUDA graph and replayed.

  - host time a call: time.perf_counter over 20 calls queued behind a GPU
    sleep (nothing waits for the GPU), median of 7 such runs: the
    checks, the operator's dispatch, ctypes, output allocation, launches;
    beside it the same call by the direct ctypes path (impl named), which
    skips the operator, and an empty torch operator's floor (torch.empty);
  - GPU time a call: CUDA events around loops of calls, median of 15; and
    the same for the call captured alone in a CUDA graph and replayed;
  - a training step at 32 x 2,048 (a linear layer, FPS, ball query and
    grouping, a small MLP, chamfer, backward, SGD): CUDA events, median of
    15 loops of 20 steps, eager and replayed from a CUDA graph.
Every answer timed is checked first (check_fps, check_nn, check_ball, a
float64 chamfer).

    PYTHONPATH=impl/python python3 scripts/studies/torch_ops_timing.py --out FILE.json
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import binding_timing  # noqa: E402


def clouds(b, n, seed):
    import torch
    g = torch.Generator().manual_seed(seed)
    return torch.rand(b, n, 3, generator=g).cuda()


def host_us(call, calls=20, runs=7):
    """Few calls a run: more would fill the GPU's launch queue behind the
    sleep, and a full queue makes the host wait for the GPU after all."""
    import torch
    call()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        torch.cuda._sleep(int(4e8))  # about 0.2 s of GPU cycles: the queue never drains
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        times.append((time.perf_counter() - t0) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(times)


def gpu_ms(call):
    return binding_timing.per_call_ms(call, reps=15, min_ms=20.0)[0]


def nearest_right(pcbench, a, b):
    """Both directions' nearest points judged (the value's sums are checked
    at 2,048 points in float64)."""
    ia, _, ib, _ = pcbench.chamfer_nearest(a, b)
    return bool(pcbench.check_nn(b, a, ia)) and bool(pcbench.check_nn(a, b, ib))


def calls(pcbench, torch):
    """(name, through the operator, by the direct path, check)."""
    x1 = clouds(1, 10000, 1)
    a, b = clouds(32, 1024, 2), clouds(32, 1024, 3)
    a2, b2 = clouds(32, 2048, 4), clouds(32, 2048, 5)
    c16a, c16b = clouds(32, 16384, 6), clouds(32, 16384, 7)
    centres = a[:, :512].contiguous()
    ga, gb = a2.clone().requires_grad_(), b2.clone().requires_grad_()
    g16a, g16b = c16a.clone().requires_grad_(), c16b.clone().requires_grad_()

    def chamfer64(x, y):
        d = ((x.double()[:, :, None] - y.double()[:, None]) ** 2).sum(-1)
        return (d.min(2).values.mean(1) + d.min(1).values.mean(1)).mean().item()
    return [
        ("fps 1 x 10,000, 1,000 samples", lambda: pcbench.fps(x1, 1000),
         lambda: pcbench.fps(x1, 1000, impl="cuda_pruned"),
         lambda: bool(pcbench.check_fps(x1, pcbench.fps(x1, 1000), canonical=True))),
        ("fps 32 x 1,024, 512 samples", lambda: pcbench.fps(a, 512),
         lambda: pcbench.fps(a, 512, impl="cuda_pruned"),
         lambda: bool(pcbench.check_fps(a, pcbench.fps(a, 512), canonical=True))),
        ("nn 32 x 1,024", lambda: pcbench.nn(a, b), lambda: pcbench.nn(a, b, impl="cuda_tiles"),
         lambda: bool(pcbench.check_nn(a, b, *pcbench.nn(a, b)))),
        ("nn 32 x 2,048", lambda: pcbench.nn(a2, b2),
         lambda: pcbench.nn(a2, b2, impl="cuda_tiles"),
         lambda: bool(pcbench.check_nn(a2, b2, *pcbench.nn(a2, b2)))),
        ("knn 32 x 1,024, k 16", lambda: pcbench.knn(a, k=16),
         lambda: pcbench.knn(a, k=16, impl="cuda_grid"),
         lambda: bool(pcbench.check_knn(a, a, *pcbench.knn(a, k=16)))),
        ("ball_query 32 x 1,024, 512 centres, r 0.2, k 32",
         lambda: pcbench.ball_query(a, centres, 0.2, 32),
         lambda: pcbench.ball_query(a, centres, 0.2, 32, impl="cuda_grid"),
         lambda: bool(pcbench.check_ball(a, centres, pcbench.ball_query(a, centres, 0.2, 32)[0],
                                         0.2))),
        ("chamfer forward + backward 32 x 2,048",
         lambda: pcbench.chamfer(ga, gb).backward(), None,
         lambda: abs(pcbench.chamfer(a2[:2], b2[:2]).item() - chamfer64(a2[:2], b2[:2]))
         <= 1e-5 * chamfer64(a2[:2], b2[:2])),
        ("chamfer forward + backward 32 x 16,384",
         lambda: pcbench.chamfer(g16a, g16b).backward(), None,
         lambda: nearest_right(pcbench, c16a[:2], c16b[:2])),
        ("emd 32 x 1,024, 1%", lambda: pcbench.emd(a, b, max_gap=1e-2),
         lambda: pcbench.emd(a, b, max_gap=1e-2, impl="cuda_auction"),
         lambda: bool(pcbench.check_emd(a, b, pcbench.emd(a, b, max_gap=1e-2)[0],
                                        max_gap=1e-2))),
    ]


def training_step(pcbench, torch):
    """A PointNet++-style step at 32 x 2,048 and its eager / graph times."""
    torch.manual_seed(0)
    x, y = clouds(32, 2048, 20), clouds(32, 2048, 21)
    lift = torch.nn.Linear(3, 3).cuda()
    mlp = torch.nn.Sequential(torch.nn.Linear(3, 32), torch.nn.ReLU(),
                              torch.nn.Linear(32, 64)).cuda()
    params = list(lift.parameters()) + list(mlp.parameters())
    opt = torch.optim.SGD(params, lr=1e-3)

    def step():
        out = lift(x)
        idx = pcbench.fps(out.detach(), 512)
        centres = out.gather(1, idx[..., None].expand(-1, -1, 3))
        group, _ = pcbench.ball_query(out.detach(), centres.detach(), 0.2, 32, pad="first")
        flat = group.clamp(min=0).reshape(32, -1)
        grouped = out.gather(1, flat[..., None].expand(-1, -1, 3)).reshape(32, 512, 32, 3)
        feat = mlp(grouped - centres[:, :, None]).max(2).values
        loss = pcbench.chamfer(out, y) + 1e-3 * feat.pow(2).mean()
        opt.zero_grad(set_to_none=False)
        loss.backward()
        opt.step()
        return loss

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    eager = gpu_ms(step)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    replay = gpu_ms(graph.replay)
    return {"step": "32 x 2,048: linear, fps 512, ball_query r 0.2 k 32 and grouping, "
                    "MLP 3-32-64 and max, chamfer, backward, SGD",
            "eager_ms": eager, "graph_ms": replay, "graph_saving": 1 - replay / eager}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    import torch
    import pcbench
    rows = []
    floor = host_us(lambda: torch.empty(32, 1024, device="cuda"))
    print("host floor (torch.empty on CUDA): %.1f us" % floor, flush=True)
    print("%-48s %8s %9s %9s %9s %9s" % ("call", "right", "op host", "direct", "GPU ms",
                                          "graph ms"))
    for name, op, direct, check in calls(pcbench, torch):
        ok = bool(check())
        row = {"call": name, "verified": ok, "op_host_us": host_us(op),
               "direct_host_us": host_us(direct) if direct else None, "gpu_ms": gpu_ms(op),
               "graph_ms": binding_timing.graph_ms(op)}
        rows.append(row)
        print("%-48s %8s %9.1f %9s %9.4f %9.4f" % (
            name, "yes" if ok else "WRONG", row["op_host_us"],
            "%.1f" % row["direct_host_us"] if direct else "-", row["gpu_ms"], row["graph_ms"]),
            flush=True)
    train = training_step(pcbench, torch)
    print("training step %s: eager %.3f ms, CUDA graph %.3f ms (%.0f%% less)"
          % (train["step"], train["eager_ms"], train["graph_ms"], 100 * train["graph_saving"]),
          flush=True)
    doc = dict(binding_timing.gpu_env(torch), format="pcbench-torch-ops-timing/1",
               method="host: perf_counter over 20 calls queued behind a GPU sleep, median of 7; "
                      "GPU: CUDA events around loops of calls (or of a graph's replays), median "
                      "of 15",
               host_floor_us=floor, rows=rows, training_step=train)
    binding_timing.write_json(args.out, doc)


if __name__ == "__main__":
    main()
