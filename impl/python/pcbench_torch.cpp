// pcbench_torch.cpp - the CUDA kernels of pcbench's PyTorch operators
// (pcbench::nn, knn, ball_query, fps, chamfer_nearest, chamfer_value,
// chamfer_backward, emd, grid, serialize)
// and chamfer_value's autograd, compiled against one PyTorch (make
// torch-ops). The Python package defines the operators' schemas and their
// fake implementations, loads this library when it was built for the
// PyTorch it runs with, and keeps its own ctypes kernels otherwise, and for
// CPU tensors and the other operators.
//
// Why compiled: at training batches a call's kernels take tens of
// microseconds, and the Python kernel's checks, ctypes structs and output
// allocations cost more than that. Here a call is the dispatcher, a few
// checks, the outputs' allocations and libpcbench's launches. The contract
// is the Python kernels': the same checks and messages (ValueError,
// TypeError), the same answers, the same asynchronous finite check; a
// library error other than a bad argument is a RuntimeError whose message
// starts "[pcbench PCB_<STATUS>] ", which the package raises as its
// PcbenchError.
#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "impl/pcbench.h"

namespace {

using at::Tensor;
using Lengths = std::optional<Tensor>;

// The operators' schemas this library was built for: the package reads this
// mark in the file before loading it, and never loads a library built for
// other schemas (a kernel whose signature does not match its schema aborts
// the process as it loads).
extern "C" __attribute__((visibility("default"), used)) const char pcbench_torch_abi[] =
    "pcbench-torch-abi 4 (grid's mean: pcb_result.mean, a third output)";

// pcbench.finite_check, pushed here by the package: 0 off, 1 async, 2 sync.
int finite_mode = 1;

[[noreturn]] void library_error(const char *fn, int rc)
{
    const std::string msg = std::string("pcbench.") + fn + ": " + pcb_errmsg();
    if (rc == PCB_EINVAL)
        TORCH_CHECK_VALUE(false, msg);
    TORCH_CHECK(false, "[pcbench ", pcb_status_name(rc), "] ", msg);
}

// A dtype as Python prints it ("torch.float64"): the messages are the
// Python kernels', word for word.
std::string dtype_name(at::ScalarType t)
{
    switch (t) {
    case at::kDouble: return "torch.float64";
    case at::kHalf: return "torch.float16";
    case at::kBFloat16: return "torch.bfloat16";
    case at::kInt: return "torch.int32";
    case at::kLong: return "torch.int64";
    case at::kShort: return "torch.int16";
    case at::kChar: return "torch.int8";
    case at::kByte: return "torch.uint8";
    case at::kBool: return "torch.bool";
    case at::kComplexFloat: return "torch.complex64";
    case at::kComplexDouble: return "torch.complex128";
    default: return std::string("torch.") + c10::toString(t);
    }
}

// A shape as Python prints a tuple: (2, 50, 3), (5,).
std::string shape(const Tensor &x)
{
    std::string s = "(";
    for (int64_t i = 0; i < x.dim(); i++)
        s += (i ? ", " : "") + std::to_string(x.size(i));
    return s + (x.dim() == 1 ? ",)" : ")");
}

// A cloud argument as the Python kernels check it, in their order.
void check_cloud(const Tensor &x, const char *fn, const char *name)
{
    TORCH_CHECK_TYPE(x.scalar_type() == at::kFloat, "pcbench.", fn, ": ", name,
                     " must be float32, not ", dtype_name(x.scalar_type()));
    TORCH_CHECK_VALUE(x.is_contiguous(), "pcbench.", fn, ": ", name,
                      " is not contiguous (call .contiguous())");
    TORCH_CHECK_VALUE((x.dim() == 2 || x.dim() == 3) && x.size(-1) == 3, "pcbench.", fn, ": ",
                      name, " must be (B, N, 3) or (N, 3), not ", shape(x));
    TORCH_CHECK_VALUE(x.numel() > 0, "pcbench.", fn, ": ", name, " is empty: ", shape(x));
    if (finite_mode == 2)
        TORCH_CHECK_VALUE(at::isfinite(x).all().item<bool>(), "pcbench.", fn, ": ", name,
                          " holds a non-finite coordinate");
}

void check_pair(const Tensor &a, const Tensor &b, const char *fn, const char *na,
                const char *nb)
{
    check_cloud(a, fn, na);
    check_cloud(b, fn, nb);
    TORCH_CHECK_VALUE(a.device() == b.device(), "pcbench.", fn, ": ", na, " and ", nb,
                      " must be the same kind on the same device (torch ", a.device().str(),
                      ", torch ", b.device().str(), ")");
    TORCH_CHECK_VALUE(a.dim() == b.dim() && (a.dim() == 2 || a.size(0) == b.size(0)),
                      "pcbench.", fn, ": ", na, " and ", nb, " must have the same batch (",
                      shape(a), " and ", shape(b), ")");
}

int64_t integer_in(int64_t v, const char *fn, const char *name, int64_t lo, int64_t hi)
{
    TORCH_CHECK_VALUE(v >= lo && v <= hi, "pcbench.", fn, ": ", name, " = ", v,
                      " is outside ", lo, "..", hi);
    return v;
}

// A ragged call's lengths as _ragged.as_lengths makes them: integers, one a
// cloud of a batched x, int64 on x's device; on the host each checked in
// 0..limit, on x's device clamped there (its values would cost a wait).
Lengths device_lengths(const Lengths &l, const Tensor &x, const char *fn, const char *name,
                       int64_t limit)
{
    if (!l)
        return std::nullopt;
    const Tensor &t = *l;
    const auto type = t.scalar_type();
    TORCH_CHECK_TYPE(!at::isFloatingType(type) && !at::isComplexType(type) && type != at::kBool,
                     "pcbench.", fn, ": ", name, " must be integers, not ", dtype_name(type));
    TORCH_CHECK_VALUE(x.dim() == 3, "pcbench.", fn, ": lengths need a batch of clouds (B, N, 3)");
    TORCH_CHECK_VALUE(t.dim() == 1 && t.size(0) == x.size(0), "pcbench.", fn, ": ", name,
                      " must hold ", x.size(0), " lengths, not shape ", shape(t));
    if (t.device() == x.device())
        return t.to(at::kLong).clamp(0, limit).contiguous();
    const Tensor host = t.to(at::kCPU, at::kLong).contiguous();
    const int64_t *v = host.data_ptr<int64_t>();
    for (int64_t i = 0; i < host.numel(); i++)
        TORCH_CHECK_VALUE(v[i] >= 0 && v[i] <= limit, "pcbench.", fn, ": ", name, "[", i,
                          "] = ", v[i], " is outside 0..", limit);
    return host.to(x.device());
}

// The lengths of a ragged call on the host, for the loop cloud by cloud
// (full: the cloud's size where none were given).
std::vector<int64_t> host_lengths(const Lengths &l, int64_t batch, int64_t full)
{
    std::vector<int64_t> out(batch, full);
    if (l) {
        const Tensor host = l->to(at::kCPU).contiguous();
        std::copy(host.data_ptr<int64_t>(), host.data_ptr<int64_t>() + batch, out.begin());
    }
    return out;
}

// The devices' finite flags, one int32 1 a device, kept for the process
// (never freed: a static tensor's destructor would run after CUDA's
// teardown). A run that meets a non-finite coordinate clears its device's;
// pcbench.nonfinite_seen() reads it (pcbench_torch_finite_read, below) and
// raises it again. No device-side assertion: that would end the CUDA context.
std::mutex flags_lock;
Tensor *flags[64];

int32_t *finite_flag(const Tensor &like)
{
    const int d = like.get_device();
    TORCH_CHECK(d >= 0 && d < 64, "pcbench: CUDA device ", d, " is beyond the 64 kept");
    std::lock_guard<std::mutex> hold(flags_lock);
    if (!flags[d])
        flags[d] = new Tensor(at::ones({}, like.options().dtype(at::kInt)));
    return flags[d]->data_ptr<int32_t>();
}

// A device task on the current stream of the first cloud's device: fill
// task's sizes, choose(), then the outputs, then run().
struct Call {
    const char *fn;
    pcb_task task{};
    pcb_result result{};
    const pcb_impl *impl = nullptr;

