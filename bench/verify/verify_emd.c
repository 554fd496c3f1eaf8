/* verify_emd.c - the EMD verification matrix. Sizes stay where the exact
 * solver, which every answer's gap is measured against, takes at most a few
 * seconds per pair (the whole matrix: under a minute on 2 cores). Every
 * scan path of the seed's CUDA kernel is covered (n < 1024, 1024, 2048,
 * 4096; n = 1500 it refuses; a batch beyond its 32 blocks). At n = 4096 the
 * gap is only computed with PCB_EMD_GAP_MAX_N=4096 (see emd_validate.c);
 * the bound needs no exact solver. The validator's detail reads
 * "bijection yes/no, gap x%, bound y%". */
#include <stdlib.h>
#include <string.h>

#include "verify.h"

#define REAL_MAX_FILES 32
#define REAL_N 1024

static int run_case(const char *label, const float *a, const float *b, int64_t batch, int64_t n,
                    double max_gap, const char *impl, FILE *out)
{
    pcb_verify_case c = {.task = {.problem = PCB_EMD, .batch = batch, .n = n, .nq = n, .a = a,
                                  .b = b, .opt.max_gap = max_gap}};
    snprintf(c.label, sizeof c.label, "%s", label);
    return pcb_verify_case_run(&c, impl, out);
}

/* Fill batch x n points of `kind`, the cloud of pair p from seed + p. */
static int fill(const char *kind, int64_t batch, int64_t n, uint64_t seed, float *xyz)
{
    for (int64_t p = 0; p < batch; p++) {
        pcb_cloud cloud;
        int rc = pcb_generate(kind, n, seed + (uint64_t)p, &cloud);
        if (rc == PCB_OK && cloud.n != n)
            rc = pcb_fail(PCB_EINVAL, "generator '%s' made %lld points, asked for %lld", kind,
                          (long long)cloud.n, (long long)n);
        if (rc == PCB_OK)
            memcpy(xyz + p * n * 3, cloud.xyz, (size_t)n * 3 * sizeof(float));
        pcb_cloud_free(&cloud);
        if (rc != PCB_OK)
            return rc;
    }
    return PCB_OK;
}

/* A from kind_a, B from kind_b (or a noisy copy of A when kind_b is NULL);
 * max_gap > 0: the loss mode's certified gap, held to implementations with
 * a gap option (the others keep their own promises).
 * Returns failures, or < 0 on a system error; a generator that is not
 * available gets a skip row. */
static int generated(const char *kind_a, const char *kind_b, double sigma, int64_t batch,
                     int64_t n, double max_gap, const char *label, const char *impl, FILE *out)
{
    float *a = malloc((size_t)(batch * n * 3) * sizeof *a);
    float *b = malloc((size_t)(batch * n * 3) * sizeof *b);
    int rc = a && b ? fill(kind_a, batch, n, 1000, a)
                    : pcb_fail(PCB_ENOMEM, "verify emd: no memory for %lld points",
                               (long long)(batch * n));
    if (rc == PCB_OK && kind_b)
        rc = fill(kind_b, batch, n, 2000, b);
    else if (rc == PCB_OK)
        for (int64_t p = 0; p < batch; p++)
            pcb_noisy_copy(a + p * n * 3, n, sigma, 3000 + (uint64_t)p, b + p * n * 3);
    int failures = rc;
    if (rc == PCB_OK) {
        failures = run_case(label, a, b, batch, n, max_gap, impl, out);
    } else if (rc != PCB_ENOMEM) {
        char why[320];
        snprintf(why, sizeof why, "generator: %s: %s", pcb_strerror(rc), pcb_errmsg());
        pcb_verify_skip(out, label, why);
        failures = 0;
    }
    free(a);
    free(b);
    return failures;
}

/* Two interleaved even subsamples of one real cloud, up to REAL_N points
 * each. */
