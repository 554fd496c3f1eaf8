/* generate.c - seeded synthetic clouds. */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cloud.h"

static void put(pcb_cloud *c, int64_t i, double x, double y, double z)
{
    c->xyz[3 * i] = (float)x;
    c->xyz[3 * i + 1] = (float)y;
    c->xyz[3 * i + 2] = (float)z;
}

static void gen_uniform(pcb_cloud *c, pcb_rng *r)
{
    for (int64_t i = 0; i < c->n; i++) {
        /* One draw per declarator: argument order is unspecified in C. */
        double x = pcb_rng_uniform(r), y = pcb_rng_uniform(r), z = pcb_rng_uniform(r);
        put(c, i, x, y, z);
    }
}

static void gen_sphere(pcb_cloud *c, pcb_rng *r)
{
    for (int64_t i = 0; i < c->n; i++) {
        double x = pcb_rng_normal(r), y = pcb_rng_normal(r), z = pcb_rng_normal(r);
        double len = sqrt(x * x + y * y + z * z);
        if (len < 1e-12) { /* astronomically rare; keep determinism */
            x = 1;
            len = 1;
        }
        put(c, i, x / len, y / len, z / len);
    }
}

/* 16 gaussian blobs (sigma 0.03) with centres uniform in the unit cube. */
static void gen_clusters(pcb_cloud *c, pcb_rng *r)
{
    double centre[16][3];
    for (int k = 0; k < 16; k++)
        for (int d = 0; d < 3; d++)
            centre[k][d] = pcb_rng_uniform(r);
    for (int64_t i = 0; i < c->n; i++) {
        const double *m = centre[pcb_rng_next(r) % 16];
        double x = pcb_rng_normal(r), y = pcb_rng_normal(r), z = pcb_rng_normal(r);
        put(c, i, m[0] + 0.03 * x, m[1] + 0.03 * y, m[2] + 0.03 * z);
    }
}

static void gen_equal(pcb_cloud *c, pcb_rng *r)
{
    double x = pcb_rng_uniform(r), y = pcb_rng_uniform(r), z = pcb_rng_uniform(r);
    for (int64_t i = 0; i < c->n; i++)
        put(c, i, x, y, z);
}

/* Each point is one of max(1, n/8) distinct positions: many exact copies. */
static void gen_duplicates(pcb_cloud *c, pcb_rng *r)
{
    int64_t distinct = c->n / 8 > 0 ? c->n / 8 : 1;
    pcb_cloud base;
    if (pcb_cloud_alloc(&base, distinct) != PCB_OK) { /* fall back to one point */
        gen_equal(c, r);
        return;
    }
    gen_uniform(&base, r);
    for (int64_t i = 0; i < c->n; i++) {
        const float *p = base.xyz + 3 * (int64_t)(pcb_rng_next(r) % (uint64_t)distinct);
        put(c, i, p[0], p[1], p[2]);
    }
    pcb_cloud_free(&base);
}

/* Integer lattice points (spacing 1, side ceil(cbrt(n))) in a random
 * order: every point has 6 neighbours at distance 1, 12 at sqrt 2, ..., so
 * k-th neighbours tie everywhere and the tie order is not the storage one. */
static void gen_lattice(pcb_cloud *c, pcb_rng *r)
{
    int64_t side = 1;
    while (side * side * side < c->n)
        side++;
    for (int64_t i = 0; i < c->n; i++)
        put(c, i, (double)(i % side), (double)(i / side % side), (double)(i / side / side));
    for (int64_t i = c->n - 1; i > 0; i--) { /* Fisher-Yates */
        const int64_t j = (int64_t)(pcb_rng_next(r) % (uint64_t)(i + 1));
        float t[3];
        memcpy(t, c->xyz + 3 * i, sizeof t);
        memmove(c->xyz + 3 * i, c->xyz + 3 * j, sizeof t);
        memcpy(c->xyz + 3 * j, t, sizeof t);
    }
}

static void gen_collinear(pcb_cloud *c, pcb_rng *r)
{
    for (int64_t i = 0; i < c->n; i++) {
        double t = pcb_rng_uniform(r);
        put(c, i, t, 2 * t, -t);
    }
}

