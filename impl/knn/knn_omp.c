/* knn_omp.c - naive's brute force on every core: the queries of the whole
 * batch shared out in blocks. */
#include <omp.h>
#include <stdlib.h>

#include "knn.h"

enum { BLOCK = 64 }; /* queries a scheduling step */

static int omp_prepare(const pcb_task *t, void **state)
{
    pcb_knn_rows *s = calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "knn omp: out of memory");
    int rc = pcb_knn_rows_init(s, t, "omp");
    if (rc != PCB_OK) {
        free(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static int omp_compute(void *state)
{
    pcb_knn_rows *s = state;
    const pcb_task *t = &s->task;
    const int64_t total = t->batch * t->nq, blocks = (total + BLOCK - 1) / BLOCK;
    const int threads = t->opt.threads > 0 ? t->opt.threads : omp_get_max_threads();
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4)
    for (int64_t b = 0; b < blocks; b++) {
        const int64_t first = b * BLOCK, last = first + BLOCK < total ? first + BLOCK : total;
        pcb_knn_scan(t, first, last, s->idx, s->dist2);
    }
    return PCB_OK;
}

static void omp_release(void *state)
{
    if (state)
        pcb_knn_rows_free(state);
    free(state);
}

static int omp_counters(void *state, pcb_counters *c)
{
    const pcb_task *t = &((pcb_knn_rows *)state)->task;
    c->distance_evals = t->batch * t->n * t->nq;
    return PCB_OK;
}

const pcb_impl pcb_knn_omp = {
    .name = "omp",
    .problem = PCB_KNN,
    .device = PCB_CPU,
    .promise = {.exact = 1, .canonical = 1},
    .cost = PCB_COST_ALL_PAIRS,
    .summary = "naive's brute force on every core (OpenMP over the batch's queries)",
    .prepare = omp_prepare,
    .compute = omp_compute,
    .fetch = pcb_knn_rows_fetch,
    .release = omp_release,
    .counters = omp_counters,
};
