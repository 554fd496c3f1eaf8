/* test_fps.c - FPS implementations, the validator, and the CUDA kernel when
 * a device is present. The CPU implementations must return the canonical
 * sequence (ties to the lowest index), so they are compared element by
 * element; the validator must accept every correct answer and reject
 * corrupted ones. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/cloud.h"
#include "impl/fps/fps.h"
#include "impl/pcbench_judge.h"
#include "fps_rounds_replay.h"
#include "testlib.h"

/* batch clouds of one kind, seeds seed, seed + 1, ... */
static float *make(const char *kind, int64_t batch, int64_t n, uint64_t seed)
{
    float *xyz = malloc((size_t)(batch * n * 3) * sizeof *xyz);
    CHECK(xyz != NULL);
    for (int64_t b = 0; xyz && b < batch; b++) {
        pcb_cloud c;
        CHECK_RC(pcb_generate(kind, n, seed + (uint64_t)b, &c), PCB_OK);
        if (c.xyz)
            memcpy(xyz + b * n * 3, c.xyz, (size_t)n * 3 * sizeof *xyz);
        pcb_cloud_free(&c);
    }
    return xyz;
}

static pcb_task fps_task(const float *xyz, int64_t batch, int64_t n, int64_t m, int64_t start,
                         int threads)
{
    pcb_task t = {.problem = PCB_FPS, .batch = batch, .n = n, .m = m, .start = start,
                  .a = xyz, .opt = {.threads = threads}};
    return t;
}

static const pcb_impl *impl(const char *name)
{
    const pcb_impl *i = pcb_find(PCB_FPS, name);
    CHECK(i != NULL);
    return i;
}

/* Run into a freshly poisoned array (caller frees). */
static int32_t *run(const pcb_impl *im, const pcb_task *t, pcb_counters *cnt)
{
    size_t count = (size_t)(t->batch * t->m);
    int32_t *idx = malloc(count * sizeof *idx);
    CHECK(idx != NULL);
    for (size_t i = 0; idx && i < count; i++)
        idx[i] = -7;
    pcb_result r = {.index = idx};
    CHECK_RC(pcb_run(im, t, &r, cnt), PCB_OK);
    return idx;
}

static int valid(const pcb_task *t, const int32_t *idx)
{
    pcb_report rep = {0};
    pcb_result r = {.index = (int32_t *)idx};
    CHECK_RC(pcb_fps_validate(t, &r, &rep), PCB_OK);
    if (!rep.ok)
        fprintf(stderr, "  validator: %s\n", rep.detail);
    return rep.ok;
}

static int rejected(const pcb_task *t, const int32_t *idx, const char *want_in_detail)
{
    pcb_report rep = {0};
    pcb_result r = {.index = (int32_t *)idx};
    CHECK_RC(pcb_fps_validate(t, &r, &rep), PCB_OK);
    if (!rep.ok && want_in_detail && !strstr(rep.detail, want_in_detail)) {
        fprintf(stderr, "  detail '%s' lacks '%s'\n", rep.detail, want_in_detail);
        return 0;
    }
    return !rep.ok;
}

static int same(const int32_t *a, const int32_t *b, int64_t count)
{
    return a && b && memcmp(a, b, (size_t)count * sizeof *a) == 0;
}

/* Every CPU implementation, every thread count: valid and equal to dp. */
static void cpu_impls_agree(void)
{
    static const struct {
        const char *kind;
        int64_t n, m, start;
    } sets[] = {{"uniform", 9000, 64, 0},   {"sphere", 1500, 48, 3},
                {"clusters", 1537, 64, 0},  {"collinear", 900, 40, 0},
                {"offset", 1200, 40, 11},   {"duplicates", 800, 150, 0},
                {"equal", 100, 12, 5}};
    static const int threads[] = {0, 1, 2, 3, 7}; /* 0: the default */
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        float *xyz = make(sets[s].kind, 1, sets[s].n, 42);
        pcb_task t = fps_task(xyz, 1, sets[s].n, sets[s].m, sets[s].start, 0);
        int32_t *ref = run(impl("dp"), &t, NULL);
        CHECK(valid(&t, ref));
        int32_t *naive = run(impl("naive"), &t, NULL);
        CHECK(same(naive, ref, t.m));
        free(naive);
        for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
            t.opt.threads = threads[k];
            int32_t *omp = run(impl("omp"), &t, NULL);
            if (!same(omp, ref, t.m))
                fprintf(stderr, "  omp threads %d differs from dp on %s\n", threads[k],
                        sets[s].kind);
            CHECK(same(omp, ref, t.m));
            free(omp);
        }
        free(ref);
        free(xyz);
    }
}

/* Square corners: after 0 and 3, points 1 and 2 tie; the canonical answer
 * takes 1, the validator accepts either; n = 4 with 3 or 7 threads leaves
 * some threads' blocks tiny or empty. */
