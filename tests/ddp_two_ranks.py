#!/usr/bin/env python3
"""ddp_two_ranks.py - pcbench under DistributedDataParallel: two ranks, one
GPU each (NCCL, a file store: no network). Each rank computes fps, nn, knn,
ball_query, chamfer and emd_loss on its own GPU and its own clouds, checks
the answers against the same calls on the CPU, trains a small layer five
steps on chamfer + emd_loss, and checks that DDP left the same parameters
on both ranks. Prints a line a rank; exits 1 when a rank fails.

    PYTHONPATH=impl/python PCBENCH_LIBRARY=build/pic/libpcbench.so \\
        python3 tests/ddp_two_ranks.py
"""
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import pcbench


def rank_main(rank, world, store):
    dist.init_process_group("nccl", init_method="file://" + store, rank=rank,
                            world_size=world)
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    g = torch.Generator().manual_seed(100 + rank)
    x, y = torch.rand(8, 2048, 3, generator=g), torch.rand(8, 2048, 3, generator=g)
    xd, yd = x.to(dev), y.to(dev)
    checks = {
        "fps": (lambda a, b: pcbench.fps(a, 256)),
        "nn": (lambda a, b: pcbench.nn(b, a)[0]),
        "knn": (lambda a, b: pcbench.knn(a, k=8)[0]),
        "ball_query": (lambda a, b: pcbench.ball_query(a, b[:, :256].contiguous(), 0.1, 16)[0]),
        "chamfer": (lambda a, b: pcbench.chamfer(a, b)),
    }
    for name, call in checks.items():
        got, want = call(xd, yd), call(x, y)
        assert got.device == dev, name
        torch.testing.assert_close(got.cpu(), want, msg=lambda m: "%s: %s" % (name, m))
    match = pcbench.emd(xd, yd, max_gap=1e-2)[0]
    assert match.device == dev and pcbench.check_emd(x, y, match.cpu(), max_gap=1e-2)

    torch.manual_seed(0)  # the same initial layer on both ranks
    net = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(3, 3).to(dev),
                                                    device_ids=[rank])
    opt = torch.optim.SGD(net.parameters(), lr=1e-2)
    losses = []
    for _ in range(5):
        out = net(xd)
        loss = pcbench.chamfer(out, yd) + pcbench.emd_loss(out, yd)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    params = torch.cat([p.detach().flatten() for p in net.parameters()])
    every = [torch.empty_like(params) for _ in range(world)]
    dist.all_gather(every, params)
    assert all(torch.equal(every[0], p) for p in every), "parameters differ across ranks"
    assert losses[-1] < losses[0], losses
    print("rank %d on cuda:%d (%s): fps, nn, knn, ball_query, chamfer equal the CPU's, emd "
          "certified; 5 DDP steps, loss %.5f -> %.5f, parameters equal on every rank"
          % (rank, rank, torch.cuda.get_device_name(rank), losses[0], losses[-1]), flush=True)
    dist.destroy_process_group()


def main():
    if torch.cuda.device_count() < 2:
        print("ddp_two_ranks: needs two CUDA devices, found %d" % torch.cuda.device_count())
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        try:
            mp.spawn(rank_main, args=(2, os.path.join(tmp, "store")), nprocs=2, join=True)
        except mp.ProcessRaisedException as e:
            print("ddp_two_ranks: FAILED: %s" % e)
            return 1
    print("ddp_two_ranks: 2 ranks passed (torch %s)" % torch.__version__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
