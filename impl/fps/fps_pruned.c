/* fps_pruned.c - exact FPS that skips what a new sample cannot change (the
 * QuickFPS family of bucket pruning), returning the canonical sequence.
 *
 * Layout and the reason skipping is exact: fps_bucket.h. Buckets of 32
 * slots, groups of FPS_GROUP buckets. A step tests every group's box
 * against the group's farthest key; only groups the sample can reach test
 * their buckets, only buckets it can reach update their 32 running minima
 * (a SIMD loop) and recompute their key; the next sample is the largest
 * group key. Early steps touch everything, like dp; once samples cover the
 * cloud a step touches the few buckets around the new sample, so the cost
 * of a step falls from n distance updates to about n / 512 box tests.
 *
 * Clouds of a batch go to OpenMP threads, one cloud a thread; each thread
 * owns its scratch. The Morton sort is part of compute (an LSD radix sort,
 * stable, so equal codes keep index order). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "fps.h"
#include "fps_bucket.h"

#define FPS_GROUP 16 /* buckets a group: 8, 16 and 32 were timed, 16 won */

typedef struct {
    float lo[3], hi[3];
} box;

/* One thread's scratch, sized for one cloud. */
typedef struct {
    uint64_t *sort, *tmp;      /* (code << 32 | index), n each */
    float *x, *y, *z, *mind;   /* slots */
    uint32_t *id;              /* slots: the point's index in the cloud */
    box *bbox, *gbox;          /* buckets, groups */
    uint64_t *bkey, *gkey;
    int64_t evals;             /* slots updated */
} scratch;

typedef struct {
    pcb_task task;
    int threads;
    int64_t slots, buckets, groups;
    scratch *scr; /* threads */
    int32_t *idx;
} pruned_state;

/* Sort keys by bits 32..61 (the code), stable; returns the sorted copy,
 * which is one of the two buffers. */
static const uint64_t *radix_sort(uint64_t *v, uint64_t *tmp, int64_t n)
{
    for (int shift = 32; shift < 32 + 3 * FPS_MORTON_BITS; shift += 10) {
        int64_t count[1025] = {0};
        for (int64_t i = 0; i < n; i++)
            count[((v[i] >> shift) & 1023) + 1]++;
        for (int k = 0; k < 1024; k++)
            count[k + 1] += count[k];
        for (int64_t i = 0; i < n; i++)
            tmp[count[(v[i] >> shift) & 1023]++] = v[i];
        uint64_t *swap = v;
        v = tmp;
        tmp = swap;
    }
    return v;
}

static void box_of(const float *x, const float *y, const float *z, int64_t count, box *b)
{
    b->lo[0] = b->hi[0] = x[0];
    b->lo[1] = b->hi[1] = y[0];
    b->lo[2] = b->hi[2] = z[0];
    for (int64_t i = 1; i < count; i++) {
        b->lo[0] = fminf(b->lo[0], x[i]), b->hi[0] = fmaxf(b->hi[0], x[i]);
        b->lo[1] = fminf(b->lo[1], y[i]), b->hi[1] = fmaxf(b->hi[1], y[i]);
        b->lo[2] = fminf(b->lo[2], z[i]), b->hi[2] = fmaxf(b->hi[2], z[i]);
    }
}

