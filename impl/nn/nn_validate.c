/* nn_validate.c - the NN validator and its double-precision oracle.
 *
 * The oracle is an exact k-d tree over each reference cloud in double, so
 * that a 120k x 120k check takes well under a second instead of minutes of
 * brute force. It is built afresh for every validation (no cache keyed by
 * pointers: a freed and reused buffer would return stale truth). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impl/pcbench_judge.h"
#include "nn.h"
#include "impl/knn/knn.h"

enum { LEAF_SIZE = 8 };

typedef struct {
    int32_t lo, hi;          /* the node's points: pts[lo..hi) in tree order */
    int32_t left, right;     /* children, -1 for a leaf */
    int dim;
    int same;                /* a leaf of identical points: one is enough */
    double split;            /* left points have coord <= split, right >= */
} kd_node;

typedef struct {
    double *pts;             /* n x 3, in tree order */
    int32_t *orig;           /* tree order -> index in the cloud */
    kd_node *nodes;
    int32_t count;
} kd_tree;

/* Three-way quickselect: afterwards order[k] holds the point whose
 * coordinate dim is the k-th smallest, smaller ones before it and larger
 * ones after. Three-way so that runs of equal coordinates stay linear. */
static void select_kth(const double *xyz, int32_t *order, int32_t lo, int32_t hi, int32_t k,
                       int dim)
{
    while (hi - lo > 1) {
        double pivot = xyz[3 * (int64_t)order[lo + (hi - lo) / 2] + dim];
        int32_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            double v = xyz[3 * (int64_t)order[i] + dim];
            int32_t tmp = order[i];
            if (v < pivot) {
                order[i++] = order[lt];
                order[lt++] = tmp;
            } else if (v > pivot) {
                order[i] = order[--gt];
                order[gt] = tmp;
            } else {
                i++;
            }
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return;
    }
}

static int32_t build(kd_tree *t, const double *xyz, int32_t *order, int32_t lo, int32_t hi)
{
    int32_t id = t->count++;
    kd_node *nd = &t->nodes[id];
    nd->lo = lo;
    nd->hi = hi;
    nd->left = nd->right = -1;
    nd->same = 0;
    double mn[3] = {INFINITY, INFINITY, INFINITY}, mx[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int32_t i = lo; i < hi; i++)
        for (int d = 0; d < 3; d++) {
            double v = xyz[3 * (int64_t)order[i] + d];
            mn[d] = v < mn[d] ? v : mn[d];
            mx[d] = v > mx[d] ? v : mx[d];
        }
    int dim = 0;
    for (int d = 1; d < 3; d++)
        if (mx[d] - mn[d] > mx[dim] - mn[dim])
            dim = d;
    /* Identical points cannot be split apart: they stay one leaf, searched
     * through one of them (all are at the same distance), so an all-equal
     * cloud of a million points costs one distance a query. */
    nd->same = !(mx[dim] > mn[dim]);
    if (hi - lo <= LEAF_SIZE || nd->same)
        return id;
    int32_t mid = lo + (hi - lo) / 2;
    select_kth(xyz, order, lo, hi, mid, dim);
    double split = xyz[3 * (int64_t)order[mid] + dim];
    int32_t left = build(t, xyz, order, lo, mid);
    int32_t right = build(t, xyz, order, mid, hi);
    nd->dim = dim;
    nd->split = split;
    nd->left = left;
    nd->right = right;
    return id;
}

static void kd_free(kd_tree *t)
{
    free(t->pts);
    free(t->orig);
    free(t->nodes);
}

static int kd_build(kd_tree *t, const float *cloud, int64_t n)
{
    memset(t, 0, sizeof *t);
    if (n < 1) /* the task checks say so first; here for the compiler's flow analysis */
        return pcb_fail(PCB_EINVAL, "nn validate: an oracle of %lld points", (long long)n);
    double *xyz = malloc((size_t)n * 3 * sizeof *xyz);
    t->pts = malloc((size_t)n * 3 * sizeof *t->pts);
    t->orig = malloc((size_t)n * sizeof *t->orig);
    /* Median splits keep both halves non-empty: at most 2n - 1 nodes. */
    t->nodes = malloc((size_t)(2 * n) * sizeof *t->nodes);
    if (!xyz || !t->pts || !t->orig || !t->nodes) {
        free(xyz);
        kd_free(t);
        return pcb_fail(PCB_ENOMEM, "nn validate: no memory for the oracle of %lld points",
                        (long long)n);
    }
    for (int64_t i = 0; i < 3 * n; i++)
        xyz[i] = cloud[i];
    for (int64_t i = 0; i < n; i++)
        t->orig[i] = (int32_t)i;
    build(t, xyz, t->orig, 0, (int32_t)n);
    for (int64_t i = 0; i < n; i++)
        memcpy(t->pts + 3 * i, xyz + 3 * (int64_t)t->orig[i], 3 * sizeof *xyz);
    free(xyz);
    return PCB_OK;
}

