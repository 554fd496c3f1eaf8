/* fps_dp.c - serial FPS with a running minimum-distance array: after each
 * new sample only the distances to that sample are computed, so a step is
 * O(n) and the whole sampling O(n * m). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fps.h"

/* One cloud; mind[n] holds each point's running minimum distance, -1 for
 * the samples (min(d, -1) keeps it there), so they are never taken again. */
static void sample_cloud(const float *xyz, int64_t n, int64_t m, int64_t start, float *mind,
                         int32_t *idx)
{
    for (int64_t k = 0; k < n; k++)
        mind[k] = INFINITY;
    int32_t last = (int32_t)start;
    idx[0] = last;
    mind[last] = -1.0f; /* a sample's minimum: below every candidate's, for good */
    for (int64_t j = 1; j < m; j++) {
        const float *q = xyz + 3 * (int64_t)last;
        float best = -1.0f;
        int32_t besti = 0;
        /* Ascending k with a strict > keeps the lowest index among ties. */
        for (int64_t k = 0; k < n; k++) {
            float d = pcb_fps_d2(xyz + 3 * k, q);
            float dk = d < mind[k] ? d : mind[k];
            mind[k] = dk;
            if (dk > best) {
                best = dk;
                besti = (int32_t)k;
            }
        }
        last = besti;
        idx[j] = last;
        mind[last] = -1.0f;
    }
}

typedef struct {
    pcb_task task;
    int32_t *idx;
    float *mind;
} dp_state;

static void dp_release(void *state)
{
    dp_state *s = state;
    if (s) {
        free(s->idx);
        free(s->mind);
    }
    free(s);
}

static int dp_prepare(const pcb_task *t, void **state)
{
    dp_state *s = calloc(1, sizeof *s);
    if (!s || !(s->idx = malloc((size_t)(t->batch * t->m) * sizeof *s->idx)) ||
        !(s->mind = malloc((size_t)t->n * sizeof *s->mind))) {
        dp_release(s);
        return pcb_fail(PCB_ENOMEM, "fps dp: out of memory");
    }
    s->task = *t;
    *state = s;
    return PCB_OK;
}

static int dp_compute(void *state)
{
    dp_state *s = state;
    const pcb_task *t = &s->task;
    for (int64_t b = 0; b < t->batch; b++)
        sample_cloud(t->a + b * t->n * 3, t->n, t->m, t->start, s->mind, s->idx + b * t->m);
    return PCB_OK;
}

static int dp_fetch(void *state, pcb_result *out)
{
    dp_state *s = state;
    memcpy(out->index, s->idx, (size_t)(s->task.batch * s->task.m) * sizeof *s->idx);
    return PCB_OK;
}

static int dp_counters(void *state, pcb_counters *c)
{
    const pcb_task *t = &((dp_state *)state)->task;
    c->distance_evals = t->batch * t->n * (t->m - 1);
    c->iterations = t->batch * (t->m - 1);
    return PCB_OK;
}

const pcb_impl pcb_fps_dp = {
    .name = "dp",
    .cost = PCB_COST_SAMPLES,
    .reference = 1,
    .problem = PCB_FPS,
    .device = PCB_CPU,
    .promise = {.exact = 1, .canonical = 1},
    .summary = "serial, running min-distance array (dynamic programming): O(n m)",
    .prepare = dp_prepare,
    .compute = dp_compute,
    .fetch = dp_fetch,
    .release = dp_release,
    .counters = dp_counters,
};
