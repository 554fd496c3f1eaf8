/* fps_omp.c - OpenMP FPS. prepare copies the clouds to separate x, y, z
 * arrays so that the distance update vectorises; each step then makes two
 * passes over a block of points: update the running minima while taking
 * their maximum (SIMD), then find the first point at that maximum.
 *
 * With at least as many clouds as threads, each thread samples whole clouds.
 * Otherwise the threads share one cloud at a time: each owns a contiguous
 * block of points, and after one barrier every thread reduces the per-thread
 * candidates itself (max distance, then lowest index), so the result is the
 * canonical sequence for any thread count. One parallel region per cloud,
 * one barrier per step. Without an explicit thread count a shared cloud gets
 * at most one thread per OMP_MIN_BLOCK points (below that the barrier costs
 * more than the work), and the clouds are shared only when there are fewer
 * of them than such a team. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "fps.h"

#define OMP_MIN_BLOCK 4096

/* One thread's candidate, alone on its cache line. */
typedef struct {
    float d;
    int32_t i;
    char pad[56];
} candidate;

typedef struct {
    pcb_task task;
    int threads;      /* team size */
    int over_batch;   /* 1: a thread per cloud, 0: the team shares each cloud */
    float *x, *y, *z; /* batch x n each */
    int32_t *idx;
    float *mind;      /* threads x n (a thread per cloud) or n (shared cloud) */
    candidate *cand;  /* 2 x threads: alternate halves on alternate steps */
} omp_state;

/* Update the running minima of points [lo, hi) with sample q; return the
 * block's largest one (-1 if empty) and its lowest index in *besti. The
 * arithmetic is pcb_fps_d2's, so the values equal dp's bit for bit. */
static float update_block(const float *x, const float *y, const float *z, float *mind,
                          int64_t lo, int64_t hi, int32_t q, int32_t *besti)
{
    const float qx = x[q], qy = y[q], qz = z[q];
    float best = -1.0f;
#pragma omp simd reduction(max : best)
    for (int64_t k = lo; k < hi; k++) {
        float dx = x[k] - qx, dy = y[k] - qy, dz = z[k] - qz;
        float d = dx * dx + dy * dy + dz * dz;
        float dk = d < mind[k] ? d : mind[k];
        mind[k] = dk;
        best = dk > best ? dk : best;
    }
    *besti = -1;
    for (int64_t k = lo; k < hi; k++)
        if (mind[k] == best) {
            *besti = (int32_t)k;
            break;
        }
    return best;
}

static void sample_own_cloud(const omp_state *s, int64_t b, float *mind)
{
    const int64_t n = s->task.n, m = s->task.m;
    const float *x = s->x + b * n, *y = s->y + b * n, *z = s->z + b * n;
    int32_t *idx = s->idx + b * m;
    for (int64_t k = 0; k < n; k++)
        mind[k] = INFINITY;
    idx[0] = (int32_t)s->task.start;
    for (int64_t j = 1; j < m; j++) {
        mind[idx[j - 1]] = -1.0f; /* a sample is not a candidate again (dp's rule) */
        update_block(x, y, z, mind, 0, n, idx[j - 1], &idx[j]);
    }
}

static void sample_shared_cloud(omp_state *s, int64_t b)
{
    const int64_t n = s->task.n, m = s->task.m;
    const float *x = s->x + b * n, *y = s->y + b * n, *z = s->z + b * n;
    int32_t *idx = s->idx + b * m;
#pragma omp parallel num_threads(s->threads)
    {
        /* The team may be smaller than asked for (nesting, limits). */
        const int nt = omp_get_num_threads(), tid = omp_get_thread_num();
        const int64_t lo = n * tid / nt, hi = n * (tid + 1) / nt;
        for (int64_t k = lo; k < hi; k++)
            s->mind[k] = INFINITY;
        int32_t last = (int32_t)s->task.start;
        if (tid == 0)
            idx[0] = last;
        for (int64_t j = 1; j < m; j++) {
            int32_t besti;
            if (last >= lo && last < hi) /* its owner marks the sample, as dp does */
                s->mind[last] = -1.0f;
            float best = update_block(x, y, z, s->mind, lo, hi, last, &besti);
            /* Step j writes one half and reads it after the barrier; the
             * next write to that half (step j + 2) comes after the barrier
             * of step j + 1, which no thread passes before all have read. */
            candidate *c = s->cand + (j & 1) * s->threads;
            c[tid].d = best;
            c[tid].i = besti;
#pragma omp barrier
            float bd = c[0].d;
            int32_t bi = c[0].i;
            for (int t = 1; t < nt; t++)
                if (pcb_fps_better(c[t].d, c[t].i, bd, bi)) {
                    bd = c[t].d;
                    bi = c[t].i;
                }
            last = bi;
            if (tid == 0)
                idx[j] = last;
        }
    }
}

