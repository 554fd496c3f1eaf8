/* verify_fps.c - the FPS verification matrix. Every case stays small enough
 * for the O(n m^2) naive implementation (a few seconds in all on 2 cores),
 * since every implementation runs every case. */
#include <stdlib.h>
#include <string.h>

#include "verify.h"

#define REAL_MAX_FILES 32
#define REAL_MAX_POINTS 20000

static int run_case(const char *label, const float *xyz, int64_t batch, int64_t n, int64_t m,
                    int64_t start, int threads, const char *impl, FILE *out)
{
    pcb_verify_case c = {.task = {.problem = PCB_FPS, .batch = batch, .n = n, .m = m,
                                  .start = start, .a = xyz, .opt = {.threads = threads}}};
    snprintf(c.label, sizeof c.label, "%s", label);
    return pcb_verify_case_run(&c, impl, out);
}

/* A batch of generated clouds (seeds 1000, 1001, ...), scaled by `scale`;
 * threads > 0 sets the OpenMP thread count. Returns the failures, or < 0 on
 * a system error; a generator that is not available gets a skip row. */
static int generated(const char *kind, int64_t batch, int64_t n, int64_t m, int64_t start,
                     float scale, int threads, const char *label, const char *impl, FILE *out)
{
    float *xyz = malloc((size_t)(batch * n * 3) * sizeof *xyz);
    if (!xyz)
        return pcb_fail(PCB_ENOMEM, "verify fps: no memory for %lld points",
                        (long long)(batch * n));
    for (int64_t b = 0; b < batch; b++) {
        pcb_cloud cloud;
        int rc = pcb_generate(kind, n, 1000 + (uint64_t)b, &cloud);
        if (rc == PCB_OK && cloud.n != n)
            rc = pcb_fail(PCB_EINVAL, "generator '%s' made %lld points, asked for %lld", kind,
                          (long long)cloud.n, (long long)n);
        if (rc != PCB_OK) {
            char why[320];
            snprintf(why, sizeof why, "generator '%s': %s: %s", kind, pcb_strerror(rc),
                     pcb_errmsg());
            pcb_verify_skip(out, label, why);
            pcb_cloud_free(&cloud);
            free(xyz);
            return rc == PCB_ENOMEM ? rc : 0;
        }
        for (int64_t i = 0; i < n * 3; i++)
            xyz[b * n * 3 + i] = cloud.xyz[i] * scale;
        pcb_cloud_free(&cloud);
    }
    int failures = run_case(label, xyz, batch, n, m, start, threads, impl, out);
    free(xyz);
    return failures;
}

/* An integer lattice side^3: full of exact ties. */
static int lattice(int side, int64_t m, const char *impl, FILE *out)
{
    int64_t n = (int64_t)side * side * side;
    float *xyz = malloc((size_t)n * 3 * sizeof *xyz);
    if (!xyz)
        return pcb_fail(PCB_ENOMEM, "verify fps: no memory for the lattice");
    for (int64_t i = 0; i < n; i++) {
        xyz[3 * i] = (float)(i % side);
        xyz[3 * i + 1] = (float)(i / side % side);
        xyz[3 * i + 2] = (float)(i / side / side);
    }
    char label[96];
    snprintf(label, sizeof label, "lattice %dx%dx%d ties m=%lld", side, side, side,
             (long long)m);
    int failures = run_case(label, xyz, 1, n, m, 0, 0, impl, out);
    free(xyz);
    return failures;
}

/* One real cloud, evenly subsampled to at most REAL_MAX_POINTS points. */
static int real_cloud(const char *path, const char *name, const char *impl, FILE *out)
{
    char label[96];
    pcb_cloud cloud;
    int rc = pcb_load(path, &cloud);
    if (rc != PCB_OK) {
        char why[320];
        snprintf(why, sizeof why, "%s: %s", pcb_strerror(rc), pcb_errmsg());
        snprintf(label, sizeof label, "real %.35s", name);
        pcb_verify_skip(out, label, why);
        return rc == PCB_ENOMEM ? rc : 0;
    }
    int64_t n = cloud.n < REAL_MAX_POINTS ? cloud.n : REAL_MAX_POINTS;
    for (int64_t i = 0; i < n; i++) /* i * cloud.n / n >= i: in place is safe */
        memmove(cloud.xyz + 3 * i, cloud.xyz + 3 * (i * cloud.n / n), 3 * sizeof(float));
    const int64_t m = n < 64 ? n : 64;
    snprintf(label, sizeof label, "real %.18s n=%lld/%lld m=%lld", name, (long long)n,
             (long long)cloud.n, (long long)m);
    int failures = run_case(label, cloud.xyz, 1, n, m, 0, 0, impl, out);
    pcb_cloud_free(&cloud);
    return failures;
}

