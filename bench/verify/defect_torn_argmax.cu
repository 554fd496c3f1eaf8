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
    PCB_UNROLLED_ENTRY("torn_argmax",
                       "cuda_unrolled, argmax by an unguarded shared compare-and-store",
                       torn_prepare)};
