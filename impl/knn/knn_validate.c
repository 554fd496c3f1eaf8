/* knn_validate.c - the kNN validator: every row judged in double precision
 * against the oracle's true distances (nn_validate.c's tree).
 *
 * A row is right when its first min(k, n) entries are distinct reference
 * points whose recomputed distances ascend, none beyond the true last
 * distance of the row (up to the float32 tie band of nn.h), and every point
 * nearer than that by more than the band is among them; then padding
 * (-1, +inf). Which points tie at the last distance is free: any of them
 * may be returned. The last rule needs no indices from the oracle: the
 * points below the band are distinct and the row's entries are too, so the
 * row holds all of them exactly when it holds as many as the oracle counts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impl/pcbench_judge.h"
#include "knn.h"

typedef enum {
    ROW_OK = 0,
    ROW_RANGE,     /* an index outside the reference */
    ROW_DUPLICATE, /* a point twice */
    ROW_DIST2,     /* a returned distance that is not its point's */
    ROW_ORDER,     /* not ascending */
    ROW_FAR,       /* a point beyond the true last distance */
    ROW_MISSING,   /* a nearer point left out */
    ROW_PADDING    /* padding that is not (-1, +inf) */
} row_fault;

static double d2_of(const pcb_task *t, int64_t query, int32_t j)
{
    const float *q = t->b + 3 * query, *p = t->a + (query / t->nq * t->n + j) * 3;
    const double dx = (double)q[0] - p[0], dy = (double)q[1] - p[1], dz = (double)q[2] - p[2];
    return dx * dx + dy * dy + dz * dz;
}

