"""misuse.py - the misuse table: plain mistakes with pcbench's public Python
functions, run on every path a call can take here, each path in processes of
its own. Every case must raise the exception the table names, with the
table's words in its message; the torch paths must raise the same message
word for word; and the process must live on: after each case a right call
still gives the right answer (on CUDA, after a synchronisation).

Paths: numpy (ctypes; torch hidden, as on a host without it); torch-cpu
(the operators' CPU kernels); cuda-python (the operators' Python kernels,
PCBENCH_TORCH_OPS=0); cuda-compiled (the compiled operators of make
torch-ops, where built for this PyTorch).

  python3 tests/misuse.py [--log FILE]   run the table on every path here
Run by tests/test_python.py (make test); its log on a GPU host is committed
under results/<machine>/python/."""
import json
import math
import os
import subprocess
import sys

class PcbenchError(RuntimeError):
    """pcbench.PcbenchError in the table (the exceptions are compared by name)"""


# name, call, exception, words its message holds, paths (None: every path
# the call can take; "torch": the torch paths; "cuda": the CUDA paths;
# "host": numpy and torch's CPU)
CASES = [
    ("fps int32", "fps(X(2, 50, 3, dtype='int32'), 5)", TypeError, "must be float32", None),
    ("fps (B, N, 4)", "fps(X(2, 50, 4), 5)", ValueError,
     "xyz must be (B, N, 3) or (N, 3), not (2, 50, 4)", None),
    ("fps 4-D", "fps(X(2, 2, 50, 3), 5)", ValueError, "(B, N, 3) or (N, 3)", None),
    ("fps not contiguous", "fps(NC(2, 50, 3), 5)", ValueError, "contiguous", None),
    ("fps empty", "fps(X(2, 0, 3), 1)", ValueError, "xyz is empty: (2, 0, 3)", None),
    ("fps m 0", "fps(X(2, 50, 3), 0)", ValueError, "m (samples) = 0 is outside 1..50", None),
    ("fps m n + 1", "fps(X(2, 50, 3), 51)", ValueError, "m (samples) = 51 is outside 1..50",
     None),
    ("fps start n", "fps(X(2, 50, 3), 5, start=50)", ValueError, "start = 50 is outside 0..49",
     None),
    ("fps m float", "fps(X(2, 50, 3), 2.0)", TypeError, "m (samples) must be an integer, not "
     "float", None),
    ("fps m bool", "fps(X(2, 50, 3), True)", TypeError, "must be an integer, not bool", None),
    ("fps m 2^64", "fps(X(2, 50, 3), 2 ** 64)", ValueError, "m (samples) = 18446744073709551616",
     None),
    ("fps impl int", "fps(X(2, 50, 3), 5, impl=5)", TypeError,
     "impl must be an implementation's name (str), not int", None),
    ("fps impl unknown", "fps(X(2, 50, 3), 5, impl='nonesuch')", ValueError, "'nonesuch'", None),
    ("fps lengths float", "fps(X(2, 50, 3), 5, lengths=[50.9, 3.2])", TypeError,
     "lengths must be integers", None),
    ("fps lengths float array", "fps(X(2, 50, 3), 5, lengths=LEN([50.0, 3.0], 'float32'))",
     TypeError, "lengths must be integers", None),
    ("fps lengths bool", "fps(X(2, 50, 3), 5, lengths=[True, False])", TypeError,
     "lengths must be integers", None),
    ("fps lengths beyond N", "fps(X(2, 50, 3), 5, lengths=[50, 60])", ValueError,
     "lengths[1] = 60 is outside 0..50", None),
    ("fps lengths negative", "fps(X(2, 50, 3), 5, lengths=LEN([-1, 50]))", ValueError,
     "lengths[0] = -1 is outside 0..50", None),
    ("fps lengths uint64 max", "fps(X(2, 50, 3), 5, lengths=U64([2 ** 64 - 1, 3]))", ValueError,
     "lengths[0] = 18446744073709551615 is outside 0..50", None),
    ("fps lengths 2^63", "fps(X(2, 50, 3), 5, lengths=[2 ** 63, 3])", ValueError,
     "lengths[0] = 9223372036854775808 is outside 0..50", None),
    ("fps lengths count", "fps(X(2, 50, 3), 5, lengths=[50])", ValueError,
     "lengths must hold 2 lengths", None),
    ("nn batch 2 and 3", "nn(X(2, 50, 3), X(3, 50, 3))", ValueError,
     "ref and query must have the same batch ((2, 50, 3) and (3, 50, 3))", None),
    ("nn batch and none", "nn(X(2, 50, 3), X(50, 3))", ValueError,
     "ref and query must have the same batch ((2, 50, 3) and (50, 3))", None),
    ("nn empty reference", "nn(X(2, 0, 3), X(2, 50, 3))", ValueError,
     "ref is empty: (2, 0, 3)", None),
    ("nn two devices", "nn(X(2, 50, 3), X(2, 50, 3).cpu())", ValueError,
     "ref and query must be the same kind on the same device (torch cuda:0, torch cpu)", "cuda"),
    ("nn lengths beyond N", "nn(X(2, 50, 3), X(2, 40, 3), ref_lengths=[10, 51])", ValueError,
     "ref_lengths[1] = 51 is outside 0..50", None),
    ("knn batch 2 and 3", "knn(X(2, 50, 3), X(3, 50, 3), k=4)", ValueError,
     "ref and query must have the same batch ((2, 50, 3) and (3, 50, 3))", None),
    ("knn k 0", "knn(X(2, 50, 3), k=0)", ValueError, "k = 0 is outside 1..2147483647", None),
    ("knn k -3", "knn(X(2, 50, 3), k=-3)", ValueError, "k = -3 is outside 1..2147483647", None),
    ("knn k float", "knn(X(2, 50, 3), k=2.5)", TypeError, "k must be an integer, not float",
     None),
    ("knn k 2^31 - 1 on 5 points", "knn(X(1, 5, 3), k=2 ** 31 - 1)", ValueError,
     "k = 2147483647 is outside 1..1024", None),
    ("knn k 2^63", "knn(X(2, 50, 3), k=2 ** 63)", ValueError,
     "k = 9223372036854775808 is outside 1..2147483647", None),
    ("knn empty query", "knn(X(2, 50, 3), X(2, 0, 3), k=4)", ValueError,
     "query is empty: (2, 0, 3)", None),
    ("knn lengths negative", "knn(X(2, 50, 3), k=4, ref_lengths=[-2, 50])", ValueError,
     "ref_lengths[0] = -2 is outside 0..50", None),
    ("chamfer_nearest batch 2 and 3", "chamfer_nearest(X(2, 50, 3), X(3, 40, 3))", ValueError,
     "a and b must have the same batch ((2, 50, 3) and (3, 40, 3))", None),
    ("chamfer_nearest lengths float", "chamfer_nearest(X(2, 50, 3), X(2, 40, 3), "
     "a_lengths=[1.5, 2.0])", TypeError, "a_lengths must be integers", None),
    ("chamfer batch 2 and 3", "chamfer(X(2, 50, 3), X(3, 40, 3))", ValueError,
     "pcbench.chamfer: a and b must have the same batch ((2, 50, 3) and (3, 40, 3))", "torch"),
    ("chamfer lengths negative", "chamfer(X(2, 50, 3), X(2, 40, 3), a_lengths=[-1, 3])",
     ValueError, "a_lengths[0] = -1 is outside 0..50", "torch"),
    ("ball radius str", "ball_query(X(2, 50, 3), X(2, 10, 3), '0.2', 4)", TypeError,
     "radius must be a number, not str", None),
    ("ball radius -1", "ball_query(X(2, 50, 3), X(2, 10, 3), -1, 4)", ValueError,
     "radius must be a finite number > 0", None),
    ("ball radius inf", "ball_query(X(2, 50, 3), X(2, 10, 3), math.inf, 4)", ValueError,
     "radius must be a finite number > 0", None),
    ("ball radius 1e20", "ball_query(X(2, 50, 3), X(2, 10, 3), 1e20, 4)", ValueError,
     "its float32 square is not finite", None),
    ("ball k 0", "ball_query(X(2, 50, 3), X(2, 10, 3), 0.2, 0)", ValueError,
     "k = 0 is outside 1..2147483647", None),
    ("ball k 2^31 - 1 on 5 points", "ball_query(X(1, 5, 3), X(1, 10, 3), 0.2, 2 ** 31 - 1)",
     ValueError, "k = 2147483647 is outside 1..1024", None),
    ("ball select", "ball_query(X(2, 50, 3), X(2, 10, 3), 0.2, 4, select='far')", ValueError,
     "select must be 'first' or 'nearest'", None),
    ("ball pad", "ball_query(X(2, 50, 3), X(2, 10, 3), 0.2, 4, pad='x')", ValueError,
     "pad must be 'none' or 'first'", None),
    ("ball batch 2 and 3", "ball_query(X(2, 50, 3), X(3, 10, 3), 0.2, 4)", ValueError,
     "xyz and centres must have the same batch", None),
    ("ball lengths beyond N", "ball_query(X(2, 100, 3), X(2, 10, 3), 0.2, 4, "
     "xyz_lengths=[100, 300])", ValueError, "xyz_lengths[1] = 300 is outside 0..100", None),
    ("emd sizes", "emd(X(1, 50, 3), X(1, 60, 3))", ValueError, "as many points", None),
    ("emd max_gap 0", "emd(X(1, 50, 3), X(1, 50, 3), max_gap=0)", ValueError, "max_gap 0", None),
    ("emd max_gap nan", "emd(X(1, 50, 3), X(1, 50, 3), max_gap=math.nan)", ValueError,
     "max_gap nan", None),
    ("emd max_gap str", "emd(X(1, 50, 3), X(1, 50, 3), max_gap='0.1')", TypeError,
     "max_gap must be a number, not str", None),
    ("emd max_gap nan, empty lengths", "emd(X(2, 10, 3), X(2, 10, 3), max_gap=math.nan, "
     "lengths=[0, 0])", ValueError, "max_gap nan", None),
    ("emd lengths beyond N", "emd(X(2, 100, 3), X(2, 100, 3), lengths=[100, 300])", ValueError,
     "lengths[1] = 300 is outside 0..100", None),
    ("emd_loss lengths beyond N", "emd_loss(X(2, 100, 3), X(2, 100, 3), lengths=[100, 300])",
     ValueError, "lengths[1] = 300 is outside 0..100", "torch"),
    ("grid size 0", "grid(X(2, 50, 3), 0)", ValueError, "size [0.0, 0.0, 0.0]: need finite "
     "numbers > 0", None),
    ("grid size str", "grid(X(2, 50, 3), '0.1')", TypeError, "size must be a number or three "
     "numbers, not str", None),
    ("grid size two", "grid(X(2, 50, 3), (0.1, 0.2))", TypeError, "not 2 of them", None),
    ("grid origin nan", "grid(X(2, 50, 3), 0.1, origin=(0, math.nan, 0))", ValueError,
     "need finite numbers", None),
    ("grid select", "grid(X(2, 50, 3), 0.1, select='middle')", ValueError,
     "select must be 'first', 'nearest', 'random' or 'mean', not 'middle'", None),
    ("grid seed negative", "grid(X(2, 50, 3), 0.1, select='random', seed=-1)", ValueError,
     "seed = -1 is outside 0..9223372036854775807", None),
    ("grid float64", "grid(X64(2, 50, 3), 0.1)", TypeError, "must be float32", None),
    ("grid lengths beyond N", "grid(X(2, 50, 3), 0.1, lengths=[50, 51])", ValueError,
     "lengths[1] = 51 is outside 0..50", None),
    ("grid lengths count", "grid(X(2, 50, 3), 0.1, lengths=[50])", ValueError,
     "lengths must hold 2 lengths", None),
    ("grid lengths float", "grid(X(2, 50, 3), 0.1, lengths=[50.0, 3.5])", TypeError,
     "lengths must be integers", None),
    ("grid empty", "grid(X(2, 0, 3), 0.1)", ValueError, "xyz is empty: (2, 0, 3)", None),
    ("grid (B, N, 4)", "grid(X(2, 50, 4), 0.1)", ValueError,
     "xyz must be (B, N, 3) or (N, 3), not (2, 50, 4)", None),
    # (CUDA: the finite check's, test_cuda_grid_span_follows_the_finite_check)
    ("grid span", "grid(RAMP(2, 50), 1e-9)", PcbenchError,
     "cloud 0 spans 49000000001 voxels along x (at most 524288)", "host"),
    ("serialize size 0", "serialize(X(2, 50, 3), 0)", ValueError, "size [0.0, 0.0, 0.0]: "
     "need finite numbers > 0", None),
    ("serialize curve", "serialize(X(2, 50, 3), 0.1, curve='peano')", ValueError,
     "unknown curve 'peano' (morton, hilbert)", None),
    ("serialize depth 22", "serialize(X(2, 50, 3), 0.1, depth=22)", ValueError,
     "depth 22: need 1 to 21 bits an axis", None),
    ("serialize depth float", "serialize(X(2, 50, 3), 0.1, depth=2.0)", TypeError,
     "depth must be an int or None, not float", None),
    ("serialize float64", "serialize(X64(2, 50, 3), 0.1)", TypeError, "must be float32", None),
    ("serialize lengths beyond N", "serialize(X(2, 50, 3), 0.1, lengths=[50, 51])", ValueError,
     "lengths[1] = 51 is outside 0..50", None),
    ("serialize (B, N, 4)", "serialize(X(2, 50, 4), 0.1)", ValueError,
     "xyz must be (B, N, 3) or (N, 3), not (2, 50, 4)", None),
    # (CUDA: the finite check's, test_cuda_serialize_depth_follows_the_finite_check)
    ("serialize depth too small", "serialize(RAMP(2, 50), 1.0, depth=3)", ValueError,
     "a voxel coordinate of 49 needs more than 3 bits an axis (depth 3)", "host"),
    ("serialize origin above", "serialize(RAMP(2, 50), 1.0, origin=(5, 0, 0))", ValueError,
     "cloud 0 has voxel coordinate -5 along x, below the origin 5", "host"),
    ("curve_encode outside", "curve_encode([[8, 0, 0]], 3)", ValueError,
     "voxel 0's x 8 outside 0..7 (depth 3)", "host"),
    ("curve_decode depth 0", "curve_decode([1], 0)", ValueError,
     "depth 0: need 1 to 21 bits an axis", "host"),
    ("curve_decode negative", "curve_decode([-1], 3)", ValueError,
     "pcbench.curve_decode: curve decode: code -1 of entry 0 outside 0..511 (depth 3)", "host"),
    ("curve_encode shape", "curve_encode([1, 2], 3)", ValueError,
     "need voxel coordinates (..., 3), not shape (2,)", "host"),
    ("serialize empty", "serialize(X(2, 0, 3), 0.1)", ValueError, "xyz is empty: (2, 0, 3)",
     None),
    ("serialize lengths count", "serialize(X(2, 50, 3), 0.1, lengths=[50])", ValueError,
     "lengths must hold 2 lengths", None),
    # (CUDA: a non-finite coordinate follows the finite check, as every call's)
    ("serialize nan", "serialize(X(2, 50, 3) * math.nan, 0.1)", ValueError,
     "non-finite coordinate at cloud 0 point 0", "host"),
    ("grid seed float", "grid(X(2, 50, 3), 0.1, select='random', seed=1.5)", TypeError,
     "seed must be an integer, not float", None),
    ("NNIndex max_queries -1", "NNIndex(X(1, 50, 3), max_queries=-1)", ValueError,
     "max_queries = -1 is outside", None),
    ("nonfinite_seen of the CPU", "nonfinite_seen('cpu')", ValueError,
     "device must be a CUDA device", "torch"),
    ("EMDLoss without torch", "EMDLoss(4, 50)", ImportError, "needs PyTorch", "numpy"),
    ("check_nn batch and none", "check_nn(X(2, 50, 3), X(50, 3), IDX(2, 50))", ValueError,
     "ref and query must have the same batch", None),
    ("check_ball batch and none", "check_ball(X(2, 50, 3), X(10, 3), IDX(2, 10, 4), 0.2)",
     ValueError, "xyz and centres must have the same batch", None),
    ("check_emd batch and none", "check_emd(X(2, 50, 3), X(50, 3), IDX(2, 50))", ValueError,
     "a and b must have the same batch", None),
    ("check_chamfer batch and none", "check_chamfer(X(2, 50, 3), X(50, 3), value=[1.0, 2.0])",
     ValueError, "a and b must have the same batch", None),
    ("check_chamfer one direction", "check_chamfer(X(2, 50, 3), X(2, 40, 3), IDX(2, 50))",
     ValueError, "give both directions", None),
    ("check_grid mean without its means",
     "check_grid(X(50, 3), IDX(50), IDX(50), IDX(50), 0.1, select='mean')", ValueError,
     "select='mean' needs mean", None),
    ("check_grid means for first", "check_grid(X(50, 3), IDX(50), IDX(50), IDX(50), 0.1, "
     "mean=X(50, 3))", ValueError, "mean is judged with select='mean' only", None),
    ("check_grid means short", "check_grid(X(50, 3), IDX(50), IDX(50), IDX(50), 0.1, "
     "select='mean', mean=X(49, 3))", ValueError, "mean has 147 elements, need 150", None),
]
PATHS = ["numpy", "torch-cpu", "cuda-python", "cuda-compiled"]
TORCH_PATHS = PATHS[1:]


