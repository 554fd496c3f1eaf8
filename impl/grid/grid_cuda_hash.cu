/* grid_cuda_hash.cu - grid sampling by a hash table: up to 128 clouds a
 * table, each point's key (its cloud's number above its voxel, grid.h's 19
 * bits an axis) inserted by open addressing (linear probing, a 64-bit
 * compare-and-swap), the table's slots counting their points and keeping
 * the lowest index (first), or the least squared distance to the centre
 * (nearest) or the least draw (random), then the index at it; the thread
 * that claims a slot appends its key to the list of occupied voxels. The
 * answer lists the voxels sorted, so that list (V keys, not the n points')
 * is sorted with CUB's radix sort, and V is read on the host first: one
 * wait a table. So host runs only (no run_device: a device run must not
 * wait). The keys are the coordinates themselves, so no two voxels can
 * share a slot's key (a hash collision only lengthens a probe). MEAN is
 * unsupported: its contract sums a voxel's points in index order. */
#include <cub/cub.cuh>

#include "grid.h"
#include "grid_bounds.cuh"
#include "impl/cuda_util.h"

extern "C" const pcb_impl pcb_grid_cuda_hash;

enum { THREADS = 256 };
#define EMPTY (~(uint64_t)0) /* no key has every bit set: the cloud's number is below 128 */

typedef struct {
    pcb_task task;
    pcb_cuda_ctx ctx;
    float *xyz;
    int32_t *index, *count; /* the answer on the device */
    int32_t *bounds;
    frame *frames;
    int32_t *bad;
    uint64_t capacity;           /* slots, a power of two >= 2 x the points of 128 clouds */
    uint64_t *table;             /* each slot's key, EMPTY when free */
    int32_t *hits, *keep;        /* each slot's points and kept point */
    unsigned long long *best;    /* each slot's least squared distance's bits, or draw */
    int32_t *slot;               /* each point's slot */
    int32_t *voxels;             /* the occupied voxels listed (their count) */
    uint64_t *keys[2];           /* the listed voxels' keys, before and after the sort */
    int32_t *vals[2];            /* their slots */
    int32_t *row;                /* each slot's voxel row */
    void *temp;
    size_t temp_bytes;
} hash_state;

static __device__ __forceinline__ uint64_t spread_hash(uint64_t k)
{
    k ^= k >> 33; /* a 64-bit finalizer (MurmurHash3's): neighbouring voxels far apart */
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    return k ^ (k >> 33);
}

/* A thread a point: its key into the table (linear probing), its slot's
 * count and kept point (first: the lowest index; nearest and random: the
 * least distance's bits or draw, the index in a second pass); a thread that
 * claims a free slot lists it. */
__global__ void hash_insert_kernel(const float *xyz, int64_t n, int64_t first, int64_t count,
                                   double3 cell, int select, uint64_t seed, const frame *frames,
                                   uint64_t capacity, uint64_t *table, int32_t *hits,
                                   int32_t *keep, unsigned long long *best, int32_t *slot,
                                   int32_t *voxels, uint64_t *keys, int32_t *vals)
{
    const int64_t g = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    if (g >= count)
        return;
    const int64_t local = g / n, i = g % n, c = first + local;
    const frame f = frames[c];
    if (!f.ok)
        return;
    const float *p = xyz + (c * n + i) * 3;
    const uint64_t key = voxel_key(p, f, cell, local);
    uint64_t s = spread_hash(key) & (capacity - 1);
    for (;;) {
        const uint64_t was = atomicCAS((unsigned long long *)&table[s], (unsigned long long)EMPTY,
                                       (unsigned long long)key);
        if (was == EMPTY) { /* claimed: list it */
            const int32_t v = atomicAdd(voxels, 1);
            keys[v] = key, vals[v] = (int32_t)s;
            break;
        }
        if (was == key)
            break;
        s = (s + 1) & (capacity - 1);
    }
    slot[g] = (int32_t)s;
    atomicAdd(&hits[s], 1);
    if (select == PCB_BALL_FIRST) {
        atomicMin(&keep[s], (int32_t)i);
        return;
    }
    if (select == PCB_GRID_RANDOM) {
        atomicMin(&best[s], (unsigned long long)pcb_grid_draw(seed, i));
        return;
    }
    const double cells[3] = {cell.x, cell.y, cell.z};
    double v[3];
    pcb_grid_key_voxel(key, f.low, v);
    /* a squared distance is >= 0: its bits order as the values do */
    atomicMin(&best[s], (unsigned long long)__double_as_longlong(centre_d2(p, v, f, cells)));
}

