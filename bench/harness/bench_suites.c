/* bench_suites.c - the suites and the clouds of a configuration.
 *
 *   seed   exactly the configurations the source documents report
 *   full   sweeps for the plots
 *   quick  small sizes for CI and the regression gate
 * Within a problem, configurations run from small to large, so each run
 * time predicted for the budget rests on a measured smaller one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/cloud.h"
#include "harness.h"

enum { SEED = 1 };

/* The second lidar sweep: sensor moved 0.8 m forward, 0.05 m left, turned
 * 0.01 rad, like consecutive frames of a moving car. */
static const double lidar_pose_b[3] = {0.8, 0.05, 0.01};

typedef struct {
    bench_config *v;
    int count, cap;
} list;

static int add(list *l, pcb_problem p, const char *dataset, int64_t batch, int64_t n,
               int64_t nq, int64_t m)
{
    if (l->count == l->cap) {
        int cap = l->cap ? 2 * l->cap : 32;
        bench_config *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v)
            return pcb_fail(PCB_ENOMEM, "out of memory for the suite");
        l->v = v;
        l->cap = cap;
    }
    bench_config *c = &l->v[l->count++];
    memset(c, 0, sizeof *c);
    c->problem = p;
    c->dataset = dataset;
    c->batch = batch;
    c->n = n;
    c->nq = p == PCB_FPS ? 0 : nq;
    c->m = p == PCB_FPS ? m : 0;
    if (p == PCB_FPS)
        snprintf(c->id, sizeof c->id, "fps/%s/b%lld/n%lld/m%lld", dataset, (long long)batch,
                 (long long)n, (long long)m);
    else if (p == PCB_NN || p == PCB_CHAMFER)
        snprintf(c->id, sizeof c->id, "%s/%s/b%lld/n%lld/q%lld", pcb_problem_name(p), dataset,
                 (long long)batch, (long long)n, (long long)nq);
    else
        snprintf(c->id, sizeof c->id, "emd/%s/b%lld/n%lld", dataset, (long long)batch,
                 (long long)n);
    return PCB_OK;
}

/* A kNN configuration: k neighbours of nq queries, or of every point of
 * the cloud itself (self, as DGCNN and Point Transformer ask). */
static int add_knn(list *l, const char *dataset, int64_t batch, int64_t n, int64_t nq, int64_t k,
                   int self)
{
    int rc = add(l, PCB_KNN, dataset, batch, self ? n : nq, self ? n : nq, 0);
    if (rc != PCB_OK)
        return rc;
    bench_config *c = &l->v[l->count - 1];
    c->n = n, c->k = k, c->self = self;
    char q[32];
    snprintf(q, sizeof q, self ? "self" : "q%lld", (long long)c->nq);
    snprintf(c->id, sizeof c->id, "knn/%s/b%lld/n%lld/%s/k%lld", dataset, (long long)batch,
             (long long)n, q, (long long)k);
    return PCB_OK;
}

/* A ball-query configuration: nq centres, the first nq points of each cloud
 * (as an FPS output is a subset of it), up to k inside radius. */
static int add_ball(list *l, const char *dataset, int64_t batch, int64_t n, int64_t nq,
                    double radius, int64_t k, int select)
{
    int rc = add(l, PCB_BALL, dataset, batch, n, nq, 0);
    if (rc != PCB_OK)
        return rc;
    bench_config *c = &l->v[l->count - 1];
    c->k = k, c->self = 1, c->radius = radius, c->select = select;
    snprintf(c->id, sizeof c->id, "ball/%s/b%lld/n%lld/q%lld/r%g/k%lld/%s", dataset,
             (long long)batch, (long long)n, (long long)nq, radius, (long long)k,
             pcb_ball_select_name(select));
    return PCB_OK;
}

