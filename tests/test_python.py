"""pytest: the Python package (impl/python) on numpy arrays, on PyTorch CPU
tensors when torch is importable, and on CUDA tensors when a GPU is there.
Run by tests/python.sh (make test)."""
import os
import subprocess
import sys
from pathlib import Path

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


def cloud(seed, *shape):
    return np.random.default_rng(seed).random(shape + (3,), dtype=np.float32)


# ---- numpy: answers, and the judge rejects wrong ones ---------------------------
def test_float16_and_float64_arrays_are_searched_as_float32():
    """numpy float16 and float64 clouds: the answers of the float32 clouds
    they round to; grid sampling refuses float64 (voxels would move)."""
    for dtype in (np.float16, np.float64):
        x, y = cloud(50, 2, 300).astype(dtype), cloud(51, 2, 200).astype(dtype)
        fx, fy = x.astype(np.float32), y.astype(np.float32)
        assert np.array_equal(pcbench.fps(x, 20), pcbench.fps(fx, 20))
        for got, want in ((pcbench.nn(x, y), pcbench.nn(fx, fy)),
                          (pcbench.knn(x, y, 5), pcbench.knn(fx, fy, 5)),
                          (pcbench.ball_query(x, y, 0.2, 8), pcbench.ball_query(fx, fy, 0.2, 8))):
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and np.array_equal(g, w)
        assert pcbench.check_knn(x, y, *pcbench.knn(x, y, 5))
    with pytest.raises(TypeError, match="must be float32"):
        pcbench.grid(cloud(52, 2, 50).astype(np.float64), 0.1)


def test_judges_say_the_ties_16_bit_rounding_made():
    """A float16 cloud whose points coincide once rounded (1000.0 and
    1000.25 are one float16): the judge passes the answer on the rounded
    points and says how many coincide; float32 clouds have no such note."""
    x = cloud(53, 1, 200) * 10
    x[0, :3] = [[1000.0, 0, 0], [1000.25, 0, 0], [1000.125, 0, 0]]  # one float16 point
    x16 = x.astype(np.float16)
    assert np.unique(x16[0].astype(np.float32), axis=0).shape[0] == 198
    verdict = pcbench.check_nn(x16, x16, *pcbench.nn(x16, x16))
    assert verdict and verdict.rounding_ties == 3 and "3 points coincide" in verdict.detail
    assert pcbench.check_knn(x16, x16, *pcbench.knn(x16, x16, 4)).rounding_ties == 3
    plain = pcbench.check_nn(x, x, *pcbench.nn(x, x))
    assert plain and plain.rounding_ties is None and "coincide" not in plain.detail


def test_fps_is_the_canonical_sequence():
    x = cloud(1, 3, 700)
    got = pcbench.fps(x, 40, start=5)
    assert got.shape == (3, 40) and got.dtype == np.int64
    assert (got == pcbench.fps(x, 40, start=5, impl="dp")).all()
    assert pcbench.check_fps(x, got, start=5, canonical=True)
    one = pcbench.fps(x[1], 40, start=5)
    assert one.shape == (40,) and (one == got[1]).all()


def test_fps_judge_rejects_wrong_answers():
    x = cloud(2, 2, 300)
    idx = pcbench.fps(x, 20)
    swapped = idx.copy()
    swapped[0, [3, 4]] = swapped[0, [4, 3]]
    assert not pcbench.check_fps(x, swapped)
    assert not pcbench.check_fps(x, idx, start=1)
    out = idx.copy()
    out[1, 7] = 300
    verdict = pcbench.check_fps(x, out)
    assert not verdict and verdict.verdict == "fail" and "out of range" in verdict.detail


def test_nn_matches_brute_force():
    ref, q = cloud(3, 2, 900), cloud(4, 2, 500)
    idx, d2 = pcbench.nn(ref, q)
    assert idx.shape == (2, 500) and d2.dtype == np.float32
    all_d2 = ((q[:, :, None, :].astype(np.float64) - ref[:, None, :, :]) ** 2).sum(-1)
    assert np.allclose(d2, all_d2.min(-1), rtol=1e-5, atol=1e-12)
    assert np.allclose(np.take_along_axis(all_d2, idx[..., None], -1)[..., 0], all_d2.min(-1))
    assert pcbench.check_nn(ref, q, idx, d2)
    wrong = (idx + 1) % 900
    verdict = pcbench.check_nn(ref, q, wrong)
    assert not verdict and 0 <= verdict.recall < 0.1


def test_knn_matches_brute_force_and_pads():
    ref, q = cloud(5, 2, 400), cloud(6, 2, 150)
    idx, d2 = pcbench.knn(ref, q, 12)
    assert idx.shape == (2, 150, 12) and idx.dtype == np.int64 and d2.dtype == np.float32
    all_d2 = ((q[:, :, None, :].astype(np.float64) - ref[:, None, :, :]) ** 2).sum(-1)
    want = np.sort(all_d2, -1)[..., :12]
    assert np.allclose(d2, want, rtol=1e-5, atol=1e-12)
    got = np.take_along_axis(all_d2, idx, -1)
    assert np.allclose(got, want, rtol=1e-5, atol=1e-12)
    assert pcbench.check_knn(ref, q, idx, d2, canonical=True)
    self_idx, self_d2 = pcbench.knn(ref, k=3)  # self-kNN: every point its own nearest
    assert (self_idx[..., 0] == np.arange(400)).all() and (self_d2[..., 0] == 0).all()
    short_idx, short_d2 = pcbench.knn(ref[0, :5], q[0], 8)  # k > n: padded, no real point
    assert short_idx.shape == (150, 8) and (short_idx[:, 5:] == -1).all()
    assert np.isinf(short_d2[:, 5:]).all() and (np.sort(short_idx[:, :5], -1) == np.arange(5)).all()
    assert pcbench.check_knn(ref[0, :5], q[0], short_idx, short_d2)


def test_knn_judge_rejects_wrong_answers():
    ref, q = cloud(7, 300), cloud(8, 90)
    idx, d2 = pcbench.knn(ref, q, 6)
    twice = idx.copy()
    twice[4, 2] = twice[4, 1]
    assert not pcbench.check_knn(ref, q, twice)
    flipped = idx.copy()
    flipped[9, [0, 5]] = flipped[9, [5, 0]]
    assert "ascending" in pcbench.check_knn(ref, q, flipped).detail
    zero_pad = pcbench.knn(ref[:4], q, 6)[0]
    zero_pad[:, 4:] = 0  # PyTorch3D's padding: a real point
    assert not pcbench.check_knn(ref[:4], q, zero_pad)
    with pytest.raises(ValueError, match="elements"):
        pcbench.check_knn(ref, q, idx[:, :5], k=6)
    with pytest.raises(ValueError, match="k = 0"):
        pcbench.knn(ref, q, 0)


