/* ball_omp.c - naive's scan on every core: the centres of the whole batch
 * shared out in blocks. */
#include <omp.h>
#include <stdlib.h>

#include "ball.h"

enum { BLOCK = 64 }; /* centres a scheduling step */

static int omp_prepare(const pcb_task *t, void **state)
{
    pcb_ball_rows *s = calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "ball omp: out of memory");
    int rc = pcb_ball_rows_init(s, t, "omp");
    if (rc != PCB_OK) {
        free(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static int omp_compute(void *state)
{
    pcb_ball_rows *s = state;
    const pcb_task *t = &s->task;
    const int64_t total = t->batch * t->nq, blocks = (total + BLOCK - 1) / BLOCK;
    const int threads = t->opt.threads > 0 ? t->opt.threads : omp_get_max_threads();
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4)
    for (int64_t b = 0; b < blocks; b++) {
        const int64_t first = b * BLOCK, last = first + BLOCK < total ? first + BLOCK : total;
        pcb_ball_scan(t, first, last, s->idx, s->dist2, s->count);
    }
    return PCB_OK;
}

static void omp_release(void *state)
{
    if (state)
        pcb_ball_rows_free(state);
    free(state);
}

const pcb_impl pcb_ball_omp = {
    .name = "omp",
    .problem = PCB_BALL,
    .device = PCB_CPU,
    .promise = {.exact = 1, .canonical = 1},
    .cost = PCB_COST_ALL_PAIRS,
    .summary = "naive's scan on every core (OpenMP over the batch's centres)",
    .prepare = omp_prepare,
    .compute = omp_compute,
    .fetch = pcb_ball_rows_fetch,
    .release = omp_release,
};
