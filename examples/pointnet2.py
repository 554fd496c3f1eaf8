"""PointNet++ (Qi et al., 2017) in a page, on either of two sets of point ops:

    ops = PcbenchOps()                 # pcbench's FPS, ball query and kNN
    ops = Pointnet2Ops(module)         # pointnet2_ops' CUDA kernels
    model = SSGClassifier(ops).cuda()  # 32 x 1,024 points, ModelNet-style
    model = MSGSegmenter(ops).cuda()   # 16 x 16,384 points, ScanNet-style

The layers are the papers' (npoint, radius, nsample and MLP widths of the
SSG classifier and the MSG segmenter); only the point ops differ, so the same
weights give the same outputs wherever the ops agree. pcbench's ball query
is asked for pointnet2_ops' semantics (select="first", pad="first"), its FPS
is the same canonical sequence from index 0, and grouping is a gather in
PyTorch (pcbench has no grouping kernel: its gradient is PyTorch's).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

import pcbench


class PcbenchOps:
    """Sampling, grouping and interpolation with pcbench and PyTorch."""

    name = "pcbench"

    def fps(self, xyz, m):
        return pcbench.fps(xyz, m)  # (B, m) int64, from index 0

    def gather(self, feats, idx):  # (B, C, N), (B, M) -> (B, C, M)
        return feats.gather(2, idx.unsqueeze(1).expand(-1, feats.shape[1], -1))

    def ball(self, xyz, centres, radius, k):
        return pcbench.ball_query(xyz, centres, radius, k, select="first", pad="first")[0]

    def group(self, feats, idx):  # (B, C, N), (B, M, k) -> (B, C, M, k)
        b, c, _ = feats.shape
        flat = idx.reshape(b, 1, -1).expand(-1, c, -1)
        return feats.gather(2, flat).reshape(b, c, *idx.shape[1:])

    def three_nn(self, unknown, known):  # -> squared distances, indices (B, n, 3)
        idx, d2 = pcbench.knn(known, unknown, k=3)
        return d2, idx

    def interpolate(self, feats, idx, weight):  # (B, C, m), (B, n, 3) -> (B, C, n)
        b, c, _ = feats.shape
        near = feats.gather(2, idx.reshape(b, 1, -1).expand(-1, c, -1))
        return (near.reshape(b, c, *idx.shape[1:]) * weight.unsqueeze(1)).sum(-1)


class _Gather(torch.autograd.Function):
    """A pointnet2_ops kernel and its gradient kernel as one autograd step."""

    @staticmethod
    def forward(ctx, run, grad, feats, idx, extra):
        ctx.grad, ctx.n = grad, feats.shape[-1]
        ctx.save_for_backward(idx, extra)
        return run(feats.contiguous(), idx) if extra is None else run(feats.contiguous(), idx,
                                                                      extra)

    @staticmethod
    def backward(ctx, out):
        idx, extra = ctx.saved_tensors
        args = (out.contiguous(), idx) if extra is None else (out.contiguous(), idx, extra)
        return None, None, ctx.grad(*args, ctx.n), None, None


class Pointnet2Ops:
    """The same ops by pointnet2_ops' kernels (module: its built extension)."""

    name = "pointnet2_ops"

    def __init__(self, module):
        self.m = module

    def fps(self, xyz, m):
        return self.m.furthest_point_sampling(xyz.contiguous(), m)  # int32

    def gather(self, feats, idx):
        return _Gather.apply(self.m.gather_points, self.m.gather_points_grad, feats,
                             idx.int().contiguous(), None)

    def ball(self, xyz, centres, radius, k):
        return self.m.ball_query(centres.contiguous(), xyz.contiguous(), radius, k)

    def group(self, feats, idx):
        return _Gather.apply(self.m.group_points, self.m.group_points_grad, feats,
                             idx.int().contiguous(), None)

    def three_nn(self, unknown, known):
        d2, idx = self.m.three_nn(unknown.contiguous(), known.contiguous())
        return d2, idx

    def interpolate(self, feats, idx, weight):
        return _Gather.apply(self.m.three_interpolate, self.m.three_interpolate_grad, feats,
                             idx.int().contiguous(), weight.contiguous())


def mlp(widths, dims=2):
    conv, norm = (nn.Conv2d, nn.BatchNorm2d) if dims == 2 else (nn.Conv1d, nn.BatchNorm1d)
    layers = []
    for a, b in zip(widths[:-1], widths[1:]):
        layers += [conv(a, b, 1, bias=False), norm(b), nn.ReLU(inplace=True)]
    return nn.Sequential(*layers)


