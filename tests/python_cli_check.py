"""python_cli_check.py PCBENCH DIR - the Python package on CUDA tensors gives
the command line's answers (FPS samples, NN indices and squared distances)
for the same files; run on a GPU host. Prints 'N passed, N failed'."""
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import pcbench  # noqa: E402
from peers import read_ply  # noqa: E402

tool, work = sys.argv[1], sys.argv[2]
passed = failed = 0


def cli(*args):
    return subprocess.run([tool, *args], check=True, capture_output=True, text=True).stdout


for kind, n, seed in [("uniform", 10000, 5), ("lidar", 120000, 6)]:
    path = os.path.join(work, "%s.ply" % kind)
    cli("gen", kind, "-n", str(n), "--seed", str(seed), "-o", path)
    xyz = torch.from_numpy(read_ply(path)).cuda()
    want = np.array(cli("fps", "-i", path, "-m", "1000").split(), dtype=np.int64)
    got = pcbench.fps(xyz, 1000).cpu().numpy()
    ok = (got == want).all()
    passed, failed = passed + ok, failed + (not ok)
    print("%s fps %d x 1000: %s" % (kind, n, "same as the CLI" if ok else "DIFFERENT"))
    qpath = os.path.join(work, "%s-q.ply" % kind)
    cli("gen", kind, "-n", str(n), "--seed", str(seed + 100), "-o", qpath)
    rows = np.array(cli("nn", "-r", path, "-q", qpath, "--no-shift").split(),
                    dtype=np.float64).reshape(-1, 2)
    idx, d2 = pcbench.nn(xyz, torch.from_numpy(read_ply(qpath)).cuda())
    ok = (idx.cpu().numpy() == rows[:, 0]).all() and np.allclose(
        d2.cpu().numpy(), rows[:, 1], rtol=1e-6, atol=0)
    passed, failed = passed + ok, failed + (not ok)
    print("%s nn %d x %d: %s" % (kind, n, n, "same as the CLI" if ok else "DIFFERENT"))
print("%d passed, %d failed" % (passed, failed))