def runs_on(case, path):
    want = case[4]
    return (want is None or want == path or (want == "torch" and path in TORCH_PATHS) or
            (want == "cuda" and path.startswith("cuda")) or
            (want == "host" and not path.startswith("cuda")))


def worker(path, first):
    """Run the cases from first on, printing a JSON line as each starts and
    ends, and one after the right call that follows it."""
    if path == "numpy":
        sys.modules["torch"] = None  # a host without PyTorch
    else:
        os.environ["PCBENCH_TORCH_OPS"] = "0" if path == "cuda-python" else ""
    import numpy as np
    import pcbench
    torch = None if path == "numpy" else __import__("torch")
    device = "cuda" if path.startswith("cuda") else "cpu"
    if path == "cuda-compiled" and not pcbench._ops.compiled:
        raise SystemExit("cuda-compiled: no compiled operators here")
    rng = np.random.default_rng(7)

    def X(*shape, dtype="float32"):
        x = rng.random(shape).astype(dtype)
        return x if torch is None else torch.from_numpy(x).to(device)

    def LEN(values, dtype="int64"):
        a = np.array(values, dtype=dtype)
        return a if torch is None else torch.from_numpy(a)  # lengths on the host

    def IDX(*shape):
        a = np.zeros(shape, dtype="int64")
        return a if torch is None else torch.from_numpy(a).to(device)
    names = {n: getattr(pcbench, n) for n in pcbench.__all__}
    def NC(b, n, d):  # (b, n, d), not contiguous
        x = X(n, b, d)
        return x.transpose(0, 1) if torch is not None else np.swapaxes(x, 0, 1)
    def RAMP(b, n):  # (b, n, 3), point i at (i, i, i): the same data on every path
        x = np.repeat(np.arange(n, dtype=np.float32)[None, :, None], b, 0).repeat(3, 2)
        return x if torch is None else torch.from_numpy(x).to(device)
    names.update(X=X, X64=lambda *s: X(*s, dtype="float64"), LEN=LEN, IDX=IDX, math=math, RAMP=RAMP,
                 NC=NC, U64=lambda v: np.array(v, dtype="uint64"))
    ref, query = rng.random((1, 64, 3), dtype=np.float32), rng.random((1, 32, 3), dtype=np.float32)
    want = ((query[0, :, None, :].astype(np.float64) - ref[0, None, :, :]) ** 2).sum(-1).argmin(1)
    for i in range(first, len(CASES)):
        name, code, error, words, _ = CASES[i]
        if not runs_on(CASES[i], path):
            continue
        print(json.dumps({"case": i, "start": True}), flush=True)
        try:
            eval(code, names)
            got = {"raised": None, "message": "returned"}
        except Exception as e:  # what the table checks
            got = {"raised": type(e).__name__, "message": str(e)}
        print(json.dumps(dict(got, case=i)), flush=True)
        try:
            r, q = (ref, query) if torch is None else (torch.from_numpy(ref).to(device),
                                                       torch.from_numpy(query).to(device))
            idx = pcbench.nn(r, q)[0]
            if torch is not None:
                torch.cuda.synchronize() if device == "cuda" else None
                idx = idx.cpu().numpy()
            alive = bool((idx[0] == want).all())
        except Exception as e:  # a dead context, a broken library
            alive = "%s: %s" % (type(e).__name__, e)
        print(json.dumps({"case": i, "alive": alive}), flush=True)


