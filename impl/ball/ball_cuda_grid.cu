/* ball_cuda_grid.cu - ball query through nn_grid.cuh's uniform grid a
 * cloud, built for the whole batch in one launch a stage. A warp then
 * answers a centre: the cells meeting its ball, as runs along x, read 32
 * points at a time and merged into its row (README.md says how).
 *
 * Cells are found in double precision with the radius widened by 1e-5, so
 * every point the float32 test d2 < r2 can accept lies in a visited cell;
 * the test itself is naive's, and the rows are naive's element for element.
 * Clouds of at most GRID_BRUTE_N points get no grid. */
#include "impl/nn/nn_grid.cuh"
#include "ball_cuda.cuh"

/* Clouds of at most GRID_BRUTE_N points get no grid: its build (a dozen
 * launches) costs more than reading every point (H100, NOTES.md). */
enum { QUERY_WARPS = 4, GRID_BRUTE_N = 2048 };

/* Squared distance in double from x to the interval of cells [c, c + 1). */
__device__ __forceinline__ double grid_gap(double x, double lo, double h, int32_t c, int32_t dim)
{
    const double a = c == 0 ? -INFINITY : lo + c * h, b = c == dim - 1 ? INFINITY : lo + (c + 1) * h;
    const double g = x < a ? a - x : x > b ? x - b : 0;
    return g * g;
}

/* A candidate as one 64-bit key in the selection's order: FIRST the index
 * above the distance's bits, NEAREST the distance's bits (non-negative
 * floats order as their bits) above the index. */
__device__ __forceinline__ uint64_t grid_key(bool by_index, float d2, int32_t j)
{
    const uint64_t d = __float_as_uint(d2), i = (uint32_t)j;
    return by_index ? i << 32 | d : d << 32 | i;
}

/* A warp's candidates for a centre, in shared memory: buf[0, len) keys,
 * unsorted while collecting; last the k-th smallest key once a compaction
 * has put the k smallest, sorted, in front (else all ones: every candidate
 * is kept). CAP >= k + 32, so a chunk of 32 always fits after one. */
template <int K>
struct grid_buf {
    static constexpr int CAP = 2 * K > 128 ? 2 * K : 128;
    uint64_t *buf;
    int32_t len, k;
    uint64_t last;
};

/* The k smallest keys of buf[0, len) sorted to its front: each lane ranks its
 * keys by counting the smaller ones (the keys are distinct), then writes
 * those of rank below k to their places. */
template <int K>
__device__ __forceinline__ void grid_compact(grid_buf<K> &r, int lane)
{
    constexpr int PER = grid_buf<K>::CAP / 32;
    uint64_t mine[PER];
    int32_t rank[PER];
    __syncwarp();
#pragma unroll
    for (int t = 0; t < PER; t++) {
        const int32_t i = lane + 32 * t;
        mine[t] = i < r.len ? r.buf[i] : ~0ull;
        rank[t] = 0;
    }
    for (int32_t j = 0; j < r.len; j++) {
        const uint64_t other = r.buf[j]; /* one address for the warp: a broadcast */
#pragma unroll
        for (int t = 0; t < PER; t++)
            rank[t] += other < mine[t];
    }
    __syncwarp();
#pragma unroll
    for (int t = 0; t < PER; t++)
        if (lane + 32 * t < r.len && rank[t] < r.k)
            r.buf[rank[t]] = mine[t];
    __syncwarp();
    r.len = r.len < r.k ? r.len : r.k;
    r.last = r.len == r.k ? r.buf[r.k - 1] : ~0ull;
}

/* The warp's chunk of up to 32 candidates (one a lane; inside: in the ball):
 * those before last are appended, after a compaction when they would not
 * fit. */
