/* grid_cuda_sort.cu - grid sampling by one radix sort: up to 128 clouds a
 * sort, each point's key its cloud's number (7 bits) above its voxel (19
 * bits an axis, grid.h), CUB's DeviceRadixSort of (key, index) pairs
 * (stable: a voxel's points in increasing index), then the voxels read off
 * the sorted keys: a head where the key changes, a scan that numbers them,
 * a thread a voxel for its count and kept point, a thread a point for the
 * inverse map. Before the sorts, each cloud's bounds (many blocks a cloud)
 * and its frame; the clouds are read in place, a non-finite coordinate as
 * 0. No host wait: device runs are queued whole. A cloud that spans more than 2^19 voxels an axis is
 * PCB_EUNSUPPORTED (host runs) or lowers the finite flag with rows of -1
 * (device runs: no wait to say it). NEAREST and RANDOM: a thread scans its
 * voxel's points, a voxel of more than BIG points a warp (listed by the
 * voxel's thread, taken by a fixed grid of warps), so a cloud of one voxel
 * is no longer one thread's loop (impl/grid/NOTES.md). MEAN: a thread sums
 * its voxel's points in increasing index, whatever their number (the
 * contract's order: the mean the CPU's, bit for bit). */
#include <cub/cub.cuh>
#include <float.h>

#include "grid.h"
#include "grid_bounds.cuh"
#include "impl/cuda_util.h"

extern "C" const pcb_impl pcb_grid_cuda_sort;

enum { THREADS = 256, BIG = 32, BIG_BLOCKS = 264 /* of 8 warps: 2 an SM of an H100 or H200 */ };

typedef struct {
    int64_t batch, n;
    int32_t *bounds;         /* batch x 6: each cloud's extremes, ordered ints */
    uint64_t *keys[2];       /* a sort's keys, before and after */
    int32_t *vals[2];        /* their point indices */
    int32_t *head, *number;  /* a voxel starts here; its number + 1 (the scan) */
    int32_t *start;          /* each voxel's first sorted position */
    int32_t *big, *bigs;     /* the voxels of more than BIG points, their count */
    frame *frames;           /* batch */
    int32_t *bad;            /* 1 when a cloud did not fit the keys */
    void *temp;
    size_t temp_bytes;
} grid_scratch;

/* A thread a point of the sort's clouds: its key and index. */
__global__ void grid_key_kernel(const float *xyz, int64_t n, int64_t first, int64_t count,
                                double3 cell, const frame *frames, uint64_t *keys, int32_t *vals)
{
    const int64_t g = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    if (g >= count)
        return;
    const int64_t local = g / n, i = g % n;
    const frame f = frames[first + local];
    const float *p = xyz + ((first + local) * n + i) * 3;
    /* a cloud that does not fit: every point voxel 0 (its rows stay -1) */
    keys[g] = f.ok ? voxel_key(p, f, cell, local) : (uint64_t)local << VOXEL_BITS;
    vals[g] = (int32_t)i;
}

__global__ void grid_head_kernel(const uint64_t *keys, int64_t count, int32_t *head)
{
    const int64_t j = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    if (j < count)
        head[j] = j == 0 || keys[j] != keys[j - 1];
}

__global__ void grid_start_kernel(const int32_t *head, const int32_t *number, int64_t count,
                                  int32_t *start)
{
    const int64_t j = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    if (j < count && head[j])
        start[number[j] - 1] = (int32_t)j;
}

/* A thread a voxel (of the sort's voxels, at most count): its row; I the
 * indices' type (int32, or int64 for pcb_result.index64). */
