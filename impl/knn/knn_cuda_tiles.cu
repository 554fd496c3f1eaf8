/* knn_cuda_tiles.cu - our kNN for batches of clouds: nn cuda_tiles'
 * brute force with sorted rows of K in registers.
 *
 * One launch answers every query of the batch: a block takes the queries
 * of one pair (blockIdx.y), T threads a query, and the reference goes
 * through shared memory in tiles of 512 points, as in nn_tiles.cuh. A
 * thread keeps its row in registers: K (4, 8, 16, 32 or 64, the smallest
 * >= min(k, n)) distances and indices, every loop over them unrolled so
 * the compiler can name each slot. What costs is not the distances but the
 * insertions, and that lanes of a warp insert at different points (the
 * classic kernel, cuda_brute, runs them one lane after another): here a
 * nearer point waits in a small buffer and the warp inserts together, each
 * insertion computing every slot at once; rows of 16 and more take their
 * points 4 at a time (knn_pace). Distances are spatial.h's sp_d2
 * (naive's bit for bit), each thread's points come in increasing index and
 * rows merge by (distance, index): the canonical row. Nothing is
 * allocated; a device run reads and writes the caller's arrays. */
#include "knn_cuda.cuh"

enum { KNN_TILES_MAX_K = 64 };

/* Rows of 16 and more take 4 points a step, their distances independent of
 * each other (a grid of small batches holds few warps: each needs work in
 * flight), and a buffer of 8; shorter rows, 1 point a step and a buffer of
 * 4 (4 a step was slower for them: NOTES.md). A buffer is emptied when the
 * next step could overflow it. */
template <int K> struct knn_pace {
    static constexpr int step = K >= 16 ? 4 : 1, buf = K >= 16 ? 8 : 4;
};

/* T threads a query (T = 1, 2, 4 or 8, neighbouring lanes), each over the
 * points of index = its part mod T, in increasing index, with a row of its
 * own; a nearer point than the row's last goes to a small buffer first, and
 * the warp empties every lane's buffer into its row together once one is
 * full, so the lanes that insert do it side by side rather than one after
 * the other. At the end the T rows are merged by shuffles (all T lanes then
 * hold the query's row) and written, K / T slots by each lane. */
template <int K, int T>
__global__ void __launch_bounds__(TILES_THREADS)
    knn_tiles_kernel(const float *ref, const float *qry, int32_t n_all, int32_t nq_all, int32_t k,
                     int32_t *idx, float *dist2, float limit, int32_t *finite,
                     const int64_t *ref_len, const int64_t *qry_len)
{
    __shared__ float4 tile[TILES_TILE];
    const int part = (int)threadIdx.x % T;
    const int32_t i = (int32_t)((blockIdx.x * TILES_THREADS + threadIdx.x) / T);
    const size_t pair = blockIdx.y;
    const float *r = ref + pair * (size_t)n_all * 3;
    /* a ragged pair: its own points and queries (the rest is padding) */
    const int32_t n = tiles_length(ref_len, pair, n_all, finite);
    const int32_t nq = tiles_length(qry_len, pair, nq_all, finite);
    const int32_t c = i < nq ? i : nq - 1; /* spare lanes repeat the last query */
    const float *q = qry + (pair * (size_t)nq_all + (c > 0 ? c : 0)) * 3;
    const float qx = c >= 0 ? tiles_coord(q, limit, finite) : 0.0f,
                qy = c >= 0 ? tiles_coord(q + 1, limit, finite) : 0.0f,
                qz = c >= 0 ? tiles_coord(q + 2, limit, finite) : 0.0f;
    const int32_t len = k < n ? k : n; /* <= K */
    constexpr int KNN_STEP = knn_pace<K>::step, KNN_BUF = knn_pace<K>::buf;
    float d[K], bound = INFINITY, bd[KNN_BUF];
    int32_t id[K], bi[KNN_BUF], held = 0;
#pragma unroll
    for (int s = 0; s < K; s++)
        d[s] = INFINITY, id[s] = PCB_KNN_PAD;
#pragma unroll
    for (int s = 0; s < KNN_BUF; s++)
        bd[s] = INFINITY, bi[s] = PCB_KNN_PAD;
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
        const int32_t steps = ((n - base < TILES_TILE ? n - base : TILES_TILE) + T - 1) / T;
        for (int32_t t = 0; t < steps; t += KNN_STEP) {
            float e[KNN_STEP];
#pragma unroll
            for (int c = 0; c < KNN_STEP; c++) { /* past the tile: +inf, never taken */
                const float4 p = t + c < steps ? tile[(t + c) * T + part]
                                               : make_float4(INFINITY, INFINITY, INFINITY, 0.0f);
                e[c] = sp_d2(SP_SUB(qx, p.x), SP_SUB(qy, p.y), SP_SUB(qz, p.z));
            }
#pragma unroll
            for (int c = 0; c < KNN_STEP; c++)
                if (e[c] < bound) { /* held <= KNN_BUF - KNN_STEP + c: room */
#pragma unroll
                    for (int s = 0; s < KNN_BUF; s++)
                        if (s == held)
                            bd[s] = e[c], bi[s] = base + (t + c) * T + part;
                    held++;
                }
            if (__any_sync(0xffffffffu, held > KNN_BUF - KNN_STEP)) {
#pragma unroll
                for (int s = 0; s < KNN_BUF; s++)
                    if (s < held && bd[s] < bound)
                        knn_insert<K, true>(d, id, bd[s], bi[s], len, bound);
                held = 0;
            }
        }
    }
