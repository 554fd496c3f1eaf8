/* nn_kdtree.c - exact nearest neighbours through a k-d tree tuned for 3-D
 * point clouds: the nearest one (nn kdtree) and the k nearest (knn kdtree).
 *
 * prepare builds one tree per reference cloud: each node splits its points
 * at the median of their widest extent (lidar clouds are flat and their
 * density falls as 1/r^2: round-robin axes would cut thin slabs), down to
 * leaves of at most LEAF points, stored contiguously as x, y, z arrays.
 * Every node keeps the bounding box of its points.
 *
 * compute puts each query in the leaf its descent reaches, groups the
 * queries leaf by leaf (a counting sort: neighbouring queries then share
 * the same nodes in cache), and answers them on every core. A query starts
 * in its own leaf, then climbs: at each ancestor it searches the sibling
 * subtree unless that subtree's box is no nearer than the best distance so
 * far, and it stops as soon as the best distance's ball lies inside the box
 * of the subtree searched so far.
 *
 * Why it is exact. Distances are float32 (q - p)^2, x then y then z, with
 * no FMA contraction (-ffp-contract=off), and the box bounds are computed
 * with the same operations on the box faces. Rounding is monotone, so for a
 * point p in a box, each rounded term of p is >= the box's rounded term, and
 * so is the rounded sum: a subtree whose box distance is >= the best cannot
 * hold a point strictly nearer. For the stop: a point outside a subtree lies
 * beyond or on one of its cell's planes (the query lies inside the cell, as
 * its descent says), so on that axis its rounded term is >= the rounded
 * squared distance from the query to the plane; when that is >= the best for
 * every plane, no point outside is strictly nearer. Ties are kept by the first point found, a valid answer
 * (any index at the minimal distance is correct).
 *
 * kNN (knn kdtree) searches the same tree with a sorted row of k in place
 * of the best: the row's last distance is the bound, and a box or a plane
 * as far as the bound is searched too (not skipped), since a point there
 * with a lower index than the row's last would come before it: the row is
 * the canonical one, naive's element for element. */
#include <float.h>
#include <omp.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "impl/knn/knn.h"
#include "nn.h"

#ifndef KD_LEAF
#define KD_LEAF 16
#endif
enum { LEAF = KD_LEAF }; /* a multiple of LANES */

/* 48 bytes; the box as two 16-byte vectors (the 4th lane unused, 0). */
typedef struct {
    _Alignas(16) float lo[4];
    float hi[4];    /* bounding box of the node's points */
    float split;    /* internal: left holds coordinates <= split, right >= split */
    int32_t child;  /* internal: left child (right = child + 1); leaf: first slot */
    int32_t parent; /* -1 for the root */
    int16_t dim;    /* split axis; -1 for a leaf */
    int16_t count;  /* leaf: points */
} kd_node;

/* A node's cell: the region its ancestors' split planes bound (+-inf where
 * none does); only the climb reads it, so it lives apart. */
typedef struct {
    float lo[3], hi[3];
} kd_cell;

typedef struct {
    kd_node *node; /* node[0] is the root */
    kd_cell *cell;
    int32_t nodes;
    /* Leaf k's points in slots k*LEAF... as x, y, z arrays, the unused slots
     * at +inf (their distance is +inf: never nearer), so a leaf scan is a
     * fixed-length vector loop. */
    float *x, *y, *z;
    int32_t *id; /* slot -> index in the caller's cloud */
    int32_t *perm;
} kd_tree;

typedef struct {
    pcb_task task;
    kd_tree *tree;          /* one per pair of the batch */
    int32_t *leaf, *order;  /* per query: its leaf; queries grouped by leaf */
    int32_t *start;         /* per leaf node: first slot of its queries in order */
    int32_t *idx;
    float *dist2;
    int64_t *evals;         /* distance evaluations, per pair */
} kd_state;

/* ---- building ------------------------------------------------------------------ */
typedef struct {
    const float *p; /* the caller's cloud */
    int32_t *perm;  /* point order being built */
    kd_tree *t;
} builder;

static void bounds(const builder *b, int32_t lo, int32_t hi, kd_node *n)
{
    n->lo[3] = n->hi[3] = 0;
    for (int d = 0; d < 3; d++)
        n->lo[d] = FLT_MAX, n->hi[d] = -FLT_MAX;
    for (int32_t i = lo; i < hi; i++) {
        const float *q = b->p + 3 * (size_t)b->perm[i];
        for (int d = 0; d < 3; d++) {
            n->lo[d] = q[d] < n->lo[d] ? q[d] : n->lo[d];
            n->hi[d] = q[d] > n->hi[d] ? q[d] : n->hi[d];
        }
    }
}

