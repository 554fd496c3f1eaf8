/* fps_problem.c - farthest point sampling's face in the library: its
 * arguments, its answer (m sample indices a cloud), its judge, and pcb_fps. */
#include <stdint.h>

#include "impl/problem.h"

static int check(const pcb_task *t)
{
    const pcb_memory mem = t->memory;
    int rc = pcb_check_cloud("cloud", t->a, t->batch, t->n, mem, t->lengths_a);
    if (rc != PCB_OK)
        return rc;
    if (t->m < 1 || t->m > t->n)
        return pcb_fail(PCB_EINVAL, "samples m = %lld must be in 1..n (n = %lld)",
                        (long long)t->m, (long long)t->n);
    if (t->start < 0 || t->start >= t->n)
        return pcb_fail(PCB_EINVAL, "start index %lld out of range 0..%lld",
                        (long long)t->start, (long long)t->n - 1);
    for (int64_t i = 0; mem == PCB_MEM_HOST && t->lengths_a && i < t->batch; i++)
        if (t->lengths_a[i] > 0 && t->start >= t->lengths_a[i])
            return pcb_fail(PCB_EINVAL, "start index %lld out of range of cloud %lld "
                            "(%lld points)", (long long)t->start, (long long)i,
                            (long long)t->lengths_a[i]);
    if (t->batch > (int64_t)(SIZE_MAX / sizeof(int32_t)) / t->m)
        return pcb_fail(PCB_EINVAL, "batch x m overflows memory sizes");
    return PCB_OK;
}

/* a quarter of the cloud, from its last point */
static void sample(pcb_task *t)
{
    t->m = (t->n + 3) / 4, t->start = t->n - 1;
}

const pcb_problem_face pcb_fps_problem = {
    .check = check,
    .validate = pcb_fps_validate,
    .groups = 1,
    .rows = {PCB_ROWS_SAMPLES},
    .canonical = "not canonical: cloud %lld step %lld is %ld, %s took %ld",
    .sample = sample,
};

int pcb_fps(const float *xyz, int64_t batch, int64_t n, int64_t m, int64_t start, int32_t *idx)
{
    pcb_task t = {.problem = PCB_FPS, .batch = batch, .n = n, .m = m, .start = start, .a = xyz};
    pcb_result r = {.index = idx};
    return pcb_run_best(&t, &r);
}
