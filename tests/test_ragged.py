"""Ragged batches from Python: every call with lengths equals the call on
each cloud alone (numpy, CPU tensors, CUDA tensors), padding around it,
the defined answers of empty clouds, the layout converters and bad lengths."""
import math

import numpy as np
import pytest

import pcbench

try:
    import torch
except ImportError:
    torch = None
cuda = torch is not None and torch.cuda.is_available()
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")
needs_cuda = pytest.mark.skipif(not cuda, reason="no CUDA device for torch")

LA = [64, 0, 1, 9, 50]  # full, empty, one point, fewer than m, most
LB = [40, 7, 0, 5, 33]


def padded(seed, lengths, width):
    """A padded batch whose padding is NaN: a call that reads it fails."""
    rng = np.random.default_rng(seed)
    x = np.full((len(lengths), width, 3), np.nan, dtype=np.float32)
    for i, n in enumerate(lengths):
        x[i, :n] = rng.random((n, 3), dtype=np.float32)
    return x


def kinds():
    out = [("numpy", lambda x: x)]
    if torch is not None:
        out.append(("cpu", torch.from_numpy))
    if cuda:
        out.append(("cuda", lambda x: torch.from_numpy(x).cuda()))
    return out


def host(x):
    return x.cpu().numpy() if torch is not None and isinstance(x, torch.Tensor) else np.asarray(x)


@pytest.mark.parametrize("kind,to", kinds())
def test_fps_each_cloud_alone(kind, to):
    x, m = padded(1, LA, 64), 12
    idx = host(pcbench.fps(to(x), m, lengths=LA))
    assert idx.shape == (5, m)
    for i, n in enumerate(LA):
        take = min(m, n)
        if take:
            alone = host(pcbench.fps(to(np.ascontiguousarray(x[i:i + 1, :n])), take))[0]
            assert (idx[i, :take] == alone).all(), (kind, i)
        assert (idx[i, take:] == -1).all()


@pytest.mark.parametrize("kind,to", kinds())
def test_nn_knn_ball_chamfer_each_cloud_alone(kind, to):
    a, b = padded(2, LA, 64), padded(3, LB, 40)
    A, B = to(a), to(b)
    idx, d2 = (host(v) for v in pcbench.nn(A, B, ref_lengths=LA, query_lengths=LB))
    kidx, kd2 = (host(v) for v in pcbench.knn(A, B, k=4, ref_lengths=LA, query_lengths=LB))
    bidx, bcount = (host(v) for v in pcbench.ball_query(A, B, 0.4, 8, select="nearest",
                                                         xyz_lengths=LA, centres_lengths=LB))
    ia, da, ib, db = (host(v) for v in pcbench.chamfer_nearest(A, B, a_lengths=LA,
                                                               b_lengths=LB))
    for i, (n, nq) in enumerate(zip(LA, LB)):
        ai, bi = to(np.ascontiguousarray(a[i:i + 1, :n])), to(np.ascontiguousarray(b[i:i + 1, :nq]))
        if n and nq:
            one = [host(v)[0] for v in pcbench.nn(ai, bi)]
            assert (idx[i, :nq] == one[0]).all() and (d2[i, :nq] == one[1]).all()
            one = [host(v)[0] for v in pcbench.knn(ai, bi, k=4)]
            assert (kidx[i, :nq] == one[0]).all() and (kd2[i, :nq] == one[1]).all()
            one = [host(v)[0] for v in pcbench.ball_query(ai, bi, 0.4, 8, select="nearest")]
            assert (bidx[i, :nq] == one[0]).all() and (bcount[i, :nq] == one[1]).all()
            one = [host(v)[0] for v in pcbench.chamfer_nearest(ai, bi)]
            assert (ia[i, :n] == one[0]).all() and (ib[i, :nq] == one[2]).all()
        else:  # an empty cloud on either side: padding, never point 0
            assert (idx[i, :nq] == -1).all() and np.isinf(d2[i, :nq]).all()
            assert (kidx[i] == -1).all() and (bcount[i] == 0).all()
            assert (ia[i, :n] == -1).all() and (ib[i, :nq] == -1).all()
        assert (idx[i, nq:] == -1).all() and (kidx[i, nq:] == -1).all()
        assert (bidx[i, nq:] == -1).all() and (ia[i, n:] == -1).all() and (ib[i, nq:] == -1).all()