static void ties_canonical(void)
{
    const float xyz[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0};
    pcb_task t = fps_task(xyz, 1, 4, 4, 0, 0);
    const int32_t canonical[] = {0, 3, 1, 2}, other[] = {0, 3, 2, 1}, wrong[] = {0, 1, 3, 2};
    static const int threads[] = {0, 1, 2, 3, 7}; /* 0: the default */
    for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        t.opt.threads = threads[k];
        int32_t *omp = run(impl("omp"), &t, NULL);
        CHECK(same(omp, canonical, 4));
        free(omp);
    }
    int32_t *dp = run(impl("dp"), &t, NULL), *naive = run(impl("naive"), &t, NULL),
            *pruned = run(impl("pruned"), &t, NULL);
    CHECK(same(dp, canonical, 4));
    CHECK(same(naive, canonical, 4));
    CHECK(same(pruned, canonical, 4));
    free(dp);
    free(naive);
    free(pruned);
    CHECK(valid(&t, canonical));
    CHECK(valid(&t, other));
    CHECK(rejected(&t, wrong, "step 1"));
    /* The lattice is full of ties across every thread's block. */
    float lat[6 * 6 * 6 * 3];
    for (int i = 0; i < 216; i++) {
        lat[3 * i] = (float)(i % 6);
        lat[3 * i + 1] = (float)(i / 6 % 6);
        lat[3 * i + 2] = (float)(i / 36);
    }
    t = fps_task(lat, 1, 216, 216, 0, 0);
    int32_t *ref = run(impl("dp"), &t, NULL);
    CHECK(valid(&t, ref));
    for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        t.opt.threads = threads[k];
        int32_t *omp = run(impl("omp"), &t, NULL);
        CHECK(same(omp, ref, t.m));
        free(omp);
    }
    pruned = run(impl("pruned"), &t, NULL);
    CHECK(same(pruned, ref, t.m));
    free(pruned);
    free(ref);
}

/* pruned skips whole buckets: it must still return dp's sequence bit for
 * bit on every shape, including sizes that leave a bucket or group partly
 * padded, clouds whose squared distances overflow float32 (skipping must
 * agree with dp's +inf), and every thread count over a batch. */
static void pruned_equals_dp(void)
{
    static const struct {
        const char *kind;
        int64_t batch, n, m, start;
        float scale;
    } sets[] = {{"lidar", 1, 30000, 700, 0, 1},      {"uniform", 1, 20000, 2000, 5, 1},
                {"clusters", 2, 5000, 1500, 9, 1},   {"sphere", 1, 4000, 4000, 0, 1},
                {"collinear", 1, 3000, 300, 0, 1},   {"duplicates", 1, 3000, 900, 3, 1},
                {"equal", 1, 100, 40, 7, 1},         {"offset", 1, 2000, 200, 0, 1},
                {"uniform", 1, 33, 33, 32, 1},       {"uniform", 1, 31, 20, 30, 1},
                {"uniform", 1, 513, 513, 0, 1},      {"uniform", 3, 1025, 100, 1, 1},
                {"uniform", 1, 2000, 100, 0, 3e19f}, {"uniform", 1, 1000, 50, 0, 1e-19f}};
    static const int threads[] = {1, 2, 3};
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        const int64_t count = sets[s].batch * sets[s].n * 3;
        float *xyz = make(sets[s].kind, sets[s].batch, sets[s].n, 90 + s);
        for (int64_t i = 0; xyz && i < count; i++)
            xyz[i] *= sets[s].scale;
        pcb_task t = fps_task(xyz, sets[s].batch, sets[s].n, sets[s].m, sets[s].start, 0);
        int32_t *ref = run(impl("dp"), &t, NULL);
        for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
            t.opt.threads = threads[k];
            int32_t *got = run(impl("pruned"), &t, NULL);
            if (!same(got, ref, t.batch * t.m))
                fprintf(stderr, "  pruned (%d threads) differs from dp on %s n=%lld\n",
                        threads[k], sets[s].kind, (long long)sets[s].n);
            CHECK(same(got, ref, t.batch * t.m));
            free(got);
        }
        free(ref);
        free(xyz);
    }
}

/* Clouds of every shape and scale pruned_equals_dp covers, one of each. */
static const struct {
    const char *kind;
    int64_t n, m, start;
    float scale;
} replay_sets[] = {{"lidar", 30000, 700, 0, 1},      {"uniform", 20000, 2000, 5, 1},
                   {"clusters", 5000, 1500, 9, 1},   {"sphere", 4000, 4000, 0, 1},
                   {"collinear", 3000, 300, 0, 1},   {"duplicates", 3000, 900, 3, 1},
                   {"equal", 100, 40, 7, 1},         {"offset", 2000, 200, 0, 1},
                   {"uniform", 33, 33, 32, 1},       {"uniform", 31, 20, 30, 1},
                   {"uniform", 513, 513, 0, 1},      {"uniform", 1, 1, 0, 1},
                   {"uniform", 2000, 100, 0, 3e19f}, {"uniform", 1000, 50, 0, 1e-19f}};