/* An EMD configuration in loss mode: the certified gap asked for. */
static int add_gap(list *l, const char *dataset, int64_t batch, int64_t n, double gap)
{
    int rc = add(l, PCB_EMD, dataset, batch, n, n, 0);
    if (rc == PCB_OK) {
        bench_config *c = &l->v[l->count - 1];
        c->max_gap = gap;
        size_t len = strlen(c->id);
        snprintf(c->id + len, sizeof c->id - len, "/gap%g", gap);
    }
    return rc;
}

/* The last configuration added, made ragged: its clouds evenly from
 * shortest points to all n. */
static void make_ragged(list *l, int64_t shortest)
{
    bench_config *c = &l->v[l->count - 1];
    c->shortest = shortest;
    size_t len = strlen(c->id);
    snprintf(c->id + len, sizeof c->id - len, "/ragged");
}

/* Problem first, then the brute-force work of the configuration. */
static double size_key(const bench_config *c)
{
    double b = (double)c->batch, n = (double)c->n;
    switch (c->problem) {
    case PCB_FPS: return b * n * (double)c->m;
    case PCB_NN: return b * n * (double)c->nq;
    case PCB_CHAMFER: return 2 * b * n * (double)c->nq;
    case PCB_KNN: return b * n * (double)c->nq * (1 + (double)c->k / 64);
    case PCB_BALL: return b * n * (double)c->nq * (1 + (double)c->k / 64) + c->select;
    default: return b * n * n * n;
    }
}

static int by_problem_then_size(const void *x, const void *y)
{
    const bench_config *a = x, *b = y;
    if (a->problem != b->problem)
        return a->problem < b->problem ? -1 : 1;
    double ka = size_key(a), kb = size_key(b);
    return ka < kb ? -1 : ka > kb ? 1 : strcmp(a->id, b->id);
}

/* FPS where pruning matters: 4,096 samples of a 120k-point lidar sweep, and
 * of 50,000 uniform points (the size fpsample reports). */
static int fps_beyond(list *l)
{
    int rc = add(l, PCB_FPS, "lidar", 1, 120000, 0, 4096);
    return rc == PCB_OK ? add(l, PCB_FPS, "uniform", 1, 50000, 0, 4096) : rc;
}

/* Where training loops call NN and chamfer: batches of 8-32 clouds of 1k-16k
 * points, uniform and object-like (sphere surfaces); one cloud for
 * comparison, and chamfer between a prediction and a target of other sizes. */
static int train_configs(list *l)
{
    static const int64_t tb[] = {8, 16, 32}, tn[] = {1024, 2048, 4096, 8192, 16384};
    static const char *const kinds[] = {"uniform", "sphere"};
    int rc = PCB_OK;
    for (int p = 0; p < 2; p++)
        for (int k = 0; k < 2; k++) {
            const pcb_problem pr = p ? PCB_CHAMFER : PCB_NN;
            for (int i = 0; i < 5; i++)
                for (int j = 0; j < 3 && rc == PCB_OK; j++)
                    rc = add(l, pr, kinds[k], tb[j], tn[i], tn[i], 0);
            for (int i = 0; i < 5 && rc == PCB_OK; i += 4)
                rc = add(l, pr, kinds[k], 1, tn[i], tn[i], 0);
        }
    if (rc == PCB_OK)
        rc = add(l, PCB_CHAMFER, "sphere", 32, 2048, 1024, 0);
    if (rc == PCB_OK)
        rc = add(l, PCB_CHAMFER, "sphere", 16, 16384, 4096, 0);
    return rc;
}

static int train_suite(list *l)
{
    return train_configs(l);
}

/* kNN where networks run it: self-kNN of training batches at k = 3-64
 * (DGCNN k = 20, Point Transformer 16, PointNet++'s three_nn 3), three_nn's
 * shape (4,096 queries into 1,024), and lidar sweeps at k = 8-32. */
