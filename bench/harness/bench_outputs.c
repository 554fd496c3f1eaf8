/* bench_outputs.c - the result arrays of one run: allocated for a task,
 * poisoned before each fetch (compared bit for bit by
 * pcb_result_equal). */
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