static inline double dist2(const double *p, const double *q)
{
    double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
    return dx * dx + dy * dy + dz * dz;
}

/* Exact: a far child is skipped only when the squared distance to its
 * splitting plane, a lower bound on every point in it (rounding is monotone,
 * so the bound also holds in floating point), is not below the best. */
static void search(const kd_tree *t, int32_t node, const double *q, double *best, int32_t *besti)
{
    const kd_node *nd = &t->nodes[node];
    if (nd->left < 0) {
        for (int32_t i = nd->lo; i < (nd->same ? nd->lo + 1 : nd->hi); i++) {
            double d = dist2(t->pts + 3 * (int64_t)i, q);
            if (d < *best) {
                *best = d;
                *besti = i;
            }
        }
        return;
    }
    double diff = q[nd->dim] - nd->split;
    search(t, diff < 0 ? nd->left : nd->right, q, best, besti);
    if (diff * diff < *best)
        search(t, diff < 0 ? nd->right : nd->left, q, best, besti);
}

/* kNN: the len nearest squared distances, ascending, in best[0..len)
 * (+inf where none yet). Only distances are kept, so a far child whose
 * plane is as far as the last kept cannot change them. */
static void search_k(const kd_tree *t, int32_t node, const double *q, double *best, int64_t len)
{
    const kd_node *nd = &t->nodes[node];
    if (nd->left < 0) {
        /* a leaf of identical points: one distance, offered as often as it fits */
        const int32_t end = nd->same ? nd->lo + (int32_t)(nd->hi - nd->lo < len ? nd->hi - nd->lo
                                                                                 : len)
                                     : nd->hi;
        for (int32_t i = nd->lo; i < end; i++) {
            const double d = dist2(t->pts + 3 * (int64_t)(nd->same ? nd->lo : i), q);
            if (!(d < best[len - 1]))
                continue;
            int64_t p = len - 1;
            for (; p > 0 && d < best[p - 1]; p--)
                best[p] = best[p - 1];
            best[p] = d;
        }
        return;
    }
    double diff = q[nd->dim] - nd->split;
    search_k(t, diff < 0 ? nd->left : nd->right, q, best, len);
    if (diff * diff < best[len - 1])
        search_k(t, diff < 0 ? nd->right : nd->left, q, best, len);
}

int pcb_knn_oracle(const pcb_task *t, double *d2)
{
    int rc = pcb_task_check(t);
    if (rc != PCB_OK)
        return rc;
    if (t->problem != PCB_KNN || !d2)
        return pcb_fail(PCB_EINVAL, "knn oracle: not a kNN task or no output array");
    const int64_t len = t->k < t->n ? t->k : t->n;
    for (int64_t b = 0; b < t->batch; b++) {
        kd_tree tree;
        if ((rc = kd_build(&tree, t->a + b * t->n * 3, t->n)) != PCB_OK)
            return rc;
        const float *qry = t->b + b * t->nq * 3;
#pragma omp parallel for schedule(dynamic, 64)
        for (int64_t i = 0; i < t->nq; i++) {
            double q[3] = {qry[3 * i], qry[3 * i + 1], qry[3 * i + 2]};
            double *best = d2 + (b * t->nq + i) * len;
            for (int64_t s = 0; s < len; s++)
                best[s] = INFINITY;
            search_k(&tree, 0, q, best, len);
        }
        kd_free(&tree);
    }
    return PCB_OK;
}

int pcb_nn_oracle(const pcb_task *t, double *d2, int32_t *idx)
{
    int rc = pcb_task_check(t);
    if (rc != PCB_OK)
        return rc;
    if (t->problem != PCB_NN || !d2)
        return pcb_fail(PCB_EINVAL, "nn oracle: not an NN task or no output array");
    for (int64_t b = 0; b < t->batch; b++) {
        kd_tree tree;
        if ((rc = kd_build(&tree, t->a + b * t->n * 3, t->n)) != PCB_OK)
            return rc;
        const float *qry = t->b + b * t->nq * 3;
#pragma omp parallel for schedule(dynamic, 256)
        for (int64_t i = 0; i < t->nq; i++) {
            double q[3] = {qry[3 * i], qry[3 * i + 1], qry[3 * i + 2]}, best = INFINITY;
            int32_t besti = 0;
            search(&tree, 0, q, &best, &besti);
            d2[b * t->nq + i] = best;
            if (idx)
                idx[b * t->nq + i] = tree.orig[besti];
        }
        kd_free(&tree);
    }
    return PCB_OK;
}