static void omp_release(void *state)
{
    omp_state *s = state;
    if (s) {
        free(s->x);
        free(s->idx);
        free(s->mind);
        free(s->cand);
    }
    free(s);
}

static int omp_prepare(const pcb_task *t, void **state)
{
    omp_state *s = calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "fps omp: out of memory");
    s->task = *t;
    if (t->opt.threads > 0) {
        s->threads = t->opt.threads;
        s->over_batch = t->batch >= s->threads;
    } else {
        /* Sharing a cloud among `team` threads beats a thread per cloud
         * only when there are fewer clouds than that team. */
        const int most = omp_get_max_threads();
        const int64_t useful = t->n / OMP_MIN_BLOCK > 1 ? t->n / OMP_MIN_BLOCK : 1;
        const int team = useful < most ? (int)useful : most;
        s->over_batch = t->batch >= team;
        s->threads = !s->over_batch ? team : t->batch < most ? (int)t->batch : most;
    }
    const size_t points = (size_t)t->batch * (size_t)t->n;
    const size_t rows = s->over_batch ? (size_t)s->threads : 1;
    if (!(s->x = malloc(3 * points * sizeof *s->x)) ||
        !(s->idx = malloc((size_t)(t->batch * t->m) * sizeof *s->idx)) ||
        !(s->mind = malloc(rows * (size_t)t->n * sizeof *s->mind)) ||
        !(s->cand = aligned_alloc(64, 2 * (size_t)s->threads * sizeof *s->cand))) {
        omp_release(s);
        return pcb_fail(PCB_ENOMEM, "fps omp: out of memory");
    }
    s->y = s->x + points;
    s->z = s->y + points;
    for (size_t i = 0; i < points; i++) {
        s->x[i] = t->a[3 * i];
        s->y[i] = t->a[3 * i + 1];
        s->z[i] = t->a[3 * i + 2];
    }
    *state = s;
    return PCB_OK;
}

static int omp_compute(void *state)
{
    omp_state *s = state;
    const pcb_task *t = &s->task;
    if (s->over_batch) {
#pragma omp parallel for num_threads(s->threads) schedule(dynamic, 1)
        for (int64_t b = 0; b < t->batch; b++)
            sample_own_cloud(s, b, s->mind + (size_t)omp_get_thread_num() * (size_t)t->n);
    } else {
        for (int64_t b = 0; b < t->batch; b++)
            sample_shared_cloud(s, b);
    }
    return PCB_OK;
}

static int omp_fetch(void *state, pcb_result *out)
{
    omp_state *s = state;
    memcpy(out->index, s->idx, (size_t)(s->task.batch * s->task.m) * sizeof *s->idx);
    return PCB_OK;
}

static int omp_counters(void *state, pcb_counters *c)
{
    const pcb_task *t = &((omp_state *)state)->task;
    c->distance_evals = t->batch * t->n * (t->m - 1);
    c->iterations = t->batch * (t->m - 1);
    return PCB_OK;
}

const pcb_impl pcb_fps_omp = {
    .name = "omp",
    .cost = PCB_COST_SAMPLES,
    .problem = PCB_FPS,
    .device = PCB_CPU,
    .promise = {.exact = 1, .canonical = 1},
    .summary = "OpenMP over the batch or within a cloud (one barrier a step), SIMD "
               "distance update on x/y/z arrays: O(n m)",
    .prepare = omp_prepare,
    .compute = omp_compute,
    .fetch = omp_fetch,
    .release = omp_release,
    .counters = omp_counters,
};