@pytest.mark.parametrize("kind,to", kinds())
def test_emd_each_pair_alone(kind, to):
    lengths = [32, 0, 1, 20]
    a, b = padded(4, lengths, 32), padded(5, lengths, 32)
    match, value, bound = (host(v) for v in pcbench.emd(to(a), to(b), 1e-2, lengths=lengths))
    for i, n in enumerate(lengths):
        if n:
            one = pcbench.emd(to(np.ascontiguousarray(a[i:i + 1, :n])),
                              to(np.ascontiguousarray(b[i:i + 1, :n])), 1e-2)
            assert (match[i, :n] == host(one[0])[0]).all() and value[i] == host(one[1])[0]
        else:
            assert math.isnan(value[i]) and bound[i] == 0
        assert (match[i, n:] == -1).all()


@needs_torch
def test_chamfer_loss_ragged_equals_each_pair_and_empty_is_nan():
    a, b = torch.from_numpy(padded(6, LA, 64)), torch.from_numpy(padded(7, LB, 40))
    for convention in ("squared-mean-sum", "euclidean-mean-average", "squared-sum-forward"):
        got = pcbench.chamfer(a, b, reduction="none", convention=convention, a_lengths=LA,
                              b_lengths=LB)
        for i, (n, nq) in enumerate(zip(LA, LB)):
            if n and nq:
                one = pcbench.chamfer(a[i:i + 1, :n], b[i:i + 1, :nq], reduction="none",
                                      convention=convention)[0]
                assert torch.allclose(got[i], one, rtol=1e-5, atol=1e-7)
    mean = pcbench.chamfer(a, b, reduction="none", a_lengths=LA, b_lengths=LB)
    assert torch.isnan(mean[1]) and torch.isnan(mean[2])  # PyTorch3D #1174 says 0
    total = pcbench.chamfer(a, b, reduction="none", convention="squared-sum-sum",
                            a_lengths=LA, b_lengths=LB)
    assert math.isinf(total[1]) and math.isinf(total[2])
    # the gradient flows to the points of each cloud, never to its padding
    a0 = torch.from_numpy(np.nan_to_num(padded(8, LA, 64))).requires_grad_()
    b0 = torch.from_numpy(np.nan_to_num(padded(9, LB, 40)))
    keep = [0, 3, 4]
    pcbench.chamfer(a0, b0, reduction="none", a_lengths=LA, b_lengths=LB)[keep].sum().backward()
    g = a0.grad
    assert torch.isfinite(g).all() and (g[0].abs().sum() > 0)
    assert (g[3, LA[3]:] == 0).all() and (g[4, LA[4]:] == 0).all()


@needs_torch
def test_layout_converters():
    batch = torch.tensor([0, 0, 0, 2, 2, 3])
    assert pcbench.lengths_from_batch(batch).tolist() == [3, 0, 2, 1]
    assert pcbench.lengths_from_batch(batch, size=6).tolist() == [3, 0, 2, 1, 0, 0]
    assert pcbench.lengths_from_offsets(torch.tensor([3, 3, 5, 6], dtype=torch.int32)).tolist() \
        == [3, 0, 2, 1]
    points = torch.arange(18, dtype=torch.float32).reshape(6, 3)
    pad = pcbench.to_padded(points, torch.tensor([3, 0, 2, 1]))
    assert pad.shape == (4, 3, 3) and (pad[0] == points[:3]).all()
    assert (pad[2, :2] == points[3:5]).all() and (pad[3, 0] == points[5]).all()
    with pytest.raises(ValueError, match="sorted"):
        pcbench.lengths_from_batch(torch.tensor([1, 0]))
    with pytest.raises(ValueError, match="non-decreasing"):  # pointops reads past its end there
        pcbench.lengths_from_offsets(torch.tensor([4, 2]))
    with pytest.raises(ValueError, match=r"\(5, 3\)"):
        pcbench.to_padded(points[:5], torch.tensor([3, 0, 2, 1]))