template <int K>
__device__ __forceinline__ void grid_collect(grid_buf<K> &r, bool inside, uint64_t key, int lane)
{
    bool keep = inside && key < r.last;
    unsigned m = __ballot_sync(0xffffffffu, keep);
    if (!m)
        return;
    if (r.len + __popc(m) > grid_buf<K>::CAP) {
        grid_compact<K>(r, lane);
        keep = keep && key < r.last;
        m = __ballot_sync(0xffffffffu, keep);
    }
    if (keep)
        r.buf[r.len + __popc(m & ((1u << lane) - 1))] = key;
    r.len += __popc(m);
}

/* The cells meeting a centre's ball form at most 25 runs (a run: a row of
 * cells along x, contiguous in cell order), one a lane; the warp reads their
 * points as one list, 32 at a time, and offers them to the row. Returns the
 * list's length; FIRST on a ball dense in its cloud (s^2 > 2 k n for the s
 * points of the list: the k-th inside point is likely among the first few
 * hundred indices) offers nothing, the caller scanning in index order. */
template <int K>
__device__ __forceinline__ uint32_t grid_runs(grid_buf<K> &r, const grid_cloud &g, int64_t cells,
                                              const uint32_t *starts, const float4 *pts, int64_t b,
                                              int32_t n, int32_t k, float qx, float qy, float qz,
                                              float r2, double rs, bool by_index, int lane)
{
    const double h = 1.0 / g.inv_h, rs2 = rs * rs;
    const int32_t ylo = grid_cell((double)qy - rs, g.lo[1], g.inv_h, g.dim[1]),
                  yhi = grid_cell((double)qy + rs, g.lo[1], g.inv_h, g.dim[1]),
                  zlo = grid_cell((double)qz - rs, g.lo[2], g.inv_h, g.dim[2]),
                  zhi = grid_cell((double)qz + rs, g.lo[2], g.inv_h, g.dim[2]);
    /* this lane's run: [first, first + len) in pts */
    const int32_t ny = yhi - ylo + 1, y = ylo + lane % ny, z = zlo + lane / ny;
    uint32_t first = 0, len = 0;
    if (z <= zhi) {
        const double gap = grid_gap(qz, g.lo[2], h, z, g.dim[2]) +
                           grid_gap(qy, g.lo[1], h, y, g.dim[1]);
        if (gap <= rs2) {
            const double half = sqrt(rs2 - gap);
            const uint32_t *run = starts + b * cells + ((int64_t)z * g.dim[1] + y) * g.dim[0];
            first = run[grid_cell((double)qx - half, g.lo[0], g.inv_h, g.dim[0])];
            len = run[grid_cell((double)qx + half, g.lo[0], g.inv_h, g.dim[0]) + 1] - first;
        }
    }
    uint32_t end = len; /* inclusive scan: where this lane's run ends in the list */
    for (int d = 1; d < 32; d *= 2) {
        const uint32_t v = __shfl_up_sync(0xffffffffu, end, d);
        end += lane >= d ? v : 0;
    }
    const uint32_t total = __shfl_sync(0xffffffffu, end, 31), begin = end - len;
    if (by_index && (double)total * total > 2.0 * k * n)
        return total; /* dense: the caller scans the cloud in index order */
    for (uint32_t at = 0; at < total; at += 32) {
        const uint32_t v = at + lane;
        int lo = 0, hi = 31; /* the last lane whose run begins at or before v */
        for (int step = 0; step < 5; step++) {
            const int mid = (lo + hi + 1) / 2;
            if (__shfl_sync(0xffffffffu, begin, mid) <= v)
                lo = mid;
            else
                hi = mid - 1;
        }
        const uint32_t i = __shfl_sync(0xffffffffu, first, lo) + v -
                           __shfl_sync(0xffffffffu, begin, lo);
        bool inside = false;
        uint64_t key = 0;
        if (v < total) {
            const float4 p = pts[i];
            const float d = sp_d2(SP_SUB(qx, p.x), SP_SUB(qy, p.y), SP_SUB(qz, p.z));
            inside = d < r2;
            key = grid_key(by_index, d, __float_as_int(p.w));
        }
        grid_collect<K>(r, inside, key, lane);
    }
    return total;
}

