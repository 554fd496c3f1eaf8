/* fps/cuda_unrolled.cuh - the classic FPS kernel and its life cycle (see
 * fps_cuda_unrolled.cu), shared by the registered implementation and by the
 * planted defect torn_argmax of the verification catalog
 * (bench/verify/defect_torn_argmax.cu), which flips its argmax to a racing
 * one. Each includer defines its prepare by prepare_kind. */
#pragma once

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "cuda_util.h"

#define FPS_INIT_D2 1e10f         /* the classic stand-in for infinity */
#define FPS_MAX_DIAG2 1e10        /* squared extent the stand-in still bounds */
#define FPS_MAX_BLOCK 1024

/* The classic update: slot a keeps the larger of slots a and b, ties to a. */
__device__ __forceinline__ void keep_farther(float *dist, int *arg, int a, int b)
{
    const float va = dist[a], vb = dist[b];
    const int ia = arg[a], ib = arg[b];
    dist[a] = fmaxf(va, vb);
    arg[a] = vb > va ? ib : ia;
}

/* One level of the tree: compiled away when the block is too small for it. */
template <unsigned BLOCK, unsigned HALF>
__device__ __forceinline__ void reduce_level(float *dist, int *arg, int tid)
{
    if (BLOCK >= 2 * HALF) {
        if (tid < (int)HALF)
            keep_farther(dist, arg, tid, tid + HALF);
        __syncthreads();
    }
}

/* n <= INT32_MAX / 3 (checked in prepare), so k * 3 fits an int; the
 * per-cloud offsets are 64-bit. */
/* TORN: the planted defect torn_argmax (bench/verify/defects.c) instead of
 * the tree: every thread compares its candidate with one shared (distance,
 * index) pair and stores its own when larger, with no atomic and no lock.
 * Threads that read the pair at once all store; distance and index are two
 * stores, so the pair kept can come from two threads and the maximum can be
 * lost to a smaller candidate stored last. */
template <unsigned BLOCK, bool TORN>
__global__ void __launch_bounds__(BLOCK)
    fps_unrolled_kernel(int n, int m, int start, const float *__restrict__ clouds,
                        float *__restrict__ temp, int *__restrict__ idxs)
{
    /* Two buffers, alternating by step: a fast thread may write step j + 1's
     * candidate while a slow one still reads step j's winner from slot 0. */
    __shared__ float dist[2][BLOCK];
    __shared__ int arg[2][BLOCK];
    const int64_t cloud = blockIdx.x;
    const float *xyz = clouds + cloud * n * 3;
    float *mind = temp + cloud * n;
    int *out = idxs + cloud * m;
    const int tid = threadIdx.x;

    int old = start;
    if (tid == 0)
        out[0] = old;
    if (TORN) { /* step 1's pair starts empty */
        if (tid == 0)
            dist[1][0] = -1.0f;
        __syncthreads();
    }
    for (int j = 1; j < m; j++) {
        const float x1 = xyz[old * 3 + 0], y1 = xyz[old * 3 + 1], z1 = xyz[old * 3 + 2];
        float best = -1.0f;
        int besti = 0;
        for (int k = tid; k < n; k += BLOCK) {
            const float dx = xyz[k * 3 + 0] - x1, dy = xyz[k * 3 + 1] - y1,
                        dz = xyz[k * 3 + 2] - z1;
            const float dk = fminf(dx * dx + dy * dy + dz * dz, mind[k]);
            mind[k] = dk;
            besti = dk > best ? k : besti;
            best = dk > best ? dk : best;
        }
        float *d = dist[j & 1];
        int *a = arg[j & 1];
        if (TORN) {
            if (best > d[0]) {
                d[0] = best;
                a[0] = besti;
            }
            if (tid == 0) /* nobody reads the next step's pair before this step's barrier */
                dist[(j + 1) & 1][0] = -1.0f;
            __syncthreads();
            old = a[0];
            if (tid == 0)
                out[j] = old;
            continue;
        }
        d[tid] = best;
        a[tid] = besti;
        __syncthreads();
        reduce_level<BLOCK, 512>(d, a, tid);
        reduce_level<BLOCK, 256>(d, a, tid);
        reduce_level<BLOCK, 128>(d, a, tid);
        reduce_level<BLOCK, 64>(d, a, tid);
        reduce_level<BLOCK, 32>(d, a, tid);
        reduce_level<BLOCK, 16>(d, a, tid);
        reduce_level<BLOCK, 8>(d, a, tid);
        reduce_level<BLOCK, 4>(d, a, tid);
        reduce_level<BLOCK, 2>(d, a, tid);
        reduce_level<BLOCK, 1>(d, a, tid);
        old = a[0];
        if (tid == 0)
            out[j] = old;
    }
}

