/* chamfer_problem.c - the chamfer distance's face in the library: its
 * arguments, its answer (each point of A's nearest in B, then each point of
 * B's in A, with squared distances; a value a pair), its judge, and
 * pcb_chamfer. */
#include "impl/problem.h"

static int check(const pcb_task *t)
{
    int rc;
    if ((rc = pcb_check_cloud("cloud A", t->a, t->batch, t->n, t->memory, t->lengths_a)) != PCB_OK ||
        (rc = pcb_check_cloud("cloud B", t->b, t->batch, t->nq, t->memory, t->lengths_b)) != PCB_OK)
        return rc;
    if (t->n + t->nq > PCB_MAX_POINTS)
        return pcb_fail(PCB_EINVAL, "chamfer: %lld + %lld points exceed %d a pair",
                        (long long)t->n, (long long)t->nq, PCB_MAX_POINTS);
    return PCB_OK;
}

const pcb_problem_face pcb_chamfer_problem = {
    .check = check,
    .validate = pcb_chamfer_validate,
    .groups = 2,
    .rows = {PCB_ROWS_A, PCB_ROWS_B},
    .reads_b = 1,
    .valued = 1,
    .distances = 1,
};

int pcb_chamfer(const float *a, const float *b, int64_t batch, int64_t n, int64_t nq,
                int32_t *idx, float *dist2, double *value)
{
    pcb_task t = {.problem = PCB_CHAMFER, .batch = batch, .n = n, .nq = nq, .a = a, .b = b};
    pcb_result r = {.index = idx, .dist2 = dist2, .value = value};
    if (!dist2)
        return pcb_fail(PCB_EINVAL, "pcb_chamfer: the answer needs its dist2 array");
    return pcb_run_best(&t, &r);
}
