/* bench_outputs.c - the result arrays of one run: allocated for a task,
 * poisoned before each fetch, compared bit for bit. */
#include <string.h>

#include "bench_run.h"

int bench_outputs_alloc(outputs *o, const pcb_task *t)
{
    o->count = (size_t)pcb_answer_count(t);
    o->batch = (size_t)t->batch;
    return pcb_result_alloc(t, &o->r);
}

void bench_outputs_free(outputs *o)
{
    pcb_result_free(&o->r);
}

/* Poison first: every element must be written by fetch. */
pcb_result bench_outputs_result(outputs *o)
{
    for (size_t i = 0; i < o->count; i++)
        o->r.index[i] = PCB_POISON;
    return o->r;
}

int bench_outputs_equal(const outputs *a, const outputs *b, pcb_problem p)
{
    if (memcmp(a->r.index, b->r.index, a->count * sizeof *a->r.index) != 0)
        return 0;
    if ((p == PCB_NN || p == PCB_CHAMFER) && memcmp(a->r.dist2, b->r.dist2, a->count * sizeof *a->r.dist2) != 0)
        return 0;
    return (p != PCB_EMD && p != PCB_CHAMFER) || memcmp(a->r.value, b->r.value, a->batch * sizeof *a->r.value) == 0;
}
