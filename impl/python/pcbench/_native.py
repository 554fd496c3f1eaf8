"""The ctypes binding of libpcbench: the structs of pcbench.h (task, result)
and pcbench_judge.h (report, promise, judgement), the
library's functions, and one call that runs a task.

ctypes, not a PyTorch C++ extension: the library already takes plain
pointers and a CUDA stream, so a tensor's data_ptr() and the current
stream's handle are all it needs. Nothing is compiled against PyTorch, one
build serves every PyTorch version, and numpy users need no PyTorch at all.
"""
import ctypes
import os
from pathlib import Path

FPS, NN, EMD, CHAMFER, KNN, BALL, GRID, SERIALIZE = 0, 1, 2, 3, 4, 5, 6, 7
SELECTIONS = ("first", "nearest")
PROBLEMS = ("fps", "nn", "emd", "chamfer", "knn", "ball", "grid", "serialize")
CURVES = ("morton", "hilbert")
MAX_DEPTH = 21  # PCB_CURVE_MAX_DEPTH
CPU, CUDA = 0, 1
MEM_HOST, MEM_DEVICE = 0, 1
EINVAL, EUNSUPPORTED, EUNAVAIL = -1, -2, -3
ANY_GAP = float("inf")
PAD_K = 1024  # PCB_PAD_K: k beyond the reference's points pads rows up to this


