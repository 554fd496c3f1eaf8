/* grid_common.c - what the CPU implementations of grid sampling share: the
 * origin, the keys, two stable sorts and the walk that makes a cloud's
 * voxels, and their rows. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "grid.h"
#include "impl/sort.h"

void pcb_grid_origin(const pcb_task *t, const float *xyz, int64_t n, double origin[3])
{
    for (int k = 0; k < 3; k++) {
        if (t->origin_given) {
            origin[k] = t->origin[k];
            continue;
        }
        float low = xyz[k];
        for (int64_t i = 1; i < n; i++)
            low = xyz[3 * i + k] < low ? xyz[3 * i + k] : low;
        origin[k] = low;
    }
}

int pcb_grid_rows_init(pcb_grid_rows *r, const pcb_task *t, const char *impl)
{
    memset(r, 0, sizeof *r);
    r->task = *t;
    const size_t rows = (size_t)(t->batch * t->n);
    r->index = malloc(2 * rows * sizeof *r->index);
    r->count = malloc(rows * sizeof *r->count);
    const int means = t->select == PCB_GRID_MEAN;
    if (means)
        r->mean = malloc(3 * rows * sizeof *r->mean);
    if (!r->index || !r->count || (means && !r->mean)) {
        pcb_grid_rows_free(r);
        return pcb_fail(PCB_ENOMEM, "grid %s: no memory for %zu rows", impl, rows);
    }
    return PCB_OK;
}

void pcb_grid_rows_free(pcb_grid_rows *r)
{
    free(r->index), free(r->count), free(r->mean);
    r->index = r->count = NULL, r->mean = NULL;
}

int pcb_grid_rows_fetch(void *state, pcb_result *out)
{
    const pcb_grid_rows *r = state;
    const size_t rows = (size_t)(r->task.batch * r->task.n);
    if (!out->count)
        return pcb_fail(PCB_EINVAL, "grid: the answer needs its count array");
    if (r->mean && !out->mean)
        return pcb_fail(PCB_EINVAL, "grid: select mean: the answer needs its mean array");
    memcpy(out->index, r->index, 2 * rows * sizeof *out->index);
    memcpy(out->count, r->count, rows * sizeof *out->count);
    if (r->mean)
        memcpy(out->mean, r->mean, 3 * rows * sizeof *out->mean);
    return PCB_OK;
}

typedef struct {
    uint64_t key, index;
} keyed;

static int by_key_then_index(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* The cloud's origin, lowest and highest voxel an axis, on threads threads
 * (floor is monotonic: the extreme points give the span). */
static void frame_of(const pcb_task *t, const float *xyz, int64_t n, int threads, double origin[3],
                     double low[3], double high[3])
{
    for (int k = 0; k < 3; k++) {
        float lo = xyz[k], hi = xyz[k];
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1) \
    reduction(min : lo) reduction(max : hi)
        for (int64_t i = 1; i < n; i++) {
            lo = xyz[3 * i + k] < lo ? xyz[3 * i + k] : lo;
            hi = xyz[3 * i + k] > hi ? xyz[3 * i + k] : hi;
        }
        origin[k] = t->origin_given ? t->origin[k] : (double)lo;
        low[k] = pcb_grid_coord(lo, origin[k], t->cell[k]);
        high[k] = pcb_grid_coord(hi, origin[k], t->cell[k]);
    }
}