static int cmp_i32(const void *x, const void *y)
{
    const int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

static int below_band(double d, double last)
{
    return d * (1 + PCB_NN_REL_TOL) + PCB_NN_ABS_TOL < last;
}

/* Row q's first fault and the entry it is at. */
static row_fault judge_row(const pcb_task *t, const pcb_result *r, const double *truth, int64_t q,
                           int32_t *scratch, int64_t *at)
{
    const int64_t k = t->k, len = k < t->n ? k : t->n;
    const int32_t *id = r->index + q * k;
    const float *dist = r->dist2 ? r->dist2 + q * k : NULL;
    const double last = truth[len - 1];
    int64_t below = 0, want = 0;
    double prev = 0;
    for (int64_t s = 0; s < len; s++) {
        *at = s;
        if (id[s] < 0 || id[s] >= t->n)
            return ROW_RANGE;
        const double d = d2_of(t, q, id[s]);
        if (dist && !(fabs((double)dist[s] - d) <= d * PCB_NN_REL_TOL + PCB_NN_ABS_TOL))
            return ROW_DIST2;
        if (s && prev > d * (1 + PCB_NN_REL_TOL) + PCB_NN_ABS_TOL)
            return ROW_ORDER;
        if (d > last * (1 + PCB_NN_REL_TOL) + PCB_NN_ABS_TOL)
            return ROW_FAR;
        below += below_band(d, last);
        want += below_band(truth[s], last);
        prev = d;
        scratch[s] = id[s];
    }
    qsort(scratch, (size_t)len, sizeof *scratch, cmp_i32);
    for (int64_t s = 1; s < len; s++)
        if (scratch[s] == scratch[s - 1]) {
            for (*at = 0; id[*at] != scratch[s]; ++*at)
                ;
            return ROW_DUPLICATE;
        }
    *at = len;
    if (below != want)
        return ROW_MISSING;
    for (int64_t s = len; s < k; s++) {
        *at = s;
        if (id[s] != PCB_KNN_PAD || (dist && !(dist[s] == INFINITY)))
            return ROW_PADDING;
    }
    return ROW_OK;
}

int pcb_knn_validate(const pcb_task *t, const pcb_result *r, pcb_report *rep)
{
    if (!rep || !r || !r->index)
        return pcb_fail(PCB_EINVAL, "knn validate: missing result or report");
    memset(rep, 0, sizeof *rep);
    rep->recall = rep->worst_ratio = rep->gap = rep->bound = -1;
    int rc = pcb_task_check(t);
    if (rc != PCB_OK)
        return rc;
    if (t->problem != PCB_KNN)
        return pcb_fail(PCB_EINVAL, "knn validate: task is %s", pcb_problem_name(t->problem));
    const int64_t rows = t->batch * t->nq, len = t->k < t->n ? t->k : t->n;
    double *truth = malloc((size_t)(rows * len) * sizeof *truth);
    if (!truth)
        return pcb_fail(PCB_ENOMEM, "knn validate: no memory for %lld x %lld distances",
                        (long long)rows, (long long)len);
    if ((rc = pcb_knn_oracle(t, truth)) != PCB_OK) {
        free(truth);
        return rc;
    }
    int64_t first = rows, first_at = 0, wrong = 0;
    row_fault first_fault = ROW_OK;
    int oom = 0;
#pragma omp parallel reduction(+ : wrong)
    {
        int32_t *scratch = malloc((size_t)len * sizeof *scratch);
#pragma omp for schedule(dynamic, 256)
        for (int64_t q = 0; q < rows; q++) {
            if (!scratch) {
#pragma omp atomic write
                oom = 1;
                continue;
            }
            int64_t at = 0;
            const row_fault f = judge_row(t, r, truth + q * len, q, scratch, &at);
            if (f == ROW_OK)
                continue;
            wrong++;
#pragma omp critical(knn_first_fault)
            if (q < first)
                first = q, first_at = at, first_fault = f;
        }
        free(scratch);
    }
    if (oom) {
        free(truth);
        return pcb_fail(PCB_ENOMEM, "knn validate: no memory for a row of %lld", (long long)len);
    }
    rep->recall = rows ? 1.0 - (double)wrong / (double)rows : 1;
    rep->ok = wrong == 0;
    if (rep->ok) {
        snprintf(rep->detail, sizeof rep->detail, "%lld rows of %lld exact", (long long)rows,
                 (long long)t->k);
        free(truth);
        return PCB_OK;
    }
    const int64_t q = first, s = first_at, k = t->k, cloud = q / t->nq, qi = q % t->nq;
    const int32_t j = s < k ? r->index[q * k + s] : 0;
    const double last = truth[q * len + len - 1];
    char head[64];
    snprintf(head, sizeof head, "%lld of %lld rows wrong; query %lld of cloud %lld",
             (long long)wrong, (long long)rows, (long long)qi, (long long)cloud);
    switch (first_fault) {
    case ROW_RANGE:
        snprintf(rep->detail, sizeof rep->detail, "%s: neighbour %lld is %s%d (the reference has "
                 "%lld points)", head, (long long)s, j == PCB_KNN_PAD ? "padding " : "index ",
                 (int)j, (long long)t->n);
        break;
    case ROW_DUPLICATE:
        snprintf(rep->detail, sizeof rep->detail, "%s: point %d is returned twice", head, (int)j);
        break;
    case ROW_DIST2:
        snprintf(rep->detail, sizeof rep->detail, "%s: neighbour %lld has dist2 %.9g but point "
                 "%d is at %.9g", head, (long long)s, (double)r->dist2[q * k + s], (int)j,
                 d2_of(t, q, j));
        break;
    case ROW_ORDER:
        snprintf(rep->detail, sizeof rep->detail, "%s: not ascending at neighbour %lld (point %d "
                 "at %.9g after %.9g)", head, (long long)s, (int)j, d2_of(t, q, j),
                 d2_of(t, q, r->index[q * k + s - 1]));
        break;
    case ROW_FAR:
        snprintf(rep->detail, sizeof rep->detail, "%s: neighbour %lld (point %d at %.9g) is "
                 "beyond the true %lld-th distance %.9g", head, (long long)s, (int)j,
                 d2_of(t, q, j), (long long)len, last);
        break;
    case ROW_MISSING:
        snprintf(rep->detail, sizeof rep->detail, "%s: a point nearer than the true %lld-th "
                 "distance %.9g is missing", head, (long long)len, last);
        break;
    default:
        snprintf(rep->detail, sizeof rep->detail, "%s: entry %lld past the %lld neighbours is "
                 "(%d, %.9g), not the padding (-1, inf)", head, (long long)s, (long long)len,
                 (int)j, r->dist2 ? (double)r->dist2[q * k + s] : -1.0);
        break;
    }
    free(truth);
    return PCB_OK;
}
