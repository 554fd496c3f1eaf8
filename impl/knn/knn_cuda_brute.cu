/* knn_cuda_brute.cu - the field's classic kNN kernel: one thread a query,
 * every reference point read from global memory, a sorted list of k in a
 * per-thread array (local memory: its index is not known at compile time),
 * an insertion sort on every nearer point. What pointnet2's three_nn,
 * pointops' knn_query and torch_cluster's knn do, without their 1e10
 * starting distance (a row starts as padding, +inf) or an unchecked k:
 * up to KNN_BRUTE_MAX_K (64), else "unsupported". Distances are rounded
 * as naive's and points visited in increasing index: the canonical row. */
#include "knn_cuda.cuh"

enum { BRUTE_THREADS = 128, KNN_BRUTE_MAX_K = 64 };

__global__ void __launch_bounds__(BRUTE_THREADS)
    knn_brute_kernel(const float *ref, const float *qry, int32_t n, int32_t nq, int32_t k,
                     int32_t *idx, float *dist2, float limit, int32_t *finite)
{
    const int32_t i = (int32_t)(blockIdx.x * BRUTE_THREADS + threadIdx.x);
    if (i >= nq)
        return;
    const size_t pair = blockIdx.y;
    const float *r = ref + pair * (size_t)n * 3, *q = qry + (pair * (size_t)nq + i) * 3;
    const float qx = tiles_coord(q, limit, finite), qy = tiles_coord(q + 1, limit, finite),
                qz = tiles_coord(q + 2, limit, finite);
    float d[KNN_BRUTE_MAX_K];
    int32_t id[KNN_BRUTE_MAX_K];
    const int32_t len = k < n ? k : n;
    for (int32_t s = 0; s < len; s++)
        d[s] = INFINITY, id[s] = PCB_KNN_PAD;
    for (int32_t j = 0; j < n; j++) {
        const float *p = r + 3 * (size_t)j;
        const float e = sp_d2(SP_SUB(qx, tiles_coord(p, limit, finite)),
                              SP_SUB(qy, tiles_coord(p + 1, limit, finite)),
                              SP_SUB(qz, tiles_coord(p + 2, limit, finite)));
        if (!(e < d[len - 1]))
            continue;
        int32_t s = len - 1;
        for (; s > 0 && d[s - 1] > e; s--)
            d[s] = d[s - 1], id[s] = id[s - 1];
        d[s] = e, id[s] = j;
    }
    const size_t row = (pair * (size_t)nq + i) * (size_t)k;
    for (int32_t s = 0; s < k; s++) {
        idx[row + s] = s < len ? id[s] : PCB_KNN_PAD;
        if (dist2)
            dist2[row + s] = s < len ? d[s] : INFINITY;
    }
}

static int brute_launch(const float *ref, const float *qry, int64_t batch, int64_t n, int64_t nq,
                        int64_t k, int32_t *idx, float *dist2, float limit, int32_t *finite,
                        cudaStream_t st)
{
    dim3 grid((unsigned)((nq + BRUTE_THREADS - 1) / BRUTE_THREADS), (unsigned)batch);
    knn_brute_kernel<<<grid, BRUTE_THREADS, 0, st>>>(ref, qry, (int32_t)n, (int32_t)nq,
                                                     (int32_t)k, idx, dist2, limit, finite);
    PCB_CUDA_LAUNCHED("knn_brute_kernel");
    return PCB_OK;
}

static int brute_prepare(const pcb_task *t, void **state)
{
    return knn_cuda_prepare(t, state, "cuda_brute", brute_launch);
}

static int brute_run_device(const pcb_task *t, pcb_result *out)
{
    return brute_launch(t->a, t->b, t->batch, t->n, t->nq, t->k, out->index, out->dist2,
                        (float)PCB_NN_MAX_COORD, out->finite, (cudaStream_t)t->stream);
}

extern "C" const pcb_impl pcb_knn_cuda_brute = {
    .name = "cuda_brute",
    .problem = PCB_KNN,
    .device = PCB_CUDA,
    .promise = {.exact = 1, .canonical = 1},
    .limits = {.max_n = 0, .max_m = 0, .max_batch = 65535, .max_k = KNN_BRUTE_MAX_K,
               .best_max_n = 0},
    .cost = PCB_COST_ALL_PAIRS,
    .summary = "the field's classic kernel: a thread a query, global loads, a sorted list in "
               "local memory (k <= 64)",
    .available = pcb_cuda_available,
    .prepare = brute_prepare,
    .compute = knn_cuda_compute,
    .sync = nn_cuda_sync,
    .fetch = nn_cuda_fetch,
    .release = knn_cuda_release,
    .counters = nn_cuda_brute_counters,
    .device_ms = nn_cuda_device_ms,
    .run_device = brute_run_device,
};
