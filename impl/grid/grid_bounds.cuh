/* grid_bounds.cuh - the phase the voxel problems' CUDA implementations
 * share (grid sampling's two, serialization): the voxel rule on the device,
 * each cloud's least and greatest coordinate an axis (many blocks a cloud),
 * and grid sampling's frame of a cloud (its origin, lowest voxel, fit).
 * Private to their .cu files; everything here has internal linkage. */
#ifndef PCB_GRID_BOUNDS_CUH
#define PCB_GRID_BOUNDS_CUH

#include <cub/cub.cuh>
#include <float.h>

#include "grid.h"
#include "impl/cuda_util.h"

namespace {

enum { BOUNDS_THREADS = 256, BOUNDS_POINTS = 16 };
/* grid sampling's sorts and tables: up to 128 clouds, each cloud's number
 * in the 7 bits above its points' voxels (19 bits an axis) */
enum { CLOUD_BITS = 7, MAX_CLOUDS = 1 << CLOUD_BITS, VOXEL_BITS = 3 * PCB_GRID_AXIS_BITS };

struct float_min {
    __device__ float operator()(float a, float b) const { return fminf(a, b); }
};
struct float_max {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

/* grid.h's rule: one correctly rounded subtraction and division. */
__device__ __forceinline__ double voxel_coord(float p, double origin, double cell)
{
    return floor(__ddiv_rn(__dsub_rn((double)p, origin), cell));
}

/* A coordinate as the run reads it: one that is not finite as 0 (the finite
 * flag says so: the bounds kernel reads every point). */
__device__ __forceinline__ float coord_of(const float *p)
{
    const float v = *p;
    return fabsf(v) <= FLT_MAX ? v : 0.0f;
}

/* Floats as ints in the same order (atomicMin and atomicMax on them). */
__device__ __forceinline__ int32_t ordered(float f)
{
    const int32_t i = __float_as_int(f);
    return i >= 0 ? i : i ^ 0x7fffffff;
}

__device__ __forceinline__ float unordered(int32_t o)
{
    return __int_as_float(o >= 0 ? o : o ^ 0x7fffffff);
}

__global__ void bounds_init_kernel(int64_t batch, int32_t *bounds)
{
    for (int64_t i = threadIdx.x; i < batch * 6; i += blockDim.x)
        bounds[i] = i % 6 < 3 ? INT32_MAX : INT32_MIN;
}

/* Each cloud's least and greatest coordinate an axis: blocks of a cloud's
 * BOUNDS_POINTS x BOUNDS_THREADS points (one pass, all three axes), each
 * block's extremes folded in by atomics; a 1M-point sweep is 245 blocks,
 * not one. lengths (device; NULL: every cloud n): a ragged cloud's points
 * past its length are not read. A cloud of no points keeps INT32_MAX and
 * INT32_MIN. */
__global__ void __launch_bounds__(BOUNDS_THREADS)
    bounds_kernel(const float *xyz, int64_t n, int64_t batch, const int64_t *lengths,
                  int32_t *bounds, int32_t *finite)
{
    typedef cub::BlockReduce<float, BOUNDS_THREADS> reduce;
    __shared__ typename reduce::TempStorage store;
    for (int64_t c = blockIdx.y; c < batch; c += gridDim.y) {
        const float *p = xyz + c * n * 3;
        const int64_t size = lengths ? lengths[c] : n;
        float lo[3] = {FLT_MAX, FLT_MAX, FLT_MAX}, hi[3] = {-FLT_MAX, -FLT_MAX, -FLT_MAX};
        bool seen = true, any = false;
        const int64_t begin = (int64_t)blockIdx.x * BOUNDS_THREADS * BOUNDS_POINTS;
        for (int j = 0; j < BOUNDS_POINTS; j++) {
            const int64_t i = begin + (int64_t)j * BOUNDS_THREADS + threadIdx.x;
            if (i >= size)
                break;
            any = true;
            for (int k = 0; k < 3; k++) {
                const float v = p[3 * i + k];
                seen &= fabsf(v) <= FLT_MAX;
                lo[k] = fminf(lo[k], coord_of(p + 3 * i + k));
                hi[k] = fmaxf(hi[k], coord_of(p + 3 * i + k));
            }
        }
        if (!seen && finite)
            *finite = 0;
        const int block_any = __syncthreads_or(any);
        for (int k = 0; k < 3 && block_any; k++) {
            const float l = reduce(store).Reduce(lo[k], float_min());
            __syncthreads();
            const float h = reduce(store).Reduce(hi[k], float_max());
            __syncthreads();
            if (threadIdx.x == 0) {
                atomicMin(&bounds[c * 6 + k], ordered(l));
                atomicMax(&bounds[c * 6 + 3 + k], ordered(h));
            }
        }
    }
}

/* A cloud's frame: its origin, its lowest voxel, whether it fits the keys. */
typedef struct {
    double origin[3], low[3];
    int ok;
} frame;

/* A thread a cloud: its origin and lowest voxel from its bounds; a cloud
 * whose span does not fit the keys says so. */
__global__ void frame_kernel(const int32_t *bounds, int64_t batch, double3 cell, double3 origin,
                             int origin_given, frame *frames, int32_t *bad, int32_t *finite)
{
    const int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= batch)
        return;
    const double cells[3] = {cell.x, cell.y, cell.z}, given[3] = {origin.x, origin.y, origin.z};
    frame f;
    f.ok = 1;
    for (int k = 0; k < 3; k++) { /* floor is monotonic: the extreme points give the span */
        const float lo = unordered(bounds[c * 6 + k]), hi = unordered(bounds[c * 6 + 3 + k]);
        f.origin[k] = origin_given ? given[k] : (double)lo;
        f.low[k] = voxel_coord(lo, f.origin[k], cells[k]);
        const double high = voxel_coord(hi, f.origin[k], cells[k]);
        f.ok &= high - f.low[k] < (double)PCB_GRID_AXIS_SPAN;
    }
    frames[c] = f;
    if (!f.ok) {
        *bad = 1;
        if (finite)
            *finite = 0;
    }
}

/* A point's key: its cloud's number in the sort or table (local) above its
 * voxel, 19 bits an axis counted from the cloud's lowest voxel. */
__device__ __forceinline__ uint64_t voxel_key(const float *p, const frame &f, double3 cell,
                                              int64_t local)
{
    const double cells[3] = {cell.x, cell.y, cell.z};
    uint64_t key = 0;
    for (int k = 0; k < 3; k++)
        key = (key << PCB_GRID_AXIS_BITS) |
              (uint64_t)(voxel_coord(coord_of(p + k), f.origin[k], cells[k]) - f.low[k]);
    return (uint64_t)local << VOXEL_BITS | key;
}

/* The squared distance to a voxel's centre, as grid.h writes it, one
 * rounded operation at a time (no fused multiply-add). */
__device__ __forceinline__ double centre_d2(const float *p, const double v[3],
                                                   const frame &f, const double cell[3])
{
    double d2 = 0;
    for (int k = 0; k < 3; k++) {
        const double c = __dadd_rn(f.origin[k], __dmul_rn(__dadd_rn(v[k], 0.5), cell[k]));
        const double d = __dsub_rn((double)coord_of(p + k), c);
        d2 = __dadd_rn(d2, __dmul_rn(d, d));
    }
    return d2;
}

/* Both kernels on st: bounds (batch x 6: each cloud's least x, y, z, then
 * greatest, as ordered ints) from the clouds xyz. */
int pcb_grid_bounds(const float *xyz, int64_t n, int64_t batch, const int64_t *lengths,
                    int32_t *bounds, int32_t *finite, cudaStream_t st)
{
    bounds_init_kernel<<<1, 256, 0, st>>>(batch, bounds);
    PCB_CUDA_LAUNCHED("bounds_init_kernel");
    const int64_t chunks = (n + BOUNDS_THREADS * BOUNDS_POINTS - 1) / (BOUNDS_THREADS * BOUNDS_POINTS);
    const dim3 spread((unsigned)(chunks > 0 ? chunks : 1),
                      (unsigned)(batch < 65535 ? batch : 65535));
    bounds_kernel<<<spread, BOUNDS_THREADS, 0, st>>>(xyz, n, batch, lengths, bounds, finite);
    PCB_CUDA_LAUNCHED("bounds_kernel");
    return PCB_OK;
}

/* A grid sampling host run's answer: refused where a cloud spanned more
 * voxels than the keys hold (bad: the device's flag), else its rows (2 a
 * point) and counts copied back. who: "grid cuda_sort", ... */
static inline int grid_host_fetch(const char *who, const int32_t *bad, const int32_t *index,
                                  const int32_t *count, const float *mean, size_t points,
                                  pcb_result *out)
{
    int32_t flagged = 0;
    if (!out->count)
        return pcb_fail(PCB_EINVAL, "%s: the answer needs its count array", who);
    if (mean && !out->mean)
        return pcb_fail(PCB_EINVAL, "%s: select mean: the answer needs its mean array", who);
    PCB_CUDA_TRY(cudaMemcpy(&flagged, bad, sizeof flagged, cudaMemcpyDeviceToHost));
    if (flagged)
        return pcb_fail(PCB_EUNSUPPORTED, "%s: a cloud spans more than %lld voxels along an axis",
                        who, (long long)PCB_GRID_AXIS_SPAN);
    PCB_CUDA_TRY(cudaMemcpy(out->index, index, 2 * points * sizeof *out->index,
                            cudaMemcpyDeviceToHost));
    PCB_CUDA_TRY(cudaMemcpy(out->count, count, points * sizeof *out->count,
                            cudaMemcpyDeviceToHost));
    if (mean)
        PCB_CUDA_TRY(cudaMemcpy(out->mean, mean, 3 * points * sizeof *out->mean,
                                cudaMemcpyDeviceToHost));
    return PCB_OK;
}

} // namespace

#endif
