/* chamfer_cuda_bvh.cu - chamfer by nn cuda_bvh, one search each way: for
 * clouds too large for cuda_tiles' brute force. Host runs are the by-NN
 * steps of chamfer_common.c; a device run queues cuda_bvh's device run
 * each way, then the values. */
#include "chamfer_cuda.cuh"

extern "C" const pcb_impl pcb_nn_cuda_bvh;
extern "C" const pcb_impl pcb_chamfer_cuda_bvh;

static int bvh_prepare(const pcb_task *t, void **state)
{
    return pcb_chamfer_by_nn_prepare(&pcb_nn_cuda_bvh, t, state);
}

static int bvh_run_device(const pcb_task *t, pcb_result *out)
{
    if (!out->dist2)
        return pcb_fail(PCB_EINVAL, "chamfer cuda_bvh: the answer needs its dist2 array");
    const int64_t first = t->batch * t->n;
    int rc = PCB_OK;
    for (int k = 0; k < 2 && rc == PCB_OK; k++) {
        const pcb_task dir = pcb_chamfer_direction(t, k);
        pcb_result r = {};
        r.index = out->index + (k ? first : 0);
        r.dist2 = out->dist2 + (k ? first : 0);
        r.finite = out->finite;
        rc = pcb_nn_cuda_bvh.run_device(&dir, &r); /* checked as the chamfer task: same limits */
    }
    if (rc == PCB_OK && out->value)
        rc = chamfer_value_launch(t, out->dist2, out->value, (cudaStream_t)t->stream);
    return rc;
}

extern "C" const pcb_impl pcb_chamfer_cuda_bvh = {
    .name = "cuda_bvh",
    .problem = PCB_CHAMFER,
    .device = PCB_CUDA,
    .promise = {.exact = 1},
    .limits = {.max_n = 1 << 30, .max_batch = 65535},
    .cost = PCB_COST_INDEXED,
    .summary = "nn cuda_bvh each way (its index built on the device), values on the device",
    .available = pcb_cuda_available,
    .prepare = bvh_prepare,
    .compute = pcb_chamfer_by_nn_compute,
    .sync = pcb_chamfer_by_nn_sync,
    .fetch = pcb_chamfer_by_nn_fetch,
    .release = pcb_chamfer_by_nn_release,
    .counters = pcb_chamfer_by_nn_counters,
    .device_ms = pcb_chamfer_by_nn_device_ms,
    .run_device = bvh_run_device,
};
