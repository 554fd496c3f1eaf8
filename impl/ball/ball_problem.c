/* ball_problem.c - the ball query's face in the library: its arguments (k,
 * a radius, a selection), its answer (up to k indices a centre, padded,
 * and their count), its judge, and pcb_ball. */
#include <math.h>

#include "impl/problem.h"

static int check(const pcb_task *t)
{
    int rc = pcb_check_k_rows(t, "centres");
    if (rc != PCB_OK)
        return rc;
    if (!(t->radius > 0 && isfinite(pcb_ball_r2(t->radius))))
        return pcb_fail(PCB_EINVAL, "radius %g: need a number > 0 whose float32 square is "
                        "finite", t->radius);
    if (t->select != PCB_BALL_FIRST && t->select != PCB_BALL_NEAREST)
        return pcb_fail(PCB_EINVAL, "unknown ball selection %d (first %d, nearest %d)",
                        (int)t->select, PCB_BALL_FIRST, PCB_BALL_NEAREST);
    return PCB_OK;
}

/* up to 8 points within 0.25, the nearest */
static void sample(pcb_task *t)
{
    t->k = 8, t->radius = 0.25, t->select = PCB_BALL_NEAREST;
}

const pcb_problem_face pcb_ball_problem = {
    .check = check,
    .validate = pcb_ball_validate,
    .groups = 1,
    .rows = {PCB_ROWS_B},
    .row_is_k = 1,
    .reads_b = 1,
    .counts = 1,
    .distances = 1,
    .canonical = "not canonical: query %lld neighbour %lld is %ld, %s has %ld",
    .sample = sample,
};

int pcb_ball(const float *ref, const float *centres, int64_t batch, int64_t n, int64_t nq,
             int64_t k, double radius, int select, int32_t *idx, float *dist2, int32_t *count)
{
    pcb_task t = {.problem = PCB_BALL, .batch = batch, .n = n, .nq = nq, .k = k,
                  .radius = radius, .select = select, .a = ref, .b = centres};
    pcb_result r = {.index = idx, .dist2 = dist2, .count = count};
    return pcb_run_best(&t, &r);
}
