/* nn_cuda_attempt1.cu - the slides' attempt 1: parallel over the reference
 * cloud, one kernel launch per query.
 *
 * Each launch has one thread per reference point (ceil(n / 256) blocks of
 * 256); a block reduces its (distance, index) pairs in shared memory and
 * its winner joins the query's result with one 64-bit atomicMin on the
 * packed key (distance bits << 32 | index: non-negative floats order like
 * their bit patterns, so the key orders by distance, then index). All
 * batch * nq launches are queued on the state's stream: their overhead is
 * what this attempt measures. A last kernel unpacks the keys. */
#include "nn_cuda.cuh"

enum { A1_BLOCK = 256, UNPACK_BLOCK = 256, UNPACK_GRID_MAX = 4096 };

typedef struct {
    nn_cuda_base base;
    unsigned long long *key; /* batch*nq packed (dist2, index) */
} a1_state;

__global__ void a1_nearest_to_one(const float *ref, unsigned n, const float *q,
                                  unsigned long long *key)
{
    __shared__ float sd[A1_BLOCK];
    __shared__ int si[A1_BLOCK];
    unsigned j = blockIdx.x * A1_BLOCK + threadIdx.x;
    float best = INFINITY;
    int besti = INT_MAX;
    if (j < n)
        nn_consider(ref, j, q[0], q[1], q[2], &best, &besti);
    nn_block_min<A1_BLOCK>(sd, si, best, besti);
    /* A block past the end has nothing (every real distance is finite). */
    if (threadIdx.x == 0 && si[0] != INT_MAX)
        atomicMin(key, (unsigned long long)__float_as_uint(sd[0]) << 32 | (unsigned)si[0]);
}

__global__ void a1_unpack(const unsigned long long *key, long long total, int32_t *idx,
                          float *dist2)
{
    for (long long g = blockIdx.x * (long long)blockDim.x + threadIdx.x; g < total;
         g += (long long)gridDim.x * blockDim.x) {
        idx[g] = (int32_t)(key[g] & 0xffffffffu);
        dist2[g] = __uint_as_float((unsigned)(key[g] >> 32));
    }
}

static void a1_release(void *state)
{
    a1_state *s = (a1_state *)state;
    if (!s)
        return;
    nn_cuda_base_free(&s->base);
    cudaFree(s->key);
    free(s);
}

static int a1_prepare(const pcb_task *t, void **state)
{
    a1_state *s = (a1_state *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "nn cuda_attempt1: out of memory");
    int rc = nn_cuda_base_init(&s->base, t, "cuda_attempt1", 1);
    if (rc == PCB_OK) {
        cudaError_t err = cudaMalloc((void **)&s->key, (size_t)(t->batch * t->nq) * sizeof *s->key);
        if (err != cudaSuccess)
            rc = pcb_cuda_fail(err, "cudaMalloc(key)", __FILE__, __LINE__);
    }
    if (rc != PCB_OK) {
        a1_release(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static int a1_compute(void *state)
{
    a1_state *s = (a1_state *)state;
    const pcb_task *t = &s->base.task;
    cudaStream_t stream = s->base.ctx.stream;
    long long total = t->batch * t->nq;
    unsigned blocks = (unsigned)((t->n + A1_BLOCK - 1) / A1_BLOCK);
    int rc = pcb_cuda_begin(&s->base.ctx);
    if (rc != PCB_OK)
        return rc;
    /* All ones: larger than every real key. */
    PCB_CUDA_TRY(cudaMemsetAsync(s->key, 0xff, (size_t)total * sizeof *s->key, stream));
    for (long long g = 0; g < total; g++) {
        const float *ref = s->base.ref + (size_t)(g / t->nq) * (size_t)t->n * 3;
        a1_nearest_to_one<<<blocks, A1_BLOCK, 0, stream>>>(ref, (unsigned)t->n,
                                                           s->base.qry + 3 * g, s->key + g);
        PCB_CUDA_LAUNCHED("a1_nearest_to_one");
    }
    long long grid = (total + UNPACK_BLOCK - 1) / UNPACK_BLOCK;
    if (grid > UNPACK_GRID_MAX)
        grid = UNPACK_GRID_MAX;
    a1_unpack<<<(unsigned)grid, UNPACK_BLOCK, 0, stream>>>(s->key, total, s->base.idx,
                                                           s->base.dist2);
    PCB_CUDA_LAUNCHED("a1_unpack");
    return pcb_cuda_end(&s->base.ctx);
}

extern "C" const pcb_impl pcb_nn_cuda_attempt1 = {
    .name = "cuda_attempt1",
    .problem = PCB_NN,
    .device = PCB_CUDA,
    .promise = {.exact = 1},
    .cost = PCB_COST_ALL_PAIRS,
    .summary = "slides' attempt 1: a launch per query, threads over reference points",
    .available = pcb_cuda_available,
    .prepare = a1_prepare,
    .compute = a1_compute,
    .sync = nn_cuda_sync,
    .fetch = nn_cuda_fetch,
    .release = a1_release,
    .counters = nn_cuda_brute_counters,
    .device_ms = nn_cuda_device_ms,
    .run_device = NULL, /* host arrays only */
};
