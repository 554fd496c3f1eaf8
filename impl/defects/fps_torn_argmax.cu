/* fps_torn_argmax.cu - a planted defect (defects.c): the classic FPS kernel
 * whose block-wide argmax is an unguarded compare-and-store into one shared
 * (distance, index) pair. Threads that read the pair at the same time all
 * store theirs; the distance and the index are two stores, so the pair kept
 * can come from two threads (torn), and the maximum can be lost to a
 * smaller candidate stored last. Nothing else differs from a correct kernel:
 * the running minima, the distance and the sample broadcast are right. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "../cuda_util.h"

#define TORN_BLOCK 512

__global__ void __launch_bounds__(TORN_BLOCK)
    fps_torn_kernel(int n, int m, int start, const float *__restrict__ clouds,
                    float *__restrict__ mind_all, int *__restrict__ idxs)
{
    /* One pair per step parity: step j fills pair j & 1 while pair
     * (j + 1) & 1 is reset for the next step. */
    __shared__ float pair_d[2];
    __shared__ int pair_i[2];
    const int64_t cloud = blockIdx.x;
    const float *xyz = clouds + cloud * n * 3;
    float *mind = mind_all + cloud * n;
    int *out = idxs + cloud * m;
    const int tid = threadIdx.x;
    for (int k = tid; k < n; k += blockDim.x)
        mind[k] = INFINITY;
    if (tid == 0) {
        out[0] = start;
        pair_d[1] = -1.0f;
    }
    __syncthreads();
    int old = start;
    for (int j = 1; j < m; j++) {
        const int p = j & 1;
        const float x = xyz[old * 3], y = xyz[old * 3 + 1], z = xyz[old * 3 + 2];
        float best = -1.0f;
        int besti = 0;
        for (int k = tid; k < n; k += blockDim.x) {
            const float dx = xyz[k * 3] - x, dy = xyz[k * 3 + 1] - y, dz = xyz[k * 3 + 2] - z;
            const float d = fminf(__fadd_rn(__fadd_rn(__fmul_rn(dx, dx), __fmul_rn(dy, dy)),
                                            __fmul_rn(dz, dz)),
                                  mind[k]);
            mind[k] = d;
            if (d > best)
                best = d, besti = k;
        }
        /* The defect: read, compare and store with no atomic and no lock. */
        if (best > pair_d[p]) {
            pair_d[p] = best;
            pair_i[p] = besti;
        }
        if (tid == 0)
            pair_d[p ^ 1] = -1.0f;
        __syncthreads();
        old = pair_i[p];
        if (tid == 0)
            out[j] = old;
    }
}

typedef struct {
    pcb_task task;
    pcb_cuda_ctx ctx;
    float *xyz, *mind;
    int *idx;
} torn_state;

static void torn_release(void *state)
{
    torn_state *s = (torn_state *)state;
    if (!s)
        return;
    pcb_cuda_ctx_free(&s->ctx);
    cudaFree(s->xyz);
    cudaFree(s->mind);
    cudaFree(s->idx);
    free(s);
}

static int torn_setup(torn_state *s)
{
    const pcb_task *t = &s->task;
    const size_t points = (size_t)t->batch * (size_t)t->n;
    int rc = pcb_cuda_ctx_init(&s->ctx);
    if (rc != PCB_OK)
        return rc;
    PCB_CUDA_TRY(cudaMalloc((void **)&s->xyz, points * 3 * sizeof(float)));
    PCB_CUDA_TRY(cudaMalloc((void **)&s->mind, points * sizeof(float)));
    PCB_CUDA_TRY(cudaMalloc((void **)&s->idx, (size_t)t->batch * (size_t)t->m * sizeof(int)));
    PCB_CUDA_TRY(cudaMemcpyAsync(s->xyz, t->a, points * 3 * sizeof(float),
                                 cudaMemcpyHostToDevice, s->ctx.stream));
    return pcb_cuda_sync(&s->ctx);
}

static int torn_prepare(const pcb_task *t, void **state)
{
    if (t->n > INT32_MAX / 3 || t->batch > INT32_MAX)
        return pcb_fail(PCB_EUNSUPPORTED, "fps torn_argmax: %lld x %lld points exceed its "
                        "int offsets", (long long)t->batch, (long long)t->n);
    torn_state *s = (torn_state *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "fps torn_argmax: out of memory");
    s->task = *t;
    int rc = torn_setup(s);
    if (rc != PCB_OK) {
        torn_release(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static int torn_compute(void *state)
{
    torn_state *s = (torn_state *)state;
    const pcb_task *t = &s->task;
    int rc = pcb_cuda_begin(&s->ctx);
    if (rc != PCB_OK)
        return rc;
    fps_torn_kernel<<<(unsigned)t->batch, TORN_BLOCK, 0, s->ctx.stream>>>(
        (int)t->n, (int)t->m, (int)t->start, s->xyz, s->mind, s->idx);
    PCB_CUDA_LAUNCHED("fps_torn_kernel");
    return pcb_cuda_end(&s->ctx);
}

static int torn_sync(void *state)
{
    return pcb_cuda_sync(&((torn_state *)state)->ctx);
}

static int torn_fetch(void *state, pcb_result *out)
{
    torn_state *s = (torn_state *)state;
    const size_t bytes = (size_t)s->task.batch * (size_t)s->task.m * sizeof(int32_t);
    PCB_CUDA_TRY(cudaMemcpyAsync(out->index, s->idx, bytes, cudaMemcpyDeviceToHost,
                                 s->ctx.stream));
    return pcb_cuda_sync(&s->ctx);
}

extern "C" const pcb_impl pcb_defect_fps_torn_argmax = {
    .name = "torn_argmax",
    .problem = PCB_FPS,
    .device = PCB_CUDA,
    .exact = 1,
    .canonical = 0,
    .limits = {.max_n = INT32_MAX / 3, .max_m = 0, .max_batch = INT32_MAX},
    .max_gap = 0,
    .known_defect = NULL,
    .summary = "classic kernel, argmax by an unguarded shared compare-and-store",
    .available = pcb_cuda_available,
    .prepare = torn_prepare,
    .compute = torn_compute,
    .sync = torn_sync,
    .fetch = torn_fetch,
    .release = torn_release,
    .counters = NULL,
    .device_ms = NULL,
};
