/* defects.c - the catalog of known defects of the field's implementations,
 * each planted in a small CPU variant, registered apart from the real
 * implementations: never in pcb_registry(), so never listed, benchmarked or
 * picked by pcb_best. `pcbench verify --defects` runs them over the verify
 * matrices and must catch every one (README: "Defect catalog"); a variant
 * marked `accepted` is correct under this project's rules and must pass.
 * FLANN's randomized trees are the real registered implementation, entered
 * here too: approximate by design, they pass verification and are caught
 * by their recall below 1.
 *
 * The variants are deliberately plain (serial, brute force): what matters
 * is the defect, not speed. The one GPU variant, cuda_unrolled with a racing
 * argmax, is defect_torn_argmax.cu beside this file (a template switch of
 * cuda_unrolled's kernel) and runs only where a CUDA device is. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "impl/chamfer/chamfer.h"
#include "impl/emd/emd.h"
#include "impl/fps/fps.h"
#include "impl/ball/ball.h"
#include "impl/knn/knn.h"
#include "impl/pcbench_judge.h"
#include "defects.h"

typedef struct {
    pcb_task task;
    int32_t *idx;
    float *dist2;
    double *value;
    int32_t *count; /* ball */
} variant;

static void v_release(void *state)
{
    variant *v = state;
    if (v)
        free(v->idx), free(v->dist2), free(v->value), free(v->count);
    free(v);
}

static int v_prepare(const pcb_task *t, void **state)
{
    variant *v = calloc(1, sizeof *v);
    const size_t count = (size_t)pcb_answer_count(t);
    if (!v || !(v->idx = malloc(count * sizeof *v->idx)) ||
        !(v->dist2 = malloc(count * sizeof *v->dist2)) ||
        !(v->value = malloc((size_t)t->batch * sizeof *v->value)) ||
        (t->problem == PCB_BALL && !(v->count = malloc((size_t)(t->batch * t->nq) *
                                                       sizeof *v->count)))) {
        v_release(v);
        return pcb_fail(PCB_ENOMEM, "defect variant: out of memory");
    }
    v->task = *t;
    *state = v;
    return PCB_OK;
}

static int v_fetch(void *state, pcb_result *out)
{
    variant *v = state;
    const size_t count = (size_t)pcb_answer_count(&v->task);
    memcpy(out->index, v->idx, count * sizeof *v->idx);
    if (out->dist2 && (v->task.problem == PCB_NN || v->task.problem == PCB_CHAMFER ||
                       v->task.problem == PCB_KNN || v->task.problem == PCB_BALL))
        memcpy(out->dist2, v->dist2, count * sizeof *v->dist2);
    if (out->count && v->count)
        memcpy(out->count, v->count, (size_t)(v->task.batch * v->task.nq) * sizeof *v->count);
    if (out->value && (v->task.problem == PCB_EMD || v->task.problem == PCB_CHAMFER))
        memcpy(out->value, v->value, (size_t)v->task.batch * sizeof *v->value);
    return PCB_OK;
}

/* ---- FPS: dp's loop with the defect switched on ------------------------------ */
enum { SKIP_NEAR_ORIGIN = 1, CAP_INIT = 2, REPEAT_WHEN_DONE = 4, TIES_HIGH = 8 };

static int fps_with(variant *v, int defect)
{
    const pcb_task *t = &v->task;
    float *mind = malloc((size_t)t->n * sizeof *mind);
    if (!mind)
        return pcb_fail(PCB_ENOMEM, "defect variant: out of memory");
    for (int64_t b = 0; b < t->batch; b++) {
        const float *xyz = t->a + b * t->n * 3;
        int32_t *idx = v->idx + b * t->m;
        for (int64_t k = 0; k < t->n; k++)
            mind[k] = defect & CAP_INIT ? 5e4f : INFINITY;
        idx[0] = (int32_t)t->start;
        for (int64_t j = 1; j < t->m; j++) {
            const float *q = xyz + 3 * (int64_t)idx[j - 1];
            mind[idx[j - 1]] = -1; /* dp's mark: a sample is not a candidate again */
            float best = -1;
            int32_t besti = 0;
            for (int64_t k = 0; k < t->n; k++) {
                const float *p = xyz + 3 * k;
                if ((defect & SKIP_NEAR_ORIGIN) && p[0] * p[0] + p[1] * p[1] + p[2] * p[2] <= 1e-3f)
                    continue;
                float d = pcb_fps_d2(p, q);
                mind[k] = d < mind[k] ? d : mind[k];
                if (mind[k] > best || ((defect & TIES_HIGH) && mind[k] == best))
                    best = mind[k], besti = (int32_t)k;
            }
            idx[j] = (defect & REPEAT_WHEN_DONE) && best == 0 ? idx[j - 1] : besti;
        }
    }
    free(mind);
    return PCB_OK;
}