static int knn_configs(list *l)
{
    static const int64_t ks[] = {3, 8, 16, 20, 32, 64};
    static const struct {
        int64_t batch, n;
    } sizes[] = {{32, 1024}, {32, 2048}, {16, 4096}};
    int rc = PCB_OK;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (size_t j = 0; j < sizeof ks / sizeof ks[0] && rc == PCB_OK; j++)
            rc = add_knn(l, "sphere", sizes[i].batch, sizes[i].n, 0, ks[j], 1);
    for (int64_t k = 16; k <= 32 && rc == PCB_OK; k += 16)
        rc = add_knn(l, "sphere", 16, 8192, 0, k, 1);
    if (rc == PCB_OK)
        rc = add_knn(l, "sphere", 16, 16384, 0, 16, 1);
    if (rc == PCB_OK)
        rc = add_knn(l, "uniform", 32, 1024, 0, 16, 1);
    if (rc == PCB_OK) /* three_nn: a layer's points into the coarser layer's */
        rc = add_knn(l, "uniform", 16, 1024, 4096, 3, 0);
    for (int64_t k = 8; k <= 32 && rc == PCB_OK; k *= 2)
        rc = add_knn(l, "lidar", 1, 120000, 120000, k, 0);
    if (rc == PCB_OK)
        rc = add_knn(l, "lidar", 1, 1000000, 1000000, 16, 0);
    return rc;
}

/* Ball query where PointNet++ and its descendants group: SSG classification
 * (32 x 1,024: 512 centres r 0.2, 128 centres r 0.4), MSG's radii, the
 * segmentation network's first layers (16-32 x 16,384 points, 4,096 and
 * 1,024 centres), large radii (0.8), and a lidar sweep (4,096 centres, r 0.8
 * m); both selections. Unit-scaled clouds: uniform in the unit cube, sphere
 * surfaces of radius 1. */
static int ball_configs(list *l)
{
    static const struct {
        const char *kind;
        int64_t batch, n, nq;
        double radius;
        int64_t k;
    } sizes[] = {
        {"uniform", 32, 1024, 512, 0.2, 32},    {"uniform", 32, 1024, 128, 0.4, 64},
        {"sphere", 32, 1024, 512, 0.1, 16},     {"sphere", 32, 2048, 512, 0.2, 32},
        {"uniform", 16, 4096, 1024, 0.1, 32},   {"uniform", 32, 16384, 4096, 0.1, 32},
        {"uniform", 16, 16384, 1024, 0.2, 64},  {"uniform", 32, 2048, 256, 0.8, 16},
        {"lidar", 1, 120000, 4096, 0.8, 32},
    };
    int rc = PCB_OK;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int select = PCB_BALL_FIRST; select <= PCB_BALL_NEAREST && rc == PCB_OK; select++)
            rc = add_ball(l, sizes[i].kind, sizes[i].batch, sizes[i].n, sizes[i].nq,
                          sizes[i].radius, sizes[i].k, select);
    return rc;
}

/* Ragged batches where they are met: 8 lidar sweeps of 60k-120k points (FPS
 * of 4,096 each; NN between consecutive sweeps, the second sweep's lengths
 * running the other way) and 32 object clouds of 512-4,096 points
 * (self-kNN, k = 16; chamfer against a second batch). Each beside its
 * equal-size twin: as many points in clouds of the mean length. The
 * implementations that read lengths take the batch whole; the others run
 * it one cloud at a time (pcb_each), the sum of single-cloud runs. */
static int ragged_configs(list *l)
{
    int rc = add(l, PCB_FPS, "lidar", 8, 120000, 0, 4096);
    if (rc == PCB_OK) {
        make_ragged(l, 60000);
        rc = add(l, PCB_FPS, "lidar", 8, 90000, 0, 4096);
    }
    if (rc == PCB_OK && (rc = add(l, PCB_NN, "lidar", 8, 120000, 120000, 0)) == PCB_OK) {
        make_ragged(l, 60000);
        rc = add(l, PCB_NN, "lidar", 8, 90000, 90000, 0);
    }
    if (rc == PCB_OK && (rc = add_knn(l, "sphere", 32, 4096, 0, 16, 1)) == PCB_OK) {
        make_ragged(l, 512);
        rc = add_knn(l, "sphere", 32, 2304, 0, 16, 1);
    }
    if (rc == PCB_OK && (rc = add(l, PCB_CHAMFER, "sphere", 32, 4096, 4096, 0)) == PCB_OK) {
        make_ragged(l, 512);
        rc = add(l, PCB_CHAMFER, "sphere", 32, 2304, 2304, 0);
    }
    return rc;
}

