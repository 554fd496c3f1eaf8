/* run.c - the life cycle of one run, the choice of the fastest exact
 * implementation, and the simple entry points' body (pcb_run_best: each
 * problem's one-call function is in its folder, impl/<p>/<p>_problem.c). */
#include <stdlib.h>
#include <string.h>

#include "problem.h"
#include "ragged.h"

static int each_run(const pcb_impl *impl, const pcb_task *t, pcb_result *out,
                    pcb_counters *counters);

int pcb_run(const pcb_impl *impl, const pcb_task *t, pcb_result *out, pcb_counters *counters)
{
    int rc;
    void *state = NULL;
    if (!impl || !out || !(out->index || out->index64))
        return pcb_fail(PCB_EINVAL, "pcb_run: missing implementation or result array");
    if ((rc = pcb_task_check(t)) != PCB_OK || (rc = pcb_task_fits(impl, t)) != PCB_OK ||
        (rc = pcb_impl_available(impl)) != PCB_OK)
        return rc;
    if (out->index64 && (!impl->index64 || t->memory != PCB_MEM_DEVICE))
        return pcb_fail(PCB_EUNSUPPORTED, "%s %s: int64 indices only from device runs of the "
                        "implementations that write them", pcb_problem_name(impl->problem),
                        impl->name);
    if (t->memory == PCB_MEM_DEVICE)
        return impl->run_device(t, out); /* queued on the task's stream, not waited for */
    if ((t->lengths_a || t->lengths_b) && !impl->ragged)
        return each_run(impl, t, out, counters);
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

/* A ragged host task cloud by cloud (an implementation that does not read
 * lengths): pcb_each's phases. */
static int each_run(const pcb_impl *impl, const pcb_task *t, pcb_result *out,
                    pcb_counters *counters)
{
    pcb_each *e = NULL;
    int rc = pcb_each_prepare(impl, t, &e);
    if (rc == PCB_OK && (rc = pcb_each_compute(e)) == PCB_OK &&
        (rc = pcb_each_sync(e)) == PCB_OK && (rc = pcb_each_fetch(e, out)) == PCB_OK &&
        counters)
        rc = pcb_each_counters(e, counters);
    pcb_each_release(e);
    return rc;
}

/* Verified right: exact, or certified within a promised gap (EMD's prices),
 * and no known defect (the classic FPS kernel's repeats, a forced stop). */
static int verified(const pcb_impl *impl)
{
    return !impl->promise.known_defect &&
           (impl->promise.exact ||
            (pcb_face(impl->problem)->certified && impl->promise.max_gap > 0));
}

/* Within the sizes it is preferred for (limits.best_max_n). */
static int preferred(const pcb_impl *impl, const pcb_task *t)
{
    const int64_t n = t->n > t->nq ? t->n : t->nq;
    return !impl->limits.best_max_n || n <= impl->limits.best_max_n;
}

/* The first registered implementation (the fastest) of t's problem, of
 * device (-1: any), exact or only verified, that accepts t and is available,
 * among those preferred for t's size, else among all; NULL with PCB_OK when
 * none. */
static int first_fit(const pcb_task *t, int device, int exact, const pcb_impl **out)
{
    if (!out)
        return pcb_fail(PCB_EINVAL, "no place for the implementation chosen");
    *out = NULL;
    int rc = pcb_task_check(t);
    for (int pass = 0; pass < 2 && rc == PCB_OK && !*out; pass++)
        for (const pcb_impl *const *it = pcb_registry(); *it && !*out; it++) {
            const pcb_impl *impl = *it;
            if (impl->problem == t->problem && (device < 0 || (int)impl->device == device) &&
                verified(impl) && (!exact || impl->promise.exact) && (pass || preferred(impl, t)) &&
                pcb_task_fits(impl, t) == PCB_OK && pcb_impl_available(impl) == PCB_OK)
                *out = impl;
        }
    return rc;
}

int pcb_best(const pcb_task *t, const pcb_impl **out)
{
    int rc = first_fit(t, -1, 1, out);
    if (rc == PCB_OK && !*out)
        rc = pcb_fail(PCB_EUNAVAIL, "no available exact %s implementation accepts this task",
                      pcb_problem_name(t->problem));
    return rc;
}

int pcb_choose(const pcb_task *t, pcb_device device, const pcb_impl **out)
{
    int rc = first_fit(t, (int)device, 0, out);
    if (rc == PCB_OK && !*out)
        rc = pcb_fail(PCB_EUNAVAIL, "no available %s implementation for %s accepts this task%s%s",
                      pcb_problem_name(t->problem), pcb_device_name(device),
                      t->memory == PCB_MEM_DEVICE ? " on device memory" : "",
                      t->lengths_a || t->lengths_b ? " (a ragged batch)" : "");
    return rc;
}

const char *pcb_impl_name(const pcb_impl *impl)
{
    return impl ? impl->name : "";
}

int pcb_impl_warm(const pcb_impl *impl)
{
    return impl && impl->warm_start;
}

int pcb_impl_index64(const pcb_impl *impl)
{
    return impl && impl->index64;
}

size_t pcb_abi_size(const char *type)
{
#define PCB_ABI_SIZE(name)                                                                  \
    if (type && !strcmp(type, #name))                                                     \
        return sizeof(name);
    PCB_ABI_SIZE(pcb_task)
    PCB_ABI_SIZE(pcb_result)
    PCB_ABI_SIZE(pcb_options)
    PCB_ABI_SIZE(pcb_report)
    PCB_ABI_SIZE(pcb_promise)
    PCB_ABI_SIZE(pcb_judgement)
#undef PCB_ABI_SIZE
    return 0;
}

#ifndef PCB_HAVE_CUDA
void pcb_device_cache_clear(int graphs)
{
    (void)graphs;
}
#endif

int pcb_run_best(const pcb_task *t, pcb_result *r)
{
    const pcb_impl *impl;
    int rc = pcb_best(t, &impl);
    return rc == PCB_OK ? pcb_run(impl, t, r, NULL) : rc;
}
