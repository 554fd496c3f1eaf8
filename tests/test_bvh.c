/* test_bvh.c - a CPU replay of cuda_bvh's index and search (impl/nn/nn_bvh.h,
 * the same functions the kernels call), so its logic is tested on machines
 * without a GPU: built the way the kernels build it (Morton order, leaves
 * padded with +inf points, the complete tree of boxes), it must return
 * naive's float32 distances bit for bit on every query, on ordinary and
 * degenerate clouds, without degrading to brute force. */
#include <stdlib.h>
#include <string.h>

#include "impl/pcbench_judge.h"
#include "datasets/cloud.h"
#include "nn/nn.h"
#include "nn/nn_bvh.h"
#include "testlib.h"

typedef struct {
    float *pts, *box;
    uint64_t *codes; /* the sorted reference codes */
    int32_t n;
    int32_t *ids; /* slot -> point index, -1 for padding */
    bvh_tree tree;
    float frame[4];
} replay;

typedef struct {
    uint64_t code;
    int32_t i;
} keyed;

static int by_code(const void *x, const void *y)
{
    const keyed *a = x, *b = y;
    return a->code < b->code ? -1 : a->code > b->code ? 1 : (a->i > b->i) - (a->i < b->i);
}

static void replay_build(const float *p, int32_t n, replay *r)
{
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int32_t i = 0; i < n; i++)
        for (int d = 0; d < 3; d++) {
            lo[d] = p[3 * i + d] < lo[d] ? p[3 * i + d] : lo[d];
            hi[d] = p[3 * i + d] > hi[d] ? p[3 * i + d] : hi[d];
        }
    float ext = 0;
    for (int d = 0; d < 3; d++) {
        r->frame[d] = lo[d];
        ext = hi[d] - lo[d] > ext ? hi[d] - lo[d] : ext;
    }
    r->frame[3] = ext > 0 ? (float)((1 << SP_BITS) - 1) / ext : 0;
    keyed *k = malloc((size_t)n * sizeof *k);
    for (int32_t i = 0; i < n; i++)
        k[i] = (keyed){sp_morton(r->frame, p[3 * i], p[3 * i + 1], p[3 * i + 2], SP_BITS), i};
    qsort(k, (size_t)n, sizeof *k, by_code);
    r->n = n;
    r->codes = malloc((size_t)n * sizeof *r->codes);
    for (int32_t i = 0; i < n; i++)
        r->codes[i] = k[i].code;
    int32_t leaves = (n + BVH_LEAF - 1) / BVH_LEAF, log_p = 0;
    while ((1 << log_p) < leaves)
        log_p++;
    int32_t P = 1 << log_p, slots = leaves * BVH_LEAF;
    r->pts = malloc((size_t)slots * 4 * sizeof(float));
    r->ids = malloc((size_t)slots * sizeof(int32_t));
    r->box = malloc((size_t)2 * P * 8 * sizeof(float));
    for (int32_t s = 0; s < slots; s++) {
        for (int d = 0; d < 3; d++)
            r->pts[4 * s + d] = s < n ? p[3 * k[s].i + d] : INFINITY;
        r->pts[4 * s + 3] = 0;
        r->ids[s] = s < n ? k[s].i : -1;
    }
    for (int32_t v = P; v < 2 * P; v++) { /* leaf boxes over their real points */
        float *l = r->box + 8 * v, *h = l + 4;
        for (int d = 0; d < 4; d++)
            l[d] = INFINITY, h[d] = -INFINITY;
        for (int32_t s = (v - P) * BVH_LEAF; s < (v - P + 1) * BVH_LEAF && s < n; s++)
            for (int d = 0; d < 3; d++) {
                l[d] = r->pts[4 * s + d] < l[d] ? r->pts[4 * s + d] : l[d];
                h[d] = r->pts[4 * s + d] > h[d] ? r->pts[4 * s + d] : h[d];
            }
    }
    for (int32_t v = P - 1; v >= 1; v--)
        for (int d = 0; d < 4; d++) {
            const float *a = r->box + 16 * v, *b = a + 8; /* children 2v, 2v + 1 */
            r->box[8 * v + d] = a[d] < b[d] ? a[d] : b[d];
            r->box[8 * v + 4 + d] = a[4 + d] > b[4 + d] ? a[4 + d] : b[4 + d];
        }
    r->tree = (bvh_tree){.pts = r->pts, .box = r->box, .log_p = log_p};
    free(k);
}

static void replay_free(replay *r)
{
    free(r->pts), free(r->box), free(r->ids), free(r->codes);
}

static float *cloud(const char *kind, int64_t n, uint64_t seed)
{
    pcb_cloud c;
    CHECK_RC(pcb_generate(kind, n, seed, &c), PCB_OK);
    float *p = malloc((size_t)n * 3 * sizeof(float));
    memcpy(p, c.xyz, (size_t)n * 3 * sizeof(float));
    pcb_cloud_free(&c);
    return p;
}