    Call(const char *f, pcb_problem problem, const Tensor &a) : fn(f)
    {
        task.problem = problem;
        task.batch = a.dim() == 3 ? a.size(0) : 1;
        task.n = a.size(-2);
        task.a = a.data_ptr<float>();
        task.memory = PCB_MEM_DEVICE;
        task.stream = c10::cuda::getCurrentCUDAStream(a.get_device()).stream();
        if (finite_mode == 1)
            result.finite = finite_flag(a);
    }

    // The implementation pcb_choose takes for the task.
    void choose()
    {
        const int rc = pcb_choose(&task, PCB_CUDA, &impl);
        if (rc < 0)
            library_error(fn, rc);
    }

    // A ragged task's implementation, one that reads the lengths on the
    // device; false where none does (the caller goes cloud by cloud, as the
    // Python kernels do).
    bool choose_ragged(const Lengths &la, const Lengths &lb)
    {
        task.lengths_a = la ? la->data_ptr<int64_t>() : nullptr;
        task.lengths_b = lb ? lb->data_ptr<int64_t>() : nullptr;
        if (pcb_choose(&task, PCB_CUDA, &impl) < 0 || !pcb_impl_ragged(impl))
            return false;
        return true;
    }

    void run()
    {
        const int rc = pcb_run(impl, &task, &result, nullptr);
        if (rc < 0)
            library_error(fn, rc);
    }
};

// The indices' output: int64 where the chosen implementation writes them
// (pcb_result.index64), else int32, widened after the run (a cast: a
// launch and an allocation more).
struct Indices {
    bool wide;
    Tensor t;

