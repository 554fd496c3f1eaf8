/* nn_omp.c - exact brute force on every core.
 *
 * Threads share out tiles of QUERY_TILE queries; each tile walks the
 * reference cloud in blocks of REF_BLOCK points (48 KiB as x, y, z arrays,
 * so a block stays in L1/L2 while the tile's queries reuse it). Per query
 * and CHUNK of a block a vectorized min finds the smallest squared
 * distance; only when that beats the query's best does a scalar pass over
 * that chunk find its index (a few chunks per query, so the vector pass
 * does nearly all the work). Both passes evaluate (q - p)^2 with the same
 * operations in the same order, so they agree bit for bit. */
#include <float.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"

enum { QUERY_TILE = 8, REF_BLOCK = 4096, CHUNK = 256, LANES = 8 };

typedef struct {
    pcb_task task;
    float *x, *y, *z; /* reference clouds, batch * n each */
    int32_t *idx;
    float *dist2;
} omp_state;

static void omp_release(void *state)
{
    omp_state *s = state;
    if (s) {
        free(s->x);
        free(s->y);
        free(s->z);
        free(s->idx);
        free(s->dist2);
    }
    free(s);
}

static int omp_prepare(const pcb_task *t, void **state)
{
    int rc = pcb_nn_coords_fit(t, "omp");
    if (rc != PCB_OK)
        return rc;
    size_t refs = (size_t)(t->batch * t->n), q = (size_t)(t->batch * t->nq);
    omp_state *s = calloc(1, sizeof *s);
    if (!s || !(s->x = malloc(refs * sizeof(float))) || !(s->y = malloc(refs * sizeof(float))) ||
        !(s->z = malloc(refs * sizeof(float))) || !(s->idx = malloc(q * sizeof *s->idx)) ||
        !(s->dist2 = malloc(q * sizeof *s->dist2))) {
        omp_release(s);
        return pcb_fail(PCB_ENOMEM, "nn omp: out of memory");
    }
    for (size_t i = 0; i < refs; i++) {
        s->x[i] = t->a[3 * i];
        s->y[i] = t->a[3 * i + 1];
        s->z[i] = t->a[3 * i + 2];
    }
    s->task = *t;
    *state = s;
    return PCB_OK;
}

/* LANES independent running minima: the compiler turns the fixed inner
 * loop into vector min instructions (an omp simd reduction kept its
 * accumulator on the stack and ran 2x slower). */
static float chunk_min(const float *x, const float *y, const float *z, int64_t count,
                       const float *q)
{
    float qx = q[0], qy = q[1], qz = q[2], lane[LANES];
    for (int l = 0; l < LANES; l++)
        lane[l] = FLT_MAX;
    int64_t j = 0;
    for (; j + LANES <= count; j += LANES)
        for (int l = 0; l < LANES; l++) {
            float dx = x[j + l] - qx, dy = y[j + l] - qy, dz = z[j + l] - qz;
            float d = dx * dx + dy * dy + dz * dz;
            lane[l] = d < lane[l] ? d : lane[l];
        }
    for (; j < count; j++) {
        float dx = x[j] - qx, dy = y[j] - qy, dz = z[j] - qz;
        float d = dx * dx + dy * dy + dz * dz;
        lane[0] = d < lane[0] ? d : lane[0];
    }
    float best = lane[0];
    for (int l = 1; l < LANES; l++)
        best = lane[l] < best ? lane[l] : best;
    return best;
}

static int64_t chunk_argmin(const float *x, const float *y, const float *z, int64_t count,
                            const float *q, float *best)
{
    float qx = q[0], qy = q[1], qz = q[2];
    int64_t besti = 0;
    *best = FLT_MAX;
    for (int64_t j = 0; j < count; j++) {
        float dx = x[j] - qx, dy = y[j] - qy, dz = z[j] - qz;
        float d = dx * dx + dy * dy + dz * dz;
        if (d < *best) {
            *best = d;
            besti = j;
        }
    }
    return besti;
}

static void tile(const omp_state *s, int64_t b, int64_t q0, int64_t count)
{
    const pcb_task *t = &s->task;
    const float *x = s->x + b * t->n, *y = s->y + b * t->n, *z = s->z + b * t->n;
    const float *qry = t->b + (b * t->nq + q0) * 3;
    float best[QUERY_TILE];
    int64_t besti[QUERY_TILE];
    for (int64_t k = 0; k < count; k++) {
        /* Every distance is finite (coordinates are checked), so the first
         * chunk always replaces this. */
        best[k] = INFINITY;
        besti[k] = 0;
    }
    for (int64_t j0 = 0; j0 < t->n; j0 += REF_BLOCK) {
        int64_t len = t->n - j0 < REF_BLOCK ? t->n - j0 : REF_BLOCK;
        for (int64_t k = 0; k < count; k++)
            for (int64_t c = j0; c < j0 + len; c += CHUNK) {
                const float *q = qry + 3 * k;
                int64_t clen = j0 + len - c < CHUNK ? j0 + len - c : CHUNK;
                if (chunk_min(x + c, y + c, z + c, clen, q) < best[k])
                    besti[k] = c + chunk_argmin(x + c, y + c, z + c, clen, q, &best[k]);
            }
    }
    for (int64_t k = 0; k < count; k++) {
        s->idx[b * t->nq + q0 + k] = (int32_t)besti[k];
        s->dist2[b * t->nq + q0 + k] = best[k];
    }
}

static int omp_compute(void *state)
{
    const omp_state *s = state;
    const pcb_task *t = &s->task;
    int64_t per_cloud = (t->nq + QUERY_TILE - 1) / QUERY_TILE, tiles = t->batch * per_cloud;
    int threads = t->opt.threads > 0 ? t->opt.threads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads)
    for (int64_t i = 0; i < tiles; i++) {
        int64_t b = i / per_cloud, q0 = i % per_cloud * QUERY_TILE;
        tile(s, b, q0, t->nq - q0 < QUERY_TILE ? t->nq - q0 : QUERY_TILE);
    }
    return PCB_OK;
}

static int omp_fetch(void *state, pcb_result *out)
{
    omp_state *s = state;
    size_t q = (size_t)(s->task.batch * s->task.nq);
    memcpy(out->index, s->idx, q * sizeof *s->idx);
    if (out->dist2)
        memcpy(out->dist2, s->dist2, q * sizeof *s->dist2);
    return PCB_OK;
}

static int omp_counters(void *state, pcb_counters *c)
{
    const pcb_task *t = &((omp_state *)state)->task;
    c->distance_evals = t->batch * t->n * t->nq;
    return PCB_OK;
}

const pcb_impl pcb_nn_omp = {
    .name = "omp",
    .cost = PCB_COST_ALL_PAIRS,
    .problem = PCB_NN,
    .device = PCB_CPU,
    .promise = {.exact = 1},
    .summary = "OpenMP brute force over queries, reference blocks cached, vectorized min",
    .prepare = omp_prepare,
    .compute = omp_compute,
    .fetch = omp_fetch,
    .release = omp_release,
    .counters = omp_counters,
};
