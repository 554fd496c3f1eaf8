/* bench_outputs.c - the result arrays of one run: allocated for a task,
 * poisoned before each fetch, compared bit for bit. */
#include <stdlib.h>
#include <string.h>

#include "bench_run.h"

int bench_outputs_alloc(outputs *o, const pcb_task *t)
{
    memset(o, 0, sizeof *o);
    o->count = (size_t)pcb_answer_count(t);
    o->batch = (size_t)t->batch;
    o->index = malloc(o->count * sizeof *o->index);
    o->dist2 = malloc(o->count * sizeof *o->dist2);
    o->value = malloc(o->batch * sizeof *o->value);
    o->price = malloc(o->count * sizeof *o->price);
    if (!o->index || !o->dist2 || !o->value || !o->price)
        return pcb_fail(PCB_ENOMEM, "no memory for %zu results", o->count);
    return PCB_OK;
}

void bench_outputs_free(outputs *o)
{
    free(o->index), free(o->dist2), free(o->value), free(o->price);
    memset(o, 0, sizeof *o);
}

/* Poison first: every element must be written by fetch. */
pcb_result bench_outputs_result(outputs *o)
{
    for (size_t i = 0; i < o->count; i++)
        o->index[i] = PCB_POISON;
    pcb_result r = {.index = o->index, .dist2 = o->dist2, .value = o->value, .price = o->price};
    return r;
}

int bench_outputs_equal(const outputs *a, const outputs *b, pcb_problem p)
{
    if (memcmp(a->index, b->index, a->count * sizeof *a->index) != 0)
        return 0;
    if (p == PCB_NN && memcmp(a->dist2, b->dist2, a->count * sizeof *a->dist2) != 0)
        return 0;
    return p != PCB_EMD || memcmp(a->value, b->value, a->batch * sizeof *a->value) == 0;
}
