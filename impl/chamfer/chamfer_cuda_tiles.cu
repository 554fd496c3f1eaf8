/* chamfer_cuda_tiles.cu - chamfer for batches of small clouds: both
 * directions of every pair in one launch of nn_tiles.cuh's brute force,
 * then the values in a second; and the gradient of the value
 * (pcb_chamfer_backward), which a training loop calls next.
 *
 * A device run reads the caller's clouds in place and writes the caller's
 * outputs: two launches, nothing allocated. Host runs upload both clouds
 * in prepare. */
#include <stdlib.h>

#include "../nn/nn.h"
#include "../nn/nn_tiles.cuh"
#include "chamfer_cuda.cuh"

extern "C" const pcb_impl pcb_chamfer_cuda_tiles;

typedef struct {
    pcb_task task;
    pcb_cuda_ctx ctx;
    float *a, *b, *dist2; /* batch*n*3, batch*nq*3, batch*(n+nq) */
    int32_t *idx;         /* batch*(n+nq) */
    double *value;        /* batch */
    void *lengths;        /* a ragged task's lengths (task's point here), or NULL */
} ct_state;

/* Both directions: A's points against B, then B's against A. */
static tiles_dirs both_dirs(const pcb_task *t, const float *a, const float *b, int32_t *idx,
                            float *dist2)
{
    const int64_t first = t->batch * t->n;
    tiles_dirs d = {};
    d.dir[0] = tiles_direction(b, a, t->nq, t->n, idx, dist2, t->lengths_b, t->lengths_a);
    d.dir[1] = tiles_direction(a, b, t->n, t->nq, idx + first, dist2 + first, t->lengths_a,
                               t->lengths_b);
    return d;
}

static int ct_queue(const pcb_task *t, const float *a, const float *b, pcb_result *out,
                    int32_t *finite, cudaStream_t st)
{
    if (!out->dist2)
        return pcb_fail(PCB_EINVAL, "chamfer cuda_tiles: the answer needs its dist2 array");
    tiles_dirs d = both_dirs(t, a, b, out->index, out->dist2);
    int rc = tiles_launch(&d, 2, t->batch, (float)PCB_NN_MAX_COORD, finite, st);
    if (rc == PCB_OK && out->value)
        rc = chamfer_value_launch(t, out->dist2, out->value, st);
    return rc;
}

static void ct_release(void *state)
{
    ct_state *s = (ct_state *)state;
    if (!s)
        return;
    pcb_cuda_ctx_free(&s->ctx); /* waits for queued work first */
    cudaFree(s->a), cudaFree(s->b), cudaFree(s->dist2), cudaFree(s->idx), cudaFree(s->value);
    cudaFree(s->lengths);
    free(s);
}

