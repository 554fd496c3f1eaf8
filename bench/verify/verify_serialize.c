/* verify_serialize.c - the serialization verification matrix, both curves
 * of every case: points on voxel boundaries everywhere (a lattice), lidar
 * sweeps at 10 and 5 cm (at the least depth, at Pointcept's 16, from an
 * origin given), a sweep snapped to 5 cm (every point on a boundary),
 * duplicates (ties by index), every point in one voxel, every point its
 * own voxel, a sweep at 2 mm (coordinates past 16 bits), clouds 3,000 km
 * from the origin (UTM-like), batches (the cloud's number above the codes,
 * past bit 48 at depth 17), a ragged batch, and a 1M-point sweep
 * (--large). */
#include <stdlib.h>
#include <string.h>

#include "verify.h"

static int run_case(const char *kind, int64_t n, int64_t batch, double cell, const double *origin,
                    double snap, int depth, int ragged, int curve, const char *impl, FILE *out)
{
    pcb_verify_case c = {.task = {.problem = PCB_SERIALIZE, .batch = batch, .n = n,
                                  .curve = curve, .depth = depth, .origin_given = origin != NULL}};
    for (int k = 0; k < 3; k++) {
        c.task.cell[k] = cell;
        c.task.origin[k] = origin ? origin[k] : 0;
    }
    char in_batch[48] = "", snapped[32] = "", at_depth[16] = "";
    if (batch > 1)
        snprintf(in_batch, sizeof in_batch, " batch %lld%s", (long long)batch,
                 ragged ? " ragged" : "");
    if (snap > 0)
        snprintf(snapped, sizeof snapped, " snapped %g", snap);
    if (depth)
        snprintf(at_depth, sizeof at_depth, " depth %d", depth);
    snprintf(c.label, sizeof c.label, "%s %lld%s%s cell %g %s%s%s", kind, (long long)n, in_batch,
             snapped, cell, pcb_curve_name(curve), at_depth, origin ? " origin given" : "");
    float *a = malloc((size_t)(batch * n * 3) * sizeof *a);
    int64_t *lengths = ragged ? malloc((size_t)batch * sizeof *lengths) : NULL;
    int rc = a && (!ragged || lengths) ? PCB_OK : pcb_fail(PCB_ENOMEM, "verify serialize: out of memory");
    if (rc == PCB_OK)
        rc = pcb_gen_batch(kind, n, batch, strcmp(kind, "lidar") ? 700 : 7, snap, a);
    for (int64_t i = 0; lengths && i < batch; i++) /* full, empty, and between */
        lengths[i] = i % 3 == 0 ? n : i % 3 == 1 ? 0 : n / 3 + i;
    if (rc == PCB_OK) {
        c.task.a = a;
        c.task.lengths_a = lengths;
        rc = pcb_verify_case_run(&c, impl, out);
    }
    free(a), free(lengths);
    return rc;
}

int pcb_verify_serialize(const char *impl, FILE *out)
{
    if (!pcb_verify_impl_known(PCB_SERIALIZE, impl))
        return pcb_fail(PCB_EINVAL, "unknown serialize implementation '%s'", impl);
    pcb_verify_header(out, PCB_SERIALIZE);
    static const double below[3] = {-120.5, -130.25, -20};
    static const struct {
        const char *kind;
        int64_t n, batch;
        double cell;
        const double *origin;
        double snap;
        int depth, ragged;
    } cases[] = {
        {"lattice", 4096, 1, 1.0, NULL, 0, 0, 0},     /* every point on a voxel corner */
        {"lattice", 4096, 1, 0.5, NULL, 0, 0, 0},     /* on corners and faces */
        {"lidar", 30000, 1, 0.1, NULL, 0, 0, 0},
        {"lidar", 30000, 1, 0.05, NULL, 0, 16, 0},    /* Pointcept's depth */
        {"lidar", 30000, 1, 0.05, below, 0, 0, 0},
        {"lidar", 30000, 1, 0.002, NULL, 0, 0, 0},    /* past 16 bits an axis */
        {"uniform", 20000, 1, 0.05, NULL, 0, 0, 0},
        {"uniform", 1000, 1, 10.0, NULL, 0, 0, 0},    /* one voxel: ties everywhere */
        {"uniform", 1000, 1, 1e-5, NULL, 0, 0, 0},    /* a voxel a point */
        {"duplicates", 2000, 1, 0.01, NULL, 0, 0, 0}, /* 8 copies of each point */
        {"equal", 500, 1, 0.1, NULL, 0, 0, 0},        /* every point at 0 */
        {"offset", 2000, 1, 1.0, NULL, 0, 0, 0},      /* 3,000 km from the origin */
        {"clusters", 3000, 4, 0.02, NULL, 0, 0, 0},   /* a batch */
        {"clusters", 3000, 2, 1e-5, NULL, 0, 0, 0},   /* depth 17: the clouds past bit 48 */
        {"sphere", 4096, 8, 0.05, NULL, 0, 0, 0},
        {"sphere", 4096, 6, 0.05, NULL, 0, 0, 1},     /* ragged, read whole */
        {"lidar", 30000, 1, 0.05, NULL, 0.05, 0, 0},  /* every point on a boundary */
    };
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int curve = PCB_CURVE_MORTON; curve <= PCB_CURVE_HILBERT; curve++) {
            int rc = run_case(cases[i].kind, cases[i].n, cases[i].batch, cases[i].cell,
                              cases[i].origin, cases[i].snap, cases[i].depth, cases[i].ragged,
                              curve, impl, out);
            if (rc < 0)
                return rc;
            failures += rc;
        }
    if (!pcb_verify_large())
        return failures;
    for (int curve = PCB_CURVE_MORTON; curve <= PCB_CURVE_HILBERT; curve++) {
        int rc = run_case("lidar", 1000000, 1, 0.1, NULL, 0, 0, 0, curve, impl, out);
        if (rc < 0)
            return rc;
        failures += rc;
    }
    return failures;
}