static int near_origin_compute(void *s) { return fps_with(s, SKIP_NEAR_ORIGIN); }
static int capped_compute(void *s) { return fps_with(s, CAP_INIT); }
static int repeat_compute(void *s) { return fps_with(s, REPEAT_WHEN_DONE); }
static int ties_high_compute(void *s) { return fps_with(s, TIES_HIGH); }

/* ---- NN ------------------------------------------------------------------------ */
/* |q|^2 + |p|^2 - 2 q.p in float32: cancels to noise far from the origin.
 * t an NN task; answers into idx and dist2. */
static void expanded_into(const pcb_task *t, int32_t *idx, float *dist2)
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

static int expanded_compute(void *state)
{
    variant *v = state;
    expanded_into(&v->task, v->idx, v->dist2);
    return PCB_OK;
}

enum { WEDGES = 300 };

static int wedge_of(const float *p)
{
    double a = atan2((double)p[1], (double)p[0]); /* -pi..pi */
    const double pi = 3.14159265358979323846;
    int w = (int)((a + pi) / (2 * pi) * WEDGES);
    return w < 0 ? 0 : w >= WEDGES ? WEDGES - 1 : w;
}

/* Only the reference points in the query's azimuth wedge (the nearest
 * non-empty wedge when it has none). */
static int wedge_compute(void *state)
{
    variant *v = state;
    const pcb_task *t = &v->task;
    int *wedge = malloc((size_t)t->n * sizeof *wedge);
    if (!wedge)
        return pcb_fail(PCB_ENOMEM, "defect variant: out of memory");
    for (int64_t b = 0; b < t->batch; b++) {
        const float *ref = t->a + b * t->n * 3;
        int count[WEDGES] = {0};
        for (int64_t k = 0; k < t->n; k++)
            count[wedge[k] = wedge_of(ref + 3 * k)]++;
        for (int64_t i = 0; i < t->nq; i++) {
            const float *q = t->b + (b * t->nq + i) * 3;
            const int home = wedge_of(q);
            int w = home;
            for (int off = 1; !count[w]; off++) /* some wedge holds a point: n >= 1 */
                w = (home + (off % 2 ? off / 2 + 1 : WEDGES - off / 2) + WEDGES) % WEDGES;
            float best = INFINITY;
            int32_t at = 0;
            for (int64_t k = 0; k < t->n; k++)
                if (wedge[k] == w) {
                    float d = pcb_fps_d2(q, ref + 3 * k);
                    if (d < best)
                        best = d, at = (int32_t)k;
                }
            v->idx[b * t->nq + i] = at;
            v->dist2[b * t->nq + i] = best;
        }
    }
    free(wedge);
    return PCB_OK;
}

/* ---- chamfer ------------------------------------------------------------------- */
/* Both directions in the expanded form (a chamfer loss written with cdist),
 * or right (naive) but the value of A to B only (one direction taken for
 * the symmetric distance); values from the distances found. */
static int chamfer_with(variant *v, int one_way)
{
    const pcb_task *t = &v->task;
    const int64_t first = t->batch * t->n;
    int rc = PCB_OK;
    for (int k = 0; k < 2 && !one_way; k++) {
        const pcb_task dir = pcb_chamfer_direction(t, k);
        expanded_into(&dir, v->idx + (k ? first : 0), v->dist2 + (k ? first : 0));
    }
    if (one_way) {
        pcb_result r = {.index = v->idx, .dist2 = v->dist2};
        rc = pcb_run(pcb_reference(PCB_CHAMFER), t, &r, NULL);
    }
    const pcb_chamfer_convention c = {PCB_CD_SQUARED, PCB_CD_MEAN,
                                      one_way ? PCB_CD_FORWARD : PCB_CD_BOTH};
    return rc == PCB_OK ? pcb_chamfer_values(t, v->dist2, &c, v->value) : rc;
}