def test_ball_query_both_selections_and_padding():
    xyz = cloud(21, 2, 600)
    centres = xyz[:, :50].copy()  # a subset, as FPS output is
    d2 = ((centres[:, :, None, :].astype(np.float64) - xyz[:, None, :, :]) ** 2).sum(-1)
    inside = d2 < np.float32(0.15) ** 2
    first, count = pcbench.ball_query(xyz, centres, 0.15, 8)
    assert first.shape == (2, 50, 8) and first.dtype == np.int64 and count.dtype == np.int32
    for b in range(2):
        for m in range(50):
            want = np.flatnonzero(inside[b, m])[:8]  # the lowest indices inside
            assert count[b, m] == len(want) and (first[b, m, :len(want)] == want).all()
            assert (first[b, m, len(want):] == -1).all()
    near, count_n = pcbench.ball_query(xyz, centres, 0.15, 8, select="nearest")
    assert (count_n == count).all() and (near[..., 0] == np.arange(50)).all()  # itself first
    assert pcbench.check_ball(xyz, centres, near, 0.15, select="nearest", count=count_n,
                              canonical=True)
    assert not pcbench.check_ball(xyz, centres, first, 0.15, select="nearest")  # first != nearest
    padded, _ = pcbench.ball_query(xyz, centres, 0.15, 8, pad="first")
    assert (padded[first == -1] == np.broadcast_to(first[..., :1], first.shape)[first == -1]).all()
    # the package's own pad="first" layout is judged as such (and still judged)
    assert not pcbench.check_ball(xyz, centres, padded, 0.15)
    assert pcbench.check_ball(xyz, centres, padded, 0.15, pad="first", count=count)
    short = padded.copy()
    short[0, 0, 1:] = short[0, 0, 0]  # a ball's hits replaced by its first: too few
    assert count[0, 0] > 1 and not pcbench.check_ball(xyz, centres, short, 0.15, pad="first")
    far = centres + 100  # empty balls: -1, never point 0, even with pad="first"
    empty, none = pcbench.ball_query(xyz, far, 0.15, 4, pad="first")
    assert (empty == -1).all() and (none == 0).all()
    with pytest.raises(ValueError, match="radius"):
        pcbench.ball_query(xyz, centres, 0, 4)
    with pytest.raises(ValueError, match="select"):
        pcbench.ball_query(xyz, centres, 0.1, 4, select="random")


def test_grid_voxels_by_the_contract():
    """grid's voxels against a numpy recomputation (floor of the double
    quotient, sorted by voxel, first and nearest), ragged lengths, an origin
    given, and the judge rejecting a planted wrong answer."""
    xyz = cloud(31, 2, 3000)
    for select in ("first", "nearest"):
        index, count, inverse = pcbench.grid(xyz, 0.1, select=select)
        assert index.shape == count.shape == inverse.shape == (2, 3000)
        assert index.dtype == inverse.dtype == np.int64 and count.dtype == np.int32
        for b in range(2):
            p = xyz[b].astype(np.float64)
            v = np.floor((p - p.min(0)) / 0.1)
            keys, first, inv, counts = np.unique(v, axis=0, return_index=True,
                                                 return_inverse=True, return_counts=True)
            nv = len(keys)
            assert (count[b, :nv] == counts).all() and (count[b, nv:] == 0).all()
            assert (inverse[b] == inv.reshape(-1)).all() and (index[b, nv:] == -1).all()
            if select == "first":
                assert (index[b, :nv] == first).all()
            else:
                d2 = ((p - (p.min(0) + (v + 0.5) * 0.1)) ** 2).sum(-1)
                for r in range(nv):
                    members = np.flatnonzero(inv.reshape(-1) == r)
                    assert index[b, r] == members[np.argmin(d2[members])]
        assert pcbench.check_grid(xyz, index, count, inverse, 0.1, select=select)
    wrong = inverse.copy()
    wrong[0, 0] = (wrong[0, 0] + 1) % 10
    assert not pcbench.check_grid(xyz, index, count, wrong, 0.1, select="nearest")
    ri, rc, rv = pcbench.grid(xyz, 0.1, lengths=[3000, 100])
    one = pcbench.grid(xyz[1, :100], 0.1)
    assert (ri[1, :100] == one[0]).all() and (rv[1, :100] == one[2]).all()
    assert (ri[1, 100:] == -1).all() and (rc[1, 100:] == 0).all() and (rv[1, 100:] == -1).all()
    # random: each voxel keeps its point of least SplitMix64 draw, by seed
    def draw(seed, i):
        m = 2 ** 64 - 1
        z = (seed + (i + 1) * 0x9e3779b97f4a7c15) & m
        z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & m
        z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & m
        return z ^ (z >> 31)
    for seed in (0, 12345):
        gi, gc, gv = pcbench.grid(xyz, 0.1, select="random", seed=seed)
        for r in range(5):
            members = np.flatnonzero(gv[0] == r)
            assert gi[0, r] == min(members, key=lambda i: draw(seed, int(i)))
        assert pcbench.check_grid(xyz, gi, gc, gv, 0.1, select="random", seed=seed)
        assert not pcbench.check_grid(xyz, gi, gc, gv, 0.1, select="random", seed=seed + 1)
    oi, oc, ov = pcbench.grid(xyz[0], (0.2, 0.1, 0.3), origin=(-1, -2, -3))
    assert pcbench.check_grid(xyz[0], oi, oc, ov, (0.2, 0.1, 0.3), origin=(-1, -2, -3))
    with pytest.raises(pcbench.PcbenchError, match="spans"):
        pcbench.grid(xyz, 1e-9)
    # mean: first's rows, and each voxel's mean point against numpy's (the
    # sum in double in index order), 0 past the voxels; a ragged batch pads
    # its means; the judge rejects a mean moved, and wants one to judge
    mi, mc, mv, mean = pcbench.grid(xyz, 0.1, select="mean")
    fi, fc, fv = pcbench.grid(xyz, 0.1)
    assert (mi == fi).all() and (mc == fc).all() and (mv == fv).all()
    assert mean.shape == (2, 3000, 3) and mean.dtype == np.float32
    for b in range(2):
        nv = int((mc[b] > 0).sum())
        sums = np.zeros((nv, 3))
        for i in range(3000):  # increasing index, as the contract sums
            sums[mv[b, i]] += xyz[b, i].astype(np.float64)
        assert (mean[b, :nv] == (sums / mc[b, :nv, None]).astype(np.float32)).all()
        assert (mean[b, nv:] == 0).all()
    assert pcbench.check_grid(xyz, mi, mc, mv, 0.1, select="mean", mean=mean)
    moved = mean.copy()
    moved[1, 2, 0] += 1e-4
    assert not pcbench.check_grid(xyz, mi, mc, mv, 0.1, select="mean", mean=moved)
    with pytest.raises(ValueError, match="needs mean"):
        pcbench.check_grid(xyz, mi, mc, mv, 0.1, select="mean")
    ri, rc, rv, rm = pcbench.grid(xyz, 0.1, select="mean", lengths=[3000, 100])
    one = pcbench.grid(xyz[1, :100], 0.1, select="mean")
    assert (rm[1, :100] == one[3]).all() and (rm[1, 100:] == 0).all() and (rm[0] == mean[0]).all()


