/* grid_problem.c - grid sampling's face in the library: its arguments (a
 * voxel size an axis, an origin, a selection), its answer (a row a voxel
 * and the inverse map, counts), its judge, a sample, and pcb_grid. */
#include <math.h>

#include "grid.h"
#include "impl/problem.h"

int pcb_grid_check_frame(const pcb_task *t, const char *problem)
{
    int rc = pcb_check_cloud("cloud", t->a, t->batch, t->n, t->memory, t->lengths_a);
    if (rc != PCB_OK)
        return rc;
    for (int k = 0; k < 3; k++) {
        if (!(t->cell[k] > 0 && isfinite(t->cell[k])))
            return pcb_fail(PCB_EINVAL, "%s: cell %c %g: need a finite size > 0", problem,
                            "xyz"[k], t->cell[k]);
        if (t->origin_given && !isfinite(t->origin[k]))
            return pcb_fail(PCB_EINVAL, "%s: origin %c %g: need a finite number", problem,
                            "xyz"[k], t->origin[k]);
    }
    if (t->origin_given != 0 && t->origin_given != 1)
        return pcb_fail(PCB_EINVAL, "%s: origin_given %d: need 0 or 1", problem,
                        (int)t->origin_given);
    return PCB_OK;
}

static int check(const pcb_task *t)
{
    int rc = pcb_grid_check_frame(t, "grid");
    if (rc != PCB_OK)
        return rc;
    if (t->select < PCB_BALL_FIRST || t->select > PCB_GRID_MEAN)
        return pcb_fail(PCB_EINVAL, "grid: unknown selection %d (first %d, nearest %d, random "
                        "%d, mean %d)", (int)t->select, PCB_BALL_FIRST, PCB_BALL_NEAREST,
                        PCB_GRID_RANDOM, PCB_GRID_MEAN);
    return PCB_OK;
}

static int means(const pcb_task *t)
{
    return t->select == PCB_GRID_MEAN;
}

/* voxels of 0.15 (a few points each in the tests' unit clouds), the nearest */
static void sample(pcb_task *t)
{
    t->cell[0] = t->cell[1] = t->cell[2] = 0.15;
    t->select = PCB_BALL_NEAREST;
}

const pcb_problem_face pcb_grid_problem = {
    .check = check,
    .validate = pcb_grid_validate,
    .groups = 2,
    .rows = {PCB_ROWS_A, PCB_ROWS_A},
    .counts = 1,
    .means = means,
    .sample = sample,
};

int pcb_grid(const float *xyz, int64_t batch, int64_t n, const double cell[3],
             const double *origin, int select, int32_t *index, int32_t *count)
{
    pcb_task t = {.problem = PCB_GRID, .batch = batch, .n = n, .a = xyz, .select = select,
                  .origin_given = origin != NULL};
    for (int k = 0; k < 3; k++) {
        t.cell[k] = cell ? cell[k] : 0;
        t.origin[k] = origin ? origin[k] : 0;
    }
    pcb_result r = {.index = index, .count = count};
    return pcb_run_best(&t, &r);
}
