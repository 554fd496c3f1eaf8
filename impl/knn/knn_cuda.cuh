/* knn_cuda.cuh - what the CUDA kNN implementations share: the host life
 * cycle on nn_cuda.cuh's buffers (a row of k answers a query) and the
 * launch of one kernel over every query of the batch. Each .cu file gives
 * its launch; a device run is that launch on the caller's arrays. */
#ifndef PCB_KNN_CUDA_CUH
#define PCB_KNN_CUDA_CUH

#include "impl/nn/nn_cuda.cuh"
#include "impl/nn/nn_tiles.cuh"
#include "knn.h"

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
