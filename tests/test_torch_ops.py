"""pytest: pcbench as a PyTorch 2 library. Its operators (torch.library)
pass opcheck; torch.compile(fullgraph=True) and torch.export hold a step
that calls them; every CUDA call captured in a CUDA graph and replayed on
new inputs gives the uncaptured answers, and a call that cannot be captured
says so without poisoning the process; FPS indices are distinct; tensors on
a second GPU run there. Skipped without torch, the CUDA parts without a
GPU, the two-GPU parts without two. Run by tests/python.sh (make test)."""
import math

import pytest

import pcbench

torch = pytest.importorskip("torch")
cuda = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not cuda, reason="no CUDA device for torch")
needs_two = pytest.mark.skipif(not cuda or torch.cuda.device_count() < 2,
                               reason="fewer than two CUDA devices")
DEVICES = ["cpu"] + (["cuda"] if cuda else [])


def clouds(seed, *shape, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(shape + (3,), generator=g).to(device)


def samples(name, device):
    """An operator and arguments that exercise it."""
    x, y = clouds(1, 2, 300, device=device), clouds(2, 2, 200, device=device)
    ops = torch.ops.pcbench
    return {
        "fps": (ops.fps.default, (x, 50, 3)),
        "nn": (ops.nn.default, (x, y)),
        "knn": (ops.knn.default, (x, y, 5)),
        "ball_query": (ops.ball_query.default, (x, y, 0.2, 16, "first")),
        "chamfer_nearest": (ops.chamfer_nearest.default, (x, y)),
        "chamfer_value": (ops.chamfer_value.default,
                          (x.clone().requires_grad_(), y.clone().requires_grad_())),
        "emd": (ops.emd.default, (x[:, :200].contiguous(), y, 1e-2)),
        "grid": (ops.grid.default, (x, [0.1, 0.2, 0.1], None, "nearest")),
        "serialize": (ops.serialize.default, (x, [0.1, 0.2, 0.1], None, "hilbert", 0)),
    }[name]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["fps", "nn", "knn", "ball_query", "chamfer_nearest",
                                  "chamfer_value", "emd", "grid", "serialize"])
def test_opcheck(name, device):
    op, args = samples(name, device)
    torch.library.opcheck(op, args)


def ragged_samples(name, device):
    """An operator and arguments with a ragged batch's lengths (an empty
    cloud among them)."""
    x, y = clouds(11, 3, 300, device=device), clouds(12, 3, 200, device=device)
    lx = torch.tensor([300, 0, 120], device=device)
    ly = torch.tensor([17, 200, 0], device=device)
    ops = torch.ops.pcbench
    return {
        "fps": (ops.fps.default, (x, 50, 3, lx)),
        "nn": (ops.nn.default, (x, y, lx, ly)),
        "knn": (ops.knn.default, (x, y, 5, lx, ly)),
        "ball_query": (ops.ball_query.default, (x, y, 0.2, 16, "first", lx, ly)),
        "chamfer_nearest": (ops.chamfer_nearest.default, (x, y, lx, ly)),
        # (no empty pair: its value is NaN, which opcheck's comparison refuses)
        "emd": (ops.emd.default, (x[:, :200].contiguous(), y, 1e-2, ly.clamp(min=9))),
        "grid": (ops.grid.default, (x, [0.1, 0.1, 0.1], [-1.0, 0.0, 0.0], "mean", lx)),
        "serialize": (ops.serialize.default, (x, [0.1, 0.1, 0.1], [-1.0, -1.0, -1.0], "morton",
                                              8, lx)),
    }[name]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["fps", "nn", "knn", "ball_query", "chamfer_nearest", "emd",
                                  "grid", "serialize"])
def test_opcheck_ragged(name, device):
    """The schemas take the lengths: a ragged call is one operator too."""
    op, args = ragged_samples(name, device)
    torch.library.opcheck(op, args)