static int gemm_chamfer_compute(void *s) { return chamfer_with(s, 0); }
static int one_way_compute(void *s) { return chamfer_with(s, 1); }

/* ---- kNN: a brute force with one of the field's faults ------------------------ */
enum {
    KNN_PAD_ZERO = 1,  /* short rows padded with point 0 at distance 0 */
    KNN_START_1E10 = 2, /* rows start at (0, 1e10): nothing farther ever enters */
    KNN_GEMM = 4,      /* expanded-norm distances */
    KNN_HIGH_TIES = 8, /* equal distances by decreasing index */
    KNN_CAP32 = 16     /* at most 32 neighbours, whatever k, the rest padding */
};

static int knn_with(variant *v, int fault)
{
    const pcb_task *t = &v->task;
    const int64_t k = t->k, len = k < t->n ? k : t->n;
    const int64_t cap = fault & KNN_CAP32 && len > 32 ? 32 : len;
    for (int64_t q = 0; q < t->batch * t->nq; q++) {
        const float *p = t->b + 3 * q, *ref = t->a + q / t->nq * t->n * 3;
        float *d = v->dist2 + q * k;
        int32_t *id = v->idx + q * k;
        for (int64_t s = 0; s < k; s++) {
            const int start = fault & KNN_START_1E10 && s < cap;
            d[s] = start ? 1e10f : INFINITY, id[s] = start ? 0 : PCB_KNN_PAD;
        }
        for (int64_t j = 0; j < t->n; j++) {
            const float *r = ref + 3 * j;
            float e = pcb_nn_d2(r, p);
            if (fault & KNN_GEMM) {
                e = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) +
                    (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]) -
                    2 * (p[0] * r[0] + p[1] * r[1] + p[2] * r[2]);
                e = e < 0 ? 0 : e;
            }
            int64_t s = cap;
            while (s > 0 && (e < d[s - 1] || (fault & KNN_HIGH_TIES && e == d[s - 1])))
                s--;
            if (s == cap)
                continue;
            memmove(d + s + 1, d + s, (size_t)(cap - s - 1) * sizeof *d);
            memmove(id + s + 1, id + s, (size_t)(cap - s - 1) * sizeof *id);
            d[s] = e, id[s] = (int32_t)j;
        }
        for (int64_t s = len; s < k && fault & KNN_PAD_ZERO; s++)
            d[s] = 0, id[s] = 0;
    }
    return PCB_OK;
}

/* ---- ball query: naive's scan with the fault switched on ------------------------ */
enum {
    BALL_FIRST_AS_NEAREST = 1, /* the first k by index whatever the selection */
    BALL_PAD_POINT0 = 2,       /* rows padded with the first hit, an empty ball with point 0 */
    BALL_STRIDED = 4,          /* an overfull ball cut to every ceil(inside / k)-th point */
    BALL_DIST_INDEX = 8,       /* an overfull ball's distances overwritten by the indices */
    BALL_SHRUNK = 16           /* the radius test d2 < r2 (1 - 1e-3) */
};

