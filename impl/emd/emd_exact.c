/* emd_exact.c - exact assignment by shortest augmenting paths (the
 * Jonker-Volgenant family without its initialisation heuristics, as in
 * Crouse's "On implementing 2D rectangular assignment algorithms", the
 * method behind scipy's linear_sum_assignment). Each row of A in turn grows a
 * Dijkstra tree over reduced costs c_ij - u_i - v_j >= 0 until it reaches a
 * free point of B, then the potentials are updated and the path augmented:
 * O(n^3) in the worst case, far less on point clouds.
 *
 * Costs are recomputed in double precision whenever a row is scanned (a
 * double cache would take 128 MiB at n = 4096, a float one would not give
 * the double-precision optimum), and a square root is taken only where the
 * squared distance says the column may get closer (relax()). The columns
 * not yet reached are kept compacted, with their coordinates and
 * potentials, so a scan reads only contiguous memory that shrinks as the
 * tree grows, four columns at a time.
 *
 * Prices: p_j = -v_j. With them the certificate of emd.h is tight
 * (D = sum u + sum v = P up to rounding): an independent proof of
 * optimality that the validator checks. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emd.h"

typedef struct {
    pcb_task task;
    int32_t *match;
    double *price;
    int64_t evals, augmentations;
    /* per pair, n each */
    double *bx, *by, *bz, *u, *v, *dist;
    int32_t *col4row, *row4col, *path, *rows, *cols;
    /* the columns not yet reached, compacted: position k holds column rcol[k] */
    double *rx, *ry, *rz, *rv, *rdist;
    int32_t *rcol, *rpath;
} exact_state;

static void exact_release(void *state)
{
    exact_state *s = state;
    if (!s)
        return;
    double *d[] = {s->price, s->bx, s->by, s->bz, s->u, s->v, s->dist,
                   s->rx, s->ry, s->rz, s->rv, s->rdist};
    int32_t *k[] = {s->match, s->col4row, s->row4col, s->path, s->rows, s->cols,
                    s->rcol, s->rpath};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        free(d[i]);
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        free(k[i]);
    free(s);
}

static int exact_prepare(const pcb_task *t, void **state)
{
    exact_state *s = calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "emd exact: out of memory");
    s->task = *t;
    size_t n = (size_t)t->n, all = (size_t)(t->batch * t->n);
    double **d[] = {&s->bx, &s->by, &s->bz, &s->u, &s->v, &s->dist,
                    &s->rx, &s->ry, &s->rz, &s->rv, &s->rdist};
    int32_t **k[] = {&s->col4row, &s->row4col, &s->path, &s->rows, &s->cols, &s->rcol,
                     &s->rpath};
    int ok = (s->match = malloc(all * sizeof *s->match)) &&
             (s->price = malloc(all * sizeof *s->price));
    for (size_t i = 0; ok && i < sizeof d / sizeof d[0]; i++)
        ok = (*d[i] = malloc(n * sizeof(double))) != NULL;
    for (size_t i = 0; ok && i < sizeof k / sizeof k[0]; i++)
        ok = (*k[i] = malloc(n * sizeof(int32_t))) != NULL;
    if (!ok) {
        exact_release(s);
        return pcb_fail(PCB_ENOMEM, "emd exact: out of memory for %lld points",
                        (long long)t->n);
    }
    *state = s;
    return PCB_OK;
}

/* Remove position k of the compacted columns (the last one moves there). */
static void drop_remaining(exact_state *s, int32_t k, int32_t last)
{
    s->rcol[k] = s->rcol[last];
    s->rx[k] = s->rx[last];
    s->ry[k] = s->ry[last];
    s->rz[k] = s->rz[last];
    s->rv[k] = s->rv[last];
    s->rdist[k] = s->rdist[last];
    s->rpath[k] = s->rpath[last];
}

/* Scan row i (at (ax, ay, az), base = its distance minus u_i) against the
 * columns not yet reached: r = base + c_ik - v_k, kept where smaller.
 *
 * Column k gets closer only if its cost is below lim_k = rdist_k - base +
 * v_k. Most are not, and the squared distance tells that without a square
 * root: a column is skipped when d2 >= (lim_k + margin)^2, the margin (1e-12
 * of the magnitudes involved) far above the rounding of r, so every decision,
 * and the result bit for bit, is the one the full computation makes. Four
 * columns at a time (GCC vector extensions: AVX2 where the CPU has it,
 * SSE2 pairs elsewhere); the few that pass take the square root one by one. */