def ragged_step(x, y, lx, ly):
    """A ragged batch's calls, lengths as tensors (PyTorch3D's layout)."""
    idx = pcbench.fps(x, 32, lengths=lx)
    kidx, kd2 = pcbench.knn(x, y, k=4, ref_lengths=lx, query_lengths=ly)
    group, count = pcbench.ball_query(x, y, 0.3, 8, xyz_lengths=lx, centres_lengths=ly)
    nidx, nd2 = pcbench.nn(x, y, ref_lengths=lx, query_lengths=ly)
    ia, da, ib, db = pcbench.chamfer_nearest(x, y, a_lengths=lx, b_lengths=ly)
    voxels = pcbench.grid(x, 0.25, select="nearest", lengths=lx)
    codes = pcbench.serialize(x, 0.25, lengths=lx)
    return (idx, kidx, kd2, group, count, nidx, nd2, ia, da, ib, db) + voxels + codes


@pytest.mark.parametrize("device", DEVICES)
def test_compile_fullgraph_holds_a_ragged_batch(device):
    """torch.compile(fullgraph=True) traces the ragged calls (the lengths
    are the operators' arguments: no graph break) and matches eager."""
    torch._dynamo.reset()
    x, y = clouds(13, 3, 256, device=device), clouds(14, 3, 192, device=device)
    lx = torch.tensor([256, 40, 0], device=device)
    ly = torch.tensor([192, 0, 77], device=device)
    want = ragged_step(x, y, lx, ly)
    got = torch.compile(ragged_step, fullgraph=True, backend="aot_eager")(x, y, lx, ly)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape and torch.equal(g, w)


