/* bench_life.c - an implementation's life cycle as the harness runs it: its
 * own phases; on a ragged task whose lengths it does not read
 * (pcb_impl.ragged 0), pcb_each's, one cloud at a time. So a ragged
 * configuration times the implementations that take the batch whole beside
 * the sum of single-cloud runs of the others, in the same figures. */
#include "bench_run.h"

int bench_life_each(const pcb_impl *im, const pcb_task *t)
{
    return (t->lengths_a || t->lengths_b) && !im->ragged;
}

int bench_life_prepare(const pcb_impl *im, const pcb_task *t, void **state)
{
    if (bench_life_each(im, t))
        return pcb_each_prepare(im, t, (pcb_each **)state);
    return im->prepare(t, state);
}

int bench_life_compute(const pcb_impl *im, const pcb_task *t, void *state)
{
    return bench_life_each(im, t) ? pcb_each_compute(state) : im->compute(state);
}

int bench_life_sync(const pcb_impl *im, const pcb_task *t, void *state)
{
    if (bench_life_each(im, t))
        return pcb_each_sync(state);
    return im->sync ? im->sync(state) : PCB_OK;
}

int bench_life_fetch(const pcb_impl *im, const pcb_task *t, void *state, pcb_result *out)
{
    return bench_life_each(im, t) ? pcb_each_fetch(state, out) : im->fetch(state, out);
}

int bench_life_counters(const pcb_impl *im, const pcb_task *t, void *state, pcb_counters *out)
{
    if (bench_life_each(im, t))
        return pcb_each_counters(state, out);
    out->distance_evals = out->bids = out->iterations = -1;
    return im->counters ? im->counters(state, out) : PCB_OK;
}

int bench_life_device_ms(const pcb_impl *im, const pcb_task *t, void *state, double *ms)
{
    return bench_life_each(im, t) ? pcb_each_device_ms(state, ms) : im->device_ms(state, ms);
}

void bench_life_release(const pcb_impl *im, const pcb_task *t, void *state)
{
    if (bench_life_each(im, t))
        pcb_each_release(state);
    else
        im->release(state);
}
