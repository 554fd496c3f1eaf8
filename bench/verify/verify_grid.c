/* verify_grid.c - the grid-sampling verification matrix, the four
 * selections (first, nearest, random, mean) of every case: points on voxel
 * boundaries everywhere (a lattice on the grid), a lidar sweep at 10 and 5 cm (from its minimum and from an origin
 * given), a sweep snapped to 5 cm (every point on a boundary), duplicates,
 * every point in one voxel, every point its own voxel,
 * clouds 3,000 km from the origin (UTM-like), a batch, and a 1M-point sweep
 * (--large). */
#include <stdlib.h>
#include <string.h>

#include "verify.h"

/* snap > 0: every coordinate rounded to a multiple of it (points on the
 * boundaries of a grid of that size, as a voxelized scan's are) */
static int run_case(const char *kind, int64_t n, int64_t batch, double cell, const double *origin,
                    double snap, int select, const char *impl, FILE *out)
{
    pcb_verify_case c = {.task = {.problem = PCB_GRID, .batch = batch, .n = n, .select = select,
                                  .origin_given = origin != NULL, .seed = 0x5eed + (uint64_t)n}};
    for (int k = 0; k < 3; k++) {
        c.task.cell[k] = cell;
        c.task.origin[k] = origin ? origin[k] : 0;
    }
    char in_batch[32] = "";
    if (batch > 1)
        snprintf(in_batch, sizeof in_batch, " batch %lld", (long long)batch);
    char snapped[32] = "";
    if (snap > 0)
        snprintf(snapped, sizeof snapped, " snapped %g", snap);
    snprintf(c.label, sizeof c.label, "%s %lld%s%s cell %g %s%s", kind, (long long)n, in_batch,
             snapped, cell, pcb_ball_select_name(select), origin ? " origin given" : "");
    float *a = malloc((size_t)(batch * n * 3) * sizeof *a);
    int rc = a ? pcb_gen_batch(kind, n, batch, strcmp(kind, "lidar") ? 700 : 7, snap, a)
               : pcb_fail(PCB_ENOMEM, "verify grid: out of memory");
    if (rc == PCB_OK) {
        c.task.a = a;
        rc = pcb_verify_case_run(&c, impl, out);
    }
    free(a);
    return rc;
}

int pcb_verify_grid(const char *impl, FILE *out)
{
    if (!pcb_verify_impl_known(PCB_GRID, impl))
        return pcb_fail(PCB_EINVAL, "unknown grid implementation '%s'", impl);
    pcb_verify_header(out, PCB_GRID);
    static const double lidar_origin[3] = {-3.7, 2.2, 0.05};
    static const struct {
        const char *kind;
        int64_t n, batch;
        double cell;
        const double *origin;
        double snap;
    } cases[] = {
        {"lattice", 4096, 1, 1.0, NULL, 0},       /* every point on a voxel corner */
        {"lattice", 4096, 1, 0.5, NULL, 0},       /* on corners and faces */
        {"lidar", 30000, 1, 0.1, NULL, 0},
        {"lidar", 30000, 1, 0.05, lidar_origin, 0},
        {"uniform", 20000, 1, 0.05, NULL, 0},
        {"uniform", 1000, 1, 10.0, NULL, 0},      /* one voxel */
        {"uniform", 1000, 1, 1e-5, NULL, 0},      /* a voxel a point */
        {"duplicates", 2000, 1, 0.01, NULL, 0},   /* 8 copies of each point */
        {"equal", 500, 1, 0.1, NULL, 0},          /* every point at 0 */
        {"offset", 2000, 1, 1.0, NULL, 0},        /* 3,000 km from the origin */
        {"clusters", 3000, 4, 0.02, NULL, 0},     /* a batch */
        {"sphere", 4096, 8, 0.05, NULL, 0},
        {"lidar", 30000, 1, 0.05, NULL, 0.05}, /* every point on a boundary, float32's split */
        {"lidar", 30000, 1, 0.1, lidar_origin, 0.05},
    };
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int select = PCB_BALL_FIRST; select <= PCB_GRID_MEAN; select++) {
            int rc = run_case(cases[i].kind, cases[i].n, cases[i].batch, cases[i].cell,
                              cases[i].origin, cases[i].snap, select, impl, out);
            if (rc < 0)
                return rc;
            failures += rc;
        }
    if (!pcb_verify_large())
        return failures;
    for (int select = PCB_BALL_FIRST; select <= PCB_GRID_MEAN; select++) {
        int rc = run_case("lidar", 1000000, 1, 0.1, NULL, 0, select, impl, out);
        if (rc < 0)
            return rc;
        failures += rc;
    }
    return failures;
}
