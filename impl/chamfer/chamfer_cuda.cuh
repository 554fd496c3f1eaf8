/* chamfer_cuda.cuh - what the CUDA chamfer implementations share: the
 * value of each pair from the answer's distances, on the device, and the
 * host life cycle of the implementations that search both directions in
 * their own launches (a queue function on device arrays, and its scratch).
 * Included by chamfer_cuda_*.cu only. */
#ifndef PCB_CHAMFER_CUDA_CUH
#define PCB_CHAMFER_CUDA_CUH

#include <stdlib.h>

#include "impl/cuda_util.h"
#include "impl/nn/nn.h"
#include "chamfer.h"

enum { VALUE_THREADS = 256 };

/* A ragged pair's length (a device array, or NULL: full); one outside
 * 0..full reads as 0, as the search that flagged it read it. */
static __device__ __forceinline__ int32_t chamfer_length(const int64_t *len, int64_t b,
                                                         int32_t full)
{
    return !len ? full : len[b] < 0 || len[b] > full ? 0 : (int32_t)len[b];
}

/* One block a pair: the mean of A's squared distances plus the mean of
 * B's, summed in double (dist2: batch * n of A's, then batch * nq of B's);
 * a ragged pair over its own points (a mean over none: NaN). */
static __global__ void __launch_bounds__(VALUE_THREADS)
    chamfer_value_kernel(const float *dist2, int64_t batch, int32_t n_all, int32_t nq_all,
                         const int64_t *len_a, const int64_t *len_b, double *value)
{
    __shared__ double part[2][VALUE_THREADS];
    const int64_t b = blockIdx.x;
    const float *ab = dist2 + b * n_all, *ba = dist2 + batch * n_all + b * nq_all;
    const int32_t n = chamfer_length(len_a, b, n_all), nq = chamfer_length(len_b, b, nq_all);
    double sa = 0, sb = 0;
    for (int32_t i = (int32_t)threadIdx.x; i < n; i += VALUE_THREADS)
        sa += ab[i];
    for (int32_t j = (int32_t)threadIdx.x; j < nq; j += VALUE_THREADS)
        sb += ba[j];
    part[0][threadIdx.x] = sa, part[1][threadIdx.x] = sb;
    __syncthreads();
    for (int w = VALUE_THREADS / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w)
            for (int k = 0; k < 2; k++)
                part[k][threadIdx.x] += part[k][threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        value[b] = part[0][0] / (double)n + part[1][0] / (double)nq;
}

static inline int chamfer_value_launch(const pcb_task *t, const float *dist2, double *value,
                                       cudaStream_t st)
{
    /* t's lengths are device arrays: a device task's, or a host task's as
     * prepare uploaded them into the state's copy */
    chamfer_value_kernel<<<(unsigned)t->batch, VALUE_THREADS, 0, st>>>(
        dist2, t->batch, (int32_t)t->n, (int32_t)t->nq, t->lengths_a, t->lengths_b, value);
    PCB_CUDA_LAUNCHED("chamfer_value_kernel");
    return PCB_OK;
}

/* ---- host runs on the implementation's own queue ---------------------------- */
/* Queue a device task's whole answer (indices and distances both ways, the
 * values when out->value) on st, with scratch from the implementation's
 * maker (taken from the state cache, so a loop of host runs allocates it
 * once; NULL where none is needed). */
typedef int (*chamfer_queue_fn)(void *scratch, const pcb_task *t, pcb_result *out,
                                cudaStream_t st);

typedef struct {
    pcb_task task;
    pcb_cuda_ctx ctx;
    float *a, *b, *dist2; /* batch*n*3, batch*nq*3, batch*(n+nq) */
    int32_t *idx;         /* batch*(n+nq) */
    double *value;        /* batch */
    void *lengths;        /* a ragged task's lengths (task's point here), or NULL */
    void *scratch;
    int slot; /* the scratch's cache slot; -1: not kept (freed by release) */
    chamfer_queue_fn queue;
    const pcb_cuda_maker *maker;
} chamfer_cuda_state;

static inline void chamfer_cuda_release(void *state)
{
    chamfer_cuda_state *s = (chamfer_cuda_state *)state;
    if (!s)
        return;
    if (s->scratch && s->slot >= 0)
        (void)pcb_cuda_cache_give(s->slot, s->ctx.stream);
    pcb_cuda_ctx_free(&s->ctx); /* waits for queued work first */
    if (s->scratch && s->slot < 0)
        s->maker->release(s->scratch);
    cudaFree(s->a), cudaFree(s->b), cudaFree(s->dist2), cudaFree(s->idx), cudaFree(s->value);
    cudaFree(s->lengths);
    free(s);
}

/* Checks, buffers, both clouds uploaded (waited for: the uploads read the
 * caller's arrays) and the scratch made. */
static inline int chamfer_cuda_prepare(const pcb_task *t, void **state, const char *name,
                                       chamfer_queue_fn queue, const pcb_cuda_maker *maker)
{
    const pcb_task ab = pcb_chamfer_direction(t, 0);
    int rc = pcb_nn_coords_fit(&ab, name);
    if (rc != PCB_OK)
        return rc;
    chamfer_cuda_state *s = (chamfer_cuda_state *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "chamfer %s: out of memory", name);
    s->task = *t, s->queue = queue, s->maker = maker, s->slot = -1;
    const size_t na = (size_t)(t->batch * t->n), nb = (size_t)(t->batch * t->nq);
    cudaError_t e = cudaSuccess;
    if ((rc = pcb_cuda_ctx_init(&s->ctx)) == PCB_OK &&
        (rc = pcb_cuda_upload_lengths(&s->task, &s->lengths, s->ctx.stream)) == PCB_OK &&
        ((e = cudaMalloc((void **)&s->a, na * 3 * sizeof(float))) != cudaSuccess ||
         (e = cudaMalloc((void **)&s->b, nb * 3 * sizeof(float))) != cudaSuccess ||
         (e = cudaMalloc((void **)&s->dist2, (na + nb) * sizeof(float))) != cudaSuccess ||
         (e = cudaMalloc((void **)&s->idx, (na + nb) * sizeof(int32_t))) != cudaSuccess ||
         (e = cudaMalloc((void **)&s->value, (size_t)t->batch * sizeof(double))) != cudaSuccess ||
         (e = cudaMemcpyAsync(s->a, t->a, na * 3 * sizeof(float), cudaMemcpyHostToDevice,
                              s->ctx.stream)) != cudaSuccess ||
         (e = cudaMemcpyAsync(s->b, t->b, nb * 3 * sizeof(float), cudaMemcpyHostToDevice,
                              s->ctx.stream)) != cudaSuccess))
        rc = pcb_cuda_fail(e, "chamfer: prepare", __FILE__, __LINE__);
    if (rc == PCB_OK)
        rc = pcb_cuda_sync(&s->ctx);
    if (rc == PCB_OK && maker)
        rc = pcb_cuda_cache_take(maker, t, &s->scratch, &s->slot);
    if (rc != PCB_OK) {
        chamfer_cuda_release(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static inline int chamfer_cuda_compute(void *state)
{
    chamfer_cuda_state *s = (chamfer_cuda_state *)state;
    int rc = pcb_cuda_begin(&s->ctx);
    if (rc != PCB_OK)
        return rc;
    pcb_task t = s->task; /* its lengths: the uploaded copies */
    t.a = s->a, t.b = s->b, t.memory = PCB_MEM_DEVICE, t.stream = s->ctx.stream;
    pcb_result r = {};
    r.index = s->idx, r.dist2 = s->dist2, r.value = s->value;
    if ((rc = s->queue(s->scratch, &t, &r, s->ctx.stream)) != PCB_OK)
        return rc;
    return pcb_cuda_end(&s->ctx);
}

static inline int chamfer_cuda_sync(void *state)
{
    return pcb_cuda_sync(&((chamfer_cuda_state *)state)->ctx);
}

static inline int chamfer_cuda_fetch(void *state, pcb_result *out)
{
    chamfer_cuda_state *s = (chamfer_cuda_state *)state;
    const pcb_task *t = &s->task;
    const size_t count = (size_t)pcb_answer_count(t);
    if (!out->dist2)
        return pcb_fail(PCB_EINVAL, "chamfer: the answer needs its dist2 array");
    cudaStream_t st = s->ctx.stream;
    PCB_CUDA_TRY(cudaMemcpyAsync(out->index, s->idx, count * sizeof(int32_t),
                                 cudaMemcpyDeviceToHost, st));
    PCB_CUDA_TRY(cudaMemcpyAsync(out->dist2, s->dist2, count * sizeof(float),
                                 cudaMemcpyDeviceToHost, st));
    if (out->value)
        PCB_CUDA_TRY(cudaMemcpyAsync(out->value, s->value, (size_t)t->batch * sizeof(double),
                                     cudaMemcpyDeviceToHost, st));
    return pcb_cuda_sync(&s->ctx);
}

static inline int chamfer_cuda_device_ms(void *state, double *ms)
{
    return pcb_cuda_elapsed_ms(&((chamfer_cuda_state *)state)->ctx, ms);
}

#endif