class SetAbstraction(nn.Module):
    """Sample npoint centres (FPS), group each scale's ball around them,
    run its MLP over every group and max-pool it; npoint None: one group of
    every point (the classifier's last layer)."""

    def __init__(self, ops, npoint, radii, nsamples, mlps, in_channels):
        super().__init__()
        self.ops, self.npoint, self.radii, self.nsamples = ops, npoint, radii, nsamples
        self.mlps = nn.ModuleList(mlp([in_channels + 3] + widths) for widths in mlps)

    def forward(self, xyz, feats):  # xyz (B, N, 3), feats (B, C, N) or None
        if self.npoint is None:
            grouped = xyz.transpose(1, 2).unsqueeze(2)
            if feats is not None:
                grouped = torch.cat([grouped, feats.unsqueeze(2)], 1)
            return None, self.mlps[0](grouped).amax(-1).squeeze(-1)
        ops = self.ops
        centre_idx = ops.fps(xyz, self.npoint)
        xyz_t = xyz.transpose(1, 2).contiguous()
        centres_t = ops.gather(xyz_t, centre_idx)  # (B, 3, npoint)
        centres = centres_t.transpose(1, 2).contiguous()
        out = []
        for radius, k, layers in zip(self.radii, self.nsamples, self.mlps):
            idx = ops.ball(xyz, centres, radius, k)
            grouped = ops.group(xyz_t, idx) - centres_t.unsqueeze(-1)
            if feats is not None:
                grouped = torch.cat([grouped, ops.group(feats, idx)], 1)
            out.append(layers(grouped).amax(-1))
        return centres, torch.cat(out, 1)


class FeaturePropagation(nn.Module):
    """Interpolate the coarse layer's features onto the fine one's points
    from their 3 nearest (inverse distance), concatenate, MLP."""

    def __init__(self, ops, widths):
        super().__init__()
        self.ops, self.mlp = ops, mlp(widths, dims=1)

    def forward(self, fine_xyz, coarse_xyz, fine_feats, coarse_feats):
        d2, idx = self.ops.three_nn(fine_xyz, coarse_xyz)
        weight = 1.0 / (d2.clamp(min=0).sqrt() + 1e-8)
        weight = weight / weight.sum(-1, keepdim=True)
        up = self.ops.interpolate(coarse_feats, idx, weight)
        if fine_feats is not None:
            up = torch.cat([up, fine_feats], 1)
        return self.mlp(up)


class SSGClassifier(nn.Module):
    """PointNet++ SSG classification (ModelNet40: 1,024 points, 40 classes)."""

    def __init__(self, ops, classes=40):
        super().__init__()
        self.sa = nn.ModuleList([
            SetAbstraction(ops, 512, [0.2], [32], [[64, 64, 128]], 0),
            SetAbstraction(ops, 128, [0.4], [64], [[128, 128, 256]], 128),
            SetAbstraction(ops, None, [None], [None], [[256, 512, 1024]], 256)])
        self.head = nn.Sequential(
            nn.Linear(1024, 512, bias=False), nn.BatchNorm1d(512), nn.ReLU(True), nn.Dropout(0.5),
            nn.Linear(512, 256, bias=False), nn.BatchNorm1d(256), nn.ReLU(True), nn.Dropout(0.5),
            nn.Linear(256, classes))

    def forward(self, xyz):
        feats = None
        for layer in self.sa:
            xyz, feats = layer(xyz, feats)
        return self.head(feats)


class MSGSegmenter(nn.Module):
    """PointNet++ MSG semantic segmentation (ScanNet-style blocks; the
    reference implementation's npoint 1024/256/64/16, radii 0.05-0.8,
    nsample 16 and 32, and its MLP widths)."""

    def __init__(self, ops, classes=13):
        super().__init__()
        self.sa = nn.ModuleList([
            SetAbstraction(ops, 1024, [0.05, 0.1], [16, 32], [[16, 16, 32], [32, 32, 64]], 0),
            SetAbstraction(ops, 256, [0.1, 0.2], [16, 32], [[64, 64, 128], [64, 96, 128]], 96),
            SetAbstraction(ops, 64, [0.2, 0.4], [16, 32], [[128, 196, 256], [128, 196, 256]],
                           256),
            SetAbstraction(ops, 16, [0.4, 0.8], [16, 32], [[256, 256, 512], [256, 384, 512]],
                           512)])
        self.fp = nn.ModuleList([
            FeaturePropagation(ops, [256, 128, 128]),
            FeaturePropagation(ops, [512 + 96, 256, 256]),
            FeaturePropagation(ops, [512 + 256, 512, 512]),
            FeaturePropagation(ops, [1024 + 512, 512, 512])])
        self.head = nn.Sequential(nn.Conv1d(128, 128, 1, bias=False), nn.BatchNorm1d(128),
                                  nn.ReLU(True), nn.Dropout(0.5), nn.Conv1d(128, classes, 1))

    def forward(self, xyz):
        xyzs, feats = [xyz], [None]
        for layer in self.sa:
            x, f = layer(xyzs[-1], feats[-1])
            xyzs.append(x)
            feats.append(f)
        for i in range(len(self.fp)):  # coarse to fine: fp[-1] first
            j = len(self.fp) - i
            feats[j - 1] = self.fp[j - 1](xyzs[j - 1], xyzs[j], feats[j - 1], feats[j])
        return self.head(feats[0])  # (B, classes, N)


def train_step(model, optimiser, xyz, labels):
    """One step: forward, cross-entropy, backward, update."""
    optimiser.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(xyz), labels)
    loss.backward()
    optimiser.step()
    return loss