typedef double v4d __attribute__((vector_size(32)));
typedef long long v4l __attribute__((vector_size(32)));

static inline int may_improve(double d2, double rdist, double base, double v, double scale)
{
    double thr = rdist - base + v + 1e-12 * (fabs(rdist) + scale);
    return thr > 0 && d2 < thr * thr;
}

static inline void improve(exact_state *s, int32_t k, double d2, double base, int32_t i)
{
    double r = base + sqrt(d2) - s->rv[k];
    if (r < s->rdist[k]) {
        s->rdist[k] = r;
        s->rpath[k] = i;
    }
}

__attribute__((target_clones("avx2", "default")))
static void relax(exact_state *s, int32_t remaining, double ax, double ay, double az,
                  double base, double scale, int32_t i)
{
    const double *rx = s->rx, *ry = s->ry, *rz = s->rz, *rv = s->rv, *rdist = s->rdist;
    const v4d vx = {ax, ax, ax, ax}, vy = {ay, ay, ay, ay}, vz = {az, az, az, az};
    const v4d vbase = {base, base, base, base}, vscale = {scale, scale, scale, scale};
    const v4d tiny = {1e-12, 1e-12, 1e-12, 1e-12}, zero = {0, 0, 0, 0};
    const v4l abs_mask = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};
    int32_t k = 0;
    for (; k + 4 <= remaining; k += 4) {
        v4d x, y, z, v, d;
        memcpy(&x, rx + k, sizeof x);
        memcpy(&y, ry + k, sizeof y);
        memcpy(&z, rz + k, sizeof z);
        memcpy(&v, rv + k, sizeof v);
        memcpy(&d, rdist + k, sizeof d);
        v4d dx = vx - x, dy = vy - y, dz = vz - z;
        v4d d2 = dx * dx + dy * dy + dz * dz;
        v4d thr = d - vbase + v + tiny * ((v4d)((v4l)d & abs_mask) + vscale);
        v4l pass = (thr > zero) & (d2 < thr * thr);
        if (pass[0] | pass[1] | pass[2] | pass[3])
            for (int l = 0; l < 4; l++)
                if (pass[l])
                    improve(s, k + l, d2[l], base, i);
    }
    for (; k < remaining; k++) {
        double dx = ax - rx[k], dy = ay - ry[k], dz = az - rz[k];
        double d2 = dx * dx + dy * dy + dz * dz;
        if (may_improve(d2, rdist[k], base, rv[k], scale))
            improve(s, k, d2, base, i);
    }
}

/* The nearest unreached column: the last free one among the nearest (a free
 * one ends the search sooner), else the first. */
__attribute__((target_clones("avx2", "default")))
static int32_t nearest(const exact_state *s, int32_t remaining)
{
    const double *rdist = s->rdist;
    double low = HUGE_VAL;
    int32_t k = 0;
    if (remaining >= 4) {
        v4d m;
        memcpy(&m, rdist, sizeof m);
        for (k = 4; k + 4 <= remaining; k += 4) {
            v4d d;
            memcpy(&d, rdist + k, sizeof d);
            v4l less = d < m;
            m = (v4d)(((v4l)d & less) | ((v4l)m & ~less));
        }
        low = fmin(fmin(m[0], m[1]), fmin(m[2], m[3]));
    }
    for (; k < remaining; k++)
        low = rdist[k] < low ? rdist[k] : low;
    int32_t first = -1, last_free = -1;
    const v4d vlow = {low, low, low, low};
    for (k = 0; k < remaining; k += 4) {
        const int32_t end = k + 4 < remaining ? k + 4 : remaining;
        if (end - k == 4) { /* four skipped at once when none is the nearest */
            v4d d;
            memcpy(&d, rdist + k, sizeof d);
            v4l eq = d == vlow;
            if (!(eq[0] | eq[1] | eq[2] | eq[3]))
                continue;
        }
        for (int32_t q = k; q < end; q++)
            if (rdist[q] == low) {
                first = first < 0 ? q : first;
                if (s->row4col[s->rcol[q]] < 0)
                    last_free = q;
            }
    }
    return last_free >= 0 ? last_free : first;
}

/* Grow the shortest-path tree from free row `start` until it reaches a free
 * column; returns that column. dist/path hold the reached columns' labels,
 * rows/cols the rows and columns taken into the tree. */