static int seed_suite(list *l)
{
    int rc = PCB_OK;
    for (int b = 1; b <= 6 && rc == PCB_OK; b++)
        rc = add(l, PCB_FPS, "uniform", b, 10000, 0, 1000);
    if (rc == PCB_OK)
        rc = add(l, PCB_FPS, "uniform", 6, 10000, 0, 10000);
    if (rc == PCB_OK)
        rc = fps_beyond(l);
    if (rc == PCB_OK)
        rc = add(l, PCB_NN, "lidar", 1, 120000, 120000, 0);
    /* EMD on a cube and on sphere surfaces, where auctions fight longest. */
    static const char *const emd_kind[] = {"uniform", "sphere"};
    static const int64_t emd_n[] = {1024, 2048, 4096}, emd_b[] = {1, 32};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 2 && rc == PCB_OK; j++)
                rc = add(l, PCB_EMD, emd_kind[k], emd_b[j], emd_n[i], emd_n[i], 0);
    /* EMD as a training loss: a batch certified within 1% (its 0.1% twin above) */
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 3 && rc == PCB_OK; i += 2)
            rc = add_gap(l, emd_kind[k], 32, emd_n[i], 0.01);
    return rc;
}

static int full_suite(list *l)
{
    static const int64_t fps_b[] = {1, 2, 4, 8, 16, 32};
    static const int64_t fps_n[] = {1000, 4000, 10000, 16000, 100000, 1000000};
    static const int64_t nn_n[] = {10000, 30000, 120000, 1000000};
    static const int64_t emd_n[] = {256, 512, 1024, 2048, 4096, 8192}, emd_b[] = {1, 8, 32};
    int rc = PCB_OK;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6 && rc == PCB_OK; j++) {
            rc = add(l, PCB_FPS, "uniform", fps_b[i], fps_n[j], 0, fps_n[j] / 10);
            if (rc == PCB_OK)
                rc = add(l, PCB_FPS, "uniform", fps_b[i], fps_n[j], 0, fps_n[j] / 4);
        }
    /* The sizes of the FPS targets: training batches of mid-size clouds, one
     * huge cloud, and the small clouds of a network's later layers (32 x
     * 1,000 x 100 and x 250 are in the sweep above). */
    if (rc == PCB_OK)
        rc = add(l, PCB_FPS, "uniform", 32, 16384, 0, 4096);
    if (rc == PCB_OK)
        rc = add(l, PCB_FPS, "uniform", 16, 8192, 0, 2048);
    if (rc == PCB_OK)
        rc = add(l, PCB_FPS, "uniform", 64, 8192, 0, 1024);
    if (rc == PCB_OK)
        rc = add(l, PCB_FPS, "uniform", 32, 1024, 0, 256);
    if (rc == PCB_OK)
        rc = add(l, PCB_FPS, "uniform", 32, 256, 0, 64);
    if (rc == PCB_OK)
        rc = add(l, PCB_FPS, "uniform", 1, 1000000, 0, 16384);
    if (rc == PCB_OK)
        rc = fps_beyond(l);
    if (rc == PCB_OK)
        rc = train_configs(l);
    if (rc == PCB_OK)
        rc = knn_configs(l);
    if (rc == PCB_OK)
        rc = ball_configs(l);
    if (rc == PCB_OK)
        rc = ragged_configs(l);
    for (int j = 0; j < 4 && rc == PCB_OK; j++)
        rc = add(l, PCB_NN, "lidar", 1, nn_n[j], nn_n[j], 0);
    for (int j = 0; j < 4 && rc == PCB_OK; j++)
        rc = add(l, PCB_NN, "uniform", 1, nn_n[j], nn_n[j], 0);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 3 && rc == PCB_OK; j++)
                rc = add(l, PCB_EMD, k ? "sphere" : "uniform", emd_b[j], emd_n[i], emd_n[i], 0);
    /* Time against the certified bound (0.1%: the configurations above), and
     * large pairs: uniform, consecutive lidar sweeps, noisy copies of a shape. */
    static const double gaps[] = {0.002, 0.005, 0.01, 0.02, 0.05, 0.1};
    for (int k = 0; k < 2; k++)
        for (int i = 2; i < 6; i += 2)
            for (int g = 0; g < 6 && rc == PCB_OK; g++)
                rc = add_gap(l, k ? "sphere" : "uniform", 32, emd_n[i], gaps[g]);
    /* a training loss's looser bounds where MSN's setting is the field's choice */
    for (int k = 0; k < 2; k++)
        for (int i = 3; i < 6; i += 2)
            for (int g = 4; g < 6 && rc == PCB_OK; g++)
                rc = add_gap(l, k ? "sphere" : "uniform", 32, emd_n[i], gaps[g]);
    static const char *const pairs[] = {"lidar", "noisy"};
    for (int k = 0; k < 2; k++)
        for (int i = 2; i < 6 && rc == PCB_OK; i += 2)
            rc = add(l, PCB_EMD, pairs[k], 32, emd_n[i], emd_n[i], 0);
    for (int k = 0; k < 3 && rc == PCB_OK; k++)
        rc = add(l, PCB_EMD, k == 2 ? "noisy" : k ? "lidar" : "uniform", 32, 16384, 16384, 0);
    return rc;
}

