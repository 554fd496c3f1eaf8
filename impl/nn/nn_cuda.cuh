/* nn_cuda.cuh - what the CUDA NN attempts share: the device buffers and
 * their life cycle, and the shared-memory (distance, index) min-reduction.
 * Included by the nn_cuda_*.cu files and the kNN ones (their host runs
 * keep the same buffers, a row of k answers a query). */
#ifndef PCB_NN_CUDA_CUH
#define PCB_NN_CUDA_CUH

#include <limits.h>
#include <stdlib.h>

#include "impl/cuda_util.h"
#include "nn.h"

/* State common to the attempts; each embeds it first. */
typedef struct {
    pcb_task task;
    pcb_cuda_ctx ctx;     /* zeroed until created: pcb_cuda_ctx_free accepts that */
    float *ref, *qry;     /* device clouds, batch*n*3 and batch*nq*3 */
    int32_t *idx;         /* device results, pcb_answer_count: batch*nq (kNN: *k) */
    float *dist2;
    void *lengths;        /* a ragged task's lengths (task's point here), or NULL */
} nn_cuda_base;

static inline void nn_cuda_base_free(nn_cuda_base *s)
{
    pcb_cuda_ctx_free(&s->ctx); /* waits for queued work before freeing */
    if (s->qry != s->ref) /* a self task's are one */
        cudaFree(s->qry);
    cudaFree(s->ref);
    cudaFree(s->idx);
    cudaFree(s->dist2);
    cudaFree(s->lengths);
    s->lengths = NULL;
    s->ref = s->qry = s->dist2 = NULL;
    s->idx = NULL;
}

/* Checks, stream, result buffers and the query upload; the reference cloud
 * too when upload_ref (attempt 3 uploads its partitioned copy itself). */
static inline int nn_cuda_base_init(nn_cuda_base *s, const pcb_task *t, const char *name,
                                    int upload_ref)
{
    int rc = pcb_nn_coords_fit(t, name);
    if (rc != PCB_OK)
        return rc;
    s->task = *t;
    size_t refs = (size_t)(t->batch * t->n), q = (size_t)(t->batch * t->nq);
    size_t answers = (size_t)pcb_answer_count(t);
    if ((rc = pcb_cuda_ctx_init(&s->ctx)) != PCB_OK ||
        (rc = pcb_cuda_upload_lengths(&s->task, &s->lengths, s->ctx.stream)) != PCB_OK)
        return rc;
    PCB_CUDA_TRY(cudaMalloc((void **)&s->idx, answers * sizeof(int32_t)));
    PCB_CUDA_TRY(cudaMalloc((void **)&s->dist2, answers * sizeof(float)));
    if (upload_ref) {
        PCB_CUDA_TRY(cudaMalloc((void **)&s->ref, refs * 3 * sizeof(float)));
        PCB_CUDA_TRY(cudaMemcpyAsync(s->ref, t->a, refs * 3 * sizeof(float),
                                     cudaMemcpyHostToDevice, s->ctx.stream));
    }
    if (upload_ref && pcb_task_self(t)) { /* one copy: the device task stays self */
        s->qry = s->ref;
    } else {
        PCB_CUDA_TRY(cudaMalloc((void **)&s->qry, q * 3 * sizeof(float)));
        PCB_CUDA_TRY(cudaMemcpyAsync(s->qry, t->b, q * 3 * sizeof(float),
                                     cudaMemcpyHostToDevice, s->ctx.stream));
    }
    /* The uploads read the caller's pageable arrays: finish them here so
     * prepare alone pays for them. */
    return pcb_cuda_sync(&s->ctx);
}

static inline int nn_cuda_base_fetch(nn_cuda_base *s, pcb_result *out)
{
    size_t q = (size_t)pcb_answer_count(&s->task);
    PCB_CUDA_TRY(cudaMemcpyAsync(out->index, s->idx, q * sizeof(int32_t), cudaMemcpyDeviceToHost,
                                 s->ctx.stream));
    if (out->dist2)
        PCB_CUDA_TRY(cudaMemcpyAsync(out->dist2, s->dist2, q * sizeof(float),
                                     cudaMemcpyDeviceToHost, s->ctx.stream));
    return pcb_cuda_sync(&s->ctx);
}

/* The life-cycle steps every attempt shares; each state starts with its
 * nn_cuda_base, so the state pointer is the base's. */
static inline int nn_cuda_sync(void *state)
{
    return pcb_cuda_sync(&((nn_cuda_base *)state)->ctx);
}

static inline int nn_cuda_fetch(void *state, pcb_result *out)
{
    return nn_cuda_base_fetch((nn_cuda_base *)state, out);
}

static inline int nn_cuda_device_ms(void *state, double *ms)
{
    return pcb_cuda_elapsed_ms(&((nn_cuda_base *)state)->ctx, ms);
}

/* ---- host runs of an implementation whose device runs take their scratch
 * from the cache (NN's and kNN's cuda_grid): nn_cuda_base's buffers, and
 * the scratch taken in prepare, so a loop of host runs makes it once. */
typedef struct {
    nn_cuda_base base; /* first: nn_cuda_sync, fetch and device_ms read it */
    const pcb_cuda_maker *maker;
    void *scratch;
    int slot; /* the scratch's cache slot; -1: not kept (freed here) */
} nn_cached_state;

static inline void nn_cached_release(void *state)
{
    nn_cached_state *s = (nn_cached_state *)state;
    if (!s)
        return;
    if (s->scratch && s->slot >= 0)
        (void)pcb_cuda_cache_give(s->slot, s->base.ctx.stream);
    pcb_cuda_ctx_free(&s->base.ctx); /* waits for queued work first */
    if (s->scratch && s->slot < 0)
        s->maker->release(s->scratch);
    nn_cuda_base_free(&s->base);
    free(s);
}

