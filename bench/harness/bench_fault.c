/* bench_fault.c - fault injection for the harness's own tests
 * (PCBENCH_FAULT, see pcbench bench --help): slower computes, changed work
 * counters, a valid answer that is not the canonical one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* ---- faults (for the regression gate's own test) ---------------------------- */
int bench_fault_parse(const char *spec, bench_fault *f, int max, int *count)
{
    *count = 0;
    if (!spec || !*spec)
        return PCB_OK;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (*count == max)
            return pcb_fail(PCB_EINVAL, "PCBENCH_FAULT: too many faults");
        bench_fault *x = &f[(*count)++];
        memset(x, 0, sizeof *x);
        x->slow = 1;
        char kind[8];
        double factor = 0;
        int used = 0;
        if (sscanf(item, "%7[a-z]:%7[a-z]/%47[a-z0-9_]%n", kind, x->problem, x->impl, &used) != 3)
            return pcb_fail(PCB_EINVAL, "PCBENCH_FAULT: '%s' is not kind:problem/impl[:n]", item);
        const char *rest = item + used;
        char tail;
        if (strcmp(kind, "slow") == 0 && sscanf(rest, ":%lf%c", &factor, &tail) == 1 &&
            factor >= 1 && factor <= 100)
            x->slow = factor;
        else if (strcmp(kind, "count") == 0 && !*rest)
            x->count = 1;
        else if (strcmp(kind, "ties") == 0 && strcmp(x->problem, "fps") == 0 && !*rest)
            x->ties = 1;
        else
            return pcb_fail(PCB_EINVAL, "PCBENCH_FAULT: '%s' (use slow:P/I:F, F from 1 to 100, "
                                        "count:P/I or ties:fps/I)", item);
    }
    return PCB_OK;
}

bench_fault bench_fault_for(const bench_fault *f, int nfaults, const pcb_impl *im)
{
    bench_fault sum = {.slow = 1};
    for (int i = 0; i < nfaults; i++)
        if (strcmp(f[i].problem, pcb_problem_name(im->problem)) == 0 &&
            strcmp(f[i].impl, im->name) == 0) {
            sum.slow *= f[i].slow;
            sum.count += f[i].count;
            sum.ties |= f[i].ties;
        }
    return sum;
}

int bench_fault_ties(const bench_fault *f, int nfaults, pcb_problem p)
{
    for (int i = 0; i < nfaults; i++)
        if (f[i].ties && strcmp(f[i].problem, pcb_problem_name(p)) == 0)
            return 1;
    return 0;
}

/* The FPS sequence that breaks exact ties toward the highest index, in
 * double precision as the validator measures: as right as dp's, but not
 * dp's wherever the farthest point has a copy. */
int bench_fault_plant_ties(const pcb_task *t, int32_t *index)
{
    double *mind = malloc((size_t)t->n * sizeof *mind);
    if (!mind)
        return pcb_fail(PCB_ENOMEM, "ties fault: out of memory");
    for (int64_t b = 0; b < t->batch; b++) {
        const float *xyz = t->a + 3 * b * t->n;
        int32_t *out = index + b * t->m;
        for (int64_t k = 0; k < t->n; k++)
            mind[k] = INFINITY;
        out[0] = (int32_t)t->start;
        for (int64_t j = 1; j < t->m; j++) {
            const float *q = xyz + 3 * (int64_t)out[j - 1];
            double best = -1;
            for (int64_t k = 0; k < t->n; k++) {
                const double dx = (double)xyz[3 * k] - q[0], dy = (double)xyz[3 * k + 1] - q[1],
                             dz = (double)xyz[3 * k + 2] - q[2];
                mind[k] = fmin(mind[k], dx * dx + dy * dy + dz * dz);
                if (mind[k] >= best) {
                    best = mind[k];
                    out[j] = (int32_t)k;
                }
            }
        }
    }
    free(mind);
    return PCB_OK;
}

int bench_fault_repeats(double slow, int64_t k)
{
    return (int)(floor((double)(k + 1) * slow) - floor((double)k * slow));
}