static double d2_of(const pcb_task *t, int64_t query, int32_t ref)
{
    const float *q = t->b + 3 * query, *p = t->a + (query / t->nq * t->n + ref) * 3;
    double a[3] = {q[0], q[1], q[2]}, c[3] = {p[0], p[1], p[2]};
    return dist2(a, c);
}

static int within(double d, double truth)
{
    return d <= truth * (1 + PCB_NN_REL_TOL) + PCB_NN_ABS_TOL;
}

int pcb_nn_validate(const pcb_task *t, const pcb_result *r, int exact, pcb_report *rep)
{
    if (!rep || !r || !r->index)
        return pcb_fail(PCB_EINVAL, "nn validate: missing result or report");
    memset(rep, 0, sizeof *rep);
    rep->recall = rep->worst_ratio = rep->gap = rep->bound = -1;
    int rc = pcb_task_check(t);
    if (rc != PCB_OK)
        return rc;
    if (t->problem != PCB_NN)
        return pcb_fail(PCB_EINVAL, "nn validate: task is %s", pcb_problem_name(t->problem));
    int64_t total = t->batch * t->nq;
    double *truth = malloc((size_t)total * sizeof *truth);
    int32_t *truei = malloc((size_t)total * sizeof *truei);
    if (!truth || !truei) {
        free(truth);
        free(truei);
        return pcb_fail(PCB_ENOMEM, "nn validate: no memory for %lld queries", (long long)total);
    }
    if ((rc = pcb_nn_oracle(t, truth, truei)) != PCB_OK) {
        free(truth);
        free(truei);
        return rc;
    }
    /* The first query (lowest number) of each kind of fault, and counts. */
    int64_t bad_index = total, bad_dist2 = total, not_nearest = total, misses = 0;
    double worst = 1;
#pragma omp parallel for reduction(min : bad_index, bad_dist2, not_nearest) \
    reduction(+ : misses) reduction(max : worst)
    for (int64_t i = 0; i < total; i++) {
        int32_t j = r->index[i];
        if (j < 0 || j >= t->n) {
            bad_index = i < bad_index ? i : bad_index;
            continue;
        }
        double d = d2_of(t, i, j);
        if (r->dist2 && !(fabs((double)r->dist2[i] - d) <= d * PCB_NN_REL_TOL + PCB_NN_ABS_TOL))
            bad_dist2 = i < bad_dist2 ? i : bad_dist2;
        if (!within(d, truth[i])) {
            misses++;
            not_nearest = i < not_nearest ? i : not_nearest;
        }
        double ratio = d <= truth[i] ? 1 : truth[i] > 0 ? sqrt(d / truth[i]) : INFINITY;
        worst = ratio > worst ? ratio : worst;
    }
    int64_t i;
    if (bad_index < total) {
        i = bad_index;
        snprintf(rep->detail, sizeof rep->detail,
                 "query %lld of cloud %lld: index %d out of range 0..%lld", (long long)(i % t->nq),
                 (long long)(i / t->nq), (int)r->index[i], (long long)t->n - 1);
    } else if (bad_dist2 < total) {
        i = bad_dist2;
        snprintf(rep->detail, sizeof rep->detail,
                 "query %lld of cloud %lld: dist2 %.9g but index %d is at %.9g",
                 (long long)(i % t->nq), (long long)(i / t->nq), (double)r->dist2[i],
                 (int)r->index[i], d2_of(t, i, r->index[i]));
    } else {
        rep->recall = total ? 1.0 - (double)misses / (double)total : 1;
        rep->worst_ratio = worst;
        if (exact && misses) {
            i = not_nearest;
            snprintf(rep->detail, sizeof rep->detail,
                     "%lld of %lld queries not nearest; first: query %lld of cloud %lld got "
                     "index %d at d2 %.9g, nearest is %d at %.9g",
                     (long long)misses, (long long)total, (long long)(i % t->nq),
                     (long long)(i / t->nq), (int)r->index[i], d2_of(t, i, r->index[i]),
                     (int)truei[i], truth[i]);
        } else if (exact) {
            rep->ok = 1;
            snprintf(rep->detail, sizeof rep->detail, "%lld queries exact", (long long)total);
        } else {
            rep->ok = 1;
            snprintf(rep->detail, sizeof rep->detail, "approximate: recall %.4f, worst ratio %.4g",
                     rep->recall, rep->worst_ratio);
        }
    }
    free(truth);
    free(truei);
    return PCB_OK;
}