#pragma unroll
    for (int s = 0; s < KNN_BUF; s++)
        if (s < held && bd[s] < bound)
            knn_insert<K, true>(d, id, bd[s], bi[s], len, bound);
#pragma unroll
    for (int off = 1; off < T; off *= 2) { /* butterfly: every lane of the query ends with all */
        float od[K];
        int32_t oi[K];
#pragma unroll
        for (int s = 0; s < K; s++) {
            od[s] = __shfl_xor_sync(0xffffffffu, d[s], off);
            oi[s] = __shfl_xor_sync(0xffffffffu, id[s], off);
        }
        knn_merge<K>(d, id, od, oi);
    }
    if (i >= nq_all)
        return;
    const size_t row = (pair * (size_t)nq_all + i) * (size_t)k;
    if (i >= nq) { /* a ragged pair's padding query: a row of padding */
        for (int32_t s = part; s < k; s += T) {
            idx[row + s] = PCB_KNN_PAD;
            if (dist2)
                dist2[row + s] = INFINITY;
        }
        return;
    }
#pragma unroll
    for (int s = 0; s < K; s++)
        if (s % T == part && s < k) {
            idx[row + s] = id[s];
            if (dist2)
                dist2[row + s] = d[s];
        }
    for (int32_t s = K + part; s < k; s += T) { /* k > n: the row was cut to n <= K */
        idx[row + s] = PCB_KNN_PAD;
        if (dist2)
            dist2[row + s] = INFINITY;
    }
}

template <int K, int T>
static int tiles_kt_launch(const float *ref, const float *qry, int64_t batch, int64_t n,
                           int64_t nq, int64_t k, int32_t *idx, float *dist2, float limit,
                           int32_t *finite, const int64_t *const lengths[2], cudaStream_t st)
{
    const int64_t per_block = TILES_THREADS / T;
    dim3 grid((unsigned)((nq + per_block - 1) / per_block), (unsigned)batch);
    knn_tiles_kernel<K, T><<<grid, TILES_THREADS, 0, st>>>(ref, qry, (int32_t)n, (int32_t)nq,
                                                           (int32_t)k, idx, dist2, limit, finite,
                                                           lengths[0], lengths[1]);
    PCB_CUDA_LAUNCHED("knn_tiles_kernel");
    return PCB_OK;
}

/* T: threads a query. Each thread keeps a whole row, so T threads fill T
 * rows: more insertions, which are the cost. Measured on an H100 (NOTES.md):
 * rows of 16 and more are fastest at T = 1 at every size of the knn suite;
 * rows of 3 gain from more threads while the grid is small (32 x 1,024:
 * 0.069 ms at T = 4, 0.105 at T = 1), up to T = 4 (T = 8: 0.079). */
template <int K>
static int tiles_k_launch(const float *ref, const float *qry, int64_t batch, int64_t n,
                          int64_t nq, int64_t k, int32_t *idx, float *dist2, float limit,
                          int32_t *finite, const int64_t *const lengths[2], cudaStream_t st)
{
    int sms = 0, rc = tiles_sms(&sms);
    if (rc != PCB_OK)
        return rc;
    const int64_t queries = batch * nq, want = (int64_t)sms * 64 * 32 / 2;
    if constexpr (K >= 16) {
        return tiles_kt_launch<K, 1>(ref, qry, batch, n, nq, k, idx, dist2, limit, finite,
                                     lengths, st);
    } else {
        if (queries >= want || n < 2 * TILES_TILE)
            return tiles_kt_launch<K, 1>(ref, qry, batch, n, nq, k, idx, dist2, limit, finite,
                                         lengths, st);
        if (2 * queries >= want)
            return tiles_kt_launch<K, 2>(ref, qry, batch, n, nq, k, idx, dist2, limit, finite,
                                         lengths, st);
        return tiles_kt_launch<K, 4>(ref, qry, batch, n, nq, k, idx, dist2, limit, finite,
                                     lengths, st);
    }
}

