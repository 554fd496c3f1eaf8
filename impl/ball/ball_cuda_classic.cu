/* ball_cuda_classic.cu - the field's classic ball-query kernel: one thread
 * a centre scanning every point of its cloud from global memory in
 * increasing index. FIRST writes each inside point as it is found and stops
 * at the k-th (pointnet2_ops' and PyTorch3D's kernel, with -1 padding and
 * the count in place of the repeated first hit and point 0); NEAREST keeps
 * a sorted row in local memory and scans every point. Distances rounded
 * as naive's: the canonical rows. k up to BALL_CUDA_MAX_K (128). */
#include "ball_cuda.cuh"

enum { CLASSIC_THREADS = 128 };

/* A centre's row, kept sorted in the selection's order in a thread's local
 * array of K (K >= k): FIRST by index, NEAREST by distance then index. */
template <int K>
struct ball_row {
    float d[K];
    int32_t id[K];
    int32_t len; /* entries held, at most k */
};

/* (e, j) before (d, i) in the selection's order. */
__device__ __forceinline__ bool ball_before(bool by_index, float e, int32_t j, float d, int32_t i)
{
    return by_index ? j < i : (e < d || (e == d && j < i));
}

/* Offer an inside point: kept when the row has room or it comes before the
 * last entry (which then leaves). Returns false when it comes after a full
 * row's last: for FIRST in a list of increasing index, every later point
 * would too. */
template <int K>
__device__ __forceinline__ bool ball_offer(ball_row<K> &r, int32_t k, bool by_index, float e,
                                           int32_t j)
{
    int32_t p;
    if (r.len < k) {
        p = r.len++;
    } else if (ball_before(by_index, e, j, r.d[k - 1], r.id[k - 1])) {
        p = k - 1;
    } else {
        return false;
    }
    for (; p > 0 && ball_before(by_index, e, j, r.d[p - 1], r.id[p - 1]); p--)
        r.d[p] = r.d[p - 1], r.id[p] = r.id[p - 1];
    r.d[p] = e, r.id[p] = j;
    return true;
}

/* The row, its padding and its count written out for centre c (flattened). */
template <int K>
__device__ __forceinline__ void ball_write(const ball_row<K> &r, size_t c, int32_t k,
                                           int32_t *idx, float *dist2, int32_t *count)
{
    const size_t row = c * (size_t)k;
    for (int32_t s = 0; s < k; s++) {
        idx[row + s] = s < r.len ? r.id[s] : PCB_KNN_PAD;
        if (dist2)
            dist2[row + s] = s < r.len ? r.d[s] : INFINITY;
    }
    if (count)
        count[c] = r.len;
}

template <int K>
__global__ void __launch_bounds__(CLASSIC_THREADS)
    ball_classic_kernel(const float *ref, const float *ctr, int32_t n, int64_t centres, int32_t nq,
                        int32_t k, float r2, bool first, int32_t *idx, float *dist2,
                        int32_t *count, float limit, int32_t *finite)
{
    const int64_t c = (int64_t)blockIdx.x * CLASSIC_THREADS + threadIdx.x;
    if (c >= centres)
        return;
    const float *r = ref + (size_t)(c / nq) * n * 3, *q = ctr + (size_t)c * 3;
    const float qx = tiles_coord(q, limit, finite), qy = tiles_coord(q + 1, limit, finite),
                qz = tiles_coord(q + 2, limit, finite);
    ball_row<K> row;
    row.len = 0;
    for (int32_t j = 0; j < n; j++) {
        const float *p = r + 3 * (size_t)j;
        const float e = sp_d2(SP_SUB(qx, tiles_coord(p, limit, finite)),
                              SP_SUB(qy, tiles_coord(p + 1, limit, finite)),
                              SP_SUB(qz, tiles_coord(p + 2, limit, finite)));
        if (!(e < r2))
            continue;
        if (first) { /* increasing index: appended, the k-th ends the scan */
            row.d[row.len] = e, row.id[row.len] = j;
            if (++row.len == k)
                break;
        } else {
            ball_offer<K>(row, k, false, e, j);
        }
    }
    ball_write<K>(row, (size_t)c, k, idx, dist2, count);
}

static int classic_launch(void *scratch, const pcb_task *t, pcb_result *out, cudaStream_t st)
{
    (void)scratch;
    const int64_t centres = t->batch * t->nq;
    const unsigned blocks = (unsigned)((centres + CLASSIC_THREADS - 1) / CLASSIC_THREADS);
    const float r2 = pcb_ball_r2(t->radius), limit = (float)PCB_NN_MAX_COORD;
#define CLASSIC_CALL(K)                                                                      \
    (ball_classic_kernel<K><<<blocks, CLASSIC_THREADS, 0, st>>>(                             \
         t->a, t->b, (int32_t)t->n, centres, (int32_t)t->nq, (int32_t)t->k, r2,              \
         t->select == PCB_BALL_FIRST, out->index, out->dist2, out->count, limit, out->finite), \
     0)
    (void)BALL_DISPATCH_K(t->k, CLASSIC_CALL);
#undef CLASSIC_CALL
    PCB_CUDA_LAUNCHED("ball_classic_kernel");
    return PCB_OK;
}

static int classic_prepare(const pcb_task *t, void **state)
{
    return ball_cuda_prepare(t, state, "cuda_classic", classic_launch, NULL, NULL);
}

static int classic_run_device(const pcb_task *t, pcb_result *out)
{
    return classic_launch(NULL, t, out, (cudaStream_t)t->stream);
}

extern "C" const pcb_impl pcb_ball_cuda_classic = {
    .name = "cuda_classic",
    .problem = PCB_BALL,
    .device = PCB_CUDA,
    .promise = {.exact = 1, .canonical = 1},
    .limits = {.max_k = BALL_CUDA_MAX_K},
    .cost = PCB_COST_ALL_PAIRS,
    .summary = "the field's classic kernel: a thread a centre scanning the cloud in index order "
               "(first: stops at the k-th inside point; nearest: a sorted row in local memory)",
    .available = pcb_cuda_available,
    .prepare = classic_prepare,
    .compute = ball_cuda_compute,
    .sync = nn_cuda_sync,
    .fetch = ball_cuda_fetch,
    .release = ball_cuda_release,
    .device_ms = nn_cuda_device_ms,
    .run_device = classic_run_device,
};