/* The GPU's rounds, replayed on the CPU (fps_rounds_replay.h), return dp's
 * sequence for every block size the kernel runs with: the exactness of
 * taking many samples a round, tested without a GPU. Uniform clouds must
 * take few rounds (a few dozen samples each), or the kernel loses its
 * point. */
static void rounds_replay_equals_dp(void)
{
    static const struct {
        int warps, ctas; /* warps 0: the run kernel over a cluster of ctas blocks */
    } layouts[] = {{0, 1}, {0, 2}, {0, 8}, {0, 16}, {8, 1}, {16, 1}, {32, 1}};
    for (size_t s = 0; s < sizeof replay_sets / sizeof replay_sets[0]; s++) {
        const int64_t n = replay_sets[s].n, m = replay_sets[s].m;
        float *xyz = make(replay_sets[s].kind, 1, n, 90 + s);
        for (int64_t i = 0; xyz && i < n * 3; i++)
            xyz[i] *= replay_sets[s].scale;
        pcb_task t = fps_task(xyz, 1, n, m, replay_sets[s].start, 0);
        int32_t *ref = run(impl("dp"), &t, NULL), *got = malloc((size_t)m * sizeof *got);
        for (size_t w = 0; xyz && got && w < sizeof layouts / sizeof layouts[0]; w++) {
            const int warps = layouts[w].warps, ctas = layouts[w].ctas;
            replay_counts c = {0};
            CHECK(rounds_replay(xyz, (int)n, (int)m, (int)replay_sets[s].start, warps, ctas, got,
                                &c) == 0);
            /* the rounds take the old rule's sequence; the kernel's last
             * launch makes it distinct as this does */
            CHECK(pcb_fps_distinct_tail(got, n, m) == PCB_OK);
            if (!same(got, ref, m))
                fprintf(stderr, "  the rounds (%d warps, %d blocks) differ from dp on %s n=%lld\n",
                        warps, ctas, replay_sets[s].kind, (long long)n);
            CHECK(same(got, ref, m));
            CHECK(c.rounds <= m);
            if (!strcmp(replay_sets[s].kind, "uniform") && n == 20000) {
                CHECK(c.rounds * 20 < m); /* about 80 rounds for 2,000 samples */
                CHECK(c.picked > 15 * c.waves); /* far-apart farthest points: ~30 picks a wave */
            }
            if (getenv("PCBENCH_TEST_VERBOSE"))
                fprintf(stderr, "  %s n=%lld m=%lld warps %d blocks %d: %lld rounds, %lld alone, "
                        "%.2f picks a wave, %.2f waves a round\n", replay_sets[s].kind,
                        (long long)n, (long long)m, warps, ctas, (long long)c.rounds,
                        (long long)c.taken_alone, c.waves ? (double)c.picked / (double)c.waves : 0.0,
                        c.rounds > c.taken_alone
                            ? (double)c.waves / (double)(c.rounds - c.taken_alone) : 0.0);
        }
        free(got);
        free(ref);
        free(xyz);
    }
}

/* A batch equals its clouds sampled one at a time, on both omp paths. */
static void batch_equals_single(void)
{
    const int64_t batch = 5, n = 800, m = 40, start = 9;
    float *xyz = make("clusters", batch, n, 7);
    const char *names[] = {"naive", "dp", "omp", "omp", "pruned"};
    const int threads[] = {0, 0, 2, 7, 2}; /* omp: 2 = over the batch, 7 = within clouds */
    for (int k = 0; k < 5; k++) {
        pcb_task t = fps_task(xyz, batch, n, m, start, threads[k]);
        int32_t *all = run(impl(names[k]), &t, NULL);
        CHECK(valid(&t, all));
        for (int64_t b = 0; all && b < batch; b++) {
            pcb_task one = fps_task(xyz + b * n * 3, 1, n, m, start, threads[k]);
            int32_t *single = run(impl(names[k]), &one, NULL);
            CHECK(same(all + b * m, single, m));
            free(single);
        }
        free(all);
    }
    free(xyz);
}

static void start_and_sizes(void)
{
    const char *names[] = {"naive", "dp", "omp", "pruned"};
    float *xyz = make("uniform", 1, 200, 3);
    for (int k = 0; k < 4; k++) {
        /* start != 0 */
        pcb_task t = fps_task(xyz, 1, 200, 30, 137, 3);
        int32_t *idx = run(impl(names[k]), &t, NULL);
        CHECK(idx && idx[0] == 137);
        CHECK(valid(&t, idx));
        free(idx);
        /* m = n on distinct points: a permutation */
        t = fps_task(xyz, 1, 200, 200, 0, 3);
        idx = run(impl(names[k]), &t, NULL);
        char seen[200] = {0};
        int perm = idx != NULL;
        for (int j = 0; idx && j < 200; j++) {
            if (idx[j] < 0 || idx[j] >= 200 || seen[idx[j]])
                perm = 0;
            else
                seen[idx[j]] = 1;
        }
        CHECK(perm);
        CHECK(valid(&t, idx));
        free(idx);
        /* n = 1 */
        t = fps_task(xyz, 1, 1, 1, 0, 2);
        idx = run(impl(names[k]), &t, NULL);
        CHECK(idx && idx[0] == 0);
        free(idx);
    }
    free(xyz);
}

