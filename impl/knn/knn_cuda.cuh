/* knn_cuda.cuh - what the CUDA kNN implementations share: the host life
 * cycle on nn_cuda.cuh's buffers (a row of k answers a query) and the
 * launch of one kernel over every query of the batch. Each .cu file gives
 * its launch; a device run is that launch on the caller's arrays. */
#ifndef PCB_KNN_CUDA_CUH
#define PCB_KNN_CUDA_CUH

#include "impl/nn/nn_cuda.cuh"
#include "impl/nn/nn_tiles.cuh"
#include "knn.h"

/* ---- a row of K in registers (cuda_tiles, cuda_grid): K distances and
 * indices, every loop over them unrolled so the compiler can name each
 * slot. */

/* (e, j) before (d, i): nearer, or as near with a lower index (padding's -1
 * read unsigned is last). */
__device__ __forceinline__ bool knn_less(float e, int32_t j, float d, int32_t i)
{
    return e < d || (e == d && (uint32_t)j < (uint32_t)i);
}

/* Put (e, j) into the row (sorted, first len slots kept) if it comes before
 * the last: every slot computed at once from the old row (take[s]: e goes
 * at or before s), so the K steps do not wait on each other. ASCENDING:
 * candidates come in increasing index (the tiles), so "e < d" puts an
 * equal distance after; else (the grid's cell order) ties compare indices. */
template <int K, bool ASCENDING>
__device__ __forceinline__ void knn_insert(float (&d)[K], int32_t (&id)[K], float e, int32_t j,
                                           int32_t len, float &bound)
{
#pragma unroll
    for (int s = K - 1; s >= 0; s--) {
        const int p = s > 0 ? s - 1 : 0;
        const bool take = s < len && (ASCENDING ? e < d[s] : knn_less(e, j, d[s], id[s]));
        /* e goes before slot s */
        const bool before = s > 0 && (ASCENDING ? e < d[p] : knn_less(e, j, d[p], id[p]));
        const float nd = before ? d[p] : e;
        const int32_t ni = before ? id[p] : j;
        d[s] = take ? nd : d[s];
        id[s] = take ? ni : id[s];
        if (s == len - 1)
            bound = d[s];
    }
}

/* The K first of two sorted rows (lexicographic), into a: the elementwise
 * least of a and b reversed is a bitonic sequence holding them, which a
 * bitonic merge sorts. */
template <int K>
__device__ __forceinline__ void knn_merge(float (&d)[K], int32_t (&id)[K], const float (&bd)[K],
                                          const int32_t (&bi)[K])
{
#pragma unroll
    for (int s = 0; s < K; s++)
        if (knn_less(bd[K - 1 - s], bi[K - 1 - s], d[s], id[s]))
            d[s] = bd[K - 1 - s], id[s] = bi[K - 1 - s];
#pragma unroll
    for (int stride = K / 2; stride > 0; stride /= 2)
#pragma unroll
        for (int s = 0; s < K; s++)
            if (!(s & stride) && knn_less(d[s + stride], id[s + stride], d[s], id[s])) {
                const float td = d[s];
                const int32_t ti = id[s];
                d[s] = d[s + stride], id[s] = id[s + stride];
                d[s + stride] = td, id[s + stride] = ti;
            }
}

/* One launch answering every query of the batch: ref batch x n x 3, qry
 * batch x nq x 3 (device), rows of k into idx and dist2 (dist2 may be
 * NULL); coordinates beyond +-limit or not finite read as 0, clearing
 * *finite. */
typedef int (*knn_launch_fn)(const float *ref, const float *qry, int64_t batch, int64_t n,
                             int64_t nq, int64_t k, int32_t *idx, float *dist2, float limit,
                             int32_t *finite, cudaStream_t st);

typedef struct {
    nn_cuda_base base; /* first: nn_cuda_sync, fetch and device_ms read it */
    knn_launch_fn launch;
} knn_cuda_state;

static inline void knn_cuda_release(void *state)
{
    knn_cuda_state *s = (knn_cuda_state *)state;
    if (!s)
        return;
    nn_cuda_base_free(&s->base);
    free(s);
}

static inline int knn_cuda_prepare(const pcb_task *t, void **state, const char *name,
                                   knn_launch_fn launch)
{
    knn_cuda_state *s = (knn_cuda_state *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "knn %s: out of memory", name);
    s->launch = launch;
    int rc = nn_cuda_base_init(&s->base, t, name, 1);
    if (rc != PCB_OK) {
        knn_cuda_release(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static inline int knn_cuda_compute(void *state)
{
    knn_cuda_state *s = (knn_cuda_state *)state;
    const pcb_task *t = &s->base.task;
    int rc = pcb_cuda_begin(&s->base.ctx);
    if (rc == PCB_OK)
        rc = s->launch(s->base.ref, s->base.qry, t->batch, t->n, t->nq, t->k, s->base.idx,
                       s->base.dist2, (float)PCB_NN_MAX_COORD, NULL, s->base.ctx.stream);
    return rc == PCB_OK ? pcb_cuda_end(&s->base.ctx) : rc;
}

#endif