static int ball_with(variant *v, int fault)
{
    const pcb_task *t = &v->task;
    const int64_t k = t->k;
    const float r2 = pcb_ball_r2(t->radius) * (fault & BALL_SHRUNK ? 1 - 1e-3f : 1);
    pcb_task as = *t;
    if (fault & BALL_FIRST_AS_NEAREST)
        as.select = PCB_BALL_FIRST;
    float *cd = malloc((size_t)t->n * sizeof *cd);
    int32_t *ci = malloc((size_t)t->n * sizeof *ci);
    if (!cd || !ci) {
        free(cd), free(ci);
        return pcb_fail(PCB_ENOMEM, "defect variant: out of memory");
    }
    for (int64_t q = 0; q < t->batch * t->nq; q++) {
        const float *p = t->b + 3 * q, *ref = t->a + q / t->nq * t->n * 3;
        float *d = v->dist2 + q * k;
        int32_t *id = v->idx + q * k;
        int64_t inside = 0;
        for (int64_t j = 0; j < t->n; j++) {
            const float e = pcb_nn_d2(ref + 3 * j, p);
            if (e < r2)
                cd[inside] = e, ci[inside++] = (int32_t)j;
        }
        int64_t kept = inside;
        if (fault & BALL_STRIDED && inside > k) {
            const int64_t stride = (inside + k - 1) / k;
            kept = 0;
            for (int64_t i = 0; i < inside; i += stride)
                cd[kept] = cd[i], ci[kept++] = ci[i];
        }
        int32_t c = pcb_ball_row_from(&as, cd, ci, kept, id, d);
        for (int64_t s = 0; fault & BALL_DIST_INDEX && inside > k && s < c; s++)
            d[s] = (float)id[s];
        if (fault & BALL_PAD_POINT0) {
            for (int64_t s = c; s < k; s++)
                id[s] = c ? id[0] : 0, d[s] = c ? d[0] : 0;
            c = (int32_t)k;
        }
        v->count[q] = c;
    }
    free(cd), free(ci);
    return PCB_OK;
}

static int ball_as_nearest_compute(void *s) { return ball_with(s, BALL_FIRST_AS_NEAREST); }
static int ball_point0_compute(void *s) { return ball_with(s, BALL_PAD_POINT0); }
static int ball_strided_compute(void *s) { return ball_with(s, BALL_STRIDED); }
static int ball_dist_index_compute(void *s) { return ball_with(s, BALL_DIST_INDEX); }
static int ball_shrunk_compute(void *s) { return ball_with(s, BALL_SHRUNK); }

static int knn_pad_zero_compute(void *s) { return knn_with(s, KNN_PAD_ZERO); }
static int knn_start_compute(void *s) { return knn_with(s, KNN_START_1E10); }
static int knn_gemm_compute(void *s) { return knn_with(s, KNN_GEMM); }
static int knn_ties_compute(void *s) { return knn_with(s, KNN_HIGH_TIES); }
static int knn_cap_compute(void *s) { return knn_with(s, KNN_CAP32); }

/* ---- EMD ----------------------------------------------------------------------- */
/* Every point of A to its nearest point of B, taken or not. */
static int nearest_compute(void *state)
{
    variant *v = state;
    const pcb_task *t = &v->task;
    for (int64_t b = 0; b < t->batch; b++) {
        const float *a = t->a + b * t->n * 3, *bb = t->b + b * t->n * 3;
        double sum = 0;
        for (int64_t i = 0; i < t->n; i++) {
            double best = HUGE_VAL;
            int32_t at = 0;
            for (int64_t j = 0; j < t->n; j++) {
                double d = pcb_emd_cost(a + 3 * i, bb + 3 * j);
                if (d < best)
                    best = d, at = (int32_t)j;
            }
            v->idx[b * t->n + i] = at;
            sum += best;
        }
        v->value[b] = sum / (double)t->n;
    }
    return PCB_OK;
}

/* A forward auction that stops after one phase at eps = 5% of the clouds'
 * extent, where the real ones scale eps down to their target. */
