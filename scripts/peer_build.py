#!/usr/bin/env python3
"""peer_build.py - the GPU peers that ship no wheel for current CUDA, built from
their own sources: only the kernel files pcbench times, with a minimal binding,
through torch.utils.cpp_extension; a peer that is Python alone (Pointcept's
serialization) has its files kept as a package, nothing compiled.

    peer_build.py list                      the peers, their sources and edits
    peer_build.py sources DIR               download the source archives into DIR
                                            (PyPI sdists; GitHub archives where
                                            github.com is reachable, else the URL to
                                            fetch them from on a machine that can)
    peer_build.py build DIR [--out OUT]     build every peer whose archive is in DIR
                                            into OUT/<peer>/ (default .peers/build)
    peer_build.py patch-site SITE           the edits the sdists installed into SITE
                  [--keops-cache DIR]       need (KeOps'), recorded in SITE

Building needs PyTorch with CUDA and nvcc: the GPU host itself, or any machine with
the host's Python and PyTorch versions (the binaries are then carried; the built
module is tied to that PyTorch and Python). The arch list is TORCH_CUDA_ARCH_LIST
(default 9.0 and the visible GPU's); a build carried to a GPU host is kept there
when it holds that GPU's code, and a rebuild says why. Every edit a source needs to build with
current PyTorch and CUDA is listed below with its reason, applied to a copy, and
recorded in OUT/<peer>/BUILD.json with the versions and flags. Nothing of the
peers' code is kept in this repository: only these file lists, the edits and the
bindings of scripts/peer_bindings/.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import sys
import tarfile
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))

# The old ATen spellings PyTorch 2 removed, as (pattern, replacement): the
# minimal edit that lets an extension written for PyTorch 1.x build.
ATEN_1X = [
    (r"#include <THC/THC\.h>", "#include <c10/cuda/CUDAException.h>",
     "THC was removed in PyTorch 1.11"),
    (r"THCudaCheck\(", "C10_CUDA_CHECK(", "THCudaCheck went with THC"),
    (r"\bAT_CHECK\(", "TORCH_CHECK(", "AT_CHECK was removed in PyTorch 1.5"),
    (r"\bCHECK_EQ\(", "TORCH_CHECK_EQ(", "c10 no longer exports glog's CHECK_EQ"),
    (r"\.type\(\)\.is_cuda\(\)", ".is_cuda()", "Tensor::type() was removed"),
    (r"AT_DISPATCH_FLOATING_TYPES\((\w+)\.type\(\)", r"AT_DISPATCH_FLOATING_TYPES(\1.scalar_type()",
     "Tensor::type() was removed"),
    (r"(at::zeros\(\{[^}]*\}, \w+)\.type\(\)", r"\1.options()", "Tensor::type() was removed"),
    (r"\.data<(\w+)>\(\)", r".data_ptr<\1>()", "Tensor::data<T>() was removed"),
]

PEERS = [
    {
        "name": "pytorch3d",
        "what": "PyTorch3D sample_farthest_points, knn_points and ball_query (CUDA)",
        "version": "commit 9381c4016376345bb795b97c45a6c2de66db354a (2026-07-28)",
        "archive": "pytorch3d-9381c4016376345bb795b97c45a6c2de66db354a.tar.gz",
        "url": "https://github.com/facebookresearch/pytorch3d/archive/"
               "9381c4016376345bb795b97c45a6c2de66db354a.tar.gz",
        "root": "pytorch3d-9381c4016376345bb795b97c45a6c2de66db354a/pytorch3d/csrc",
        "sources": ["knn/knn.cu", "knn/knn_cpu.cpp", "ball_query/ball_query.cu",
                    "ball_query/ball_query_cpu.cpp",
                    "sample_farthest_points/sample_farthest_points.cu",
                    "sample_farthest_points/sample_farthest_points_cpu.cpp"],
        "binding": "pytorch3d.cpp",
        "defines": ["WITH_CUDA"],
        "edits": [],
    },
    {
        "name": "torch_cluster",
        "what": "torch_cluster fps, nearest, knn, radius and grid (CUDA)",
        "version": "1.6.3 (PyPI sdist)",
        "archive": "torch_cluster-1.6.3.tar.gz",
        "url": "https://files.pythonhosted.org/packages/54/31/e7f7a28253cd907404eb652607613b35"
               "779140b326d15d0636511b7b9438/torch_cluster-1.6.3.tar.gz",
        "sha256": "78d5a930a5bbd0d8788df8c6d66addd68d6dd292fe3edb401e3dacba26308152",
        "root": "torch_cluster-1.6.3/csrc",
        "sources": ["cuda/fps_cuda.cu", "cuda/nearest_cuda.cu", "cuda/knn_cuda.cu",
                    "cuda/radius_cuda.cu", "cuda/grid_cuda.cu"],
        "binding": "torch_cluster.cpp",
        "defines": ["WITH_CUDA"],
        "edits": [],
    },
    {
        "name": "pointnet2_ops",
        "what": "pointnet2_ops furthest_point_sample (CUDA), the classic kernel's original, "
                "three_nn and three_interpolate (PointNet++'s feature propagation), ball_query, "
                "group_points and gather_points (its grouping; with their gradients, for the "
                "whole-network step)",
        "version": "commit b5ceb6d9ca0467ea34beb81023f96ee82228f626 (2021-07-30)",
        "archive": "Pointnet2_PyTorch-b5ceb6d9ca0467ea34beb81023f96ee82228f626.tar.gz",
        "url": "https://github.com/erikwijmans/Pointnet2_PyTorch/archive/"
               "b5ceb6d9ca0467ea34beb81023f96ee82228f626.tar.gz",
        "root": "Pointnet2_PyTorch-b5ceb6d9ca0467ea34beb81023f96ee82228f626/pointnet2_ops_lib/"
                "pointnet2_ops/_ext-src",
        "sources": ["src/sampling.cpp", "src/sampling_gpu.cu", "src/interpolate.cpp",
                    "src/interpolate_gpu.cu", "src/ball_query.cpp", "src/ball_query_gpu.cu",
                    "src/group_points.cpp", "src/group_points_gpu.cu"],
        "includes": ["include"],
        "binding": "pointnet2_ops.cpp",
        "defines": [],
        "edits": [],
    },
    {
        "name": "msn_emd",
        "what": "MSN's auction EMD (CUDA; n a multiple of 1024)",
        "version": "commit dc6450f1e942c1617bf91084df86e8e5a29f5441 (2022-04-08)",
        "archive": "MSN-Point-Cloud-Completion-dc6450f1e942c1617bf91084df86e8e5a29f5441.tar.gz",
        "url": "https://github.com/Colin97/MSN-Point-Cloud-Completion/archive/"
               "dc6450f1e942c1617bf91084df86e8e5a29f5441.tar.gz",
        "root": "MSN-Point-Cloud-Completion-dc6450f1e942c1617bf91084df86e8e5a29f5441/emd",
        "sources": ["emd.cpp", "emd_cuda.cu"],  # emd.cpp is its own binding
        "binding": None,
        "defines": [],
        "edits": [("emd_cuda.cu",) + e for e in ATEN_1X],
    },
    {
        "name": "chamfer3d",
        "what": "ChamferDistancePytorch's chamfer3D (CUDA): the chamfer extension completion "
                "networks vendor; squared nearest distances both ways, and their gradient",
        "version": "commit 364c03c4ec5febc1e21068ffac362eca4a8f61d9 (2021-01-08)",
        "archive": "ChamferDistancePytorch-364c03c4ec5febc1e21068ffac362eca4a8f61d9.tar.gz",
        "url": "https://github.com/ThibaultGROUEIX/ChamferDistancePytorch/archive/"
               "364c03c4ec5febc1e21068ffac362eca4a8f61d9.tar.gz",
        "root": "ChamferDistancePytorch-364c03c4ec5febc1e21068ffac362eca4a8f61d9/chamfer3D",
        "sources": ["chamfer_cuda.cpp", "chamfer3D.cu"],  # chamfer_cuda.cpp is its own binding
        "binding": None,
        "defines": [],
        "edits": [("chamfer3D.cu",) + e for e in ATEN_1X],
    },
    {
        "name": "pytorch_emd",
        "what": "PyTorchEMD approxmatch and matchcost (CUDA): a value and a soft match",
        "version": "commit e5c0feb8c15741a858362f9c397d9ed4b8b1752b (2019-09-10)",
        "archive": "PyTorchEMD-e5c0feb8c15741a858362f9c397d9ed4b8b1752b.tar.gz",
        "url": "https://github.com/daerduoCarey/PyTorchEMD/archive/"
               "e5c0feb8c15741a858362f9c397d9ed4b8b1752b.tar.gz",
        "root": "PyTorchEMD-e5c0feb8c15741a858362f9c397d9ed4b8b1752b/cuda",
        "sources": ["emd.cpp", "emd_kernel.cu"],  # emd.cpp is its own binding
        "binding": None,
        "defines": [],
        "edits": [("emd_kernel.cu",) + e for e in ATEN_1X],
    },
    {
        # Python only: its files kept as a package, nothing compiled
        "name": "pointcept",
        "what": "Pointcept's serialization encode (Point Transformer V3's z-order by lookup "
                "tables and Hilbert, PyTorch)",
        "version": "commit d74c646db6abec569d0f23e0c34e7ddfce142789 (2026-04-07)",
        "archive": "Pointcept-d74c646db6abec569d0f23e0c34e7ddfce142789.tar.gz",
        "url": "https://github.com/Pointcept/Pointcept/archive/"
               "d74c646db6abec569d0f23e0c34e7ddfce142789.tar.gz",
        "root": "Pointcept-d74c646db6abec569d0f23e0c34e7ddfce142789/pointcept/models/utils/"
                "serialization",
        "sources": ["__init__.py", "default.py", "z_order.py", "hilbert.py"],
        "python": True,
        "binding": None,
        "defines": [],
        "edits": [],
    },
]

# Pure-Python peers installed from their PyPI sdists (no build of ours):
# KeOps compiles its kernels with the host's nvcc on first use.
SDISTS = [
    ("pykeops-2.3.tar.gz", "https://files.pythonhosted.org/packages/3b/e1/3bb0af9916632e712cc0b03"
     "26679647d7452e626811dbc2b15b277add460/pykeops-2.3.tar.gz",
     "458fa77985efd2161be9c719e8dd41e495526cd735d3262aec09902505f5bdba"),
    ("keopscore-2.3.tar.gz", "https://files.pythonhosted.org/packages/91/28/94f516c55fca15be37cc75"
     "d56f9560d3be5a4badc87ca78202e06dd2d526/keopscore-2.3.tar.gz",
     "e8a700c22efee59a7723ed7516c2d88ab143a11290dd23b07eb7bba1c9d16fef"),
]


# Edits to the sdists' installed files, as (file under the install folder,
# pattern, replacement, why); applied by `patch-site` after pip installs them.
SITE_EDITS = [
    ("keopscore/binders/nvrtc/nvrtc_jit.cpp",
     r'std::ostringstream arch_flag;\s*arch_flag << "-arch=" << ARCHTAG << "_" << deviceProp_major'
     r'\s*<< deviceProp_minor;\s*char \*arch_flag_char = new char\[arch_flag\.str\(\)\.length\(\)\];'
     r'\s*arch_flag_char = strdup\(arch_flag\.str\(\)\.c_str\(\)\);',
     'char *arch_flag_char = new char[64];\n  snprintf(arch_flag_char, 64, "-arch=%s_%d%d", ARCHTAG, '
     'deviceProp_major, deviceProp_minor);',
     "KeOps' compile helper segfaulted writing an int to a std::ostringstream (a null locale "
     "facet; g++ 13, libstdc++ 14, Ubuntu 24.04, CUDA 13) before its first kernel compiled"),
]


def say(msg):
    print("peer_build: " + msg, file=sys.stderr, flush=True)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def download(url, path, digest):
    tmp = path + ".part"
    with urllib.request.urlopen(url, timeout=60) as r, open(tmp, "wb") as f:
        shutil.copyfileobj(r, f)
    if digest and sha256(tmp) != digest:
        os.unlink(tmp)
        raise ValueError("%s: sha256 differs from the recorded one" % url)
    os.replace(tmp, path)


def cmd_sources(folder):
    os.makedirs(folder, exist_ok=True)
    archives = [(p["archive"], p["url"], p.get("sha256")) for p in PEERS] + SDISTS
    missing = []
    for name, url, digest in archives:
        path = os.path.join(folder, name)
        if os.path.exists(path):
            say("have %s" % name)
            continue
        try:
            download(url, path, digest)
            say("downloaded %s" % name)
        except Exception as e:  # offline, or github.com out of reach
            missing.append((name, url, str(e)[:80]))
    for name, url, why in missing:
        say("could not download %s (%s): fetch %s into %s" % (name, why, url, folder))
    return 1 if missing else 0


def extract(peer, folder, work):
    """The peer's needed files, edited, under work/src; returns that folder."""
    src = os.path.join(work, "src")
    shutil.rmtree(src, ignore_errors=True)
    root = peer["root"]
    with tarfile.open(os.path.join(folder, peer["archive"])) as tar:
        members = [m for m in tar.getmembers()
                   if m.isfile() and m.name.startswith(root + "/") and ".." not in m.name]
        for m in members:
            m.name = m.name[len(root) + 1:]
            tar.extract(m, src, filter="data")
    return src, apply_edits(src, peer["edits"])


