/* serialize_cuda_sort.cu - serialization by one radix sort of the whole
 * batch: each cloud's bounds (many blocks a cloud, grid_bounds.cuh), then
 * one block settles the clouds' origins and the batch's depth on the device
 * (no host wait), a thread a point writes its code (its cloud's number
 * above its voxel's curve index) and its sort key, CUB's DeviceRadixSort
 * sorts (key, index) pairs (stable: equal codes in increasing index), and
 * a thread a sorted place writes the order and the inverse. A cloud's n
 * slots sort together (its number is the key's top bits), so cloud c's
 * order is sorted places c n .. c n + n - 1: a ragged cloud's slots past
 * its length get the largest code of the cloud and, being the highest
 * indices, sort last. Five launches and the sort; device runs are queued
 * whole, ragged lengths read on the device. The sort covers the bits the
 * codes use where the task gives the depth, else all 63 (the depth is only
 * known on the device). */
#include <cub/cub.cuh>

#include "impl/cuda_util.h"
#include "impl/grid/grid_bounds.cuh"
#include "serialize.h"

extern "C" const pcb_impl pcb_serialize_cuda_sort;

enum { THREADS = 256, FRAME_THREADS = 256 };

struct double_max {
    __device__ double operator()(double a, double b) const { return fmax(a, b); }
};

typedef struct {
    int64_t batch, n;
    int32_t *bounds;   /* batch x 6: each cloud's extremes, ordered ints */
    double *origin;    /* batch x 3 */
    int32_t *frame;    /* the depth, then 1 when the batch does not fit it */
    uint64_t *keys[2]; /* the sort's keys, before and after */
    int32_t *vals[2];  /* their point indices */
    void *temp;
    size_t temp_bytes;
} ser_scratch;

/* One block: each cloud's origin, the batch's highest voxel coordinate,
 * the depth (the task's, or the least that holds it), and whether it fits:
 * no coordinate below 0 or past the depth, 3 depth + the clouds' bits <= 63. */
__global__ void __launch_bounds__(FRAME_THREADS)
    ser_frame_kernel(const int32_t *bounds, int64_t batch, double3 cell, double3 origin,
                     int origin_given, int given_depth, double *origins, int32_t *frame,
                     int32_t *finite)
{
    typedef cub::BlockReduce<double, FRAME_THREADS> reduce;
    __shared__ typename reduce::TempStorage store;
    const double cells[3] = {cell.x, cell.y, cell.z}, given[3] = {origin.x, origin.y, origin.z};
    double top = 0;
    int below = 0;
    for (int64_t c = threadIdx.x; c < batch; c += FRAME_THREADS)
        for (int k = 0; k < 3; k++) {
            const int32_t lo_bits = bounds[c * 6 + k];
            const bool empty = lo_bits == INT32_MAX && bounds[c * 6 + 3 + k] == INT32_MIN;
            const float lo = empty ? 0.0f : unordered(lo_bits);
            const float hi = empty ? 0.0f : unordered(bounds[c * 6 + 3 + k]);
            const double o = origin_given ? given[k] : (double)lo;
            origins[c * 3 + k] = o;
            if (empty)
                continue;
            below |= voxel_coord(lo, o, cells[k]) < 0;
            top = fmax(top, voxel_coord(hi, o, cells[k]));
        }
    top = reduce(store).Reduce(top, double_max());
    below = __syncthreads_or(below);
    if (threadIdx.x == 0) {
        int depth = given_depth;
        if (!depth)
            for (depth = 1; depth < PCB_CURVE_MAX_DEPTH && !(top < (double)(1ll << depth)); depth++)
                ;
        const int bad = below || !(top < (double)(1ll << depth)) ||
                        3 * depth + pcb_curve_bits((uint64_t)(batch - 1)) > 63;
        frame[0] = bad ? 1 : depth;
        frame[1] = bad;
        if (bad && finite)
            *finite = 0;
    }
}