static __global__ void fill_kernel(float *p, int64_t count, float value)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += step)
        p[i] = value;
}

typedef struct {
    pcb_task task;
    pcb_cuda_ctx ctx;
    int block;
    bool torn; /* the planted defect torn_argmax */
    float *xyz, *temp;
    int *idx;
} unrolled_state;

/* The largest power of two <= n, at most FPS_MAX_BLOCK. */
static int block_for(int64_t n)
{
    int b = 1;
    while (b < FPS_MAX_BLOCK && 2 * (int64_t)b <= n)
        b *= 2;
    return b;
}

/* Squared bounding-box diagonal of the widest cloud, in double. */
static double widest_diag2(const pcb_task *t, int64_t *which)
{
    double worst = 0;
    for (int64_t b = 0; b < t->batch; b++) {
        const float *p = t->a + b * t->n * 3;
        double lo[3], hi[3];
        for (int c = 0; c < 3; c++)
            lo[c] = hi[c] = p[c];
        for (int64_t k = 1; k < t->n; k++)
            for (int c = 0; c < 3; c++) {
                lo[c] = fmin(lo[c], p[3 * k + c]);
                hi[c] = fmax(hi[c], p[3 * k + c]);
            }
        double d2 = 0;
        for (int c = 0; c < 3; c++)
            d2 += (hi[c] - lo[c]) * (hi[c] - lo[c]);
        if (d2 > worst) {
            worst = d2;
            *which = b;
        }
    }
    return worst;
}

static void unrolled_release(void *state)
{
    unrolled_state *s = (unrolled_state *)state;
    if (!s)
        return;
    pcb_cuda_ctx_free(&s->ctx); /* waits for queued work first */
    cudaFree(s->xyz);
    cudaFree(s->temp);
    cudaFree(s->idx);
    free(s);
}

static int setup(unrolled_state *s)
{
    const pcb_task *t = &s->task;
    const size_t points = (size_t)t->batch * (size_t)t->n;
    int rc = pcb_cuda_ctx_init(&s->ctx);
    if (rc != PCB_OK)
        return rc;
    PCB_CUDA_TRY(cudaMalloc((void **)&s->xyz, points * 3 * sizeof(float)));
    PCB_CUDA_TRY(cudaMalloc((void **)&s->temp, points * sizeof(float)));
    PCB_CUDA_TRY(cudaMalloc((void **)&s->idx, (size_t)t->batch * (size_t)t->m * sizeof(int)));
    PCB_CUDA_TRY(cudaMemcpyAsync(s->xyz, t->a, points * 3 * sizeof(float),
                                 cudaMemcpyHostToDevice, s->ctx.stream));
    return pcb_cuda_sync(&s->ctx);
}

