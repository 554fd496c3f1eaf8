/* defects.c - what the planted defects share: a variant's life cycle, the
 * expanded-norm NN, the verdict's rule. The catalog of known defects of the
 * field's implementations, each planted in a small CPU variant, is each
 * problem's face's (bench/problems/<p>.c, gathered by problems.c),
 * registered apart from the real implementations:
 * never in pcb_registry(), so never listed, benchmarked or picked by
 * pcb_best. `pcbench verify --defects` runs them over the verify matrices
 * and must catch every one (README: "Defect catalog"); a variant marked
 * `accepted` is correct under this project's rules and must pass. FLANN's
 * randomized trees are the real registered implementation, entered too:
 * approximate by design, they pass verification and are caught by their
 * recall below 1. The one GPU variant, cuda_unrolled with a racing argmax,
 * is defect_torn_argmax.cu beside this file (a template switch of
 * cuda_unrolled's kernel) and runs only where a CUDA device is. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "defects.h"

void pcb_variant_release(void *state)
{
    pcb_variant *v = state;
    if (v)
        pcb_result_free(&v->r);
    free(v);
}

int pcb_variant_prepare(const pcb_task *t, void **state)
{
    pcb_variant *v = calloc(1, sizeof *v);
    if (!v || pcb_result_alloc(t, &v->r) != PCB_OK) {
        free(v);
        return pcb_fail(PCB_ENOMEM, "defect variant: out of memory");
    }
    v->task = *t;
    v->idx = v->r.index, v->dist2 = v->r.dist2, v->value = v->r.value, v->count = v->r.count;
    *state = v;
    return PCB_OK;
}

int pcb_variant_fetch(void *state, pcb_result *out)
{
    pcb_variant *v = state;
    pcb_result_copy(&v->task, out, &v->r);
    return PCB_OK;
}

void pcb_variant_expanded_nn(const pcb_task *t, int32_t *idx, float *dist2)
{
    for (int64_t b = 0; b < t->batch; b++)
        for (int64_t i = 0; i < t->nq; i++) {
            const float *q = t->b + (b * t->nq + i) * 3, *ref = t->a + b * t->n * 3;
            const float qq = q[0] * q[0] + q[1] * q[1] + q[2] * q[2];
            float best = INFINITY;
            int32_t at = 0;
            for (int64_t k = 0; k < t->n; k++) {
                const float *p = ref + 3 * k;
                float d = qq + (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) -
                          2 * (q[0] * p[0] + q[1] * p[1] + q[2] * p[2]);
                if (d < best)
                    best = d, at = (int32_t)k;
            }
            idx[b * t->nq + i] = at;
            dist2[b * t->nq + i] = best < 0 ? 0 : best;
        }
}

int pcb_defect_caught(const pcb_defect *d, const pcb_judgement *j)
{
    if (j->verdict == PCB_VERDICT_FAIL)
        return 1;
    /* approximate by design: caught by its misses */
    return d->by_recall && j->rep.recall >= 0 && j->rep.recall < 1;
}
