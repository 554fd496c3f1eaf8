/* verify_ball.c - the ball-query verification matrix, both selections of
 * every case: radii exactly on lattice distances (boundary ties
 * everywhere), lidar voxelised to 5 cm with the radius on the voxel grid,
 * empty balls, k larger than any ball, duplicated and all-equal points,
 * clouds 3,000 km from the origin, PointNet++'s training shapes and the
 * lidar sweep of the NN slides. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify.h"

typedef enum { SUBSET, OTHER, VOXEL } shape;

/* batch clouds of kind; the centres are their first nq points (SUBSET, as
 * FPS output is a subset of the cloud), a cloud of their own (OTHER,
 * seed + 1), or the first nq of the cloud rounded to 5 cm (VOXEL). */
static int run_case(const char *kind, int64_t n, int64_t nq, int64_t batch, int64_t k,
                    double radius, shape s, int select, const char *impl, FILE *out)
{
    static const char *const shape_name[] = {"", " other centres", " voxel 5cm"};
    pcb_verify_case c = {.task = {.problem = PCB_BALL, .batch = batch, .n = n, .nq = nq, .k = k,
                                  .radius = radius, .select = select}};
    char in_batch[32] = "";
    if (batch > 1)
        snprintf(in_batch, sizeof in_batch, " batch %lld", (long long)batch);
    snprintf(c.label, sizeof c.label, "%s %lldx%lld%s r=%g k=%lld %s%s", kind, (long long)n,
             (long long)nq, in_batch, radius, (long long)k, pcb_ball_select_name(select),
             shape_name[s]);
    float *a = malloc((size_t)(batch * n * 3) * sizeof *a);
    float *b = malloc((size_t)(batch * nq * 3) * sizeof *b);
    int rc = a && b ? PCB_OK : pcb_fail(PCB_ENOMEM, "verify ball: out of memory");
    for (int64_t i = 0; rc == PCB_OK && i < batch; i++) {
        pcb_cloud one;
        if (strcmp(kind, "lidar") == 0)
            rc = pcb_gen_lidar(n, 7 + (uint64_t)i, 0.0, 0.0, 0.0, &one);
        else
            rc = pcb_generate(kind, n, 500 + 2 * (uint64_t)i, &one);
        if (rc != PCB_OK)
            break;
        memcpy(a + i * n * 3, one.xyz, (size_t)n * 3 * sizeof *a);
        pcb_cloud_free(&one);
        if (s != OTHER) {
            memcpy(b + i * nq * 3, a + i * n * 3, (size_t)nq * 3 * sizeof *b);
            continue;
        }
        if ((rc = pcb_generate(kind, nq, 501 + 2 * (uint64_t)i, &one)) != PCB_OK)
            break;
        memcpy(b + i * nq * 3, one.xyz, (size_t)nq * 3 * sizeof *b);
        pcb_cloud_free(&one);
    }
    for (int64_t i = 0; rc == PCB_OK && s == VOXEL && i < batch * n * 3; i++)
        a[i] = (float)(floor((double)a[i] / 0.05 + 0.5) * 0.05);
    for (int64_t i = 0; rc == PCB_OK && s == VOXEL && i < batch; i++)
        memcpy(b + i * nq * 3, a + i * n * 3, (size_t)nq * 3 * sizeof *b);
    if (rc == PCB_EUNAVAIL || rc == PCB_EUNSUPPORTED) {
        pcb_verify_skip(out, c.label, pcb_errmsg());
        rc = PCB_OK;
    } else if (rc == PCB_OK) {
        c.task.a = a, c.task.b = b;
        rc = pcb_verify_case_run(&c, impl, out);
    }
    free(b);
    free(a);
    return rc;
}

int pcb_verify_ball(const char *impl, FILE *out)
{
    if (!pcb_verify_impl_known(PCB_BALL, impl))
        return pcb_fail(PCB_EINVAL, "unknown ball implementation '%s'", impl);
    pcb_verify_header(out, PCB_BALL);
    static const struct {
        const char *kind;
        int64_t n, nq, batch, k;
        double radius;
        shape s;
    } cases[] = {
        {"lattice", 4096, 512, 1, 16, 1.0, SUBSET},      /* the 6 at 1 on the radius */
        {"lattice", 4096, 512, 1, 32, 1.4142135623730951, SUBSET}, /* the 12 at sqrt 2 in the band */
        {"lattice", 4096, 256, 2, 64, 2.0, OTHER},       /* centres off the lattice */
        {"lidar", 30000, 2048, 1, 32, 0.8, SUBSET},
        {"lidar", 30000, 2048, 1, 32, 0.5, VOXEL},       /* r on the 5 cm grid */
        {"uniform", 4096, 1024, 1, 32, 0.1, SUBSET},
        {"uniform", 2048, 512, 1, 128, 0.8, SUBSET},     /* balls far over k = 128 */
        {"clusters", 3000, 500, 2, 16, 1e-3, OTHER},     /* empty balls */
        {"sphere", 1024, 256, 2, 128, 0.05, SUBSET},     /* k larger than any ball */
        {"duplicates", 2000, 300, 1, 16, 0.05, SUBSET},  /* 8 copies of each point */
        {"equal", 500, 50, 1, 8, 0.1, SUBSET},           /* every point at 0 */
        {"offset", 2000, 500, 1, 32, 10.0, SUBSET},      /* 3,000 km from the origin */
        {"uniform", 1024, 512, 32, 32, 0.2, SUBSET},     /* PointNet++ SSG's first grouping */
        {"uniform", 5, 10, 3, 8, 2.0, OTHER},            /* k > n */
    };
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int select = PCB_BALL_FIRST; select <= PCB_BALL_NEAREST; select++) {
            int rc = run_case(cases[i].kind, cases[i].n, cases[i].nq, cases[i].batch, cases[i].k,
                              cases[i].radius, cases[i].s, select, impl, out);
            if (rc < 0)
                return rc;
            failures += rc;
        }
    if (!pcb_verify_large())
        return failures;
    for (int select = PCB_BALL_FIRST; select <= PCB_BALL_NEAREST; select++) {
        int rc = run_case("lidar", 120000, 4096, 1, 32, 0.8, SUBSET, select, impl, out);
        if (rc < 0)
            return rc;
        failures += rc;
    }
    return failures;
}
