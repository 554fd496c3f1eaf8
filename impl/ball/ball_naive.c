/* ball_naive.c - the reference: every centre against every point in
 * increasing index, serial; FIRST stops at the k-th inside point, NEAREST
 * offers every inside point to the centre's sorted row. */
#include <stdlib.h>

#include "ball.h"

static int naive_prepare(const pcb_task *t, void **state)
{
    pcb_ball_rows *s = calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "ball naive: out of memory");
    int rc = pcb_ball_rows_init(s, t, "naive");
    if (rc != PCB_OK) {
        free(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static int naive_compute(void *state)
{
    pcb_ball_rows *s = state;
    pcb_ball_scan(&s->task, 0, s->task.batch * s->task.nq, s->idx, s->dist2, s->count);
    return PCB_OK;
}

static void naive_release(void *state)
{
    if (state)
        pcb_ball_rows_free(state);
    free(state);
}

const pcb_impl pcb_ball_naive = {
    .name = "naive",
    .problem = PCB_BALL,
    .device = PCB_CPU,
    .promise = {.exact = 1, .canonical = 1},
    .cost = PCB_COST_ALL_PAIRS,
    .reference = 1,
    .summary = "serial scan of every point a centre in index order (the reference)",
    .prepare = naive_prepare,
    .compute = naive_compute,
    .fetch = pcb_ball_rows_fetch,
    .release = naive_release,
};