/* Point j of a cloud's squared distance to the centre, naive's rounding. */
__device__ __forceinline__ float grid_d2(const float *cloud, int32_t j, float qx, float qy,
                                         float qz, float limit, int32_t *finite)
{
    const float *p = cloud + 3 * (size_t)j;
    return sp_d2(SP_SUB(qx, tiles_coord(p, limit, finite)),
                 SP_SUB(qy, tiles_coord(p + 1, limit, finite)),
                 SP_SUB(qz, tiles_coord(p + 2, limit, finite)));
}

/* A warp a centre: its row filled from the grid's runs (grid_runs), or
 * without a grid (clouds NULL: small clouds, where building one costs more
 * than it saves) from every point in index order; FIRST in index order stops
 * at the k-th inside point. */
template <int K>
__global__ void __launch_bounds__(32 * QUERY_WARPS)
    grid_query(const float *ref, int32_t n, const float *ctr, int64_t centres, int32_t nq,
               int64_t cells, const grid_cloud *clouds, const float4 *pts, const uint32_t *starts,
               int32_t k, float r2, double rs, bool by_index, float limit, int32_t *finite,
               int32_t *idx, int64_t *idx64, float *dist2, int32_t *count)
{
    __shared__ uint64_t bufs[QUERY_WARPS][grid_buf<K>::CAP];
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t c = (int64_t)blockIdx.x * QUERY_WARPS + w;
    if (c >= centres)
        return; /* the whole warp */
    const int64_t b = c / nq;
    const float *q = ctr + 3 * c;
    const float qx = tiles_coord(q, limit, finite), qy = tiles_coord(q + 1, limit, finite),
                qz = tiles_coord(q + 2, limit, finite);
    grid_buf<K> r = {bufs[w], 0, k, ~0ull};
    const float *cloud = ref + (size_t)b * n * 3;
    if (!clouds && !by_index) /* no grid, NEAREST: every point, in index order */
        for (int32_t at = 0; at < n; at += 32) {
            const int32_t j = at + lane;
            bool inside = false;
            uint64_t key = 0;
            if (j < n) {
                const float d = grid_d2(cloud, j, qx, qy, qz, limit, finite);
                inside = d < r2;
                key = grid_key(false, d, j);
            }
            grid_collect<K>(r, inside, key, lane);
        }
    uint32_t total = (uint32_t)n;
    if (clouds)
        total = grid_runs<K>(r, clouds[b], cells, starts, pts, b, n, k, qx, qy, qz, r2, rs,
                             by_index, lane);
    if (by_index && (!clouds || (double)total * total > 2.0 * k * n)) {
        /* FIRST on a dense ball or without a grid: the cloud in index order */
        for (int32_t at = 0; at < n && r.len < k; at += 32) {
            const int32_t j = at + lane;
            bool inside = false;
            float d = 0;
            if (j < n) {
                d = grid_d2(cloud, j, qx, qy, qz, limit, finite);
                inside = d < r2;
            }
            const unsigned m = __ballot_sync(0xffffffffu, inside);
            const int32_t at_row = r.len + __popc(m & ((1u << lane) - 1));
            if (inside && at_row < k)
                r.buf[at_row] = grid_key(true, d, j);
            r.len = r.len + __popc(m) < k ? r.len + __popc(m) : k;
        }
    }
    grid_compact<K>(r, lane); /* the row: its k smallest keys, sorted */
    const size_t out = (size_t)c * k;
    for (int32_t s = lane; s < k; s += 32) {
        const uint64_t key = r.buf[s < r.len ? s : 0];
        const uint32_t hi = (uint32_t)(key >> 32), lo = (uint32_t)key;
        tiles_put_index(idx, idx64, out + s,
                        s < r.len ? (int32_t)(by_index ? hi : lo) : PCB_KNN_PAD);
        if (dist2)
            dist2[out + s] = s < r.len ? __uint_as_float(by_index ? lo : hi) : INFINITY;
    }
    if (count && lane == 0)
        count[c] = r.len;
}