/* Sort one cloud into slots, buckets and groups; every minimum +inf. */
static void build(const pruned_state *s, const float *xyz, scratch *c)
{
    const int64_t n = s->task.n;
    float lo[3] = {xyz[0], xyz[1], xyz[2]}, hi[3] = {xyz[0], xyz[1], xyz[2]}, frame[4];
    for (int64_t k = 1; k < n; k++)
        for (int d = 0; d < 3; d++) {
            lo[d] = fminf(lo[d], xyz[3 * k + d]);
            hi[d] = fmaxf(hi[d], xyz[3 * k + d]);
        }
    fps_frame(lo, hi, frame);
    for (int64_t k = 0; k < n; k++)
        c->sort[k] = sp_morton(frame, xyz[3 * k], xyz[3 * k + 1], xyz[3 * k + 2],
                               FPS_MORTON_BITS) << 32 | (uint64_t)k;
    const uint64_t *sorted = radix_sort(c->sort, c->tmp, n);
    for (int64_t i = 0; i < s->slots; i++) {
        const uint32_t k = (uint32_t)sorted[i < n ? i : n - 1];
        c->x[i] = xyz[3 * (int64_t)k];
        c->y[i] = xyz[3 * (int64_t)k + 1];
        c->z[i] = xyz[3 * (int64_t)k + 2];
        c->id[i] = k;
        c->mind[i] = INFINITY;
    }
    for (int64_t b = 0; b < s->buckets; b++) {
        const int64_t first = b * FPS_BUCKET;
        box_of(c->x + first, c->y + first, c->z + first, FPS_BUCKET, &c->bbox[b]);
        uint32_t low = c->id[first];
        for (int i = 1; i < FPS_BUCKET; i++)
            low = c->id[first + i] < low ? c->id[first + i] : low;
        c->bkey[b] = fps_key(INFINITY, low);
    }
    for (int64_t g = 0; g < s->groups; g++) {
        const int64_t first = g * FPS_GROUP,
                      last = first + FPS_GROUP < s->buckets ? first + FPS_GROUP : s->buckets;
        box *gb = &c->gbox[g];
        *gb = c->bbox[first];
        c->gkey[g] = c->bkey[first];
        for (int64_t b = first + 1; b < last; b++) {
            for (int d = 0; d < 3; d++) {
                gb->lo[d] = fminf(gb->lo[d], c->bbox[b].lo[d]);
                gb->hi[d] = fmaxf(gb->hi[d], c->bbox[b].hi[d]);
            }
            c->gkey[g] = c->bkey[b] > c->gkey[g] ? c->bkey[b] : c->gkey[g];
        }
    }
}

/* Lower the minima of bucket b by sample q; return its new key. */
static uint64_t update_bucket(scratch *c, int64_t b, float qx, float qy, float qz)
{
    float *x = c->x + b * FPS_BUCKET, *y = c->y + b * FPS_BUCKET, *z = c->z + b * FPS_BUCKET;
    float *mind = c->mind + b * FPS_BUCKET, far = 0.0f;
#pragma omp simd reduction(max : far)
    for (int i = 0; i < FPS_BUCKET; i++) {
        float d = fps_dist(x[i], y[i], z[i], qx, qy, qz);
        float v = d < mind[i] ? d : mind[i];
        mind[i] = v;
        far = v > far ? v : far;
    }
    c->evals += FPS_BUCKET;
    uint64_t key = 0;
    for (int i = 0; i < FPS_BUCKET; i++)
        if (mind[i] == far) {
            uint64_t k = fps_key(far, c->id[b * FPS_BUCKET + i]);
            key = k > key ? k : key;
        }
    return key;
}

static void sample_cloud(const pruned_state *s, const float *xyz, scratch *c, int32_t *idx)
{
    const int64_t m = s->task.m;
    build(s, xyz, c);
    int64_t q = s->task.start;
    idx[0] = (int32_t)q;
    for (int64_t j = 1; j < m; j++) {
        const float qx = xyz[3 * q], qy = xyz[3 * q + 1], qz = xyz[3 * q + 2];
        uint64_t best = 0;
        for (int64_t g = 0; g < s->groups; g++) {
            const box *gb = &c->gbox[g];
            if (sp_box_d2(gb->lo, gb->hi, qx, qy, qz) < fps_key_dist(c->gkey[g])) {
                const int64_t first = g * FPS_GROUP,
                              last = first + FPS_GROUP < s->buckets ? first + FPS_GROUP
                                                                    : s->buckets;
                uint64_t gkey = 0;
                for (int64_t b = first; b < last; b++) {
                    const box *bb = &c->bbox[b];
                    if (sp_box_d2(bb->lo, bb->hi, qx, qy, qz) < fps_key_dist(c->bkey[b]))
                        c->bkey[b] = update_bucket(c, b, qx, qy, qz);
                    gkey = c->bkey[b] > gkey ? c->bkey[b] : gkey;
                }
                c->gkey[g] = gkey;
            }
            best = c->gkey[g] > best ? c->gkey[g] : best;
        }
        q = fps_key_index(best);
        idx[j] = (int32_t)q;
    }
}

/* Keys hold minima as float bits, so samples cannot be marked -1 as dp
 * marks them: the old rule's sequence is sampled, then made distinct. */
static int sample_distinct(const pruned_state *s, const float *xyz, scratch *c, int32_t *idx)
{
    sample_cloud(s, xyz, c, idx);
    return pcb_fps_distinct_tail(idx, s->task.n, s->task.m);
}

static void scratch_free(scratch *c)
{
    free(c->sort), free(c->tmp), free(c->x), free(c->y), free(c->z), free(c->mind);
    free(c->id), free(c->bbox), free(c->gbox), free(c->bkey), free(c->gkey);
}