/* nearest, random: a thread a point at its slot's least distance or draw
 * offers its index */
__global__ void hash_keep_kernel(const float *xyz, int64_t n, int64_t first, int64_t count,
                                    double3 cell, int select, uint64_t seed, const frame *frames,
                                    const uint64_t *table,
                                    const unsigned long long *best, const int32_t *slot,
                                    int32_t *keep)
{
    const int64_t g = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    if (g >= count)
        return;
    const int64_t local = g / n, i = g % n, c = first + local;
    const frame f = frames[c];
    if (!f.ok)
        return;
    const int32_t s = slot[g];
    if (select == PCB_GRID_RANDOM) {
        if (pcb_grid_draw(seed, i) == best[s])
            atomicMin(&keep[s], (int32_t)i); /* the one point of the least draw */
        return;
    }
    const uint64_t key = table[s];
    const double cells[3] = {cell.x, cell.y, cell.z};
    double v[3];
    pcb_grid_key_voxel(key, f.low, v);
    const double d2 = centre_d2(xyz + (c * n + i) * 3, v, f, cells);
    if ((unsigned long long)__double_as_longlong(d2) == best[s])
        atomicMin(&keep[s], (int32_t)i); /* ties to the lowest index */
}

/* A thread a sorted voxel: its row (its place among its cloud's, the
 * clouds' voxels in order, so a cloud's first is where the number changes)
 * and its slot's point and count. */
__global__ void hash_rows_kernel(int64_t n, int64_t first, int32_t voxels, const uint64_t *keys,
                                 const int32_t *vals, const int32_t *hits, const int32_t *keep,
                                 int32_t *row, int32_t *index, int32_t *counts)
{
    const int32_t j = (int32_t)(blockIdx.x * THREADS + threadIdx.x);
    if (j >= voxels)
        return;
    const uint64_t local = keys[j] >> VOXEL_BITS;
    int32_t lo = 0, hi = j; /* the cloud's first voxel: a binary search of the sorted keys */
    while (lo < hi) {
        const int32_t mid = (lo + hi) / 2;
        if (keys[mid] >> VOXEL_BITS < local)
            lo = mid + 1;
        else
            hi = mid;
    }
    const int32_t r = j - lo, s = vals[j];
    const int64_t c = first + (int64_t)local;
    row[s] = r;
    index[c * n + r] = keep[s];
    counts[c * n + r] = hits[s];
}

/* A thread a point: its voxel's row (the inverse map). */
__global__ void hash_inverse_kernel(int64_t n, int64_t batch, int64_t first, int64_t count,
                                    const frame *frames, const int32_t *slot, const int32_t *row,
                                    int32_t *index)
{
    const int64_t g = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    if (g >= count)
        return;
    const int64_t c = first + g / n, i = g % n;
    index[batch * n + c * n + i] = frames[c].ok ? row[slot[g]] : -1;
}

static unsigned blocks_of(int64_t count)
{
    return (unsigned)((count + THREADS - 1) / THREADS);
}

static void hash_release(void *state)
{
    hash_state *s = (hash_state *)state;
    if (!s)
        return;
    pcb_cuda_ctx_free(&s->ctx); /* waits for queued work first */
    cudaFree(s->xyz), cudaFree(s->index), cudaFree(s->count), cudaFree(s->bounds);
    cudaFree(s->frames), cudaFree(s->bad), cudaFree(s->table), cudaFree(s->hits);
    cudaFree(s->keep), cudaFree(s->best), cudaFree(s->slot), cudaFree(s->voxels);
    cudaFree(s->keys[0]), cudaFree(s->keys[1]), cudaFree(s->vals[0]), cudaFree(s->vals[1]);
    cudaFree(s->row), cudaFree(s->temp);
    free(s);
}