static int early_compute(void *state)
{
    variant *v = state;
    const pcb_task *t = &v->task;
    const int64_t n = t->n;
    double *price = malloc((size_t)n * sizeof *price);
    int32_t *owner = malloc((size_t)n * sizeof *owner);
    if (!price || !owner) {
        free(price), free(owner);
        return pcb_fail(PCB_ENOMEM, "defect variant: out of memory");
    }
    for (int64_t b = 0; b < t->batch; b++) {
        const float *a = t->a + b * n * 3, *bb = t->b + b * n * 3;
        int32_t *match = v->idx + b * n;
        const double extent = pcb_emd_cost_bound(a, bb, n), eps = extent > 0 ? 0.05 * extent : 1;
        for (int64_t j = 0; j < n; j++)
            price[j] = 0, owner[j] = -1;
        for (int64_t i = 0; i < n; i++)
            match[i] = -1;
        for (int64_t cursor = 0;;) { /* the lowest unassigned bidder bids */
            while (cursor < n && match[cursor] >= 0)
                cursor++;
            if (cursor == n)
                break;
            const int64_t i = cursor;
            double best = HUGE_VAL, second = HUGE_VAL;
            int64_t at = 0;
            for (int64_t j = 0; j < n; j++) {
                double c = pcb_emd_cost(a + 3 * i, bb + 3 * j) + price[j];
                if (c < best)
                    second = best, best = c, at = j;
                else if (c < second)
                    second = c;
            }
            price[at] += (second < HUGE_VAL ? second - best : 0) + eps;
            const int32_t prev = owner[at];
            owner[at] = (int32_t)i, match[i] = (int32_t)at;
            if (prev >= 0) {
                match[prev] = -1;
                cursor = prev < cursor ? prev : cursor;
            }
        }
        v->value[b] = pcb_emd_mean_matched(a, bb, n, match, NULL);
    }
    free(price), free(owner);
    return PCB_OK;
}

/* The exact solver, but for point counts the seed kernel cannot scan
 * without reading past a cost row, the last point of B is read from past
 * the row: here the start of the row, B's first point again. The matching
 * is optimal for the misread cloud, a bijection, and its value is B's real
 * one: only its distance to the optimum gives it away. */
static int overread_compute(void *state)
{
    variant *v = state;
    const pcb_task *t = &v->task;
    const size_t floats = (size_t)(t->batch * t->n * 3);
    float *b = malloc(floats * sizeof *b);
    if (!b)
        return pcb_fail(PCB_ENOMEM, "defect variant: out of memory");
    memcpy(b, t->b, floats * sizeof *b);
    for (int64_t c = 0; c < t->batch && !pcb_emd_seed_n_ok(t->n); c++)
        memcpy(b + (c * t->n + t->n - 1) * 3, b + c * t->n * 3, 3 * sizeof *b);
    pcb_task misread = *t;
    misread.b = b;
    pcb_result r = {.index = v->idx};
    int rc = pcb_run(&pcb_emd_exact, &misread, &r, NULL);
    for (int64_t c = 0; rc == PCB_OK && c < t->batch; c++)
        v->value[c] = pcb_emd_mean_matched(t->a + c * t->n * 3, t->b + c * t->n * 3, t->n,
                                           v->idx + c * t->n, NULL);
    free(b);
    return rc;
}

/* ---- the catalog --------------------------------------------------------------- */
/* The variants cost what their originals cost. */
#define VARIANT(p, nm, ex, gap, fn, about)                                                     \
    static const pcb_impl nm = {.name = #nm, .problem = p, .device = PCB_CPU,                 \
                                .promise = {.exact = ex, .max_gap = gap},                     \
                                .cost = p == PCB_FPS  ? PCB_COST_SAMPLES                      \
                                        : p != PCB_EMD ? PCB_COST_ALL_PAIRS                   \
                                                      : PCB_COST_CUBIC,                       \
                                .summary = about, .prepare = v_prepare,                       \
                                .compute = fn, .fetch = v_fetch, .release = v_release}

