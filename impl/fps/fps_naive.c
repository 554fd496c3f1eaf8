/* fps_naive.c - serial FPS that recomputes every point's distance to every
 * chosen sample at each step: O(n * m^2). The slowest, simplest reference. */
#include <stdlib.h>
#include <string.h>

#include "fps.h"

typedef struct {
    pcb_task task;
    int32_t *idx;
    unsigned char *taken; /* n: 1 for a sample, which is not a candidate again */
    int64_t evals;
} naive_state;

static int naive_prepare(const pcb_task *t, void **state)
{
    naive_state *s = calloc(1, sizeof *s);
    if (!s || !(s->idx = malloc((size_t)(t->batch * t->m) * sizeof *s->idx)) ||
        !(s->taken = malloc((size_t)t->n))) {
        if (s)
            free(s->idx);
        free(s);
        return pcb_fail(PCB_ENOMEM, "fps naive: out of memory");
    }
    s->task = *t;
    *state = s;
    return PCB_OK;
}

static void sample_one(const float *xyz, int64_t n, int64_t m, int64_t start, int32_t *idx,
                       unsigned char *taken, int64_t *evals)
{
    memset(taken, 0, (size_t)n);
    idx[0] = (int32_t)start;
    taken[start] = 1;
    for (int64_t j = 1; j < m; j++) {
        float best = -1.0f;
        int32_t besti = 0;
        for (int64_t k = 0; k < n; k++) {
            float d = pcb_fps_d2(xyz + 3 * k, xyz + 3 * (int64_t)idx[0]);
            for (int64_t c = 1; c < j; c++) {
                float dc = pcb_fps_d2(xyz + 3 * k, xyz + 3 * (int64_t)idx[c]);
                if (dc < d)
                    d = dc;
            }
            *evals += j;
            if (taken[k]) /* a sample is not a candidate again */
                continue;
            if (d > best) {
                best = d;
                besti = (int32_t)k;
            }
        }
        idx[j] = besti;
        taken[besti] = 1;
    }
}

static int naive_compute(void *state)
{
    naive_state *s = state;
    const pcb_task *t = &s->task;
    s->evals = 0;
    for (int64_t b = 0; b < t->batch; b++)
        sample_one(t->a + b * t->n * 3, t->n, t->m, t->start, s->idx + b * t->m, s->taken,
                   &s->evals);
    return PCB_OK;
}

static int naive_fetch(void *state, pcb_result *out)
{
    naive_state *s = state;
    memcpy(out->index, s->idx, (size_t)(s->task.batch * s->task.m) * sizeof *s->idx);
    return PCB_OK;
}

static void naive_release(void *state)
{
    naive_state *s = state;
    if (s) {
        free(s->idx);
        free(s->taken);
    }
    free(s);
}

static int naive_counters(void *state, pcb_counters *c)
{
    c->distance_evals = ((naive_state *)state)->evals;
    return PCB_OK;
}

const pcb_impl pcb_fps_naive = {
    .name = "naive",
    .cost = PCB_COST_SAMPLES_SQUARED,
    .problem = PCB_FPS,
    .device = PCB_CPU,
    .promise = {.exact = 1, .canonical = 1},
    .summary = "serial, recomputes distances to every sample: O(n m^2)",
    .prepare = naive_prepare,
    .compute = naive_compute,
    .fetch = naive_fetch,
    .release = naive_release,
    .counters = naive_counters,
};