static inline int nn_cached_prepare(const pcb_task *t, void **state, const pcb_cuda_maker *maker)
{
    nn_cached_state *s = (nn_cached_state *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "%s %s: out of memory", pcb_problem_name(t->problem),
                        maker->impl->name);
    s->maker = maker, s->slot = -1;
    int rc = nn_cuda_base_init(&s->base, t, maker->impl->name, 1);
    if (rc == PCB_OK)
        rc = pcb_cuda_cache_take(maker, t, &s->scratch, &s->slot);
    if (rc != PCB_OK) {
        nn_cached_release(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

/* The maker's run on the uploaded clouds (and lengths), into the buffers. */
static inline int nn_cached_compute(void *state)
{
    nn_cached_state *s = (nn_cached_state *)state;
    pcb_task t = s->base.task; /* its lengths: the uploaded copies */
    t.a = s->base.ref, t.b = s->base.qry, t.memory = PCB_MEM_DEVICE, t.stream = s->base.ctx.stream;
    pcb_result out = {};
    out.index = s->base.idx, out.dist2 = s->base.dist2;
    int rc = pcb_cuda_begin(&s->base.ctx);
    if (rc == PCB_OK)
        rc = s->maker->run(s->scratch, &t, &out, s->base.ctx.stream);
    return rc == PCB_OK ? pcb_cuda_end(&s->base.ctx) : rc;
}

/* ---- a device index's common part (pcb_index_ops): the reference's finite
 * copy, the event after whatever the index builds on it, the most queries
 * a cloud a search may ask. cuda_tiles keeps this alone, cuda_grid adds its
 * grid. */
typedef struct {
    float *ref; /* batch * n * 3, on the device */
    int64_t batch, n, capacity;
    cudaEvent_t ready; /* after the build, on the build's stream */
} nn_cuda_index;

/* The reference copied in on the task's stream (a coordinate not finite or
 * beyond +-PCB_NN_MAX_COORD read as 0, clearing *finite). */
static inline int nn_cuda_index_copy(nn_cuda_index *x, const pcb_task *t, int32_t *finite)
{
    const int64_t count = t->batch * t->n * 3;
    x->batch = t->batch, x->n = t->n, x->capacity = t->nq;
    PCB_CUDA_TRY(cudaMalloc((void **)&x->ref, (size_t)count * sizeof(float)));
    return pcb_cuda_finite_copy(x->ref, t->a, count, (float)PCB_NN_MAX_COORD, finite,
                                (cudaStream_t)t->stream);
}

/* The build queued: the event searches wait for. */
static inline int nn_cuda_index_ready(nn_cuda_index *x, const pcb_task *t)
{
    PCB_CUDA_TRY(cudaEventCreateWithFlags(&x->ready, cudaEventDisableTiming));
    PCB_CUDA_TRY(cudaEventRecord(x->ready, (cudaStream_t)t->stream));
    return PCB_OK;
}

/* A search of nq queries a cloud on stream: within the capacity, after the
 * build (the wait may be in a capture). */
static inline int nn_cuda_index_wait(const nn_cuda_index *x, const char *name, int64_t nq,
                                     void *stream)
{
    if (nq > x->capacity)
        return pcb_fail(PCB_EINVAL, "nn %s index: %lld queries a cloud, built for at most %lld",
                        name, (long long)nq, (long long)x->capacity);
    return pcb_cuda_wait((cudaStream_t)stream, x->ready);
}

/* Searches queued on any stream may read the copy: the device is waited for. */
static inline void nn_cuda_index_free(nn_cuda_index *x)
{
    cudaDeviceSynchronize();
    if (x->ready)
        cudaEventDestroy(x->ready);
    cudaFree(x->ref);
    x->ref = NULL, x->ready = NULL;
}

/* Brute force: every query against every reference point. */
static inline int nn_cuda_brute_counters(void *state, pcb_counters *c)
{
    const pcb_task *t = &((nn_cuda_base *)state)->task;
    c->distance_evals = t->batch * t->n * t->nq;
    return PCB_OK;
}

/* (d, i) is better than (bd, bi): a smaller distance, ties to the lower
 * index, so the reduction's answer does not depend on thread timing. */
__device__ __forceinline__ bool nn_better(float d, int i, float bd, int bi)
{
    return d < bd || (d == bd && i < bi);
}

/* Block-wide min of every thread's (d, i) in shared memory; BLOCK threads,
 * a power of two. On return (after the last barrier) sd[0], si[0] hold the
 * winner for every thread to read; the caller must pass a barrier before
 * it writes sd or si again. At each level thread t < s writes slot t and
 * reads slot t + s >= s, which no thread writes at that level. */
template <int BLOCK>
__device__ __forceinline__ void nn_block_min(float *sd, int *si, float d, int i)
{
    static_assert((BLOCK & (BLOCK - 1)) == 0, "BLOCK must be a power of two");
    const int t = threadIdx.x;
    sd[t] = d;
    si[t] = i;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (t < s && nn_better(sd[t + s], si[t + s], sd[t], si[t])) {
            sd[t] = sd[t + s];
            si[t] = si[t + s];
        }
        __syncthreads();
    }
}

/* A thread's running minimum over reference points p = ref + 3 j. */
__device__ __forceinline__ void nn_consider(const float *ref, unsigned j, float qx, float qy,
                                            float qz, float *best, int *besti)
{
    const float *p = ref + 3 * (size_t)j;
    float dx = p[0] - qx, dy = p[1] - qy, dz = p[2] - qz;
    float d = dx * dx + dy * dy + dz * dz;
    if (d < *best) {
        *best = d;
        *besti = (int)j;
    }
}

#endif