static int real_cloud(const char *path, const char *name, const char *impl, FILE *out)
{
    char label[96];
    pcb_cloud cloud;
    int rc = pcb_load(path, &cloud);
    if (rc != PCB_OK || cloud.n < 2) {
        char why[320];
        snprintf(why, sizeof why, "%s: %s", rc ? pcb_strerror(rc) : "too small",
                 rc ? pcb_errmsg() : "fewer than 2 points");
        snprintf(label, sizeof label, "real %.35s", name);
        pcb_verify_skip(out, label, why);
        pcb_cloud_free(&cloud);
        return rc == PCB_ENOMEM ? rc : 0;
    }
    const int64_t n = cloud.n / 2 < REAL_N ? cloud.n / 2 : REAL_N;
    snprintf(label, sizeof label, "real %.22s 2 x n=%lld", name, (long long)n);
    float *a = malloc((size_t)n * 3 * sizeof *a), *b = malloc((size_t)n * 3 * sizeof *b);
    int failures;
    if (!a || !b) {
        failures = pcb_fail(PCB_ENOMEM, "verify emd: no memory for subsamples");
    } else {
        for (int64_t i = 0; i < n; i++) {
            memcpy(a + 3 * i, cloud.xyz + 3 * (2 * i * cloud.n / (2 * n)), 3 * sizeof(float));
            memcpy(b + 3 * i, cloud.xyz + 3 * ((2 * i + 1) * cloud.n / (2 * n)),
                   3 * sizeof(float));
        }
        failures = run_case(label, a, b, 1, n, 0, impl, out);
    }
    free(a);
    free(b);
    pcb_cloud_free(&cloud);
    return failures;
}

int pcb_verify_emd(const char *impl, FILE *out)
{
    if (!pcb_verify_impl_known(PCB_EMD, impl))
        return pcb_fail(PCB_EINVAL, "unknown emd implementation '%s' (see pcbench list)", impl);
    static const struct {
        const char *kind_a, *kind_b; /* kind_b NULL: B is a noisy copy of A */
        double sigma;
        int64_t batch, n;
        double max_gap;
        const char *label;
    } cases[] = {
        {"uniform", "uniform", 0, 1, 500, 0, "uniform cube n=500"},
        {"sphere", "sphere", 0, 1, 500, 0, "sphere surface n=500"},
        {"clusters", "clusters", 0, 1, 1000, 0, "clusters n=1000"},
        {"sphere", NULL, 0.01, 1, 1000, 0, "sphere + noise 0.01, shuffled n=1000"},
        {"clusters", NULL, 0.001, 1, 512, 0, "clusters + noise 0.001, shuffled n=512"},
        {"uniform", NULL, 0, 1, 256, 0, "shuffled copy (optimum 0) n=256"},
        {"duplicates", "duplicates", 0, 1, 512, 0, "duplicates n=512 (64 distinct)"},
        {"equal", "uniform", 0, 1, 256, 0, "all-equal A vs uniform n=256"},
        {"collinear", "uniform", 0, 1, 500, 0, "collinear A vs uniform n=500"},
        {"offset", "offset", 0, 1, 500, 0, "offset 3000 km n=500"},
        {"uniform", "uniform", 0, 1, 1, 0, "n=1"},
        {"uniform", "uniform", 0, 1, 3, 0, "n=3"},
        {"uniform", "uniform", 0, 1, 1000, 0, "n<1024 n=1000"},
        {"uniform", "uniform", 0, 1, 1500, 0, "non-power-of-two n=1500"},
        {"uniform", "uniform", 0, 1, 1024, 0, "uniform n=1024"},
        {"uniform", "uniform", 0, 1, 2048, 0, "uniform n=2048"},
        {"sphere", "sphere", 0, 1, 2048, 0, "sphere surface n=2048"},
        {"uniform", "uniform", 0, 1, 4096, 0, "uniform n=4096"},
        {"sphere", "sphere", 0, 1, 4096, 0, "sphere surface n=4096"},
        {"sphere", "uniform", 0, 3, 300, 0, "batch 3 sphere vs cube n=300"},
        {"uniform", "clusters", 0, 40, 64, 0, "batch 40 cube vs clusters n=64"},
        /* loss mode: certified within 1% and 5% (cuda_auction stops there) */
        {"uniform", "uniform", 0, 1, 1024, 0.01, "loss mode 1%: uniform n=1024"},
        {"sphere", "sphere", 0, 1, 2048, 0.01, "loss mode 1%: sphere surface n=2048"},
        {"clusters", NULL, 0.01, 8, 512, 0.01, "loss mode 1%: batch 8 noisy copies n=512"},
        {"uniform", "uniform", 0, 1, 1024, 0.05, "loss mode 5%: uniform n=1024"},
        {"sphere", "sphere", 0, 4, 1024, 0.05, "loss mode 5%: batch 4 sphere n=1024"},
    };
    pcb_verify_header(out, PCB_EMD);
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = generated(cases[i].kind_a, cases[i].kind_b, cases[i].sigma, cases[i].batch,
                           cases[i].n, cases[i].max_gap, cases[i].label, impl, out);
        if (rc < 0)
            return rc;
        failures += rc;
    }
    int rc = pcb_verify_real(REAL_MAX_FILES, real_cloud, impl, out);
    return rc < 0 ? rc : failures + rc;
}
