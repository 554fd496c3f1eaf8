/* cuda_pruned/codes.cuh - step 1 of fps_cuda_pruned.cu: the spatial order.
 * A block a cloud reduces its bounding box to a Morton frame (cloud_frame)
 * and computes its points' codes keyed by the cloud, for one CUB radix sort
 * of the batch (fps_codes); for the run kernel's small clouds one block
 * computes the codes and sorts them itself (fps_sorted_codes), and takes
 * the cloud's first samples by dp beside or before the sort (open_cloud).
 * One compile unit: fps_cuda_pruned.cu includes the phases in order, after
 * fps_args. */
#pragma once

/* The box's six bounds across the warp's lanes, all six at once. */
__device__ __forceinline__ void warp_bounds(float *v)
{
    for (int o = 16; o > 0; o >>= 1)
#pragma unroll
        for (int d = 0; d < 6; d++) {
            const float u = __shfl_xor_sync(0xffffffffu, v[d], o);
            v[d] = d < 3 ? fminf(v[d], u) : fmaxf(v[d], u);
        }
}

enum { FRAME_SCRATCH = 6 * 32 }; /* floats: a warp's six bounds */

/* The cloud's Morton frame (fps_frame of its bounding box), in every thread
 * of the block; lo and hi start as the thread's share of the box. The six
 * bounds go through one block reduction (two barriers), not six. */
__device__ void cloud_frame(float *lo, float *hi, float *scratch, float *frame)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    float v[6] = {lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]};
    warp_bounds(v);
    if (lane == 0)
#pragma unroll
        for (int d = 0; d < 6; d++)
            scratch[32 * d + warp] = v[d];
    __syncthreads();
#pragma unroll
    for (int d = 0; d < 6; d++)
        v[d] = lane < warps ? scratch[32 * d + lane] : d < 3 ? INFINITY : -INFINITY;
    warp_bounds(v);
    for (int d = 0; d < 3; d++)
        lo[d] = v[d], hi[d] = v[3 + d];
    if (threadIdx.x == 0)
        fps_frame(lo, hi, frame);
    __syncthreads();
}

__global__ void __launch_bounds__(CODE_THREADS) fps_codes(const float *xyz, int n, int bits,
                                                     int runs, unsigned long long *keys,
                                                     uint32_t *vals)
{
    __shared__ float scratch[FRAME_SCRATCH];
    __shared__ float frame[4];
    const int64_t cloud = blockIdx.x;
    const float *p = xyz + cloud * n * 3;
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int64_t k = threadIdx.x; k < n; k += CODE_THREADS)
        for (int d = 0; d < 3; d++) {
            lo[d] = fminf(lo[d], p[3 * k + d]);
            hi[d] = fmaxf(hi[d], p[3 * k + d]);
        }
    cloud_frame(lo, hi, scratch, frame);
    const int hilbert = runs && fps_runs_hilbert(lo, hi);
    for (int64_t k = threadIdx.x; k < n; k += CODE_THREADS) {
        keys[cloud * n + k] =
            (unsigned long long)cloud << CODE_BITS |
            (runs ? fps_run_code(frame, hilbert, p[3 * k], p[3 * k + 1], p[3 * k + 2], bits)
                  : sp_morton(frame, p[3 * k], p[3 * k + 1], p[3 * k + 2], bits));
        vals[cloud * n + k] = (uint32_t)k;
    }
}

/* Small clouds the run kernel takes: codes (FPS_RUNS_MORTON_SMALL bits an
 * axis) and the sort in one block a cloud, no device-wide sort (its seven
 * launches took 0.05 ms at 10,000 points). A thread holds points
 * t * SORT_ITEMS ..., so the block's order is index order and the stable
 * sort keeps equal codes in it; slots past n sort last (the largest key,
 * and after every point in index order). The sort leaves rank k in thread
 * k % CODE_THREADS, so the order is stored coalesced; a thread's points are
 * read as float4 where aligned. It lets the sampler launch at once (the
 * sampler waits for it before reading the order). */
enum {
    SORT_ITEMS = (FPS_RUNS_SMALL_N + CODE_THREADS - 1) / CODE_THREADS,
    SMALL_CODE_BITS = 3 * FPS_RUNS_MORTON_SMALL
};
static_assert(3 * SORT_ITEMS % 4 == 0 && FPS_RUNS_MORTON_SMALL <= 10,
              "a thread's points as float4, codes in 32 bits");
typedef cub::BlockRadixSort<uint32_t, CODE_THREADS, SORT_ITEMS, uint32_t> block_sort;

/* The opening (fps_runs_opening): samples 1 .. a.opening - 1 by dp over the
 * cloud's points in the block's registers (SORT_ITEMS a thread, in index
 * order), one barrier a step: a thread lowers its minima and keeps its
 * farthest (a later slot only when strictly farther: the lowest index among
 * ties; padding slots copy point n - 1 and lose its ties; warps of padding
 * alone skip the update, which pays beside the sort), a warp takes the
 * largest distance bits and, among the lanes holding them, the lowest index
 * (a redux each), and the warps' posts, double buffered, meet the same way
 * in every warp. Samples 1 .. opening - 1 go to out (the sampler writes the
 * start), the minima left (samples 0 .. opening - 2 applied) to a.opened by
 * index. */