/* Quickselect: perm[lo..hi) rearranged so perm[k] holds the k-th smallest
 * coordinate on axis d, smaller-or-equal ones before it, larger-or-equal after. */
static void select_kth(const float *p, int32_t *perm, int32_t lo, int32_t hi, int32_t k, int d)
{
    while (hi - lo > 1) {
        int32_t mid = lo + (hi - lo) / 2;
        float a = p[3 * (size_t)perm[lo] + d], b = p[3 * (size_t)perm[mid] + d],
              c = p[3 * (size_t)perm[hi - 1] + d];
        float pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        int32_t i = lo, j = hi - 1;
        while (i <= j) { /* Hoare partition around the median of three */
            while (p[3 * (size_t)perm[i] + d] < pivot)
                i++;
            while (p[3 * (size_t)perm[j] + d] > pivot)
                j--;
            if (i <= j) {
                int32_t s = perm[i];
                perm[i++] = perm[j];
                perm[j--] = s;
            }
        }
        if (k <= j)
            hi = j + 1;
        else if (k >= i)
            lo = i;
        else
            return; /* j < k < i: perm[k] equals the pivot, in place */
    }
}

static void build_node(builder *b, int32_t at, int32_t lo, int32_t hi)
{
    kd_node *n = &b->t->node[at];
    bounds(b, lo, hi, n);
    if (hi - lo <= LEAF) {
        n->dim = -1;
        n->child = lo;
        n->count = hi - lo;
        return;
    }
    int d = 0;
    for (int k = 1; k < 3; k++)
        if (n->hi[k] - n->lo[k] > n->hi[d] - n->lo[d])
            d = k;
    int32_t mid = lo + (hi - lo) / 2;
    select_kth(b->p, b->perm, lo, hi, mid, d);
    int32_t child = b->t->nodes;
    b->t->nodes += 2;
    n->dim = d;
    n->split = b->p[3 * (size_t)b->perm[mid] + d];
    n->child = child;
    n->count = 0;
    b->t->node[child].parent = b->t->node[child + 1].parent = at;
    kd_cell *c = b->t->cell;
    c[child] = c[child + 1] = c[at];
    c[child].hi[d] = c[child + 1].lo[d] = n->split;
    build_node(b, child, lo, mid);
    build_node(b, child + 1, mid, hi);
}

static void tree_free(kd_tree *t)
{
    free(t->node);
    free(t->cell);
    free(t->x);
    free(t->y);
    free(t->z);
    free(t->id);
    free(t->perm);
}

static int tree_build(const float *p, int32_t n, kd_tree *t)
{
    memset(t, 0, sizeof *t);
    int32_t max_leaves = n / (LEAF / 2) + 1; /* leaves hold more than LEAF/2 points */
    size_t slots = (size_t)max_leaves * LEAF;
    builder b = {.p = p, .perm = malloc((size_t)n * sizeof(int32_t)), .t = t};
    t->perm = b.perm;
    t->node = aligned_alloc(16, 2 * (size_t)max_leaves * sizeof *t->node);
    t->cell = malloc(2 * (size_t)max_leaves * sizeof *t->cell);
    t->x = aligned_alloc(16, slots * sizeof(float)); /* vector loads */
    t->y = aligned_alloc(16, slots * sizeof(float));
    t->z = aligned_alloc(16, slots * sizeof(float));
    t->id = malloc(slots * sizeof(int32_t));
    if (!b.perm || !t->node || !t->cell || !t->x || !t->y || !t->z || !t->id) {
        tree_free(t);
        return pcb_fail(PCB_ENOMEM, "nn kdtree: out of memory for a tree of %d points", n);
    }
    for (int32_t i = 0; i < n; i++)
        b.perm[i] = i;
    t->nodes = 1;
    t->node[0].parent = -1;
    for (int d = 0; d < 3; d++)
        t->cell[0].lo[d] = -INFINITY, t->cell[0].hi[d] = INFINITY;
    build_node(&b, 0, 0, n);
    int32_t leaves = 0;
    for (int32_t k = 0; k < t->nodes; k++) {
        kd_node *leaf = &t->node[k];
        if (leaf->dim >= 0)
            continue;
        size_t base = (size_t)leaves++ * LEAF;
        for (int j = 0; j < LEAF; j++) {
            const float *q = j < leaf->count ? p + 3 * (size_t)b.perm[leaf->child + j] : NULL;
            t->x[base + j] = q ? q[0] : INFINITY;
            t->y[base + j] = q ? q[1] : INFINITY;
            t->z[base + j] = q ? q[2] : INFINITY;
            t->id[base + j] = q ? b.perm[leaf->child + j] : -1;
        }
        leaf->child = (int32_t)base;
    }
    free(t->perm);
    t->perm = NULL;
    return PCB_OK;
}