static void pruned_release(void *state)
{
    pruned_state *s = state;
    if (!s)
        return;
    for (int i = 0; s->scr && i < s->threads; i++)
        scratch_free(&s->scr[i]);
    free(s->scr);
    free(s->idx);
    free(s);
}

static int pruned_prepare(const pcb_task *t, void **state)
{
    if (t->n > INT32_MAX)
        return pcb_fail(PCB_EUNSUPPORTED, "fps pruned: %lld points exceed its 32-bit indexes",
                        (long long)t->n);
    pruned_state *s = calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "fps pruned: out of memory");
    s->task = *t;
    s->buckets = (t->n + FPS_BUCKET - 1) / FPS_BUCKET;
    s->slots = s->buckets * FPS_BUCKET;
    s->groups = (s->buckets + FPS_GROUP - 1) / FPS_GROUP;
    int most = t->opt.threads > 0 ? t->opt.threads : omp_get_max_threads();
    s->threads = t->batch < most ? (int)t->batch : most;
    int ok = (s->scr = calloc((size_t)s->threads, sizeof *s->scr)) &&
             (s->idx = malloc((size_t)(t->batch * t->m) * sizeof *s->idx));
    const size_t n = (size_t)t->n, slots = (size_t)s->slots;
    for (int i = 0; ok && i < s->threads; i++) {
        scratch *c = &s->scr[i];
        ok = (c->sort = malloc(n * sizeof *c->sort)) && (c->tmp = malloc(n * sizeof *c->tmp)) &&
             (c->x = malloc(slots * sizeof *c->x)) && (c->y = malloc(slots * sizeof *c->y)) &&
             (c->z = malloc(slots * sizeof *c->z)) &&
             (c->mind = malloc(slots * sizeof *c->mind)) &&
             (c->id = malloc(slots * sizeof *c->id)) &&
             (c->bbox = malloc((size_t)s->buckets * sizeof *c->bbox)) &&
             (c->bkey = malloc((size_t)s->buckets * sizeof *c->bkey)) &&
             (c->gbox = malloc((size_t)s->groups * sizeof *c->gbox)) &&
             (c->gkey = malloc((size_t)s->groups * sizeof *c->gkey));
    }
    if (!ok) {
        pruned_release(s);
        return pcb_fail(PCB_ENOMEM, "fps pruned: out of memory for %lld points",
                        (long long)t->n);
    }
    *state = s;
    return PCB_OK;
}

static int pruned_compute(void *state)
{
    pruned_state *s = state;
    const pcb_task *t = &s->task;
    for (int i = 0; i < s->threads; i++)
        s->scr[i].evals = 0;
    int rc = PCB_OK;
#pragma omp parallel for num_threads(s->threads) schedule(dynamic, 1)
    for (int64_t b = 0; b < t->batch; b++)
        if (sample_distinct(s, t->a + b * t->n * 3, &s->scr[omp_get_thread_num()],
                            s->idx + b * t->m) != PCB_OK)
#pragma omp atomic write
            rc = PCB_ENOMEM;
    return rc == PCB_OK ? PCB_OK : pcb_fail(rc, "fps pruned: out of memory");
}

static int pruned_fetch(void *state, pcb_result *out)
{
    pruned_state *s = state;
    memcpy(out->index, s->idx, (size_t)(s->task.batch * s->task.m) * sizeof *s->idx);
    return PCB_OK;
}

/* Slots updated depend only on the clouds, not on which thread took which. */
static int pruned_counters(void *state, pcb_counters *c)
{
    pruned_state *s = state;
    c->distance_evals = 0;
    for (int i = 0; i < s->threads; i++)
        c->distance_evals += s->scr[i].evals;
    c->iterations = s->task.batch * (s->task.m - 1);
    return PCB_OK;
}

const pcb_impl pcb_fps_pruned = {
    .name = "pruned",
    .cost = PCB_COST_SAMPLES,
    .problem = PCB_FPS,
    .device = PCB_CPU,
    .promise = {.exact = 1, .canonical = 1},
    .limits = {.max_n = INT32_MAX},
    .summary = "Morton buckets with bounding boxes, skips what a sample cannot reach; "
               "OpenMP over clouds",
    .prepare = pruned_prepare,
    .compute = pruned_compute,
    .fetch = pruned_fetch,
    .release = pruned_release,
    .counters = pruned_counters,
};
