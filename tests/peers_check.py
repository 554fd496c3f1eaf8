#!/usr/bin/env python3
"""peers_check.py PCBENCH TMP - scripts/peers/ end to end with planted peers
(pure Python, no numpy needed): a right one is timed, a wrong one is stored as
wrong and never timed, a missing one is unavailable, stored ones are resumed,
the budget is honoured, and tables.py shows a wrong peer as WRONG."""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
import peers  # noqa: E402

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: " + what)


def dp_fps(points, m, start):
    pts = points.tolist() if hasattr(points, "tolist") else points
    d = [float("inf")] * len(pts)
    out = [start]
    for _ in range(1, m):
        q = pts[out[-1]]
        for k, p in enumerate(pts):
            dk = (p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 + (p[2] - q[2]) ** 2
            if dk < d[k]:
                d[k] = dk
        out.append(max(range(len(pts)), key=lambda k: (d[k], -k)))
    return out


class RightFps(peers.Peer):
    name, problem, module, what = "tiny_dp", "fps", "array", "pure-Python dp"

    def prepare(self, clouds, cfg):
        return [(c["a"], cfg) for c in clouds]

    def solve(self, st):
        a, cfg = st
        return dp_fps(a, cfg["m"], cfg["start"])


class WrongFps(RightFps):
    name, what = "swapped_dp", "dp with its 2nd and 3rd samples swapped"

    def solve(self, st):
        out = RightFps.solve(self, st)
        out[1], out[2] = out[2], out[1]
        return out


class MissingFps(RightFps):
    name, module = "missing", "pcbench_no_such_module"


class BatchedFps(RightFps):
    """Answers the whole batch in one call, as pcbench's Python entry does."""
    name, batched = "batched_dp", True

    def prepare(self, clouds, cfg):
        return [([c["a"] for c in clouds], cfg)]

    def solve(self, st):
        clouds, cfg = st
        return [dp_fps(a, cfg["m"], cfg["start"]) for a in clouds]


# The README's example of a peer of one's own (FPS), as a user would write it.
USER_MODULE = '''
def sample(points, m, start):
    """Farthest point sampling, plain Python: m indices into points."""
    pts = points.tolist()
    d = [float("inf")] * len(pts)
    out = [start]
    while len(out) < m:
        q = pts[out[-1]]
        for k, p in enumerate(pts):
            d[k] = min(d[k], (p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 + (p[2] - q[2]) ** 2)
        out.append(max(range(len(pts)), key=lambda k: (d[k], -k)))
    return out


def backwards(points, m, start):
    return [start] + sample(points, m, start)[:0:-1]


answer = 42


def hang_on_2000(points, m, start):
    """Never returns on clouds of 2000 points."""
    if len(points) == 2000:
        import time
        time.sleep(3600)
    return sample(points, m, start)


def unruly(points, m, start):
    """Leaves a child behind that ignores SIGTERM, then sends SIGTERM to its
    whole process group (the harness's too, were it shared)."""
    import os, signal
    pid = os.fork()
    if pid == 0:
        import time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(600)
        os._exit(0)
    with open(os.environ["PCB_UNRULY_PIDS"], "a") as f:
        f.write("%d\\n" % pid)
    os.killpg(0, signal.SIGTERM)
    return sample(points, m, start)


def crash_on_2000(points, m, start):
    """Kills its own process on clouds of 2000 points, as a broken extension would."""
    if len(points) == 2000:
        import os, signal
        os.kill(os.getpid(), signal.SIGSEGV)
    return sample(points, m, start)
'''


class IdentityEmd(peers.Peer):
    """An approximate EMD peer answering the identity: a bijection, not the optimum."""
    name, problem, module, exact = "identity_emd", "emd", "array", False
    what = "point i of A to point i of B"

    def prepare(self, clouds, cfg):
        return [len(c["a"]) for c in clouds]

    def solve(self, n):
        return list(range(n))


class CollidingEmd(IdentityEmd):
    """Every point to point 0 of B, promising no bijection (like MSN's emd)."""
    name, bijection = "colliding_emd", False

    def solve(self, n):
        return [0] * (n - 1) + [-1]


class CollidingPromised(CollidingEmd):
    name, bijection = "colliding_promised", True


class IdentityBounded(IdentityEmd):
    """The identity, promising a certified bound it cannot keep (0.1%) or can (1000%)."""
    def __init__(self, bound):
        self.name, self.max_gap = "identity_within_%g" % bound, bound


def emd_peers(tool, tmp):
    """An approximate EMD peer's bijection is judged and its gap kept; one that
    promises no bijection and gives none is timed and marked; one that
    promises a bijection and gives none is wrong and not timed."""
    res = os.path.join(tmp, "r4")
    rc = peers.main(["--suite", "quick", "--problem", "emd", "--filter", "/b1/", "--results", res,
                     "--pcbench", tool, "--machine", "testbox", "--reps", "2"],
                    [IdentityEmd(), CollidingEmd(), CollidingPromised(), IdentityBounded(1e-3),
                     IdentityBounded(10)])
    with open(os.path.join(res, "testbox", "quick", "peers-emd-uniform-b1-n128.json"),
              encoding="utf-8") as f:
        e = {x["peer"]: x for x in json.load(f)["results"]}
    i, c, w = e.get("identity_emd", {}), e.get("colliding_emd", {}), e.get("colliding_promised", {})
    check(rc == 0 and i.get("status") == "ok" and i.get("gap", 0) > 0 and i.get("compute"),
          "a bijection far from the optimum: ok, with its gap: %s" % i)
    check(c.get("status") == "not-a-bijection" and (c.get("compute") or {}).get("reps") == 2
          and c.get("bijection") == {"shared": 126, "unmatched": 1, "pairs_gap": c["bijection"]["pairs_gap"]}
          and "127 points of A share" not in c.get("detail", "") and "126 points of A share a target"
          in c.get("detail", ""), "no bijection promised, none given: timed and marked: %s" % c)
    check(w.get("status") == "wrong" and w.get("compute") is None and "share a target" in w.get("detail", ""),
          "a bijection promised, none given: wrong, not timed: %s" % w)
    tight, loose = e.get("identity_within_0.001", {}), e.get("identity_within_10", {})
    check(tight.get("status") == "wrong" and tight.get("compute") is None
          and "not a bijection" not in tight.get("detail", "") and "allowed 0.001" in tight.get("detail", ""),
          "a bijection beyond the bound it promised: wrong, and not called a non-bijection: %s" % tight)
    check(loose.get("status") == "ok" and loose.get("gap", 0) > 0 and loose.get("compute"),
          "a bijection within the bound it promised: ok, with its gap: %s" % loose)
    import pcbresults
    check("not a bijection" in pcbresults.peer_cell(c), "the table marks it: %s" % pcbresults.peer_cell(c))


class IdentityAtGap(IdentityEmd):
    """The identity, held to the configuration's own gap (as pcbench_py is):
    1000% where the configuration asks for none."""
    name, max_gap, takes_gap = "identity_at_gap", 100, True


class IdentityExact(IdentityEmd):
    name, exact = "identity_exact", True


def emd_gap_peers(tool, tmp):
    """A loss-mode configuration (/gap0.01) reaches the peers with its twin's
    clouds: a peer that takes the gap is held to it there, an exact peer is
    not run again, and its file is its own, found by the tables."""
    res = os.path.join(tmp, "r5")
    rc = peers.main(["--suite", "seed", "--problem", "emd", "--filter", "emd/uniform/b32/n1024",
                     "--results", res, "--pcbench", tool, "--machine", "testbox", "--reps", "1"],
                    [IdentityAtGap(), IdentityExact()])
    docs = {}
    for name in ("peers-emd-uniform-b32-n1024.json", "peers-emd-uniform-b32-n1024-gap0.01.json"):
        path = os.path.join(res, "testbox", "seed", name)
        check(os.path.exists(path), "no " + path)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                docs[name] = json.load(f)
    if len(docs) < 2:
        return
    twin, gap = docs.values()
    e0 = {x["peer"]: x for x in twin["results"]}
    e1 = {x["peer"]: x for x in gap["results"]}
    check(rc == 0 and gap["config"].get("max_gap") == 0.01 and "max_gap" not in twin["config"],
          "the gap is in its file's configuration: %s" % gap["config"])
    check(e0.get("identity_at_gap", {}).get("status") == "ok",
          "without /gap, held to its own 10000%%: %s" % e0.get("identity_at_gap"))
    w = e1.get("identity_at_gap", {})
    check(w.get("status") == "wrong" and "allowed 0.01" in w.get("detail", ""),
          "at /gap0.01, held to 1%%: %s" % w)
    x = e1.get("identity_exact", {})
    check(x.get("status") == "unavailable" and "exact" in x.get("detail", "")
          and e0.get("identity_exact", {}).get("status") == "wrong",
          "an exact peer runs without /gap only: %s" % x)
    import tables
    check(tables.find([twin, gap], id=gap["config"]["id"], max_gap=0.01) is gap
          and tables.find([gap, twin], id=twin["config"]["id"]) is twin,
          "the tables tell the two apart")
    check("within 1%" in tables.config_label(gap["config"]), tables.config_label(gap["config"]))


class BruteKnn(peers.Peer):
    """k nearest by numpy brute force (float64 distances, stable sort)."""
    name, problem, module, what = "numpy_knn", "knn", "numpy", "numpy brute force"

    def prepare(self, clouds, cfg):
        return [(c["a"], c["b"], cfg) for c in clouds]

    def solve(self, st):
        import numpy
        a, b, cfg = st
        d = ((b[:, None, :].astype(numpy.float64) - a[None, :, :]) ** 2).sum(-1)
        return numpy.argsort(d, axis=1, kind="stable")[:, :cfg["k"]]


class RepeatKnn(BruteKnn):
    name, what = "repeat_knn", "the nearest point k times"

    def solve(self, st):
        nearest = BruteKnn.solve(self, st)[:, :1]
        return nearest.repeat(st[2]["k"], axis=1)


class ThreeOnly(BruteKnn):
    name, what = "three_only", "k = 3 only"

    def unsupported(self, cfg):
        return None if cfg["k"] == 3 else "k = 3 only (this is k = %d)" % cfg["k"]


def knn_peers(tool, tmp):
    """kNN rows are judged a row a line (check knn), a wrong row is wrong and not
    timed, and a peer that answers only some k says so as unavailable."""
    res = os.path.join(tmp, "r5")
    rc = peers.main(["--suite", "quick", "--problem", "knn", "--results", res, "--pcbench", tool,
                     "--machine", "testbox", "--reps", "2"], [BruteKnn(), RepeatKnn(), ThreeOnly()])
    with open(os.path.join(res, "testbox", "quick", "peers-knn-uniform-b2-n2000-q1500-k8.json"),
              encoding="utf-8") as f:
        doc = json.load(f)
    e = {x["peer"]: x for x in doc["results"]}
    r, w, t = e.get("numpy_knn", {}), e.get("repeat_knn", {}), e.get("three_only", {})
    check(rc == 0 and doc["config"].get("k") == 8 and r.get("status") == "ok" and
          "k = 8" in r.get("detail", "") and (r.get("compute") or {}).get("reps") == 2,
          "a right kNN peer: judged a row a query, timed: %s" % r)
    check(w.get("status") == "wrong" and "twice" in w.get("detail", "") and w.get("compute") is None,
          "rows of one repeated point: wrong, not timed: %s" % w)
    check(t.get("status") == "unavailable" and "k = 3 only" in t.get("detail", ""),
          "a peer for k = 3 only, at k = 8: unavailable, with why: %s" % t)


class FirstBall(peers.Peer):
    """Ball query by numpy, the first k by index inside (float32 distances, as
    the kernels round them), in a layout of the peer's choosing."""
    name, problem, module, what = "numpy_ball", "ball", "numpy", "numpy brute force"
    pad_first = False

    def unsupported(self, cfg):
        return None if cfg["select"] == "first" else "the first k by index only"

    def prepare(self, clouds, cfg):
        return [(c["a"], c["b"], cfg) for c in clouds]

    def solve(self, st):
        import numpy
        a, b, cfg = st
        d = ((b[:, None, :] - a[None, :, :]) ** 2).sum(-1, dtype=numpy.float32)
        inside = d < numpy.float32(cfg["radius"]) ** 2
        rows = numpy.full((len(b), cfg["k"]), -1, dtype=numpy.int64)
        for i, row in enumerate(inside):
            hits = numpy.flatnonzero(row)[:cfg["k"]]
            rows[i, :len(hits)] = hits
            if self.pad_first and len(hits):
                rows[i, len(hits):] = hits[0]
        return rows


class PaddedBall(FirstBall):
    name, pad_first = "pointnet2_like_ball", True


class UnpaddedAsIfRepeated(FirstBall):
    """-1 padding while declaring PointNet++'s repeat of the first hit: the
    declared layout is what is judged, and -1 rows are still read as padding."""
    name = "minus_one_declared_repeat"
    pad_first = True

    def solve(self, st):
        rows = FirstBall.solve(self, st)
        rows[:, 1:][rows[:, 1:] == -1] = 0  # point 0 where the row ran out: a real point
        return rows


def ball_peers(tool, tmp):
    """Ball rows are judged a row a line under the suite's selection and the peer's
    declared padding (check ball --pad first); point 0 as padding is wrong, and a
    first-only peer says so on nearest configurations."""
    res = os.path.join(tmp, "r6")
    rc = peers.main(["--suite", "quick", "--problem", "ball", "--results", res, "--pcbench", tool,
                     "--machine", "testbox", "--reps", "2"],
                    [FirstBall(), PaddedBall(), UnpaddedAsIfRepeated()])
    folder = os.path.join(res, "testbox", "quick")
    docs = [json.load(open(os.path.join(folder, f), encoding="utf-8"))
            for f in sorted(os.listdir(folder)) if f.startswith("peers-ball-")]
    check(rc == 0 and len(docs) == 1 and docs[0]["config"].get("select") == "nearest",
          "the quick suite's ball configuration (nearest): %s" % [d["config"] for d in docs])
    e = {x["peer"]: x for x in docs[0]["results"]}
    check(all(x.get("status") == "unavailable" and "first k" in x.get("detail", "")
              for x in e.values()) and len(e) == 3,
          "first-only peers on a nearest configuration: unavailable, with why: %s" % e)
    # the same peers judged on a first configuration of their own
    cfg = dict(docs[0]["config"], select="first", dir="x")
    folder_in = os.path.join(tmp, "ball-in")
    os.makedirs(folder_in, exist_ok=True)
    from peers import inputs, runner
    subprocess.run([tool, "gen", "uniform", "-n", "2000", "--seed", "3", "-o",
                    os.path.join(folder_in, "a-0.ply")], check=True, capture_output=True)
    subprocess.run([tool, "gen", "uniform", "-n", "300", "--seed", "4", "-o",
                    os.path.join(folder_in, "b-0.ply")], check=True, capture_output=True)
    pts = inputs.read_ply(os.path.join(folder_in, "a-0.ply"))
    b = inputs.read_ply(os.path.join(folder_in, "b-0.ply"))
    verdicts = {}
    for peer in (FirstBall(), PaddedBall(), UnpaddedAsIfRepeated()):
        st = peer.prepare([{"a": pts, "b": b}], cfg)[0]
        verdicts[peer.name] = runner.judge(tool, cfg, folder_in, peer, [peer.solve(st)], tmp)
    check(verdicts["numpy_ball"][0] and verdicts["pointnet2_like_ball"][0],
          "first-k rows, -1 padded or the first hit repeated as declared: right: %s" % verdicts)
    check(not verdicts["minus_one_declared_repeat"][0],
          "point 0 where a row ran out: wrong: %s" % (verdicts["minus_one_declared_repeat"],))


def user_peer(tool, tmp):
    # A callable of the user's, named module:function, timed and judged with no
    # code in pcbench: a right one, a wrong one, a name that is not a function.
    with open(os.path.join(tmp, "user_peer_example.py"), "w", encoding="utf-8") as f:
        f.write(USER_MODULE)
    sys.path.insert(0, tmp)
    res3 = os.path.join(tmp, "r3")
    user = ["--suite", "quick", "--problem", "fps", "--filter", "/b1/", "--results", res3,
            "--pcbench", tool, "--machine", "testbox", "--reps", "2", "--peer",
            "user_peer_example:sample,user_peer_example:backwards,user_peer_example:answer"]
    rc = peers.main(user)
    with open(os.path.join(res3, "testbox", "quick", "peers-fps-uniform-b1-n2000-m100.json"),
              encoding="utf-8") as f:
        u = {x["peer"]: x for x in json.load(f)["results"]}
    ur = u.get("user_peer_example:sample", {})
    check(rc == 0 and ur.get("status") == "ok" and ur["compute"]["reps"] == 2 and
          "steps ok" in ur.get("detail", ""), "user's callable: %s" % ur)
    uw = u.get("user_peer_example:backwards", {})
    check(uw.get("status") == "wrong" and "FAIL" in uw.get("detail", ""), "user's wrong one: %s" % uw)
    un = u.get("user_peer_example:answer", {})
    check(un.get("status") == "unavailable" and "no callable answer" in un.get("detail", ""),
          "not a function: %s" % un)
    # A peer that kills its process is stored as crashed there; its other runs
    # and the other peers go on (each peer runs in a process of its own).
    def both_configs(res, extra, names):
        """Run the callables on the b1 and b2 configurations; their entries by file and peer."""
        rc = peers.main(user[:5] + ["/b1/,/b2/", "--results", res] + extra + user[8:15] + [names])
        got = {}
        for name in ("fps-uniform-b1-n2000-m100", "fps-uniform-b2-n3000-m64"):
            path = os.path.join(res, "testbox", "quick", "peers-%s.json" % name)
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    got[name] = {x["peer"]: x for x in json.load(f)["results"]}
        return rc, got
    # What a killed process leaves in the temporary folder: nothing.
    scratch_home, saved_tmpdir = os.path.join(tmp, "tmpdir"), os.environ.get("TMPDIR")
    os.mkdir(scratch_home)
    os.environ["TMPDIR"], tempfile.tempdir = scratch_home, None
    rc, got = both_configs(os.path.join(tmp, "r5"), [],
                           "user_peer_example:crash_on_2000,user_peer_example:sample")
    c1 = got.get("fps-uniform-b1-n2000-m100", {}).get("user_peer_example:crash_on_2000", {})
    c2 = got.get("fps-uniform-b2-n3000-m64", {}).get("user_peer_example:crash_on_2000", {})
    s2 = got.get("fps-uniform-b2-n3000-m64", {}).get("user_peer_example:sample", {})
    check(rc == 0 and c1.get("status") == "crashed" and "SIGSEGV" in c1.get("detail", ""),
          "a peer that crashes its process: stored as crashed: %s" % c1)
    check(c2.get("status") == "ok" and s2.get("status") == "ok",
          "its next run and the next peer go on: %s / %s" % (c2.get("status"), s2.get("status")))
    rc, got = both_configs(os.path.join(tmp, "r6"), ["--run-timeout", "3"],
                           "user_peer_example:hang_on_2000")
    h1 = got.get("fps-uniform-b1-n2000-m100", {}).get("user_peer_example:hang_on_2000", {})
    h2 = got.get("fps-uniform-b2-n3000-m64", {}).get("user_peer_example:hang_on_2000", {})
    check(rc == 0 and h1.get("status") == "timed-out" and "--run-timeout" in h1.get("detail", ""),
          "a run past --run-timeout: stopped and stored as timed-out: %s" % h1)
    check(h2.get("status") == "ok", "its next run goes on: %s" % h2.get("status"))
    left = os.listdir(scratch_home)
    if saved_tmpdir is None:
        del os.environ["TMPDIR"]
    else:
        os.environ["TMPDIR"] = saved_tmpdir
    tempfile.tempdir = None
    check(left == [], "crashed and stopped runs leave no temporary folders: %s" % left)
    # A peer that signals its process group and forks: the harness goes on, and
    # the child it left is gone once the peer's runs end.
    pids = os.path.join(tmp, "unruly.pids")
    os.environ["PCB_UNRULY_PIDS"] = pids
    rc, got = both_configs(os.path.join(tmp, "r7"), [], "user_peer_example:unruly")
    u1 = got.get("fps-uniform-b1-n2000-m100", {}).get("user_peer_example:unruly", {})
    check(u1.get("status") == "crashed", "a peer that signals its group: its run crashed, the "
          "harness went on: %s" % u1)
    left = []
    if os.path.exists(pids):
        with open(pids, encoding="utf-8") as f:
            left = [int(x) for x in f.read().split()]
    for _ in range(50):
        alive = []
        for pid in left:
            try:
                os.kill(pid, 0)
                alive.append(pid)
            except ProcessLookupError:
                pass
        if not alive:
            break
        time.sleep(0.1)
    check(left and not alive, "the children a peer forked are ended with it: %s of %s alive"
          % (alive, left))
    try:
        peers.main(["--peer", "user_peer_example:sample", "--pcbench", tool])
        check(False, "a callable without --problem was accepted")
    except SystemExit as e:
        check(e.code == 2, "a callable without --problem: exit %s" % e.code)


def build_manifest(tmp):
    """scripts/peer_build.py's list of GPU peers holds together (their builds
    need a GPU host's PyTorch and nvcc): bindings present, archives unique,
    pinned (a commit, or a sha256 for PyPI), edits well formed and matching
    what they are meant to replace; a peer not built says so; sources without
    network or folder fail with the URL to fetch."""
    import re
    import peer_build
    names = [p["name"] for p in peer_build.PEERS]
    check(len(set(names)) == len(names), "peer names unique: %s" % names)
    for p in peer_build.PEERS:
        check(not p["binding"] or os.path.exists(os.path.join(HERE, "..", "scripts", "peer_bindings",
                                                              p["binding"])),
              "%s: binding %s exists" % (p["name"], p["binding"]))
        check(p["archive"] in p["url"] or p["url"].endswith(p["archive"].split("-")[-1]),
              "%s: the URL serves the archive" % p["name"])
        check("sha256" in p or "commit" in p["version"], "%s pinned" % p["name"])
        for edit in p["edits"]:
            check(len(edit) == 4 and re.compile(edit[1]) is not None, "%s: edit %s" % (p["name"], edit))
    check(re.sub(peer_build.ATEN_1X[-1][0], peer_build.ATEN_1X[-1][1], "x.data<float>()")
          == "x.data_ptr<float>()", "the data<T>() edit")
    mod, why = peer_build.load("no_such_peer", out=tmp)
    check(mod is None and "not built" in why, "a peer not built: %s" % why)
    empty = os.path.join(tmp, "no-sources")
    os.makedirs(empty, exist_ok=True)
    rc = peer_build.main(["build", empty, "--out", os.path.join(tmp, "pb")])
    check(rc in (0, 1) and not os.listdir(empty), "build with no archives builds nothing")
    python_peer(tmp, peer_build)
    stale_rules(tmp, peer_build)


def python_peer(tmp, peer_build):
    """A peer that is Python alone (Pointcept's serialization): its listed files
    out of the archive, kept as a package that loads with its relative imports,
    its record saying so; nothing compiled."""
    import io
    import tarfile
    folder, out = os.path.join(tmp, "py-sources"), os.path.join(tmp, "py-build")
    os.makedirs(folder, exist_ok=True)
    files = {"Lib-1/pkg/__init__.py": "from .inner import answer\n",
             "Lib-1/pkg/inner.py": "def answer():\n    return 42\n",
             "Lib-1/pkg/unlisted.py": "raise SystemExit('an unlisted file was kept')\n"}
    with tarfile.open(os.path.join(folder, "lib-1.tar.gz"), "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    peer = {"name": "pylib", "what": "a Python peer", "version": "commit 1", "archive": "lib-1.tar.gz",
            "url": "https://example.invalid/lib-1.tar.gz", "root": "Lib-1/pkg",
            "sources": ["__init__.py", "inner.py"], "python": True, "binding": None,
            "defines": [], "edits": []}
    work = os.path.join(out, "pylib")
    os.makedirs(work, exist_ok=True)
    src, applied = peer_build.extract(peer, folder, work)
    rec = peer_build.keep_python(peer, folder, work, src, applied)
    mod, why = peer_build.load("pylib", out=out)
    check(mod is not None and mod.answer() == 42 and mod.build["python"] and rec["module"] ==
          "pcb_peer_pylib", "a Python peer kept and loaded: %s" % why)
    check(not os.path.exists(os.path.join(work, "pcb_peer_pylib", "unlisted.py")),
          "a Python peer keeps its listed files only")


def stale_rules(tmp, peer_build):
    """A build is kept while its record matches; a build carried to a GPU
    host is kept when it holds that GPU's code, whatever TORCH_CUDA_ARCH_LIST
    says there; anything else names what changed."""
    import types
    torch = sys.modules.get("torch")
    if torch is None:  # a stand-in: stale() reads only torch.__version__
        sys.modules["torch"] = types.SimpleNamespace(__version__="0.0-test")
    peer = dict(peer_build.PEERS[0])
    src, out = os.path.join(tmp, "stale-src"), os.path.join(tmp, "stale-out")
    work = os.path.join(out, peer["name"])
    os.makedirs(src, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(src, peer["archive"]), "wb") as f:
        f.write(b"an archive")
    rec = {"recipe": peer_build.recipe(peer), "module": "m", "torch": sys.modules["torch"].__version__,
           "archive_sha256": peer_build.sha256(os.path.join(src, peer["archive"])),
           "python": "%d.%d" % sys.version_info[:2], "arch": ["8.0", "9.0"]}

    def stale(rec, gpu, env=None):
        with open(os.path.join(work, "BUILD.json"), "w", encoding="utf-8") as f:
            json.dump(rec, f)
        open(os.path.join(work, "m.so"), "w").close()
        saved, saved_env = peer_build.gpu_arch, os.environ.get("TORCH_CUDA_ARCH_LIST")
        peer_build.gpu_arch = lambda: gpu
        if env:
            os.environ["TORCH_CUDA_ARCH_LIST"] = env
        try:
            return peer_build.stale(peer, src, out)
        finally:
            peer_build.gpu_arch = saved
            os.environ.pop("TORCH_CUDA_ARCH_LIST", None)
            if saved_env is not None:
                os.environ["TORCH_CUDA_ARCH_LIST"] = saved_env
    check(stale(rec, "9.0", env="9.0a;10.0") is None, "carried to a GPU it holds: kept")
    check("this GPU is 10.0" in str(stale(rec, "10.0")), "a GPU it lacks: rebuilt")
    check(stale(rec, None, env="8.0;9.0") is None, "no GPU, the same arch list: kept")
    check("asked for 9.0" in str(stale(rec, None)), "no GPU, another arch list: rebuilt")
    check("torch" in str(stale(dict(rec, torch="1.0"), "9.0")), "another PyTorch: rebuilt, said why")
    check("recipe" in str(stale(dict(rec, recipe="x"), "9.0")), "another recipe: rebuilt")
    if torch is None:
        del sys.modules["torch"]


def site_edits(tmp):
    """peer_build.py patch-site edits KeOps' installed compile helper once,
    records it and empties KeOps' build folder; a second run changes nothing."""
    import peer_build
    site, cache = os.path.join(tmp, "site"), os.path.join(tmp, "keops-cache")
    helper = os.path.join(site, "keopscore", "binders", "nvrtc", "nvrtc_jit.cpp")
    os.makedirs(os.path.dirname(helper))
    os.makedirs(cache)
    before = ('int f(int deviceProp_major, int deviceProp_minor) {\n'
              '  std::ostringstream arch_flag;\n'
              '  arch_flag << "-arch=" << ARCHTAG << "_" << deviceProp_major\n'
              '            << deviceProp_minor;\n\n'
              '  char *arch_flag_char = new char[arch_flag.str().length()];\n'
              '  arch_flag_char = strdup(arch_flag.str().c_str());\n}\n')
    with open(helper, "w", encoding="utf-8") as f:
        f.write(before)
    peer_build.main(["patch-site", site, "--keops-cache", cache])
    with open(helper, encoding="utf-8") as f:
        after = f.read()
    check("ostringstream" not in after and 'snprintf(arch_flag_char, 64, "-arch=%s_%d%d"' in after,
          "KeOps' arch flag made without a stream: %s" % after)
    with open(os.path.join(site, "pcbench-edits.json"), encoding="utf-8") as f:
        rec = json.load(f)
    check(len(rec) == 1 and "locale" in rec[0]["why"] and not os.path.exists(cache),
          "the edit recorded, KeOps' stale helpers removed: %s" % rec)
    os.makedirs(cache)
    peer_build.main(["patch-site", site, "--keops-cache", cache])
    with open(os.path.join(site, "pcbench-edits.json"), encoding="utf-8") as f:
        check(len(json.load(f)) == 1 and os.path.exists(cache), "a second run changes nothing")


def explanations():
    """A wrong answer's cause is named where it matches a defect the catalog
    knows from the peers, and only there."""
    fps = {"problem": "fps"}
    cloud = [{"a": [[1.0, 1.0, 1.0], [0.01, 0.01, 0.01], [0.5, 0.5, 0.5], [300.0, 0, 0],
                    [-300.0, 0, 0]]}]
    why = lambda cfg, answer, detail: peers.why_wrong(cfg, cloud, [answer], detail)
    check("origin" in str(why(fps, [0, 2], "cloud 0 step 1: chose 2 (d2=0.75) but 1 has d2=2.94")),
          "a point near the origin skipped")
    check("5e4" in str(why(fps, [0, 3], "cloud 0 step 1: chose 3 (d2=89701) but 4 has d2=90601")),
          "squared distances capped at 5e4")
    check(why(fps, [0, 2], "cloud 0 step 1: chose 2 (d2=0.75) but 0 has d2=0.9") is None,
          "no cause made up for another wrong answer")
    two = [{"a": [[1.0, 1.0, 1.0], [0.5, 0.5, 0.5], [0.6, 0.6, 0.6]]}, cloud[0]]
    check("origin" in str(peers.why_wrong(fps, two, [[0, 1], [0, 2]], "cloud 1: FAIL: cloud 1 step "
                                          "1: chose 2 (d2=0.75) but 1 has d2=2.94")),
          "the cause read off the cloud that failed, not cloud 0")
    check(why(fps, [0, 3, 3], "") == "repeats index 3", "a repeated index")
    check("its own" in str(why(fps, [2, 0], "cloud 0: first index 2, start is 0")), "its own start")
    check(why(fps, [0, 0, 0, 0], "") == "answers zeros", "zeros")
    check("near ties" in str(why({"problem": "nn"}, [0], "recall 0.9973, worst distance ratio 1.02685")),
          "NN near ties")
    check(why({"problem": "nn"}, [0], "recall 0.5, worst distance ratio 3.5") is None,
          "no cause for a far miss")
    far = [{"a": [[100.0, 0, 0], [100.001, 0, 0], [0, 0, 0]], "b": [[100.0002, 0, 0]]}]
    tie = ("cloud 0: FAIL: 1 of 1 queries not nearest; first: query 0 of cloud 0 got index 1 at "
           "d2 6.4e-07, nearest is 0 at 4e-08 / nn: 1 queries, recall 0, worst distance ratio 4")
    check("expanded form" in str(peers.why_wrong({"problem": "nn"}, far, [[1]], tie)),
          "a miss within float32 rounding of a.a + b.b, far from the origin")
    near = [{"a": [[0.1, 0, 0], [0.2, 0, 0], [0, 0, 0]], "b": [[0.11, 0, 0]]}]
    miss = ("cloud 0: FAIL: 1 of 1 queries not nearest; first: query 0 of cloud 0 got index 1 at "
            "d2 0.0081, nearest is 0 at 0.0001 / nn: 1 queries, recall 0, worst distance ratio 9")
    check(peers.why_wrong({"problem": "nn"}, near, [[1]], miss) is None,
          "the same miss near the origin is not rounding")
    import pcbresults
    cell = pcbresults.peer_cell({"status": "wrong", "why": "answers zeros", "compute": None})
    check(cell == "**WRONG** (answers zeros)", "the table gives the cause: %s" % cell)


class WrongOnCloud1(RightFps):
    name, what = "wrong_on_1", "dp, its cloud 1 answered with samples swapped"

    def prepare(self, clouds, cfg):
        return [(c["a"], cfg, i) for i, c in enumerate(clouds)]

    def solve(self, st):
        out = RightFps.solve(self, st[:2])
        if st[2] == 1:
            out[1], out[2] = out[2], out[1]
        return out


def batches(tool, tmp):
    """A batch's clouds are checked at once, the first wrong one in order
    reported; an EMD optimum is kept beside its pair for the next peer."""
    res = os.path.join(tmp, "rb")
    rc = peers.main(["--suite", "quick", "--problem", "fps", "--filter", "/b2/", "--results", res,
                     "--pcbench", tool, "--machine", "testbox", "--reps", "2"],
                    [RightFps(), WrongOnCloud1()])
    with open(os.path.join(res, "testbox", "quick", "peers-fps-uniform-b2-n3000-m64.json"),
              encoding="utf-8") as f:
        e = {x["peer"]: x for x in json.load(f)["results"]}
    r, w = e.get("tiny_dp", {}), e.get("wrong_on_1", {})
    check(rc == 0 and r.get("status") == "ok" and "2 clouds, all pass" in r.get("detail", ""),
          "a right batch: %s" % r)
    check(w.get("status") == "wrong" and w.get("detail", "").startswith("cloud 1: FAIL: cloud 1 step"),
          "the wrong cloud of a batch named: %s" % w)
    inp = os.path.join(tmp, "bin")
    subprocess.run([tool, "bench", "--suite", "quick", "--filter", "emd/uniform/b2/",
                    "--write-inputs", inp], check=True, capture_output=True)
    folder = os.path.join(inp, "emd-uniform-b2-n256")
    best = peers.on_every_core(lambda i: peers.optimum(tool, folder, i), range(2))
    kept = os.path.join(folder, "optimum-1.txt")
    check(all(0 < v < 1 for v in best) and os.path.exists(kept), "optima %s, kept" % best)
    with open(kept, "w", encoding="ascii") as f:
        f.write("0.125")
    check(peers.optimum(tool, folder, 1) == 0.125, "a kept optimum is read, not recomputed")


class ChunkedKnn(peers.Peer):
    """k nearest by numpy in chunks of queries (float32, as the kernels; the k smallest, then
    sorted: any order among ties at the k-th is right); given a whole ragged
    batch, it answers each cloud's own rows."""
    name, problem, module, what = "ragged_knn", "knn", "numpy", "numpy brute force, lengths read"
    batched, ragged = True, True
    seen = []  # how many clouds each prepare was given, and their sizes

    def prepare(self, clouds, cfg):
        self.seen.append(sorted({len(c["a"]) for c in clouds}))
        return [([c["a"] for c in clouds], [c["b"] for c in clouds], cfg)]

    def solve(self, st):
        import numpy
        refs, queries, cfg = st
        out, k = [], cfg["k"]
        for a, b in zip(refs, queries):
            rows = []
            for i in range(0, len(b), 512):
                q = b[i:i + 512]
                d = sum((q[:, None, c] - a[None, :, c]) ** 2 for c in range(3))  # float32
                near = numpy.argpartition(d, k - 1, axis=1)[:, :k]
                order = numpy.argsort(numpy.take_along_axis(d, near, 1), axis=1, kind="stable")
                rows.append(numpy.take_along_axis(near, order, 1))
            out.append(numpy.concatenate(rows))
        return out


class LoopKnn(ChunkedKnn):
    """The same without lengths: the runner hands it one cloud a call."""
    name, ragged, what = "loop_knn", False, "numpy brute force, one cloud a call"
    seen = []


def ragged_peers(tool, tmp):
    """A ragged configuration (clouds of 512-4,096 points): a peer that reads
    lengths gets the batch whole, one that does not gets one cloud a call;
    both judged cloud by cloud against each cloud's own file, and the stored
    entry says which way it ran."""
    res = os.path.join(tmp, "rr")
    rc = peers.main(["--suite", "ragged", "--filter", "knn/sphere/b32/n4096/self/k16/ragged",
                     "--results", res, "--pcbench", tool, "--machine", "testbox", "--reps", "1"],
                    [ChunkedKnn(), LoopKnn()])
    with open(os.path.join(res, "testbox", "ragged",
                           "peers-knn-sphere-b32-n4096-self-k16-ragged.json"),
              encoding="utf-8") as f:
        e = {x["peer"]: x for x in json.load(f)["results"]}
    whole, loop = e.get("ragged_knn", {}), e.get("loop_knn", {})
    check(rc == 0 and whole.get("status") == "ok" and whole.get("ragged") == "the batch whole"
          and "32 clouds, all pass" in whole.get("detail", "")
          and ChunkedKnn.seen[0][0] == 512 and ChunkedKnn.seen[0][-1] == 4096,
          "a ragged batch whole, each cloud judged: %s %s" % (whole, ChunkedKnn.seen[:1]))
    check(loop.get("status") == "ok" and loop.get("ragged") == "one call a cloud"
          and len(LoopKnn.seen) >= 32 and all(len(s) == 1 for s in LoopKnn.seen),
          "one cloud a call for a peer without lengths: %s, %d calls" % (loop, len(LoopKnn.seen)))


def store_files(tmp):
    """The store writes through no link planted under its temporary name,
    and a corrupt file is named, set aside and written anew."""
    from peers import store
    out = os.path.join(tmp, "store")
    os.makedirs(out)
    cfg = {"id": "fps/uniform/b1/n100/m10", "problem": "fps", "dataset": "uniform", "batch": 1,
           "n": 100, "nq": 0, "m": 10}
    path = store.peers_file(out, cfg)
    victim = os.path.join(tmp, "victim.txt")
    with open(victim, "w") as f:
        f.write("keep me\n")
    os.symlink(victim, path + ".tmp")  # where the store used to write
    store.store_entry(out, "quick", {}, cfg, {"peer": "a", "status": "ok"}, [])
    with open(victim) as f:
        check(f.read() == "keep me\n", "the store wrote through a link planted at .tmp")
    check(json.load(open(path))["results"][0]["peer"] == "a", "the entry was stored")
    with open(path, "w") as f:
        f.write('{"results": [{"peer": "a", "sta')
    err = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, %r); "
                          "from peers import store; print(store.stored_entry(%r, %r, 'a'))"
                          % (os.path.join(HERE, "..", "scripts"), out, cfg)],
                         capture_output=True, text=True)
    check(err.returncode == 0 and err.stdout.strip() == "None" and path in err.stderr
          and "line 1, column" in err.stderr,
          "a corrupt file read: named with its position, not a traceback: %r %r"
          % (err.stdout, err.stderr[-300:]))
    store.store_entry(out, "quick", {}, cfg, {"peer": "b", "status": "ok"}, [])
    check(os.path.exists(path + ".corrupt") and
          [e["peer"] for e in json.load(open(path))["results"]] == ["b"],
          "a corrupt file is set aside and written anew")