def _morton(v, depth):
    """Morton codes by their definition, a bit at a time (numpy)."""
    code = np.zeros(len(v), dtype=np.int64)
    for i in range(depth):
        for k in range(3):
            code |= ((v[:, k] >> i) & 1) << (3 * i + 2 - k)
    return code


def test_serialize_by_the_contract():
    """serialize's Morton codes against a numpy recomputation (the double
    quotient's floor, bits interleaved, the cloud's number above), the
    order ascending by (code, index), the inverse; Hilbert's judged and its
    first voxels by hand; ragged lengths read whole; curve_encode and
    curve_decode round trips; the judge rejecting a planted wrong answer."""
    xyz = cloud(33, 2, 3000)
    xyz[1, 1000:1100] = xyz[1, :100]  # ties: points sharing a voxel
    code, order, inverse = pcbench.serialize(xyz, 0.05, "morton")
    assert code.shape == order.shape == inverse.shape == (2, 3000)
    assert code.dtype == order.dtype == inverse.dtype == np.int64
    v = [np.floor((xyz[b].astype(np.float64) - xyz[b].min(0)) / 0.05).astype(np.int64)
         for b in range(2)]
    depth = max(1, int(max(x.max() for x in v)).bit_length())
    for b in range(2):
        want = _morton(v[b], depth) | (b << (3 * depth))
        assert (code[b] == want).all()
        assert (order[b] == np.lexsort((np.arange(3000), want))).all()
        assert (inverse[b][order[b]] == np.arange(3000)).all()
    assert pcbench.check_serialize(xyz, code, order, inverse, 0.05, "morton")
    hc, ho, hi = pcbench.serialize(xyz, 0.05)  # hilbert by default
    assert pcbench.check_serialize(xyz, hc, ho, hi, 0.05)
    assert not pcbench.check_serialize(xyz, code, order, inverse, 0.05, "hilbert")
    wrong = ho.copy()
    wrong[0, [5, 6]] = wrong[0, [6, 5]]
    assert not pcbench.check_serialize(xyz, hc, wrong, hi, 0.05)
    # the curve by hand: depth 1's octants in Gray code order, and back
    cube = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)])
    h = pcbench.curve_encode(cube, 1)
    assert (cube[np.argsort(h)] == [[0, 0, 0], [0, 0, 1], [0, 1, 1], [0, 1, 0], [1, 1, 0],
                                    [1, 1, 1], [1, 0, 1], [1, 0, 0]]).all()
    rng = np.random.default_rng(5)
    for curve in ("morton", "hilbert"):
        vox = rng.integers(0, 1 << 21, (1000, 3))
        assert (pcbench.curve_decode(pcbench.curve_encode(vox, 21, curve), 21, curve) == vox).all()
    assert (pcbench.curve_encode(vox[:10] >> 5, 16, "morton") == _morton(vox[:10] >> 5, 16)).all()
    with pytest.raises(ValueError, match="outside 0..7"):
        pcbench.curve_encode([[8, 0, 0]], 3)
    # ragged: one depth for the batch, -1 past each length
    rc, ro, ri = pcbench.serialize(xyz, 0.05, "morton", lengths=[3000, 100])
    assert (rc[0] == code[0]).all() and (ro[0] == order[0]).all()
    assert (rc[1, 100:] == -1).all() and (ro[1, 100:] == -1).all() and (ri[1, 100:] == -1).all()
    assert pcbench.check_serialize(xyz, rc, ro, ri, 0.05, "morton", lengths=[3000, 100])
    with pytest.raises(ValueError, match="bits an axis"):
        pcbench.serialize(xyz, 0.05, depth=3)


def test_nn_index_answers_as_nn_and_keeps_its_reference():
    ref, q = cloud(14, 2, 800), cloud(15, 2, 300)
    index = pcbench.NNIndex(ref, max_queries=300)
    want = pcbench.nn(ref, q)
    ref[:] = 0  # the index holds its own copy
    got = index.query(q)
    assert (got[0] == want[0]).all() and (got[1] == want[1]).all()
    one = pcbench.NNIndex(ref[0]).query(q[0][:10])  # every reference point at 0 now
    assert one[0].shape == (10,)
    assert np.allclose(one[1], (q[0][:10].astype(np.float64) ** 2).sum(-1), rtol=1e-6)


def test_emd_is_a_certified_bijection():
    a, b = cloud(5, 2, 128), cloud(6, 2, 128)
    match, value, bound = pcbench.emd(a, b, max_gap=1e-3)
    assert match.shape == (2, 128) and value.shape == (2,) and bound.shape == (2,)
    assert all(sorted(m) == list(range(128)) for m in match.tolist())
    assert (bound >= 0).all() and (bound <= 1e-3).all()
    cost = np.linalg.norm(a - np.take_along_axis(b, match[..., None], 1), axis=-1).mean(-1)
    assert np.allclose(value, cost, rtol=1e-12)
    verdict = pcbench.check_emd(a, b, match, value, max_gap=1e-3)
    assert verdict and 0 <= verdict.gap <= 1e-3


def test_emd_judge_rejects_wrong_answers():
    a, b = cloud(7, 1, 64), cloud(8, 1, 64)
    match, value, _ = pcbench.emd(a, b)
    shared = match.copy()
    shared[0, 1] = shared[0, 0]
    verdict = pcbench.check_emd(a, b, shared)
    assert not verdict and "bijection" in verdict.detail
    assert not pcbench.check_emd(a, b, match, value + 0.01)
    worse = match.copy()  # a bijection, but far from the optimum
    worse[0] = np.roll(worse[0], 1)
    assert pcbench.check_emd(a, b, worse, max_gap=None)
    assert not pcbench.check_emd(a, b, worse, max_gap=1e-3)