template <typename I>
__global__ void grid_voxel_kernel(const float *xyz, int64_t n, int64_t batch, int64_t first,
                                  int64_t count, double3 cell, int select, uint64_t seed,
                                  const frame *frames, const uint64_t *keys,
                                  const int32_t *vals, const int32_t *number,
                                  const int32_t *start, I *index, int32_t *counts,
                                  float *mean, int32_t *big, int32_t *bigs)
{
    const int64_t g = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    const int64_t voxels = number[count - 1];
    if (g >= voxels)
        return;
    const int64_t s = start[g], e = g + 1 < voxels ? start[g + 1] : count;
    const int64_t local = (int64_t)(keys[s] >> VOXEL_BITS), c = first + local;
    const frame f = frames[c];
    if (!f.ok)
        return;
    const int64_t slot = g - (number[local * n] - 1);
    int32_t keep = vals[s];
    counts[c * n + slot] = (int32_t)(e - s);
    if (select == PCB_GRID_MEAN) { /* keeps the first; its mean in the contract's order */
        const float *p = xyz + c * n * 3;
        double sum[3] = {0, 0, 0};
        for (int64_t j = s; j < e; j++)
            for (int k = 0; k < 3; k++)
                sum[k] = __dadd_rn(sum[k], (double)p[3 * (int64_t)vals[j] + k]);
        pcb_grid_mean_put(sum, e - s, mean + 3 * (c * n + slot));
    } else if (select != PCB_BALL_FIRST && e - s > BIG) { /* a warp's (big_voxel_kernel) */
        big[atomicAdd(bigs, 1)] = (int32_t)g;
        return;
    }
    if (select == PCB_GRID_RANDOM) { /* the least draw (draws never tie) */
        uint64_t least = pcb_grid_draw(seed, keep);
        for (int64_t j = s + 1; j < e; j++) {
            const uint64_t d = pcb_grid_draw(seed, vals[j]);
            if (d < least)
                least = d, keep = vals[j];
        }
    } else if (select == PCB_BALL_NEAREST) {
        const double cells[3] = {cell.x, cell.y, cell.z};
        double v[3];
        pcb_grid_key_voxel(keys[s], f.low, v);
        const float *p = xyz + c * n * 3;
        double best = centre_d2(p + 3 * (int64_t)keep, v, f, cells);
        for (int64_t j = s + 1; j < e; j++) { /* increasing index: ties keep the first */
            const double d2 = centre_d2(p + 3 * (int64_t)vals[j], v, f, cells);
            if (d2 < best)
                best = d2, keep = vals[j];
        }
    }
    index[c * n + slot] = keep;
    (void)batch;
}

/* A warp a listed voxel (of more than BIG points): its lanes take its
 * points in turn, each keeping the least (distance, index) or draw, then a
 * reduction over the warp; the same point the voxel's thread would keep. */
template <typename I>
__global__ void __launch_bounds__(THREADS)
    big_voxel_kernel(const float *xyz, int64_t n, int64_t first, int64_t count, double3 cell,
                     int select, uint64_t seed, const frame *frames, const uint64_t *keys,
                     const int32_t *vals, const int32_t *number, const int32_t *start,
                     const int32_t *big, const int32_t *bigs, I *index)
{
    const int lane = threadIdx.x % 32;
    const int64_t warps = (int64_t)gridDim.x * (THREADS / 32);
    const int64_t voxels = number[count - 1], listed = *bigs;
    const double cells[3] = {cell.x, cell.y, cell.z};
    for (int64_t w = (int64_t)blockIdx.x * (THREADS / 32) + threadIdx.x / 32; w < listed;
         w += warps) {
        const int64_t g = big[w];
        const int64_t s = start[g], e = g + 1 < voxels ? start[g + 1] : count;
        const int64_t local = (int64_t)(keys[s] >> VOXEL_BITS), c = first + local;
        const frame f = frames[c];
        double v[3];
        pcb_grid_key_voxel(keys[s], f.low, v);
        const float *p = xyz + c * n * 3;
        uint64_t best = ~(uint64_t)0; /* a distance's bits (>= 0: ordered as values) or a draw */
        int32_t keep = INT32_MAX;
        for (int64_t j = s + lane; j < e; j += 32) { /* increasing index along a lane */
            const int32_t i = vals[j];
            const uint64_t at = select == PCB_GRID_RANDOM
                                    ? pcb_grid_draw(seed, i)
                                    : (uint64_t)__double_as_longlong(centre_d2(p + 3 * (int64_t)i,
                                                                               v, f, cells));
            if (at < best)
                best = at, keep = i;
        }
        for (int off = 16; off > 0; off /= 2) { /* the least (value, index) of the warp */
            const uint64_t ob = __shfl_down_sync(0xffffffffu, best, off);
            const int32_t ok = __shfl_down_sync(0xffffffffu, keep, off);
            if (ob < best || (ob == best && ok < keep))
                best = ob, keep = ok;
        }
        if (lane == 0)
            index[c * n + (g - (number[local * n] - 1))] = keep;
    }
}