    Indices(Call &c, at::IntArrayRef shape, const Tensor &like)
        : wide(pcb_impl_index64(c.impl) != 0),
          t(at::empty(shape, like.options().dtype(wide ? at::kLong : at::kInt)))
    {
        if (wide)
            c.result.index64 = t.data_ptr<int64_t>();
        else
            c.result.index = t.data_ptr<int32_t>();
    }

    Tensor int64() const { return wide ? t : t.to(at::kLong); }
};

// An output of the input's batch rank: shape without its leading batch for
// an unbatched input.
at::DimVector shaped(const Tensor &like, std::initializer_list<int64_t> rest)
{
    at::DimVector s;
    if (like.dim() == 3)
        s.push_back(like.size(0));
    s.insert(s.end(), rest.begin(), rest.end());
    return s;
}

// Two groups of n rows a cloud, (2, [B,] n): grid's and serialize's rows,
// then the inverse map.
at::DimVector two_groups(const Tensor &like, int64_t n)
{
    at::DimVector s{2};
    if (like.dim() == 3)
        s.push_back(like.size(0));
    s.push_back(n);
    return s;
}

// nn (k 0: one a query) and knn: each query's nearest indices and squared
// distances.
std::tuple<Tensor, Tensor> nearest(const char *fn, pcb_problem problem, const Tensor &ref,
                                   const Tensor &query, int64_t k, const Lengths &ref_lengths,
                                   const Lengths &query_lengths)
{
    check_pair(ref, query, fn, "ref", "query");
    const Lengths lr = device_lengths(ref_lengths, ref, fn, "ref_lengths", ref.size(-2));
    // a self call (knn(x)): the queries and their lengths are the reference's
    // memory, kept one (pcb_task_self then builds one grid for both)
    const bool self = query.data_ptr() == ref.data_ptr() && query.sizes() == ref.sizes() &&
                      query_lengths.has_value() == ref_lengths.has_value() &&
                      (!query_lengths || query_lengths->data_ptr() == ref_lengths->data_ptr());
    const Lengths lq = self ? lr
                            : device_lengths(query_lengths, query, fn, "query_lengths",
                                             query.size(-2));
    if (problem == PCB_KNN) // beyond the reference's points a row is padding, up to PCB_PAD_K
        integer_in(k, fn, "k", 1, std::max<int64_t>(ref.size(-2), PCB_PAD_K));
    c10::cuda::CUDAGuard guard(ref.device());
    const auto shape = k ? shaped(query, {query.size(-2), k}) : shaped(query, {query.size(-2)});
    Call c(fn, problem, ref);
    c.task.nq = query.size(-2), c.task.b = query.data_ptr<float>(), c.task.k = k;
    if ((lr || lq) && !c.choose_ragged(lr, lq)) { // cloud by cloud
        Tensor idx = at::full(shape, -1, ref.options().dtype(at::kLong));
        Tensor d2 = at::full(shape, std::numeric_limits<float>::infinity(), ref.options());
        const auto nr = host_lengths(lr, ref.size(0), ref.size(-2));
        const auto nq = host_lengths(lq, ref.size(0), query.size(-2));
        for (int64_t i = 0; i < ref.size(0); i++)
            if (nr[i] && nq[i]) {
                auto [ci, cd] = nearest(fn, problem, ref.narrow(0, i, 1).narrow(1, 0, nr[i]),
                                        query.narrow(0, i, 1).narrow(1, 0, nq[i]), k,
                                        std::nullopt, std::nullopt);
                idx[i].narrow(0, 0, nq[i]).copy_(ci[0]);
                d2[i].narrow(0, 0, nq[i]).copy_(cd[0]);
            }
        return {idx, d2};
    }
    if (!lr && !lq)
        c.choose();
    Indices idx(c, shape, ref);
    Tensor d2 = at::empty(shape, ref.options());
    c.result.dist2 = d2.data_ptr<float>();
    c.run();
    return {idx.int64(), d2};
}

std::tuple<Tensor, Tensor> nn_cuda(const Tensor &ref, const Tensor &query,
                                   const Lengths &ref_lengths, const Lengths &query_lengths)
{
    return nearest("nn", PCB_NN, ref, query, 0, ref_lengths, query_lengths);
}

std::tuple<Tensor, Tensor> knn_cuda(const Tensor &ref, const Tensor &query, int64_t k,
                                    const Lengths &ref_lengths, const Lengths &query_lengths)
{
    return nearest("knn", PCB_KNN, ref, query, k, ref_lengths, query_lengths);
}

// Ball query: (index ([B,] M, k) int64, count ([B,] M) int32), as the
// Python kernels' _ball_direct and _ball_ragged: padding -1 past count (the
// package applies pad="first" after the operator).
std::tuple<Tensor, Tensor> ball_query_cuda(const Tensor &xyz, const Tensor &centres,
                                           double radius, int64_t k, c10::string_view select,
                                           const Lengths &xyz_lengths,
                                           const Lengths &centres_lengths)
{
    const char *fn = "ball_query";
    check_pair(xyz, centres, fn, "xyz", "centres");
    const Lengths lx = device_lengths(xyz_lengths, xyz, fn, "xyz_lengths", xyz.size(-2));
    const Lengths lc = device_lengths(centres_lengths, centres, fn, "centres_lengths",
                                      centres.size(-2));
    integer_in(k, fn, "k", 1, std::max<int64_t>(xyz.size(-2), PCB_PAD_K));
    const std::string sel(select.data(), select.size());
    TORCH_CHECK_VALUE(sel == "first" || sel == "nearest",
                      "pcbench.ball_query: select must be 'first' or 'nearest', not '", sel, "'");
    TORCH_CHECK_VALUE(radius > 0 && std::isfinite(radius), "pcbench.ball_query: radius must be "
                      "a finite number > 0, not ", radius);
    TORCH_CHECK_VALUE(std::isfinite(pcb_ball_r2(radius)), "pcbench.ball_query: radius ", radius,
                      ": its float32 square is not finite");
    c10::cuda::CUDAGuard guard(xyz.device());
    const int64_t m = centres.size(-2);
    Call c(fn, PCB_BALL, xyz);
    c.task.nq = m, c.task.b = centres.data_ptr<float>(), c.task.k = k;
    c.task.radius = radius, c.task.select = sel == "nearest" ? PCB_BALL_NEAREST : PCB_BALL_FIRST;
    if ((lx || lc) && !c.choose_ragged(lx, lc)) { // cloud by cloud
        Tensor idx = at::full(shaped(centres, {m, k}), -1, xyz.options().dtype(at::kLong));
        Tensor count = at::zeros(shaped(centres, {m}), xyz.options().dtype(at::kInt));
        const auto nx = host_lengths(lx, xyz.size(0), xyz.size(-2));
        const auto nc = host_lengths(lc, xyz.size(0), m);
        for (int64_t i = 0; i < xyz.size(0); i++)
            if (nx[i] && nc[i]) {
                auto [ci, cc] = ball_query_cuda(xyz.narrow(0, i, 1).narrow(1, 0, nx[i]),
                                                centres.narrow(0, i, 1).narrow(1, 0, nc[i]),
                                                radius, k, select, std::nullopt, std::nullopt);
                idx[i].narrow(0, 0, nc[i]).copy_(ci[0]);
                count[i].narrow(0, 0, nc[i]).copy_(cc[0]);
            }
        return {idx, count};
    }
    if (!lx && !lc)
        c.choose();
    Indices idx(c, shaped(centres, {m, k}), xyz);
    Tensor count = at::empty(shaped(centres, {m}), xyz.options().dtype(at::kInt));
    c.result.count = count.data_ptr<int32_t>();
    c.run();
    return {idx.int64(), count};
}

Tensor fps_cuda(const Tensor &xyz, int64_t m, int64_t start, const Lengths &lengths)
{
    check_cloud(xyz, "fps", "xyz");
    if (lengths)
        TORCH_CHECK_VALUE(xyz.dim() == 3, "pcbench.fps: lengths need a batch of clouds (B, N, 3)");
    const int64_t n = xyz.size(-2);
    integer_in(m, "fps", "m (samples)", 1, n);
    integer_in(start, "fps", "start", 0, n - 1);
    const Lengths l = device_lengths(lengths, xyz, "fps", "lengths", n);
    c10::cuda::CUDAGuard guard(xyz.device());
    Call c("fps", PCB_FPS, xyz);
    c.task.m = m, c.task.start = start;
    if (l && !c.choose_ragged(l, std::nullopt)) { // cloud by cloud
        Tensor idx = at::full({xyz.size(0), m}, -1, xyz.options().dtype(at::kLong));
        const auto sizes = host_lengths(l, xyz.size(0), n);
        for (int64_t i = 0; i < xyz.size(0); i++)
            if (sizes[i]) {
                const int64_t mi = std::min(m, sizes[i]);
                idx[i].narrow(0, 0, mi).copy_(
                    fps_cuda(xyz.narrow(0, i, 1).narrow(1, 0, sizes[i]), mi, start,
                             std::nullopt)[0]);
            }
        return idx;
    }
    if (!l)
        c.choose();
    Indices idx(c, shaped(xyz, {m}), xyz);
    c.run();
    return idx.int64();
}

// A chamfer task on a and b (checked), its implementation chosen; both
// directions' answers are one array each, a's points of the whole batch,
// then b's.
Call chamfer_call(const char *fn, const Tensor &a, const Tensor &b)
{
    Call c(fn, PCB_CHAMFER, a);
    c.task.nq = b.size(-2), c.task.b = b.data_ptr<float>();
    c.choose();
    return c;
}

int64_t both_ways(const Call &c)
{
    return c.task.batch * (c.task.n + c.task.nq);
}

std::tuple<Tensor, Tensor> chamfer_nearest_cuda(const Tensor &a, const Tensor &b,
                                                const Lengths &a_lengths,
                                                const Lengths &b_lengths)
{
    const char *fn = "chamfer_nearest";
    check_pair(a, b, fn, "a", "b");
    const Lengths la = device_lengths(a_lengths, a, fn, "a_lengths", a.size(-2));
    const Lengths lb = device_lengths(b_lengths, b, fn, "b_lengths", b.size(-2));
    c10::cuda::CUDAGuard guard(a.device());
    Call c(fn, PCB_CHAMFER, a);
    c.task.nq = b.size(-2), c.task.b = b.data_ptr<float>();
    if ((la || lb) && !c.choose_ragged(la, lb)) { // cloud by cloud: a's points, then b's
        const int64_t batch = a.size(0), na = a.size(1), nb = b.size(1);
        Tensor idx = at::full({both_ways(c)}, -1, a.options().dtype(at::kLong));
        Tensor d2 = at::full({both_ways(c)}, std::numeric_limits<float>::infinity(), a.options());
        const auto sa = host_lengths(la, batch, na), sb = host_lengths(lb, batch, nb);
        for (int64_t i = 0; i < batch; i++)
            if (sa[i] && sb[i]) {
                auto [ci, cd] = chamfer_nearest_cuda(a.narrow(0, i, 1).narrow(1, 0, sa[i]),
                                                     b.narrow(0, i, 1).narrow(1, 0, sb[i]),
                                                     std::nullopt, std::nullopt);
                idx.narrow(0, i * na, sa[i]).copy_(ci.narrow(0, 0, sa[i]));
                d2.narrow(0, i * na, sa[i]).copy_(cd.narrow(0, 0, sa[i]));
                idx.narrow(0, batch * na + i * nb, sb[i]).copy_(ci.narrow(0, sa[i], sb[i]));
                d2.narrow(0, batch * na + i * nb, sb[i]).copy_(cd.narrow(0, sa[i], sb[i]));
            }
        return {idx, d2};
    }
    if (!la && !lb)
        c.choose();
    Indices idx(c, {both_ways(c)}, a);
    Tensor d2 = at::empty({both_ways(c)}, a.options());
    c.result.dist2 = d2.data_ptr<float>();
    c.run();
    return {idx.int64(), d2};
}

// Grid sampling: (index (2, [B,] N): the voxels' rows, then the inverse map;
// count ([B,] N); mean ([B,] N, 3), or ([B,] 0, 3) but for "mean"), as the
// Python kernel's _grid_direct; a ragged batch cloud by cloud (no grid
// implementation reads lengths). With the finite check "sync" a cloud past
// the keys' span raises the CPU's error first (one wait).
std::tuple<Tensor, Tensor, Tensor> grid_cuda(const Tensor &xyz, at::ArrayRef<double> size,
                                     std::optional<at::ArrayRef<double>> origin,
                                     c10::string_view select, const Lengths &lengths,
                                     int64_t seed)
{
    check_cloud(xyz, "grid", "xyz");
    TORCH_CHECK_VALUE(size.size() == 3 && (!origin || origin->size() == 3),
                      "pcbench.grid: size and origin take three numbers");
    const std::string sel(select.data(), select.size());
    TORCH_CHECK_VALUE(sel == "first" || sel == "nearest" || sel == "random" || sel == "mean",
                      "pcbench.grid: select must be 'first', 'nearest', 'random' or 'mean', not '",
                      sel, "'");
    const int64_t n = xyz.size(-2);
    const bool means = sel == "mean";
    Tensor mean = at::empty(shaped(xyz, {means ? n : 0, 3}), xyz.options().dtype(at::kFloat));
    const Lengths l = device_lengths(lengths, xyz, "grid", "lengths", n);
    c10::cuda::CUDAGuard guard(xyz.device());
    if (l) { // cloud by cloud: -1 and 0 past each cloud's own answer
        const int64_t batch = xyz.size(0);
        Tensor idx = at::full({2, batch, n}, -1, xyz.options().dtype(at::kLong));
        Tensor count = at::zeros({batch, n}, xyz.options().dtype(at::kInt));
        mean.zero_();
        const auto sizes = host_lengths(l, batch, n);
        for (int64_t i = 0; i < batch; i++)
            if (sizes[i]) {
                auto [ci, cc, cm] = grid_cuda(xyz.narrow(0, i, 1).narrow(1, 0, sizes[i]), size,
                                              origin, select, std::nullopt, seed);
                idx.select(1, i).narrow(1, 0, sizes[i]).copy_(ci.select(1, 0));
                count[i].narrow(0, 0, sizes[i]).copy_(cc[0]);
                if (means)
                    mean[i].narrow(0, 0, sizes[i]).copy_(cm[0]);
            }
        return {idx, count, mean};
    }
    Call c("grid", PCB_GRID, xyz);
    for (int k = 0; k < 3; k++) {
        c.task.cell[k] = size[k];
        c.task.origin[k] = origin ? (*origin)[k] : 0;
    }
    c.task.origin_given = origin.has_value();
    c.task.select = sel == "nearest" ? PCB_BALL_NEAREST
                    : sel == "random"  ? PCB_GRID_RANDOM
                    : means            ? PCB_GRID_MEAN
                                       : PCB_BALL_FIRST;
    c.task.seed = (uint64_t)seed;
    if (finite_mode == 2) { // the span checked first, as the Python kernel does
        const auto [lo, hi] = at::aminmax(xyz.reshape({c.task.batch, n, 3}), 1);
        const Tensor at0 = origin ? at::tensor(*origin, xyz.options().dtype(at::kDouble))
                                  : lo.to(at::kDouble);
        const Tensor cell = at::tensor(size, xyz.options().dtype(at::kDouble));
        const Tensor span = at::floor((hi.to(at::kDouble) - at0) / cell) -
                            at::floor((lo.to(at::kDouble) - at0) / cell);
        const Tensor bad = at::isfinite(span) & (span >= double(int64_t(1) << 19));
        if (bad.any().item<bool>()) {
            const Tensor where = bad.nonzero()[0].cpu();
            const int64_t cloud = where[0].item<int64_t>(), axis = where[1].item<int64_t>();
            char msg[160];
            snprintf(msg, sizeof msg, "pcbench.grid: grid: cloud %lld spans %.17g voxels along "
                     "%c (at most %d)", (long long)cloud,
                     span[cloud][axis].item<double>() + 1, "xyz"[axis], 1 << 19);
            TORCH_CHECK(false, "[pcbench PCB_EUNSUPPORTED] ", msg);
        }
    }
    c.choose();
    Indices idx(c, two_groups(xyz, n), xyz);
    Tensor count = at::empty(shaped(xyz, {n}), xyz.options().dtype(at::kInt));
    c.result.count = count.data_ptr<int32_t>();
    c.result.mean = means ? mean.data_ptr<float>() : nullptr;
    c.run();
    return {idx.int64(), count, mean};
}

// Serialization: (code ([B,] N), index (2, [B,] N): the order, then the
// inverse), as the Python kernel's _serialize; a ragged batch read whole on
// the device (cuda_sort reads the lengths). With the finite check "sync" the
// task is first checked as the CPU checks it, on a host copy (one wait): a
// voxel past the depth raises the CPU's error, word for word.
std::tuple<Tensor, Tensor> serialize_cuda(const Tensor &xyz, at::ArrayRef<double> size,
                                          std::optional<at::ArrayRef<double>> origin,
                                          c10::string_view curve, int64_t depth,
                                          const Lengths &lengths)
{
    check_cloud(xyz, "serialize", "xyz");
    TORCH_CHECK_VALUE(size.size() == 3 && (!origin || origin->size() == 3),
                      "pcbench.serialize: size and origin take three numbers");
    const std::string name(curve.data(), curve.size());
    TORCH_CHECK_VALUE(name == "morton" || name == "hilbert", "pcbench.serialize: unknown curve '",
                      name, "' (morton, hilbert)");
    const int64_t n = xyz.size(-2);
    const Lengths l = device_lengths(lengths, xyz, "serialize", "lengths", n);
    c10::cuda::CUDAGuard guard(xyz.device());
    Call c("serialize", PCB_SERIALIZE, xyz);
    for (int k = 0; k < 3; k++) {
        c.task.cell[k] = size[k];
        c.task.origin[k] = origin ? (*origin)[k] : 0;
    }
    c.task.origin_given = origin.has_value();
    c.task.curve = name == "hilbert" ? PCB_CURVE_HILBERT : PCB_CURVE_MORTON;
    c.task.depth = (int32_t)std::clamp<int64_t>(depth, -1, PCB_CURVE_MAX_DEPTH + 1);
    c.task.lengths_a = l ? l->data_ptr<int64_t>() : nullptr;
    if (finite_mode == 2) {
        const Tensor host = xyz.cpu();
        const Tensor host_lengths = l ? l->cpu() : Tensor();
        pcb_task t = c.task;
        t.a = host.data_ptr<float>(), t.memory = PCB_MEM_HOST, t.stream = nullptr;
        t.lengths_a = l ? host_lengths.data_ptr<int64_t>() : nullptr;
        const int rc = pcb_task_check(&t);
        if (rc < 0)
            library_error("serialize", rc);
    }
    c.choose();
    Indices idx(c, two_groups(xyz, n), xyz);
    Tensor code = at::empty(shaped(xyz, {n}), xyz.options().dtype(at::kLong));
    c.result.code = code.data_ptr<int64_t>();
    c.run();
    return {code, idx.int64()};
}

// EMD by the certified auction: (matching ([B,] N) int64, value and bound
// ([B]) float64), as the Python kernels' _emd_direct and _emd_ragged; a
// ragged batch pair by pair (-1 past a pair's points, an empty pair's value
// NaN and its bound 0). emd_loss's matching is this operator.
std::tuple<Tensor, Tensor, Tensor> emd_cuda(const Tensor &a, const Tensor &b, double max_gap,
                                            const Lengths &lengths)
{
    const char *fn = "emd";
    check_pair(a, b, fn, "a", "b");
    const Lengths l = device_lengths(lengths, a, fn, "lengths", a.size(-2));
    const int64_t n = a.size(-2);
    TORCH_CHECK_VALUE(n == b.size(-2), "pcbench.emd: a and b must have as many points (", n,
                      " and ", b.size(-2), ")");
    TORCH_CHECK_VALUE(max_gap > 0 && max_gap <= 1, "pcbench.emd: max_gap ", max_gap,
                      ": need a relative gap in (0, 1]");
    c10::cuda::CUDAGuard guard(a.device());
    const at::DimVector lead(a.sizes().begin(), a.sizes().end() - 2);
    const auto doubles = a.options().dtype(at::kDouble);
    if (l) { // pair by pair
        const int64_t batch = a.size(0);
        Tensor match = at::full({batch, n}, -1, a.options().dtype(at::kLong));
        Tensor value = at::full({batch}, std::numeric_limits<double>::quiet_NaN(), doubles);
        Tensor bound = at::zeros({batch}, doubles);
        const auto sizes = host_lengths(l, batch, n);
        for (int64_t i = 0; i < batch; i++)
            if (sizes[i]) {
                auto [cm, cv, cb] = emd_cuda(a.narrow(0, i, 1).narrow(1, 0, sizes[i]),
                                             b.narrow(0, i, 1).narrow(1, 0, sizes[i]), max_gap,
                                             std::nullopt);
                match[i].narrow(0, 0, sizes[i]).copy_(cm[0]);
                value[i].copy_(cv[0]);
                bound[i].copy_(cb[0]);
            }
        return {match, value, bound};
    }
    Call c(fn, PCB_EMD, a);
    c.task.nq = n, c.task.b = b.data_ptr<float>(), c.task.opt.max_gap = max_gap;
    c.choose();
    Indices match(c, shaped(a, {n}), a);
    Tensor value = at::empty(lead, doubles), bound = at::empty(lead, doubles);
    c.result.value = value.data_ptr<double>(), c.result.bound = bound.data_ptr<double>();
    c.run();
    return {match.int64(), value, bound};
}

// The value's forward: the indices stay int32 (the backward's input).
std::tuple<Tensor, Tensor> chamfer_value_cuda(const Tensor &a, const Tensor &b)
{
    check_pair(a, b, "chamfer", "a", "b");
    c10::cuda::CUDAGuard guard(a.device());
    Call c = chamfer_call("chamfer", a, b);
    Tensor idx = at::empty({both_ways(c)}, a.options().dtype(at::kInt));
    Tensor d2 = at::empty({both_ways(c)}, a.options());
    c.result.index = idx.data_ptr<int32_t>(), c.result.dist2 = d2.data_ptr<float>();
    Tensor value = at::empty({c.task.batch}, a.options().dtype(at::kDouble));
    c.result.value = value.data_ptr<double>();
    c.run();
    at::DimVector lead(a.sizes().begin(), a.sizes().end() - 2);
    return {value.to(at::kFloat).reshape(lead), idx};
}

std::tuple<Tensor, Tensor> chamfer_backward_cuda(const Tensor &a, const Tensor &b,
                                                 const Tensor &idx, const Tensor &grad)
{
    c10::cuda::CUDAGuard guard(a.device());
    const Tensor g = grad.to(at::kFloat).contiguous().reshape(-1);
    Tensor grad_a = at::zeros_like(a), grad_b = at::zeros_like(b);
    pcb_task t{};
    t.problem = PCB_CHAMFER;
    t.batch = a.dim() == 3 ? a.size(0) : 1;
    t.n = a.size(-2), t.nq = b.size(-2);
    t.a = a.data_ptr<float>(), t.b = b.data_ptr<float>();
    t.memory = PCB_MEM_DEVICE;
    t.stream = c10::cuda::getCurrentCUDAStream(a.get_device()).stream();
    const int rc = pcb_chamfer_backward(&t, idx.data_ptr<int32_t>(), g.data_ptr<float>(),
                                        grad_a.data_ptr<float>(), grad_b.data_ptr<float>());
    if (rc < 0)
        library_error("chamfer", rc);
    return {grad_a, grad_b};
}

// chamfer_value's autograd: the gradient of each pair's value with the
// nearest points held fixed (pcbench::chamfer_backward), for every device.
struct ChamferValue : torch::autograd::Function<ChamferValue> {
    static torch::autograd::variable_list forward(torch::autograd::AutogradContext *ctx,
                                                  const Tensor &a, const Tensor &b)
    {
        at::AutoDispatchBelowADInplaceOrView below;
        static const auto op =
            c10::Dispatcher::singleton()
                .findSchemaOrThrow("pcbench::chamfer_value", "")
                .typed<std::tuple<Tensor, Tensor>(const Tensor &, const Tensor &)>();
        auto [value, idx] = op.call(a, b);
        ctx->save_for_backward({a, b, idx});
        ctx->mark_non_differentiable({idx});
        return {value, idx};
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext *ctx,
                                                   torch::autograd::variable_list grads)
    {
        if (!grads[0].defined())
            return {Tensor(), Tensor()};
        const auto saved = ctx->get_saved_variables();
        static const auto op =
            c10::Dispatcher::singleton()
                .findSchemaOrThrow("pcbench::chamfer_backward", "")
                .typed<std::tuple<Tensor, Tensor>(const Tensor &, const Tensor &,
                                                  const Tensor &, const Tensor &)>();
        auto [grad_a, grad_b] = op.call(saved[0], saved[1], saved[2], grads[0]);
        return {grad_a, grad_b};
    }
};

std::tuple<Tensor, Tensor> chamfer_value_autograd(const Tensor &a, const Tensor &b)
{
    auto out = ChamferValue::apply(a, b);
    return {out[0], out[1]};
}

} // namespace

