/* chamfer_kdtree.c - chamfer by nn kdtree, one search each way. */
#include "chamfer.h"

extern const pcb_impl pcb_nn_kdtree;

static int kdtree_prepare(const pcb_task *t, void **state)
{
    return pcb_chamfer_by_nn_prepare(&pcb_nn_kdtree, t, state);
}

const pcb_impl pcb_chamfer_kdtree = {
    .name = "kdtree",
    .problem = PCB_CHAMFER,
    .device = PCB_CPU,
    .promise = {.exact = 1},
    .cost = PCB_COST_INDEXED,
    .reference = 0,
    .summary = "our k-d tree both ways (nn kdtree twice)",
    .prepare = kdtree_prepare,
    .compute = pcb_chamfer_by_nn_compute,
    .fetch = pcb_chamfer_by_nn_fetch,
    .release = pcb_chamfer_by_nn_release,
    .counters = pcb_chamfer_by_nn_counters,
};
