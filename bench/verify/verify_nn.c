/* verify_nn.c - the NN verification matrix.
 *
 * The slides' case first: a lidar sweep against the next sweep of the same
 * street (sensor moved 0.8 m, turned 0.01 rad), at 30k x 30k and at the
 * full 120k x 120k; then small synthetic clouds for the edge cases, and
 * real clouds from datasets/real/ when they were fetched. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify.h"

enum { REAL_MAX_FILES = 3, REAL_MAX_POINTS = 30000 };

/* Run one case of problem p (NN, or chamfer with ref as A and qry as B);
 * clouds ref and qry hold batch clouds each. Frees them. */
static int run_pair(pcb_problem p, const char *label, pcb_cloud *ref, pcb_cloud *qry,
                    int64_t batch, const char *impl, FILE *out)
{
    pcb_verify_case c = {.task = {.problem = p, .batch = batch, .n = ref->n / batch,
                                  .nq = qry->n / batch, .a = ref->xyz, .b = qry->xyz}};
    snprintf(c.label, sizeof c.label, "%s", label);
    int failures = pcb_verify_case_run(&c, impl, out);
    pcb_cloud_free(ref);
    pcb_cloud_free(qry);
    return failures;
}

/* A generated pair: batch reference clouds of n points and batch query
 * clouds of nq points, each cloud its own seed unless same_seed (then a
 * query cloud of the reference's kind and size is the reference itself). */
int pcb_verify_generated_pair(pcb_problem p, const char *kind_ref, const char *kind_qry, int64_t n, int64_t nq,
                     int64_t batch, int same_seed, const char *impl, FILE *out)
{
    char label[96];
    snprintf(label, sizeof label, "%s%s%s %lldx%lld%s", kind_ref, strcmp(kind_ref, kind_qry) ? "/" : "",
             strcmp(kind_ref, kind_qry) ? kind_qry : "", (long long)n, (long long)nq,
             batch > 1 ? " batch" : "");
    if (batch > 1)
        snprintf(label + strlen(label), sizeof label - strlen(label), " %lld", (long long)batch);
    pcb_cloud ref = {0}, qry = {0}, one;
    int rc = pcb_cloud_alloc(&ref, n * batch);
    if (rc == PCB_OK)
        rc = pcb_cloud_alloc(&qry, nq * batch);
    for (int64_t b = 0; rc == PCB_OK && b < batch; b++) {
        if ((rc = pcb_generate(kind_ref, n, 100 + 2 * (uint64_t)b, &one)) != PCB_OK)
            break;
        memcpy(ref.xyz + 3 * n * b, one.xyz, (size_t)n * 3 * sizeof(float));
        pcb_cloud_free(&one);
        if ((rc = pcb_generate(kind_qry, nq, 100 + 2 * (uint64_t)b + !same_seed, &one)) != PCB_OK)
            break;
        memcpy(qry.xyz + 3 * nq * b, one.xyz, (size_t)nq * 3 * sizeof(float));
        pcb_cloud_free(&one);
    }
    if (rc != PCB_OK) {
        pcb_cloud_free(&ref);
        pcb_cloud_free(&qry);
        return rc;
    }
    return run_pair(p, label, &ref, &qry, batch, impl, out);
}

static int generated(const char *kind_ref, const char *kind_qry, int64_t n, int64_t nq,
                     int64_t batch, int same_seed, const char *impl, FILE *out)
{
    return pcb_verify_generated_pair(PCB_NN, kind_ref, kind_qry, n, nq, batch, same_seed, impl,
                                     out);
}

/* A lidar sweep against the next one (the slides' case), for problem p. */
int pcb_verify_lidar_pair(pcb_problem p, int64_t n, const char *impl, FILE *out)
{
    char label[96];
    snprintf(label, sizeof label, "lidar sweep->next %lldk", (long long)(n / 1000));
    pcb_cloud ref = {0}, qry = {0};
    int rc = pcb_gen_lidar(n, 7, 0.0, 0.0, 0.0, &ref);
    if (rc == PCB_OK)
        rc = pcb_gen_lidar(n, 7, 0.8, 0.05, 0.01, &qry);
    if (rc == PCB_EUNAVAIL || rc == PCB_EUNSUPPORTED) {
        char why[320];
        snprintf(why, sizeof why, "lidar generator: %s", pcb_errmsg());
        pcb_verify_skip(out, label, why);
        pcb_cloud_free(&ref);
        return 0;
    }
    if (rc != PCB_OK) {
        pcb_cloud_free(&ref);
        return rc;
    }
    return run_pair(p, label, &ref, &qry, 1, impl, out);
}

static int lidar(int64_t n, const char *impl, FILE *out)
{
    return pcb_verify_lidar_pair(PCB_NN, n, impl, out);
}