/* Once every distinct point is chosen, any unchosen index is a correct
 * choice and a repeated one is not: the repeats alone are counted (the
 * classic kernel's known defect), a repeat while a farther point remains is
 * plain wrong. Every exact CPU implementation returns distinct samples, the
 * lowest unchosen indices in order once all remaining points are duplicates. */
static void duplicates_distinct(void)
{
    float *eq = make("equal", 1, 50, 1);
    pcb_task t = fps_task(eq, 1, 50, 10, 4, 0);
    const int32_t any[] = {4, 49, 0, 17, 3, 2, 1, 5, 6, 7};
    CHECK(valid(&t, any));
    const int32_t repeats[] = {4, 4, 49, 0, 17, 17, 3, 2, 1, 0};
    pcb_report rep;
    pcb_result r = {.index = (int32_t *)repeats};
    CHECK(pcb_fps_validate(&t, &r, &rep) == PCB_OK && !rep.ok && rep.unmatched == 3);
    CHECK(strstr(rep.detail, "repeated") != NULL);
    for (int k = 0; k < 4; k++) { /* the lowest unchosen, in order */
        int32_t *got = run(impl(k == 0 ? "naive" : k == 1 ? "dp" : k == 2 ? "omp" : "pruned"),
                           &t, NULL);
        const int32_t want[] = {4, 0, 1, 2, 3, 5, 6, 7, 8, 9};
        CHECK(got && !memcmp(got, want, sizeof want));
        free(got);
    }
    float *two = make("uniform", 1, 3, 2); /* three distinct points */
    pcb_task t3 = fps_task(two, 1, 3, 3, 0, 0);
    int32_t far[3];
    int32_t *idx3 = run(impl("dp"), &t3, NULL);
    CHECK(idx3 != NULL);
    if (idx3) { /* a repeat with a point still at a positive distance */
        far[0] = idx3[0], far[1] = idx3[1], far[2] = idx3[1];
        r.index = far;
        CHECK(pcb_fps_validate(&t3, &r, &rep) == PCB_OK && !rep.ok && rep.unmatched == 0);
    }
    free(idx3);
    free(two);
    int32_t *idx = run(impl("omp"), &t, NULL);
    CHECK(valid(&t, idx));
    free(idx);
    free(eq);
    float *dup = make("duplicates", 1, 400, 5); /* 50 distinct positions */
    t = fps_task(dup, 1, 400, 120, 0, 0);
    for (int k = 0; k < 4; k++) {
        idx = run(impl(k == 0 ? "naive" : k == 1 ? "dp" : k == 2 ? "omp" : "pruned"), &t, NULL);
        CHECK(valid(&t, idx));
        free(idx);
    }
    free(dup);
}

static void invalid_arguments(void)
{
    float *xyz = make("uniform", 1, 100, 8);
    int32_t idx[200];
    pcb_result r = {.index = idx};
    const char *names[] = {"naive", "dp", "omp", "pruned"};
    for (int k = 0; k < 4; k++) {
        const pcb_impl *im = impl(names[k]);
        pcb_task t = fps_task(xyz, 1, 100, 101, 0, 0);
        CHECK_RC(pcb_run(im, &t, &r, NULL), PCB_EINVAL);
        t.m = 0;
        CHECK_RC(pcb_run(im, &t, &r, NULL), PCB_EINVAL);
        t.m = 10;
        t.start = 100;
        CHECK_RC(pcb_run(im, &t, &r, NULL), PCB_EINVAL);
        t.start = -1;
        CHECK_RC(pcb_run(im, &t, &r, NULL), PCB_EINVAL);
        t.start = 0;
        t.batch = 0;
        CHECK_RC(pcb_run(im, &t, &r, NULL), PCB_EINVAL);
        t.batch = 1;
        xyz[3 * 50 + 1] = NAN;
        CHECK_RC(pcb_run(im, &t, &r, NULL), PCB_EINVAL);
        xyz[3 * 50 + 1] = INFINITY;
        CHECK_RC(pcb_run(im, &t, &r, NULL), PCB_EINVAL);
        xyz[3 * 50 + 1] = 0.5f;
        CHECK_RC(pcb_run(im, &t, &r, NULL), PCB_OK);
    }
    free(xyz);
}

