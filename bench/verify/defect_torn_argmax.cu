/* defect_torn_argmax.cu - the planted defect torn_argmax (defects.c): the
 * classic FPS kernel of impl/fps/fps_cuda_unrolled.cu with its argmax tree
 * replaced by an unguarded shared compare-and-store. Part of the tool, never
 * of the library or its registry. */
#include "fps/cuda_unrolled.cuh"

static int torn_prepare(const pcb_task *t, void **state)
{
    return prepare_kind(t, state, true);
}

extern "C" const pcb_impl pcb_defect_fps_torn_argmax = {
    .name = "torn_argmax",
    .problem = PCB_FPS,
    .device = PCB_CUDA,
    .promise = {.exact = 1, .max_gap = 0, .canonical = 0, .known_defect = NULL},
    .limits = {.max_n = INT32_MAX / 3, .max_m = 0, .max_batch = INT32_MAX},
    .cost = PCB_COST_SAMPLES,
    .reference = 0,
    .gap_option = 0,
    .summary = "cuda_unrolled, argmax by an unguarded shared compare-and-store",
    .available = pcb_cuda_available,
    .prepare = torn_prepare,
    .compute = unrolled_compute,
    .sync = unrolled_sync,
    .fetch = unrolled_fetch,
    .release = unrolled_release,
    .counters = unrolled_counters,
    .device_ms = unrolled_device_ms,
    .run_device = NULL, /* host arrays only */
    .device_index = NULL,
};