/* ---- searching ----------------------------------------------------------------- */
/* The float32 squared distance from q to a box: the same operations as a
 * point's distance on the nearest face (0 on an axis q lies within; lo - q
 * and q - hi are never both positive). Branch-free: max instructions. */
#ifdef __SSE2__
/* The same per-axis operations in SSE lanes; the sum in scalar, x then y
 * then z, as for a point. q4 = (qx, qy, qz, 0). */
static inline float box_d2(const kd_node *n, __m128 q4)
{
    __m128 a = _mm_sub_ps(_mm_load_ps(n->lo), q4), b = _mm_sub_ps(q4, _mm_load_ps(n->hi));
    __m128 g = _mm_max_ps(_mm_max_ps(a, b), _mm_setzero_ps());
    g = _mm_mul_ps(g, g);
    float v[4];
    _mm_storeu_ps(v, g);
    return v[0] + v[1] + v[2];
}
typedef __m128 kd_qv;
#define QVEC(q) _mm_setr_ps((q)[0], (q)[1], (q)[2], 0.0f)
#else
typedef const float *kd_qv;
#define QVEC(q) (q)
static inline float box_d2(const kd_node *n, kd_qv q)
{
    float g[3];
    for (int d = 0; d < 3; d++) {
        float a = n->lo[d] - q[d], b = q[d] - n->hi[d];
        a = a > b ? a : b;
        g[d] = a > 0.0f ? a : 0.0f;
    }
    return g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
}
#endif

/* Whether every point outside n's subtree is at least best away from q (q
 * inside n's cell). */
static inline int ball_inside(const kd_cell *c, const float *q, float best)
{
    for (int d = 0; d < 3; d++) {
        float a = q[d] - c->lo[d], b = c->hi[d] - q[d];
        if (!(a * a >= best && b * b >= best))
            return 0;
    }
    return 1;
}

typedef struct {
    float best;
    int32_t besti; /* position in leaf order */
    int64_t evals;
} kd_query;

/* A fixed-length vector minimum over the leaf's slots: LANES independent
 * minima and their slots, which the compiler keeps in vector registers. */
enum { LANES = 4 };

static inline void scan_leaf(const kd_tree *t, const kd_node *n, const float *q, kd_query *r)
{
    const float *x = t->x + n->child, *y = t->y + n->child, *z = t->z + n->child;
    float lane[LANES];
    int32_t at[LANES];
    r->evals += n->count;
#ifdef __SSE2__
    /* Four slots a step: lane minima and their slots by compare and blend. */
    __m128 qx = _mm_set1_ps(q[0]), qy = _mm_set1_ps(q[1]), qz = _mm_set1_ps(q[2]);
    __m128 m = _mm_set1_ps(INFINITY);
    __m128i slot = _mm_setr_epi32(0, 1, 2, 3), mat = slot, four = _mm_set1_epi32(4);
    for (int j = 0; j < LEAF; j += 4) {
        __m128 dx = _mm_sub_ps(_mm_load_ps(x + j), qx), dy = _mm_sub_ps(_mm_load_ps(y + j), qy),
               dz = _mm_sub_ps(_mm_load_ps(z + j), qz);
        __m128 d = _mm_add_ps(_mm_add_ps(_mm_mul_ps(dx, dx), _mm_mul_ps(dy, dy)),
                              _mm_mul_ps(dz, dz));
        __m128i nearer = _mm_castps_si128(_mm_cmplt_ps(d, m));
        mat = _mm_or_si128(_mm_and_si128(nearer, slot), _mm_andnot_si128(nearer, mat));
        m = _mm_min_ps(d, m);
        slot = _mm_add_epi32(slot, four);
    }
    _mm_storeu_ps(lane, m);
    _mm_storeu_si128((__m128i *)at, mat);
#else
    float qx = q[0], qy = q[1], qz = q[2];
    for (int l = 0; l < LANES; l++)
        lane[l] = INFINITY, at[l] = l;
    for (int j = 0; j < LEAF; j += LANES)
        for (int l = 0; l < LANES; l++) {
            float dx = x[j + l] - qx, dy = y[j + l] - qy, dz = z[j + l] - qz;
            float d = dx * dx + dy * dy + dz * dz;
            at[l] = d < lane[l] ? j + l : at[l];
            lane[l] = d < lane[l] ? d : lane[l];
        }
#endif
    for (int l = 0; l < LANES; l++)
        if (lane[l] < r->best) {
            r->best = lane[l];
            r->besti = n->child + at[l];
        }
}