/* The validator must catch every kind of wrong answer. */
static void validator_rejects(void)
{
    const int64_t n = 500, m = 40;
    float *xyz = make("uniform", 3, n, 21);
    pcb_task t = fps_task(xyz, 3, n, m, 0, 0);
    int32_t *good = run(impl("dp"), &t, NULL), bad[3 * 40];
    if (!good)
        return;
    CHECK(valid(&t, good));
#define CORRUPT(stmt, detail)                                                 \
    do {                                                                      \
        memcpy(bad, good, sizeof bad);                                        \
        stmt;                                                                 \
        CHECK(rejected(&t, bad, detail));                                     \
    } while (0)
    CORRUPT((bad[5] = good[20], bad[20] = good[5]), "step 5");    /* swapped steps */
    CORRUPT(bad[10] = good[3], "step 10");                         /* a chosen point again */
    CORRUPT(bad[12] = good[12] == 0 ? 1 : 0, "step 12");           /* point 0: not farthest */
    CORRUPT(bad[0] = 1, "first index");                            /* wrong start */
    CORRUPT(bad[7] = (int32_t)n, "out of range");
    CORRUPT(bad[7] = -7, "out of range");                          /* poison left behind */
    CORRUPT(bad[m - 1] = -7, "out of range");                      /* last element unwritten */
    CORRUPT((bad[2 * m + 9] = good[2 * m + 30], bad[2 * m + 30] = good[2 * m + 9]), "cloud 2");
    /* clouds are judged side by side: the first wrong one is the verdict */
    CORRUPT((bad[m + 5] = good[m + 20], bad[m + 20] = good[m + 5], bad[2 * m + 9] = good[2 * m + 30],
             bad[2 * m + 30] = good[2 * m + 9]),
            "cloud 1 step 5");
#undef CORRUPT
    free(good);
    free(xyz);
    /* A near miss beyond the tolerance: 1.0 chosen over 1.002001. */
    const float line[] = {0, 0, 0, 1, 0, 0, -1.001f, 0, 0};
    t = fps_task(line, 1, 3, 2, 0, 0);
    const int32_t near_miss[] = {0, 1}, right[] = {0, 2};
    CHECK(rejected(&t, near_miss, "step 1"));
    CHECK(valid(&t, right));
}

static void counters(void)
{
    float *xyz = make("sphere", 2, 300, 4);
    pcb_task t = fps_task(xyz, 2, 300, 25, 0, 3);
    const char *names[] = {"dp", "omp"};
    for (int k = 0; k < 2; k++) {
        pcb_counters c;
        free(run(impl(names[k]), &t, &c));
        CHECK(c.distance_evals == 2 * 300 * 24);
        CHECK(c.iterations == 2 * 24);
    }
    pcb_counters c;
    free(run(impl("naive"), &t, &c));
    CHECK(c.distance_evals == 2 * 300 * (24 * 25 / 2)); /* steps j = 1..24 cost j each */
    free(xyz);
}

/* A CUDA implementation that can run here, else NULL and a skip. */
static const pcb_impl *cuda_impl(const char *name)
{
    const pcb_impl *cu = pcb_find(PCB_FPS, name);
    if (cu && pcb_impl_available(cu) == PCB_OK)
        return cu;
#ifdef PCB_SANITIZED_BUILD
    if (!cu) {
        tl_elsewhere("%s not built", name);
        return NULL;
    }
#endif
    tl_skip("%s not run: %s", name, cu ? pcb_errmsg() : "not built");
    return NULL;
}

static void cuda_unrolled(void)
{
    const pcb_impl *cu = cuda_impl("cuda_unrolled");
    if (!cu)
        return;
    static const struct {
        const char *kind;
        int64_t batch, n, m, start;
    } sets[] = {{"uniform", 6, 10000, 1000, 0}, {"clusters", 1, 1537, 200, 5},
                {"sphere", 1, 1000, 1000, 0},   {"offset", 2, 3000, 100, 7},
                {"duplicates", 1, 2000, 400, 0}, {"equal", 1, 300, 30, 0},
                {"uniform", 1, 1, 1, 0},        {"uniform", 3, 5, 5, 2},
                {"collinear", 1, 70000, 64, 0}};
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        float *xyz = make(sets[s].kind, sets[s].batch, sets[s].n, 77);
        pcb_task t = fps_task(xyz, sets[s].batch, sets[s].n, sets[s].m, sets[s].start, 0);
        pcb_counters c;
        int32_t *idx = run(cu, &t, &c);
        if (!valid(&t, idx))
            fprintf(stderr, "  cuda_unrolled failed on %s\n", sets[s].kind);
        CHECK(c.iterations == t.batch * (t.m - 1));
        free(idx);
        free(xyz);
    }
    /* Repeated compute on one prepared state gives the same answer. */
    float *xyz = make("clusters", 2, 5000, 13);
    pcb_task t = fps_task(xyz, 2, 5000, 300, 0, 0);
    int32_t first[600], second[600];
    pcb_result r1 = {.index = first}, r2 = {.index = second};
    void *state = NULL;
    double ms = -1;
    CHECK_RC(cu->prepare(&t, &state), PCB_OK);
    if (state) {
        CHECK_RC(cu->compute(state), PCB_OK);
        CHECK_RC(cu->sync(state), PCB_OK);
        CHECK_RC(cu->fetch(state, &r1), PCB_OK);
        CHECK_RC(cu->compute(state), PCB_OK);
        CHECK_RC(cu->sync(state), PCB_OK);
        CHECK_RC(cu->device_ms(state, &ms), PCB_OK);
        CHECK_RC(cu->fetch(state, &r2), PCB_OK);
        CHECK(same(first, second, 600));
        CHECK(ms >= 0);
        CHECK(valid(&t, second));
    }
    cu->release(state);
    free(xyz);
    /* Wider than its 1e10 initialisation can bound: refused, not wrong. */
    float wide[] = {0, 0, 0, 2e5f, 0, 0, 0, 1, 0};
    t = fps_task(wide, 1, 3, 2, 0, 0);
    int32_t idx[2];
    pcb_result r = {.index = idx};
    CHECK_RC(pcb_run(cu, &t, &r, NULL), PCB_EUNSUPPORTED);
}

