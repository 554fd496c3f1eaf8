/* ball_validate.c - the ball-query validator: every row judged in double
 * precision against every point of its cloud.
 *
 * The radius has a band: a point whose double squared distance D is within
 * the float32 rounding of nn.h (PCB_NN_REL_TOL) of r2 may be inside or out,
 * since the float32 test d2 < r2 may go either way; below the band it is
 * surely inside, above it surely outside. A row is right when its count
 * entries are distinct points not surely outside, in the selection's order,
 * followed by padding (-1, +inf), and none missing:
 *   FIRST:   every surely inside point of lower index than the row's last
 *            (every one when the row is not full);
 *   NEAREST: every surely inside point nearer than the row's farthest by
 *            more than the band (every one when the row is not full).
 * Which band points are taken, and the order of equal distances, are free;
 * the canonical rule (judge.c) compares canonical implementations with
 * naive element for element. The count, when given, must be the row's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impl/pcbench_judge.h"
#include "ball.h"

typedef enum {
    ROW_OK = 0,
    ROW_COUNT,     /* a count outside 0..k, or not the row's */
    ROW_RANGE,     /* an index outside the cloud */
    ROW_DUPLICATE, /* a point twice */
    ROW_OUTSIDE,   /* a point outside the ball */
    ROW_DIST2,     /* a returned distance that is not its point's */
    ROW_ORDER,     /* not in the selection's order */
    ROW_MISSING,   /* an inside point the selection keeps, left out */
    ROW_PADDING    /* padding that is not (-1, +inf) */
} row_fault;

static const char *const fault_text[] = {
    "", "count", "index out of range", "a point twice", "a point outside the ball",
    "a wrong distance", "out of order", "an inside point missing", "bad padding"};

static double tol(double d)
{
    return d * PCB_NN_REL_TOL + PCB_NN_ABS_TOL;
}

