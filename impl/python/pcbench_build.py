"""A PEP 517 build backend for pcbench's Python package, on the standard
library alone, so that `pip install ./impl/python` works on an offline host
(pip's isolated build environment has nothing to download).

build_wheel runs the repository's `make shared` (MAKE, and the Makefile's
variables such as NVCC or BUILD, come from the environment; on all cores)
and zips the package with libpcbench.so into a wheel for this platform.
prepare_metadata_for_build_wheel writes the metadata without building, so
pip says what it installs at once; build_editable (`pip install -e
./impl/python`, PEP 660) builds the library and installs a path file that
points at this checkout's package, which finds build/pic/libpcbench.so.
"""
import base64
import hashlib
import os
import re
import subprocess
import sysconfig
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def _extras():
    """pyproject.toml's [project.optional-dependencies] as METADATA lines
    (Provides-Extra, and each need as Requires-Dist with its extra's
    marker), read without tomllib (Python 3.8 has none): one line an extra,
    name = ["requirement", ...]."""
    text = (HERE / "pyproject.toml").read_text()
    section = re.search(r"^\[project\.optional-dependencies\]\n(.*?)(?=^\[|\Z)", text,
                        re.M | re.S)
    lines = []
    for name, needs in re.findall(r"^([A-Za-z0-9_.-]+)\s*=\s*\[(.*?)\]", section.group(1) if
                                  section else "", re.M):
        lines.append("Provides-Extra: %s\n" % name)
        lines += ['Requires-Dist: %s; extra == "%s"\n' % (need, name)
                  for need in re.findall(r'"([^"]+)"', needs)]
    return "".join(lines)


def _version():
    text = (HERE / "pyproject.toml").read_text()
    return re.search(r'^version\s*=\s*"([^"]+)"', text, re.M).group(1)


def _library():
    if not (ROOT / "Makefile").is_file() or not (ROOT / "impl" / "pcbench.h").is_file():
        raise RuntimeError("pcbench: build the package from a checkout of pcbench (its Makefile "
                           "builds libpcbench.so); %s is not one" % ROOT)
    build = os.environ.get("BUILD", "build")
    subprocess.run([os.environ.get("MAKE", "make"), "-C", str(ROOT), "-j%d" % (os.cpu_count() or 1),
                    "shared"], check=True)
    lib = ROOT / build / "pic" / "libpcbench.so"
    if not lib.is_file():
        raise RuntimeError("pcbench: make shared did not produce %s" % lib)
    return lib


def _tag():
    return "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _dist_info(version, tag):
    """The dist-info files but RECORD: METADATA and WHEEL."""
    info = "pcbench-%s.dist-info/" % version
    return {info + "METADATA": ("Metadata-Version: 2.1\nName: pcbench\nVersion: %s\n"
                                "Summary: verified FPS, nearest neighbours and certified EMD "
                                "for point clouds\nRequires-Python: >=3.8\n%s"
                                % (version, _extras())).encode(),
            info + "WHEEL": ("Wheel-Version: 1.0\nGenerator: pcbench_build\n"
                             "Root-Is-Purelib: false\nTag: %s\n" % tag).encode()}


def _write_wheel(wheel_directory, version, tag, files):
    """files and the dist-info, with its RECORD, zipped as a wheel; its name."""
    files = dict(files, **_dist_info(version, tag))
    info = "pcbench-%s.dist-info/" % version
    record = [_record_line(name, data) for name, data in files.items()]
    record.append(info + "RECORD,,")
    files[info + "RECORD"] = ("\n".join(record) + "\n").encode()
    name = "pcbench-%s-%s.whl" % (version, tag)
    path = Path(wheel_directory) / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as whl:
        for arcname, data in files.items():
            entry = zipfile.ZipInfo(arcname, date_time=(2026, 1, 1, 0, 0, 0))
            entry.external_attr = (0o755 if arcname.endswith(".so") else 0o644) << 16
            whl.writestr(entry, data, zipfile.ZIP_DEFLATED)
    return name


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    """The metadata alone, nothing built: pip knows at once what it installs."""
    version = _version()
    for name, data in _dist_info(version, _tag()).items():
        path = Path(metadata_directory) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return "pcbench-%s.dist-info" % version


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = {p.relative_to(HERE).as_posix(): p.read_bytes()
             for p in sorted((HERE / "pcbench").rglob("*.py"))}
    files["pcbench/libpcbench.so"] = _library().read_bytes()
    return _write_wheel(wheel_directory, _version(), _tag(), files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel holding a path file to this checkout's package (edits take effect
    without reinstalling; the package loads build/pic/libpcbench.so, built now)."""
    _library()
    return _write_wheel(wheel_directory, _version(), _tag(),
                        {"pcbench_checkout.pth": (str(HERE) + "\n").encode()})


def build_sdist(sdist_directory, config_settings=None):
    raise RuntimeError("pcbench: no source distribution; install from a checkout "
                       "(pip install ./impl/python)")