TORCH_LIBRARY_IMPL(pcbench, CUDA, m)
{
    m.impl("nn", nn_cuda);
    m.impl("knn", knn_cuda);
    m.impl("ball_query", ball_query_cuda);
    m.impl("fps", fps_cuda);
    m.impl("chamfer_nearest", chamfer_nearest_cuda);
    m.impl("chamfer_value", chamfer_value_cuda);
    m.impl("chamfer_backward", chamfer_backward_cuda);
    m.impl("emd", emd_cuda);
    m.impl("grid", grid_cuda);
    m.impl("serialize", serialize_cuda);
}

TORCH_LIBRARY_IMPL(pcbench, Autograd, m)
{
    m.impl("chamfer_value", chamfer_value_autograd);
}

// The operators this library registers a CUDA kernel for, and the finite
// check's mode, for the package (through ctypes).
extern "C" __attribute__((visibility("default"))) const char *pcbench_torch_ops(void)
{
    return "nn knn ball_query fps chamfer_nearest chamfer_value chamfer_backward emd grid "
           "serialize";
}

extern "C" __attribute__((visibility("default"))) void pcbench_torch_finite_check(int mode)
{
    finite_mode = mode;
}

// 1 if device's flag was lowered since the last read (then raised again), 0
// if not, -1 if it could not be read; it waits for the device's current stream.
extern "C" __attribute__((visibility("default"))) int pcbench_torch_finite_read(int device)
{
    Tensor *flag = nullptr;
    {
        std::lock_guard<std::mutex> hold(flags_lock);
        flag = device >= 0 && device < 64 ? flags[device] : nullptr;
    }
    if (!flag)
        return 0;
    try { // no exception crosses into the caller's C
        c10::cuda::CUDAGuard guard(flag->device());
        const bool lowered = flag->item<int32_t>() == 0;
        flag->fill_(1);
        return lowered ? 1 : 0;
    } catch (const std::exception &) {
        return -1;
    }
}