__device__ __forceinline__ void open_cloud(const fps_args &a, int64_t cloud, const float *p,
                                           const float *x, const float *y, const float *z)
{
    __shared__ unsigned post_bits[2][CODE_THREADS / 32], post_index[2][CODE_THREADS / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, first = threadIdx.x * SORT_ITEMS;
    const int n = a.n;
    int32_t *out = a.out + cloud * a.m;
    float mind[SORT_ITEMS];
#pragma unroll
    for (int i = 0; i < SORT_ITEMS; i++)
        mind[i] = INFINITY;
    /* warps past the cloud's end hold only padding: they post (0, >= n) */
    const bool holds = (threadIdx.x & ~31) * SORT_ITEMS < n;
    int s = a.start;
    for (int j = 1; j < a.opening; j++) {
        const float qx = p[3 * s], qy = p[3 * s + 1], qz = p[3 * s + 2];
        unsigned bits = 0;
        int slot = 0;
        if (holds)
#pragma unroll
            for (int i = 0; i < SORT_ITEMS; i++) {
                const float d = fps_dist(x[i], y[i], z[i], qx, qy, qz);
                mind[i] = fminf(d, mind[i]); /* no NaN here: dp's min */
                const unsigned b = __float_as_uint(mind[i]); /* minima are >= 0: bits order them */
                slot = b > bits ? i : slot;
                bits = b > bits ? b : bits;
            }
        unsigned top = __reduce_max_sync(0xffffffffu, bits);
        unsigned low = __reduce_min_sync(0xffffffffu, bits == top ? (unsigned)(first + slot) : ~0u);
        if (lane == 0)
            post_bits[j & 1][warp] = top, post_index[j & 1][warp] = low;
        __syncthreads();
        bits = post_bits[j & 1][lane], low = post_index[j & 1][lane];
        top = __reduce_max_sync(0xffffffffu, bits);
        s = (int)__reduce_min_sync(0xffffffffu, bits == top ? low : ~0u);
        if (threadIdx.x == 0)
            out[j] = s;
    }
    float *opened = a.opened + cloud * n;
#pragma unroll
    for (int i = 0; i < SORT_ITEMS; i++)
        if (first + i < n)
            opened[first + i] = mind[i];
    if (threadIdx.x == 0) {
        atomicAdd(a.evals, (unsigned long long)(a.opening - 1) * n);
        atomicAdd(a.rounds, (unsigned long long)(a.opening - 1));
    }
}

__global__ void __launch_bounds__(CODE_THREADS, 1) fps_sorted_codes(fps_args a)
{
    extern __shared__ float4 sort_smem[]; /* block_sort's */
    __shared__ float scratch[FRAME_SCRATCH];
    __shared__ float frame[4];
    /* a block pair a cloud where the opening has a block of its own */
    const int64_t cloud = a.opening_apart ? blockIdx.x >> 1 : blockIdx.x;
    const bool opens = a.opening > 1 && (!a.opening_apart || (blockIdx.x & 1)),
               sorts = !a.opening_apart || !(blockIdx.x & 1);
    const int n = a.n;
    const float *p = a.xyz + cloud * n * 3;
    uint32_t *order = a.order;
    cudaTriggerProgrammaticLaunchCompletion();
    const int first = threadIdx.x * SORT_ITEMS;
    float x[SORT_ITEMS], y[SORT_ITEMS], z[SORT_ITEMS];
    if (first + SORT_ITEMS <= n && ((uintptr_t)(p + 3 * first) & 15) == 0) {
        float f[3 * SORT_ITEMS];
#pragma unroll
        for (int q = 0; q < 3 * SORT_ITEMS / 4; q++) {
            const float4 v = ((const float4 *)(p + 3 * first))[q];
            f[4 * q] = v.x, f[4 * q + 1] = v.y, f[4 * q + 2] = v.z, f[4 * q + 3] = v.w;
        }
#pragma unroll
        for (int i = 0; i < SORT_ITEMS; i++)
            x[i] = f[3 * i], y[i] = f[3 * i + 1], z[i] = f[3 * i + 2];
    } else {
#pragma unroll
        for (int i = 0; i < SORT_ITEMS; i++) {
            const int k = first + i < n ? first + i : n - 1;
            x[i] = p[3 * k], y[i] = p[3 * k + 1], z[i] = p[3 * k + 2];
        }
    }
    if (opens)
        open_cloud(a, cloud, p, x, y, z);
    if (!sorts)
        return;
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
#pragma unroll
    for (int i = 0; i < SORT_ITEMS; i++) {
        lo[0] = fminf(lo[0], x[i]), lo[1] = fminf(lo[1], y[i]), lo[2] = fminf(lo[2], z[i]);
        hi[0] = fmaxf(hi[0], x[i]), hi[1] = fmaxf(hi[1], y[i]), hi[2] = fmaxf(hi[2], z[i]);
    }
    cloud_frame(lo, hi, scratch, frame);
    const int hilbert = fps_runs_hilbert(lo, hi);
    uint32_t key[SORT_ITEMS], val[SORT_ITEMS];
#pragma unroll
    for (int i = 0; i < SORT_ITEMS; i++) {
        key[i] = first + i < n
                     ? fps_run_code(frame, hilbert, x[i], y[i], z[i], FPS_RUNS_MORTON_SMALL)
                     : (1u << SMALL_CODE_BITS) - 1;
        val[i] = (uint32_t)(first + i);
    }
    block_sort(*(block_sort::TempStorage *)sort_smem)
        .SortBlockedToStriped(key, val, 0, SMALL_CODE_BITS);
#pragma unroll
    for (int i = 0; i < SORT_ITEMS; i++) {
        const int k = i * CODE_THREADS + (int)threadIdx.x;
        if (k < n)
            order[cloud * n + k] = val[i];
    }
}
