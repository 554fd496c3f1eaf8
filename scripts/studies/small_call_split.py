#!/usr/bin/env python3
"""small_call_split.py - where a small call's time goes from Python on a
GPU: the operator alone (torch.ops.pcbench), the package's call, and the
call followed by the split of a batch's rows into one tensor a cloud (what
the peers' runner times for every library), beside a plain torch launch.
CUDA events around one call, median of 60 after 10 warm-ups (model_timing's). Small ball
queries and kNN rows take 0.01-0.07 ms of kernels, so the host's part
decides what a caller sees (results/gpu-nvidia-h200/ball/logs/).

    PYTHONPATH=impl/python python3 scripts/studies/small_call_split.py
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..")]  # model_timing's own imports live in scripts/
import pcbench  # noqa: E402
from model_timing import median_ms  # noqa: E402


def main():
    torch.manual_seed(0)
    a = torch.rand(32, 2048, 3, device="cuda") * 2 - 1
    centres = a[:, :256].contiguous()
    x = torch.rand(32, 1024, 3, device="cuda")
    op = torch.ops.pcbench
    rows = [
        ("torch a + 1", lambda: a + 1),
        ("ball op r0.8 k16", lambda: op.ball_query.default(a, centres, 0.8, 16, "first", None, None)),
        ("ball py r0.8 k16", lambda: pcbench.ball_query(a, centres, 0.8, 16)),
        ("ball py + list", lambda: list(pcbench.ball_query(a, centres, 0.8, 16)[0])),
        ("ball op r0.2 k16", lambda: op.ball_query.default(a, centres, 0.2, 16, "first", None, None)),
        ("knn op k3 32x1024", lambda: op.knn.default(x, x, 3, None, None)),
        ("knn py k3 32x1024 self", lambda: pcbench.knn(x, None, 3)),
        ("knn py k3 + list", lambda: list(pcbench.knn(x, None, 3)[0])),
    ]
    for name, fn in rows:
        print("%-26s %.4f ms" % (name, median_ms(fn, 60, warmup=10)[0]))


if __name__ == "__main__":
    main()