def test_bad_lengths_get_clear_errors():
    x = padded(10, [8, 8], 8)
    with pytest.raises(ValueError, match=r"lengths\[1\] = 9 is outside 0..8"):
        pcbench.fps(x, 4, lengths=[8, 9])
    with pytest.raises(ValueError, match="2 lengths"):
        pcbench.fps(x, 4, lengths=[8])
    with pytest.raises(ValueError, match="batch of clouds"):
        pcbench.fps(x[0], 4, lengths=[8])
    with pytest.raises(ValueError, match="start index 5 out of range of cloud 1"):
        pcbench.fps(x, 4, start=5, lengths=[8, 3])


@needs_cuda
def test_cuda_fps_reads_lengths_on_the_device():
    """cuda_pruned takes the lengths on the GPU (no host loop): the same
    answer as the CPU's, lidar-sized clouds included."""
    rng = np.random.default_rng(11)
    lengths = [6000, 0, 3000, 5999, 1]
    x = rng.random((5, 6000, 3), dtype=np.float32)
    cpu = pcbench.fps(x, 512, lengths=lengths)
    gpu = pcbench.fps(torch.from_numpy(x).cuda(), 512, lengths=torch.tensor(lengths).cuda())
    assert (gpu.cpu().numpy() == cpu).all()
    # a length the device reads as out of range: the asynchronous check says so
    assert pcbench.fps(torch.from_numpy(x).cuda(), 8, lengths=lengths).shape == (5, 8)


@needs_cuda
def test_cuda_reads_lengths_on_the_device(monkeypatch):
    """FPS, nn, knn, chamfer and the chamfer loss read a ragged batch's
    lengths on the GPU (cuda_pruned and the cuda_tiles kernels): no host
    loop, and the answers equal the CPU's cloud-by-cloud ones."""
    asks = pcbench._r.needs_host_loop

    def no_loop(chosen):  # the library's choice reads the lengths: no loop here
        if asks(chosen):
            raise AssertionError("a host loop would run (%s)" % chosen)
        return False
    monkeypatch.setattr(pcbench._r, "needs_host_loop", no_loop)
    a, b = padded(12, LA, 64), padded(13, LB, 40)
    la, lb = torch.tensor(LA).cuda(), torch.tensor(LB).cuda()
    A, B = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()  # NaN padding: never read
    pairs = [(pcbench.nn(A, B, ref_lengths=la, query_lengths=lb),
              pcbench.nn(a, b, ref_lengths=LA, query_lengths=LB)),
             (pcbench.knn(A, B, k=5, ref_lengths=la, query_lengths=lb),
              pcbench.knn(a, b, k=5, ref_lengths=LA, query_lengths=LB)),
             (pcbench.chamfer_nearest(A, B, a_lengths=la, b_lengths=lb),
              pcbench.chamfer_nearest(a, b, a_lengths=LA, b_lengths=LB))]
    for gpu, cpu in pairs:
        for g, c in zip(gpu, cpu):
            assert (g.cpu().numpy() == c).all()
    loss = pcbench.chamfer(A, B, reduction="none", a_lengths=la, b_lengths=lb)
    want = pcbench.chamfer(A.cpu(), B.cpu(), reduction="none", a_lengths=LA, b_lengths=LB)
    assert torch.allclose(loss.cpu(), want, equal_nan=True)
