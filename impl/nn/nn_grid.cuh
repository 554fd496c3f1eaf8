/* nn_grid.cuh - a uniform grid a cloud, built for a whole batch (and for
 * chamfer both clouds of every pair) in one launch a stage: bounds (blocks
 * of each cloud fold theirs in with atomics), cell shape, cell keys and
 * counts, one scan of the counts into cell starts, and the points gathered
 * in cell order with their indices; then the exact nearest neighbour of
 * every query, a thread each. The cells and the search are nn_grid.h's
 * (shared with the CPU replay of tests/test_nn_grid.c). Included by
 * nn_cuda_grid.cu and chamfer_cuda_grid.cu, and by ball_cuda_grid.cu and
 * knn_cuda_grid.cu, which have their own searches.
 *
 * Each cloud has a fixed budget of cells (grid_budget: a power of two >= its
 * points, or a fraction of them for kNN), so the host allocates once a size
 * and never waits for the bounds; a cloud wider than its budget along one
 * axis gets wider cells, slower but exact. */
#ifndef PCB_NN_GRID_CUH
#define PCB_NN_GRID_CUH

#include <cub/device/device_scan.cuh>

#include "nn_cuda.cuh"
#include "nn_grid.h"
#include "nn_tiles.cuh"

enum { GRID_BOUNDS_THREADS = 256, GRID_NEAREST_THREADS = 256 };

/* A point with no cell: a ragged pair's padding. */
#define GRID_NO_KEY 0xffffffffu

/* The clouds a grid is built over: one set (NN, ball query: the reference
 * clouds) or two (chamfer: A's and B's); cloud set * batch + pair. A
 * ragged set's pair holds its first len[pair] points (device array; NULL:
 * all). */
typedef struct {
    const float *ref[2];
    int32_t n[2];
    const int64_t *len[2];
    int nsets;
} grid_sets;

typedef struct {
    int64_t batch, cells; /* cells a cloud: a power of two */
    grid_sets sets;       /* the sizes it was made for (pointers set at each build) */
    grid_cloud *clouds;   /* nsets * batch */
    uint32_t *zeroed;     /* lo, hi and counts: one allocation, cleared by one memset */
    uint32_t *lo, *hi;    /* nsets * batch * 3 bounds: ~grid_order(min), grid_order(max) */
    uint32_t *keys;       /* each point's cell key (cloud * cells + cell), or GRID_NO_KEY */
    uint32_t *slots;      /* its place among its cell's points */
    uint32_t *counts;     /* nsets * batch * cells + 1: points a cell */
    uint32_t *starts;     /* where each cell's points start in pts */
    float4 *pts;          /* the points in cell order: x, y, z and the index's bits */
    void *temp;
    size_t temp_bytes;
} grid_scratch;

/* What a query kernel reads of a built grid. */
typedef struct {
    const grid_cloud *clouds;
    const uint32_t *starts;
    const float4 *pts;
    int64_t batch, cells;
    grid_sets sets;
} grid_view;

static inline grid_view grid_view_of(const grid_scratch *s)
{
    grid_view v = {s->clouds, s->starts, s->pts, s->batch, s->cells, s->sets};
    return v;
}

static inline int64_t grid_points(const grid_sets &s, int64_t batch)
{
    return batch * ((int64_t)s.n[0] + (s.nsets > 1 ? s.n[1] : 0));
}

/* A ragged pair's length (one outside 0..full reads as 0, as the searches
 * that flag it read it). */
__device__ __forceinline__ int32_t grid_length(const int64_t *len, int64_t pair, int32_t full)
{
    return !len ? full : len[pair] < 0 || len[pair] > full ? 0 : (int32_t)len[pair];
}

/* Point i of the sets' points: its set, pair and index in its cloud. */
__device__ __forceinline__ void grid_point(const grid_sets &s, int64_t batch, int64_t i, int *set,
                                           int64_t *pair, int32_t *j)
{
    const int64_t first = batch * s.n[0];
    *set = i >= first;
    const int64_t k = *set ? i - first : i;
    *pair = k / s.n[*set];
    *j = (int32_t)(k % s.n[*set]);
}

/* Floats as unsigned keys in the same order, for atomicMax (of the key for
 * a maximum, of its complement for a minimum, so that zero is "none" for
 * both: NaN once read back). */
__device__ __forceinline__ uint32_t grid_order(float f)
{
    const uint32_t u = __float_as_uint(f);
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}