/* A thread a slot of the batch: its code (-1 past a ragged cloud's length,
 * or everywhere when the batch does not fit) and its sort key and index. */
__global__ void ser_code_kernel(const float *xyz, int64_t n, int64_t count, double3 cell,
                                int curve, const int64_t *lengths, const double *origins,
                                const int32_t *frame, int64_t *code, uint64_t *keys,
                                int32_t *vals)
{
    const int64_t g = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    if (g >= count)
        return;
    const int64_t c = g / n, i = g - c * n;
    const int depth = frame[0], bad = frame[1];
    const uint64_t cloud = (uint64_t)c << (3 * depth);
    uint64_t key = cloud | (((uint64_t)1 << (3 * depth)) - 1); /* padding: the cloud's last */
    int64_t mine = -1;
    if (!bad && i < (lengths ? lengths[c] : n)) {
        const float *p = xyz + g * 3;
        const double cells[3] = {cell.x, cell.y, cell.z};
        uint32_t v[3];
        for (int k = 0; k < 3; k++)
            v[k] = (uint32_t)voxel_coord(coord_of(p + k), origins[c * 3 + k], cells[k]);
        key = cloud | pcb_curve_index(curve, depth, v[0], v[1], v[2]);
        mine = (int64_t)key;
    }
    code[g] = mine;
    keys[g] = key;
    vals[g] = (int32_t)i;
}

/* A thread a sorted place: the order and its inverse; I the indices' type
 * (int32, or int64 for pcb_result.index64). */
template <typename I>
__global__ void ser_order_kernel(int64_t n, int64_t batch, const int64_t *lengths,
                                 const int32_t *frame, const int32_t *vals, I *index)
{
    const int64_t g = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    if (g >= batch * n)
        return;
    const int64_t c = g / n, j = g - c * n, i = vals[g];
    const bool real = !frame[1] && i < (lengths ? lengths[c] : n);
    index[g] = real ? (I)i : (I)-1;
    index[batch * n + c * n + i] = real ? (I)j : (I)-1;
}

static void ser_free(void *state)
{
    ser_scratch *s = (ser_scratch *)state;
    if (!s)
        return;
    cudaFree(s->bounds), cudaFree(s->origin), cudaFree(s->frame), cudaFree(s->keys[0]);
    cudaFree(s->keys[1]), cudaFree(s->vals[0]), cudaFree(s->vals[1]), cudaFree(s->temp);
    free(s);
}

static int ser_make(const pcb_task *t, void **state)
{
    const int64_t count = t->batch * t->n;
    if (count > INT32_MAX)
        return pcb_fail(PCB_EUNSUPPORTED, "serialize cuda_sort: %lld points a batch, at most "
                        "%d", (long long)count, INT32_MAX);
    ser_scratch *s = (ser_scratch *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "serialize cuda_sort: out of memory");
    s->batch = t->batch, s->n = t->n;
    cudaError_t e = cub::DeviceRadixSort::SortPairs(NULL, s->temp_bytes, (uint64_t *)NULL,
                                                    (uint64_t *)NULL, (int32_t *)NULL,
                                                    (int32_t *)NULL, (int)count);
#define SER_ALLOC(ptr, count)                                                                  \
    if (e == cudaSuccess)                                                                      \
        e = cudaMalloc((void **)&(ptr), (size_t)(count) * sizeof *(ptr));
    SER_ALLOC(s->bounds, t->batch * 6) SER_ALLOC(s->origin, t->batch * 3)
    SER_ALLOC(s->frame, 2)
    SER_ALLOC(s->keys[0], count) SER_ALLOC(s->keys[1], count)
    SER_ALLOC(s->vals[0], count) SER_ALLOC(s->vals[1], count)
#undef SER_ALLOC
    if (e == cudaSuccess)
        e = cudaMalloc(&s->temp, s->temp_bytes ? s->temp_bytes : 1);
    if (e != cudaSuccess) {
        ser_free(s);
        return pcb_cuda_fail(e, "serialize cuda_sort: scratch", __FILE__, __LINE__);
    }
    *state = s;
    return PCB_OK;
}