def test_judges_refuse_short_float_and_odd_answers():
    x = cloud(10, 2, 300)
    idx = pcbench.fps(x, 20)
    assert pcbench.check_fps(x, idx)
    for bad in (idx + 0.4, idx.astype(bool), "abc", None):
        with pytest.raises(TypeError, match="check_fps: idx"):
            pcbench.check_fps(x, bad)
    with pytest.raises(ValueError, match="start"):
        pcbench.check_fps(x, idx, start=2 ** 64 + 3)  # never wraps to 3
    with pytest.raises(TypeError, match="start"):
        pcbench.check_fps(x, idx, start=1.0)
    with pytest.raises(ValueError, match="samples"):
        pcbench.fps(x, 2 ** 40)  # refused before any allocation
    ref, query = cloud(11, 1, 200), cloud(12, 1, 50)
    near, d2 = pcbench.nn(ref, query)
    assert pcbench.check_nn(ref, query, near, d2)
    with pytest.raises(ValueError, match="dist2 has 10 elements, need 50"):
        pcbench.check_nn(ref, query, near, d2[:, :10])
    a, b = cloud(13, 2, 64), cloud(14, 2, 64)
    match, value, _ = pcbench.emd(a, b)
    with pytest.raises(ValueError, match="value has 1 elements, need 2"):
        pcbench.check_emd(a, b, match, value[:1])
    with pytest.raises(ValueError, match="prices has 3 elements, need 128"):
        pcbench.check_emd(a, b, match, prices=np.zeros(3))


def test_emd_huge_prices_certify_nothing(monkeypatch):
    monkeypatch.setenv("PCB_EMD_GAP_MAX_N", "0")  # no exact solve: the certificate decides
    a, b = cloud(15, 1, 200), cloud(16, 1, 200)
    wrong = np.arange(200, dtype=np.int64)[None, ::-1].copy()
    for scale in (1e20, 1e22, 1e300):
        verdict = pcbench.check_emd(a, b, wrong, prices=np.full((1, 200), scale), max_gap=0.01)
        assert not verdict and "bound above its promise" in verdict.detail


@pytest.mark.parametrize("call, error, words", [
    (lambda: pcbench.fps(cloud(1, 100).astype(np.int32), 5), TypeError, "float32"),
    (lambda: pcbench.fps(cloud(1, 100)[:, :2].copy(), 5), ValueError, "(B, N, 3)"),
    (lambda: pcbench.fps(cloud(1, 2, 5, 100), 5), ValueError, "(B, N, 3)"),
    (lambda: pcbench.fps(cloud(1, 4, 100).transpose(1, 0, 2), 5), ValueError, "contiguous"),
    (lambda: pcbench.fps(cloud(1, 100), 101), ValueError, "samples"),
    (lambda: pcbench.fps(cloud(1, 100), 5, start=100), ValueError, "start"),
    (lambda: pcbench.fps(cloud(1, 100), 5, impl="nonesuch"), ValueError, "nonesuch"),
    (lambda: pcbench.fps([[0.0, 0.0, 0.0]], 1), TypeError, "numpy"),
    (lambda: pcbench.nn(cloud(1, 2, 50), cloud(2, 3, 50)), ValueError, "batch"),
    (lambda: pcbench.emd(cloud(1, 50), cloud(2, 60)), ValueError, "as many points"),
    (lambda: pcbench.emd(cloud(1, 50), cloud(2, 50), max_gap=0), ValueError, "max_gap"),
    (lambda: pcbench.fps(np.zeros((0, 3), np.float32), 1), ValueError, "empty"),
])
def test_bad_arguments_get_clear_errors(call, error, words):
    with pytest.raises(error) as e:
        call()
    assert words in str(e.value)