static int quick_suite(list *l)
{
    int rc = add(l, PCB_FPS, "uniform", 1, 2000, 0, 100);
    if (rc == PCB_OK) rc = add(l, PCB_FPS, "uniform", 2, 3000, 0, 64);
    if (rc == PCB_OK) rc = add(l, PCB_NN, "uniform", 1, 5000, 5000, 0);
    if (rc == PCB_OK) rc = add(l, PCB_NN, "uniform", 2, 2000, 3000, 0);
    if (rc == PCB_OK) rc = add(l, PCB_EMD, "uniform", 1, 128, 128, 0);
    if (rc == PCB_OK) rc = add(l, PCB_EMD, "uniform", 2, 256, 256, 0);
    if (rc == PCB_OK) rc = add(l, PCB_CHAMFER, "uniform", 2, 2000, 1500, 0);
    if (rc == PCB_OK) rc = add_knn(l, "uniform", 2, 2000, 1500, 8, 0);
    if (rc == PCB_OK) rc = add_ball(l, "uniform", 2, 2000, 500, 0.1, 16, PCB_BALL_NEAREST);
    return rc;
}

/* The quick suite times OpenMP code on one thread: on a shared machine,
 * threads waiting at barriers for a preempted sibling make CPU time swing
 * by 10x and more, which no ratio tolerance survives. It still verifies
 * with every thread. */
static const struct {
    const char *name, *about;
    int (*make)(list *);
    int reps;
    double rep_seconds, figure_seconds, run_budget, budget;
    int threads;
} suites[] = {
    /* seed: the main job, in minutes: short samples, a second a figure, runs of
       15 s at most (the references 30 s), 270 s in all */
    {"seed", "the configurations the source documents report", seed_suite, 5, 0.03, 1, 10, 270, 0},
    {"full", "sweeps over batch, points and samples for the plots", full_suite, 3, 0.1, 1.5, 20,
     0, 0},
    {"train", "NN and chamfer at training batches (B = 8-32, N = 1k-16k)", train_suite, 5, 0.1,
     1.5, 20, 0, 0},
    {"knn", "k nearest neighbours: self-kNN batches at k = 3-64, three_nn, lidar sweeps",
     knn_configs, 5, 0.1, 1.5, 20, 0, 0},
    {"ball", "ball query, first and nearest: PointNet++ groupings (B = 16-32, N = 1k-16k), lidar",
     ball_configs, 5, 0.1, 1.5, 20, 0, 0},
    {"ragged", "ragged batches (8 lidar sweeps of 60k-120k points, 32 objects of 512-4,096) "
     "beside equal-size twins: FPS, NN, self-kNN, chamfer", ragged_configs, 5, 0.1, 1.5, 20, 0, 0},
    {"quick", "small sizes for CI and the regression gate (timed on one thread)", quick_suite, 7,
     0.03, 0.25, 5, 0, 1},
};