VARIANT(PCB_FPS, near_origin_skip, 1, 0, near_origin_compute, "dp, skipping near-origin points");
VARIANT(PCB_FPS, capped_init, 1, 0, capped_compute, "dp, minima starting at 5e4");
VARIANT(PCB_FPS, repeat_when_done, 1, 0, repeat_compute, "dp, repeating once all are chosen");
VARIANT(PCB_FPS, ties_to_highest, 1, 0, ties_high_compute, "dp, ties to the highest index");
VARIANT(PCB_NN, expanded_norm, 1, 0, expanded_compute, "brute force, expanded squared norm");
VARIANT(PCB_NN, azimuth_wedge, 1, 0, wedge_compute, "brute force within the query's wedge");
VARIANT(PCB_CHAMFER, gemm_chamfer, 1, 0, gemm_chamfer_compute, "brute force, expanded norm");
VARIANT(PCB_CHAMFER, one_way_value, 1, 0, one_way_compute, "exact, value of A to B only");
VARIANT(PCB_KNN, knn_pad_zero, 1, 0, knn_pad_zero_compute, "brute force, padding (0, 0)");
VARIANT(PCB_KNN, knn_start_1e10, 1, 0, knn_start_compute, "brute force, rows start at 1e10");
VARIANT(PCB_KNN, knn_gemm, 1, 0, knn_gemm_compute, "brute force, expanded squared norm");
VARIANT(PCB_KNN, knn_cap32, 1, 0, knn_cap_compute, "brute force, k silently capped at 32");
/* exact (any tie order is right) but promising the canonical one */
static const pcb_impl knn_high_ties = {.name = "knn_high_ties", .problem = PCB_KNN,
                                       .device = PCB_CPU, .promise = {.exact = 1, .canonical = 1},
                                       .cost = PCB_COST_ALL_PAIRS,
                                       .summary = "brute force, ties by decreasing index",
                                       .prepare = v_prepare, .compute = knn_ties_compute,
                                       .fetch = v_fetch, .release = v_release};
VARIANT(PCB_BALL, ball_first_as_nearest, 1, 0, ball_as_nearest_compute,
        "scan, the first k by index for either selection");
VARIANT(PCB_BALL, ball_point0, 1, 0, ball_point0_compute,
        "scan, rows padded with the first hit, point 0 for an empty ball");
VARIANT(PCB_BALL, ball_strided, 1, 0, ball_strided_compute,
        "scan, an overfull ball cut to a strided subset");
VARIANT(PCB_BALL, ball_dist_index, 1, 0, ball_dist_index_compute,
        "scan, an overfull ball's distances replaced by indices");
VARIANT(PCB_BALL, ball_shrunk, 1, 0, ball_shrunk_compute, "scan, radius test d2 < r2 (1 - 1e-3)");
VARIANT(PCB_EMD, nearest_target, 0, 0, nearest_compute, "each point to its nearest target");
VARIANT(PCB_EMD, early_stop, 0, 0.01, early_compute, "one auction phase at a coarse eps");
VARIANT(PCB_EMD, row_overread, 1, 0, overread_compute, "exact, B's last point misread");

#ifdef PCB_HAVE_FLANN
extern const pcb_impl pcb_nn_flann_randomized; /* the real one, registered as approximate */
#endif
#ifdef PCB_HAVE_CUDA
extern const pcb_impl pcb_defect_fps_torn_argmax; /* defect_torn_argmax.cu */
#endif