static int32_t shortest_path(exact_state *s, const float *a, int32_t n, int32_t start,
                             double *min_dist, int32_t *nrows, int32_t *ncols)
{
    int32_t remaining = n, i = start, sink = -1;
    double reached = 0, vmax = 0; /* distance of the row being scanned, max |v| */
    *nrows = *ncols = 0;
    for (int32_t j = 0; j < n; j++) {
        vmax = fmax(vmax, fabs(s->v[j]));
        s->rcol[j] = j;
        s->rx[j] = s->bx[j];
        s->ry[j] = s->by[j];
        s->rz[j] = s->bz[j];
        s->rv[j] = s->v[j];
        s->rdist[j] = HUGE_VAL;
        s->rpath[j] = -1;
    }
    while (sink < 0) {
        s->rows[(*nrows)++] = i;
        const double ax = a[3 * (int64_t)i], ay = a[3 * (int64_t)i + 1],
                     az = a[3 * (int64_t)i + 2], base = reached - s->u[i];
        relax(s, remaining, ax, ay, az, base, fabs(base) + vmax, i);
        int32_t best = nearest(s, remaining);
        const double *rdist = s->rdist;
        s->evals += remaining;
        int32_t j = s->rcol[best];
        reached = rdist[best];
        s->dist[j] = reached;
        s->path[j] = s->rpath[best];
        s->cols[(*ncols)++] = j;
        if (s->row4col[j] < 0)
            sink = j;
        else
            i = s->row4col[j];
        drop_remaining(s, best, --remaining);
    }
    *min_dist = reached;
    return sink;
}

static void solve_pair(exact_state *s, const float *a, const float *b, int32_t n,
                       int32_t *match, double *price)
{
    for (int32_t j = 0; j < n; j++) {
        s->bx[j] = b[3 * (int64_t)j];
        s->by[j] = b[3 * (int64_t)j + 1];
        s->bz[j] = b[3 * (int64_t)j + 2];
        s->u[j] = s->v[j] = 0;
        s->col4row[j] = s->row4col[j] = -1;
    }
    for (int32_t start = 0; start < n; start++) {
        double min_dist;
        int32_t nrows, ncols;
        int32_t sink = shortest_path(s, a, n, start, &min_dist, &nrows, &ncols);
        /* Potentials: keep reduced costs >= 0 and tight along the tree. */
        s->u[start] += min_dist;
        for (int32_t k = 1; k < nrows; k++) {
            int32_t r = s->rows[k];
            s->u[r] += min_dist - s->dist[s->col4row[r]];
        }
        for (int32_t k = 0; k < ncols; k++) {
            int32_t j = s->cols[k];
            s->v[j] -= min_dist - s->dist[j];
        }
        /* Augment: flip the matching along the path back to `start`. */
        for (int32_t j = sink;;) {
            int32_t i = s->path[j], next = s->col4row[i];
            s->row4col[j] = i;
            s->col4row[i] = j;
            j = next;
            if (i == start)
                break;
        }
        s->augmentations++;
    }
    memcpy(match, s->col4row, (size_t)n * sizeof *match);
    for (int32_t j = 0; j < n; j++)
        price[j] = -s->v[j];
}

static int exact_compute(void *state)
{
    exact_state *s = state;
    const pcb_task *t = &s->task;
    s->evals = s->augmentations = 0;
    for (int64_t b = 0; b < t->batch; b++)
        solve_pair(s, t->a + b * t->n * 3, t->b + b * t->n * 3, (int32_t)t->n,
                   s->match + b * t->n, s->price + b * t->n);
    return PCB_OK;
}

static int exact_fetch(void *state, pcb_result *out)
{
    exact_state *s = state;
    return pcb_emd_fetch(&s->task, s->match, s->price, out);
}

static int exact_counters(void *state, pcb_counters *c)
{
    exact_state *s = state;
    c->distance_evals = s->evals;
    c->iterations = s->augmentations;
    return PCB_OK;
}

const pcb_impl pcb_emd_exact = {
    .name = "exact",
    .cost = PCB_COST_CUBIC,
    .reference = 1,
    .problem = PCB_EMD,
    .device = PCB_CPU,
    .promise = {.exact = 1},
    .summary = "serial shortest augmenting paths (Jonker-Volgenant family), double precision, "
               "costs recomputed per scan: O(n^3) worst case, O(n) memory",
    .prepare = exact_prepare,
    .compute = exact_compute,
    .fetch = exact_fetch,
    .release = exact_release,
    .counters = exact_counters,
};