const char *bench_suite_names(void)
{
    return "seed, full, train, knn, ball, ragged, quick";
}

int bench_suite_get(const char *name, bench_suite *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) {
        if (strcmp(name, suites[i].name) != 0)
            continue;
        list l = {0};
        int rc = suites[i].make(&l);
        if (rc != PCB_OK) {
            free(l.v);
            return rc;
        }
        qsort(l.v, (size_t)l.count, sizeof *l.v, by_problem_then_size);
        *out = (bench_suite){.name = suites[i].name, .about = suites[i].about, .configs = l.v,
                             .count = l.count, .reps = suites[i].reps,
                             .rep_seconds = suites[i].rep_seconds,
                             .figure_seconds = suites[i].figure_seconds,
                             .run_budget = suites[i].run_budget, .budget = suites[i].budget,
                             .threads = suites[i].threads};
        return PCB_OK;
    }
    return pcb_fail(PCB_EINVAL, "unknown suite '%s' (%s)", name, bench_suite_names());
}

void bench_suite_free(bench_suite *s)
{
    free(s->configs);
    s->configs = NULL;
    s->count = 0;
}

/* ---- data ------------------------------------------------------------------ */
/* Cloud i of one side of the batch into dst (n points). */
static int make_cloud(const bench_config *c, int side, int64_t i, int64_t n, float *dst)
{
    pcb_cloud cloud = {0};
    uint64_t seed = SEED + (uint64_t)i;
    int rc;
    if (c->problem != PCB_FPS && strcmp(c->dataset, "lidar") == 0) /* consecutive sweeps */
        rc = side == 0 ? pcb_gen_lidar(n, seed, 0, 0, 0, &cloud)
                       : pcb_gen_lidar(n, seed, lidar_pose_b[0], lidar_pose_b[1],
                                       lidar_pose_b[2], &cloud);
    else if (c->problem == PCB_EMD && strcmp(c->dataset, "noisy") == 0) {
        /* a completion network's output beside its ground truth: a shape of
         * 16 blobs, and the same points shuffled and moved by 1% noise */
        rc = pcb_generate("clusters", n, seed, &cloud);
        if (rc == PCB_OK && side)
            pcb_noisy_copy(cloud.xyz, n, 0.01, seed + 1000, cloud.xyz);
    } else /* the second cloud of a pair comes from an unrelated seed */
        rc = pcb_generate(c->dataset, n, seed + (side ? 1000 : 0), &cloud);
    if (rc == PCB_OK && cloud.n != n)
        rc = pcb_fail(PCB_EINVAL, "dataset %s gave %lld points, not %lld", c->dataset,
                      (long long)cloud.n, (long long)n);
    if (rc == PCB_OK)
        memcpy(dst, cloud.xyz, (size_t)n * 3 * sizeof *dst);
    pcb_cloud_free(&cloud);
    return rc;
}

/* Points in each cloud of the second side: NN queries, EMD's second clouds. */
static int64_t second_side(const bench_config *c)
{
    return c->problem == PCB_FPS ? 0 : c->problem == PCB_EMD ? c->n : c->nq;
}