int pcb_verify_fps(const char *impl, FILE *out)
{
    if (!pcb_verify_impl_known(PCB_FPS, impl))
        return pcb_fail(PCB_EINVAL, "unknown fps implementation '%s' (see pcbench list)", impl);
    static const struct {
        const char *kind, *label;
        int64_t batch, n, m, start;
        float scale;
        int threads;
    } cases[] = {
        {"uniform", "uniform n=2000 m=64", 1, 2000, 64, 0, 1, 0},
        {"sphere", "sphere n=2000 m=64", 1, 2000, 64, 0, 1, 0},
        {"clusters", "clusters n=2000 m=64", 1, 2000, 64, 0, 1, 0},
        {"collinear", "collinear n=2000 m=64", 1, 2000, 64, 0, 1, 0},
        {"lidar", "lidar sweep n=20000 m=64", 1, 20000, 64, 0, 1, 0},
        {"duplicates", "duplicates n=2000 (250 distinct) m=300", 1, 2000, 300, 0, 1, 0},
        {"duplicates", "duplicates m=n n=256 (32 distinct), start 5", 1, 256, 256, 5, 1, 0},
        {"duplicates", "duplicates batch 3 x n=5000 (625 distinct) m=1000", 3, 5000, 1000, 0, 1, 0},
        {"equal", "all-equal n=500 m=20", 1, 500, 20, 0, 1, 0},
        {"offset", "offset 3000 km n=2000 m=64", 1, 2000, 64, 0, 1, 0},
        {"uniform", "wide 1e6 units n=2000 m=64", 1, 2000, 64, 0, 1e6f, 0},
        {"uniform", "near the origin 0.01 units n=2000 m=64", 1, 2000, 64, 0, 0.01f, 0},
        {"uniform", "uniform n=20000 m=128", 1, 20000, 128, 0, 1, 0},
        {"uniform", "n=1 m=1", 1, 1, 1, 0, 1, 0},
        {"uniform", "n=3 m=3", 1, 3, 3, 0, 1, 0},
        {"uniform", "m=n n=300", 1, 300, 300, 0, 1, 0},
        {"uniform", "n<1024 n=1000 m=100", 1, 1000, 100, 0, 1, 0},
        {"uniform", "non-power-of-two n=1537 m=100", 1, 1537, 100, 0, 1, 0},
        {"uniform", "batch 4 x n=1000 m=32", 4, 1000, 32, 0, 1, 0},
        /* a batch no larger cluster holds at once: 2 blocks a cloud on a GPU */
        {"uniform", "batch 32 x n=13000 m=16", 32, 13000, 16, 0, 1, 0},
        /* runs beyond shared memory: in global memory on a GPU */
        {"uniform", "n=200000 m=16", 1, 200000, 16, 0, 1, 0},
        {"uniform", "batch 16 x n=60000 m=16", 16, 60000, 16, 0, 1, 0},
        {"clusters", "start=1234 n=2000 m=64", 1, 2000, 64, 1234, 1, 0},
        {"sphere", "batch 3 start=17 n=700 m=50", 3, 700, 50, 17, 1, 0},
        {"clusters", "3 threads a cloud n=3001 m=100", 1, 3001, 100, 0, 1, 3},
        {"uniform", "batch 3 x 5 threads n=999 m=40", 3, 999, 40, 2, 1, 5},
    };
    pcb_verify_header(out, PCB_FPS);
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = generated(cases[i].kind, cases[i].batch, cases[i].n, cases[i].m,
                           cases[i].start, cases[i].scale, cases[i].threads, cases[i].label,
                           impl, out);
        if (rc < 0)
            return rc;
        failures += rc;
    }
    int rc = lattice(12, 100, impl, out);
    if (rc < 0 || (failures += rc, rc = pcb_verify_real(REAL_MAX_FILES, real_cloud, impl, out)) < 0)
        return rc;
    failures += rc;
    /* Peers' published defects, on our implementations: PyTorch3D repeats
     * index 0 once K reaches the point count on symmetric shapes (the last
     * samples, all at one distance, must still be new points) */
    if ((rc = lattice(8, 512, impl, out)) < 0)
        return rc;
    failures += rc;
    if (!pcb_verify_large())
        return failures;
    /* ...and returns zeros on multi-million-point clouds */
    if ((rc = generated("uniform", 1, 3000000, 256, 0, 1, 0, "uniform n=3,000,000 m=256 (large)",
                        impl, out)) < 0)
        return rc;
    return failures + rc;
}