/* Depth first below `at` (whose box is nearer than the best), the nearer
 * child first; a box no nearer than the best is skipped, also when popped
 * (the best may have shrunk since it was pushed). */
static void search_down(const kd_tree *t, int32_t at, const float *q, kd_qv qv, kd_query *r)
{
    struct {
        int32_t node;
        float d2;
    } stack[64];
    int top = 0;
    for (;;) {
        const kd_node *n = &t->node[at];
        if (n->dim < 0) {
            scan_leaf(t, n, q, r);
        } else {
            const kd_node *c = &t->node[n->child];
            float d0 = box_d2(c, qv), d1 = box_d2(c + 1, qv);
            int near = d1 < d0;
            float dn = near ? d1 : d0, df = near ? d0 : d1;
            if (dn < r->best) {
                if (df < r->best)
                    stack[top].node = n->child + !near, stack[top++].d2 = df;
                at = n->child + near;
                continue;
            }
        }
        do { /* the next pushed box still nearer than the best */
            if (!top)
                return;
            --top;
        } while (stack[top].d2 >= r->best);
        at = stack[top].node;
    }
}

static int32_t descend(const kd_tree *t, const float *q)
{
    int32_t at = 0;
    while (t->node[at].dim >= 0)
        at = t->node[at].child + (q[t->node[at].dim] > t->node[at].split);
    return at;
}

static void search(const kd_tree *t, int32_t leaf, const float *q, kd_query *r)
{
    r->best = INFINITY;
    r->besti = -1;
    kd_qv qv = QVEC(q);
    scan_leaf(t, &t->node[leaf], q, r);
    for (int32_t at = leaf; t->node[at].parent >= 0; at = t->node[at].parent) {
        if (ball_inside(&t->cell[at], q, r->best))
            return;
        int32_t first = t->node[t->node[at].parent].child;
        int32_t sibling = at == first ? first + 1 : first;
        if (box_d2(&t->node[sibling], qv) < r->best)
            search_down(t, sibling, q, qv, r);
    }
}

/* ---- life cycle ---------------------------------------------------------------- */
static void kd_release(void *state)
{
    kd_state *s = state;
    if (!s)
        return;
    for (int64_t b = 0; s->tree && b < s->task.batch; b++)
        tree_free(&s->tree[b]);
    free(s->tree);
    free(s->leaf);
    free(s->order);
    free(s->start);
    free(s->idx);
    free(s->dist2);
    free(s->evals);
    free(s);
}