static int hash_prepare(const pcb_task *t, void **state)
{
    if (t->lengths_a)
        return pcb_fail(PCB_EUNSUPPORTED, "grid cuda_hash: a ragged batch runs cloud by cloud");
    if (t->select == PCB_GRID_MEAN) /* atomics would sum a voxel's points in any order */
        return pcb_fail(PCB_EUNSUPPORTED, "grid cuda_hash: select mean sums a voxel's points in "
                        "index order, which the table does not keep (cuda_sort does)");
    hash_state *s = (hash_state *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "grid cuda_hash: out of memory");
    s->task = *t;
    const int64_t points = t->batch * t->n;
    const int64_t chunk = (t->batch < (int64_t)MAX_CLOUDS ? t->batch : (int64_t)MAX_CLOUDS) * t->n;
    if (chunk > INT32_MAX / 2) {
        free(s);
        return pcb_fail(PCB_EUNSUPPORTED, "grid cuda_hash: %lld points a table, at most %d",
                        (long long)chunk, INT32_MAX / 2);
    }
    for (s->capacity = 1024; s->capacity < 2 * (uint64_t)chunk; s->capacity <<= 1)
        ;
    int rc = pcb_cuda_ctx_init(&s->ctx);
    cudaError_t e = cudaSuccess;
    if (rc == PCB_OK)
        e = cub::DeviceRadixSort::SortPairs(NULL, s->temp_bytes, (uint64_t *)NULL,
                                            (uint64_t *)NULL, (int32_t *)NULL, (int32_t *)NULL,
                                            (int)chunk);
#define HASH_ALLOC(ptr, count)                                                                 \
    if (rc == PCB_OK && e == cudaSuccess)                                                      \
        e = cudaMalloc((void **)&(ptr), (size_t)(count) * sizeof *(ptr));
    HASH_ALLOC(s->xyz, points * 3) HASH_ALLOC(s->index, 2 * points) HASH_ALLOC(s->count, points)
    HASH_ALLOC(s->bounds, t->batch * 6) HASH_ALLOC(s->frames, t->batch) HASH_ALLOC(s->bad, 1)
    HASH_ALLOC(s->table, s->capacity) HASH_ALLOC(s->hits, s->capacity)
    HASH_ALLOC(s->keep, s->capacity) HASH_ALLOC(s->row, s->capacity)
    HASH_ALLOC(s->slot, chunk) HASH_ALLOC(s->voxels, 1)
    HASH_ALLOC(s->keys[0], chunk) HASH_ALLOC(s->keys[1], chunk)
    HASH_ALLOC(s->vals[0], chunk) HASH_ALLOC(s->vals[1], chunk)
    if (t->select != PCB_BALL_FIRST)
        HASH_ALLOC(s->best, s->capacity)
#undef HASH_ALLOC
    if (rc == PCB_OK && e == cudaSuccess)
        e = cudaMalloc(&s->temp, s->temp_bytes ? s->temp_bytes : 1);
    if (rc == PCB_OK && e == cudaSuccess)
        e = cudaMemcpy(s->xyz, t->a, (size_t)points * 3 * sizeof *s->xyz, cudaMemcpyHostToDevice);
    if (rc == PCB_OK && e != cudaSuccess)
        rc = pcb_cuda_fail(e, "grid cuda_hash: scratch", __FILE__, __LINE__);
    if (rc != PCB_OK) {
        hash_release(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static int hash_compute(void *state)
{
    hash_state *s = (hash_state *)state;
    const pcb_task *t = &s->task;
    const int64_t n = t->n, batch = t->batch;
    const double3 cell = make_double3(t->cell[0], t->cell[1], t->cell[2]);
    const double3 origin = make_double3(t->origin[0], t->origin[1], t->origin[2]);
    const int select = t->select; /* nearest and random take a second pass */
    cudaStream_t st = s->ctx.stream;
    int rc = pcb_cuda_begin(&s->ctx);
    if (rc != PCB_OK)
        return rc;
    PCB_CUDA_TRY(cudaMemsetAsync(s->bad, 0, sizeof *s->bad, st));
    PCB_CUDA_TRY(cudaMemsetAsync(s->index, 0xff, (size_t)(batch * n) * sizeof *s->index, st));
    PCB_CUDA_TRY(cudaMemsetAsync(s->count, 0, (size_t)(batch * n) * sizeof *s->count, st));
    if ((rc = pcb_grid_bounds(s->xyz, n, batch, NULL, s->bounds, NULL, st)) != PCB_OK)
        return rc;
    frame_kernel<<<blocks_of(batch), THREADS, 0, st>>>(s->bounds, batch, cell, origin,
                                                       t->origin_given, s->frames, s->bad, NULL);
    PCB_CUDA_LAUNCHED("frame_kernel");
    for (int64_t first = 0; first < batch; first += MAX_CLOUDS) {
        const int64_t clouds = batch - first < (int64_t)MAX_CLOUDS ? batch - first : (int64_t)MAX_CLOUDS;
        const int64_t count = clouds * n;
        const unsigned blocks = blocks_of(count);
        PCB_CUDA_TRY(cudaMemsetAsync(s->table, 0xff, s->capacity * sizeof *s->table, st));
        PCB_CUDA_TRY(cudaMemsetAsync(s->hits, 0, s->capacity * sizeof *s->hits, st));
        PCB_CUDA_TRY(cudaMemsetAsync(s->keep, 0x7f, s->capacity * sizeof *s->keep, st));
        if (select != PCB_BALL_FIRST)
            PCB_CUDA_TRY(cudaMemsetAsync(s->best, 0xff, s->capacity * sizeof *s->best, st));
        PCB_CUDA_TRY(cudaMemsetAsync(s->voxels, 0, sizeof *s->voxels, st));
        hash_insert_kernel<<<blocks, THREADS, 0, st>>>(
            s->xyz, n, first, count, cell, select, t->seed, s->frames, s->capacity, s->table,
            s->hits, s->keep, s->best, s->slot, s->voxels, s->keys[0], s->vals[0]);
        PCB_CUDA_LAUNCHED("hash_insert_kernel");
        if (select != PCB_BALL_FIRST) {
            hash_keep_kernel<<<blocks, THREADS, 0, st>>>(s->xyz, n, first, count, cell,
                                                            select, t->seed, s->frames,
                                                            s->table, s->best, s->slot, s->keep);
            PCB_CUDA_LAUNCHED("hash_keep_kernel");
        }
        int32_t voxels = 0; /* the one wait: the sort's size is the host's */
        PCB_CUDA_TRY(cudaMemcpyAsync(&voxels, s->voxels, sizeof voxels, cudaMemcpyDeviceToHost, st));
        PCB_CUDA_TRY(cudaStreamSynchronize(st));
        if (voxels == 0) /* no cloud of the table fit its keys */
            continue;
        int end_bit = VOXEL_BITS; /* the clouds' numbers above the voxels */
        while ((int64_t)1 << (end_bit - VOXEL_BITS) < clouds)
            end_bit++;
        size_t bytes = s->temp_bytes;
        PCB_CUDA_TRY(cub::DeviceRadixSort::SortPairs(s->temp, bytes, s->keys[0], s->keys[1],
                                                     s->vals[0], s->vals[1], voxels, 0, end_bit,
                                                     st));
        hash_rows_kernel<<<blocks_of(voxels), THREADS, 0, st>>>(
            n, first, voxels, s->keys[1], s->vals[1], s->hits, s->keep, s->row, s->index,
            s->count);
        PCB_CUDA_LAUNCHED("hash_rows_kernel");
        hash_inverse_kernel<<<blocks, THREADS, 0, st>>>(n, batch, first, count, s->frames,
                                                        s->slot, s->row, s->index);
        PCB_CUDA_LAUNCHED("hash_inverse_kernel");
    }
    return pcb_cuda_end(&s->ctx);
}

static int hash_sync(void *state)
{
    return pcb_cuda_sync(&((hash_state *)state)->ctx);
}

static int hash_fetch(void *state, pcb_result *out)
{
    hash_state *s = (hash_state *)state;
    return grid_host_fetch("grid cuda_hash", s->bad, s->index, s->count, NULL,
                           (size_t)(s->task.batch * s->task.n), out);
}

static int hash_device_ms(void *state, double *ms)
{
    return pcb_cuda_elapsed_ms(&((hash_state *)state)->ctx, ms);
}

extern "C" const pcb_impl pcb_grid_cuda_hash = {
    .name = "cuda_hash",
    .problem = PCB_GRID,
    .device = PCB_CUDA,
    .promise = {.exact = 1},
    .cost = PCB_COST_INDEXED,
    .summary = "a hash table of the voxel keys (open addressing), then a radix sort of the "
               "occupied voxels only; one wait for their count, host runs only",
    .available = pcb_cuda_available,
    .prepare = hash_prepare,
    .compute = hash_compute,
    .sync = hash_sync,
    .fetch = hash_fetch,
    .release = hash_release,
    .device_ms = hash_device_ms,
};
