"""The inputs `pcbench bench --write-inputs` hands to other libraries: its PLY clouds
and the configurations they belong to."""
import array
import json
import os
import sys

from .common import np


def read_ply(path):
    """The float32 x, y, z of a binary little-endian PLY written by pcbench: an
    n x 3 numpy array, or a list of n [x, y, z] where numpy is missing."""
    with open(path, "rb") as f:
        head = b""
        while not head.endswith(b"end_header\n"):
            line = f.readline()
            if not line:
                raise ValueError("%s: no end_header" % path)
            head += line
        n = next(int(l.split()[2]) for l in head.decode("ascii").splitlines()
                 if l.startswith("element vertex"))
        data = array.array("f")
        data.frombytes(f.read(n * 12))
    if len(data) != n * 3:
        raise ValueError("%s: truncated (%d of %d floats)" % (path, len(data), n * 3))
    if sys.byteorder != "little":
        data.byteswap()
    if np is None:
        return [list(data[3 * i:3 * i + 3]) for i in range(n)]
    return np.frombuffer(data, dtype=np.float32).reshape(n, 3).copy()


def read_configs(folder):
    with open(os.path.join(folder, "configs.tsv"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    words = lines[0].lstrip("# ").split()
    meta = dict(zip(words[0::2], words[1::2]))
    head = lines[1].split("\t")
    configs = []
    for line in lines[2:]:
        row = dict(zip(head, line.split("\t")))
        row.update(json.loads(row.pop("fields", "") or "{}"))  # the problem's own (grid's cell)
        for k in ("batch", "n", "nq", "m", "start", "k"):
            row[k] = int(row.get(k, 0))
        row["radius"] = float(row.get("radius") or 0)
        row["max_gap"] = float(row.get("max_gap") or 0)  # EMD in loss mode; its twin's clouds
        configs.append(row)
    return meta, configs