int64_t bench_cloud_length(const bench_config *c, int side, int64_t i)
{
    const int64_t full = side ? second_side(c) : c->n;
    if (!c->shortest || !full)
        return full;
    if (side && (c->self || c->problem == PCB_EMD)) /* the cloud itself, an equal pair */
        return bench_cloud_length(c, 0, i);
    const int64_t at = side ? c->batch - 1 - i : i;
    const int64_t lo = c->shortest * full / c->n;
    return c->batch > 1 ? lo + (full - lo) * at / (c->batch - 1) : full;
}

void bench_data_free(bench_data *d)
{
    free(d->a);
    free(d->b);
    free(d->lengths_a);
    free(d->lengths_b);
    memset(d, 0, sizeof *d);
}

int bench_data_make(const bench_config *c, bench_data *d)
{
    memset(d, 0, sizeof *d);
    int64_t nb = second_side(c);
    d->a = calloc((size_t)(c->batch * c->n) * 3, sizeof(float)); /* padding: zeros */
    d->b = nb ? calloc((size_t)(c->batch * nb) * 3, sizeof(float)) : NULL;
    if (c->shortest) {
        d->lengths_a = malloc((size_t)c->batch * sizeof(int64_t));
        d->lengths_b = nb ? malloc((size_t)c->batch * sizeof(int64_t)) : NULL;
    }
    if (!d->a || (nb && !d->b) || (c->shortest && (!d->lengths_a || (nb && !d->lengths_b)))) {
        bench_data_free(d);
        return pcb_fail(PCB_ENOMEM, "no memory for the clouds of %s", c->id);
    }
    int rc = PCB_OK;
    for (int64_t i = 0; i < c->batch && rc == PCB_OK; i++) {
        const int64_t la = bench_cloud_length(c, 0, i), lb = bench_cloud_length(c, 1, i);
        if (d->lengths_a)
            d->lengths_a[i] = la;
        if (d->lengths_b)
            d->lengths_b[i] = lb;
        rc = make_cloud(c, 0, i, la, d->a + i * c->n * 3);
        if (rc == PCB_OK && nb && c->self) /* the queries: the cloud's first lb points */
            memcpy(d->b + i * nb * 3, d->a + i * c->n * 3, (size_t)lb * 3 * sizeof(float));
        else if (rc == PCB_OK && nb)
            rc = make_cloud(c, 1, i, lb, d->b + i * nb * 3);
    }
    if (rc != PCB_OK)
        bench_data_free(d);
    return rc;
}

int bench_data_write(const bench_config *c, const char *dir)
{
    bench_data d;
    int rc = bench_mkdirs(dir);
    if (rc == PCB_OK)
        rc = bench_data_make(c, &d);
    if (rc != PCB_OK)
        return rc;
    const int64_t nb = second_side(c);
    for (int64_t i = 0; i < c->batch && rc == PCB_OK; i++)
        for (int side = 0; side < (nb ? 2 : 1) && rc == PCB_OK; side++) {
            const int64_t n = side ? nb : c->n; /* a ragged cloud: its own points */
            char path[1200];
            snprintf(path, sizeof path, "%s/%c-%lld.ply", dir, side ? 'b' : 'a', (long long)i);
            pcb_cloud cloud = {.xyz = (side ? d.b : d.a) + i * n * 3,
                               .n = bench_cloud_length(c, side, i)};
            rc = pcb_save_ply(path, &cloud);
        }
    bench_data_free(&d);
    return rc;
}

/* ---- selections ------------------------------------------------------------------ */
int bench_listed(const char *list, const char *name)
{
    if (!list)
        return 1;
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        size_t w = strcspn(p, ",");
        if (w == len && strncmp(p, name, len) == 0)
            return 1;
        p += w + (p[w] == ',');
    }
    return 0;
}

int bench_filtered(const char *filter, const char *id)
{
    if (!filter || !*filter)
        return 1;
    for (const char *p = filter; *p;) {
        size_t w = strcspn(p, ",");
        for (const char *at = id; w > 0 && *at; at++)
            if (strncmp(at, p, w) == 0)
                return 1;
        p += w + (p[w] == ',');
    }
    return 0;
}