static int kd_prepare(const pcb_task *t, void **state)
{
    int rc = pcb_nn_coords_fit(t, "kdtree");
    if (rc != PCB_OK)
        return rc;
    size_t q = (size_t)(t->batch * t->nq);
    kd_state *s = calloc(1, sizeof *s);
    if (!s || !(s->tree = calloc((size_t)t->batch, sizeof *s->tree)) ||
        !(s->leaf = malloc(q * sizeof *s->leaf)) || !(s->order = malloc(q * sizeof *s->order)) ||
        !(s->idx = malloc(q * sizeof *s->idx)) || !(s->dist2 = malloc(q * sizeof *s->dist2)) ||
        !(s->evals = calloc((size_t)t->batch, sizeof *s->evals))) {
        kd_release(s);
        return pcb_fail(PCB_ENOMEM, "nn kdtree: out of memory");
    }
    s->task = *t;
    int32_t most = 0;
    for (int64_t b = 0; b < t->batch && rc == PCB_OK; b++) {
        rc = tree_build(t->a + b * t->n * 3, (int32_t)t->n, &s->tree[b]);
        most = rc == PCB_OK && s->tree[b].nodes > most ? s->tree[b].nodes : most;
    }
    if (rc == PCB_OK && !(s->start = malloc(((size_t)most + 1) * sizeof *s->start)))
        rc = pcb_fail(PCB_ENOMEM, "nn kdtree: out of memory");
    if (rc != PCB_OK) {
        kd_release(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static int kd_compute(void *state)
{
    kd_state *s = state;
    const pcb_task *t = &s->task;
    int threads = t->opt.threads > 0 ? t->opt.threads : omp_get_max_threads();
    for (int64_t b = 0; b < t->batch; b++) {
        const kd_tree *tree = &s->tree[b];
        const float *qry = t->b + b * t->nq * 3;
        int32_t *leaf = s->leaf + b * t->nq, *order = s->order + b * t->nq, nq = (int32_t)t->nq;
        int64_t evals = 0;
#pragma omp parallel num_threads(threads)
        {
#pragma omp for schedule(static)
            for (int32_t i = 0; i < nq; i++)
                leaf[i] = descend(tree, qry + 3 * (size_t)i);
#pragma omp single
            { /* counting sort of the queries by leaf */
                memset(s->start, 0, ((size_t)tree->nodes + 1) * sizeof *s->start);
                for (int32_t i = 0; i < nq; i++)
                    s->start[leaf[i] + 1]++;
                for (int32_t k = 0; k < tree->nodes; k++)
                    s->start[k + 1] += s->start[k];
                for (int32_t i = 0; i < nq; i++)
                    order[s->start[leaf[i]]++] = i;
            }
#pragma omp for schedule(dynamic, 256) reduction(+ : evals)
            for (int32_t k = 0; k < nq; k++) {
                int32_t i = order[k];
                kd_query r = {0};
                search(tree, leaf[i], qry + 3 * (size_t)i, &r);
                s->idx[b * t->nq + i] = tree->id[r.besti];
                s->dist2[b * t->nq + i] = r.best;
                evals += r.evals;
            }
        }
        s->evals[b] = evals;
    }
    return PCB_OK;
}

static int kd_fetch(void *state, pcb_result *out)
{
    kd_state *s = state;
    size_t q = (size_t)(s->task.batch * s->task.nq);
    memcpy(out->index, s->idx, q * sizeof *s->idx);
    if (out->dist2)
        memcpy(out->dist2, s->dist2, q * sizeof *s->dist2);
    return PCB_OK;
}

static int kd_counters(void *state, pcb_counters *c)
{
    kd_state *s = state;
    c->distance_evals = 0;
    for (int64_t b = 0; b < s->task.batch; b++)
        c->distance_evals += s->evals[b];
    return PCB_OK;
}

const pcb_impl pcb_nn_kdtree = {
    .name = "kdtree",
    .cost = PCB_COST_INDEXED,
    .problem = PCB_NN,
    .device = PCB_CPU,
    .promise = {.exact = 1},
    .summary = "k-d tree split on the widest extent, queries grouped by leaf, climbing search",
    .prepare = kd_prepare,
    .compute = kd_compute,
    .fetch = kd_fetch,
    .release = kd_release,
    .counters = kd_counters,
};

/* ---- k nearest: the same tree, a sorted row in place of the best -------------- */
typedef struct {
    float *d;
    int32_t *id;
    int64_t len; /* min(k, n): the row's last entry bounds the search */
    int64_t evals;
} kd_row;

static inline void knn_scan_leaf(const kd_tree *t, const kd_node *n, const float *q, kd_row *r)
{
    const float *x = t->x + n->child, *y = t->y + n->child, *z = t->z + n->child;
    r->evals += n->count;
    for (int j = 0; j < n->count; j++) {
        float dx = x[j] - q[0], dy = y[j] - q[1], dz = z[j] - q[2];
        float e = dx * dx + dy * dy + dz * dz; /* pcb_nn_d2's operations */
        if (e <= r->d[r->len - 1])
            pcb_knn_offer(r->d, r->id, r->len, e, t->id[n->child + j]);
    }
}

/* search_down with ties searched: boxes as far as the bound are entered. */
static void knn_down(const kd_tree *t, int32_t at, const float *q, kd_qv qv, kd_row *r)
{
    struct {
        int32_t node;
        float d2;
    } stack[64];
    int top = 0;
    for (;;) {
        const kd_node *n = &t->node[at];
        if (n->dim < 0) {
            knn_scan_leaf(t, n, q, r);
        } else {
            const kd_node *c = &t->node[n->child];
            float d0 = box_d2(c, qv), d1 = box_d2(c + 1, qv);
            int near = d1 < d0;
            float dn = near ? d1 : d0, df = near ? d0 : d1;
            if (dn <= r->d[r->len - 1]) {
                if (df <= r->d[r->len - 1])
                    stack[top].node = n->child + !near, stack[top++].d2 = df;
                at = n->child + near;
                continue;
            }
        }
        do {
            if (!top)
                return;
            --top;
        } while (stack[top].d2 > r->d[r->len - 1]);
        at = stack[top].node;
    }
}

/* Every point outside the cell strictly farther than best (ball_inside with
 * ties excluded). */
static inline int ball_clear(const kd_cell *c, const float *q, float best)
{
    for (int d = 0; d < 3; d++) {
        float a = q[d] - c->lo[d], b = c->hi[d] - q[d];
        if (!(a * a > best && b * b > best))
            return 0;
    }
    return 1;
}

static void knn_search(const kd_tree *t, int32_t leaf, const float *q, kd_row *r)
{
    kd_qv qv = QVEC(q);
    knn_scan_leaf(t, &t->node[leaf], q, r);
    for (int32_t at = leaf; t->node[at].parent >= 0; at = t->node[at].parent) {
        if (ball_clear(&t->cell[at], q, r->d[r->len - 1]))
            return;
        int32_t first = t->node[t->node[at].parent].child;
        int32_t sibling = at == first ? first + 1 : first;
        if (box_d2(&t->node[sibling], qv) <= r->d[r->len - 1])
            knn_down(t, sibling, q, qv, r);
    }
}

typedef struct {
    pcb_knn_rows rows; /* first: pcb_knn_rows_fetch reads it */
    kd_tree *tree;
    int64_t evals;
} knn_kd_state;

static void knn_kd_release(void *state)
{
    knn_kd_state *s = state;
    if (!s)
        return;
    for (int64_t b = 0; s->tree && b < s->rows.task.batch; b++)
        tree_free(&s->tree[b]);
    free(s->tree);
    pcb_knn_rows_free(&s->rows);
    free(s);
}

static int knn_kd_prepare(const pcb_task *t, void **state)
{
    knn_kd_state *s = calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "knn kdtree: out of memory");
    int rc = pcb_knn_rows_init(&s->rows, t, "kdtree");
    if (rc == PCB_OK && !(s->tree = calloc((size_t)t->batch, sizeof *s->tree)))
        rc = pcb_fail(PCB_ENOMEM, "knn kdtree: out of memory");
    for (int64_t b = 0; b < t->batch && rc == PCB_OK; b++)
        rc = tree_build(t->a + b * t->n * 3, (int32_t)t->n, &s->tree[b]);
    if (rc != PCB_OK) {
        knn_kd_release(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static int knn_kd_compute(void *state)
{
    knn_kd_state *s = state;
    const pcb_task *t = &s->rows.task;
    const int threads = t->opt.threads > 0 ? t->opt.threads : omp_get_max_threads();
    const int64_t k = t->k, len = k < t->n ? k : t->n, total = t->batch * t->nq;
    int64_t evals = 0;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64) reduction(+ : evals)
    for (int64_t i = 0; i < total; i++) {
        const kd_tree *tree = &s->tree[i / t->nq];
        const float *q = t->b + 3 * i;
        kd_row r = {s->rows.dist2 + i * k, s->rows.idx + i * k, len, 0};
        pcb_knn_row_clear(r.d, r.id, k);
        knn_search(tree, descend(tree, q), q, &r);
        evals += r.evals;
    }
    s->evals = evals;
    return PCB_OK;
}

static int knn_kd_counters(void *state, pcb_counters *c)
{
    c->distance_evals = ((knn_kd_state *)state)->evals;
    return PCB_OK;
}

const pcb_impl pcb_knn_kdtree = {
    .name = "kdtree",
    .cost = PCB_COST_INDEXED,
    .problem = PCB_KNN,
    .device = PCB_CPU,
    .promise = {.exact = 1, .canonical = 1},
    .summary = "nn kdtree's tree searched with a sorted row of k, ties searched (canonical)",
    .prepare = knn_kd_prepare,
    .compute = knn_kd_compute,
    .fetch = pcb_knn_rows_fetch,
    .release = knn_kd_release,
    .counters = knn_kd_counters,
};
