/* each.c - a ragged host task cloud by cloud, through an implementation
 * that does not read lengths: each non-empty cloud its own task (batch 1,
 * ragged.c) and its own state, the life cycle's phases run over all of
 * them. pcb_run runs it whole; the benchmark harness times its phases like
 * any implementation's, so "one call a cloud" is measured the way every
 * other figure is. */
#include <math.h>
#include <stdlib.h>

#include "problem.h"
#include "ragged.h"

typedef struct {
    int64_t index; /* its place in the batch */
    pcb_task task;
    void *state;
} each_cloud;

struct pcb_each {
    const pcb_impl *impl;
    pcb_task task;
    int64_t count; /* clouds with a task of their own */
    each_cloud *clouds;
};

void pcb_each_release(pcb_each *e)
{
    if (!e)
        return;
    for (int64_t c = 0; c < e->count; c++)
        if (e->impl->release)
            e->impl->release(e->clouds[c].state);
    free(e->clouds);
    free(e);
}

int pcb_each_prepare(const pcb_impl *impl, const pcb_task *t, pcb_each **out)
{
    *out = NULL;
    pcb_each *e = calloc(1, sizeof *e);
    if (!e || !(e->clouds = calloc((size_t)t->batch, sizeof *e->clouds))) {
        free(e);
        return pcb_fail(PCB_ENOMEM, "%s: out of memory for a ragged batch", impl->name);
    }
    e->impl = impl;
    e->task = *t;
    int rc = PCB_OK;
    for (int64_t i = 0; i < t->batch && rc == PCB_OK; i++) {
        each_cloud *c = &e->clouds[e->count];
        if (!pcb_ragged_cloud(t, i, &c->task))
            continue; /* empty: its answer is made in fetch */
        c->index = i;
        if ((rc = pcb_task_fits(impl, &c->task)) == PCB_OK &&
            (rc = impl->prepare(&c->task, &c->state)) == PCB_OK)
            e->count++;
    }
    if (rc != PCB_OK) {
        pcb_each_release(e);
        return rc;
    }
    *out = e;
    return PCB_OK;
}

int pcb_each_compute(pcb_each *e)
{
    int rc = PCB_OK;
    for (int64_t c = 0; c < e->count && rc == PCB_OK; c++)
        rc = e->impl->compute(e->clouds[c].state);
    return rc;
}

int pcb_each_sync(pcb_each *e)
{
    int rc = PCB_OK;
    for (int64_t c = 0; c < e->count && rc == PCB_OK && e->impl->sync; c++)
        rc = e->impl->sync(e->clouds[c].state);
    return rc;
}

int pcb_each_fetch(pcb_each *e, pcb_result *out)
{
    const pcb_task *t = &e->task;
    for (int64_t i = 0; i < t->batch; i++) {
        pcb_ragged_pad(t, i, out);
        pcb_task alone;
        if (!pcb_ragged_cloud(t, i, &alone) && pcb_face(t->problem)->valued)
            pcb_ragged_empty(t, i, out);
    }
    int rc = PCB_OK;
    for (int64_t c = 0; c < e->count && rc == PCB_OK; c++) {
        const each_cloud *cl = &e->clouds[c];
        pcb_result part;
        if ((rc = pcb_ragged_part(&cl->task, out, &part)) != PCB_OK)
            break;
        double bound = out->bound ? out->bound[cl->index] : NAN;
        free(part.bound);
        part.bound = out->bound ? &bound : NULL;
        if ((rc = e->impl->fetch(cl->state, &part)) == PCB_OK)
            pcb_ragged_move(t, cl->index, out, &part, 1);
        part.bound = NULL;
        pcb_result_free(&part);
    }
    return rc;
}

int pcb_each_counters(pcb_each *e, pcb_counters *out)
{
    pcb_counters sum = {0, 0, 0};
    int rc = PCB_OK, counted = 0;
    for (int64_t c = 0; c < e->count && rc == PCB_OK && e->impl->counters; c++) {
        pcb_counters one;
        if ((rc = e->impl->counters(e->clouds[c].state, &one)) == PCB_OK &&
            one.distance_evals >= 0) {
            sum.distance_evals += one.distance_evals, sum.bids += one.bids;
            sum.iterations += one.iterations, counted = 1;
        }
    }
    *out = sum;
    if (!counted)
        out->distance_evals = out->bids = out->iterations = -1;
    return rc;
}

int pcb_each_device_ms(pcb_each *e, double *ms)
{
    *ms = 0;
    if (!e->impl->device_ms)
        return pcb_fail(PCB_EUNSUPPORTED, "%s: no device time", e->impl->name);
    int rc = PCB_OK;
    for (int64_t c = 0; c < e->count && rc == PCB_OK; c++) {
        double one = 0;
        if ((rc = e->impl->device_ms(e->clouds[c].state, &one)) == PCB_OK)
            *ms += one;
    }
    return rc;
}
