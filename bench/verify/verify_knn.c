/* verify_knn.c - the kNN verification matrix: where libraries disagree.
 * Ties (integer lattices, lidar voxelised to 5 cm, all-equal and duplicated
 * points), k > n, k = 64, clouds far from the origin and queries farther
 * than 1e5 units from every point, the lidar pair of the NN slides, and the
 * training shapes (self-kNN batches, three_nn's 4,096 queries into 1,024). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify.h"

typedef enum { PLAIN, SELF, VOXEL, FAR } shape;

/* batch clouds of kind: queries of their own (seed + 1), the reference
 * itself (SELF), both rounded to 5 cm (VOXEL, self), or moved 3e5 units
 * along x (FAR). */
static int run_case(const char *kind, int64_t n, int64_t nq, int64_t batch, int64_t k, shape s,
                    const char *impl, FILE *out)
{
    static const char *const shape_name[] = {"", " self", " voxel 5cm self", " queries 3e5 away"};
    pcb_verify_case c = {.task = {.problem = PCB_KNN, .batch = batch, .n = n,
                                  .nq = s == SELF || s == VOXEL ? n : nq, .k = k}};
    char in_batch[32] = "";
    if (batch > 1)
        snprintf(in_batch, sizeof in_batch, " batch %lld", (long long)batch);
    snprintf(c.label, sizeof c.label, "%s %lldx%lld%s k=%lld%s", kind, (long long)n,
             (long long)c.task.nq, in_batch, (long long)k, shape_name[s]);
    float *a = malloc((size_t)(batch * n * 3) * sizeof *a);
    float *b = s == SELF || s == VOXEL ? a : malloc((size_t)(batch * nq * 3) * sizeof *b);
    int rc = a && b ? PCB_OK : pcb_fail(PCB_ENOMEM, "verify knn: out of memory");
    for (int64_t i = 0; rc == PCB_OK && i < batch; i++) {
        pcb_cloud one;
        if (strcmp(kind, "lidar") == 0)
            rc = pcb_gen_lidar(n, 7 + (uint64_t)i, 0.0, 0.0, 0.0, &one);
        else
            rc = pcb_generate(kind, n, 300 + 2 * (uint64_t)i, &one);
        if (rc != PCB_OK)
            break;
        memcpy(a + i * n * 3, one.xyz, (size_t)n * 3 * sizeof *a);
        pcb_cloud_free(&one);
        if (b == a)
            continue;
        if (strcmp(kind, "lidar") == 0)
            rc = pcb_gen_lidar(nq, 7 + (uint64_t)i, 0.8, 0.05, 0.01, &one);
        else
            rc = pcb_generate(kind, nq, 301 + 2 * (uint64_t)i, &one);
        if (rc != PCB_OK)
            break;
        memcpy(b + i * nq * 3, one.xyz, (size_t)nq * 3 * sizeof *b);
        pcb_cloud_free(&one);
    }
    for (int64_t i = 0; rc == PCB_OK && s == VOXEL && i < batch * n * 3; i++)
        a[i] = (float)(floor((double)a[i] / 0.05 + 0.5) * 0.05);
    for (int64_t i = 0; rc == PCB_OK && s == FAR && i < batch * nq; i++)
        b[3 * i] += 3e5f;
    if (rc == PCB_EUNAVAIL || rc == PCB_EUNSUPPORTED) {
        pcb_verify_skip(out, c.label, pcb_errmsg());
        rc = PCB_OK;
    } else if (rc == PCB_OK) {
        c.task.a = a, c.task.b = b;
        rc = pcb_verify_case_run(&c, impl, out);
    }
    if (b != a)
        free(b);
    free(a);
    return rc;
}

int pcb_verify_knn(const char *impl, FILE *out)
{
    if (!pcb_verify_impl_known(PCB_KNN, impl))
        return pcb_fail(PCB_EINVAL, "unknown knn implementation '%s'", impl);
    pcb_verify_header(out, PCB_KNN);
    static const struct {
        const char *kind;
        int64_t n, nq, batch, k;
        shape s;
    } cases[] = {
        {"lidar", 30000, 30000, 1, 16, PLAIN},    /* a sweep against the next */
        {"lidar", 30000, 0, 1, 16, VOXEL},        /* ties at the k-th neighbour */
        {"lattice", 4096, 0, 1, 20, SELF},        /* 6 + 12 at 1 and sqrt 2, then ties at sqrt 3 */
        {"lattice", 4096, 0, 1, 64, SELF},
        {"lattice", 1000, 500, 2, 7, PLAIN},
        {"duplicates", 2000, 0, 1, 16, SELF},     /* 8 copies of each point */
        {"equal", 500, 0, 1, 8, SELF},            /* every point ties */
        {"uniform", 2000, 3000, 1, 8, PLAIN},
        {"uniform", 2000, 1000, 1, 16, FAR},      /* farther than 1e5 from every point */
        {"offset", 2000, 2000, 1, 16, PLAIN},     /* 3,000 km from the origin */
        {"uniform", 5, 100, 3, 8, PLAIN},         /* k > n: padding */
        {"uniform", 1, 10, 1, 64, PLAIN},
        {"sphere", 2048, 0, 4, 64, SELF},         /* k = 64 */
        {"sphere", 1024, 0, 32, 16, SELF},        /* a training batch, self-kNN */
        {"uniform", 1024, 4096, 8, 3, PLAIN},     /* three_nn: 4,096 queries into 1,024 */
        {"clusters", 3000, 0, 2, 32, SELF},
    };
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = run_case(cases[i].kind, cases[i].n, cases[i].nq, cases[i].batch, cases[i].k,
                          cases[i].s, impl, out);
        if (rc < 0)
            return rc;
        failures += rc;
    }
    if (!pcb_verify_large())
        return failures;
    int rc = run_case("lidar", 120000, 120000, 1, 16, PLAIN, impl, out);
    return rc < 0 ? rc : failures + rc;
}