static int prepare_kind(const pcb_task *t, void **state, bool torn)
{
    if (t->n > INT32_MAX / 3)
        return pcb_fail(PCB_EUNSUPPORTED,
                        "fps cuda_unrolled: %lld points exceed its int offset limit of %d",
                        (long long)t->n, INT32_MAX / 3);
    if (t->batch > INT32_MAX)
        return pcb_fail(PCB_EUNSUPPORTED, "fps cuda_unrolled: batch %lld exceeds the grid limit",
                        (long long)t->batch);
    int64_t wide = 0;
    double diag2 = widest_diag2(t, &wide);
    if (diag2 > FPS_MAX_DIAG2)
        return pcb_fail(PCB_EUNSUPPORTED,
                        "fps cuda_unrolled: cloud %lld spans %.3g units (bounding-box "
                        "diagonal), beyond the 1e5 its 1e10 distance initialisation allows",
                        (long long)wide, sqrt(diag2));
    unrolled_state *s = (unrolled_state *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "fps cuda_unrolled: out of memory");
    s->task = *t;
    s->block = block_for(t->n);
    s->torn = torn;
    int rc = setup(s);
    if (rc != PCB_OK) {
        unrolled_release(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

template <unsigned BLOCK>
static void launch(const unrolled_state *s)
{
    const pcb_task *t = &s->task;
    if (s->torn)
        fps_unrolled_kernel<BLOCK, true><<<(unsigned)t->batch, BLOCK, 0, s->ctx.stream>>>(
            (int)t->n, (int)t->m, (int)t->start, s->xyz, s->temp, s->idx);
    else
        fps_unrolled_kernel<BLOCK, false><<<(unsigned)t->batch, BLOCK, 0, s->ctx.stream>>>(
            (int)t->n, (int)t->m, (int)t->start, s->xyz, s->temp, s->idx);
}

static int unrolled_compute(void *state)
{
    unrolled_state *s = (unrolled_state *)state;
    const pcb_task *t = &s->task;
    const int64_t count = t->batch * t->n;
    const int64_t fill_blocks = (count + 255) / 256 < 4096 ? (count + 255) / 256 : 4096;
    int rc = pcb_cuda_begin(&s->ctx);
    if (rc != PCB_OK)
        return rc;
    /* The running minima start over at every compute, so repeated calls
     * give the same answer (a byte-wise memset cannot write 1e10). */
    fill_kernel<<<(unsigned)fill_blocks, 256, 0, s->ctx.stream>>>(s->temp, count, FPS_INIT_D2);
    PCB_CUDA_LAUNCHED("fill_kernel");
    switch (s->block) {
    case 1024: launch<1024>(s); break;
    case 512: launch<512>(s); break;
    case 256: launch<256>(s); break;
    case 128: launch<128>(s); break;
    case 64: launch<64>(s); break;
    case 32: launch<32>(s); break;
    case 16: launch<16>(s); break;
    case 8: launch<8>(s); break;
    case 4: launch<4>(s); break;
    case 2: launch<2>(s); break;
    default: launch<1>(s); break;
    }
    PCB_CUDA_LAUNCHED("fps_unrolled_kernel");
    return pcb_cuda_end(&s->ctx);
}

static int unrolled_sync(void *state)
{
    return pcb_cuda_sync(&((unrolled_state *)state)->ctx);
}

static int unrolled_fetch(void *state, pcb_result *out)
{
    unrolled_state *s = (unrolled_state *)state;
    const size_t bytes = (size_t)s->task.batch * (size_t)s->task.m * sizeof(int32_t);
    PCB_CUDA_TRY(cudaMemcpyAsync(out->index, s->idx, bytes, cudaMemcpyDeviceToHost,
                                 s->ctx.stream));
    return pcb_cuda_sync(&s->ctx);
}

static int unrolled_counters(void *state, pcb_counters *c)
{
    const pcb_task *t = &((unrolled_state *)state)->task;
    c->distance_evals = t->batch * t->n * (t->m - 1);
    c->iterations = t->batch * (t->m - 1);
    return PCB_OK;
}

static int unrolled_device_ms(void *state, double *ms)
{
    return pcb_cuda_elapsed_ms(&((unrolled_state *)state)->ctx, ms);
}

/* The table entry's fields, the same for the registered kernel and for the
 * planted defect but for its name, summary and prepare. */
#define PCB_UNROLLED_ENTRY(entry_name, entry_summary, entry_prepare)                            \
    .name = entry_name, .problem = PCB_FPS, .device = PCB_CUDA,                                 \
    .promise = {.exact = 1, .max_gap = 0, .canonical = 0,                                       \
                .known_defect = "the classic kernel takes a chosen point again once every "     \
                                "remaining point duplicates one (PyTorch3D #1486)"},           \
    .limits = {.max_n = INT32_MAX / 3, .max_m = 0, .max_batch = INT32_MAX, .max_k = 0,         \
               .best_max_n = 0},                                                                \
    .cost = PCB_COST_SAMPLES, .reference = 0, .gap_option = 0, .summary = entry_summary,        \
    .available = pcb_cuda_available, .prepare = entry_prepare, .compute = unrolled_compute,    \
    .sync = unrolled_sync, .fetch = unrolled_fetch, .release = unrolled_release,               \
    .counters = unrolled_counters, .device_ms = unrolled_device_ms,                            \
    .run_device = NULL /* host arrays only */, .device_index = NULL, .ragged = 0,              \
    .warm_start = 0, .index64 = 0
