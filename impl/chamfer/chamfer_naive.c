/* chamfer_naive.c - chamfer by nn naive, one search each way. */
#include "chamfer.h"

extern const pcb_impl pcb_nn_naive;

static int naive_prepare(const pcb_task *t, void **state)
{
    return pcb_chamfer_by_nn_prepare(&pcb_nn_naive, t, state);
}

const pcb_impl pcb_chamfer_naive = {
    .name = "naive",
    .problem = PCB_CHAMFER,
    .device = PCB_CPU,
    .promise = {.exact = 1},
    .cost = PCB_COST_ALL_PAIRS,
    .reference = 1,
    .summary = "serial double loop both ways (nn naive twice)",
    .prepare = naive_prepare,
    .compute = pcb_chamfer_by_nn_compute,
    .fetch = pcb_chamfer_by_nn_fetch,
    .release = pcb_chamfer_by_nn_release,
    .counters = pcb_chamfer_by_nn_counters,
};
