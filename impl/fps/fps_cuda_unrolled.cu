/* fps_cuda_unrolled.cu - the classic FPS kernel (PointNet++ and its copies):
 * one block per cloud, the block as large a power of two as the cloud allows
 * (at most 1024), a strided loop that updates each point's running minimum
 * distance and keeps the thread's farthest point, then a shared-memory
 * max/argmax tree reduction unrolled at compile time for the block size,
 * with a barrier at every level. One launch samples the whole batch.
 *
 * Its own tie-breaking: a thread keeps the first of equal points it visits
 * (k = tid, tid + block, ...), the tree keeps the lower slot, so ties do not
 * always go to the lowest index; every choice among ties is still correct.
 * Like the original it starts the running minima at 1e10, which would cap
 * larger squared distances, so prepare refuses clouds whose bounding-box
 * diagonal exceeds 1e5 coordinate units (PCB_EUNSUPPORTED). Its per-thread
 * start (best = -1, besti = 0) is harmless: with block <= n every thread
 * owns at least one point. Unlike the original, the reduction buffers
 * alternate between steps, which closes the race between reading one step's
 * winner and writing the next step's candidates (no extra barrier). Chosen
 * points stay candidates at distance 0, as in the original, so once every
 * remaining point duplicates a chosen one it may take a chosen one again:
 * the field's behaviour (PyTorch3D #1486), kept and reported by the judge as
 * this kernel's known defect. */
#include "cuda_unrolled.cuh"

static int unrolled_prepare(const pcb_task *t, void **state)
{
    return prepare_kind(t, state, false);
}

extern "C" const pcb_impl pcb_fps_cuda_unrolled = {
    PCB_UNROLLED_ENTRY("cuda_unrolled",
                       "classic kernel: a block per cloud, unrolled shared-memory argmax tree; "
                       "refuses clouds wider than 1e5 units (1e10 distance init)",
                       unrolled_prepare)};