int pcb_grid_cloud(const pcb_task *t, int64_t c, int threads, uint64_t *scratch,
                   pcb_grid_rows *rows)
{
    const int64_t n = t->n;
    const int radix = threads > 0;
    const float *xyz = t->a + c * n * 3;
    double origin[3], low[3], high[3];
    frame_of(t, xyz, n, threads, origin, low, high);
    for (int k = 0; k < 3; k++)
        if (!(high[k] - low[k] < (double)PCB_GRID_AXIS_SPAN))
            return pcb_fail(PCB_EUNSUPPORTED, "grid: cloud %lld spans %.17g voxels along %c "
                            "(at most %lld)", (long long)c, high[k] - low[k] + 1, "xyz"[k],
                            (long long)PCB_GRID_AXIS_SPAN);
    uint64_t *key = scratch, *key_tmp = scratch + n;
    int32_t *order = (int32_t *)(scratch + 2 * n), *order_tmp = (int32_t *)(scratch + 3 * n);
    keyed *pairs = (keyed *)scratch; /* qsort's (2n words) */
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1)
    for (int64_t i = 0; i < n; i++) {
        uint64_t k64 = 0;
        for (int k = 0; k < 3; k++)
            k64 = (k64 << PCB_GRID_AXIS_BITS) |
                  (uint64_t)(pcb_grid_coord(xyz[3 * i + k], origin[k], t->cell[k]) - low[k]);
        if (radix)
            key[i] = k64, order[i] = (int32_t)i;
        else
            pairs[i] = (keyed){k64, (uint64_t)i};
    }
    if (radix) {
        pcb_sort_pairs(key, order, n, key_tmp, order_tmp, threads);
    } else {
        qsort(pairs, (size_t)n, sizeof *pairs, by_key_then_index);
        key = scratch + 2 * n, order = (int32_t *)(scratch + 3 * n); /* past the pairs */
        for (int64_t i = 0; i < n; i++)
            key[i] = pairs[i].key, order[i] = (int32_t)pairs[i].index;
    }
    pcb_grid_walk(t, xyz, n, origin, low, key, order, rows->index + c * n,
                  rows->index + t->batch * n + c * n, rows->count + c * n,
                  rows->mean ? rows->mean + 3 * c * n : NULL);
    return PCB_OK;
}

void pcb_grid_walk(const pcb_task *t, const float *xyz, int64_t n, const double origin[3],
                   const double low[3], const uint64_t *key, const int32_t *order, int32_t *rows,
                   int32_t *inverse, int32_t *counts, float *mean)
{
    int64_t v = -1;
    double best = 0, vox[3] = {0, 0, 0}, sum[3] = {0, 0, 0};
    uint64_t draw = 0;
    for (int64_t j = 0; j < n; j++) {
        const int32_t i = order[j];
        if (j == 0 || key[j] != key[j - 1]) {
            if (mean && v >= 0)
                pcb_grid_mean_put(sum, counts[v], mean + 3 * v);
            v++;
            rows[v] = i, counts[v] = 0;
            sum[0] = sum[1] = sum[2] = 0;
            pcb_grid_key_voxel(key[j], low, vox);
            if (t->select == PCB_BALL_NEAREST)
                best = pcb_grid_d2(xyz + 3 * i, vox, origin, t->cell);
            else if (t->select == PCB_GRID_RANDOM)
                draw = pcb_grid_draw(t->seed, i);
        } else if (t->select == PCB_BALL_NEAREST) { /* later points have higher indices */
            const double d2 = pcb_grid_d2(xyz + 3 * i, vox, origin, t->cell);
            if (d2 < best)
                best = d2, rows[v] = i;
        } else if (t->select == PCB_GRID_RANDOM) {
            const uint64_t d = pcb_grid_draw(t->seed, i);
            if (d < draw)
                draw = d, rows[v] = i;
        }
        for (int k = 0; mean && k < 3; k++) /* increasing index within the voxel */
            sum[k] += (double)xyz[3 * i + k];
        counts[v]++;
        inverse[i] = (int32_t)v;
    }
    if (mean && v >= 0)
        pcb_grid_mean_put(sum, counts[v], mean + 3 * v);
    for (int64_t r = v + 1; r < n; r++) {
        rows[r] = -1, counts[r] = 0;
        if (mean)
            mean[3 * r] = mean[3 * r + 1] = mean[3 * r + 2] = 0;
    }
}