__device__ __forceinline__ float grid_unorder(uint32_t k)
{
    return __uint_as_float(k & 0x80000000u ? k & 0x7fffffffu : ~k);
}

/* The bounds (l, h) of a cloud's points first, first + step, ... below n
 * (r: its coordinates through tiles_coord), folded over the warp: every
 * lane gets its warp's. */
__device__ __forceinline__ void grid_warp_bounds(const float *r, int32_t first, int32_t n,
                                                 int32_t step, float limit, int32_t *finite,
                                                 float l[3], float h[3])
{
    for (int a = 0; a < 3; a++)
        l[a] = INFINITY, h[a] = -INFINITY;
    for (int32_t j = first; j < n; j += step)
        for (int a = 0; a < 3; a++) {
            const float v = tiles_coord(r + 3 * (size_t)j + a, limit, finite);
            l[a] = fminf(l[a], v), h[a] = fmaxf(h[a], v);
        }
    for (int a = 0; a < 3; a++)
        for (int d = 16; d > 0; d /= 2) {
            l[a] = fminf(l[a], __shfl_xor_sync(0xffffffffu, l[a], d));
            h[a] = fmaxf(h[a], __shfl_xor_sync(0xffffffffu, h[a], d));
        }
}

/* Blocks (x) of each cloud (y) fold their slice's bounds into the cloud's
 * (lo and hi cleared to zeros). */
static __global__ void __launch_bounds__(GRID_BOUNDS_THREADS)
    grid_bounds(grid_sets sets, int64_t batch, float limit, int32_t *finite, uint32_t *lo,
                uint32_t *hi)
{
    __shared__ float sl[3][GRID_BOUNDS_THREADS / 32], sh[3][GRID_BOUNDS_THREADS / 32];
    const int set = blockIdx.y >= batch;
    const int64_t pair = blockIdx.y - (set ? batch : 0);
    const int32_t full = sets.n[set], n = grid_length(sets.len[set], pair, full);
    const float *r = sets.ref[set] + (size_t)pair * full * 3;
    float l[3], h[3];
    grid_warp_bounds(r, blockIdx.x * GRID_BOUNDS_THREADS + threadIdx.x, n,
                     gridDim.x * GRID_BOUNDS_THREADS, limit, finite, l, h);
    if (threadIdx.x % 32 == 0)
        for (int a = 0; a < 3; a++)
            sl[a][threadIdx.x / 32] = l[a], sh[a][threadIdx.x / 32] = h[a];
    __syncthreads();
    if (threadIdx.x >= 3)
        return;
    const int a = threadIdx.x;
    float bl = INFINITY, bh = -INFINITY;
    for (int w = 0; w < GRID_BOUNDS_THREADS / 32; w++)
        bl = fminf(bl, sl[a][w]), bh = fmaxf(bh, sh[a][w]);
    if (bl <= bh) { /* a block past the cloud's points saw none */
        atomicMax(lo + 3 * blockIdx.y + a, ~grid_order(bl));
        atomicMax(hi + 3 * blockIdx.y + a, grid_order(bh));
    }
}

/* A thread a cloud: its grid (grid_shape_of) from its bounds. */
static __global__ void grid_shape(const uint32_t *lo, const uint32_t *hi, int64_t clouds,
                                  int64_t cells, double rs, grid_cloud *out)
{
    const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= clouds)
        return;
    float low[3], high[3];
    for (int a = 0; a < 3; a++)
        low[a] = grid_unorder(~lo[3 * b + a]), high[a] = grid_unorder(hi[3 * b + a]);
    out[b] = grid_shape_of(low, high, cells, rs);
}

/* ---- the build in one launch: a block a cloud --------------------------------
 * For clouds of a small cell budget (GRID_BLOCK_CELLS, in shared memory) the
 * stages above run in one block a cloud: the bounds, the shape, the counts
 * in shared memory, their scan, the points gathered. It writes what the
 * stages write (clouds, starts, pts: a cloud's points from the sum of the
 * lengths of the clouds before it), one launch instead of six: at training
 * batches the stages' launches, not their work, were the build's time.
 * Up to 8,192 cells: at 16,384 one block a cloud was slower than the stages
 * spread over the GPU (H200: 0.092 against 0.059 ms at 1 x 16,384, 0.133
 * against 0.116 at 16 x 16,384; NOTES.md). */
