/* ball_cuda_grid.cu - ball query through a uniform grid a cloud, built for
 * the whole batch in one launch a stage: bounds (a block a cloud), cell
 * keys, one stable radix sort of (cloud, cell) keys, cell ranges and the
 * points gathered in cell order. A thread a centre then visits only the
 * cells that meet its ball (cells at least as wide as the radius: 27 at
 * most) and offers their inside points to its row.
 *
 * The sort is stable, so a cell lists its points in increasing index: for
 * FIRST a full row stops a cell at the first point after its last entry.
 * Cells are found in double precision with the radius widened by 1e-5, so
 * every point the float32 test d2 < r2 can accept lies in a visited cell;
 * the test itself is naive's, and the rows are naive's element for element.
 * Each cloud has a fixed budget of cells (a power of two >= n), so the host
 * allocates once a size and never waits for the bounds; a cloud wider than
 * its budget gets wider cells, slower but exact. */
#include <cub/device/device_radix_sort.cuh>

#include "ball_cuda.cuh"

enum { GRID_THREADS = 128, BOUNDS_THREADS = 256 };

typedef struct {
    double lo[3];
    double inv_h;
    int32_t dim[3];
} grid_cloud;

typedef struct {
    int64_t batch, n, nq, cells; /* cells a cloud: a power of two */
    int end_bit;
    grid_cloud *clouds;
    uint32_t *keys[2], *vals[2];
    float4 *pts;   /* batch * n in cell order: x, y, z and the index's bits */
    uint2 *ranges; /* batch * cells: [start, end) in pts */
    void *temp;
    size_t temp_bytes;
} grid_scratch;

/* The cell of coordinate x along an axis: clamped, so it is monotone in x. */
__device__ __forceinline__ int32_t grid_cell(double x, double lo, double inv_h, int32_t dim)
{
    double c = floor((x - lo) * inv_h);
    c = c < 0 ? 0 : c;
    c = c > dim - 1 ? dim - 1 : c;
    return (int32_t)c;
}

/* A block a cloud: its bounds, then the widest cell count within budget at
 * a cell no narrower than the search radius rs. */
__global__ void __launch_bounds__(BOUNDS_THREADS)
    grid_bounds(const float *ref, int32_t n, int64_t cells, double rs, float limit,
                int32_t *finite, grid_cloud *clouds)
{
    __shared__ float lo[3][BOUNDS_THREADS], hi[3][BOUNDS_THREADS];
    const float *r = ref + (size_t)blockIdx.x * n * 3;
    float l[3] = {INFINITY, INFINITY, INFINITY}, h[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int32_t j = threadIdx.x; j < n; j += BOUNDS_THREADS)
        for (int a = 0; a < 3; a++) {
            const float v = tiles_coord(r + 3 * (size_t)j + a, limit, finite);
            l[a] = fminf(l[a], v), h[a] = fmaxf(h[a], v);
        }
    for (int a = 0; a < 3; a++)
        lo[a][threadIdx.x] = l[a], hi[a][threadIdx.x] = h[a];
    __syncthreads();
    for (int s = BOUNDS_THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            for (int a = 0; a < 3; a++) {
                lo[a][threadIdx.x] = fminf(lo[a][threadIdx.x], lo[a][threadIdx.x + s]);
                hi[a][threadIdx.x] = fmaxf(hi[a][threadIdx.x], hi[a][threadIdx.x + s]);
            }
        __syncthreads();
    }
    if (threadIdx.x)
        return;
    double ext[3], vol = 1, wide = 0;
    for (int a = 0; a < 3; a++) {
        ext[a] = (double)hi[a][0] - lo[a][0];
        vol *= ext[a] + rs;
        wide = fmax(wide, ext[a]);
    }
    double cell = fmax(rs, fmax(cbrt(vol / (double)cells), wide / (double)cells));
    grid_cloud g;
    for (;; cell *= 1.125) {
        double total = 1;
        for (int a = 0; a < 3; a++)
            total *= floor(ext[a] / cell) + 1;
        if (total <= (double)cells)
            break;
    }
    for (int a = 0; a < 3; a++) {
        g.lo[a] = lo[a][0];
        g.dim[a] = (int32_t)(floor(ext[a] / cell) + 1);
    }
    g.inv_h = 1.0 / cell;
    clouds[blockIdx.x] = g;
}

__global__ void grid_keys(const float *ref, int32_t n, int64_t points, int64_t cells,
                          const grid_cloud *clouds, float limit, uint32_t *keys, uint32_t *vals)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= points)
        return;
    const int64_t b = i / n;
    const grid_cloud g = clouds[b];
    int32_t c[3];
    for (int a = 0; a < 3; a++)
        c[a] = grid_cell(tiles_coord(ref + 3 * i + a, limit, NULL), g.lo[a], g.inv_h, g.dim[a]);
    keys[i] = (uint32_t)(b * cells + ((int64_t)c[2] * g.dim[1] + c[1]) * g.dim[0] + c[0]);
    vals[i] = (uint32_t)(i - b * n);
}

