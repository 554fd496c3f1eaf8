/* chamfer_omp.c - chamfer by nn omp, one search each way. */
#include "chamfer.h"

extern const pcb_impl pcb_nn_omp;

static int omp_prepare(const pcb_task *t, void **state)
{
    return pcb_chamfer_by_nn_prepare(&pcb_nn_omp, t, state);
}

const pcb_impl pcb_chamfer_omp = {
    .name = "omp",
    .problem = PCB_CHAMFER,
    .device = PCB_CPU,
    .promise = {.exact = 1},
    .cost = PCB_COST_ALL_PAIRS,
    .reference = 0,
    .summary = "OpenMP brute force both ways (nn omp twice)",
    .prepare = omp_prepare,
    .compute = pcb_chamfer_by_nn_compute,
    .fetch = pcb_chamfer_by_nn_fetch,
    .release = pcb_chamfer_by_nn_release,
    .counters = pcb_chamfer_by_nn_counters,
};