/* cuda_pruned: dp's sequence bit for bit, and the replay's counts of
 * distances and rounds exactly (so the kernel took the same rounds with the
 * same candidates and tests): the run kernel where a cloud fits in shared
 * memory, its cloud spread over a cluster of 1, 2, 4, 8 or 16 blocks
 * (opt.fps_ctas; by default the one the batch leaves SMs for, and the
 * bucket kernel's counts are accepted there too, for GPUs with less shared
 * memory); the bucket kernel with 16 warps beyond, and with the 8 and 32 of
 * opt.fps_warps on any cloud, with shared memory holding every level,
 * groups and buckets (70,000 points), or groups only (10^6). */
static void cuda_pruned(void)
{
    const pcb_impl *cu = cuda_impl("cuda_pruned");
    if (!cu)
        return;
    static const struct {
        const char *kind;
        int64_t batch, n, m, start;
    } sets[] = {{"uniform", 6, 10000, 1000, 0},   {"lidar", 1, 120000, 4096, 0},
                {"uniform", 3, 16384, 2000, 11},  {"uniform", 1, 1000000, 3000, 7},
                {"clusters", 2, 1537, 1537, 5},   {"sphere", 1, 1000, 1000, 0},
                {"duplicates", 1, 2000, 600, 0},  {"equal", 1, 300, 30, 0},
                {"collinear", 1, 70000, 200, 0},  {"offset", 2, 3000, 100, 7},
                {"uniform", 1, 1, 1, 0},          {"uniform", 3, 5, 5, 2},
                {"uniform", 1, 33, 33, 32},       {"uniform", 33, 100, 20, 1},
                {"uniform", 1, 16385, 500, 3},    {"lidar", 2, 9000, 900, 1},
                {"uniform", 2, 12289, 700, 0},    {"clusters", 1, 5000, 800, 2},
                {"clusters", 31, 13000, 200, 4}, /* 2 blocks a cloud: larger clusters
                                                    do not all fit at once */
                {"uniform", 16, 60000, 200, 1},  /* runs in global memory */
                {"clusters", 80, 1500, 60, 3}};  /* the opening in the sort's block where
                                                    the GPU has fewer than 160 SMs */
    static const struct {
        const char *name;
        int warps, ctas, dense;
    } tunings[] = {{NULL, 0, 0, 0},      {"fps_warps 8", 8, 0, 0}, {"fps_warps 32", 32, 0, 0},
                   {"fps_ctas 1", 0, 1, 0}, {"fps_ctas 2", 0, 2, 0}, {"fps_ctas 4", 0, 4, 0},
                   {"fps_ctas 8", 0, 8, 0}, {"fps_ctas 16", 0, 16, 0}, {"fps_dense -1", 0, 0, -1}};
    for (size_t w = 0; w < sizeof tunings / sizeof tunings[0]; w++) {
        const char *tuned = tunings[w].name;
        const int warps = tunings[w].warps, ctas = tunings[w].ctas;
        const int dense_off = tunings[w].dense < 0;
        for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
            if ((tuned && sets[s].n > (warps ? 20000 : 200000)) ||
                (dense_off && sets[s].n > FPS_DENSE_MAX_N))
                continue;
            float *xyz = make(sets[s].kind, sets[s].batch, sets[s].n, 123);
            pcb_task t = fps_task(xyz, sets[s].batch, sets[s].n, sets[s].m, sets[s].start, 0);
            t.opt.fps_warps = warps, t.opt.fps_ctas = ctas, t.opt.fps_dense = tunings[w].dense;
            pcb_counters gpu;
            int32_t *ref = run(impl("dp"), &t, NULL), *got = run(cu, &t, &gpu);
            int32_t *replayed = malloc((size_t)(t.batch * t.m) * sizeof *replayed);
            /* The layouts the kernel may have taken: the forced one, or by
             * default runs over any cluster size or buckets; the counts
             * must equal one's. */
            int layouts[6][2] = {{warps ? warps : 16, 1}}, count = 1;
            if (ctas && fps_runs_take(t.n, ctas))
                layouts[0][0] = 0, layouts[0][1] = ctas;
            else if (!warps && !ctas)
                for (int k = 1; k <= FPS_RUNS_CTAS_MAX; k *= 2)
                    if (fps_runs_take(t.n, k))
                        layouts[count][0] = 0, layouts[count++][1] = k;
            replay_counts c = {0};
            for (int l = 0; l < count; l++) {
                replay_counts here = {0};
                for (int64_t b = 0; xyz && replayed && b < t.batch; b++)
                    CHECK(rounds_replay(xyz + b * t.n * 3, (int)t.n, (int)t.m, (int)t.start,
                                        layouts[l][0], layouts[l][1], replayed + b * t.m,
                                        &here) == 0);
                if (l == 0 || (here.evals == gpu.distance_evals && here.rounds == gpu.iterations))
                    c = here;
            }
            for (int64_t b = 0; xyz && replayed && b < t.batch; b++) /* the kernel's last pass */
                CHECK(pcb_fps_distinct_tail(replayed + b * t.m, t.n, t.m) == PCB_OK);
            /* Small clouds by default: a warp a cloud runs dp, every distance every step. */
            if (!tuned && t.n <= FPS_DENSE_MAX_N) {
                c.evals = t.batch * t.n * (t.m - 1);
                c.rounds = t.batch * (t.m - 1);
            }
            if (!same(got, ref, t.batch * t.m) || gpu.distance_evals != c.evals ||
                gpu.iterations != c.rounds)
                fprintf(stderr,
                        "  cuda_pruned (%s) on %s n=%lld: %s dp; distances %lld (replay "
                        "%lld), rounds %lld (replay %lld)\n",
                        tuned ? tuned : "default", sets[s].kind, (long long)sets[s].n,
                        same(got, ref, t.batch * t.m) ? "equals" : "differs from",
                        (long long)gpu.distance_evals, (long long)c.evals,
                        (long long)gpu.iterations, (long long)c.rounds);
            CHECK(same(got, ref, t.batch * t.m));
            CHECK(same(replayed, ref, t.batch * t.m));
            CHECK(gpu.distance_evals == c.evals);
            CHECK(gpu.iterations == c.rounds);
            free(replayed);
            free(ref);
            free(got);
            free(xyz);
        }
    }
    /* Repeated compute on one prepared state gives the same answer. */
    float *xyz = make("lidar", 1, 20000, 5);
    pcb_task t = fps_task(xyz, 1, 20000, 500, 3, 0);
    int32_t first[500], second[500];
    pcb_result r1 = {.index = first}, r2 = {.index = second};
    void *state = NULL;
    CHECK_RC(cu->prepare(&t, &state), PCB_OK);
    if (state) {
        for (int k = 0; k < 2; k++) {
            CHECK_RC(cu->compute(state), PCB_OK);
            CHECK_RC(cu->sync(state), PCB_OK);
            CHECK_RC(cu->fetch(state, k ? &r2 : &r1), PCB_OK);
        }
        CHECK(same(first, second, 500));
        CHECK(valid(&t, second));
    }
    cu->release(state);
    free(xyz);
}