__global__ void grid_cells(const float *ref, int32_t n, int64_t points, int64_t cells,
                           const uint32_t *keys, const uint32_t *vals, float limit, float4 *pts,
                           uint2 *ranges)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= points)
        return;
    const uint32_t key = keys[i], j = vals[i];
    if (i == 0 || keys[i - 1] != key)
        ranges[key].x = (uint32_t)i;
    if (i == points - 1 || keys[i + 1] != key)
        ranges[key].y = (uint32_t)(i + 1);
    const float *p = ref + ((size_t)(key / cells) * n + j) * 3;
    pts[i] = make_float4(tiles_coord(p, limit, NULL), tiles_coord(p + 1, limit, NULL),
                         tiles_coord(p + 2, limit, NULL), __int_as_float((int32_t)j));
}

/* Squared distance in double from x to the interval of cells [c, c + 1). */
__device__ __forceinline__ double grid_gap(double x, double lo, double h, int32_t c, int32_t dim)
{
    const double a = c == 0 ? -INFINITY : lo + c * h, b = c == dim - 1 ? INFINITY : lo + (c + 1) * h;
    const double g = x < a ? a - x : x > b ? x - b : 0;
    return g * g;
}

template <int K>
__global__ void __launch_bounds__(GRID_THREADS)
    grid_query(const float *ctr, int64_t centres, int32_t nq, int64_t cells,
               const grid_cloud *clouds, const float4 *pts, const uint2 *ranges, int32_t k,
               float r2, double rs, bool by_index, float limit, int32_t *finite, int32_t *idx,
               float *dist2, int32_t *count)
{
    const int64_t c = (int64_t)blockIdx.x * GRID_THREADS + threadIdx.x;
    if (c >= centres)
        return;
    const int64_t b = c / nq;
    const grid_cloud g = clouds[b];
    const float *q = ctr + 3 * c;
    const float qx = tiles_coord(q, limit, finite), qy = tiles_coord(q + 1, limit, finite),
                qz = tiles_coord(q + 2, limit, finite);
    const double h = 1.0 / g.inv_h, rs2 = rs * rs;
    int32_t lo[3], hi[3];
    const float qv[3] = {qx, qy, qz};
    for (int a = 0; a < 3; a++) {
        lo[a] = grid_cell((double)qv[a] - rs, g.lo[a], g.inv_h, g.dim[a]);
        hi[a] = grid_cell((double)qv[a] + rs, g.lo[a], g.inv_h, g.dim[a]);
    }
    ball_row<K> row;
    row.len = 0;
    const uint2 *cloud_ranges = ranges + b * cells;
    for (int32_t z = lo[2]; z <= hi[2]; z++) {
        const double gz = grid_gap(qz, g.lo[2], h, z, g.dim[2]);
        for (int32_t y = lo[1]; y <= hi[1]; y++) {
            const double gy = gz + grid_gap(qy, g.lo[1], h, y, g.dim[1]);
            for (int32_t x = lo[0]; x <= hi[0]; x++) {
                if (gy + grid_gap(qx, g.lo[0], h, x, g.dim[0]) > rs2)
                    continue; /* the cell does not meet the ball */
                const uint2 span = cloud_ranges[((int64_t)z * g.dim[1] + y) * g.dim[0] + x];
                for (uint32_t i = span.x; i < span.y; i++) {
                    const float4 p = pts[i];
                    const float e = sp_d2(SP_SUB(qx, p.x), SP_SUB(qy, p.y), SP_SUB(qz, p.z));
                    if (e < r2 && !ball_offer<K>(row, k, by_index, e, __float_as_int(p.w)) &&
                        by_index)
                        break; /* the rest of the cell comes later in index order */
                }
            }
        }
    }
    ball_write<K>(row, (size_t)c, k, idx, dist2, count);
}

static void grid_free(void *state)
{
    grid_scratch *s = (grid_scratch *)state;
    if (!s)
        return;
    cudaFree(s->clouds);
    cudaFree(s->keys[0]), cudaFree(s->keys[1]);
    cudaFree(s->vals[0]), cudaFree(s->vals[1]);
    cudaFree(s->pts);
    cudaFree(s->ranges);
    cudaFree(s->temp);
    free(s);
}

static int grid_alloc(grid_scratch *s)
{
    const size_t points = (size_t)(s->batch * s->n);
    PCB_CUDA_TRY(cudaMalloc((void **)&s->clouds, (size_t)s->batch * sizeof *s->clouds));
    for (int i = 0; i < 2; i++) {
        PCB_CUDA_TRY(cudaMalloc((void **)&s->keys[i], points * sizeof(uint32_t)));
        PCB_CUDA_TRY(cudaMalloc((void **)&s->vals[i], points * sizeof(uint32_t)));
    }
    PCB_CUDA_TRY(cudaMalloc((void **)&s->pts, points * sizeof(float4)));
    PCB_CUDA_TRY(cudaMalloc((void **)&s->ranges, (size_t)(s->batch * s->cells) * sizeof(uint2)));
    PCB_CUDA_TRY(cub::DeviceRadixSort::SortPairs(NULL, s->temp_bytes, s->keys[0], s->keys[1],
                                                 s->vals[0], s->vals[1], (int64_t)points, 0,
                                                 s->end_bit));
    PCB_CUDA_TRY(cudaMalloc(&s->temp, s->temp_bytes));
    return PCB_OK;
}