def test_a_compiled_library_for_other_schemas_is_not_loaded(tmp_path):
    """A compiled library without this package's schema mark (an older
    build) is never loaded: loading it would abort the process. The package
    warns and keeps its Python kernels."""
    import subprocess
    import sys
    stale = tmp_path / "libpcbench_torch.so"
    stale.write_bytes(b"\x7fELF not this package's operators")
    code = ("import warnings; warnings.simplefilter('always'); import pcbench; "
            "print(sorted(pcbench._ops.compiled))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(__import__("os").environ, PCBENCH_TORCH_OPS=str(stale)))
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
    assert "built for other operator schemas" in run.stderr


compiled = pytest.mark.skipif(not pcbench._ops.compiled,
                              reason="no compiled operators built for this PyTorch "
                              "(make torch-ops)")


@compiled
def test_compiled_autograd_matches_the_formula():
    """chamfer_value's compiled autograd (every device) against the
    Python chamfer's gradient in float64."""
    for device in DEVICES:
        a, b = clouds(5, 3, 70, device=device), clouds(6, 3, 50, device=device)
        a1, b1 = a.clone().requires_grad_(), b.clone().requires_grad_()
        value = torch.ops.pcbench.chamfer_value.default(a1, b1)[0]
        value.sum().backward()
        a2, b2 = a.double().requires_grad_(), b.double().requires_grad_()
        pcbench.chamfer(a2, b2, reduction="sum").backward()
        torch.testing.assert_close(a1.grad, a2.grad.float(), rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(b1.grad, b2.grad.float(), rtol=1e-5, atol=1e-6)


@compiled
@needs_cuda
def test_compiled_kernels_match_the_python_kernels():
    """The compiled CUDA kernels give the ctypes kernels' answers bit for bit
    (unbatched and batched, grid-sized and tiles-sized clouds) and their
    errors: TypeError, ValueError, and a library error as PcbenchError."""
    ops = torch.ops.pcbench
    for shape_a, shape_b in [((300,), (200,)), ((4, 1024), (4, 900)), ((2, 5000), (2, 6000))]:
        x, y = clouds(7, *shape_a, device="cuda"), clouds(8, *shape_b, device="cuda")
        pairs = [(ops.nn.default(x, y), pcbench._nn_direct(x, y, None)),
                 (ops.knn.default(x, y, 7), pcbench._knn_direct(x, y, 7, None)),
                 ((ops.fps.default(x, 40, 3),), (pcbench._fps_direct(x, 40, 3, None),)),
                 (ops.chamfer_nearest.default(x, y), pcbench._chamfer_nearest_flat(x, y, None))]
        for select in ("first", "nearest"):
            pairs.append((ops.ball_query.default(x, y, 0.1, 9, select),
                          pcbench.ops.ball._ball_direct(x, y, 0.1, 9, select, None)))
        if x.dim() == 3:
            pairs.append((ops.chamfer_value.default(x, y), pcbench._chamfer_value_direct(x, y)))
        for got, want in pairs:
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and g.shape == w.shape and torch.equal(g, w)
    # ragged: on the device where the chosen implementation reads the lengths,
    # cloud by cloud where none does (clouds past the tiles' 16,384 points)
    x, y = clouds(7, 3, 1000, device="cuda"), clouds(8, 3, 900, device="cuda")
    lx, ly = torch.tensor([1000, 0, 333], device="cuda"), torch.tensor([5, 900, 0]).cuda()
    big = clouds(10, 2, 20000, device="cuda")
    lbig = torch.tensor([20000, 7000], device="cuda")
    pairs = [(ops.nn.default(x, y, lx, ly), pcbench.ops.nn._nn_ragged(x, y, None, lx, ly)),
             (ops.knn.default(x, y, 7, lx, ly), pcbench.ops.knn._knn_ragged(x, y, 7, None, lx, ly)),
             (ops.nn.default(big, big, lbig, lbig),
              pcbench.ops.nn._nn_ragged(big, big, None, lbig, lbig)),
             (ops.chamfer_nearest.default(big, big, lbig, None),
              pcbench.ops.chamfer._chamfer_ragged(big, big, None, lbig, None)),
             ((ops.fps.default(x, 40, 3, lx),), (pcbench.ops.fps._fps_ragged(x, 40, 3, None, lx),)),
             (ops.chamfer_nearest.default(x, y, lx, ly),
              pcbench.ops.chamfer._chamfer_ragged(x, y, None, lx, ly)),
             (ops.ball_query.default(x, y, 0.1, 9, "nearest", lx, ly),
              pcbench.ops.ball._ball_ragged(x, y, 0.1, 9, "nearest", None, lx, ly))]
    for got, want in pairs:
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape and torch.equal(g, w)
    # grid sampling: the four selections, an origin given, a ragged batch
    for select in ("first", "nearest", "random", "mean"):
        for origin in (None, [-1.0, 0.5, 0.0]):
            got = ops.grid.default(x, [0.05, 0.05, 0.1], origin, select, None, 99)
            want = pcbench.ops.grid._grid_direct(x, [0.05, 0.05, 0.1], origin, select, None, 99)
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and g.shape == w.shape and torch.equal(g, w)
    for select in ("first", "mean"):
        got = ops.grid.default(x, [0.05] * 3, None, select, lx)
        want = pcbench.ops.grid._grid_ragged(x, [0.05] * 3, None, select, None, lx)
        assert all(torch.equal(g, w) for g, w in zip(got, want))
    with pytest.raises(ValueError, match="select must be 'first', 'nearest', 'random' or "
                       "'mean', not 'middle'"):
        ops.grid.default(x, [0.05] * 3, None, "middle")
    # serialization: both curves, a depth given, an origin given, a ragged batch read whole
    for curve in ("morton", "hilbert"):
        for origin, depth in ((None, 0), ([-1.0, -2.0, -1.5], 12)):
            got = ops.serialize.default(x, [0.05, 0.05, 0.1], origin, curve, depth)
            want = pcbench.ops.serialize._serialize(x, [0.05, 0.05, 0.1], origin, curve, depth,
                                                    None, None)
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and g.shape == w.shape and torch.equal(g, w)
    got = ops.serialize.default(x, [0.05] * 3, None, "hilbert", 0, lx)
    want = pcbench.ops.serialize._serialize(x, [0.05] * 3, None, "hilbert", 0, None, lx)
    assert all(torch.equal(g, w) for g, w in zip(got, want))
    with pytest.raises(ValueError, match="unknown curve 'peano' \\(morton, hilbert\\)"):
        ops.serialize.default(x, [0.05] * 3, None, "peano", 0)
    with pytest.raises(ValueError, match="depth 22: need 1 to 21 bits an axis"):
        ops.serialize.default(x, [0.05] * 3, None, "morton", 22)
    # EMD: the auction's matchings may differ between runs (its bids race), so each
    # answer is held to its contract: a bijection certified within the gap, the value
    # the matching's mean distance; a ragged batch pair by pair
    e, p = clouds(12, 3, 600, device="cuda"), clouds(11, 3, 600, device="cuda")
    for got in (ops.emd.default(e, p, 0.01), pcbench.ops.emd._emd_direct(e, p, 0.01, None)):
        match, value, bound = got
        assert match.dtype == torch.int64 and value.dtype == bound.dtype == torch.float64
        assert torch.equal(match.sort(-1).values, torch.arange(600, device="cuda").expand(3, -1))
        assert bool((bound <= 0.01).all())
        mean = (e - p.gather(1, match[..., None].expand(-1, -1, 3))).norm(dim=-1).double().mean(-1)
        torch.testing.assert_close(value, mean, rtol=1e-5, atol=0)
    match, value, bound = ops.emd.default(e, p, 0.01, torch.tensor([600, 0, 200], device="cuda"))
    assert bool((match[1] == -1).all()) and bool((match[2, 200:] == -1).all())
    assert torch.equal(match[2, :200].sort().values, torch.arange(200, device="cuda"))
    assert math.isnan(value[1].item()) and bound[1].item() == 0
    with pytest.raises(ValueError, match="as many points"):
        ops.emd.default(x, y, 0.01)
    with pytest.raises(ValueError, match="select must be 'first' or 'nearest', not 'far'"):
        ops.ball_query.default(x, y, 0.1, 9, "far")
    with pytest.raises(ValueError, match="radius must be a finite number > 0"):
        ops.ball_query.default(x, y, -1.0, 9, "first")
    with pytest.raises(ValueError, match="ref_lengths\\[1\\] = 1001 is outside 0..1000"):
        ops.nn.default(x, y, torch.tensor([1, 1001, 0]), None)
    x = clouds(9, 2, 100, device="cuda")
    with pytest.raises(TypeError, match="pcbench.nn: ref must be float32"):
        ops.nn.default(x.double(), x)
    with pytest.raises(ValueError, match="same batch"):
        pcbench.nn(x, x[:1].contiguous())
    with pytest.raises(ValueError, match="not contiguous"):
        ops.chamfer_nearest.default(x.transpose(0, 1), x)
    with pytest.raises(ValueError, match="m \\(samples\\) = 101 is outside 1..100"):
        pcbench.fps(x, 101)
    with pytest.raises(pcbench.PcbenchError, match="pcbench.knn: "):
        pcbench.knn(x, x, k=1000)  # padding allowed (k <= 1,024), beyond every CUDA kNN's k


@needs_cuda
def test_self_knn_is_the_two_cloud_call():
    """knn(x) (one cloud, its queries its own points: one grid for both
    sides on CUDA) gives the rows of knn(x, copy of x), dense and ragged,
    and they are naive's (canonical)."""
    x = clouds(21, 3, 700, device="cuda")
    lx = torch.tensor([700, 0, 333], device="cuda")
    for lengths in (None, lx):
        got = pcbench.knn(x, k=20, ref_lengths=lengths)
        want = pcbench.knn(x, x.clone(), k=20, ref_lengths=lengths,
                           query_lengths=None if lengths is None else lengths.clone())
        assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
        assert got[0].dtype == torch.int64
    assert bool(pcbench.check_knn(x, x, *pcbench.knn(x, k=20), canonical=True))


def step(x, y):
    """A training step's calls: sampling, grouping, neighbours and losses."""
    idx = pcbench.fps(x, 64)
    centres = torch.gather(x, 1, idx[..., None].expand(-1, -1, 3))
    group, count = pcbench.ball_query(x, centres, 0.3, 16, pad="first")
    kidx, kd2 = pcbench.knn(x, centres, k=8)
    nidx, nd2 = pcbench.nn(y, x)
    loss = (pcbench.chamfer(x, y) + pcbench.emd_loss(x, y)
            + pcbench.chamfer(x, y, convention="euclidean-mean-average") + kd2.mean())
    return idx, group, count, kidx, nidx, nd2, loss


def check_step(got, want):
    for g, w in zip(got[:-1], want[:-1]):
        assert g.dtype == w.dtype and torch.equal(g, w)
    # the EMD matching is any certified within 1%: the loss within about that
    torch.testing.assert_close(got[-1], want[-1], rtol=2e-2, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_compile_fullgraph_matches_eager(device):
    torch._dynamo.reset()
    x = clouds(3, 4, 512, device=device).requires_grad_()
    y = clouds(4, 4, 512, device=device)
    want = step(x, y)
    (grad_want,) = torch.autograd.grad(want[-1], x)
    backend = "inductor" if device == "cuda" else "aot_eager"  # no C++ toolchain asked of CPUs
    compiled = torch.compile(step, fullgraph=True, backend=backend)
    got = compiled(x, y)
    check_step(got, want)
    (grad_got,) = torch.autograd.grad(got[-1], x)
    torch.testing.assert_close(grad_got, grad_want, rtol=5e-2, atol=1e-4)


@needs_cuda
def test_compile_reduce_overhead_replays_graphs():
    """mode="reduce-overhead": Inductor's CUDA graphs around the operators,
    replayed on new inputs, against eager."""
    torch._dynamo.reset()
    compiled = torch.compile(step, mode="reduce-overhead", fullgraph=True)
    for seed in (50, 51, 52, 53):
        x = clouds(seed, 4, 512, device="cuda")
        y = clouds(seed + 10, 4, 512, device="cuda")
        check_step([t.clone() for t in compiled(x, y)], step(x, y))


class Sampler(torch.nn.Module):
    def forward(self, x, y):
        idx = pcbench.fps(x, 32)
        nidx, nd2 = pcbench.nn(y, x)
        return idx, nidx, pcbench.chamfer(x, y)


@pytest.mark.parametrize("device", DEVICES)
def test_export_holds_the_ops(device):
    x, y = clouds(5, 2, 400, device=device), clouds(6, 2, 300, device=device)
    ep = torch.export.export(Sampler(), (x, y))
    text = str(ep.graph)
    assert "pcbench.fps" in text and "pcbench.nn" in text
    for g, w in zip(ep.module()(x, y), Sampler()(x, y)):
        torch.testing.assert_close(g, w)


@pytest.mark.parametrize("device", DEVICES)
def test_fps_indices_distinct_when_only_duplicates_remain(device):
    """64 distinct points each repeated 4 times, K = N: PyTorch3D #1486."""
    base = clouds(7, 64)
    x = base.repeat(4, 1)[torch.randperm(256, generator=torch.Generator().manual_seed(1))]
    x = x.contiguous().to(device)
    for start in (0, 5):
        idx = pcbench.fps(x, 256, start=start)
        assert sorted(idx.tolist()) == list(range(256)), "repeated indices"
        assert pcbench.check_fps(x, idx, start=start, canonical=True)
        # the first 64 are the distinct positions, the rest in index order
        assert len({tuple(p) for p in x[idx[:64]].tolist()}) == 64
        tail = idx[64:].tolist()
        assert tail == sorted(tail)
    batch = torch.stack([x, x.flip(0)])
    got = pcbench.fps(batch, 256, start=2)
    assert all(sorted(row.tolist()) == list(range(256)) for row in got)


# ---- CUDA graphs ------------------------------------------------------------------
CAPTURED = {
    "fps": lambda x, y: pcbench.fps(x, 64, start=1),
    "nn": lambda x, y: pcbench.nn(y, x),
    "nn_bvh": lambda x, y: pcbench.nn(y, x, impl="cuda_bvh"),
    "knn": lambda x, y: pcbench.knn(x, y, k=8),
    "ball_query": lambda x, y: pcbench.ball_query(x, y[:, :256].contiguous(), 0.2, 32),
    "ball_query_grid": lambda x, y: pcbench.ball_query(
        x.repeat(1, 3, 1).contiguous() * 3, y[:, :256].contiguous(), 0.2, 32,
        select="nearest"),
    "chamfer_nearest": lambda x, y: pcbench.chamfer_nearest(x, y),
    "chamfer": lambda x, y: pcbench.chamfer(x, y),
    "emd": lambda x, y: pcbench.emd(x, y, max_gap=1e-2)[:2],
    "grid": lambda x, y: pcbench.grid(x, 0.05, select="nearest"),
    "serialize": lambda x, y: pcbench.serialize(x, 0.05),  # the depth settled on the device
    "serialize_ragged": lambda x, y: pcbench.serialize(  # lengths made on the device
        x, 0.02, "morton", depth=8, lengths=(y[:, 0, 0] * 1024).long()),
}


def flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


@needs_cuda
@pytest.mark.parametrize("name", sorted(CAPTURED))
def test_cuda_graph_replay_matches_uncaptured(name):
    fn = CAPTURED[name]
    sx, sy = clouds(10, 4, 1024, device="cuda"), clouds(11, 4, 1024, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up: the scratch of these sizes is made
        for _ in range(2):
            fn(sx, sy)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = flat(fn(sx, sy))
    for seed in (12, 13, 14):
        x, y = clouds(seed, 4, 1024, device="cuda"), clouds(seed + 50, 4, 1024, device="cuda")
        sx.copy_(x)
        sy.copy_(y)
        graph.replay()
        want = flat(fn(x, y))
        for g, w in zip(out, want):
            if name == "emd" and g.dtype == torch.float64:
                torch.testing.assert_close(g, w, rtol=2e-2, atol=0)  # both within 1%
            elif name != "emd":
                assert torch.equal(g, w), name
        if name == "emd":
            assert pcbench.check_emd(x, y, out[0], max_gap=2e-2)


@needs_cuda
def test_cuda_graph_capture_without_warm_up_fails_cleanly():
    x = clouds(20, 3, 777, device="cuda")  # sizes no call made before
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(pcbench.PcbenchError, match="run the call once, uncaptured"):
        with torch.cuda.graph(graph):
            pcbench.fps(x, 33)
    # the process goes on: an unrelated call and the same call uncaptured
    assert torch.ones(5, device="cuda").sum().item() == 5
    idx = pcbench.fps(x, 33)
    assert pcbench.check_fps(x, idx, canonical=True)


@needs_cuda
def test_cuda_graph_training_step_replays():
    """A whole step (forward, backward, optimizer) captured and replayed."""
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 3).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=1e-2)
    x, y = clouds(30, 8, 1024, device="cuda"), clouds(31, 8, 1024, device="cuda")

    def train_step():
        out = net(x)
        centres = out.gather(1, pcbench.fps(out.detach(), 64)[..., None].expand(-1, -1, 3))
        loss = pcbench.chamfer(out, y) + pcbench.emd_loss(out, y) + centres.pow(2).mean()
        opt.zero_grad(set_to_none=False)
        loss.backward()
        opt.step()
        return loss

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            train_step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        loss = train_step()
    first = None
    for _ in range(5):
        graph.replay()
        first = loss.item() if first is None else first
    assert torch.isfinite(loss) and loss.item() < first  # it trains


# ---- several GPUs -----------------------------------------------------------------
@needs_two
def test_tensors_on_the_second_gpu():
    torch.cuda.set_device(0)
    x, y = clouds(40, 4, 2048), clouds(41, 4, 2048)
    on1 = [t.to("cuda:1") for t in (x, y)]
    with torch.cuda.device(1):
        side = torch.cuda.Stream()  # the current stream of device 1, not of 0
    with torch.cuda.stream(side):
        got = [pcbench.fps(on1[0], 128), pcbench.nn(on1[1], on1[0])[0],
               pcbench.knn(on1[0], k=4)[0], pcbench.ball_query(on1[0], on1[1], 0.1, 8)[0],
               pcbench.chamfer(*on1), pcbench.emd(*on1, max_gap=1e-2)[0]]
    side.synchronize()
    assert all(g.device == torch.device("cuda:1") for g in got)
    want = [pcbench.fps(x, 128), pcbench.nn(y, x)[0], pcbench.knn(x, k=4)[0],
            pcbench.ball_query(x, y, 0.1, 8)[0], pcbench.chamfer(x, y)]
    for g, w in zip(got, want):
        torch.testing.assert_close(g.cpu(), w)
    assert pcbench.check_emd(x, y, got[5], max_gap=1e-2)
    assert torch.cuda.current_device() == 0


@needs_two
def test_ddp_two_ranks():
    import os
    import subprocess
    import sys
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ddp_two_ranks.py")
    run = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("parameters equal on every rank") == 2


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_other_float_dtypes_are_searched_as_float32(device, dtype):
    """float16, bfloat16 and float64 clouds: the answers of the float32
    clouds they round to (the 16-bit ones exactly), distances float32; the
    losses computed in float32 for 16-bit inputs, their gradients back in
    the input's dtype; the judges take them; grid sampling refuses float64
    (rounding would move points between voxels)."""
    x, y = clouds(40, 2, 300, device=device).to(dtype), clouds(41, 2, 200, device=device).to(dtype)
    fx, fy = x.float(), y.float()
    pairs = [(pcbench.fps(x, 20), pcbench.fps(fx, 20)),
             (pcbench.nn(x, y), pcbench.nn(fx, fy)),
             (pcbench.knn(x, y, 6), pcbench.knn(fx, fy, 6)),
             (pcbench.ball_query(x, y, 0.2, 8), pcbench.ball_query(fx, fy, 0.2, 8)),
             (pcbench.chamfer_nearest(x, y), pcbench.chamfer_nearest(fx, fy))]
    for got, want in pairs:
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            assert g.dtype == w.dtype and torch.equal(g, w)
    assert bool(pcbench.check_knn(x, y, *pcbench.knn(x, y, 6)))
    a = x.clone().requires_grad_()
    loss = pcbench.chamfer(a, y)
    assert loss.dtype == (torch.float64 if dtype == torch.float64 else torch.float32)
    torch.testing.assert_close(loss.double(), pcbench.chamfer(fx, fy).double(),
                               rtol=1e-5 if dtype != torch.float64 else 1e-4, atol=0)
    loss.backward()
    assert a.grad.dtype == dtype
    match = pcbench.emd(x[:, :200].contiguous(), y, max_gap=1e-2)[0]
    assert torch.equal(match.sort(-1).values, torch.arange(200, device=device).expand(2, -1))
    if dtype == torch.float64:
        with pytest.raises(TypeError, match="must be float32"):
            pcbench.grid(x, 0.1)


@pytest.mark.parametrize("device", DEVICES)
def test_losses_take_mixed_float_dtypes(device):
    """A bf16 prediction against a float32 target (autocast's usual pair):
    the loss of the rounded prediction, in float32, its gradient in bf16."""
    x, y = clouds(43, 2, 300, device=device), clouds(44, 2, 300, device=device)
    a = x.bfloat16().requires_grad_()
    for loss in (pcbench.chamfer, lambda p, q: pcbench.emd_loss(p, q, max_gap=1e-2)):
        got = loss(a, y)
        want = loss(a.detach().float(), y)
        assert got.dtype == torch.float32
        torch.testing.assert_close(got, want, rtol=1e-5, atol=0)
        got.backward()
        assert a.grad.dtype == torch.bfloat16
        a.grad = None


@pytest.mark.parametrize("device", DEVICES)
def test_autocast_regions_run_the_operators(device):
    """Inside torch.autocast the operators take their clouds in float32."""
    x = clouds(42, 2, 200, device=device)
    want = pcbench.knn(x, k=5)
    with torch.autocast(device_type=device, dtype=torch.bfloat16):
        got = torch.ops.pcbench.knn.default(x.bfloat16(), x.bfloat16(), 5)
        mixed = pcbench.chamfer(x.half(), x.flip(1).half())
    assert got[1].dtype == torch.float32
    assert torch.equal(got[0], pcbench.knn(x.bfloat16().float(), k=5)[0])
    assert mixed.dtype == torch.float32 and torch.isfinite(mixed)
    assert want[0].shape == got[0].shape
    # a step through every call on coordinates a bf16 layer made: the float32
    # answers of the rounded points (bf16 rounds into float32 exactly, so no
    # point moves between voxels)
    torch.manual_seed(3)
    lin = torch.nn.Linear(3, 3).to(device)
    y = clouds(45, 2, 200, device=device)
    with torch.autocast(device_type=device, dtype=torch.bfloat16):
        h = lin(x)
        assert h.dtype == torch.bfloat16
        got = [pcbench.fps(h, 20), pcbench.nn(h, y), pcbench.knn(h, k=6),
               pcbench.ball_query(h, h[:, :30].contiguous(), 0.2, 8), pcbench.chamfer_nearest(h, y),
               pcbench.grid(h, 0.1), pcbench.serialize(h, 0.1)]
        losses = [pcbench.chamfer(h, y), pcbench.emd_loss(h, y, max_gap=1e-2)]
    r = h.float()
    want = [pcbench.fps(r, 20), pcbench.nn(r, y), pcbench.knn(r, k=6),
            pcbench.ball_query(r, r[:, :30].contiguous(), 0.2, 8), pcbench.chamfer_nearest(r, y),
            pcbench.grid(r, 0.1), pcbench.serialize(r, 0.1)]
    for g, w in zip(got, want):
        for a, b in zip(g if isinstance(g, tuple) else (g,), w if isinstance(w, tuple) else (w,)):
            assert torch.equal(a, b)
    for loss, w in zip(losses, (pcbench.chamfer(r, y), pcbench.emd_loss(r, y, max_gap=1e-2))):
        assert loss.dtype == torch.float32
        torch.testing.assert_close(loss, w, rtol=1e-5, atol=0)
