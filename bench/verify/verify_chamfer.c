/* verify_chamfer.c - the chamfer verification matrix: NN's pairs (ties,
 * duplicates, offsets, sizes that differ, single points) and the training
 * batches chamfer is a loss for. Each answer is both directions' nearest
 * points and every pair's value (chamfer_validate.c). */
#include "verify.h"

int pcb_verify_chamfer(const char *impl, FILE *out)
{
    if (!pcb_verify_impl_known(PCB_CHAMFER, impl))
        return pcb_fail(PCB_EINVAL, "unknown chamfer implementation '%s'", impl);
    pcb_verify_header(out, PCB_CHAMFER);
    static const struct {
        const char *a, *b;
        int64_t n, nq, batch;
        int same_seed;
    } cases[] = {
        {"uniform", "uniform", 2000, 3000, 1, 0}, /* sizes differ */
        {"sphere", "clusters", 2000, 1500, 1, 0},
        {"duplicates", "duplicates", 2000, 2000, 1, 1}, /* A = B: every distance 0 */
        {"equal", "uniform", 1000, 500, 1, 0},    /* every point of A ties */
        {"collinear", "collinear", 2000, 2000, 1, 0},
        {"offset", "offset", 2000, 2000, 1, 0},   /* 3,000 km from the origin */
        {"uniform", "uniform", 1, 500, 1, 0},     /* one point */
        {"uniform", "uniform", 1, 1, 1, 0},
        {"sphere", "sphere", 1024, 1024, 32, 0},  /* training batches */
        {"uniform", "sphere", 2048, 1024, 8, 0},
        {"offset", "offset", 1500, 1000, 3, 0},
    };
    int failures = 0, rc;
    if ((rc = pcb_verify_lidar_pair(PCB_CHAMFER, 30000, impl, out)) < 0)
        return rc;
    failures += rc;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rc = pcb_verify_generated_pair(PCB_CHAMFER, cases[i].a, cases[i].b, cases[i].n,
                                       cases[i].nq, cases[i].batch, cases[i].same_seed, impl, out);
        if (rc < 0)
            return rc;
        failures += rc;
    }
    if (!pcb_verify_large())
        return failures;
    if ((rc = pcb_verify_lidar_pair(PCB_CHAMFER, 120000, impl, out)) < 0)
        return rc;
    return failures + rc;
}