/* The GPU's 32-bit Morton code equals the 64-bit one for every width it
 * serves (<= 10 bits an axis), inside the frame and clamped outside it. */
/* The rounds' thresholds (fps_rounds.h): fractions rising with the level
 * (quarter steps until float runs out of bits near 1) and below 1 up to
 * the tightest, 1 - 2^-23; a candidate's row; the rows a round
 * takes (the most that fit the list together, none when row 0 alone
 * overflows); the next first level, within its range. */
static void round_rows_rules(void)
{
    for (int level = 1; level <= FPS_ROUND_LEVEL_MAX + FPS_ROUND_CLASSES - 1; level++) {
        CHECK(level < 80 ? fps_round_fraction(level) > fps_round_fraction(level - 1)
                         : fps_round_fraction(level) >= fps_round_fraction(level - 1));
        CHECK(fps_round_fraction(level) < 1.0f);
    }
    CHECK(fps_round_fraction(0) == 0.5f && fps_round_fraction(4) == 0.75f);
    CHECK(fps_round_fraction(FPS_ROUND_LEVEL_MAX + FPS_ROUND_CLASSES - 1) == 1.0f - 0x1p-23f);
    const float tau[FPS_ROUND_CLASSES] = {1.0f, 2.0f, 3.0f, 4.0f};
    CHECK(fps_round_row(5.0f, tau) == 0 && fps_round_row(4.0f, tau) == 1);
    CHECK(fps_round_row(1.5f, tau) == 3 && fps_round_row(1.0f, tau) == FPS_ROUND_CLASSES);
    const int fit[4] = {10, 20, 30, 40}, part[4] = {60, 60, 9, 0}, over[4] = {129, 0, 0, 0},
              none[4] = {0, 0, 0, 0}, edge[4] = {128, 0, 1, 0};
    CHECK(fps_round_rows(fit) == 4 && fps_round_rows(part) == 2);
    CHECK(fps_round_rows(over) == 0 && fps_round_rows(none) == 4 && fps_round_rows(edge) == 2);
    /* taken one level above the next first one: the same threshold is its row 1 */
    CHECK(fps_round_base(8, 3) == 8 && fps_round_base(8, 4) == 7 && fps_round_base(8, 0) == 10);
    CHECK(fps_round_base(0, 4) == 0 && fps_round_base(FPS_ROUND_LEVEL_MAX, 0) == FPS_ROUND_LEVEL_MAX);
}