class PcbenchError(RuntimeError):
    """A libpcbench error other than a bad argument; .status names it."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class Options(ctypes.Structure):
    _fields_ = [("threads", ctypes.c_int), ("partitions", ctypes.c_int),
                ("eps", ctypes.c_double), ("max_gap", ctypes.c_double),
                ("fps_warps", ctypes.c_int), ("fps_ctas", ctypes.c_int),
                ("fps_dense", ctypes.c_int), ("emd_ctas", ctypes.c_int),
                ("emd_start", ctypes.c_int), ("emd_gap_max_n", ctypes.c_int64)]


class EmdWarm(ctypes.Structure):
    _fields_ = [("price", ctypes.c_void_p), ("eps", ctypes.c_void_p),
                ("budget", ctypes.c_void_p)]


class Task(ctypes.Structure):
    _fields_ = [("problem", ctypes.c_int), ("batch", ctypes.c_int64), ("n", ctypes.c_int64),
                ("nq", ctypes.c_int64), ("m", ctypes.c_int64), ("start", ctypes.c_int64),
                ("k", ctypes.c_int64), ("radius", ctypes.c_double), ("select", ctypes.c_int32),
                ("a", ctypes.c_void_p), ("b", ctypes.c_void_p), ("opt", Options),
                ("memory", ctypes.c_int), ("stream", ctypes.c_void_p),
                ("lengths_a", ctypes.c_void_p), ("lengths_b", ctypes.c_void_p),
                ("warm", EmdWarm), ("cell", ctypes.c_double * 3),
                ("origin", ctypes.c_double * 3), ("origin_given", ctypes.c_int32),
                ("curve", ctypes.c_int32), ("depth", ctypes.c_int32), ("seed", ctypes.c_uint64)]


class Result(ctypes.Structure):
    _fields_ = [("index", ctypes.c_void_p), ("dist2", ctypes.c_void_p),
                ("value", ctypes.c_void_p), ("price", ctypes.c_void_p),
                ("has_price", ctypes.c_int), ("bound", ctypes.c_void_p),
                ("finite", ctypes.c_void_p), ("count", ctypes.c_void_p),
                ("index64", ctypes.c_void_p), ("code", ctypes.c_void_p),
                ("mean", ctypes.c_void_p)]


class Report(ctypes.Structure):
    _fields_ = [("ok", ctypes.c_int), ("detail", ctypes.c_char * 256),
                ("recall", ctypes.c_double), ("worst_ratio", ctypes.c_double),
                ("gap", ctypes.c_double), ("bound", ctypes.c_double),
                ("unmatched", ctypes.c_int64)]


class Promise(ctypes.Structure):
    _fields_ = [("exact", ctypes.c_int), ("max_gap", ctypes.c_double),
                ("canonical", ctypes.c_int), ("known_defect", ctypes.c_char_p)]


class ChamferConvention(ctypes.Structure):  # pcb_chamfer_convention: three enums
    _fields_ = [("distance", ctypes.c_int), ("points", ctypes.c_int),
                ("directions", ctypes.c_int)]


class Judgement(ctypes.Structure):
    _fields_ = [("verdict", ctypes.c_int), ("rep", Report), ("compared", ctypes.c_int),
                ("detail", ctypes.c_char * 320)]


def _candidates():
    env = os.environ.get("PCBENCH_LIBRARY")
    if env:
        return [Path(env)]
    here = Path(__file__).resolve().parent
    # installed: beside this file; run from a checkout: the Makefile's build
    return [here / "libpcbench.so", here.parents[2] / "build" / "pic" / "libpcbench.so"]


def _load():
    tried = []
    for path in _candidates():
        if path.is_file():
            try:
                return ctypes.CDLL(str(path))
            except OSError as e:
                raise ImportError("pcbench: %s%s is not a library this process can load (%s)"
                                  % ("PCBENCH_LIBRARY=" if os.environ.get("PCBENCH_LIBRARY")
                                     else "", path, e)) from None
        tried.append(str(path))
    raise ImportError("pcbench: libpcbench.so not found (looked at %s); install the package "
                      "with pip install ./impl/python, or build it with make shared"
                      % ", ".join(tried))


lib = _load()
_P = ctypes.c_void_p
for name, res, args in [
        ("pcb_errmsg", ctypes.c_char_p, []),
        ("pcb_status_name", ctypes.c_char_p, [ctypes.c_int]),
        ("pcb_abi_size", ctypes.c_size_t, [ctypes.c_char_p]),
        ("pcb_find", _P, [ctypes.c_int, ctypes.c_char_p]),
        ("pcb_impl_name", ctypes.c_char_p, [_P]),
        ("pcb_impl_available", ctypes.c_int, [_P]),
        ("pcb_impl_ragged", ctypes.c_int, [_P]),
        ("pcb_impl_index64", ctypes.c_int, [_P]),
        ("pcb_task_check", ctypes.c_int, [ctypes.POINTER(Task)]),
        ("pcb_choose", ctypes.c_int, [ctypes.POINTER(Task), ctypes.c_int, ctypes.POINTER(_P)]),
        ("pcb_run", ctypes.c_int, [_P, ctypes.POINTER(Task), ctypes.POINTER(Result), _P]),
        ("pcb_emd_bound", ctypes.c_int, [ctypes.POINTER(Task), ctypes.POINTER(Result), _P]),
        ("pcb_judge", ctypes.c_int, [ctypes.POINTER(Task), ctypes.POINTER(Result),
                                     ctypes.POINTER(Promise), _P, ctypes.POINTER(Judgement)]),
        ("pcb_judge_full", ctypes.c_int, [ctypes.POINTER(Task), ctypes.POINTER(Result),
                                          ctypes.POINTER(Promise), ctypes.POINTER(Judgement)]),
        ("pcb_device_cache_clear", None, [ctypes.c_int]),
        ("pcb_nn_index_build", ctypes.c_int, [_P, ctypes.POINTER(Task), _P, ctypes.POINTER(_P)]),
        ("pcb_nn_index_query", ctypes.c_int, [_P, _P, ctypes.c_int64, ctypes.POINTER(Result),
                                              _P]),
        ("pcb_nn_index_free", None, [_P]),
        ("pcb_chamfer_backward", ctypes.c_int, [ctypes.POINTER(Task), _P, _P, _P, _P]),
        ("pcb_chamfer_convention_parse", ctypes.c_int, [ctypes.c_char_p, _P]),
        ("pcb_curve_encode", ctypes.c_int, [ctypes.c_int, ctypes.c_int, _P, ctypes.c_int64, _P]),
        ("pcb_curve_decode", ctypes.c_int, [ctypes.c_int, ctypes.c_int, _P, ctypes.c_int64, _P]),
        ("pcb_chamfer_check_value", ctypes.c_int, [ctypes.POINTER(Task), ctypes.c_double, _P,
                                                   ctypes.POINTER(ctypes.c_double),
                                                   ctypes.POINTER(ctypes.c_int)])]:
    fn = getattr(lib, name)
    fn.restype, fn.argtypes = res, args

for struct, cname in [(Task, b"pcb_task"), (Result, b"pcb_result"), (Options, b"pcb_options"),
                      (Report, b"pcb_report"), (Promise, b"pcb_promise"),
                      (Judgement, b"pcb_judgement")]:
    if lib.pcb_abi_size(cname) != ctypes.sizeof(struct):
        raise ImportError("pcbench: %s is %d bytes in libpcbench but %d here: the library and "
                          "this package come from different versions"
                          % (cname.decode(), lib.pcb_abi_size(cname), ctypes.sizeof(struct)))


def check(rc):
    """Raise for a status code below 0, with the library's message."""
    if rc >= 0:
        return rc
    message = lib.pcb_errmsg().decode(errors="replace")
    if rc == EINVAL:
        raise ValueError(message)
    raise PcbenchError(lib.pcb_status_name(rc).decode(), message)


def implementation(task, device, name):
    """The named implementation, or the fastest verified one for the task."""
    if name is not None:
        impl = lib.pcb_find(task.problem, name.encode())
        if not impl:
            raise ValueError("pcbench: no %s implementation named %r was built"
                             % (PROBLEMS[task.problem], name))
        return impl
    impl = _P()
    check(lib.pcb_choose(ctypes.byref(task), device, ctypes.byref(impl)))
    return impl.value


def ragged_choice(task, name):
    """The implementation that would run task (its lengths set), asked of
    the library without raising: the named one, else pcb_choose's choice
    among those that take the task as it is (a device task's lengths only
    where the implementation reads them); None where none does."""
    if name is not None:
        return lib.pcb_find(task.problem, name.encode()) or None
    impl, device = _P(), CUDA if task.memory == MEM_DEVICE else CPU
    return impl.value if lib.pcb_choose(ctypes.byref(task), device, ctypes.byref(impl)) >= 0 \
        else None


def run(impl, task, result):
    check(lib.pcb_run(impl, ctypes.byref(task), ctypes.byref(result), None))
