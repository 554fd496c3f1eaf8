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

#include "bench/problems/problems.h"
#include "datasets/cloud.h"
#include "harness.h"

enum { SEED = 1 };

/* The second lidar sweep: sensor moved 0.8 m forward, 0.05 m left, turned
 * 0.01 rad, like consecutive frames of a moving car. */
static const double lidar_pose_b[3] = {0.8, 0.05, 0.01};

/* Problem first, then the brute-force work of the configuration. */
static int by_problem_then_size(const void *x, const void *y)
{
    const bench_config *a = x, *b = y;
    if (a->problem != b->problem)
        return a->problem < b->problem ? -1 : 1;
    double ka = bench_face(a->problem)->size(a), kb = bench_face(b->problem)->size(b);
    return ka < kb ? -1 : ka > kb ? 1 : strcmp(a->id, b->id);
}

/* The quick suite times OpenMP code on one thread: on a shared machine,
 * threads waiting at barriers for a preempted sibling make CPU time swing
 * by 10x and more, which no ratio tolerance survives. It still verifies
 * with every thread. */
static const struct {
    const char *name, *about;
    int reps;
    double rep_seconds, figure_seconds, run_budget, budget;
    int threads;
} suites[] = {
    /* seed: the main job, in minutes: short samples, a second a figure, runs of
       10 s at most (the references 40 s), 270 s in all */
    {"seed", "the configurations the source documents report", 5, 0.03, 1, 10, 270, 0},
    {"full", "sweeps over batch, points and samples for the plots", 3, 0.1, 1.5, 20,
     0, 0},
    {"train", "NN and chamfer at training batches (B = 8-32, N = 1k-16k)", 5, 0.1,
     1.5, 20, 0, 0},
    {"knn", "k nearest neighbours: self-kNN batches at k = 3-64, three_nn, lidar sweeps",
     5, 0.1, 1.5, 20, 0, 0},
    {"ball", "ball query, first and nearest: PointNet++ groupings (B = 16-32, N = 1k-16k), lidar",
     5, 0.1, 1.5, 20, 0, 0},
    {"ragged", "ragged batches (8 lidar sweeps of 60k-120k points, 32 objects of 512-4,096) "
     "beside equal-size twins: FPS, NN, self-kNN, chamfer", 5, 0.1, 1.5, 20, 0, 0},
    {"grid", "grid sampling and serialization: lidar sweeps at 5-20 cm (120k-1M points), "
     "scans of 100k-200k points at 2-5 cm in batches of 8-16", 5, 0.1, 1.5, 20, 0, 0},
    {"quick", "small sizes for CI and the regression gate (timed on one thread)", 7,
     0.03, 0.25, 5, 0, 1},
};

const char *bench_suite_names(void)
{
    return "seed, full, train, knn, ball, ragged, grid, quick";
}

int bench_suite_get(const char *name, bench_suite *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) {
        if (strcmp(name, suites[i].name) != 0)
            continue;
        /* each problem's configurations of the suite, from its face */
        bench_config_list l = {0};
        int rc = PCB_OK;
        for (int p = 0; p < PCB_NPROBLEMS && rc == PCB_OK; p++)
            rc = bench_face((pcb_problem)p)->configs(&l, name);
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
    const bench_problem_face *f = bench_face(c->problem);
    if (f->sides == 2 && strcmp(c->dataset, "lidar") == 0) /* consecutive sweeps */
        rc = side == 0 ? pcb_gen_lidar(n, seed, 0, 0, 0, &cloud)
                       : pcb_gen_lidar(n, seed, lidar_pose_b[0], lidar_pose_b[1],
                                       lidar_pose_b[2], &cloud);
    else if (f->sides == 2 && strcmp(c->dataset, "noisy") == 0) {
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
    const bench_problem_face *f = bench_face(c->problem);
    return f->sides == 1 ? 0 : f->square ? c->n : c->nq;
}

int64_t bench_cloud_length(const bench_config *c, int side, int64_t i)
{
    const int64_t full = side ? second_side(c) : c->n;
    if (!c->shortest || !full)
        return full;
    if (side && (c->self || bench_face(c->problem)->square)) /* the cloud itself, an equal pair */
        return bench_cloud_length(c, 0, i);
    const int64_t at = side ? c->batch - 1 - i : i;
    const int64_t lo = c->shortest * full / c->n;
    return c->batch > 1 ? lo + (full - lo) * at / (c->batch - 1) : full;
}

pcb_task bench_task_of(const bench_config *c, const bench_data *d)
{
    pcb_task t = {.problem = c->problem, .batch = c->batch, .n = c->n, .nq = second_side(c),
                  .m = c->m, .k = c->k, .radius = c->radius, .select = c->select, .a = d->a,
                  .b = d->b, .lengths_a = d->lengths_a, .lengths_b = d->lengths_b,
                  .opt.max_gap = c->max_gap};
    if (c->self && t.nq == t.n) /* the queries are the cloud itself: say so (pcb_task_self) */
        t.b = t.a, t.lengths_b = t.lengths_a;
    const bench_problem_face *f = bench_face(c->problem);
    if (f->task) /* its own fields */
        f->task(c, &t);
    bench_tuning_env(&t.opt);
    return t;
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