enum { GRID_BLOCK_THREADS = 1024, GRID_BLOCK_CELLS = 8192, GRID_BLOCK_POINTS = 32768 };

static inline size_t grid_block_smem(int64_t cells)
{
    return (size_t)cells * sizeof(uint32_t);
}

/* Whether a grid of cells a cloud for sets is built a block a cloud: a
 * small budget (shared memory) and clouds a block reads quickly (kNN's
 * coarse grid of a lidar sweep has few cells and many points: stages). */
static inline int grid_one_block(int64_t cells, const grid_sets &sets)
{
    const int32_t most = sets.nsets > 1 && sets.n[1] > sets.n[0] ? sets.n[1] : sets.n[0];
    return cells <= GRID_BLOCK_CELLS && most <= GRID_BLOCK_POINTS;
}

/* The block's sum of v over its threads (every thread gets it). */
template <typename T> __device__ T grid_block_sum(T v, T *scratch /* 32 */)
{
    for (int d = 16; d > 0; d /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, d);
    __syncthreads(); /* scratch's last readers are done */
    if (threadIdx.x % 32 == 0)
        scratch[threadIdx.x / 32] = v;
    __syncthreads();
    T total = 0;
    for (unsigned w = 0; w < blockDim.x / 32; w++)
        total += scratch[w];
    return total;
}

static __global__ void __launch_bounds__(GRID_BLOCK_THREADS)
    grid_build_block(grid_sets sets, int64_t batch, int64_t cells, double rs, float limit,
                     int32_t *finite, grid_cloud *clouds, uint32_t *slots, uint32_t *starts,
                     float4 *pts)
{
    extern __shared__ uint32_t place[]; /* cells: counts, then where each cell starts */
    __shared__ float bound[2][3][GRID_BLOCK_THREADS / 32];
    __shared__ int64_t sums[GRID_BLOCK_THREADS / 32];
    __shared__ grid_cloud shape;
    const int64_t cloud = blockIdx.x, nclouds = sets.nsets * batch;
    const int set = cloud >= batch;
    const int64_t pair = cloud - (set ? batch : 0);
    const int32_t full = sets.n[set], n = grid_length(sets.len[set], pair, full);
    const float *r = sets.ref[set] + (size_t)pair * full * 3;
    const int64_t first = set ? batch * sets.n[0] + pair * full : pair * full; /* in slots */

    /* where this cloud's points start: the points of the clouds before it */
    int64_t before = 0;
    for (int64_t c = threadIdx.x; c < cloud; c += blockDim.x) {
        const int cs = c >= batch;
        before += grid_length(sets.len[cs], c - (cs ? batch : 0), sets.n[cs]);
    }
    const uint32_t base = (uint32_t)grid_block_sum<int64_t>(before, sums);

    float l[3], h[3];
    grid_warp_bounds(r, threadIdx.x, n, blockDim.x, limit, finite, l, h);
    if (threadIdx.x % 32 == 0)
        for (int a = 0; a < 3; a++)
            bound[0][a][threadIdx.x / 32] = l[a], bound[1][a][threadIdx.x / 32] = h[a];
    for (int64_t c = threadIdx.x; c < cells; c += blockDim.x)
        place[c] = 0;
    __syncthreads();
    if (threadIdx.x == 0) {
        float lo[3], hi[3];
        for (int a = 0; a < 3; a++) {
            lo[a] = INFINITY, hi[a] = -INFINITY;
            for (unsigned w = 0; w < blockDim.x / 32; w++)
                lo[a] = fminf(lo[a], bound[0][a][w]), hi[a] = fmaxf(hi[a], bound[1][a][w]);
            if (!(lo[a] <= hi[a])) /* no point: as the stages' bounds read back */
                lo[a] = hi[a] = NAN;
        }
        shape = grid_shape_of(lo, hi, cells, rs);
        clouds[cloud] = shape;
    }
    __syncthreads();
    const grid_cloud g = shape;

    for (int32_t j = threadIdx.x; j < n; j += blockDim.x) {
        const float *p = r + 3 * (size_t)j;
        int32_t c[3];
        for (int a = 0; a < 3; a++)
            c[a] = grid_cell(tiles_coord(p + a, limit, NULL), g.lo[a], g.inv_h, g.dim[a]);
        slots[first + j] = atomicAdd(place + ((int64_t)c[2] * g.dim[1] + c[1]) * g.dim[0] + c[0],
                                     1u);
    }
    __syncthreads();

    /* the counts' exclusive scan: a run of cells a thread, then the runs' */
    const int64_t per = (cells + blockDim.x - 1) / blockDim.x, c0 = threadIdx.x * per;
    const int64_t c1 = c0 + per < cells ? c0 + per : cells;
    uint32_t run = 0;
    for (int64_t c = c0; c < c1; c++)
        run += place[c];
    uint32_t incl = run;
    for (int d = 1; d < 32; d *= 2) {
        const uint32_t v = __shfl_up_sync(0xffffffffu, incl, d);
        if (threadIdx.x % 32 >= (unsigned)d)
            incl += v;
    }
    if (threadIdx.x % 32 == 31)
        sums[threadIdx.x / 32] = incl;
    __syncthreads();
    uint32_t at = base + incl - run;
    for (unsigned w = 0; w < threadIdx.x / 32; w++)
        at += (uint32_t)sums[w];
    for (int64_t c = c0; c < c1; c++) {
        const uint32_t count = place[c];
        place[c] = at;
        starts[cloud * cells + c] = at;
        at += count;
    }
    if (cloud == nclouds - 1 && threadIdx.x == blockDim.x - 1)
        starts[nclouds * cells] = at; /* every point's end */
    __syncthreads();

    for (int32_t j = threadIdx.x; j < n; j += blockDim.x) {
        const float *p = r + 3 * (size_t)j;
        const float x = tiles_coord(p, limit, NULL), y = tiles_coord(p + 1, limit, NULL),
                    z = tiles_coord(p + 2, limit, NULL);
        const int64_t cell = ((int64_t)grid_cell(z, g.lo[2], g.inv_h, g.dim[2]) * g.dim[1] +
                              grid_cell(y, g.lo[1], g.inv_h, g.dim[1])) * g.dim[0] +
                             grid_cell(x, g.lo[0], g.inv_h, g.dim[0]);
        pts[place[cell] + slots[first + j]] = make_float4(x, y, z, __int_as_float(j));
    }
}