def run_path(path):
    """{case: outcome} for one path, a process a stretch of cases: a case
    that kills its process is recorded and the next process starts after it."""
    out, first = {}, 0
    while first < len(CASES):
        proc = subprocess.run([sys.executable, __file__, "--worker", path, str(first)],
                              capture_output=True, text=True, timeout=600)
        last = None
        for line in proc.stdout.splitlines():
            if not line.startswith("{"):
                continue
            rec = json.loads(line)
            last = rec["case"]
            out.setdefault(last, {}).update(rec)
        if proc.returncode == 0:
            break
        if last is None:
            return {"error": proc.stderr.strip().splitlines()[-1:] or ["exit %d" % proc.returncode]}
        out[last].setdefault("raised", "crash (exit %d)" % proc.returncode)
        out[last].setdefault("message", proc.stderr.strip()[-300:])
        out[last].setdefault("alive", False)
        first = last + 1
    return out


def available():
    paths = ["numpy"]
    probe = ("import torch, pcbench; print(torch.cuda.is_available(), "
             "bool(pcbench._ops.compiled))")
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    if p.returncode == 0:
        cuda, compiled = p.stdout.split()
        paths.append("torch-cpu")
        if cuda == "True":
            paths.append("cuda-python")
            if compiled == "True":
                paths.append("cuda-compiled")
    return paths


