/* registry.c - the one list of implementations and those not built here
 * (the names of problems and devices: names.c).
 *
 * Adding an implementation: write impl/<problem>/<problem>_<name>.c (or .cu)
 * defining `const pcb_impl pcb_<problem>_<name>`, then add one line to
 * registry_list.h in its problem's block, in speed order (fastest first). */
#include <string.h>

#include "pcbench_impl.h"

#ifdef PCB_HAVE_CUDA
#define CUDA_IMPL(p, n) IMPL(p, n)
#else
#define CUDA_IMPL(p, n) MISSING(p, n, PCB_CUDA, "nvcc")
#endif
#ifdef PCB_HAVE_FLANN
#define FLANN_IMPL(p, n) IMPL(p, n)
#else
#define FLANN_IMPL(p, n) MISSING(p, n, PCB_CPU, "libflann-dev")
#endif

#ifdef PCB_HAVE_NANOFLANN
#define NANOFLANN_IMPL(p, n) IMPL(p, n)
#else
#define NANOFLANN_IMPL(p, n) MISSING(p, n, PCB_CPU, "libnanoflann-dev")
#endif

#define IMPL(p, n) extern const pcb_impl pcb_##p##_##n;
#define MISSING(p, n, device, needs)
#include "registry_list.h"
#undef IMPL
#undef MISSING

static const pcb_impl *const all[] = {
#define IMPL(p, n) &pcb_##p##_##n,
#define MISSING(p, n, device, needs)
#include "registry_list.h"
#undef IMPL
#undef MISSING
    NULL};

static const pcb_missing missing[] = {
#define IMPL(p, n)
#define MISSING(p, n, device, needs) {#p, #n, device, needs},
#include "registry_list.h"
#undef IMPL
#undef MISSING
    {NULL, NULL, PCB_CPU, NULL}};

const pcb_impl *const *pcb_registry(void)
{
    return all;
}

const pcb_missing *pcb_not_built(void)
{
    return missing;
}

const pcb_missing *pcb_not_built_find(pcb_problem p, const char *name)
{
    for (const pcb_missing *m = missing; name && m->name; m++)
        if (strcmp(m->problem, pcb_problem_name(p)) == 0 && strcmp(m->name, name) == 0)
            return m;
    return NULL;
}

const pcb_impl *pcb_find(pcb_problem p, const char *name)
{
    if (!name) {
        pcb_fail(PCB_EINVAL, "find: no name given");
        return NULL;
    }
    for (const pcb_impl *const *it = all; *it; it++)
        if ((*it)->problem == p && strcmp((*it)->name, name) == 0)
            return *it;
    return NULL;
}

const pcb_impl *pcb_reference(pcb_problem p)
{
    for (const pcb_impl *const *it = all; *it; it++)
        if ((*it)->problem == p && (*it)->reference)
            return *it;
    return NULL;
}

int pcb_impl_available(const pcb_impl *impl)
{
    if (!impl)
        return pcb_fail(PCB_EINVAL, "no implementation given");
    return impl->available ? impl->available() : PCB_OK;
}