/* A thread a sorted point: its voxel's row in the inverse map. */
template <typename I>
__global__ void grid_inverse_kernel(int64_t n, int64_t batch, int64_t first, int64_t count,
                                    const frame *frames, const uint64_t *keys,
                                    const int32_t *vals, const int32_t *number, I *index)
{
    const int64_t j = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    if (j >= count)
        return;
    const int64_t local = (int64_t)(keys[j] >> VOXEL_BITS), c = first + local;
    const int32_t slot = number[j] - number[local * n];
    index[batch * n + c * n + vals[j]] = frames[c].ok ? slot : -1;
}

static void grid_free(void *state)
{
    grid_scratch *s = (grid_scratch *)state;
    if (!s)
        return;
    cudaFree(s->bounds), cudaFree(s->keys[0]), cudaFree(s->keys[1]), cudaFree(s->vals[0]);
    cudaFree(s->vals[1]), cudaFree(s->head), cudaFree(s->number), cudaFree(s->start);
    cudaFree(s->big), cudaFree(s->bigs);
    cudaFree(s->frames), cudaFree(s->bad), cudaFree(s->temp);
    free(s);
}

static int grid_make(const pcb_task *t, void **state)
{
    grid_scratch *s = (grid_scratch *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "grid cuda_sort: out of memory");
    s->batch = t->batch, s->n = t->n;
    const int64_t chunk = (t->batch < (int64_t)MAX_CLOUDS ? t->batch : (int64_t)MAX_CLOUDS) * t->n;
    size_t sort_bytes = 0, scan_bytes = 0;
    cudaError_t e = cub::DeviceRadixSort::SortPairs(NULL, sort_bytes, (uint64_t *)NULL,
                                                    (uint64_t *)NULL, (int32_t *)NULL,
                                                    (int32_t *)NULL, chunk);
    if (e == cudaSuccess)
        e = cub::DeviceScan::InclusiveSum(NULL, scan_bytes, (int32_t *)NULL, (int32_t *)NULL,
                                          chunk);
    s->temp_bytes = sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
#define GRID_ALLOC(ptr, count)                                                                 \
    if (e == cudaSuccess)                                                                      \
        e = cudaMalloc((void **)&(ptr), (size_t)(count) * sizeof *(ptr));
    GRID_ALLOC(s->bounds, t->batch * 6)
    GRID_ALLOC(s->keys[0], chunk) GRID_ALLOC(s->keys[1], chunk)
    GRID_ALLOC(s->vals[0], chunk) GRID_ALLOC(s->vals[1], chunk)
    GRID_ALLOC(s->head, chunk) GRID_ALLOC(s->number, chunk) GRID_ALLOC(s->start, chunk)
    GRID_ALLOC(s->big, chunk / (BIG + 1) + 1) GRID_ALLOC(s->bigs, 1)
    GRID_ALLOC(s->frames, t->batch) GRID_ALLOC(s->bad, 1)
#undef GRID_ALLOC
    if (e == cudaSuccess)
        e = cudaMalloc(&s->temp, s->temp_bytes ? s->temp_bytes : 1);
    if (e != cudaSuccess) {
        grid_free(s);
        return pcb_cuda_fail(e, "grid cuda_sort: scratch", __FILE__, __LINE__);
    }
    *state = s;
    return PCB_OK;
}

static unsigned blocks_of(int64_t count)
{
    return (unsigned)((count + THREADS - 1) / THREADS);
}

