#!/usr/bin/env python3
"""train_timing.py - NN and chamfer as a training loop calls them: per-call
GPU time from Python beside the plain torch.cdist forms users write, and the
host time a call costs.

For each batch x points (uniform cube and sphere-surface clouds, seeded):
  - per call (CUDA events around a loop of calls, median of 15 loops):
    pcbench.nn, NNIndex.query, torch.cdist(q, r).min(-1); pcbench.chamfer
    forward, and forward + backward, beside the same by torch.cdist
    (squared distances' min both ways, the mean, summed); the cdist forms
    are timed, not trusted: their answers are compared with pcbench's;
  - host time a call (time.perf_counter over 40 calls queued behind a
    long GPU sleep, so nothing waits for the GPU): what a call costs the
    CPU beyond its kernels (checks, ctypes, allocation, launches).
  - chamfer forward + backward captured in a CUDA graph and replayed (the
    step without the eager autograd engine's host time), beside cdist's;
  - the host time of a few of PyTorch's own calls on the same host (an
    empty_like, an add, a cast, a trivial mean's backward), the units a
    call's host time is read in.
The file records whether the operators' CUDA kernels were the compiled ones
(make torch-ops) or the Python ones (PCBENCH_TORCH_OPS=0).
Every pcbench answer timed is checked first: nn's distances against a
float64 brute force of the first pair, chamfer's value against float64.

    PYTHONPATH=impl/python python3 scripts/studies/train_timing.py --out FILE.json
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import binding_timing  # noqa: E402

SIZES = [(32, 1024), (32, 2048), (32, 4096), (16, 16384), (1, 16384), (8, 1024), (16, 2048),
         (8, 8192), (32, 8192)]


def clouds(kind, b, n, seed):
    import torch
    g = torch.Generator(device="cpu").manual_seed(seed)
    if kind == "uniform":
        x = torch.rand(b, n, 3, generator=g)
    else:  # points on a unit sphere's surface
        x = torch.randn(b, n, 3, generator=g)
        x = x / x.norm(dim=-1, keepdim=True)
    return x.cuda().contiguous()


def per_call_ms(call):
    """Median over 15 loops of (a loop of calls) / calls: binding_timing's."""
    return binding_timing.per_call_ms(call, reps=15, min_ms=20.0)[0]


def host_us(call, calls=40):
    """Host microseconds a call, queued behind a GPU sleep (nothing waits).
    Few calls: CUDA's queue of pending launches holds about a thousand, and a
    call that finds it full waits for the GPU (the sleep), so 200 calls of a
    dozen launches each (the grid's build and search, autograd's backward)
    measured the sleep, not the host."""
    import torch
    call()
    torch.cuda.synchronize()
    torch.cuda._sleep(int(2e9))  # about a second of GPU cycles: the queue never drains
    t0 = time.perf_counter()
    for _ in range(calls):
        call()
    host = (time.perf_counter() - t0) / calls * 1e6
    torch.cuda.synchronize()
    return host


def cdist_nn(q, r):
    return torch_mod().cdist(q, r).min(-1)


def cdist_chamfer(a, b):
    d = torch_mod().cdist(a, b) ** 2
    return (d.min(2).values.mean(1) + d.min(1).values.mean(1)).mean()


def torch_mod():
    import torch
    return torch


