/* chamfer_cuda_tiles.cu - chamfer for batches of small clouds: both
 * directions of every pair in one launch of nn_tiles.cuh's brute force,
 * then the values in a second; and the gradient of the value
 * (pcb_chamfer_backward), which a training loop calls next.
 *
 * A device run reads the caller's clouds in place and writes the caller's
 * outputs: two launches, nothing allocated. Host runs upload both clouds
 * in prepare. */
#include "impl/nn/nn_tiles.cuh"
#include "chamfer_cuda.cuh"

extern "C" const pcb_impl pcb_chamfer_cuda_tiles;

/* Both directions: A's points against B, then B's against A (indices into
 * out's index, or its index64 where given). */
static tiles_dirs both_dirs(const pcb_task *t, const float *a, const float *b,
                            const pcb_result *out)
{
    const int64_t first = t->batch * t->n;
    tiles_dirs d = {};
    d.dir[0] = tiles_direction(b, a, t->nq, t->n, out->index, out->dist2, t->lengths_b,
                               t->lengths_a);
    d.dir[1] = tiles_direction(a, b, t->n, t->nq, out->index ? out->index + first : NULL,
                               out->dist2 + first, t->lengths_a, t->lengths_b);
    d.dir[0].idx64 = out->index64;
    d.dir[1].idx64 = out->index64 ? out->index64 + first : NULL;
    return d;
}

/* The whole answer on st: nothing allocated (no scratch). */
static int ct_queue(void *scratch, const pcb_task *t, pcb_result *out, cudaStream_t st)
{
    (void)scratch;
    if (!out->dist2)
        return pcb_fail(PCB_EINVAL, "chamfer cuda_tiles: the answer needs its dist2 array");
    tiles_dirs d = both_dirs(t, t->a, t->b, out);
    int rc = tiles_launch(&d, 2, t->batch, (float)PCB_NN_MAX_COORD, out->finite, st);
    if (rc == PCB_OK && out->value)
        rc = chamfer_value_launch(t, out->dist2, out->value, st);
    return rc;
}

static int ct_prepare(const pcb_task *t, void **state)
{
    return chamfer_cuda_prepare(t, state, "cuda_tiles", ct_queue, NULL);
}

static int ct_counters(void *state, pcb_counters *c)
{
    const pcb_task *t = &((chamfer_cuda_state *)state)->task;
    c->distance_evals = 2 * t->batch * t->n * t->nq;
    return PCB_OK;
}

/* A device-resident run: two launches on the caller's arrays and stream. */
static int ct_run_device(const pcb_task *t, pcb_result *out)
{
    return ct_queue(NULL, t, out, (cudaStream_t)t->stream);
}

/* ---- the gradient ---------------------------------------------------------- */
/* Thread i of the batch's (n + nq) points: the point x's nearest y moves
 * the value by 2 g (x - y) / count for x and minus that for y, g the
 * pair's incoming gradient (count: n for A's points, nq for B's). */
__global__ void chamfer_grad_kernel(const float *a, const float *b, int64_t batch, int32_t n,
                                    int32_t nq, const int32_t *idx, const float *grad,
                                    float *grad_a, float *grad_b)
{
    const int64_t first = batch * n, total = first + batch * nq;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        const bool fwd = i < first;
        const int64_t k = fwd ? i : i - first, pair = fwd ? k / n : k / nq;
        const int32_t count = fwd ? n : nq, other = fwd ? nq : n;
        const int32_t j = idx[i];
        const float *x = (fwd ? a : b) + 3 * k, *y = (fwd ? b : a) + 3 * (pair * other + j);
        float *gx = (fwd ? grad_a : grad_b) + 3 * k;
        float *gy = (fwd ? grad_b : grad_a) + 3 * (pair * other + j);
        const float w = 2.0f * grad[pair] / (float)count;
        for (int c = 0; c < 3; c++) {
            const float g = w * (x[c] - y[c]);
            atomicAdd(gx + c, g);
            atomicAdd(gy + c, -g);
        }
    }
}

extern "C" int pcb_chamfer_backward_cuda(const pcb_task *t, const int32_t *idx, const float *grad,
                                         float *grad_a, float *grad_b)
{
    const int64_t total = t->batch * (t->n + t->nq), blocks = (total + 255) / 256;
    chamfer_grad_kernel<<<(unsigned)(blocks < 8192 ? blocks : 8192), 256, 0,
                          (cudaStream_t)t->stream>>>(t->a, t->b, t->batch, (int32_t)t->n,
                                                     (int32_t)t->nq, idx, grad, grad_a, grad_b);
    PCB_CUDA_LAUNCHED("chamfer_grad_kernel");
    return PCB_OK;
}

extern "C" const pcb_impl pcb_chamfer_cuda_tiles = {
    .name = "cuda_tiles",
    .problem = PCB_CHAMFER,
    .device = PCB_CUDA,
    .promise = {.exact = 1},
    /* chosen up to 1,024 points a cloud: from 2,048 cuda_grid's build pays at
     * batches of 16 and more (impl/nn/README.md); beyond, only by name */
    .limits = {.max_n = 16384, .max_batch = 65535, .best_max_n = 1024},
    .cost = PCB_COST_ALL_PAIRS,
    .summary = "GPU brute force, both directions of every pair in one launch (nn cuda_tiles' "
               "kernel), the values in a second",
    .available = pcb_cuda_available,
    .prepare = ct_prepare,
    .compute = chamfer_cuda_compute,
    .sync = chamfer_cuda_sync,
    .fetch = chamfer_cuda_fetch,
    .release = chamfer_cuda_release,
    .counters = ct_counters,
    .device_ms = chamfer_cuda_device_ms,
    .run_device = ct_run_device,
    .ragged = 1,
    .index64 = 1,
};
