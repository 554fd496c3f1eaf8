/* run.c - the life cycle of one run, the choice of the fastest exact
 * implementation and the simple entry points. */
#include "pcbench.h"

int pcb_run(const pcb_impl *impl, const pcb_task *t, pcb_result *out, pcb_counters *counters)
{
    int rc;
    void *state = NULL;
    if (!impl || !out || !out->index)
        return pcb_fail(PCB_EINVAL, "pcb_run: missing implementation or result array");
    if ((rc = pcb_task_check(t)) != PCB_OK || (rc = pcb_task_fits(impl, t)) != PCB_OK ||
        (rc = pcb_impl_available(impl)) != PCB_OK)
        return rc;
    if ((rc = impl->prepare(t, &state)) == PCB_OK && (rc = impl->compute(state)) == PCB_OK &&
        (!impl->sync || (rc = impl->sync(state)) == PCB_OK) &&
        (rc = impl->fetch(state, out)) == PCB_OK && counters) {
        counters->distance_evals = counters->bids = counters->iterations = -1;
        if (impl->counters)
            rc = impl->counters(state, counters);
    }
    if (impl->release)
        impl->release(state);
    return rc;
}

int pcb_best(const pcb_task *t, const pcb_impl **out)
{
    if (!out)
        return pcb_fail(PCB_EINVAL, "best: nowhere to put the implementation");
    *out = NULL;
    int rc = pcb_task_check(t);
    if (rc != PCB_OK)
        return rc;
    for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
        const pcb_impl *impl = *it;
        if (impl->problem == t->problem && impl->exact && pcb_task_fits(impl, t) == PCB_OK &&
            pcb_impl_available(impl) == PCB_OK) {
            *out = impl;
            return PCB_OK;
        }
    }
    return pcb_fail(PCB_EUNAVAIL, "no available exact %s implementation accepts this task",
                    pcb_problem_name(t->problem));
}

static int run_best(const pcb_task *t, pcb_result *r)
{
    const pcb_impl *impl;
    int rc = pcb_best(t, &impl);
    return rc == PCB_OK ? pcb_run(impl, t, r, NULL) : rc;
}

int pcb_fps(const float *xyz, int64_t batch, int64_t n, int64_t m, int64_t start, int32_t *idx)
{
    pcb_task t = {.problem = PCB_FPS, .batch = batch, .n = n, .m = m, .start = start, .a = xyz};
    pcb_result r = {.index = idx};
    return run_best(&t, &r);
}

int pcb_nn(const float *ref, int64_t n, const float *query, int64_t nq, int64_t batch,
           int32_t *idx, float *dist2)
{
    pcb_task t = {.problem = PCB_NN, .batch = batch, .n = n, .nq = nq, .a = ref, .b = query};
    pcb_result r = {.index = idx, .dist2 = dist2};
    return run_best(&t, &r);
}

int pcb_emd(const float *a, const float *b, int64_t batch, int64_t n, int32_t *match,
            double *value)
{
    pcb_task t = {.problem = PCB_EMD, .batch = batch, .n = n, .nq = n, .a = a, .b = b};
    pcb_result r = {.index = match, .value = value};
    return run_best(&t, &r);
}
