"""A point-cloud completion network's training step in a page: a PointNet
encoder of the partial cloud and a folding decoder (FoldingNet, PCN) that
bends a 2-D grid into the completed cloud, trained with a chamfer or an EMD
loss. Only the loss differs between runs:

    model = FoldingCompletion(points=2048).cuda()
    loss = train_step(model, optimiser, partial, complete, pcbench.chamfer)
    loss = train_step(model, optimiser, partial, complete, emd_certified)

A loss is any loss(prediction, target) -> scalar over (B, N, 3) clouds.
pcbench.chamfer's default is the squared-mean-sum convention, which is what
completion repositories compute from chamfer3D's two distance arrays
(dist1.mean() + dist2.mean()); pcbench.emd_loss is the mean distance between
points matched by a bijection certified within its max_gap, the quantity
MSN's auction (eps 0.005, 50 iterations) approximates during training.
"""
import math

import torch
import torch.nn as nn

import pcbench


def shared_mlp(widths, last_relu=True):
    layers = []
    for i, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
        layers.append(nn.Conv1d(a, b, 1))
        if last_relu or i < len(widths) - 2:
            layers += [nn.BatchNorm1d(b), nn.ReLU(inplace=True)]
    return nn.Sequential(*layers)


class FoldingCompletion(nn.Module):
    """Partial cloud (B, n, 3) -> completed cloud (B, points, 3)."""

    def __init__(self, points, code=512, width=256):
        super().__init__()
        self.encoder = shared_mlp([3, 64, 128, code])
        side = math.isqrt(points)
        rows, cols = side, points // side  # a grid of exactly `points` seeds
        rows += points - rows * cols > 0
        u, v = torch.meshgrid(torch.linspace(-0.5, 0.5, rows), torch.linspace(-0.5, 0.5, cols),
                              indexing="ij")
        self.register_buffer("grid", torch.stack([u, v]).reshape(2, -1)[:, :points].clone())
        self.fold1 = shared_mlp([code + 2, width, width, 3], last_relu=False)
        self.fold2 = shared_mlp([code + 3, width, width, 3], last_relu=False)

    def forward(self, partial):
        code = self.encoder(partial.transpose(1, 2)).amax(-1, keepdim=True)  # (B, code, 1)
        b, n = partial.shape[0], self.grid.shape[1]
        code = code.expand(-1, -1, n)
        first = self.fold1(torch.cat([code, self.grid.expand(b, -1, -1)], 1))
        return self.fold2(torch.cat([code, first], 1)).transpose(1, 2).contiguous()


def emd_certified(pred, target, max_gap=0.01):
    """EMD loss by pcbench: a bijection certified within max_gap."""
    return pcbench.emd_loss(pred, target, max_gap=max_gap)


def train_step(model, optimiser, partial, complete, loss_fn):
    """One step: forward, the loss against the complete cloud, backward, update."""
    optimiser.zero_grad(set_to_none=True)
    loss = loss_fn(model(partial), complete)
    loss.backward()
    optimiser.step()
    return loss


def _demo():
    torch.manual_seed(0)
    complete = torch.randn(4, 1024, 3)
    complete = complete / complete.norm(dim=-1, keepdim=True)  # unit spheres
    partial = complete[:, :512]
    model = FoldingCompletion(1024, code=64, width=32)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(3):
        loss = train_step(model, opt, partial, complete, pcbench.chamfer)
        print("chamfer %.4f" % loss.item())


if __name__ == "__main__":
    _demo()
