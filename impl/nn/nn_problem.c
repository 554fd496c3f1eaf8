/* nn_problem.c - the nearest neighbour's face in the library: its
 * arguments, its answer (an index and a squared distance a query), its
 * judge, pcb_nn, and an index kept on the device (pcb_nn_index_*). */
#include <stdlib.h>

#include "impl/problem.h"

static int check(const pcb_task *t)
{
    int rc = pcb_check_cloud("reference cloud", t->a, t->batch, t->n, t->memory, t->lengths_a);
    return rc != PCB_OK ? rc
                        : pcb_check_cloud("query cloud", t->b, t->batch, t->nq, t->memory,
                                          t->lengths_b);
}

static int validate(const pcb_task *t, const pcb_result *r, const pcb_promise *p,
                    pcb_report *rep)
{
    return pcb_nn_validate(t, r, p->exact, rep);
}

const pcb_problem_face pcb_nn_problem = {
    .check = check,
    .validate_promised = validate,
    .groups = 1,
    .rows = {PCB_ROWS_B},
    .reads_b = 1,
    .distances = 1,
};

int pcb_nn(const float *ref, const float *query, int64_t batch, int64_t n, int64_t nq,
           int32_t *idx, float *dist2)
{
    pcb_task t = {.problem = PCB_NN, .batch = batch, .n = n, .nq = nq, .a = ref, .b = query};
    pcb_result r = {.index = idx, .dist2 = dist2};
    return pcb_run_best(&t, &r);
}

struct pcb_nn_index {
    const pcb_impl *impl;
    void *state;
    int64_t batch;
};

int pcb_nn_index_build(const pcb_impl *impl, const pcb_task *t, int32_t *finite,
                       pcb_nn_index **index)
{
    if (!impl || !t || !index)
        return pcb_fail(PCB_EINVAL, "nn index: missing implementation, task or index");
    *index = NULL;
    if (t->problem != PCB_NN || t->memory != PCB_MEM_DEVICE)
        return pcb_fail(PCB_EINVAL, "nn index: needs a device-resident NN task");
    if (t->lengths_a || t->lengths_b)
        return pcb_fail(PCB_EUNSUPPORTED, "nn index: no ragged batches");
    pcb_task check = *t;
    check.b = check.b ? check.b : check.a; /* the queries come later */
    int rc;
    if ((rc = pcb_task_check(&check)) != PCB_OK || (rc = pcb_task_fits(impl, &check)) != PCB_OK ||
        (rc = pcb_impl_available(impl)) != PCB_OK)
        return rc;
    if (!impl->device_index)
        return pcb_fail(PCB_EUNSUPPORTED, "nn %s keeps no index on the device", impl->name);
    pcb_nn_index *x = calloc(1, sizeof *x);
    if (!x)
        return pcb_fail(PCB_ENOMEM, "nn index: out of memory");
    x->impl = impl;
    x->batch = t->batch;
    if ((rc = impl->device_index->build(&check, finite, &x->state)) != PCB_OK) {
        free(x);
        return rc;
    }
    *index = x;
    return PCB_OK;
}

int pcb_nn_index_query(pcb_nn_index *index, const float *query, int64_t nq, pcb_result *out,
                       void *stream)
{
    if (!index || !query || !out || !out->index)
        return pcb_fail(PCB_EINVAL, "nn index query: missing index, queries or result array");
    if (nq < 1 || index->batch > INT64_MAX / 3 / nq)
        return pcb_fail(PCB_EINVAL, "nn index query: %lld queries a cloud", (long long)nq);
    return index->impl->device_index->query(index->state, query, nq, out, stream);
}

void pcb_nn_index_free(pcb_nn_index *index)
{
    if (!index)
        return;
    index->impl->device_index->release(index->state);
    free(index);
}
