/* knn_naive.c - the reference: every query against every reference point,
 * serial, each candidate offered to the query's sorted row. */
#include <stdlib.h>

#include "knn.h"

static int naive_prepare(const pcb_task *t, void **state)
{
    pcb_knn_rows *s = calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "knn naive: out of memory");
    int rc = pcb_knn_rows_init(s, t, "naive");
    if (rc != PCB_OK) {
        free(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static int naive_compute(void *state)
{
    pcb_knn_rows *s = state;
    pcb_knn_scan(&s->task, 0, s->task.batch * s->task.nq, s->idx, s->dist2);
    return PCB_OK;
}

static void naive_release(void *state)
{
    if (state)
        pcb_knn_rows_free(state);
    free(state);
}

static int naive_counters(void *state, pcb_counters *c)
{
    const pcb_task *t = &((pcb_knn_rows *)state)->task;
    c->distance_evals = t->batch * t->n * t->nq;
    return PCB_OK;
}

const pcb_impl pcb_knn_naive = {
    .name = "naive",
    .problem = PCB_KNN,
    .device = PCB_CPU,
    .promise = {.exact = 1, .canonical = 1},
    .cost = PCB_COST_ALL_PAIRS,
    .reference = 1,
    .summary = "serial double loop, a sorted row a query (the reference)",
    .prepare = naive_prepare,
    .compute = naive_compute,
    .fetch = pcb_knn_rows_fetch,
    .release = naive_release,
    .counters = naive_counters,
};