static void morton32_equals_morton(void)
{
    uint64_t state = 12345;
    int differ = 0;
    for (int k = 0; k < 200000; k++) {
        float v[7];
        for (int d = 0; d < 7; d++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            v[d] = (float)((double)(state >> 11) / 9007199254740992.0);
        }
        /* a frame over [-1, 1] (scale to 2^21 - 1 over the width), points
         * a little beyond it on both sides */
        const float frame[4] = {-1.0f + 0.1f * v[0], -1.0f, -1.0f, 2097151.0f / (2.0f - v[1])};
        const float x = 2.4f * v[2] - 1.2f, y = 2.4f * v[3] - 1.2f, z = 2.4f * v[4] - 1.2f;
        const int bits = 1 + k % 10;
        differ += sp_morton32(frame, x, y, z, bits) != (uint32_t)sp_morton(frame, x, y, z, bits);
    }
    const float frame[4] = {0.0f, 0.0f, 0.0f, 1.0f}; /* the corners */
    differ += sp_morton32(frame, 3e6f, 3e6f, 3e6f, 10) != (uint32_t)sp_morton(frame, 3e6f, 3e6f, 3e6f, 10);
    differ += sp_morton32(frame, -5.0f, NAN, 7.0f, 10) != (uint32_t)sp_morton(frame, -5.0f, NAN, 7.0f, 10);
    CHECK(differ == 0);
    CHECK(sp_morton32(frame, 3e6f, 3e6f, 3e6f, 10) == (1u << 30) - 1);
}

/* Hilbert's order visits every cell of the cube once, each next cell beside
 * the last (what keeps a run's box compact), and takes clouds no flatter
 * than 1 : 4. */
static void hilbert_order(void)
{
    static uint8_t seen[1 << 18];
    for (int bits = 1; bits <= 6; bits++) {
        const uint32_t side = 1u << bits, cells = side * side * side;
        uint32_t *at = malloc(cells * sizeof *at);
        int bad = at == NULL;
        memset(seen, 0, cells);
        for (uint32_t c = 0; at && c < cells; c++) {
            const uint32_t x = c % side, y = c / side % side, z = c / side / side;
            const uint32_t h = sp_hilbert_cells(x, y, z, bits);
            bad += h >= cells || seen[h]++;
            if (h < cells)
                at[h] = c;
        }
        for (uint32_t h = 1; !bad && h < cells; h++) {
            int step = 0;
            for (uint32_t u = at[h], v = at[h - 1], d = 0; d < 3; d++, u /= side, v /= side)
                step += abs((int)(u % side) - (int)(v % side));
            bad += step != 1;
        }
        if (bad)
            fprintf(stderr, "  the Hilbert order of %u cells an axis is not a walk of steps of one\n",
                    side);
        CHECK(bad == 0);
        free(at);
    }
    const float frame[4] = {0.0f, 0.0f, 0.0f, 2097151.0f};
    CHECK(sp_hilbert32(frame, 0.0f, 0.0f, 0.0f, 5) == 0); /* it starts at the corner */
    CHECK(sp_hilbert32(frame, 1.0f, 1.0f, 1.0f, 5) < (1u << 15));
    const float lo[3] = {0.0f, 0.0f, 0.0f}, cube[3] = {1.0f, 1.0f, 1.0f}, quarter[3] = {1.0f, 0.5f, 0.25f},
                flat[3] = {1.0f, 1.0f, 0.24f};
    CHECK(fps_runs_hilbert(lo, cube) && fps_runs_hilbert(lo, quarter));
    CHECK(!fps_runs_hilbert(lo, flat));
}

TEST_MAIN(T(cpu_impls_agree), T(round_rows_rules), T(morton32_equals_morton), T(hilbert_order), T(ties_canonical), T(pruned_equals_dp), T(rounds_replay_equals_dp),
          T(batch_equals_single), T(start_and_sizes),
          T(duplicates_distinct), T(invalid_arguments), T(validator_rejects), T(counters),
          T(cuda_unrolled), T(cuda_pruned))