/* A real cloud against itself jittered: at most REAL_MAX_POINTS points (an
 * even stride), queries moved by a gaussian of 0.1% of the diagonal. */
static int real_cloud(const char *path, const char *name, const char *impl, FILE *out)
{
    char label[96];
    snprintf(label, sizeof label, "real %.30s", name);
    pcb_cloud full, ref = {0}, qry = {0};
    if (pcb_load(path, &full) != PCB_OK) {
        char why[320];
        snprintf(why, sizeof why, "cannot load: %s", pcb_errmsg());
        pcb_verify_skip(out, label, why);
        return 0;
    }
    int64_t step = (full.n + REAL_MAX_POINTS - 1) / REAL_MAX_POINTS, n = (full.n + step - 1) / step;
    int rc = pcb_cloud_alloc(&ref, n);
    if (rc == PCB_OK)
        rc = pcb_cloud_alloc(&qry, n);
    if (rc != PCB_OK) {
        pcb_cloud_free(&full);
        pcb_cloud_free(&ref);
        return rc;
    }
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int64_t i = 0; i < n; i++)
        for (int d = 0; d < 3; d++) {
            float v = full.xyz[3 * i * step + d];
            ref.xyz[3 * i + d] = v;
            lo[d] = v < lo[d] ? v : lo[d];
            hi[d] = v > hi[d] ? v : hi[d];
        }
    pcb_cloud_free(&full);
    double diag = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                       (hi[2] - lo[2]) * (hi[2] - lo[2]));
    pcb_rng r;
    pcb_rng_seed(&r, 11);
    for (int64_t i = 0; i < 3 * n; i++)
        qry.xyz[i] = (float)(ref.xyz[i] + 1e-3 * diag * pcb_rng_normal(&r));
    return run_pair(PCB_NN, label, &ref, &qry, 1, impl, out);
}

int pcb_verify_nn(const char *impl, FILE *out)
{
    if (!pcb_verify_impl_known(PCB_NN, impl))
        return pcb_fail(PCB_EINVAL, "unknown nn implementation '%s'", impl);
    pcb_verify_header(out, PCB_NN);
    static const struct {
        const char *ref, *qry;
        int64_t n, nq, batch;
        int same_seed;
    } cases[] = {
        {"uniform", "uniform", 2000, 3000, 1, 0},  /* nq != n */
        {"clusters", "uniform", 3000, 2000, 1, 0}, /* queries far from the clusters too */
        {"clusters", "clusters", 3000, 3000, 1, 0},
        {"sphere", "sphere", 2000, 2000, 1, 0},
        {"duplicates", "duplicates", 2000, 2000, 1, 1}, /* queries on duplicated points: ties */
        {"equal", "uniform", 1000, 500, 1, 0},     /* every reference point ties */
        {"collinear", "collinear", 2000, 2000, 1, 0},
        {"offset", "offset", 2000, 2000, 1, 0},    /* 3,000 km from the origin */
        {"uniform", "uniform", 1, 500, 1, 0},      /* one reference point */
        {"uniform", "uniform", 2000, 1, 1, 0},     /* one query */
        {"uniform", "uniform", 1, 1, 1, 0},
        {"uniform", "uniform", 1000, 700, 4, 0},   /* batch */
        {"sphere", "sphere", 1024, 1024, 32, 0},   /* training batches: cuda_tiles' */
        {"uniform", "uniform", 2048, 2048, 8, 0},
        {"offset", "offset", 1500, 1000, 3, 0},    /* partial tiles, far from the origin */
    };
    int failures = 0, rc;
    if ((rc = lidar(30000, impl, out)) < 0)
        return rc;
    failures += rc;
    if ((rc = lidar(120000, impl, out)) < 0)
        return rc;
    failures += rc;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rc = generated(cases[i].ref, cases[i].qry, cases[i].n, cases[i].nq, cases[i].batch,
                       cases[i].same_seed, impl, out);
        if (rc < 0)
            return rc;
        failures += rc;
    }
    if ((rc = pcb_verify_real(REAL_MAX_FILES, real_cloud, impl, out)) < 0)
        return rc;
    failures += rc;
    if (!pcb_verify_large())
        return failures;
    /* A million points against a million, ordinary and degenerate: exact,
     * and no pathological slowdown where every box ties. */
    if ((rc = lidar(1000000, impl, out)) < 0)
        return rc;
    failures += rc;
    static const char *const kinds[][2] = {{"uniform", "uniform"}, {"equal", "uniform"},
                                           {"duplicates", "duplicates"},
                                           {"collinear", "collinear"}, {"offset", "offset"}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if ((rc = generated(kinds[i][0], kinds[i][1], 1000000, 1000000, 1,
                            strcmp(kinds[i][0], "duplicates") == 0, impl, out)) < 0)
            return rc;
        failures += rc;
    }
    return failures;
}
