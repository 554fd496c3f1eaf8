/* nn_naive.c - the double loop of the slides: every query against every
 * reference point, serial. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"

typedef struct {
    pcb_task task;
    int32_t *idx;
    float *dist2;
} naive_state;

static int naive_prepare(const pcb_task *t, void **state)
{
    int rc = pcb_nn_coords_fit(t, "naive");
    if (rc != PCB_OK)
        return rc;
    size_t q = (size_t)(t->batch * t->nq);
    naive_state *s = calloc(1, sizeof *s);
    if (!s || !(s->idx = malloc(q * sizeof *s->idx)) || !(s->dist2 = malloc(q * sizeof *s->dist2))) {
        if (s)
            free(s->idx);
        free(s);
        return pcb_fail(PCB_ENOMEM, "nn naive: out of memory");
    }
    s->task = *t;
    *state = s;
    return PCB_OK;
}

static int naive_compute(void *state)
{
    naive_state *s = state;
    const pcb_task *t = &s->task;
    for (int64_t b = 0; b < t->batch; b++) {
        const float *ref = t->a + b * t->n * 3, *qry = t->b + b * t->nq * 3;
        for (int64_t i = 0; i < t->nq; i++) {
            float best = FLT_MAX;
            int32_t besti = 0;
            for (int64_t j = 0; j < t->n; j++) {
                float d = pcb_nn_d2(qry + 3 * i, ref + 3 * j);
                if (d < best) {
                    best = d;
                    besti = (int32_t)j;
                }
            }
            s->idx[b * t->nq + i] = besti;
            s->dist2[b * t->nq + i] = best;
        }
    }
    return PCB_OK;
}

static int naive_fetch(void *state, pcb_result *out)
{
    naive_state *s = state;
    size_t q = (size_t)(s->task.batch * s->task.nq);
    memcpy(out->index, s->idx, q * sizeof *s->idx);
    if (out->dist2)
        memcpy(out->dist2, s->dist2, q * sizeof *s->dist2);
    return PCB_OK;
}

static void naive_release(void *state)
{
    naive_state *s = state;
    if (s) {
        free(s->idx);
        free(s->dist2);
    }
    free(s);
}

static int naive_counters(void *state, pcb_counters *c)
{
    const pcb_task *t = &((naive_state *)state)->task;
    c->distance_evals = t->batch * t->n * t->nq;
    return PCB_OK;
}

const pcb_impl pcb_nn_naive = {
    .name = "naive",
    .cost = PCB_COST_ALL_PAIRS,
    .reference = 1,
    .problem = PCB_NN,
    .device = PCB_CPU,
    .promise = {.exact = 1},
    .summary = "serial double loop over queries and reference points",
    .prepare = naive_prepare,
    .compute = naive_compute,
    .fetch = naive_fetch,
    .release = naive_release,
    .counters = naive_counters,
};