/* Each point's cell key and its place in its cell (counting sort, first half). */
static __global__ void grid_count(grid_sets sets, int64_t batch, int64_t points, int64_t cells,
                                  const grid_cloud *clouds, float limit, uint32_t *keys,
                                  uint32_t *slots, uint32_t *counts)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= points)
        return;
    int set;
    int64_t pair;
    int32_t j;
    grid_point(sets, batch, i, &set, &pair, &j);
    if (j >= grid_length(sets.len[set], pair, sets.n[set])) {
        keys[i] = GRID_NO_KEY;
        return;
    }
    const int64_t cloud = set * batch + pair;
    const grid_cloud g = clouds[cloud];
    const float *p = sets.ref[set] + 3 * (pair * sets.n[set] + j);
    int32_t c[3];
    for (int a = 0; a < 3; a++)
        c[a] = grid_cell(tiles_coord(p + a, limit, NULL), g.lo[a], g.inv_h, g.dim[a]);
    const uint32_t key =
        (uint32_t)(cloud * cells + ((int64_t)c[2] * g.dim[1] + c[1]) * g.dim[0] + c[0]);
    keys[i] = key;
    slots[i] = atomicAdd(counts + key, 1u);
}

/* Every point to its place in cell order, with its index (second half). */
static __global__ void grid_scatter(grid_sets sets, int64_t batch, int64_t points,
                                    const uint32_t *keys, const uint32_t *slots,
                                    const uint32_t *starts, float limit, float4 *pts)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= points || keys[i] == GRID_NO_KEY)
        return;
    int set;
    int64_t pair;
    int32_t j;
    grid_point(sets, batch, i, &set, &pair, &j);
    const float *p = sets.ref[set] + 3 * (pair * sets.n[set] + j);
    pts[starts[keys[i]] + slots[i]] =
        make_float4(tiles_coord(p, limit, NULL), tiles_coord(p + 1, limit, NULL),
                    tiles_coord(p + 2, limit, NULL), __int_as_float(j));
}

static void grid_free(void *state)
{
    grid_scratch *s = (grid_scratch *)state;
    if (!s)
        return;
    cudaFree(s->clouds);
    cudaFree(s->zeroed);
    cudaFree(s->keys), cudaFree(s->slots);
    cudaFree(s->pts);
    cudaFree(s->starts);
    cudaFree(s->temp);
    free(s);
}