static const pcb_defect catalog[] = {
    {&near_origin_skip, "skips every point whose squared norm is <= 1e-3 (never updated, never "
                        "chosen)", "PointNet++'s CUDA FPS kernel and its copies (pointnet2_ops, timed as a peer)",
     0, 0},
    {&capped_init, "running minimum distances start at 5e4, capping larger squared distances",
     "FPS kernels that initialise their distance buffer to a constant instead of +inf "
     "(torch_cluster's fps, timed as a peer)", 0, 0},
#ifdef PCB_HAVE_CUDA
    {&pcb_defect_fps_torn_argmax, "block-wide argmax by an unguarded compare-and-store into "
                                  "one shared (distance, index) pair: racing threads tear the "
                                  "pair and lose the maximum", "CUDA FPS kernels whose "
                                  "reduction trades barriers or atomics for speed", 0, 0},
#endif
    {&repeat_when_done, "repeats its previous sample once every distinct point is chosen "
                        "(m above the distinct points)",
     "the classic kernel and its copies on clouds with duplicates (PyTorch3D #1486): samples "
     "must be distinct", 0, 0},
    {&ties_to_highest, "takes the highest index among tied farthest points (and among the "
                       "unchosen duplicates once only those remain)",
     "kernels whose reduction keeps the last of equal candidates; correct (any tie is "
     "right), so it must pass", 1, 0},
    {&expanded_norm, "squared distance as |q|^2 + |p|^2 - 2 q.p in float32: cancels far from "
                     "the origin (lidar, UTM)", "batched distance code (the matrix-product "
                                                "trick) used for NN and ICP", 0, 0},
    {&azimuth_wedge, "searches only the query's azimuth wedge (300 wedges by atan2(y, x))",
     "the NN slides' attempt 3", 0, 0},
#ifdef PCB_HAVE_FLANN
    {&pcb_nn_flann_randomized, "FLANN's default randomized k-d trees (4 trees, 32 checks): "
                               "approximate, misses neighbours in 3-D", "FLANN's defaults, as "
                               "scan-matching code uses them", 0, 1},
#endif
    {&gemm_chamfer, "chamfer from |a|^2 + |b|^2 - 2 a.b distances in float32 (both ways): "
                    "wrong neighbours and values far from the origin, negative distances "
                    "clamped", "chamfer losses written with torch.cdist or a matrix product", 0, 0},
    {&one_way_value, "the nearest points right, the value only the mean from A to B",
     "one-directional chamfer (chamferdist's default) compared with the symmetric one", 0, 0},
    {&knn_pad_zero, "a row shorter than k (k > n) padded with index 0 at distance 0: a real "
                    "point", "PyTorch3D's knn_points", 0, 0},
    {&knn_start_1e10, "every row starts at (0, 1e10): a neighbour farther than that (1e5 "
                      "units) never enters, point 0 is returned in its place",
     "torch_cluster's knn and mmcv's knn", 0, 0},
    {&knn_gemm, "squared distances as |q|^2 + |p|^2 - 2 q.p in float32: wrong neighbours far "
                "from the origin", "torch.cdist + topk, faiss GPU's flat index", 0, 0},
    {&knn_high_ties, "equal distances by decreasing index while promising the canonical order "
                     "(ties to the lower index)", "kNN kernels with an unstable sort or heap "
                                                  "that document a tie rule", 0, 0},
    {&knn_cap32, "at most 32 neighbours whatever k, the rest of the row padding, no error",
     "silent k caps (torch_cluster 100, mmcv 99, Open3D GPU 2,048)", 0, 0},
    {&ball_first_as_nearest, "the K inside points of lowest index returned as the K nearest",
     "PyTorch3D ball_query, pointnet2_ops, mmcv and torch_cluster radius used where the "
     "nearest are meant (yanx27/Pointnet_Pointnet2_pytorch #209, #245)", 0, 0},
    {&ball_point0, "rows padded with the first hit and an empty ball filled with point 0, a "
                   "real point, with no count", "pointnet2_ops ball_query", 0, 0},
    {&ball_strided, "an overfull ball cut to every ceil(inside / K)-th inside point: neither "
                    "the first nor the nearest K", "Pointcept's pointops ball query, "
                    "torch_cluster radius on the CPU (k-d-tree order)", 0, 0},
    {&ball_dist_index, "when a ball overflows, the distances of the row overwritten by the "
                       "candidates' indices", "Pointcept's pointops ball query", 0, 0},
    {&ball_shrunk, "the radius test d2 < r2 (1 - 1e-3): points inside by more than float32 "
                   "rounding lost", "ball queries with a tolerance subtracted from the radius",
     0, 0},
    {&nearest_target, "matches each point of A to its nearest point of B, so two points can "
                      "share one target: not a bijection", "MSN's EMD", 0, 0},
    {&early_stop, "an auction that stops at a coarse eps (5% of the extent) while promising "
                  "1% of the optimum", "auction EMD kernels with a fixed iteration cap", 0, 0},
    {&row_overread, "reads past a cost row for n outside {< 1024, 1024, 2048, 4096}: the last "
                    "target is misread", "the documents' CUDA auction kernel (its unrolled scan)",
     0, 0},
    {NULL, NULL, NULL, 0, 0}};

const pcb_defect *pcb_defects(void)
{
    return catalog;
}

int pcb_defect_caught(const pcb_defect *d, const pcb_judgement *j)
{
    if (j->verdict == PCB_VERDICT_FAIL)
        return 1;
    /* approximate by design: caught by its misses */
    return d->by_recall && j->rep.recall >= 0 && j->rep.recall < 1;
}