/* The whole run on st: t->a and out's arrays on the device. */
static int grid_launch(void *state, const pcb_task *t, pcb_result *out, cudaStream_t st)
{
    grid_scratch *s = (grid_scratch *)state;
    const int64_t n = t->n, batch = t->batch;
    const double3 cell = make_double3(t->cell[0], t->cell[1], t->cell[2]);
    const double3 origin = make_double3(t->origin[0], t->origin[1], t->origin[2]);
    if (!out->count)
        return pcb_fail(PCB_EINVAL, "grid cuda_sort: the answer needs its count array");
    if (t->select == PCB_GRID_MEAN && !out->mean)
        return pcb_fail(PCB_EINVAL, "grid cuda_sort: select mean: the answer needs its mean array");
    PCB_CUDA_TRY(cudaMemsetAsync(s->bad, 0, sizeof *s->bad, st));
    if (t->select == PCB_GRID_MEAN)
        PCB_CUDA_TRY(cudaMemsetAsync(out->mean, 0, (size_t)(batch * n) * 3 * sizeof *out->mean, st));
    const int wide = out->index64 != NULL; /* int64 indices (PyTorch's), written as such */
    if (wide)
        PCB_CUDA_TRY(cudaMemsetAsync(out->index64, 0xff, (size_t)(batch * n) * 8, st));
    else
        PCB_CUDA_TRY(cudaMemsetAsync(out->index, 0xff, (size_t)(batch * n) * 4, st));
    PCB_CUDA_TRY(cudaMemsetAsync(out->count, 0, (size_t)(batch * n) * sizeof *out->count, st));
    int rc = pcb_grid_bounds(t->a, n, batch, NULL, s->bounds, out->finite, st);
    if (rc != PCB_OK)
        return rc;
    frame_kernel<<<blocks_of(batch), THREADS, 0, st>>>(s->bounds, batch, cell, origin,
                                                       t->origin_given, s->frames, s->bad,
                                                       out->finite);
    PCB_CUDA_LAUNCHED("frame_kernel");
    for (int64_t first = 0; first < batch; first += MAX_CLOUDS) {
        const int64_t clouds = batch - first < (int64_t)MAX_CLOUDS ? batch - first : (int64_t)MAX_CLOUDS;
        const int64_t count = clouds * n;
        const unsigned blocks = blocks_of(count);
        grid_key_kernel<<<blocks, THREADS, 0, st>>>(t->a, n, first, count, cell, s->frames,
                                                    s->keys[0], s->vals[0]);
        PCB_CUDA_LAUNCHED("grid_key_kernel");
        int end_bit = VOXEL_BITS; /* the clouds' numbers above the voxels */
        while ((int64_t)1 << (end_bit - VOXEL_BITS) < clouds)
            end_bit++;
        size_t bytes = s->temp_bytes;
        PCB_CUDA_TRY(cub::DeviceRadixSort::SortPairs(s->temp, bytes, s->keys[0], s->keys[1],
                                                     s->vals[0], s->vals[1], count, 0, end_bit,
                                                     st));
        grid_head_kernel<<<blocks, THREADS, 0, st>>>(s->keys[1], count, s->head);
        PCB_CUDA_LAUNCHED("grid_head_kernel");
        bytes = s->temp_bytes;
        PCB_CUDA_TRY(cub::DeviceScan::InclusiveSum(s->temp, bytes, s->head, s->number, count, st));
        grid_start_kernel<<<blocks, THREADS, 0, st>>>(s->head, s->number, count, s->start);
        PCB_CUDA_LAUNCHED("grid_start_kernel");
        /* nearest, random: big voxels a warp */
        const int walk = t->select == PCB_BALL_NEAREST || t->select == PCB_GRID_RANDOM;
        if (walk)
            PCB_CUDA_TRY(cudaMemsetAsync(s->bigs, 0, sizeof *s->bigs, st));
#define GRID_ROWS(I, index)                                                                     \
    grid_voxel_kernel<I><<<blocks, THREADS, 0, st>>>(                                           \
        t->a, n, batch, first, count, cell, t->select, t->seed, s->frames,                      \
        s->keys[1], s->vals[1], s->number, s->start, index, out->count, out->mean, s->big,      \
        s->bigs);                                                                               \
    PCB_CUDA_LAUNCHED("grid_voxel_kernel");                                                     \
    if (walk) {                                                                                 \
        big_voxel_kernel<I><<<BIG_BLOCKS, THREADS, 0, st>>>(                                    \
            t->a, n, first, count, cell, t->select, t->seed, s->frames, s->keys[1],             \
            s->vals[1], s->number, s->start, s->big, s->bigs, index);                           \
        PCB_CUDA_LAUNCHED("big_voxel_kernel");                                                  \
    }                                                                                           \
    grid_inverse_kernel<I><<<blocks, THREADS, 0, st>>>(n, batch, first, count, s->frames,       \
                                                       s->keys[1], s->vals[1], s->number, index)
        if (wide) {
            GRID_ROWS(int64_t, out->index64);
        } else {
            GRID_ROWS(int32_t, out->index);
        }
#undef GRID_ROWS
        PCB_CUDA_LAUNCHED("grid_inverse_kernel");
    }
    return PCB_OK;
}

static const pcb_cuda_maker grid_maker = {&pcb_grid_cuda_sort, grid_make, grid_free, grid_launch};

/* ---- host runs: the clouds uploaded, the answer fetched ------------------ */
typedef struct {
    pcb_task task;
    pcb_cuda_ctx ctx;
    float *xyz;
    int32_t *index, *count;
    float *mean; /* MEAN */
    void *scratch;
    int slot; /* the scratch's cache slot; -1: not kept (freed here) */
} host_state;

