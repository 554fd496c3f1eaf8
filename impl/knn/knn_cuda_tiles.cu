/* knn_cuda_tiles.cu - our kNN for batches of clouds: nn cuda_tiles'
 * brute force with a sorted row of K in registers.
 *
 * One launch answers every query of the batch: a block takes 128 queries
 * of one pair (blockIdx.y), a thread one query, and the reference goes
 * through shared memory in tiles of 512 points, as in nn_tiles.cuh. A
 * thread keeps its row in registers: K (4, 8, 16, 32 or 64, the smallest
 * >= k) distances and indices, every loop over them unrolled so the
 * compiler can name each slot. A point nearer than the row's last (the
 * bound, kept in a register of its own) is shifted in from the front: the
 * slots it passes keep their order, so equal distances stay in increasing
 * index. Distances are spatial.h's sp_d2 (naive's bit for bit) and points
 * come in increasing index: the canonical row. Nothing is allocated; a
 * device run reads and writes the caller's arrays. */
#include "knn_cuda.cuh"

enum { KNN_TILES_MAX_K = 64 };

template <int K>
__global__ void __launch_bounds__(TILES_THREADS)
    knn_tiles_kernel(const float *ref, const float *qry, int32_t n, int32_t nq, int32_t k,
                     int32_t *idx, float *dist2, float limit, int32_t *finite)
{
    __shared__ float4 tile[TILES_TILE];
    const int32_t i = (int32_t)(blockIdx.x * TILES_THREADS + threadIdx.x);
    const size_t pair = blockIdx.y;
    const float *r = ref + pair * (size_t)n * 3;
    const int32_t c = i < nq ? i : nq - 1; /* spare lanes repeat the last query */
    const float *q = qry + (pair * (size_t)nq + c) * 3;
    const float qx = tiles_coord(q, limit, finite), qy = tiles_coord(q + 1, limit, finite),
                qz = tiles_coord(q + 2, limit, finite);
    const int32_t len = k < n ? k : n; /* <= K */
    float d[K], bound = INFINITY;
    int32_t id[K];
#pragma unroll
    for (int s = 0; s < K; s++)
        d[s] = INFINITY, id[s] = PCB_KNN_PAD;
    for (int32_t base = 0; base < n; base += TILES_TILE) {
        __syncthreads(); /* the last tile's readers are done */
        for (int32_t j = (int32_t)threadIdx.x; j < TILES_TILE; j += TILES_THREADS) {
            const int32_t g = base + j;
            float4 p = make_float4(INFINITY, INFINITY, INFINITY, 0.0f); /* never nearer */
            if (g < n)
                p = make_float4(tiles_coord(r + 3 * (size_t)g, limit, finite),
                                tiles_coord(r + 3 * (size_t)g + 1, limit, finite),
                                tiles_coord(r + 3 * (size_t)g + 2, limit, finite), 0.0f);
            tile[j] = p;
        }
        __syncthreads();
        const int32_t count = n - base < TILES_TILE ? n - base : TILES_TILE;
        for (int32_t j = 0; j < count; j++) {
            const float4 p = tile[j];
            const float e = sp_d2(SP_SUB(qx, p.x), SP_SUB(qy, p.y), SP_SUB(qz, p.z));
            if (!(e < bound))
                continue;
            /* shift (e, j) in: from its place on, every slot takes the one before */
            float cd = e;
            int32_t ci = base + j;
            bool moved = false;
#pragma unroll
            for (int s = 0; s < K; s++) {
                const bool take = s < len && (moved || cd < d[s]);
                const float td = d[s];
                const int32_t ti = id[s];
                d[s] = take ? cd : td;
                id[s] = take ? ci : ti;
                cd = take ? td : cd;
                ci = take ? ti : ci;
                moved = take;
                if (s == len - 1)
                    bound = d[s];
            }
        }
    }
    if (i >= nq)
        return;
    const size_t row = (pair * (size_t)nq + i) * (size_t)k;
#pragma unroll
    for (int s = 0; s < K; s++)
        if (s < k) {
            idx[row + s] = id[s];
            if (dist2)
                dist2[row + s] = d[s];
        }
    for (int32_t s = K; s < k; s++) { /* k > n: the row was cut to n <= K */
        idx[row + s] = PCB_KNN_PAD;
        if (dist2)
            dist2[row + s] = INFINITY;
    }
}

template <int K>
static int tiles_k_launch(const float *ref, const float *qry, int64_t batch, int64_t n,
                          int64_t nq, int64_t k, int32_t *idx, float *dist2, float limit,
                          int32_t *finite, cudaStream_t st)
{
    dim3 grid((unsigned)((nq + TILES_THREADS - 1) / TILES_THREADS), (unsigned)batch);
    knn_tiles_kernel<K><<<grid, TILES_THREADS, 0, st>>>(ref, qry, (int32_t)n, (int32_t)nq,
                                                        (int32_t)k, idx, dist2, limit, finite);
    PCB_CUDA_LAUNCHED("knn_tiles_kernel");
    return PCB_OK;
}

static int knn_tiles_launch(const float *ref, const float *qry, int64_t batch, int64_t n,
                            int64_t nq, int64_t k, int32_t *idx, float *dist2, float limit,
                            int32_t *finite, cudaStream_t st)
{
    const int64_t len = k < n ? k : n; /* the row kept; past it, padding as written */
    return len <= 4    ? tiles_k_launch<4>(ref, qry, batch, n, nq, k, idx, dist2, limit, finite, st)
           : len <= 8  ? tiles_k_launch<8>(ref, qry, batch, n, nq, k, idx, dist2, limit, finite, st)
           : len <= 16 ? tiles_k_launch<16>(ref, qry, batch, n, nq, k, idx, dist2, limit, finite, st)
           : len <= 32 ? tiles_k_launch<32>(ref, qry, batch, n, nq, k, idx, dist2, limit, finite, st)
                       : tiles_k_launch<64>(ref, qry, batch, n, nq, k, idx, dist2, limit, finite, st);
}

static int tiles_prepare(const pcb_task *t, void **state)
{
    return knn_cuda_prepare(t, state, "cuda_tiles", knn_tiles_launch);
}

static int tiles_run_device(const pcb_task *t, pcb_result *out)
{
    return knn_tiles_launch(t->a, t->b, t->batch, t->n, t->nq, t->k, out->index, out->dist2,
                            (float)PCB_NN_MAX_COORD, out->finite, (cudaStream_t)t->stream);
}

extern "C" const pcb_impl pcb_knn_cuda_tiles = {
    .name = "cuda_tiles",
    .problem = PCB_KNN,
    .device = PCB_CUDA,
    .promise = {.exact = 1, .max_gap = 0, .canonical = 1, .known_defect = NULL},
    .limits = {.max_n = 0, .max_m = 0, .max_batch = 65535, .max_k = KNN_TILES_MAX_K},
    .cost = PCB_COST_ALL_PAIRS,
    .reference = 0,
    .gap_option = 0,
    .summary = "GPU brute force for batches: every pair in one launch, a sorted row of k in "
               "registers, reference tiles in shared memory, ties to the lower index (k <= 64)",
    .available = pcb_cuda_available,
    .prepare = tiles_prepare,
    .compute = knn_cuda_compute,
    .sync = nn_cuda_sync,
    .fetch = nn_cuda_fetch,
    .release = knn_cuda_release,
    .counters = nn_cuda_brute_counters,
    .device_ms = nn_cuda_device_ms,
    .run_device = tiles_run_device,
    .device_index = NULL,
};