static unsigned blocks_of(int64_t count)
{
    return (unsigned)((count + THREADS - 1) / THREADS);
}

/* The whole run on st: t->a, t->lengths_a and out's arrays on the device. */
static int ser_launch(void *state, const pcb_task *t, pcb_result *out, cudaStream_t st)
{
    ser_scratch *s = (ser_scratch *)state;
    const int64_t n = t->n, batch = t->batch, count = batch * n;
    const int64_t *lengths = t->lengths_a;
    const double3 cell = make_double3(t->cell[0], t->cell[1], t->cell[2]);
    const double3 origin = make_double3(t->origin[0], t->origin[1], t->origin[2]);
    if (!out->code)
        return pcb_fail(PCB_EINVAL, "serialize cuda_sort: the answer needs its code array");
    int rc = pcb_grid_bounds(t->a, n, batch, lengths, s->bounds, out->finite, st);
    if (rc != PCB_OK)
        return rc;
    ser_frame_kernel<<<1, FRAME_THREADS, 0, st>>>(s->bounds, batch, cell, origin,
                                                  t->origin_given, t->depth, s->origin,
                                                  s->frame, out->finite);
    PCB_CUDA_LAUNCHED("ser_frame_kernel");
    ser_code_kernel<<<blocks_of(count), THREADS, 0, st>>>(t->a, n, count, cell, t->curve,
                                                          lengths, s->origin, s->frame,
                                                          out->code, s->keys[0], s->vals[0]);
    PCB_CUDA_LAUNCHED("ser_code_kernel");
    /* the bits the keys use: the codes' and the clouds' numbers above them */
    const int end_bit = t->depth ? 3 * t->depth + pcb_curve_bits((uint64_t)(batch - 1)) : 63;
    size_t bytes = s->temp_bytes;
    PCB_CUDA_TRY(cub::DeviceRadixSort::SortPairs(s->temp, bytes, s->keys[0], s->keys[1],
                                                 s->vals[0], s->vals[1], (int)count, 0,
                                                 end_bit > 0 ? end_bit : 1, st));
    if (out->index64)
        ser_order_kernel<int64_t><<<blocks_of(count), THREADS, 0, st>>>(
            n, batch, lengths, s->frame, s->vals[1], out->index64);
    else
        ser_order_kernel<int32_t><<<blocks_of(count), THREADS, 0, st>>>(
            n, batch, lengths, s->frame, s->vals[1], out->index);
    PCB_CUDA_LAUNCHED("ser_order_kernel");
    return PCB_OK;
}

static const pcb_cuda_maker ser_maker = {&pcb_serialize_cuda_sort, ser_make, ser_free,
                                         ser_launch};

/* ---- host runs: the clouds (and lengths) uploaded, the answer fetched ---- */
typedef struct {
    pcb_task task;
    pcb_cuda_ctx ctx;
    float *xyz;
    int64_t *lengths;
    int32_t *index;
    int64_t *code;
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
        ser_free(s->scratch);
    cudaFree(s->xyz), cudaFree(s->lengths), cudaFree(s->index), cudaFree(s->code);
    free(s);
}

