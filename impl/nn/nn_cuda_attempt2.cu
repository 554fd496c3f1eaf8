/* nn_cuda_attempt2.cu - the slides' attempt 2: the loop over queries moved
 * inside one kernel.
 *
 * The slide's kernel loops over all N1 queries with its threads over the
 * reference points and a min-reduction per query, launched <<<N1>>>; read
 * literally every block would redo every query. Our reading keeps what the
 * slide changes (one launch, the query loop inside the kernel) and shares
 * the queries out: block b takes queries b, b + G, b + 2G, ... (G = 8
 * blocks per SM); for each one its 256 threads stride over the reference
 * cloud and a shared-memory (distance, index) reduction picks the nearest. */
#include "nn_cuda.cuh"

enum { A2_BLOCK = 256, A2_BLOCKS_PER_SM = 8 };

typedef struct {
    nn_cuda_base base;
    unsigned grid;
} a2_state;

__global__ void a2_nearest_loop(const float *ref, unsigned n, const float *qry, long long nq,
                                long long total, int32_t *idx, float *dist2)
{
    __shared__ float sd[A2_BLOCK];
    __shared__ int si[A2_BLOCK];
    /* g is the same for the whole block, so every barrier below is reached
     * by all its threads. */
    for (long long g = blockIdx.x; g < total; g += gridDim.x) {
        const float *cloud = ref + (size_t)(g / nq) * n * 3, *q = qry + 3 * g;
        float qx = q[0], qy = q[1], qz = q[2], best = INFINITY;
        int besti = INT_MAX;
        for (unsigned j = threadIdx.x; j < n; j += A2_BLOCK)
            nn_consider(cloud, j, qx, qy, qz, &best, &besti);
        nn_block_min<A2_BLOCK>(sd, si, best, besti);
        if (threadIdx.x == 0) {
            idx[g] = si[0];
            dist2[g] = sd[0];
        }
        __syncthreads(); /* sd, si are rewritten for the next query */
    }
}

static void a2_release(void *state)
{
    a2_state *s = (a2_state *)state;
    if (!s)
        return;
    nn_cuda_base_free(&s->base);
    free(s);
}

static int a2_prepare(const pcb_task *t, void **state)
{
    a2_state *s = (a2_state *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "nn cuda_attempt2: out of memory");
    int rc = nn_cuda_base_init(&s->base, t, "cuda_attempt2", 1), device = 0, sms = 0;
    cudaError_t err = cudaSuccess;
    if (rc == PCB_OK && ((err = cudaGetDevice(&device)) != cudaSuccess ||
                         (err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
                                                       device)) != cudaSuccess))
        rc = pcb_cuda_fail(err, "cudaDeviceGetAttribute(multiprocessors)", __FILE__, __LINE__);
    if (rc != PCB_OK) {
        a2_release(s);
        return rc;
    }
    long long total = t->batch * t->nq, grid = (long long)sms * A2_BLOCKS_PER_SM;
    s->grid = (unsigned)(total < grid ? total : grid > 0 ? grid : 1);
    *state = s;
    return PCB_OK;
}

static int a2_compute(void *state)
{
    a2_state *s = (a2_state *)state;
    const pcb_task *t = &s->base.task;
    int rc = pcb_cuda_begin(&s->base.ctx);
    if (rc != PCB_OK)
        return rc;
    a2_nearest_loop<<<s->grid, A2_BLOCK, 0, s->base.ctx.stream>>>(
        s->base.ref, (unsigned)t->n, s->base.qry, t->nq, t->batch * t->nq, s->base.idx,
        s->base.dist2);
    PCB_CUDA_LAUNCHED("a2_nearest_loop");
    return pcb_cuda_end(&s->base.ctx);
}

extern "C" const pcb_impl pcb_nn_cuda_attempt2 = {
    .name = "cuda_attempt2",
    .problem = PCB_NN,
    .device = PCB_CUDA,
    .promise = {.exact = 1},
    .cost = PCB_COST_ALL_PAIRS,
    .summary = "slides' attempt 2: one launch, blocks loop over queries, threads over points",
    .available = pcb_cuda_available,
    .prepare = a2_prepare,
    .compute = a2_compute,
    .sync = nn_cuda_sync,
    .fetch = nn_cuda_fetch,
    .release = a2_release,
    .counters = nn_cuda_brute_counters,
    .device_ms = nn_cuda_device_ms,
    .run_device = NULL, /* host arrays only */
};