/* The search as the kernel runs it: from the query's home leaf. */
static void replay_search(const replay *r, const float *q, float *best, int32_t *slot,
                          int64_t *evals)
{
    int32_t home = bvh_home_leaf(r->codes, r->n, sp_morton(r->frame, q[0], q[1], q[2], SP_BITS));
    bvh_search(&r->tree, home, q[0], q[1], q[2], best, slot, evals);
}

/* Every query: the replay's distance equals brute force's bit for bit and
 * the slot holds a point at that distance. Returns the slots scanned. */
static int64_t check_pair(const float *ref, int32_t n, const float *qry, int32_t nq)
{
    replay r;
    replay_build(ref, n, &r);
    int64_t evals = 0;
    int bad = 0;
    for (int32_t i = 0; i < nq && bad < 3; i++) {
        const float *q = qry + 3 * i;
        float best = INFINITY, got;
        for (int32_t j = 0; j < n; j++) {
            float d = pcb_nn_d2(ref + 3 * j, q);
            best = d < best ? d : best;
        }
        int32_t slot;
        replay_search(&r, q, &got, &slot, &evals);
        if (i % 2) { /* and without a home leaf: the bound must not matter */
            float plain;
            int32_t s2;
            int64_t e2 = 0;
            bvh_search(&r.tree, -1, q[0], q[1], q[2], &plain, &s2, &e2);
            CHECK(plain == got);
        }
        int ok = slot >= 0 && r.ids[slot] >= 0 && got == best &&
                 pcb_nn_d2(ref + 3 * r.ids[slot], q) == got;
        if (!ok) {
            fprintf(stderr, "query %d: replay %g (slot %d), brute force %g\n", i, got, slot, best);
            bad++;
        }
    }
    CHECK(bad == 0);
    replay_free(&r);
    return evals;
}

static void test_replay_matches_brute_force(void)
{
    static const struct {
        const char *ref, *qry;
        int32_t n, nq;
    } sets[] = {
        {"uniform", "uniform", 5000, 2000}, {"clusters", "uniform", 4000, 1500},
        {"sphere", "sphere", 3000, 1000},   {"duplicates", "duplicates", 3000, 1000},
        {"collinear", "collinear", 3000, 1000}, {"offset", "offset", 3000, 1000},
        {"uniform", "uniform", 1, 100},      {"uniform", "uniform", 33, 100},
        {"uniform", "uniform", 1000, 1},
    };
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        float *ref = cloud(sets[s].ref, sets[s].n, 3), *qry = cloud(sets[s].qry, sets[s].nq, 4);
        int64_t evals = check_pair(ref, sets[s].n, qry, sets[s].nq);
        CHECK(evals > 0);
        if (sets[s].n >= 3000) /* pruning works: far from brute force */
            CHECK(evals < (int64_t)sets[s].n * sets[s].nq / 4);
        free(ref), free(qry);
    }
}

/* Two lidar sweeps of the slides' case, smaller. */
static void test_replay_lidar(void)
{
    pcb_cloud a, b;
    CHECK_RC(pcb_gen_lidar(20000, 1, 0, 0, 0, &a), PCB_OK);
    CHECK_RC(pcb_gen_lidar(4000, 1, 0.8, 0.05, 0.01, &b), PCB_OK);
    int64_t evals = check_pair(a.xyz, (int32_t)a.n, b.xyz, (int32_t)b.n);
    CHECK(evals < (int64_t)b.n * 1000); /* a few leaves a query, not the cloud */
    pcb_cloud_free(&a), pcb_cloud_free(&b);
}

/* Every box ties: the first leaf's distance prunes all others. */
static void test_replay_all_equal(void)
{
    float *ref = cloud("equal", 5000, 1), *qry = cloud("uniform", 500, 2);
    int64_t evals = check_pair(ref, 5000, qry, 500);
    CHECK(evals == 500 * BVH_LEAF);
    free(ref), free(qry);
}

/* The box bound is never above the distance of a point inside the box, even
 * where rounding bites (lidar offsets, tiny and huge gaps). */
static void test_box_bound_conservative(void)
{
    uint64_t s = 12345;
    int bad = 0;
    for (int i = 0; i < 200000; i++) {
        float c[3], p[3], q[3], lo[3], hi[3];
        for (int d = 0; d < 3; d++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            double u = (double)(s >> 11) / 9007199254740992.0;
            float scale = (float)(i % 3 == 0 ? 1e6 : i % 3 == 1 ? 1.0 : 1e-3);
            c[d] = (float)(3e6 * (i % 2)) + scale * (float)(u - 0.5);
            p[d] = c[d] + scale * (float)(u * 0.37);
            q[d] = c[d] + scale * (float)((u - 0.6) * 4);
            lo[d] = p[d] - scale * (float)(u * 0.11);
            hi[d] = p[d] + scale * (float)((1 - u) * 0.07);
        }
        float box = sp_box_d2(lo, hi, q[0], q[1], q[2]);
        float pt = sp_d2(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
        bad += box > pt;
    }
    CHECK(bad == 0);
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    CHECK(sp_box_d2(lo, hi, 1, 2, 3) == INFINITY); /* an empty box is never visited */
}

TEST_MAIN(T(test_replay_matches_brute_force), T(test_replay_lidar), T(test_replay_all_equal),
          T(test_box_bound_conservative))