static int host_prepare(const pcb_task *t, void **state)
{
    host_state *s = (host_state *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "serialize cuda_sort: out of memory");
    s->task = *t, s->slot = -1;
    const size_t points = (size_t)(t->batch * t->n);
    int rc = pcb_cuda_ctx_init(&s->ctx);
    cudaError_t e = cudaSuccess;
    if (rc == PCB_OK) {
        e = cudaMalloc((void **)&s->xyz, points * 3 * sizeof *s->xyz);
        if (e == cudaSuccess)
            e = cudaMalloc((void **)&s->index, 2 * points * sizeof *s->index);
        if (e == cudaSuccess)
            e = cudaMalloc((void **)&s->code, points * sizeof *s->code);
        if (e == cudaSuccess && t->lengths_a)
            e = cudaMalloc((void **)&s->lengths, (size_t)t->batch * sizeof *s->lengths);
        if (e == cudaSuccess && t->lengths_a)
            e = cudaMemcpyAsync(s->lengths, t->lengths_a, (size_t)t->batch * sizeof *s->lengths,
                                cudaMemcpyHostToDevice, s->ctx.stream);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(s->xyz, t->a, points * 3 * sizeof *s->xyz,
                                cudaMemcpyHostToDevice, s->ctx.stream);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(s->ctx.stream);
        rc = e == cudaSuccess ? PCB_OK : pcb_cuda_fail(e, "serialize cuda_sort: upload",
                                                       __FILE__, __LINE__);
    }
    if (rc == PCB_OK) {
        pcb_task shape = *t;
        shape.stream = s->ctx.stream;
        rc = pcb_cuda_cache_take(&ser_maker, &shape, &s->scratch, &s->slot);
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
    t.a = s->xyz, t.lengths_a = s->lengths, t.memory = PCB_MEM_DEVICE, t.stream = s->ctx.stream;
    pcb_result out = {};
    out.index = s->index, out.code = s->code;
    int rc = pcb_cuda_begin(&s->ctx);
    if (rc == PCB_OK)
        rc = ser_launch(s->scratch, &t, &out, s->ctx.stream);
    return rc == PCB_OK ? pcb_cuda_end(&s->ctx) : rc;
}

static int host_sync(void *state)
{
    return pcb_cuda_sync(&((host_state *)state)->ctx);
}

static int host_fetch(void *state, pcb_result *out)
{
    host_state *s = (host_state *)state;
    const size_t points = (size_t)(s->task.batch * s->task.n);
    int32_t frame[2] = {0, 0};
    if (!out->code)
        return pcb_fail(PCB_EINVAL, "serialize cuda_sort: the answer needs its code array");
    PCB_CUDA_TRY(cudaMemcpy(frame, ((ser_scratch *)s->scratch)->frame, sizeof frame,
                            cudaMemcpyDeviceToHost));
    if (frame[1]) /* the host check says why first; this is its echo */
        return pcb_fail(PCB_EINVAL, "serialize cuda_sort: a voxel coordinate outside the "
                        "depth's cube, or codes past 63 bits");
    PCB_CUDA_TRY(cudaMemcpy(out->index, s->index, 2 * points * sizeof *out->index,
                            cudaMemcpyDeviceToHost));
    PCB_CUDA_TRY(cudaMemcpy(out->code, s->code, points * sizeof *out->code,
                            cudaMemcpyDeviceToHost));
    return PCB_OK;
}

static int host_device_ms(void *state, double *ms)
{
    return pcb_cuda_elapsed_ms(&((host_state *)state)->ctx, ms);
}

static int ser_run_device(const pcb_task *t, pcb_result *out)
{
    return pcb_cuda_run_cached(&ser_maker, t, out);
}

extern "C" const pcb_impl pcb_serialize_cuda_sort = {
    .name = "cuda_sort",
    .problem = PCB_SERIALIZE,
    .device = PCB_CUDA,
    .promise = {.exact = 1},
    .cost = PCB_COST_INDEXED,
    .summary = "one radix sort of the whole batch's codes (CUB), the depth settled on the "
               "device",
    .available = pcb_cuda_available,
    .prepare = host_prepare,
    .compute = host_compute,
    .sync = host_sync,
    .fetch = host_fetch,
    .release = host_release,
    .device_ms = host_device_ms,
    .run_device = ser_run_device,
    .ragged = 1,
    .index64 = 1,
};