static int cmp_i32(const void *x, const void *y)
{
    const int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* Row q's first fault and the entry it is at; D the squared distances of
 * every point of its cloud (filled here). */
static row_fault judge_row(const pcb_task *t, const pcb_result *r, int64_t q, double R2, double *D,
                           int32_t *scratch, int64_t *at)
{
    const int64_t k = t->k, n = t->n;
    const int32_t *id = r->index + q * k;
    const float *dist = r->dist2 ? r->dist2 + q * k : NULL;
    const float *c = t->b + 3 * q, *cloud = t->a + q / t->nq * n * 3;
    for (int64_t j = 0; j < n; j++) {
        const float *p = cloud + 3 * j;
        const double dx = (double)c[0] - p[0], dy = (double)c[1] - p[1], dz = (double)c[2] - p[2];
        D[j] = dx * dx + dy * dy + dz * dz;
    }
    int64_t len = 0;
    while (len < k && id[len] != PCB_KNN_PAD)
        len++;
    *at = 0;
    if (r->count && r->count[q] != len) {
        if (r->count[q] < 0 || r->count[q] > k || r->count[q] > len)
            return ROW_COUNT;
        *at = r->count[q]; /* the count stops before the row does */
        return ROW_PADDING;
    }
    const double outside = R2 + tol(R2);
    for (int64_t s = 0; s < len; s++) {
        *at = s;
        if (id[s] < 0 || id[s] >= n)
            return ROW_RANGE;
        const double d = D[id[s]];
        if (d > outside)
            return ROW_OUTSIDE;
        if (dist && !(fabs((double)dist[s] - d) <= tol(d)))
            return ROW_DIST2;
        if (s && (t->select == PCB_BALL_FIRST ? id[s] <= id[s - 1]
                                               : D[id[s - 1]] > d + tol(d)))
            return id[s] == id[s - 1] ? ROW_DUPLICATE : ROW_ORDER;
        scratch[s] = id[s];
    }
    qsort(scratch, (size_t)len, sizeof *scratch, cmp_i32);
    for (int64_t s = 1; s < len; s++)
        if (scratch[s] == scratch[s - 1]) {
            for (*at = 0; id[*at] != scratch[s]; ++*at)
                ;
            return ROW_DUPLICATE;
        }
    for (int64_t s = len; s < k; s++) {
        *at = s;
        if (id[s] != PCB_KNN_PAD || (dist && !(dist[s] == INFINITY)))
            return ROW_PADDING;
    }
    /* Completeness: the surely inside points the selection keeps, counted in
     * the cloud and in the row (whose entries are distinct). */
    const int full = len == k;
    int32_t last_id = 0;
    double last_d = 0;
    for (int64_t s = 0; s < len; s++) {
        last_id = id[s] > last_id ? id[s] : last_id;
        last_d = D[id[s]] > last_d ? D[id[s]] : last_d;
    }
    int64_t want = 0, have = 0;
    for (int64_t j = 0; j < n; j++) {
        const double d = D[j];
        if (!(d + tol(d) < R2))
            continue; /* not surely inside */
        if (!full || (t->select == PCB_BALL_FIRST ? j < last_id : d + tol(d) < last_d))
            want++;
    }
    for (int64_t s = 0; s < len; s++) {
        const double d = D[id[s]];
        if (d + tol(d) < R2 &&
            (!full || (t->select == PCB_BALL_FIRST ? id[s] < last_id : d + tol(d) < last_d)))
            have++;
    }
    *at = len;
    return want == have ? ROW_OK : ROW_MISSING;
}

int pcb_ball_validate(const pcb_task *t, const pcb_result *r, pcb_report *rep)
{
    if (!rep || !r || !r->index)
        return pcb_fail(PCB_EINVAL, "ball validate: missing result or report");
    memset(rep, 0, sizeof *rep);
    rep->recall = rep->worst_ratio = rep->gap = rep->bound = -1;
    int rc = pcb_task_check(t);
    if (rc != PCB_OK)
        return rc;
    if (t->problem != PCB_BALL)
        return pcb_fail(PCB_EINVAL, "ball validate: task is %s", pcb_problem_name(t->problem));
    const int64_t rows = t->batch * t->nq;
    const double R2 = (double)pcb_ball_r2(t->radius);
    int64_t first = rows, first_at = 0, wrong = 0, entries = 0;
    row_fault first_fault = ROW_OK;
    int oom = 0;
#pragma omp parallel reduction(+ : wrong, entries)
    {
        int32_t *scratch = malloc((size_t)t->k * sizeof *scratch);
        double *D = malloc((size_t)t->n * sizeof *D);
#pragma omp for schedule(dynamic, 16)
        for (int64_t q = 0; q < rows; q++) {
            if (!scratch || !D) {
#pragma omp atomic write
                oom = 1;
                continue;
            }
            int64_t at = 0;
            const row_fault f = judge_row(t, r, q, R2, D, scratch, &at);
            if (f == ROW_OK) {
                entries += r->count ? r->count[q] : 0;
                continue;
            }
            wrong++;
#pragma omp critical(ball_first_fault)
            if (q < first)
                first = q, first_at = at, first_fault = f;
        }
        free(scratch);
        free(D);
    }
    if (oom)
        return pcb_fail(PCB_ENOMEM, "ball validate: no memory for a row of %lld",
                        (long long)t->k);
    rep->recall = rows ? 1.0 - (double)wrong / (double)rows : 1;
    rep->ok = wrong == 0;
    const char *sel = pcb_ball_select_name(t->select);
    if (rep->ok) {
        if (r->count)
            snprintf(rep->detail, sizeof rep->detail, "%lld rows of %lld right (%s, %.1f points "
                     "a ball)", (long long)rows, (long long)t->k, sel,
                     rows ? (double)entries / (double)rows : 0.0);
        else
            snprintf(rep->detail, sizeof rep->detail, "%lld rows of %lld right (%s)",
                     (long long)rows, (long long)t->k, sel);
        return PCB_OK;
    }
    const int64_t q = first, s = first_at, k = t->k;
    const int32_t j = s < k ? r->index[q * k + s] : PCB_KNN_PAD;
    const float *c = t->b + 3 * q, *p = t->a + (q / t->nq * t->n + (j >= 0 && j < t->n ? j : 0)) * 3;
    const double dx = (double)c[0] - p[0], dy = (double)c[1] - p[1], dz = (double)c[2] - p[2];
    const double d = j >= 0 && j < t->n ? dx * dx + dy * dy + dz * dz : NAN;
    snprintf(rep->detail, sizeof rep->detail,
             "%lld of %lld rows wrong (%s, r2 %.9g); centre %lld of cloud %lld: %s at entry %lld "
             "(point %d at %.9g; count %d)",
             (long long)wrong, (long long)rows, sel, R2, (long long)(q % t->nq),
             (long long)(q / t->nq), fault_text[first_fault], (long long)s, (int)j, d,
             r->count ? (int)r->count[q] : -1);
    return PCB_OK;
}