static int grid_alloc(grid_scratch *s)
{
    const int64_t clouds = s->sets.nsets * s->batch;
    const size_t points = (size_t)grid_points(s->sets, s->batch);
    PCB_CUDA_TRY(cudaMalloc((void **)&s->clouds, (size_t)clouds * sizeof *s->clouds));
    const size_t cells = (size_t)(clouds * s->cells + 1);
    PCB_CUDA_TRY(cudaMalloc((void **)&s->zeroed, (6 * (size_t)clouds + cells) * sizeof(uint32_t)));
    s->lo = s->zeroed, s->hi = s->lo + 3 * clouds, s->counts = s->hi + 3 * clouds;
    PCB_CUDA_TRY(cudaMalloc((void **)&s->keys, points * sizeof(uint32_t)));
    PCB_CUDA_TRY(cudaMalloc((void **)&s->slots, points * sizeof(uint32_t)));
    PCB_CUDA_TRY(cudaMalloc((void **)&s->starts, cells * sizeof(uint32_t)));
    PCB_CUDA_TRY(cudaMalloc((void **)&s->pts, points * sizeof(float4)));
    PCB_CUDA_TRY(cub::DeviceScan::ExclusiveSum(NULL, s->temp_bytes, s->counts, s->starts,
                                               (int64_t)cells));
    PCB_CUDA_TRY(cudaMalloc(&s->temp, s->temp_bytes));
    return PCB_OK;
}

/* Scratch for a batch of sets of these sizes (only their sizes are read),
 * the cells a cloud grid_budget's for per_cell points a cell: nothing
 * queued, nothing waited for. alloc 0 makes the sizes alone (ball query's
 * small clouds, which get no grid). */
static int grid_make(const char *who, const grid_sets *sets, int64_t batch, int64_t per_cell,
                     int alloc, grid_scratch **out)
{
    int64_t most = sets->n[0];
    if (sets->nsets > 1 && sets->n[1] > most)
        most = sets->n[1];
    const int64_t cells = grid_budget(most, per_cell);
    if (sets->nsets * batch * cells >= ((int64_t)1 << 32) ||
        grid_points(*sets, batch) >= ((int64_t)1 << 32))
        return pcb_fail(PCB_EUNSUPPORTED, "%s: %lld clouds of %lld cells exceed its 32-bit cell "
                        "keys", who, (long long)(sets->nsets * batch), (long long)cells);
    grid_scratch *s = (grid_scratch *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "%s: out of memory", who);
    s->batch = batch, s->cells = cells, s->sets = *sets;
    int rc = alloc ? grid_alloc(s) : PCB_OK;
    if (rc == PCB_OK && alloc && grid_one_block(cells, *sets)) /* set once, never while captured */
        rc = pcb_cuda_smem_at_least((const void *)grid_build_block, grid_block_smem(cells));
    if (rc != PCB_OK) {
        grid_free(s);
        return rc;
    }
    *out = s;
    return PCB_OK;
}

/* Queue the build over sets (the sizes s was made for) on st: the sets'
 * coordinates through tiles_coord (one not finite or beyond +-limit reads
 * as 0 and clears *finite). */
