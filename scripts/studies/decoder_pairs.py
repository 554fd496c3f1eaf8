#!/usr/bin/env python3
"""decoder_pairs.py - the EMD pairs a completion network's training loop
meets first, for the CPU replay's studies (scripts/studies/emd_routes.c, part 5): the
untrained folding decoder's predictions (examples/completion.py) against
their target object clouds, as model_timing.py's emd_loop makes them
(the same seeds), written raw: float32, each pair A (the prediction) then B
(the target), n x 3 each. --train-steps S first trains the decoder S steps
on the first batch with pcbench's chamfer (on the CPU: an EMD loss there is
too slow), for predictions of a decoder that has learnt something.

    decoder_pairs.py OUT [--points 2048] [--pairs 4] [--train-steps 0]
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--points", type=int, default=2048)
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--train-steps", type=int, default=0)
    args = ap.parse_args()
    import completion
    from model_timing import object_clouds, partial_of
    n = args.points
    data = object_clouds(256, n, torch.Generator().manual_seed(7))  # emd_loop's data
    partial = partial_of(data)
    torch.manual_seed(0)
    model = completion.FoldingCompletion(n)
    model.train()  # as in the loop's first step: batch statistics
    if args.train_steps:
        import pcbench
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        for step in range(args.train_steps):
            loss = completion.train_step(model, opt, partial[:32], data[:32], pcbench.chamfer)
        print("decoder_pairs: chamfer %.4f after %d steps" % (float(loss.detach()), args.train_steps))
    with torch.no_grad():
        pred = model(partial[:32])[: args.pairs]
    pairs = torch.stack([pred, data[: args.pairs]], 1).contiguous().float()
    pairs.numpy().tofile(args.out)
    print("decoder_pairs: %d pairs of %d points into %s" % (args.pairs, n, args.out))


if __name__ == "__main__":
    main()