static int ct_prepare(const pcb_task *t, void **state)
{
    const pcb_task ab = pcb_chamfer_direction(t, 0);
    int rc = pcb_nn_coords_fit(&ab, "cuda_tiles");
    if (rc != PCB_OK)
        return rc;
    ct_state *s = (ct_state *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "chamfer cuda_tiles: out of memory");
    s->task = *t;
    const size_t na = (size_t)(t->batch * t->n), nb = (size_t)(t->batch * t->nq);
    cudaError_t e = cudaSuccess;
    if ((rc = pcb_cuda_ctx_init(&s->ctx)) == PCB_OK &&
        (rc = pcb_cuda_upload_lengths(&s->task, &s->lengths, s->ctx.stream)) == PCB_OK &&
        ((e = cudaMalloc((void **)&s->a, na * 3 * sizeof(float))) != cudaSuccess ||
         (e = cudaMalloc((void **)&s->b, nb * 3 * sizeof(float))) != cudaSuccess ||
         (e = cudaMalloc((void **)&s->dist2, (na + nb) * sizeof(float))) != cudaSuccess ||
         (e = cudaMalloc((void **)&s->idx, (na + nb) * sizeof(int32_t))) != cudaSuccess ||
         (e = cudaMalloc((void **)&s->value, (size_t)t->batch * sizeof(double))) != cudaSuccess ||
         (e = cudaMemcpyAsync(s->a, t->a, na * 3 * sizeof(float), cudaMemcpyHostToDevice,
                              s->ctx.stream)) != cudaSuccess ||
         (e = cudaMemcpyAsync(s->b, t->b, nb * 3 * sizeof(float), cudaMemcpyHostToDevice,
                              s->ctx.stream)) != cudaSuccess))
        rc = pcb_cuda_fail(e, "chamfer cuda_tiles: prepare", __FILE__, __LINE__);
    if (rc == PCB_OK)
        rc = pcb_cuda_sync(&s->ctx); /* the uploads read the caller's arrays */
    if (rc != PCB_OK) {
        ct_release(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static int ct_compute(void *state)
{
    ct_state *s = (ct_state *)state;
    int rc = pcb_cuda_begin(&s->ctx);
    if (rc != PCB_OK)
        return rc;
    pcb_result r = {};
    r.index = s->idx, r.dist2 = s->dist2, r.value = s->value;
    if ((rc = ct_queue(&s->task, s->a, s->b, &r, NULL, s->ctx.stream)) != PCB_OK)
        return rc;
    return pcb_cuda_end(&s->ctx);
}

static int ct_sync(void *state)
{
    return pcb_cuda_sync(&((ct_state *)state)->ctx);
}

static int ct_fetch(void *state, pcb_result *out)
{
    ct_state *s = (ct_state *)state;
    const pcb_task *t = &s->task;
    const size_t count = (size_t)pcb_answer_count(t);
    if (!out->dist2)
        return pcb_fail(PCB_EINVAL, "chamfer cuda_tiles: the answer needs its dist2 array");
    cudaStream_t st = s->ctx.stream;
    PCB_CUDA_TRY(cudaMemcpyAsync(out->index, s->idx, count * sizeof(int32_t),
                                 cudaMemcpyDeviceToHost, st));
    PCB_CUDA_TRY(cudaMemcpyAsync(out->dist2, s->dist2, count * sizeof(float),
                                 cudaMemcpyDeviceToHost, st));
    if (out->value)
        PCB_CUDA_TRY(cudaMemcpyAsync(out->value, s->value, (size_t)t->batch * sizeof(double),
                                     cudaMemcpyDeviceToHost, st));
    return pcb_cuda_sync(&s->ctx);
}

static int ct_counters(void *state, pcb_counters *c)
{
    const pcb_task *t = &((ct_state *)state)->task;
    c->distance_evals = 2 * t->batch * t->n * t->nq;
    return PCB_OK;
}

static int ct_device_ms(void *state, double *ms)
{
    return pcb_cuda_elapsed_ms(&((ct_state *)state)->ctx, ms);
}

/* A device-resident run: two launches on the caller's arrays and stream. */
static int ct_run_device(const pcb_task *t, pcb_result *out)
{
    return ct_queue(t, t->a, t->b, out, out->finite, (cudaStream_t)t->stream);
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
    .promise = {.exact = 1, .max_gap = 0, .canonical = 0, .known_defect = NULL},
    /* a call, cuda_bvh's build included, is slower up to 16,384 points a cloud at
     * every batch measured (H100, impl/nn/README.md); beyond, its index wins */
    .limits = {.max_n = 16384, .max_m = 0, .max_batch = 65535, .max_k = 0},
    .cost = PCB_COST_ALL_PAIRS,
    .reference = 0,
    .gap_option = 0,
    .summary = "GPU brute force, both directions of every pair in one launch (nn cuda_tiles' "
               "kernel), the values in a second",
    .available = pcb_cuda_available,
    .prepare = ct_prepare,
    .compute = ct_compute,
    .sync = ct_sync,
    .fetch = ct_fetch,
    .release = ct_release,
    .counters = ct_counters,
    .device_ms = ct_device_ms,
    .run_device = ct_run_device,
    .device_index = NULL,
    .ragged = 1,
    .warm_start = 0,
};