def check(pcbench, a, b):
    """pcbench's answers on the first pair against float64 brute force."""
    torch = torch_mod()
    idx, d2 = pcbench.nn(a, b)
    ad, bd = a[0].double(), b[0].double()
    full = ((bd[:, None, :] - ad[None, :, :]) ** 2).sum(-1)
    truth = full.min(1).values
    got = ((bd - ad[idx[0]]) ** 2).sum(-1)
    ok_nn = bool((got <= truth * (1 + 2 ** -18) + 1e-36).all())
    value = pcbench.chamfer(a[:1], b[:1]).item()
    want = (full.min(1).values.mean() + full.min(0).values.mean()).item()
    ok_ch = abs(value - want) <= 1e-5 * want
    cd = cdist_chamfer(a[:1], b[:1]).item()
    return ok_nn and ok_ch, abs(cd - want) / want


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--sizes", help="BxN,BxN,... (default: the issue's and training's)")
    args = ap.parse_args()
    torch = torch_mod()
    import pcbench
    sizes = SIZES if not args.sizes else [tuple(int(v) for v in s.split("x"))
                                          for s in args.sizes.split(",")]
    rows = []
    print("operators' CUDA kernels: %s" % ("compiled (%s)" % pcbench._ops.compiled_path
                                         if pcbench._ops.compiled else "Python (ctypes)"))
    print("%-8s %-12s %9s %9s %9s %9s %9s %9s %9s %9s %8s %8s" % (
        "kind", "B x N", "nn", "index", "cdist", "ch fwd", "ch f+b", "graph", "cd f+b",
        "nearest", "host nn", "host ch"), flush=True)
    probe = clouds("uniform", 32, 1024, 3)
    reference = {"empty": host_us(lambda: torch.empty_like(probe)),
                 "add": host_us(lambda: torch.add(probe, 1)),
                 "to_int64": host_us(lambda: probe.to(torch.int64)),
                 "mean_backward": host_us(lambda: (probe.requires_grad_() * 1).mean().backward())}
    probe.requires_grad_(False)
    print("host time of PyTorch's own calls on this host (us): %s"
          % ", ".join("%s %.1f" % kv for kv in reference.items()), flush=True)
    for kind in ("uniform", "sphere"):
        for b, n in sizes:
            a, q = clouds(kind, b, n, 1), clouds(kind, b, n, 2)
            ok, cdist_err = check(pcbench, a, q)
            index = pcbench.NNIndex(a)
            xa, xq = a.clone().requires_grad_(), q.clone().requires_grad_()

            def ch_fb():
                pcbench.chamfer(xa, xq).backward()

            def cd_fb():
                cdist_chamfer(xa, xq).backward()

            def fresh(step):  # in a graph, the gradients are the graph's own
                def run():
                    xa.grad = xq.grad = None
                    step()
                return run
            row = {"kind": kind, "batch": b, "n": n, "verified": ok,
                   "cdist_chamfer_rel_error": cdist_err,
                   "nn_ms": per_call_ms(lambda: pcbench.nn(a, q)),
                   "index_query_ms": per_call_ms(lambda: index.query(q)),
                   "chamfer_fwd_ms": per_call_ms(lambda: pcbench.chamfer(a, q)),
                   "chamfer_fwd_bwd_ms": per_call_ms(ch_fb),
                   "chamfer_nearest_ms": per_call_ms(lambda: pcbench.chamfer_nearest(a, q)),
                   "nn_host_us": host_us(lambda: pcbench.nn(a, q)),
                   "chamfer_fwd_bwd_host_us": host_us(ch_fb),
                   "chamfer_fwd_bwd_graph_ms": binding_timing.graph_ms(fresh(ch_fb))}
            # cdist's distance matrices: b n n floats; its backward holds several
            if b * n * n * 4 <= 16 << 30:
                row["cdist_nn_ms"] = per_call_ms(lambda: cdist_nn(q, a))
            if b * n * n * 4 <= 4 << 30:
                row["cdist_chamfer_fwd_bwd_ms"] = per_call_ms(cd_fb)
                row["cdist_chamfer_fwd_bwd_graph_ms"] = binding_timing.graph_ms(fresh(cd_fb))
            index.close()
            rows.append(row)
            print("%-8s %-12s %9.4f %9.4f %9s %9.4f %9.4f %9.4f %9s %9.4f %8.1f %8.1f%s" % (
                kind, "%d x %d" % (b, n), row["nn_ms"], row["index_query_ms"],
                "%.4f" % row["cdist_nn_ms"] if "cdist_nn_ms" in row else "-",
                row["chamfer_fwd_ms"], row["chamfer_fwd_bwd_ms"], row["chamfer_fwd_bwd_graph_ms"],
                "%.4f" % row["cdist_chamfer_fwd_bwd_ms"] if "cdist_chamfer_fwd_bwd_ms" in row
                else "-", row["chamfer_nearest_ms"], row["nn_host_us"],
                row["chamfer_fwd_bwd_host_us"], "" if ok else "  WRONG"), flush=True)
            del a, q, xa, xq, index
            torch.cuda.empty_cache()
    doc = dict(binding_timing.gpu_env(torch), format="pcbench-train-timing/1",
               compiled_ops=sorted(pcbench._ops.compiled), host_reference_us=reference,
               method="CUDA events around loops of calls, median of 15 loops; host time over "
                      "40 calls queued behind a GPU sleep", rows=rows)
    binding_timing.write_json(args.out, doc)


if __name__ == "__main__":
    main()
