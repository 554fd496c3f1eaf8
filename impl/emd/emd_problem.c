/* emd_problem.c - the earth mover's distance's face in the library: its
 * arguments (clouds of equal size), its answer (the point of B matched to
 * each point of A, a value a pair, prices), its judge, and pcb_emd. */
#include "impl/problem.h"

static int check(const pcb_task *t)
{
    const pcb_memory mem = t->memory;
    if (t->nq != t->n)
        return pcb_fail(PCB_EINVAL, "EMD needs clouds of equal size (%lld and %lld)",
                        (long long)t->n, (long long)t->nq);
    for (int64_t i = 0; mem == PCB_MEM_HOST && t->lengths_b && i < t->batch; i++)
        if (t->lengths_b[i] != (t->lengths_a ? t->lengths_a[i] : t->n))
            return pcb_fail(PCB_EINVAL, "EMD needs clouds of equal size: pair %lld has "
                            "%lld and %lld points", (long long)i,
                            (long long)(t->lengths_a ? t->lengths_a[i] : t->n),
                            (long long)t->lengths_b[i]);
    int rc = pcb_check_cloud("cloud A", t->a, t->batch, t->n, mem, t->lengths_a);
    return rc != PCB_OK ? rc : pcb_check_cloud("cloud B", t->b, t->batch, t->n, mem, t->lengths_b);
}

static int validate(const pcb_task *t, const pcb_result *r, const pcb_promise *p,
                    pcb_report *rep)
{
    return pcb_emd_validate(t, r, p->exact, p->max_gap, rep);
}

const pcb_problem_face pcb_emd_problem = {
    .check = check,
    .validate_promised = validate,
    .groups = 1,
    .rows = {PCB_ROWS_A},
    .reads_b = 1,
    .valued = 1,
    .priced = 1,
    .certified = 1,
};

int pcb_emd(const float *a, const float *b, int64_t batch, int64_t n, int32_t *match,
            double *value)
{
    pcb_task t = {.problem = PCB_EMD, .batch = batch, .n = n, .nq = n, .a = a, .b = b};
    pcb_result r = {.index = match, .value = value};
    return pcb_run_best(&t, &r);
}
