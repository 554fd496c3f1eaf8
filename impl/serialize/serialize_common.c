/* serialize_common.c - what the CPU implementations of serialization share:
 * the batch's frame (origins, depth, its checks), the rows, and a cloud's
 * codes, sort, order and inverse. */
#include <stdlib.h>
#include <string.h>

#include "impl/sort.h"
#include "serialize.h"

int pcb_serialize_frame(const pcb_task *t, int threads, double *origin, int *depth)
{
    double top = 0; /* the batch's highest voxel coordinate */
    for (int64_t c = 0; c < t->batch; c++) {
        const int64_t n = pcb_cloud_size(t, 0, c);
        const float *xyz = t->a + c * t->n * 3;
        for (int k = 0; k < 3; k++) {
            float lo = n > 0 ? xyz[k] : 0, hi = lo;
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1) \
    reduction(min : lo) reduction(max : hi)
            for (int64_t i = 1; i < n; i++) {
                lo = xyz[3 * i + k] < lo ? xyz[3 * i + k] : lo;
                hi = xyz[3 * i + k] > hi ? xyz[3 * i + k] : hi;
            }
            const double o = t->origin_given ? t->origin[k] : (double)lo;
            origin[3 * c + k] = o;
            if (n == 0)
                continue;
            /* floor is monotonic: the extreme points give the range */
            const double low = pcb_grid_coord(lo, o, t->cell[k]);
            const double high = pcb_grid_coord(hi, o, t->cell[k]);
            if (low < 0)
                return pcb_fail(PCB_EINVAL, "serialize: cloud %lld has voxel coordinate %.17g "
                                "along %c, below the origin %.9g (an origin given must be at "
                                "or below every point)", (long long)c, low, "xyz"[k], o);
            top = high > top ? high : top;
        }
    }
    const int given = t->depth;
    int d = given;
    if (!given) /* the least depth whose cube holds the batch */
        for (d = 1; d < PCB_CURVE_MAX_DEPTH && !(top < (double)((int64_t)1 << d)); d++)
            ;
    if (!(top < (double)((int64_t)1 << d)))
        return pcb_fail(PCB_EINVAL, "serialize: a voxel coordinate of %.17g needs more than "
                        "%d bits an axis (%s %d)", top, d, given ? "depth" : "at most",
                        given ? given : PCB_CURVE_MAX_DEPTH);
    const int cloud_bits = pcb_curve_bits((uint64_t)(t->batch - 1));
    if (3 * d + cloud_bits > 63)
        return pcb_fail(PCB_EINVAL, "serialize: %d bits a code (3 x depth %d) and %d for %lld "
                        "clouds do not fit 63 bits", 3 * d, d, cloud_bits, (long long)t->batch);
    *depth = d;
    return PCB_OK;
}

int pcb_serialize_rows_init(pcb_serialize_rows *r, const pcb_task *t, const char *impl)
{
    memset(r, 0, sizeof *r);
    r->task = *t;
    const size_t points = (size_t)(t->batch * t->n);
    r->index = malloc(2 * points * sizeof *r->index);
    r->code = malloc(points * sizeof *r->code);
    r->origin = malloc((size_t)t->batch * 3 * sizeof *r->origin);
    if (!r->index || !r->code || !r->origin) {
        pcb_serialize_rows_free(r);
        return pcb_fail(PCB_ENOMEM, "serialize %s: no memory for %zu points", impl, points);
    }
    return PCB_OK;
}

void pcb_serialize_rows_free(pcb_serialize_rows *r)
{
    free(r->index), free(r->code), free(r->origin);
    r->index = NULL, r->code = NULL, r->origin = NULL;
}

int pcb_serialize_rows_fetch(void *state, pcb_result *out)
{
    const pcb_serialize_rows *r = state;
    const size_t points = (size_t)(r->task.batch * r->task.n);
    if (!out->code)
        return pcb_fail(PCB_EINVAL, "serialize: the answer needs its code array");
    memcpy(out->index, r->index, 2 * points * sizeof *out->index);
    memcpy(out->code, r->code, points * sizeof *out->code);
    return PCB_OK;
}

typedef struct {
    uint64_t code, index;
} keyed;

static int by_code_then_index(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    if (a->code != b->code)
        return a->code < b->code ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

void pcb_serialize_cloud(const pcb_task *t, int64_t c, int depth, const double origin[3],
                         int threads, uint64_t *scratch, int32_t *index, int64_t *code)
{
    const int64_t n = pcb_cloud_size(t, 0, c), span = t->n, batch = t->batch;
    const float *xyz = t->a + c * span * 3;
    int32_t *order = index + c * span, *inverse = index + batch * span + c * span;
    int64_t *codes = code + c * span;
    uint64_t *key = scratch, *key_tmp = scratch + n;
    int32_t *value = (int32_t *)(scratch + 2 * n), *value_tmp = (int32_t *)(scratch + 3 * n);
    keyed *pairs = (keyed *)scratch; /* qsort's (2n words) */
    const uint64_t cloud = (uint64_t)c << (3 * depth);
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1)
    for (int64_t i = 0; i < n; i++) {
        uint32_t v[3];
        for (int k = 0; k < 3; k++)
            v[k] = (uint32_t)pcb_grid_coord(xyz[3 * i + k], origin[k], t->cell[k]);
        const uint64_t h = pcb_curve_index(t->curve, depth, v[0], v[1], v[2]);
        codes[i] = (int64_t)(cloud | h);
        if (threads > 0)
            key[i] = h, value[i] = (int32_t)i;
        else
            pairs[i] = (keyed){h, (uint64_t)i};
    }
    if (threads > 0) {
        pcb_sort_pairs(key, value, n, key_tmp, value_tmp, threads);
    } else {
        qsort(pairs, (size_t)n, sizeof *pairs, by_code_then_index);
        value = (int32_t *)(scratch + 3 * n); /* past the pairs */
        for (int64_t j = 0; j < n; j++)
            value[j] = (int32_t)pairs[j].index;
    }
    for (int64_t j = 0; j < n; j++)
        order[j] = value[j], inverse[value[j]] = (int32_t)j;
    for (int64_t j = n; j < span; j++)
        order[j] = -1, inverse[j] = -1, codes[j] = -1;
}