static void host_release(void *state)
{
    host_state *s = (host_state *)state;
    if (!s)
        return;
    if (s->scratch && s->slot >= 0)
        (void)pcb_cuda_cache_give(s->slot, s->ctx.stream);
    pcb_cuda_ctx_free(&s->ctx); /* waits for queued work first */
    if (s->slot < 0)
        grid_free(s->scratch);
    cudaFree(s->xyz), cudaFree(s->index), cudaFree(s->count), cudaFree(s->mean);
    free(s);
}

static int host_prepare(const pcb_task *t, void **state)
{
    if (t->lengths_a)
        return pcb_fail(PCB_EUNSUPPORTED, "grid cuda_sort: a ragged batch runs cloud by cloud");
    host_state *s = (host_state *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "grid cuda_sort: out of memory");
    s->task = *t, s->slot = -1;
    const size_t points = (size_t)(t->batch * t->n);
    int rc = pcb_cuda_ctx_init(&s->ctx);
    cudaError_t e = cudaSuccess;
    if (rc == PCB_OK) {
        e = cudaMalloc((void **)&s->xyz, points * 3 * sizeof *s->xyz);
        if (e == cudaSuccess)
            e = cudaMalloc((void **)&s->index, 2 * points * sizeof *s->index);
        if (e == cudaSuccess)
            e = cudaMalloc((void **)&s->count, points * sizeof *s->count);
        if (e == cudaSuccess && t->select == PCB_GRID_MEAN)
            e = cudaMalloc((void **)&s->mean, 3 * points * sizeof *s->mean);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(s->xyz, t->a, points * 3 * sizeof *s->xyz,
                                cudaMemcpyHostToDevice, s->ctx.stream);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(s->ctx.stream);
        rc = e == cudaSuccess ? PCB_OK : pcb_cuda_fail(e, "grid cuda_sort: upload", __FILE__,
                                                       __LINE__);
    }
    if (rc == PCB_OK) {
        pcb_task shape = *t;
        shape.stream = s->ctx.stream;
        rc = pcb_cuda_cache_take(&grid_maker, &shape, &s->scratch, &s->slot);
    }
    if (rc != PCB_OK) {
        host_release(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static int host_compute(void *state)
{
    host_state *s = (host_state *)state;
    pcb_task t = s->task;
    t.a = s->xyz, t.memory = PCB_MEM_DEVICE, t.stream = s->ctx.stream;
    pcb_result out = {};
    out.index = s->index, out.count = s->count, out.mean = s->mean;
    int rc = pcb_cuda_begin(&s->ctx);
    if (rc == PCB_OK)
        rc = grid_launch(s->scratch, &t, &out, s->ctx.stream);
    return rc == PCB_OK ? pcb_cuda_end(&s->ctx) : rc;
}

static int host_sync(void *state)
{
    return pcb_cuda_sync(&((host_state *)state)->ctx);
}

static int host_fetch(void *state, pcb_result *out)
{
    host_state *s = (host_state *)state;
    return grid_host_fetch("grid cuda_sort", ((grid_scratch *)s->scratch)->bad, s->index,
                           s->count, s->mean, (size_t)(s->task.batch * s->task.n), out);
}

static int host_device_ms(void *state, double *ms)
{
    return pcb_cuda_elapsed_ms(&((host_state *)state)->ctx, ms);
}

static int grid_run_device(const pcb_task *t, pcb_result *out)
{
    if (t->lengths_a)
        return pcb_fail(PCB_EUNSUPPORTED, "grid cuda_sort: no ragged batch on the device yet");
    return pcb_cuda_run_cached(&grid_maker, t, out);
}

extern "C" const pcb_impl pcb_grid_cuda_sort = {
    .name = "cuda_sort",
    .problem = PCB_GRID,
    .device = PCB_CUDA,
    .promise = {.exact = 1},
    .cost = PCB_COST_INDEXED,
    .summary = "a radix sort of the voxel keys of up to 128 clouds at once (CUB), the voxels "
               "read off the sorted keys",
    .available = pcb_cuda_available,
    .prepare = host_prepare,
    .compute = host_compute,
    .sync = host_sync,
    .fetch = host_fetch,
    .release = host_release,
    .device_ms = host_device_ms,
    .run_device = grid_run_device,
    .index64 = 1,
};