/* Scratch for a task's sizes: nothing queued, nothing waited for. */
static int grid_make(const pcb_task *t, void **state)
{
    int64_t cells = 64;
    while (cells < t->n)
        cells *= 2;
    int end_bit = 0;
    while (end_bit < 64 && ((int64_t)1 << end_bit) < t->batch * cells)
        end_bit++;
    if (end_bit > 32)
        return pcb_fail(PCB_EUNSUPPORTED, "ball cuda_grid: %lld clouds of %lld cells exceed its "
                        "32-bit cell keys", (long long)t->batch, (long long)cells);
    grid_scratch *s = (grid_scratch *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "ball cuda_grid: out of memory");
    s->batch = t->batch, s->n = t->n, s->nq = t->nq, s->cells = cells, s->end_bit = end_bit;
    int rc = grid_alloc(s);
    if (rc != PCB_OK) {
        grid_free(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static int grid_launch(void *state, const pcb_task *t, pcb_result *out, cudaStream_t st)
{
    grid_scratch *s = (grid_scratch *)state;
    const int64_t points = t->batch * t->n, centres = t->batch * t->nq;
    const float limit = (float)PCB_NN_MAX_COORD, r2 = pcb_ball_r2(t->radius);
    const double rs = (double)(float)t->radius * (1 + 1e-5);
    const unsigned point_blocks = (unsigned)((points + 255) / 256);
    grid_bounds<<<(unsigned)t->batch, BOUNDS_THREADS, 0, st>>>(t->a, (int32_t)t->n, s->cells, rs,
                                                               limit, out->finite, s->clouds);
    PCB_CUDA_LAUNCHED("grid_bounds");
    grid_keys<<<point_blocks, 256, 0, st>>>(t->a, (int32_t)t->n, points, s->cells, s->clouds,
                                            limit, s->keys[0], s->vals[0]);
    PCB_CUDA_LAUNCHED("grid_keys");
    PCB_CUDA_TRY(cub::DeviceRadixSort::SortPairs(s->temp, s->temp_bytes, s->keys[0], s->keys[1],
                                                 s->vals[0], s->vals[1], points, 0, s->end_bit,
                                                 st));
    PCB_CUDA_TRY(cudaMemsetAsync(s->ranges, 0, (size_t)(t->batch * s->cells) * sizeof(uint2), st));
    grid_cells<<<point_blocks, 256, 0, st>>>(t->a, (int32_t)t->n, points, s->cells, s->keys[1],
                                             s->vals[1], limit, s->pts, s->ranges);
    PCB_CUDA_LAUNCHED("grid_cells");
    const unsigned blocks = (unsigned)((centres + GRID_THREADS - 1) / GRID_THREADS);
#define GRID_CALL(K)                                                                           \
    (grid_query<K><<<blocks, GRID_THREADS, 0, st>>>(                                           \
         t->b, centres, (int32_t)t->nq, s->cells, s->clouds, s->pts, s->ranges, (int32_t)t->k, \
         r2, rs, t->select == PCB_BALL_FIRST, limit, out->finite, out->index, out->dist2,      \
         out->count),                                                                          \
     0)
    (void)BALL_DISPATCH_K(t->k, GRID_CALL);
#undef GRID_CALL
    PCB_CUDA_LAUNCHED("grid_query");
    return PCB_OK;
}

static int grid_prepare(const pcb_task *t, void **state)
{
    return ball_cuda_prepare(t, state, "cuda_grid", grid_launch, grid_make, grid_free);
}

extern "C" const pcb_impl pcb_ball_cuda_grid;

static int grid_run_device(const pcb_task *t, pcb_result *out)
{
    static const pcb_cuda_maker maker = {&pcb_ball_cuda_grid, grid_make, grid_free, grid_launch};
    return pcb_cuda_run_cached(&maker, t, out);
}

extern "C" const pcb_impl pcb_ball_cuda_grid = {
    .name = "cuda_grid",
    .problem = PCB_BALL,
    .device = PCB_CUDA,
    .promise = {.exact = 1, .max_gap = 0, .canonical = 1, .known_defect = NULL},
    .limits = {.max_n = 0, .max_m = 0, .max_batch = 0, .max_k = BALL_CUDA_MAX_K},
    .cost = PCB_COST_INDEXED,
    .reference = 0,
    .gap_option = 0,
    .summary = "a uniform grid a cloud built for the whole batch (one sort), a thread a centre "
               "visiting the cells that meet its ball; first stops a cell past its row",
    .available = pcb_cuda_available,
    .prepare = grid_prepare,
    .compute = ball_cuda_compute,
    .sync = nn_cuda_sync,
    .fetch = ball_cuda_fetch,
    .release = ball_cuda_release,
    .counters = NULL,
    .device_ms = nn_cuda_device_ms,
    .run_device = grid_run_device,
    .device_index = NULL,
};