def test_misuse_table_on_every_path():
    """tests/misuse.py: every plain mistake raises the table's exception on
    every path here (numpy; torch's CPU kernels; CUDA's Python and compiled
    kernels where there), the same message on the torch paths, and the
    process lives on."""
    run = subprocess.run([sys.executable, str(Path(__file__).parent / "misuse.py")],
                         capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 failed" in run.stdout


def test_library_path_that_is_no_library():
    """PCBENCH_LIBRARY naming a file that is not a library: an ImportError
    that names it, never a raw OSError."""
    env = dict(os.environ, PCBENCH_LIBRARY="/etc/passwd")
    run = subprocess.run([sys.executable, "-c", "import sys; sys.modules['torch'] = None; "
                          "import pcbench"], capture_output=True, text=True, env=env)
    assert run.returncode != 0 and "ImportError: pcbench: PCBENCH_LIBRARY" in run.stderr
    assert "/etc/passwd" in run.stderr


def test_non_finite_points_are_named():
    x = cloud(9, 2, 100)
    x[1, 42, 2] = np.nan
    with pytest.raises(ValueError, match="pcbench.fps: cloud: non-finite coordinate at cloud 1 "
                       "point 42"):
        pcbench.fps(x, 10)


# ---- torch on the CPU: the same answers, and the losses' gradients ---------------
@needs_torch
def test_torch_cpu_answers_equal_numpy():
    x = cloud(10, 2, 400)
    got = pcbench.fps(torch.from_numpy(x), 30)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.int64
    assert (got.numpy() == pcbench.fps(x, 30)).all()
    idx, d2 = pcbench.nn(torch.from_numpy(x), torch.from_numpy(cloud(11, 2, 300)))
    ref_idx, ref_d2 = pcbench.nn(x, cloud(11, 2, 300))
    assert (idx.numpy() == ref_idx).all() and (d2.numpy() == ref_d2).all()


@needs_torch
def test_losses_gradients_match_finite_differences():
    g = torch.Generator().manual_seed(3)
    a = torch.rand(2, 12, 3, generator=g, dtype=torch.float64, requires_grad=True)
    b = torch.rand(2, 12, 3, generator=g, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b: pcbench.emd_loss(a, b, max_gap=1e-3), (a, b))
    assert torch.autograd.gradcheck(pcbench.chamfer, (a, b))


@needs_torch
def test_losses_values():
    a, b = torch.from_numpy(cloud(12, 3, 64)), torch.from_numpy(cloud(13, 3, 64))
    _, value, _ = pcbench.emd(a, b)
    assert torch.allclose(pcbench.emd_loss(a, b, max_gap=1e-3, reduction="none").double(),
                          value, rtol=1e-5)
    d_ab = torch.cdist(a, b) ** 2
    want = d_ab.min(2).values.mean(1) + d_ab.min(1).values.mean(1)
    assert torch.allclose(pcbench.chamfer(a, b, reduction="none"), want, rtol=1e-4)
    with pytest.raises(TypeError, match="float32, float64, float16 or bfloat16"):
        pcbench.chamfer(a.int(), b.int())


def test_chamfer_nearest_matches_brute_force():
    a, b = cloud(14, 2, 300), cloud(15, 2, 200)
    ia, da, ib, db = pcbench.chamfer_nearest(a, b)
    d = ((a[:, :, None, :].astype("f8") - b[:, None, :, :]) ** 2).sum(-1)
    assert ia.shape == (2, 300) and ib.shape == (2, 200) and ia.dtype == np.int64
    assert (ia == d.argmin(2)).all() and (ib == d.argmin(1)).all()
    assert np.allclose(da, d.min(2), rtol=1e-5) and np.allclose(db, d.min(1), rtol=1e-5)
    one = pcbench.chamfer_nearest(a[0], b[0])
    assert one[0].shape == (300,) and (one[0] == ia[0]).all() and (one[2] == ib[0]).all()


def test_check_chamfer_judges_indices_and_values():
    """check_chamfer, the CLI's check chamfer from Python, on numpy alone: a right
    answer passes (with or without its distances), a wrong index or value fails."""
    a, b = cloud(18, 2, 120), cloud(19, 2, 90)
    ia, da, ib, db = pcbench.chamfer_nearest(a, b)
    assert pcbench.check_chamfer(a, b, ia, ib) and pcbench.check_chamfer(a, b, ia, ib, da, db)
    d = ((a[:, :, None, :].astype("f8") - b[:, None, :, :]) ** 2).sum(-1)
    value = d.min(2).mean(1) + d.min(1).mean(1)
    assert pcbench.check_chamfer(a, b, value=value)
    euclid = np.sqrt(d.min(2)).mean(1)
    assert pcbench.check_chamfer(a, b, value=euclid, convention="euclidean-mean-forward")
    assert pcbench.check_chamfer(a[1], b[1], ia[1], ib[1], value=float(value[1]))
    wrong = ia.copy()
    wrong[1, 7] = (d[1, 7].argmin() + 1) % 90
    v = pcbench.check_chamfer(a, b, wrong, ib)
    assert not v and v.verdict == "fail" and "not nearest" in v.detail
    v = pcbench.check_chamfer(a, b, value=value * 1.01)
    assert not v and "the nearest distances give" in v.detail
    with pytest.raises(ValueError, match="the indices, the value or both"):
        pcbench.check_chamfer(a, b)
    with pytest.raises(ValueError, match="both directions"):
        pcbench.check_chamfer(a, b, idx_ab=ia)
    with pytest.raises(ValueError, match="has 1 elements, need 2"):
        pcbench.check_chamfer(a, b, value=value[:1])
    with pytest.raises(ValueError, match="DISTANCE-POINTS-DIRECTIONS"):
        pcbench.check_chamfer(a, b, value=value, convention="l2")


@needs_torch
@pytest.mark.parametrize("convention", ["squared-mean-sum", "squared-sum-forward",
                                        "euclidean-mean-average", "euclidean-sum-sum"])
def test_chamfer_conventions(convention):
    a, b = torch.from_numpy(cloud(16, 2, 80)).double(), torch.from_numpy(cloud(17, 2, 50)).double()
    d = torch.cdist(a, b)
    distance, points, directions = convention.split("-")
    f = (lambda x: x ** 2) if distance == "squared" else (lambda x: x)
    red = (lambda x: x.mean(-1)) if points == "mean" else (lambda x: x.sum(-1))
    ab, ba = red(f(d.min(2).values)), red(f(d.min(1).values))
    want = ab if directions == "forward" else ab + ba if directions == "sum" else (ab + ba) / 2
    got = pcbench.chamfer(a, b, reduction="none", convention=convention)
    assert torch.allclose(got, want, rtol=1e-9)
    with pytest.raises(ValueError, match="DISTANCE-POINTS-DIRECTIONS"):
        pcbench.chamfer(a, b, convention="l2")


@needs_torch
def test_chamfer_gradient_finite_at_zero_distance():
    g = torch.Generator().manual_seed(4)
    a = torch.rand(1, 10, 3, generator=g, dtype=torch.float64)
    b = a.clone()  # every nearest distance 0
    for convention in ("squared-mean-sum", "euclidean-mean-average"):
        x, y = a.clone().requires_grad_(), b.clone().requires_grad_()
        pcbench.chamfer(x, y, convention=convention).backward()
        assert torch.isfinite(x.grad).all() and torch.isfinite(y.grad).all()
    x = torch.rand(2, 9, 3, generator=g, dtype=torch.float64, requires_grad=True)
    y = torch.rand(2, 7, 3, generator=g, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda x, y: pcbench.chamfer(x, y, convention="euclidean-mean-average"), (x, y))


# ---- CUDA: device-resident runs, bit for bit the host path ------------------------
def on_gpu(x):
    return torch.from_numpy(x).cuda()


@needs_cuda
@pytest.mark.parametrize("b, n, m", [(4, 5000, 256), (32, 1000, 100), (2, 50000, 1024),
                                     (1, 10000, 1000)])
def test_cuda_fps_equals_host_path(b, n, m):
    x = cloud(20 + n, b, n)
    host = pcbench.fps(x, m, start=3, impl="cuda_pruned")
    dev = pcbench.fps(on_gpu(x), m, start=3)
    assert dev.is_cuda and (dev.cpu().numpy() == host).all()
    assert (host == pcbench.fps(x, m, start=3, impl="dp")).all() or n > 20000


@needs_cuda
def test_cuda_cached_states_survive_smaller_ones():
    """A state kept for large clouds runs again after a state for small ones
    of the same kernel: the kernel's shared-memory limit is never lowered
    under it (it was, and the large state's launch then failed)."""
    big, small = cloud(40, 16, 16384), cloud(41, 16, 1024)
    want = pcbench.fps(on_gpu(big), 1024).cpu().numpy()
    pcbench.fps(on_gpu(small), 256)
    assert (pcbench.fps(on_gpu(big), 1024).cpu().numpy() == want).all()
    a, b = cloud(42, 1, 32), cloud(43, 1, 32)
    first = pcbench.emd(on_gpu(a), on_gpu(b), 1e-2)[0].cpu().numpy()
    pcbench.emd(on_gpu(cloud(44, 1, 20)), on_gpu(cloud(45, 1, 20)), 1e-2)
    assert (pcbench.emd(on_gpu(a), on_gpu(b), 1e-2)[0].cpu().numpy() == first).all()


@needs_cuda
@pytest.mark.parametrize("b, n, nq", [(1, 120000, 120000), (3, 20000, 7000), (2, 100, 9)])
def test_cuda_nn_equals_host_path(b, n, nq):
    ref, q = cloud(30 + n, b, n), cloud(31 + nq, b, nq)
    hi, hd = pcbench.nn(ref, q, impl="cuda_bvh")
    di, dd = pcbench.nn(on_gpu(ref), on_gpu(q))
    assert (di.cpu().numpy() == hi).all() and (dd.cpu().numpy() == hd).all()
    assert pcbench.check_nn(ref, q, di, dd)


@needs_cuda
@pytest.mark.parametrize("b, n, nq", [(32, 1024, 1024), (8, 2048, 1500), (3, 513, 7)])
def test_cuda_tiles_batches_equal_host_path(b, n, nq):
    ref, q = cloud(50 + n, b, n), cloud(51 + nq, b, nq)
    hi, hd = pcbench.nn(ref, q, impl="naive")  # ties to the lowest index, as cuda_tiles
    di, dd = pcbench.nn(on_gpu(ref), on_gpu(q))
    assert (di.cpu().numpy() == hi).all() and (dd.cpu().numpy() == hd).all()
    index = pcbench.NNIndex(on_gpu(ref))  # cuda_tiles keeps a copy of ref
    ki, kd = index.query(on_gpu(q))
    assert (ki.cpu().numpy() == hi).all() and (kd.cpu().numpy() == hd).all()
    ia, da, ib, db = pcbench.chamfer_nearest(on_gpu(ref), on_gpu(q))
    wa, wda, wb, wdb = pcbench.chamfer_nearest(ref, q, impl="naive")
    assert (ia.cpu().numpy() == wa).all() and (ib.cpu().numpy() == wb).all()
    assert (da.cpu().numpy() == wda).all() and (db.cpu().numpy() == wdb).all()


@needs_cuda
@pytest.mark.parametrize("b, n, nq, k", [(32, 1024, 0, 16), (16, 2048, 0, 20), (8, 1024, 4096, 3),
                                        (2, 40, 30, 64), (3, 5, 700, 8), (1, 20000, 5000, 32)])
def test_cuda_knn_equals_naive(b, n, nq, k):
    ref = cloud(60 + n, b, n)
    q = ref if nq == 0 else cloud(61 + nq, b, nq)
    want_i, want_d = pcbench.knn(ref, q, k, impl="kdtree")  # canonical, naive's rows
    for impl in (None, "cuda_brute"):
        gi, gd = pcbench.knn(on_gpu(ref), None if nq == 0 else on_gpu(q), k, impl=impl)
        assert gi.is_cuda and gi.shape == want_i.shape
        assert (gi.cpu().numpy() == want_i).all() and (gd.cpu().numpy() == want_d).all()


@needs_cuda
@pytest.mark.parametrize("b, n, m, radius, k", [(32, 1024, 512, 0.2, 32), (2, 16384, 4096, 0.1, 64),
                                                (3, 2048, 256, 0.8, 128), (1, 500, 70, 1e-3, 8)])
def test_cuda_ball_query_equals_naive(b, n, m, radius, k):
    xyz = cloud(70 + n, b, n)
    centres = xyz[:, :m].copy()
    for select in ("first", "nearest"):
        want_i, want_c = pcbench.ball_query(xyz, centres, radius, k, select=select, impl="naive")
        for impl in (None, "cuda_classic"):
            gi, gc = pcbench.ball_query(on_gpu(xyz), on_gpu(centres), radius, k, select=select,
                                        impl=impl)
            assert gi.is_cuda and gi.shape == want_i.shape
            assert (gi.cpu().numpy() == want_i).all() and (gc.cpu().numpy() == want_c).all()


@needs_cuda
@pytest.mark.parametrize("b, n, cell", [(1, 120000, 0.1), (16, 20000, 0.02), (3, 5000, 10.0),
                                        (130, 500, 0.05)])
def test_cuda_grid_equals_naive(b, n, cell):
    """cuda_sort bit for bit naive's (first, nearest, mean's points too): a
    sweep-sized cloud, a batch, one voxel a cloud, and more clouds than one
    sort takes (128)."""
    xyz = cloud(90 + b, b, n) * np.float32(3)
    for select in ("first", "nearest", "mean"):
        want = pcbench.grid(xyz, cell, select=select, impl="naive")
        got = pcbench.grid(on_gpu(xyz), cell, select=select)
        assert len(got) == len(want) == (4 if select == "mean" else 3)
        for g, w in zip(got, want):
            assert g.is_cuda and (g.cpu().numpy() == w).all()
    for select in ("first", "mean"):
        lengths = [n] + [n // 2] * (b - 1)
        ragged = pcbench.grid(on_gpu(xyz), cell, select=select, lengths=lengths)
        want = pcbench.grid(xyz, cell, select=select, lengths=lengths)
        assert all((g.cpu().numpy() == w).all() for g, w in zip(ragged, want))


@needs_cuda
def test_cuda_grid_span_follows_the_finite_check(monkeypatch):
    """A cloud past the keys' span on CUDA: with finite_check "sync" the
    CPU's PcbenchError, word for word; with "async" (no wait) its rows and
    inverse entries are -1, the other cloud's answer stands, and
    nonfinite_seen() says so."""
    x = np.repeat(np.arange(50, dtype=np.float32)[None, :, None], 2, 0).repeat(3, 2)
    x[1] *= np.float32(1e-12)  # cloud 1 fits
    with pytest.raises(pcbench.PcbenchError) as host:
        pcbench.grid(x, 1e-9)
    monkeypatch.setattr(pcbench, "finite_check", "sync")
    with pytest.raises(pcbench.PcbenchError) as device:
        pcbench.grid(on_gpu(x), 1e-9)
    assert str(device.value) == str(host.value) and "cloud 0 spans" in str(host.value)
    monkeypatch.setattr(pcbench, "finite_check", "async")
    pcbench.nonfinite_seen()
    index, count, inverse = (t.cpu().numpy() for t in pcbench.grid(on_gpu(x), 1e-9))
    assert pcbench.nonfinite_seen()
    assert (index[0] == -1).all() and (count[0] == 0).all() and (inverse[0] == -1).all()
    want = pcbench.grid(x[1], 1e-9)
    assert all((g[1] == w).all() for g, w in zip((index, count, inverse), want))


@needs_cuda
@pytest.mark.parametrize("b, n, cell, depth", [(1, 120000, 0.1, None), (16, 20000, 0.02, None),
                                               (3, 5000, 10.0, None), (2, 200000, 0.01, 16),
                                               (300, 500, 0.05, None)])
def test_cuda_serialize_equals_naive(b, n, cell, depth):
    """cuda_sort bit for bit naive's: a sweep-sized cloud, a batch, one voxel
    a cloud (every code tied), a depth given, many clouds; and a ragged
    batch read whole on the device."""
    xyz = cloud(95 + b, b, n) * np.float32(3)
    for curve in ("morton", "hilbert"):
        want = pcbench.serialize(xyz, cell, curve, depth=depth, impl="naive")
        got = pcbench.serialize(on_gpu(xyz), cell, curve, depth=depth)
        for g, w in zip(got, want):
            assert g.is_cuda and (g.cpu().numpy() == w).all()
    lengths = [n] + [n // 2 + i % (n // 2) for i in range(b - 1)]
    ragged = pcbench.serialize(on_gpu(xyz), cell, lengths=lengths)
    want = pcbench.serialize(xyz, cell, lengths=lengths)
    assert all((g.cpu().numpy() == w).all() for g, w in zip(ragged, want))


@needs_cuda
def test_cuda_serialize_depth_follows_the_finite_check(monkeypatch):
    """A voxel coordinate past the depth on CUDA: with finite_check "sync"
    the CPU's ValueError, word for word; with "async" (no wait) every code
    and place is -1 and nonfinite_seen() says so."""
    x = np.repeat(np.arange(50, dtype=np.float32)[None, :, None], 2, 0).repeat(3, 2)
    with pytest.raises(ValueError) as host:
        pcbench.serialize(x, 1.0, depth=3)
    monkeypatch.setattr(pcbench, "finite_check", "sync")
    with pytest.raises(ValueError) as device:
        pcbench.serialize(on_gpu(x), 1.0, depth=3)
    assert str(device.value) == str(host.value) and "bits an axis" in str(host.value)
    with pytest.raises(ValueError) as below:
        pcbench.serialize(on_gpu(x), 1.0, origin=(1, 0, 0))
    assert "below the origin" in str(below.value)
    monkeypatch.setattr(pcbench, "finite_check", "async")
    pcbench.nonfinite_seen()
    code, order, inverse = (t.cpu().numpy() for t in pcbench.serialize(on_gpu(x), 1.0, depth=3))
    assert pcbench.nonfinite_seen()
    assert (code == -1).all() and (order == -1).all() and (inverse == -1).all()


@needs_cuda
@pytest.mark.parametrize("b, n, nq", [(32, 2048, 2048), (4, 3000, 1000), (2, 20000, 18000)])
def test_cuda_chamfer_loss_and_gradient(b, n, nq):
    """The fused CUDA chamfer (forward one call, backward one) against the
    same loss in float64 on the CPU, the nearest points the same."""
    a, c = cloud(60 + n, b, n), cloud(61 + nq, b, nq)
    x, y = on_gpu(a).requires_grad_(), on_gpu(c).requires_grad_()
    loss = pcbench.chamfer(x, y)
    loss.backward()
    xd = torch.from_numpy(a).double().requires_grad_()
    yd = torch.from_numpy(c).double().requires_grad_()
    want = pcbench.chamfer(xd, yd)
    want.backward()
    assert abs(loss.item() - want.item()) <= 1e-5 * want.item()
    assert torch.allclose(x.grad.cpu().double(), xd.grad, rtol=1e-4, atol=1e-9)
    assert torch.allclose(y.grad.cpu().double(), yd.grad, rtol=1e-4, atol=1e-9)
    per = pcbench.chamfer(x.detach(), y.detach(), reduction="none")
    assert per.shape == (b,) and per.dtype == torch.float32
    with pytest.raises(ValueError, match="same batch"):
        pcbench.chamfer(x, y[:1] if b > 1 else torch.cat([y, y]))


@needs_cuda
@pytest.mark.parametrize("b, n, gap", [(4, 1024, 1e-3), (2, 512, 1e-2), (3, 3000, 5e-2)])
def test_cuda_emd_equals_host_path(b, n, gap):
    a, c = cloud(40 + n, b, n), cloud(41 + n, b, n)
    hm, hv, _ = pcbench.emd(a, c, max_gap=gap, impl="cuda_auction")
    dm, dv, db = pcbench.emd(on_gpu(a), on_gpu(c), max_gap=gap)
    assert (dm.cpu().numpy() == hm).all() and (dv.cpu().numpy() == hv).all()
    assert (db >= 0).all() and (db <= gap).all()
    assert pcbench.check_emd(a, c, dm, dv, max_gap=gap)


@needs_torch
def test_emd_loss_object_checks_and_cpu_path():
    a, b = torch.from_numpy(cloud(70, 2, 64)), torch.from_numpy(cloud(71, 2, 64))
    loss = pcbench.EMDLoss(num_samples=10, points=64, reduction="none")
    assert torch.allclose(loss(a, b, torch.tensor([3, 7])),
                          pcbench.emd_loss(a, b, reduction="none"), rtol=1e-5)
    with pytest.raises(ValueError, match="index must be"):
        loss(a, b, torch.tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"\(B, 64, 3\)"):
        loss(a[:, :32], b[:, :32], torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="num_samples"):
        pcbench.EMDLoss(num_samples=0, points=64)
    with pytest.raises(ValueError, match="reduction"):
        pcbench.EMDLoss(num_samples=4, points=64, reduction="max")
    with pytest.raises(ValueError, match="warm_eps"):
        pcbench.EMDLoss(num_samples=4, points=64, warm_eps=0.5)


@needs_cuda
def test_cuda_emd_loss_object_starts_warm_and_stays_certified():
    """Epochs over 6 samples whose predictions drift toward their targets:
    every call's matching certified within max_gap whatever its start, its
    value within the gap of a cold solve's; the kept state is the library's
    (a device run in place equals a host run from the same arrays)."""
    n, gap = 1024, 1e-2
    g = torch.Generator().manual_seed(5)
    targets = torch.rand(6, n, 3, generator=g).cuda()
    noise = torch.randn(6, n, 3, generator=g).cuda()
    loss = pcbench.EMDLoss(num_samples=6, points=n, max_gap=gap, reduction="none")
    for epoch in range(3):
        for batch in ([0, 1, 2], [3, 4, 5]):
            idx = torch.tensor(batch).cuda()
            pred = (targets[idx] + 0.05 * 0.5 ** epoch * noise[idx]).requires_grad_()
            value = loss(pred, targets[idx], idx)
            cold = pcbench.emd_loss(pred.detach(), targets[idx], max_gap=gap, reduction="none")
            assert (loss.bound >= 0).all() and (loss.bound <= gap).all()
            assert ((value.detach() - cold).abs() <= 1.5 * gap * cold).all()
            value.sum().backward()
            assert torch.isfinite(pred.grad).all()
    price, eps, budget = loss._state
    assert (eps > 0).all() and (budget > 0).all() and price.abs().sum() > 0
    # the device run in place against the host run from copies of the same arrays
    a, b = (targets[:3] + 0.01 * noise[:3]).contiguous(), targets[:3].contiguous()
    warm = [t[:3].clone() for t in loss._state]
    host = [t.cpu().numpy().copy() for t in warm]
    dm, dv, db = pcbench._emd_direct(a, b, gap, None, warm)
    hm, hv, hb = pcbench._emd_direct(a.cpu().numpy(), b.cpu().numpy(), gap, "cuda_auction", host)
    assert (dm.cpu().numpy() == hm).all() and (dv.cpu().numpy() == hv).all()
    for d, h in zip(warm, host):
        assert (d.cpu().numpy() == h).all()
    loss.reset()
    assert loss._state is None


@needs_cuda
def test_cuda_nn_index_equals_host_path():
    ref, q = cloud(60, 2, 50000), cloud(61, 2, 20000)
    index = pcbench.NNIndex(on_gpu(ref), max_queries=20000)
    gpu_ref = on_gpu(ref)
    for k in (20000, 7000, 20000, 1):  # a new count recaptures the search
        hi, hd = pcbench.nn(ref, q[:, :k].copy(), impl="cuda_bvh")
        di, dd = index.query(on_gpu(q[:, :k].copy()))
        assert (di.cpu().numpy() == hi).all() and (dd.cpu().numpy() == hd).all()
    gpu_ref.zero_()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        di, _ = index.query(on_gpu(q))
    torch.cuda.current_stream().wait_stream(side)
    assert (di.cpu().numpy() == pcbench.nn(ref, q, impl="cuda_bvh")[0]).all()
    with pytest.raises(ValueError, match="max_queries"):
        index.query(on_gpu(cloud(62, 2, 20001)))
    with pytest.raises(ValueError, match="same kind on the same device"):
        index.query(q)
    with pytest.raises(pcbench.PcbenchError, match="host arrays only|keeps no index"):
        pcbench.NNIndex(on_gpu(ref), impl="cuda_attempt3")
    index.close()


@needs_cuda
def test_cuda_other_stream_and_errors():
    x = on_gpu(cloud(50, 2, 3000))
    want = pcbench.fps(x, 64)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        got = pcbench.fps(x, 64)
    torch.cuda.current_stream().wait_stream(side)
    assert (got == want).all()
    with pytest.raises(ValueError, match="contiguous"):
        pcbench.fps(x.transpose(0, 1), 8)
    with pytest.raises(ValueError, match="same kind on the same device"):
        pcbench.nn(x, x.cpu())
    with pytest.raises(pcbench.PcbenchError, match="host arrays only"):
        pcbench.fps(x, 8, impl="cuda_unrolled")


@needs_cuda
def test_cuda_non_finite_sync_check_and_safe_runs():
    x = cloud(51, 2, 2000)
    x[0, 5, 1] = np.inf
    pcbench.finite_check = "sync"
    try:
        with pytest.raises(ValueError, match="non-finite"):
            pcbench.fps(on_gpu(x), 16)
        pcbench.finite_check = "off"  # runs anyway, on the point read as 0
        x0 = x.copy()
        x0[0, 5, 1] = 0
        assert (pcbench.fps(on_gpu(x), 16).cpu().numpy() == pcbench.fps(x0, 16)).all()
        idx, _ = pcbench.nn(on_gpu(x), on_gpu(x))
        assert ((idx >= 0) & (idx < 2000)).all()
    finally:
        pcbench.finite_check = "async"


_NON_FINITE_LOOP = """
import sys, torch, pcbench
x = torch.rand(2, 1000, 3, device="cuda")
y = torch.rand(2, 800, 3, device="cuda")
bad = x.clone()
bad[1, 3, 0] = float("nan")
bad[0, 7, 2] = float("inf")
assert not pcbench.nonfinite_seen()
pcbench.fps(bad, 8)
pcbench.nn(bad, y)
pcbench.knn(y, bad, k=4)
pcbench.chamfer(bad, y)
pcbench.ball_query(bad, y, 0.2, 8)
pcbench.emd(bad[:, :800].contiguous(), y, max_gap=0.05)
torch.cuda.synchronize()  # no device-side assertion: the context lives
assert pcbench.nonfinite_seen(), "the flag was not raised"
assert not pcbench.nonfinite_seen(), "reading the flag did not lower it"
# the same process goes on: right answers, and a clean batch raises nothing
idx, d2 = pcbench.nn(x, y)
want = torch.cdist(y.double(), x.double()).argmin(-1)
assert (idx == want).all()
pcbench.fps(x, 16)
assert not pcbench.nonfinite_seen()
# lengths on the GPU beyond N or negative: clamped there, never read past the cloud
got = pcbench.fps(x, 8, lengths=torch.tensor([5000, -3], device="cuda"))
torch.cuda.synchronize()
assert (got[0] == pcbench.fps(x[:1], 8)[0]).all() and (got[1] == -1).all()
print("lived on", sorted(pcbench._ops.compiled))
"""


@needs_cuda
@pytest.mark.parametrize("ops", ["compiled", "python"])
def test_cuda_non_finite_input_leaves_the_context_alive(ops):
    """finite_check "async": a NaN or an infinity on CUDA raises the device's
    flag (pcbench.nonfinite_seen) and no device-side assertion; the process
    then runs CUDA calls with right answers. Both kernel paths."""
    env = dict(os.environ, PCBENCH_TORCH_OPS="0" if ops == "python" else
               os.environ.get("PCBENCH_TORCH_OPS", ""))
    run = subprocess.run([sys.executable, "-c", _NON_FINITE_LOOP], capture_output=True,
                         text=True, env=env)
    assert run.returncode == 0 and "lived on" in run.stdout, run.stdout + run.stderr[-2000:]


@needs_cuda
def test_cuda_training_loop_never_waits_for_the_gpu():
    """Forward, backward and optimizer steps with every call, queued behind a
    long sleep kernel: if any of them waited for the GPU, the sleep would be
    over when the loop ends."""
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 3).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=1e-3)
    x, y = torch.rand(8, 1024, 3, device="cuda"), torch.rand(8, 1024, 3, device="cuda")
    index = pcbench.NNIndex(y)
    warm_emd, samples = pcbench.EMDLoss(num_samples=8, points=1024), torch.arange(8).cuda()

    def step():
        out = net(x)
        centres = out.gather(1, pcbench.fps(out.detach().contiguous(), 64)[..., None]
                             .expand(-1, -1, 3))
        pcbench.nn(out.detach().contiguous(), y)
        index.query(out.detach().contiguous())
        pcbench.emd(out.detach().contiguous(), y, max_gap=1e-2)
        loss = pcbench.emd_loss(out, y) + pcbench.chamfer(out, y) + centres.pow(2).mean()
        loss = loss + warm_emd(out, y, samples)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    step()  # first step: the scratch memory is made
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        torch.cuda._sleep(2_000_000_000)  # about a second
        done = torch.cuda.Event()
        for _ in range(3):
            loss = step()
        done.record()
        assert not done.query(), "a step waited for the GPU"
    finally:
        torch.cuda.set_sync_debug_mode(0)
    torch.cuda.synchronize()
    assert torch.isfinite(loss)