/* Scratch for a task's sizes: nothing queued, nothing waited for; clouds
 * of at most GRID_BRUTE_N points get none. */
static int ball_grid_make(const pcb_task *t, void **state)
{
    const grid_sets sets = {{t->a, NULL}, {(int32_t)t->n, 0}, {NULL, NULL}, 1};
    grid_scratch *s = NULL;
    int rc = grid_make("ball cuda_grid", &sets, t->batch, 1, t->n > GRID_BRUTE_N, &s);
    if (rc == PCB_OK)
        *state = s;
    return rc;
}

static int grid_launch(void *state, const pcb_task *t, pcb_result *out, cudaStream_t st)
{
    grid_scratch *s = (grid_scratch *)state;
    const int64_t centres = t->batch * t->nq;
    const float limit = (float)PCB_NN_MAX_COORD, r2 = pcb_ball_r2(t->radius);
    const double rs = (double)(float)t->radius * (1 + 1e-5);
    const unsigned blocks = (unsigned)((centres + QUERY_WARPS - 1) / QUERY_WARPS);
    const int brute = t->n <= GRID_BRUTE_N;
#define GRID_CALL(K)                                                                            \
    (grid_query<K><<<blocks, 32 * QUERY_WARPS, 0, st>>>(                                        \
         t->a, (int32_t)t->n, t->b, centres, (int32_t)t->nq, s->cells,                          \
         brute ? NULL : s->clouds, s->pts, s->starts, (int32_t)t->k, r2, rs,                    \
         t->select == PCB_BALL_FIRST, limit, out->finite, out->index, out->index64, out->dist2, \
         out->count),                                                                           \
     0)
    if (brute) {
        (void)BALL_DISPATCH_K(t->k, GRID_CALL);
        PCB_CUDA_LAUNCHED("grid_query");
        return PCB_OK;
    }
    const grid_sets sets = {{t->a, NULL}, {(int32_t)t->n, 0}, {NULL, NULL}, 1};
    int rc = grid_build(s, &sets, rs, limit, out->finite, st);
    if (rc != PCB_OK)
        return rc;
    (void)BALL_DISPATCH_K(t->k, GRID_CALL);
#undef GRID_CALL
    PCB_CUDA_LAUNCHED("grid_query");
    return PCB_OK;
}

static int grid_prepare(const pcb_task *t, void **state)
{
    return ball_cuda_prepare(t, state, "cuda_grid", grid_launch, ball_grid_make, grid_free);
}

extern "C" const pcb_impl pcb_ball_cuda_grid;

static int grid_run_device(const pcb_task *t, pcb_result *out)
{
    static const pcb_cuda_maker maker = {&pcb_ball_cuda_grid, ball_grid_make, grid_free,
                                         grid_launch};
    return pcb_cuda_run_cached(&maker, t, out);
}

extern "C" const pcb_impl pcb_ball_cuda_grid = {
    .name = "cuda_grid",
    .problem = PCB_BALL,
    .device = PCB_CUDA,
    .promise = {.exact = 1, .canonical = 1},
    .limits = {.max_n = 0, .max_m = 0, .max_batch = 65535, .max_k = BALL_CUDA_MAX_K,
               .best_max_n = 0},
    .cost = PCB_COST_INDEXED,
    .summary = "a uniform grid a cloud built for the whole batch (one sort), a thread a centre "
               "visiting the cells that meet its ball; first stops a cell past its row",
    .available = pcb_cuda_available,
    .prepare = grid_prepare,
    .compute = ball_cuda_compute,
    .sync = nn_cuda_sync,
    .fetch = ball_cuda_fetch,
    .release = ball_cuda_release,
    .device_ms = nn_cuda_device_ms,
    .run_device = grid_run_device,
    .index64 = 1,
};