/* lengths: a ragged batch's (device arrays, read there), or NULL, NULL. */
static int knn_tiles_ragged(const float *ref, const float *qry, int64_t batch, int64_t n,
                            int64_t nq, int64_t k, int32_t *idx, float *dist2, float limit,
                            int32_t *finite, const int64_t *const lengths[2], cudaStream_t st)
{
    const int64_t len = k < n ? k : n; /* the row kept; past it, padding as written */
    int (*const launch)(const float *, const float *, int64_t, int64_t, int64_t, int64_t,
                        int32_t *, float *, float, int32_t *, const int64_t *const[2],
                        cudaStream_t) = len <= 4    ? tiles_k_launch<4>
                                        : len <= 8  ? tiles_k_launch<8>
                                        : len <= 16 ? tiles_k_launch<16>
                                        : len <= 32 ? tiles_k_launch<32>
                                                    : tiles_k_launch<64>;
    return launch(ref, qry, batch, n, nq, k, idx, dist2, limit, finite, lengths, st);
}

static int knn_tiles_launch(const float *ref, const float *qry, int64_t batch, int64_t n,
                            int64_t nq, int64_t k, int32_t *idx, float *dist2, float limit,
                            int32_t *finite, cudaStream_t st)
{
    const int64_t *const none[2] = {NULL, NULL};
    return knn_tiles_ragged(ref, qry, batch, n, nq, k, idx, dist2, limit, finite, none, st);
}

static int tiles_prepare(const pcb_task *t, void **state)
{
    return knn_cuda_prepare(t, state, "cuda_tiles", knn_tiles_launch);
}

/* A host run: the uploaded clouds, and a ragged task's uploaded lengths. */
static int tiles_compute(void *state)
{
    knn_cuda_state *s = (knn_cuda_state *)state;
    const pcb_task *t = &s->base.task;
    const int64_t *const lengths[2] = {t->lengths_a, t->lengths_b};
    int rc = pcb_cuda_begin(&s->base.ctx);
    if (rc == PCB_OK)
        rc = knn_tiles_ragged(s->base.ref, s->base.qry, t->batch, t->n, t->nq, t->k,
                              s->base.idx, s->base.dist2, (float)PCB_NN_MAX_COORD, NULL, lengths,
                              s->base.ctx.stream);
    return rc == PCB_OK ? pcb_cuda_end(&s->base.ctx) : rc;
}

static int tiles_run_device(const pcb_task *t, pcb_result *out)
{
    const int64_t *const lengths[2] = {t->lengths_a, t->lengths_b};
    return knn_tiles_ragged(t->a, t->b, t->batch, t->n, t->nq, t->k, out->index, out->dist2,
                            (float)PCB_NN_MAX_COORD, out->finite, lengths,
                            (cudaStream_t)t->stream);
}

extern "C" const pcb_impl pcb_knn_cuda_tiles = {
    .name = "cuda_tiles",
    .problem = PCB_KNN,
    .device = PCB_CUDA,
    .promise = {.exact = 1, .canonical = 1},
    /* a brute force: cuda_grid is faster from 32 x 1,024 on (H200,
     * NOTES.md); beyond 131,072 points a k-d tree on 16 cores is faster
     * (1M: 179 ms against 820, H100) */
    .limits = {.max_n = 131072, .max_m = 0, .max_batch = 65535, .max_k = KNN_TILES_MAX_K,
               .best_max_n = 0},
    .cost = PCB_COST_ALL_PAIRS,
    .summary = "GPU brute force for batches: every pair in one launch, a sorted row of k in "
               "registers, reference tiles in shared memory, ties to the lower index (k <= 64)",
    .available = pcb_cuda_available,
    .prepare = tiles_prepare,
    .compute = tiles_compute,
    .sync = nn_cuda_sync,
    .fetch = nn_cuda_fetch,
    .release = knn_cuda_release,
    .counters = nn_cuda_brute_counters,
    .device_ms = nn_cuda_device_ms,
    .run_device = tiles_run_device,
    .ragged = 1,
};