static int grid_build(grid_scratch *s, const grid_sets *sets, double rs, float limit,
                      int32_t *finite, cudaStream_t st)
{
    s->sets = *sets;
    const int64_t clouds = sets->nsets * s->batch, points = grid_points(*sets, s->batch);
    if (grid_one_block(s->cells, *sets)) {
        grid_build_block<<<(unsigned)clouds, GRID_BLOCK_THREADS, grid_block_smem(s->cells), st>>>(
            *sets, s->batch, s->cells, rs, limit, finite, s->clouds, s->slots, s->starts, s->pts);
        PCB_CUDA_LAUNCHED("grid_build_block");
        return PCB_OK;
    }
    const unsigned point_blocks = (unsigned)((points + 255) / 256);
    const int64_t cells = clouds * s->cells + 1;
    PCB_CUDA_TRY(
        cudaMemsetAsync(s->zeroed, 0, (size_t)(6 * clouds + cells) * sizeof(uint32_t), st));
    int64_t most = sets->n[0];
    if (sets->nsets > 1 && sets->n[1] > most)
        most = sets->n[1];
    const int64_t parts = (most + 4095) / 4096 < 64 ? (most + 4095) / 4096 : 64;
    grid_bounds<<<dim3((unsigned)parts, (unsigned)clouds), GRID_BOUNDS_THREADS, 0, st>>>(
        *sets, s->batch, limit, finite, s->lo, s->hi);
    PCB_CUDA_LAUNCHED("grid_bounds");
    grid_shape<<<(unsigned)((clouds + 127) / 128), 128, 0, st>>>(s->lo, s->hi, clouds, s->cells,
                                                                  rs, s->clouds);
    PCB_CUDA_LAUNCHED("grid_shape");
    grid_count<<<point_blocks, 256, 0, st>>>(*sets, s->batch, points, s->cells, s->clouds, limit,
                                             s->keys, s->slots, s->counts);
    PCB_CUDA_LAUNCHED("grid_count");
    PCB_CUDA_TRY(cub::DeviceScan::ExclusiveSum(s->temp, s->temp_bytes, s->counts, s->starts,
                                               cells, st));
    grid_scatter<<<point_blocks, 256, 0, st>>>(*sets, s->batch, points, s->keys, s->slots,
                                               s->starts, limit, s->pts);
    PCB_CUDA_LAUNCHED("grid_scatter");
    return PCB_OK;
}

/* ---- the nearest neighbour through the grid -------------------------------- */

/* One direction of a search: every query of qry (batch * nq * 3; a ragged
 * pair's first qry_len[pair]) against the clouds of the grid's set. */
typedef struct {
    const float *qry;
    int32_t nq;
    const int64_t *qry_len;
    int set;
    int32_t *idx;   /* batch * nq */
    float *dist2;   /* batch * nq, may be NULL */
    int64_t *idx64; /* batch * nq: the indices as int64 instead of idx (may be NULL) */
} grid_dir;

typedef struct {
    grid_dir dir[2];
} grid_dirs;

/* A thread a query: grid_search over its pair's cloud of the direction's set. */
static __global__ void __launch_bounds__(GRID_NEAREST_THREADS)
    grid_nearest(grid_view g, grid_dirs dirs, float limit, int32_t *finite)
{
    const grid_dir d = blockIdx.y ? dirs.dir[1] : dirs.dir[0];
    const int64_t i = (int64_t)blockIdx.x * GRID_NEAREST_THREADS + threadIdx.x;
    if (i >= g.batch * d.nq)
        return;
    const int64_t pair = i / d.nq;
    const int32_t qi = (int32_t)(i % d.nq);
    const int32_t nq = grid_length(d.qry_len, pair, d.nq);
    const int32_t n = grid_length(g.sets.len[d.set], pair, g.sets.n[d.set]);
    if (qi >= nq || n == 0) { /* a ragged pair's padding row, or nothing to search */
        tiles_put_index(d.idx, d.idx64, i, -1);
        if (d.dist2)
            d.dist2[i] = INFINITY;
        return;
    }
    const float *qp = d.qry + 3 * i;
    const float q[3] = {tiles_coord(qp, limit, finite), tiles_coord(qp + 1, limit, finite),
                        tiles_coord(qp + 2, limit, finite)};
    const int64_t cloud = d.set * g.batch + pair;
    const grid_cloud c = g.clouds[cloud]; /* in registers */
    float best;
    int32_t bi;
    grid_search(&c, g.starts + cloud * g.cells, (const float *)g.pts, q, &best, &bi, NULL);
    tiles_put_index(d.idx, d.idx64, i, bi);
    if (d.dist2)
        d.dist2[i] = best;
}

/* Queue the search of ndirs (1 or 2) directions over a built grid. */
static inline int grid_nearest_launch(const grid_scratch *s, const grid_dirs *dirs, int ndirs,
                                      float limit, int32_t *finite, cudaStream_t st)
{
    int64_t most = dirs->dir[0].nq;
    if (ndirs > 1 && dirs->dir[1].nq > most)
        most = dirs->dir[1].nq;
    const int64_t blocks = (s->batch * most + GRID_NEAREST_THREADS - 1) / GRID_NEAREST_THREADS;
    grid_nearest<<<dim3((unsigned)blocks, (unsigned)ndirs), GRID_NEAREST_THREADS, 0, st>>>(
        grid_view_of(s), *dirs, limit, finite);
    PCB_CUDA_LAUNCHED("grid_nearest");
    return PCB_OK;
}

#endif
