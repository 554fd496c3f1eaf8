/* chamfer_validate.c - the chamfer validator: each direction judged by the
 * NN validator (double precision, any nearest index accepted), then each
 * pair's value against the value of the true distances. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impl/nn/nn.h"
#include "impl/pcbench_judge.h"
#include "chamfer.h"

int pcb_chamfer_oracle(const pcb_task *t, double *d2)
{
    int rc = pcb_task_check(t);
    if (rc != PCB_OK)
        return rc;
    if (t->problem != PCB_CHAMFER || !d2)
        return pcb_fail(PCB_EINVAL, "chamfer oracle: not a chamfer task or no output array");
    for (int k = 0; k < 2 && rc == PCB_OK; k++) {
        const pcb_task dir = pcb_chamfer_direction(t, k);
        rc = pcb_nn_oracle(&dir, d2 + (k ? t->batch * t->n : 0), NULL);
    }
    return rc;
}

/* Pair b's true value and its two directions' distances, from the oracle. */
static double true_value(const pcb_task *t, const double *truth, int64_t b, double *scratch)
{
    const pcb_chamfer_convention standard = {PCB_CD_SQUARED, PCB_CD_MEAN, PCB_CD_BOTH};
    memcpy(scratch, truth + b * t->n, (size_t)t->n * sizeof *scratch);
    memcpy(scratch + t->n, truth + t->batch * t->n + b * t->nq, (size_t)t->nq * sizeof *scratch);
    return pcb_chamfer_combine(scratch, t->n, scratch + t->n, t->nq, &standard);
}

int pcb_chamfer_validate(const pcb_task *t, const pcb_result *r, pcb_report *rep)
{
    if (!rep || !r || !r->index || !r->dist2)
        return pcb_fail(PCB_EINVAL, "chamfer validate: missing result, its dist2 or report");
    memset(rep, 0, sizeof *rep);
    rep->recall = rep->worst_ratio = rep->gap = rep->bound = -1;
    int rc = pcb_task_check(t);
    if (rc != PCB_OK)
        return rc;
    if (t->problem != PCB_CHAMFER)
        return pcb_fail(PCB_EINVAL, "chamfer validate: task is %s", pcb_problem_name(t->problem));
    static const char *const dir_name[2] = {"A to B", "B to A"};
    for (int k = 0; k < 2; k++) {
        const pcb_task dir = pcb_chamfer_direction(t, k);
        const int64_t at = k ? t->batch * t->n : 0;
        const pcb_result one = {.index = r->index + at, .dist2 = r->dist2 + at};
        if ((rc = pcb_nn_validate(&dir, &one, 1, rep)) != PCB_OK)
            return rc;
        if (!rep->ok) {
            char detail[sizeof rep->detail];
            memcpy(detail, rep->detail, sizeof detail);
            snprintf(rep->detail, sizeof rep->detail, "%s: %.*s", dir_name[k],
                     (int)(sizeof rep->detail - 16), detail);
            return PCB_OK;
        }
    }
    rep->ok = 0;
    if (r->value) {
        const int64_t total = t->batch * (t->n + t->nq);
        double *truth = malloc((size_t)total * sizeof *truth);
        double *scratch = malloc((size_t)(t->n + t->nq) * sizeof *scratch);
        if (!truth || !scratch) {
            free(truth), free(scratch);
            return pcb_fail(PCB_ENOMEM, "chamfer validate: out of memory");
        }
        if ((rc = pcb_chamfer_oracle(t, truth)) != PCB_OK) {
            free(truth), free(scratch);
            return rc;
        }
        for (int64_t b = 0; b < t->batch; b++) {
            const double want = true_value(t, truth, b, scratch), got = r->value[b];
            if (!(fabs(got - want) <= want * PCB_CHAMFER_REL_TOL + PCB_CHAMFER_ABS_TOL)) {
                snprintf(rep->detail, sizeof rep->detail,
                         "pair %lld: value %.9g, the nearest distances give %.9g", (long long)b,
                         got, want);
                free(truth), free(scratch);
                return PCB_OK;
            }
        }
        free(truth), free(scratch);
    }
    rep->ok = 1;
    snprintf(rep->detail, sizeof rep->detail, "%lld + %lld points a pair exact%s",
             (long long)t->n, (long long)t->nq, r->value ? ", values right" : "");
    return PCB_OK;
}

int pcb_chamfer_check_value(const pcb_task *t, double value, const pcb_chamfer_convention *c,
                            double *want, int *ok)
{
    int rc = pcb_task_check(t);
    if (rc != PCB_OK)
        return rc;
    if (t->problem != PCB_CHAMFER || !c || !want || !ok)
        return pcb_fail(PCB_EINVAL, "chamfer check: need a chamfer task, convention and outputs");
    const int64_t total = t->batch * (t->n + t->nq);
    double *truth = malloc((size_t)total * sizeof *truth);
    if (!truth)
        return pcb_fail(PCB_ENOMEM, "chamfer check: out of memory");
    if ((rc = pcb_chamfer_oracle(t, truth)) == PCB_OK) {
        /* one pair: the true value in convention c */
        *want = pcb_chamfer_combine(truth, t->n, truth + t->n, t->nq, c);
        *ok = fabs(value - *want) <= fabs(*want) * PCB_CHAMFER_REL_TOL + PCB_CHAMFER_ABS_TOL;
    }
    free(truth);
    return rc;
}