def main():
    tool, tmp = sys.argv[1], sys.argv[2]
    store_files(tmp)
    ragged_peers(tool, tmp)
    batches(tool, tmp)
    build_manifest(tmp)
    site_edits(tmp)
    explanations()
    emd_peers(tool, tmp)
    emd_gap_peers(tool, tmp)
    knn_peers(tool, tmp)
    ball_peers(tool, tmp)
    res = os.path.join(tmp, "r")
    base = ["--suite", "quick", "--problem", "fps", "--filter", "/b1/", "--results", res,
            "--pcbench", tool, "--machine", "testbox", "--reps", "3"]
    planted = [RightFps(), WrongFps(), MissingFps()]
    rc = peers.main(base, planted)
    check(rc == 0, "peers exit %s" % rc)
    path = os.path.join(res, "testbox", "quick", "peers-fps-uniform-b1-n2000-m100.json")
    check(os.path.exists(path), "no " + path)
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    e = {x["peer"]: x for x in doc["results"]}
    check(doc["format"] == "pcbench-peers/1" and doc["config"]["id"] == "fps/uniform/b1/n2000/m100",
          "format or config: %s %s" % (doc.get("format"), doc.get("config")))
    r = e.get("tiny_dp", {})
    check(r.get("status") == "ok" and "steps ok" in r.get("detail", ""), "right peer: %s" % r)
    check((r.get("compute") or {}).get("reps") == 3 and r["compute"]["median_ms"] > 0,
          "right peer timed 3 times: %s" % r.get("compute"))
    w = e.get("swapped_dp", {})
    check(w.get("status") == "wrong" and "FAIL" in w.get("detail", "") and w.get("compute") is None,
          "wrong peer judged wrong and not timed: %s" % w)
    m = e.get("missing", {})
    check(m.get("status") == "unavailable" and "pcbench_no_such_module" in m.get("detail", ""),
          "missing peer: %s" % m)

    # A batched peer: one call answers every cloud, each judged.
    res2 = os.path.join(tmp, "r2")
    rc = peers.main(["--suite", "quick", "--problem", "fps", "--filter", "/b2/", "--results", res2,
                     "--pcbench", tool, "--machine", "testbox", "--reps", "2"], [BatchedFps()])
    with open(os.path.join(res2, "testbox", "quick", "peers-fps-uniform-b2-n3000-m64.json"),
              encoding="utf-8") as f:
        b = {x["peer"]: x for x in json.load(f)["results"]}.get("batched_dp", {})
    check(rc == 0 and b.get("status") == "ok" and "2 clouds, all pass" in b.get("detail", ""),
          "batched peer: %s" % b)

    # Resume: stored final results are kept as they are.
    peers.main(base, planted)
    with open(path, encoding="utf-8") as f:
        again = {x["peer"]: x for x in json.load(f)["results"]}
    check(again["tiny_dp"]["when"] == r["when"] and again["tiny_dp"]["compute"] == r["compute"],
          "resume re-ran a stored peer")

    # A budget below the predicted time: not timed, still judged.
    peers.main(base + ["--force", "--budget", "1e-9", "--peer", "tiny_dp,swapped_dp"], planted)
    with open(path, encoding="utf-8") as f:
        forced = {x["peer"]: x for x in json.load(f)["results"]}
    check(forced["tiny_dp"]["status"] == "skipped-budget" and "predicted" in forced["tiny_dp"]["detail"]
          and forced["tiny_dp"]["compute"] is None, "budget: %s" % forced["tiny_dp"])
    check(forced["swapped_dp"]["status"] == "wrong", "budget path judged: %s" % forced["swapped_dp"])

    if peers.np is None:
        print("skip: numpy is not importable: the user's callable is not tested here")
    else:
        user_peer(tool, tmp)

    # The tables show peers beside the harness's results, a wrong one as WRONG.
    peers.main(base + ["--force"], planted)
    run = subprocess.run([tool, "bench", "--suite", "quick", "--problem", "fps", "--filter", "/b1/",
                          "--impl", "dp,naive", "--machine", "testbox", "--results", res],
                         capture_output=True, text=True)
    check(run.returncode == 0, "bench exit %d: %s" % (run.returncode, run.stderr[-300:]))
    run = subprocess.run([sys.executable, os.path.join(HERE, "..", "scripts", "tables.py"), res],
                         capture_output=True, text=True)
    check(run.returncode == 0, "tables.py: %s" % run.stderr[-300:])
    tables = open(os.path.join(res, "TABLES.md"), encoding="utf-8").read()
    section = tables[tables.find("### Peers, suite quick"):]
    check("### Peers, suite quick" in tables and "tiny_dp" in section, "no peers table")
    check(any("swapped_dp" in l and "**WRONG**" in l for l in section.splitlines()),
          "wrong peer not shown WRONG")
    check(any("tiny_dp" in l and ("dp " in l or "naive " in l) for l in section.splitlines()),
          "our fastest exact not beside the peer")


if __name__ == "__main__":
    main()
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)