def main(argv):
    if argv[:1] == ["--worker"]:
        return worker(argv[1], int(argv[2]))
    paths = available()
    results = {p: run_path(p) for p in paths}
    lines, failed = [], 0
    lines.append("misuse table: %d cases on %s" % (len(CASES), ", ".join(paths)))
    for p in paths:
        if "error" in results[p]:
            failed += 1
            lines.append("FAIL path %s did not run: %s" % (p, results[p]["error"]))
    for i, (name, _, error, words, _) in enumerate(CASES):
        seen, wrong = {}, []
        for p in paths:
            got = results[p].get(i) if "error" not in results[p] else None
            if not runs_on(CASES[i], p) or got is None:
                continue
            seen[p] = got
            if got.get("raised") != error.__name__ or words not in got.get("message", ""):
                wrong.append("%s: %s %r" % (p, got.get("raised"), got.get("message")))
            if got.get("alive") is not True:
                wrong.append("%s: the process did not live on (%s)" % (p, got.get("alive")))
        torch_messages = {seen[p]["message"] for p in seen if p in TORCH_PATHS}
        if len(torch_messages) > 1:
            wrong.append("the torch paths' messages differ: %s"
                         % "; ".join("%s %r" % (p, seen[p]["message"]) for p in seen
                                     if p in TORCH_PATHS))
        if not seen:
            lines.append("skip %-34s no path here" % name)
            continue
        failed += bool(wrong)
        lines.append("%s %-34s %s on %s%s" % ("FAIL" if wrong else "ok  ", name, error.__name__,
                                              ", ".join(seen), "".join("\n     " + w
                                                                        for w in wrong)))
    lines.append("%d failed" % failed)
    text = "\n".join(lines)
    print(text)
    if argv[:1] == ["--log"]:
        with open(argv[1], "w") as f:
            f.write(text + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