def apply_edits(root, edits):
    """Each (file under root, pattern, replacement, why) applied where its file
    is and its pattern matches; returns what was applied, for the record."""
    applied = []
    for path, pattern, repl, why in edits:
        full = os.path.join(root, path)
        if not os.path.exists(full):
            continue
        with open(full, encoding="utf-8") as f:
            text = f.read()
        new, count = re.subn(pattern, repl, text)
        if count:
            with open(full + ".tmp", "w", encoding="utf-8") as f:
                f.write(new)
            os.replace(full + ".tmp", full)
            applied.append({"file": path, "from": pattern, "to": repl, "times": count, "why": why})
    return applied


def gpu_arch():
    """The compute capability of the GPU present ("9.0"), or None."""
    try:
        import torch
        if torch.cuda.is_available():
            return "%d.%d" % torch.cuda.get_device_capability()
    except Exception:
        pass
    return None


def arch_list():
    """What a build compiles for: TORCH_CUDA_ARCH_LIST (default 9.0) and the GPU present."""
    archs = re.split(r"[;\s]+", os.environ.get("TORCH_CUDA_ARCH_LIST", "9.0")) + [gpu_arch() or ""]
    return sorted(set(a.strip() for a in archs if a.strip()))


def keep_python(peer, folder, work, src, applied):
    """A Python peer's listed files as the package pcb_peer_<name> under work,
    and its record: nothing to compile, so no arch, flags or PyTorch in it."""
    package = os.path.join(work, "pcb_peer_" + peer["name"])
    shutil.rmtree(package, ignore_errors=True)
    for name in peer["sources"]:
        os.makedirs(os.path.dirname(os.path.join(package, name)), exist_ok=True)
        shutil.copy(os.path.join(src, name), os.path.join(package, name))
    shutil.rmtree(src, ignore_errors=True)
    record = {"peer": peer["name"], "what": peer["what"], "version": peer["version"],
              "archive": peer["archive"], "archive_sha256": sha256(os.path.join(folder, peer["archive"])),
              "module": "pcb_peer_" + peer["name"], "recipe": recipe(peer),
              "sources": peer["sources"], "edits": applied, "python": True}
    with open(os.path.join(work, "BUILD.json"), "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)
    return record


def build_one(peer, folder, out):
    work = os.path.join(out, peer["name"])
    os.makedirs(work, exist_ok=True)
    src, applied = extract(peer, folder, work)
    if peer.get("python"):
        return keep_python(peer, folder, work, src, applied)
    import torch
    from torch.utils import cpp_extension
    sources = [os.path.join(src, s) for s in peer["sources"]]
    if peer["binding"]:
        sources.append(os.path.join(HERE, "peer_bindings", peer["binding"]))
    includes = [src] + [os.path.join(src, i) for i in peer.get("includes", [])]
    archs = arch_list()
    os.environ["TORCH_CUDA_ARCH_LIST"] = ";".join(archs)
    defines = ["-D%s" % d for d in peer["defines"]]
    module = "pcb_peer_" + peer["name"]
    cpp_extension.load(module, sources, extra_cflags=["-O2"] + defines,
                       extra_cuda_cflags=["-O3"] + defines, extra_include_paths=includes,
                       build_directory=work, verbose=False)
    record = {"peer": peer["name"], "what": peer["what"], "version": peer["version"],
              "archive": peer["archive"], "archive_sha256": sha256(os.path.join(folder, peer["archive"])),
              "module": module, "recipe": recipe(peer), "sources": peer["sources"],
              "binding": peer["binding"],
              "edits": applied, "torch": torch.__version__, "cuda": torch.version.cuda,
              "python": "%d.%d" % sys.version_info[:2], "arch": archs,
              "flags": {"cflags": ["-O2"] + defines, "cuda": ["-O3"] + defines}}
    with open(os.path.join(work, "BUILD.json"), "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)
    shutil.rmtree(src, ignore_errors=True)  # only the module and its record stay
    for name in os.listdir(work):
        if name.endswith((".o", ".ninja", ".ninja_deps", ".ninja_log")) or name in ("build.ninja", "lock"):
            os.unlink(os.path.join(work, name))
    return record


def recipe(peer):
    """A digest of how a peer is built: its entry here and its binding."""
    h = hashlib.sha256(json.dumps(peer, sort_keys=True).encode())
    if peer["binding"]:
        with open(os.path.join(HERE, "peer_bindings", peer["binding"]), "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def stale(peer, folder, out):
    """Why a peer must be built (again), or None: a build whose record names
    this recipe, archive, PyTorch, Python and arch list, with its module
    beside it, is kept."""
    import torch
    work = os.path.join(out, peer["name"])
    try:
        with open(os.path.join(work, "BUILD.json"), encoding="utf-8") as f:
            rec = json.load(f)
    except (OSError, ValueError):
        return "not built yet"
    now = {"recipe": recipe(peer), "archive_sha256": sha256(os.path.join(folder, peer["archive"])),
           "torch": torch.__version__, "python": "%d.%d" % sys.version_info[:2]}
    if peer.get("python"):  # its files alone: no PyTorch, Python or arch of its own
        now = {k: now[k] for k in ("recipe", "archive_sha256")}
    for key, want in now.items():
        if rec.get(key) != want:
            return "%s: built with %s, now %s" % (key, rec.get(key), want)
    if peer.get("python"):
        return None if os.path.isdir(os.path.join(work, rec["module"])) else "its files are missing"
    # On a GPU host a build carried from elsewhere is kept when it holds this GPU's
    # code; without a GPU, a build for another arch list is made again.
    gpu, built = gpu_arch(), rec.get("arch") or []
    if gpu and not any(a.split("+")[0] == gpu for a in built):
        return "arch: built for %s, this GPU is %s" % (" ".join(built), gpu)
    if not gpu and built != arch_list():
        return "arch: built for %s, asked for %s" % (" ".join(built), " ".join(arch_list()))
    if not os.path.exists(os.path.join(work, rec.get("module", "") + ".so")):
        return "its module is missing"
    return None


def cmd_build(folder, out, only):
    try:
        import torch  # noqa: F401
        from torch.utils import cpp_extension
    except ImportError as e:
        say("PyTorch is not importable (%s): nothing built" % e)
        return 1
    if not cpp_extension.CUDA_HOME:
        say("no CUDA toolkit (nvcc) found: nothing built")
        return 1
    failed = 0
    for peer in PEERS:
        if only and peer["name"] not in only:
            continue
        if not os.path.exists(os.path.join(folder, peer["archive"])):
            say("%s: no %s in %s (peer_build.py sources %s)" % (peer["name"], peer["archive"],
                                                               folder, folder))
            continue
        why = stale(peer, folder, out)
        if not why:
            say("%s: already built for this PyTorch, Python and archive (%s)"
                % (peer["name"], os.path.join(out, peer["name"])))
            continue
        say("%s: building (%s)" % (peer["name"], why))
        try:
            rec = build_one(peer, folder, out)
            say("%s built (%s, %d edit%s): %s" % (peer["name"], peer["version"], len(rec["edits"]),
                                                  "" if len(rec["edits"]) == 1 else "s",
                                                  os.path.join(out, peer["name"])))
        except Exception as e:
            failed += 1
            say("%s: build failed: %s" % (peer["name"], str(e).strip().splitlines()[-1][:300]))
    return 1 if failed else 0


def load(name, out=None):
    """The built module of a peer (torch must be imported first), or None and why."""
    out = out or os.environ.get("PCBENCH_PEER_BUILD", os.path.join(HERE, "..", ".peers", "build"))
    work = os.path.join(out, name)
    module = "pcb_peer_" + name
    path = os.path.join(work, module + ".so")
    package = os.path.join(work, module, "__init__.py")  # a Python peer's
    if not os.path.exists(path) and not os.path.exists(package):
        return None, "not built (make peers-deps with its source in PEER_SOURCES)"
    import importlib.machinery
    import importlib.util
    if os.path.exists(package):  # its files import what they need
        spec = importlib.util.spec_from_file_location(module, package)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[module] = mod  # its relative imports find it
        spec.loader.exec_module(mod)
        with open(os.path.join(work, "BUILD.json"), encoding="utf-8") as f:
            mod.build = json.load(f)
        return mod, None
    import torch  # noqa: F401  the module links against libtorch
    loader = importlib.machinery.ExtensionFileLoader(module, path)
    spec = importlib.util.spec_from_file_location(module, path, loader=loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    with open(os.path.join(work, "BUILD.json"), encoding="utf-8") as f:
        mod.build = json.load(f)
    return mod, None


def cmd_patch_site(site, cache):
    """SITE_EDITS on the files installed in site; the applied ones recorded in
    site/pcbench-edits.json, and KeOps' compiled helpers in cache removed (built
    from the unedited source, they would be kept)."""
    record = os.path.join(site, "pcbench-edits.json")
    try:
        with open(record, encoding="utf-8") as f:
            applied = json.load(f)
    except (OSError, ValueError):
        applied = []
    fresh = apply_edits(site, SITE_EDITS)
    for e in fresh:
        say("edited %s: %s" % (e["file"], e["why"]))
    applied += fresh
    if fresh:
        with open(record + ".tmp", "w", encoding="utf-8") as f:
            json.dump(applied, f, indent=1)
        os.replace(record + ".tmp", record)
        if cache:
            shutil.rmtree(cache, ignore_errors=True)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["list", "sources", "build", "patch-site"])
    ap.add_argument("folder", nargs="?", help="the folder of source archives (patch-site: "
                    "the folder the sdists were installed into)")
    ap.add_argument("--keops-cache", help="patch-site: KeOps' build folder, emptied on an edit")
    ap.add_argument("--out", default=os.path.join(".peers", "build"))
    ap.add_argument("--peer", help="only these peers (comma-separated)")
    args = ap.parse_args(argv)
    if args.command == "list":
        for p in PEERS:
            print("%-14s %s\n%14s %s\n%14s %s" % (p["name"], p["what"], "", p["version"], "",
                                                   p["url"]))
            for path, pattern, repl, why in p["edits"]:
                print("%14s edit %s: %s -> %s (%s)" % ("", path, pattern, repl, why))
        for path, pattern, repl, why in SITE_EDITS:
            print("%-14s edit %s: %s (%s)" % ("sdists", path, repl.replace("\n", " "), why))
        return 0
    if not args.folder:
        ap.error("%s needs the folder of source archives" % args.command)
    if args.command == "sources":
        return cmd_sources(args.folder)
    if args.command == "patch-site":
        return cmd_patch_site(args.folder, args.keops_cache)
    return cmd_build(args.folder, args.out, args.peer.split(",") if args.peer else None)


if __name__ == "__main__":
    sys.exit(main())