/* Uniform in a 100 m cube 3,000 km from the origin: float32 keeps about
 * 0.25 m there, so distances are coarse and the GEMM form would fail. */
static void gen_offset(pcb_cloud *c, pcb_rng *r)
{
    for (int64_t i = 0; i < c->n; i++) {
        double x = pcb_rng_uniform(r), y = pcb_rng_uniform(r), z = pcb_rng_uniform(r);
        put(c, i, 3.0e6 + 100 * x, -2.0e6 + 100 * y, 1.0e3 + 100 * z);
    }
}

static int gen_lidar_kind(pcb_cloud *c, int64_t n, uint64_t seed)
{
    return pcb_gen_lidar(n, seed, 0.0, 0.0, 0.0, c);
}

typedef struct {
    const char *name;
    void (*fill)(pcb_cloud *, pcb_rng *);
} generator;

static const generator generators[] = {
    {"uniform", gen_uniform},     {"sphere", gen_sphere},       {"clusters", gen_clusters},
    {"lidar", NULL},              {"equal", gen_equal},         {"duplicates", gen_duplicates},
    {"collinear", gen_collinear}, {"offset", gen_offset},         {"lattice", gen_lattice},
};
#define NGEN (sizeof generators / sizeof generators[0])

const char *const *pcb_generator_kinds(void)
{
    static const char *names[NGEN + 1];
    for (size_t i = 0; i < NGEN; i++)
        names[i] = generators[i].name;
    return names;
}

int pcb_generate(const char *kind, int64_t n, uint64_t seed, pcb_cloud *out)
{
    if (!out)
        return pcb_fail(PCB_EINVAL, "generate: no cloud to fill");
    out->xyz = NULL;
    out->dxyz = NULL;
    out->n = 0;
    for (size_t i = 0; i < NGEN; i++) {
        if (!kind || strcmp(kind, generators[i].name) != 0)
            continue;
        if (!generators[i].fill)
            return gen_lidar_kind(out, n, seed);
        int rc = pcb_cloud_alloc(out, n);
        if (rc != PCB_OK)
            return rc;
        pcb_rng r;
        pcb_rng_seed(&r, seed);
        generators[i].fill(out, &r);
        return PCB_OK;
    }
    char names[160] = ""; /* the table's names, so that none is left out */
    for (size_t i = 0; i < NGEN; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                 generators[i].name);
    return pcb_fail(PCB_EINVAL, "unknown generator '%s' (%s)", kind ? kind : "", names);
}

void pcb_noisy_copy(const float *a, int64_t n, double sigma, uint64_t seed, float *b)
{
    pcb_rng rng;
    pcb_rng_seed(&rng, seed);
    if (a != b)
        memcpy(b, a, (size_t)n * 3 * sizeof *b);
    for (int64_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
        int64_t k = (int64_t)(pcb_rng_next(&rng) % (uint64_t)(i + 1));
        for (int c = 0; c < 3; c++) {
            float t = b[3 * i + c];
            b[3 * i + c] = b[3 * k + c];
            b[3 * k + c] = t;
        }
    }
    if (sigma > 0)
        for (int64_t i = 0; i < n * 3; i++)
            b[i] = (float)(b[i] + sigma * pcb_rng_normal(&rng));
}

int pcb_gen_batch(const char *kind, int64_t n, int64_t batch, uint64_t seed, double snap,
                  float *xyz)
{
    for (int64_t i = 0; i < batch; i++) {
        pcb_cloud one;
        const int rc = strcmp(kind, "lidar") == 0
                           ? pcb_gen_lidar(n, seed + (uint64_t)i, 0.0, 0.0, 0.0, &one)
                           : pcb_generate(kind, n, seed + (uint64_t)i, &one);
        if (rc != PCB_OK)
            return rc;
        memcpy(xyz + i * n * 3, one.xyz, (size_t)n * 3 * sizeof *xyz);
        pcb_cloud_free(&one);
    }
    for (int64_t i = 0; snap > 0 && i < batch * n * 3; i++)
        xyz[i] = (float)(floor((double)xyz[i] / snap + 0.5) * snap);
    return PCB_OK;
}
