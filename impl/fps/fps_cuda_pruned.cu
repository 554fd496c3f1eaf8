/* fps_cuda_pruned.cu - exact FPS on the GPU that takes many provably-next
 * samples a round and skips what a sample cannot change; the canonical
 * sequence, bit for bit dp's.
 *
 * compute runs on the device. Clouds of at most FPS_DENSE_MAX_N points take
 * one kernel, a block of four warps a cloud running dp on points held in
 * registers (fps_sample_dense); larger ones:
 *   1. a spatial order (Morton's; for the run kernel's clouds no flatter
 *      than 1 : 4 Hilbert's, fps_runs_hilbert): for small clouds the run
 *      kernel takes, one block a cloud computes the codes and sorts them (a
 *      stable block radix sort), and another beside it (or the same one,
 *      first, where the GPU lacks SMs for the pairs) takes the cloud's
 *      first samples by dp over all its points (the opening:
 *      fps_runs_opening, open_cloud);
 *      otherwise a block a cloud computes its bounding box and codes keyed
 *      by the cloud, and one CUB radix sort orders the batch (stable: equal
 *      codes keep index order);
 *   2. the sampler, a round at a time (fps_rounds.h: why each round's picks
 *      are dp's). A round: every warp applies the last round's samples to
 *      the points they can reach, gathers its points above the threshold
 *      (the candidates) and posts its farthest point; one barrier; the
 *      taking block picks among the candidates in waves (take_waves); one
 *      more barrier, or, where a block only takes, a word it publishes
 *      (the first wave's picks as soon as they are decided, the owners
 *      lowering their runs by them while the later waves run). Two samplers:
 *        - the run kernel (fps_runs_take), a cloud spread over a cluster of
 *          up to 16 blocks: owner threads hold runs of sorted points in
 *          shared memory (no reduction across lanes in the update); block
 *          0 takes the samples, its last warp, which owns nothing,
 *          coordinating the rounds (a taking block that owns no points,
 *          where the batch still fits with it);
 *        - the bucket kernel, any cloud, a block each: the CPU `pruned`'s
 *          layout (fps_bucket.h: buckets of 32 slots, groups of buckets,
 *          boxes and farthest keys), groups, buckets and points in shared
 *          memory as far as they fit (the rest in global memory, which L2
 *          holds); warps own groups, lanes test buckets, a warp updates a
 *          bucket's 32 minima and reduces its new key.
 * The CPU replay in tests/fps_rounds_replay.h takes the same rounds with the
 * same tests: the tests require the kernel's counts of distances and rounds
 * to equal it. */
#include <cooperative_groups.h>
#include <float.h>

#include <cub/cub.cuh>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <type_traits>

#include "cuda_util.h"
#include "fps_rounds.h"

namespace cg = cooperative_groups;

enum {
    CODE_THREADS = 1024,
    CODE_BITS = 3 * FPS_MORTON_BITS,
    BATCH = 4 /* buckets of one group updated together (loads in flight) */
};

/* Where a cloud's arrays are; the kernel points each either into shared or
 * into global memory. */
typedef struct {
    int n, slots, buckets, groups, group_size, m, start;
    int run, ctas;                              /* the run kernel's slots a thread, blocks a cloud */
    int taker;                                  /* 1: its block 0 owns no points, only takes */
    int owners;                                 /* the run kernel's owner threads a block: its
                                                   blockDim less the coordinating warp, passed
                                                   since the kernel measured faster so */
    int smem_groups, smem_buckets, smem_points; /* 1: that level in shared memory */
    const float *xyz;                           /* batch x n x 3 */
    uint32_t *order;                            /* batch x n: sorted index within its cloud */
    float4 *pts;                                /* batch x slots: x, y, z, index bits */
    float *mind;                                /* batch x slots */
    float4 *bbox, *bbest;                       /* batch x buckets x 2 (lo, hi); x 1 */
    unsigned long long *bkey;
    float4 *gbox, *gbest;
    unsigned long long *gkey;
    float *runs;                                /* the run kernel's runs in global memory:
                                                   blocks x T x run x 5 words; NULL: shared */
    int opening;                                /* the run kernel's first samples, taken
                                                   where its codes are sorted
                                                   (fps_runs_opening) */
    int opening_apart;                          /* 1: in a block of its own beside the
                                                   sort's, 0: in the sort's, before it */
    float *opened;                              /* batch x n: the minima they leave, by index */
    int32_t *out;                               /* batch x m */
    unsigned long long *evals;                  /* distances computed, all clouds */
    unsigned long long *rounds;                 /* rounds, all clouds */
} fps_args;

/* ---- step 1: codes ---------------------------------------------------------- */
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

/* ---- step 2: the sampler, a round at a time (fps_rounds.h) ----------------- */
/* The largest key among the warp's lanes, and the lowest lane holding it. */
__device__ __forceinline__ unsigned long long warp_max_key(unsigned long long key, int *lane)
{
    const unsigned hi = (unsigned)(key >> 32), lo = (unsigned)key;
    const unsigned top = __reduce_max_sync(0xffffffffu, hi);
    const unsigned low = __reduce_max_sync(0xffffffffu, hi == top ? lo : 0u);
    *lane = __ffs(__ballot_sync(0xffffffffu, hi == top && lo == low)) - 1;
    return (unsigned long long)top << 32 | low;
}

__device__ __forceinline__ float box_dist(const float4 *box, float qx, float qy, float qz)
{
    const float4 lo = box[0], hi = box[1];
    const float l[3] = {lo.x, lo.y, lo.z}, h[3] = {hi.x, hi.y, hi.z};
    return sp_box_d2(l, h, qx, qy, qz);
}

/* The union of the lanes' boxes (lo, hi), in every lane; an empty box
 * (+inf, -inf) changes nothing. */
__device__ __forceinline__ void warp_box(float *lo, float *hi)
{
    for (int o = 16; o > 0; o >>= 1)
        for (int d = 0; d < 3; d++) {
            lo[d] = fminf(lo[d], __shfl_xor_sync(0xffffffffu, lo[d], o));
            hi[d] = fmaxf(hi[d], __shfl_xor_sync(0xffffffffu, hi[d], o));
        }
}

/* Up to BATCH buckets (b[u] < 0: none), every lane one slot of each: all
 * loads first, so their latencies overlap; then each bucket's new key and
 * farthest point (written by lane 0). */
__device__ __forceinline__ void update_buckets(const float4 *pts, float *mind, float4 *bbest,
                                               unsigned long long *bkey, const int *b, float qx,
                                               float qy, float qz)
{
    const int lane = threadIdx.x & 31;
    float4 p[BATCH];
    float v[BATCH];
#pragma unroll
    for (int u = 0; u < BATCH; u++)
        if (b[u] >= 0) {
            p[u] = pts[b[u] * FPS_BUCKET + lane];
            v[u] = mind[b[u] * FPS_BUCKET + lane];
        }
#pragma unroll
    for (int u = 0; u < BATCH; u++)
        if (b[u] >= 0) {
            const float d = fps_dist(p[u].x, p[u].y, p[u].z, qx, qy, qz);
            if (d < v[u]) {
                v[u] = d;
                mind[b[u] * FPS_BUCKET + lane] = d;
            }
            int win;
            const unsigned long long key =
                warp_max_key(fps_key(v[u], __float_as_uint(p[u].w)), &win);
            const float bx = __shfl_sync(0xffffffffu, p[u].x, win),
                        by = __shfl_sync(0xffffffffu, p[u].y, win),
                        bz = __shfl_sync(0xffffffffu, p[u].z, win);
            if (lane == 0) {
                bkey[b[u]] = key;
                bbest[b[u]] = make_float4(bx, by, bz, 0.0f);
            }
        }
}

/* Carve n bytes (16-aligned) off the shared-memory cursor. */
__device__ __forceinline__ void *carve(char **cursor, size_t bytes)
{
    void *p = *cursor;
    *cursor += (bytes + 15) & ~(size_t)15;
    return p;
}

/* The cloud's arrays as the sampler sees them, in shared or global memory. */
struct cloud {
    float4 *pts;  /* slots: x, y, z, index bits */
    float *mind;  /* slots */
    float4 *bbox, *bbest, *gbox, *gbest;
    unsigned long long *bkey, *gkey;
    int n, buckets, groups, group_size;
};

/* What the taking block hands every warp from one round to the next
 * (written between a round's two barriers, read after the second), and its
 * candidates: a list a row (fps_round_row), FPS_ROUND_CAP each, row 0
 * first; the round's list is row 0 with the other rows it takes moved up
 * behind it. The rows' counts alternate by the round's parity, so that the
 * coordinator clears the next round's while this round's are still read. */
struct round_state {
    float4 q[FPS_ROUND_CAP + 1]; /* the samples to apply: x, y, z, index bits */
    float4 cand[FPS_ROUND_CLASSES * FPS_ROUND_CAP]; /* candidates: x, y, z, index bits */
    unsigned long long cand_key[FPS_ROUND_CLASSES * FPS_ROUND_CAP]; /* keys (waves lower them) */
    int held[FPS_ROUND_CAP];     /* the first wave: 1 where another candidate holds it */
    /* the waves' lists by index (take_waves), their lengths by the wave's
     * parity: undecided in the low 16 bits of n_decided, picks above */
    int undecided[FPS_ROUND_CAP], left[FPS_ROUND_CAP];
    int n_decided[2], n_left[2];
    unsigned long long pick_key[FPS_ROUND_CAP]; /* the samples' keys, to order the output */
    int row_count[2][FPS_ROUND_CLASSES];
    float tau[FPS_ROUND_CLASSES]; /* the round's thresholds, loosest first */
    int q_count, done;
    int picks_from, picks_to; /* a taking block's: the round's places in out */
    /* The taking-block layout's handover (publish): the round's sequence
     * number, whether it is final, and how many samples of q are out. */
    unsigned pub;
};

/* The publication word: sequence (22 bits), final (1), samples (9). */
static_assert(FPS_ROUND_CAP + 1 < 512, "a round's samples in 9 bits");
__device__ __forceinline__ unsigned pub_word(unsigned seq, bool final, int count)
{
    return (seq & 0x3fffffu) << 10 | (final ? 1u << 9 : 0u) | (unsigned)count;
}
__device__ __forceinline__ bool pub_final(unsigned w)
{
    return w >> 9 & 1;
}
__device__ __forceinline__ int pub_count(unsigned w)
{
    return (int)(w & 511);
}

/* Every lane of the taking block's coordinating warp: what this block
 * wrote before the last block barrier (q, and the round's state) is
 * released to the cluster, then the word goes into owner blocks 1 .. ctas
 * - 1 (a barrier and a fence make the release cover the other warps'
 * stores). */
__device__ __forceinline__ void publish(round_state *r, int ctas, unsigned word)
{
    const int lane = threadIdx.x & 31;
    asm volatile("fence.acq_rel.cluster;" ::: "memory");
    if (lane >= 1 && lane < ctas) {
        unsigned *to = &cg::this_cluster().map_shared_rank(r, lane)->pub;
        asm volatile("st.relaxed.cluster.b32 [%0], %1;" ::"l"(to), "r"(word) : "memory");
    }
}

/* Every lane of an owner warp: waits for round seq's samples past the first
 * `applied` (FPS_ROUND_CAP + 1: none, only its final word), or its final
 * word, and returns the word; what the taking block wrote before it is
 * visible to the whole warp. */
__device__ __forceinline__ unsigned wait_published(const unsigned *pub, unsigned seq, int applied)
{
    const unsigned at = (unsigned)__cvta_generic_to_shared(pub);
    unsigned w;
    do /* plain shared-memory loads, then one that acquires */
        asm volatile("ld.relaxed.cluster.shared::cta.b32 %0, [%1];" : "=r"(w) : "r"(at) : "memory");
    while (w >> 10 != (seq & 0x3fffffu) || (!pub_final(w) && pub_count(w) <= applied));
    asm volatile("ld.acquire.cluster.shared::cta.b32 %0, [%1];" : "=r"(w) : "r"(at) : "memory");
    __syncwarp();
    return w;
}

__device__ __forceinline__ void round_barrier(int ctas)
{
    if (ctas > 1)
        cg::this_cluster().sync(); /* release and acquire: shared memory across blocks */
    else
        __syncthreads();
}

/* p, a variable in this block's shared memory, in block rank's. */
template <typename T> __device__ __forceinline__ T *in_block(T *p, int ctas, int rank)
{
    return ctas > 1 ? cg::this_cluster().map_shared_rank(p, rank) : p;
}

/* Applies samples q[0 .. count) to group g: lanes test the samples against
 * the group's box; for each sample that reaches it, lanes test the group's
 * buckets (a lane each, against the bucket's key as the round began: the
 * samples come in the order they were picked, and this way what is
 * computed does not depend on it) and reached buckets update their 32
 * minima. Returns the group's key, recomputed when a sample reached the
 * group. */
__device__ unsigned long long update_group(const cloud &c, int g, const float4 *q, int count,
                                           unsigned long long *evals)
{
    const int lane = threadIdx.x & 31;
    const int first = g * c.group_size, nb = min(c.group_size, c.buckets - first), b = first + lane;
    const unsigned long long gk = c.gkey[g];
    const float gval = fps_key_dist(gk);
    bool touched = false;
    float4 lo = make_float4(0, 0, 0, 0), hi = lo; /* the lane's bucket */
    float bval = -1.0f;
    for (int s0 = 0; s0 < count; s0 += 32) {
        const int s = s0 + lane;
        const float4 p = q[s < count ? s : 0];
        unsigned hits = __ballot_sync(0xffffffffu, s < count && box_dist(c.gbox + 2 * g, p.x, p.y,
                                                                         p.z) < gval);
        if (hits && !touched) {
            touched = true;
            if (lane < nb) {
                lo = c.bbox[2 * b], hi = c.bbox[2 * b + 1];
                bval = fps_key_dist(c.bkey[b]);
            }
        }
        while (hits) {
            const int k = __ffs(hits) - 1;
            hits &= hits - 1;
            const float qx = __shfl_sync(0xffffffffu, p.x, k), qy = __shfl_sync(0xffffffffu, p.y, k),
                        qz = __shfl_sync(0xffffffffu, p.z, k);
            const float4 box[2] = {lo, hi};
            const bool reach = lane < nb && box_dist(box, qx, qy, qz) < bval;
            unsigned reached = __ballot_sync(0xffffffffu, reach);
            *evals += __popc(reached);
            while (reached) {
                int b4[BATCH];
#pragma unroll
                for (int u = 0; u < BATCH; u++) {
                    b4[u] = reached ? first + __ffs(reached) - 1 : -1;
                    reached &= reached - 1;
                }
                update_buckets(c.pts, c.mind, c.bbest, c.bkey, b4, qx, qy, qz);
            }
            __syncwarp();
        }
    }
    if (!touched)
        return gk;
    int win;
    const unsigned long long top = warp_max_key(lane < nb ? c.bkey[b] : 0ull, &win);
    if (lane == 0) {
        c.gkey[g] = top;
        c.gbest[g] = c.bbest[first + win];
    }
    return top;
}

/* Appends group g's points above the loosest threshold to their rows'
 * candidate lists (fps_round_row; slot order within a bucket, buckets race
 * for their places, which does not matter: the waves are order-free), lane
 * k counting row k's in with one atomic. Once row 0 has overflowed, the
 * round takes the farthest point alone: the gathering stops. Padding slots
 * are left out: their originals are in. */
__device__ void gather_group(const cloud &c, int g, const float *tau, int *row_count,
                             round_state *r)
{
    const int lane = threadIdx.x & 31;
    const int first = g * c.group_size, nb = min(c.group_size, c.buckets - first);
    unsigned above =
        __ballot_sync(0xffffffffu, lane < nb && fps_key_dist(c.bkey[first + lane]) > tau[0]);
    while (above && __shfl_sync(0xffffffffu, row_count[0], 0) <= FPS_ROUND_CAP) {
        const int slot = (first + __ffs(above) - 1) * FPS_BUCKET + lane;
        above &= above - 1;
        const float v = c.mind[slot];
        const int row = slot < c.n ? fps_round_row(v, tau) : FPS_ROUND_CLASSES;
        /* lane k counts row k's in */
        unsigned ours = 0, mine = 0;
#pragma unroll
        for (int k = 0; k < FPS_ROUND_CLASSES; k++) {
            const unsigned in_row = __ballot_sync(0xffffffffu, row == k);
            ours = lane == k ? in_row : ours;
            mine = row == k ? in_row : mine;
        }
        int base = 0;
        if (ours)
            base = atomicAdd(&row_count[lane], __popc(ours));
        const int at = __shfl_sync(0xffffffffu, base, row & 31) + __popc(mine & ((1u << lane) - 1));
        if (row < FPS_ROUND_CLASSES && at < FPS_ROUND_CAP) {
            r->cand[row * FPS_ROUND_CAP + at] = c.pts[slot];
            r->cand_key[row * FPS_ROUND_CAP + at] = fps_key(v, __float_as_uint(c.pts[slot].w));
        }
    }
}

/* Every thread of the taking block: the round's picks from its count
 * candidates, in waves (fps_rounds.h: fps_wave_holds), each pick into every
 * block's samples as it is decided (decide_append); returns how many. The
 * first wave tests every pair: a warp's lanes hold 32 candidates and go
 * through a share of the others, four at a time, no reduction. The later
 * steps work on short lists: a candidate a group of WAVE_GROUP lanes, each
 * lane a share of the list it is tested against, the group's answer by
 * shuffles, so that no warp walks several candidates one after another;
 * the lists grow by one shared-memory atomic a warp. The
 * rows past the first are free once moved up (take_round): the picks and
 * those left after a wave's drops live there, coordinates and keys copied,
 * so a test reads one list. A barrier a step, none a pick. */
enum { WAVE_GROUP = 16 };

/* Every lane of a warp, deciding candidate c (key kc at p) where decider:
 * into the undecided (by index) where held, else into the picks after the
 * first `before`, one atomic a warp for both lists (16 bits each in *n). A
 * pick goes straight to every block's samples, in the order picked: the
 * update does not care, and the coordinator orders the output later. */
__device__ __forceinline__ void decide_append(round_state *r, int ctas, int *n, bool decider,
                                              bool held, int c, float4 p, unsigned long long kc,
                                              int before)
{
    const int lane = threadIdx.x & 31;
    const unsigned below = (1u << lane) - 1, waits = __ballot_sync(0xffffffffu, decider && held),
                   picks = __ballot_sync(0xffffffffu, decider && !held);
    int base = 0;
    if ((waits | picks) && lane == 0)
        base = atomicAdd(n, __popc(waits) | __popc(picks) << 16);
    base = __shfl_sync(0xffffffffu, base, 0);
    if (decider && held)
        r->undecided[(base & 0xffff) + __popc(waits & below)] = c;
    if (decider && !held) {
        const int at = before + (base >> 16) + __popc(picks & below);
        r->cand[2 * FPS_ROUND_CAP + at] = p;
        r->pick_key[at] = kc;
        for (int b = 0; b < ctas; b++)
            in_block(r, ctas, b)->q[at] = p;
    }
}

/* seq: where nonzero (the coordinating warp of a taking block), the first
 * wave's picks are published as round seq's first samples when some
 * candidates are left undecided and the picks are fewer than want (the
 * samples the cloud still needs: a round that ends it is not applied). */
__device__ int take_waves(round_state *r, int ctas, int count, float tau,
                          unsigned long long *evals, unsigned seq, int want)
{
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5, warps = blockDim.x >> 5;
    float4 *const left_at = r->cand + FPS_ROUND_CAP, *const pick_at = r->cand + 2 * FPS_ROUND_CAP;
    unsigned long long *const left_key = r->cand_key + FPS_ROUND_CAP;
    if (t == 0) /* the last round's were read before its barriers */
        r->n_decided[1] = r->n_left[1] = 0;
    const int blocks = (count + 31) >> 5, chunks = max(1, warps / blocks),
              chunk = (count + chunks - 1) / chunks;
    for (int task = warp; task < blocks * chunks; task += warps) {
        const int q = task % blocks * 32 + lane, c0 = task / blocks * chunk,
                  c1 = min(count, c0 + chunk);
        const float4 pq = r->cand[q < count ? q : 0];
        const unsigned long long kq = r->cand_key[q < count ? q : 0];
        bool held = false;
        for (int c = c0; c < c1; c += 4) {
            float4 pc[4];
            unsigned long long kc[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                pc[u] = r->cand[min(c + u, c1 - 1)];
                kc[u] = r->cand_key[min(c + u, c1 - 1)];
            }
#pragma unroll
            for (int u = 0; u < 4; u++)
                held |= fps_wave_holds(kc[u], fps_key_dist(kc[u]), kq,
                                       fps_dist(pq.x, pq.y, pq.z, pc[u].x, pc[u].y, pc[u].z));
        }
        if (q < count && held)
            r->held[q] = 1;
    }
    if (t == 0)
        *evals += (unsigned long long)count * (count - 1);
    __syncthreads();
    /* The first wave's decisions. */
    for (int c0 = 32 * warp; c0 < count; c0 += blockDim.x) {
        const int c = c0 + lane;
        const bool in = c < count, held = in && r->held[c];
        if (in)
            r->held[c] = 0; /* for the next round */
        decide_append(r, ctas, &r->n_decided[1], in, held, c, r->cand[in ? c : 0],
                      r->cand_key[in ? c : 0], 0);
    }
    const int per_warp = 32 / WAVE_GROUP, part = lane % WAVE_GROUP;
    int picked = 0;
    for (int wave = 1;; wave++) {
        /* The undecided lowered by the last wave's picks (pick_at[from ..
         * picked)); dropped at tau, else left. */
        __syncthreads();
        const int decided = r->n_decided[wave & 1], undecided = decided & 0xffff,
                  from = picked;
        picked += decided >> 16;
        if (!undecided)
            break;
        if (seq && wave == 1 && picked < want)
            publish(r, ctas, pub_word(seq, false, picked));
        bool left = false;
        for (int u0 = per_warp * warp; u0 < undecided; u0 += per_warp * warps) {
            const int u = u0 + lane / WAVE_GROUP;
            const bool in = u < undecided;
            const int c = in ? r->undecided[u] : 0;
            const float4 pc = r->cand[c];
            float v = INFINITY;
            for (int k = from + part; k < picked; k += WAVE_GROUP) {
                const float4 pq = pick_at[k];
                const float d = fps_dist(pc.x, pc.y, pc.z, pq.x, pq.y, pq.z);
                v = d < v ? d : v;
            }
#pragma unroll
            for (int o = WAVE_GROUP / 2; o > 0; o >>= 1) {
                const float w = __shfl_xor_sync(0xffffffffu, v, o);
                v = w < v ? w : v;
            }
            const float before = fps_key_dist(r->cand_key[c]);
            v = v < before ? v : before;
            const unsigned long long kc = fps_key(v, __float_as_uint(pc.w));
            const bool keep = in && part == 0 && v > tau;
            const unsigned keeps = __ballot_sync(0xffffffffu, keep);
            int base = 0;
            if (keeps && lane == 0)
                base = atomicAdd(&r->n_left[wave & 1], __popc(keeps));
            base = __shfl_sync(0xffffffffu, base, 0) + __popc(keeps & ((1u << lane) - 1));
            if (keep) {
                r->cand_key[c] = kc;
                r->left[base] = c;
                left_at[base] = pc;
                left_key[base] = kc;
            }
            left |= keep;
        }
        if (t == 0) {
            *evals += (unsigned long long)undecided * (picked - from);
            r->n_decided[(wave + 1) & 1] = 0; /* last read by the wave before */
        }
        if (!__syncthreads_or(left))
            break; /* all dropped */
        /* Then each of those left picked unless another of them holds it. */
        const int left_n = r->n_left[wave & 1];
        if (t == 0) {
            *evals += (unsigned long long)left_n * (left_n - 1);
            r->n_left[(wave + 1) & 1] = 0;
        }
        for (int u0 = per_warp * warp; u0 < left_n; u0 += per_warp * warps) {
            const int u = u0 + lane / WAVE_GROUP;
            const bool in = u < left_n;
            const float4 pc = left_at[in ? u : 0];
            const unsigned long long kc = left_key[in ? u : 0];
            bool held = false;
            for (int k = part; k < left_n; k += WAVE_GROUP) {
                const unsigned long long kq = left_key[k];
                const float4 pq = left_at[k];
                held |= fps_wave_holds(kq, fps_key_dist(kq), kc,
                                       fps_dist(pc.x, pc.y, pc.z, pq.x, pq.y, pq.z));
            }
            const unsigned group = __ballot_sync(0xffffffffu, held) >> (lane & ~(WAVE_GROUP - 1));
            held = group & ((1u << WAVE_GROUP) - 1);
            decide_append(r, ctas, &r->n_decided[(wave + 1) & 1], in && part == 0, held,
                          r->left[in ? u : 0], pc, kc, picked);
        }
    }
    return picked;
}

/* Every thread of the taking block, between a round's barriers: the round's
 * samples (fps_rounds.h) from the candidates of the rows it takes (the
 * parity's counts; rows past the first moved up behind it); the
 * coordinating warp also takes the global farthest point from the owner
 * warps' posts where the round has no list, and writes the next thresholds
 * and whether the cloud is done. Returns the next output position (the
 * coordinator's). */
__device__ int take_round(round_state *r, int ctas, const unsigned long long *post_key,
                          const float4 *post_xyz, int posts, int j, int m, int *base, int parity,
                          int32_t *out, unsigned long long *evals, bool coordinator,
                          unsigned seq = 0)
{
    const int lane = threadIdx.x & 31;
    int row_count[FPS_ROUND_CLASSES], count = 0;
#pragma unroll
    for (int k = 0; k < FPS_ROUND_CLASSES; k++)
        row_count[k] = r->row_count[parity][k];
    const int rows = fps_round_rows(row_count);
#pragma unroll
    for (int k = 0; k < FPS_ROUND_CLASSES; k++)
        count += k < rows ? row_count[k] : 0;
    const float tau = rows > 0 ? r->tau[FPS_ROUND_CLASSES - rows] : INFINITY;
    const bool listed = count > 0;
    if (count > row_count[0]) { /* the other rows taken, up behind row 0 */
        for (int i = row_count[0] + threadIdx.x; i < count; i += blockDim.x) {
            int row = 1, at = i - row_count[0]; /* the counts in registers */
#pragma unroll
            for (int k = 1; k < FPS_ROUND_CLASSES - 1; k++)
                if (row == k && at >= row_count[k])
                    at -= row_count[k], row = k + 1;
            r->cand[i] = r->cand[row * FPS_ROUND_CAP + at];
            r->cand_key[i] = r->cand_key[row * FPS_ROUND_CAP + at];
        }
        __syncthreads();
    }
    const int picks =
        listed ? take_waves(r, ctas, count, tau, evals, coordinator ? seq : 0u, m - j) : 0;
    if (!coordinator)
        return j;
    /* Lane b writes the round's count, thresholds and done into block b's round
     * state (the candidates and posts are block 0's). */
    round_state *to = lane < ctas ? in_block(r, ctas, lane) : NULL;
    int taken = 1;
    float bound = tau, far = 1.0f;
    if (listed) {
        taken = min(picks, m - j);
    } else {
        unsigned long long mine = 0;
        int at = 0, win;
        for (int k = lane; k < posts; k += 32)
            if (post_key[k] > mine)
                mine = post_key[k], at = k;
        const unsigned long long top = warp_max_key(mine, &win);
        const int far_post = __shfl_sync(0xffffffffu, at, win);
        far = fps_key_dist(top);
        bound = far;
        if (far == 0.0f) { /* every minimum is 0: dp repeats the lowest index to the end */
            for (int k = j + lane; k < m; k += 32)
                out[k] = (int32_t)fps_key_index(top);
            taken = m - j;
        } else if (to) {
            const float4 p = post_xyz[far_post];
            to->q[0] = make_float4(p.x, p.y, p.z, __int_as_float((int)fps_key_index(top)));
        }
    }
    /* all the picks to apply (past m only when the cloud is done), none once all are 0 */
    const int samples = far == 0.0f ? 0 : listed ? picks : 1;
    *base = fps_round_base(*base, rows);
    if (to) {
        to->q_count = samples;
#pragma unroll
        for (int k = 0; k < FPS_ROUND_CLASSES; k++) {
            to->tau[k] = fps_round_tau(*base, k, bound);
            to->row_count[parity ^ 1][k] = 0; /* read last round, counted next */
        }
        to->done = j + taken >= m;
    }
    if (seq)
        publish(r, ctas, pub_word(seq, true, samples));
    return j + taken;
}

/* The coordinating warp (first: its lane, step 32), or a taking block's
 * every thread (first: the thread, step: the block's size), after a round's
 * second barrier or its published word, while the owners update: the
 * round's samples' indexes into out[from .. to), each at its place by key
 * (the picks of larger key before it; the first to - from of them). Written
 * now, their stores are done long before the next barrier waits for them. */
__device__ void write_picks(const round_state *r, int32_t *out, int from, int to, int first,
                            int step)
{
    const int count = r->q_count;
    for (int i = first; i < count; i += step) {
        const unsigned long long key = r->pick_key[i];
        int place = 0;
        for (int k = 0; k < count; k++)
            place += r->pick_key[k] > key;
        if (place < to - from)
            out[from + place] = __float_as_int(r->q[i].w);
    }
}

/* Thread 0, before the first round: the samples out so far (the start, or
 * the opening's; the start written to out unless NULL), the last of them
 * the one to apply. Without an opening there are no candidates yet
 * (thresholds +inf: the first round takes the farthest point alone); after
 * one, the thresholds start at FPS_OPENING_LEVEL of the last sample's
 * minimum. None held. */
__device__ void begin_rounds(round_state *r, const fps_args &a, int64_t cloud, int32_t *out)
{
    if (out)
        out[0] = a.start;
    const int last = a.opening > 1 ? a.out[cloud * a.m + a.opening - 1] : a.start;
    const float bound = a.opening > 1 ? a.opened[cloud * a.n + last] : INFINITY;
    const float *q = a.xyz + (cloud * a.n + last) * 3;
    r->q[0] = make_float4(q[0], q[1], q[2], __int_as_float(last));
    r->q_count = 1;
    for (int k = 0; k < FPS_ROUND_CLASSES; k++) {
        r->row_count[0][k] = r->row_count[1][k] = 0;
        r->tau[k] = fps_round_tau(fps_round_first_level(a.opening), k, bound);
    }
    r->done = a.m <= a.opening;
    r->pub = pub_word(0, true, 1);
    for (int c = 0; c < FPS_ROUND_CAP; c++)
        r->held[c] = 0;
}

template <int WARPS>
__global__ void __launch_bounds__(WARPS * 32, 1) fps_sample(fps_args a)
{
    enum { THREADS = WARPS * 32 };
    extern __shared__ float4 smem[];
    __shared__ unsigned long long post_key[WARPS];
    __shared__ float4 post_xyz[WARPS];
    __shared__ round_state r;
    const int64_t cloud_id = blockIdx.x;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int S = a.group_size, B = a.buckets, G = a.groups;
    char *cursor = (char *)smem;

    /* This cloud's arrays, in shared memory where they fit. */
    cloud c;
    c.n = a.n, c.buckets = B, c.groups = G, c.group_size = S;
    c.gbox = a.gbox + cloud_id * G * 2, c.gbest = a.gbest + cloud_id * G;
    c.gkey = a.gkey + cloud_id * G;
    if (a.smem_groups) {
        c.gbox = (float4 *)carve(&cursor, sizeof(float4) * 2 * G);
        c.gbest = (float4 *)carve(&cursor, sizeof(float4) * G);
        c.gkey = (unsigned long long *)carve(&cursor, sizeof(unsigned long long) * G);
    }
    c.bbox = a.bbox + cloud_id * B * 2, c.bbest = a.bbest + cloud_id * B;
    c.bkey = a.bkey + cloud_id * B;
    if (a.smem_buckets) {
        c.bbox = (float4 *)carve(&cursor, sizeof(float4) * 2 * B);
        c.bbest = (float4 *)carve(&cursor, sizeof(float4) * B);
        c.bkey = (unsigned long long *)carve(&cursor, sizeof(unsigned long long) * B);
    }
    c.pts = a.pts + cloud_id * a.slots;
    c.mind = a.mind + cloud_id * a.slots;
    if (a.smem_points) {
        c.pts = (float4 *)carve(&cursor, sizeof(float4) * a.slots);
        c.mind = (float *)carve(&cursor, sizeof(float) * a.slots);
    }

    /* Prologue: slots in Morton order (the last bucket padded with copies of
     * the last point), bucket boxes and keys, group boxes and keys. */
    const float *xyz = a.xyz + cloud_id * a.n * 3;
    const uint32_t *order = a.order + cloud_id * a.n;
    for (int i = threadIdx.x; i < a.slots; i += THREADS) {
        const uint32_t k = order[i < a.n ? i : a.n - 1];
        c.pts[i] = make_float4(xyz[3 * k], xyz[3 * k + 1], xyz[3 * k + 2], __uint_as_float(k));
        c.mind[i] = INFINITY;
    }
    __syncthreads();
    for (int b = warp; b < B; b += WARPS) {
        const float4 p = c.pts[b * FPS_BUCKET + lane];
        float lo[3] = {p.x, p.y, p.z}, hi[3] = {p.x, p.y, p.z};
        warp_box(lo, hi);
        int win;
        const unsigned long long key = warp_max_key(fps_key(INFINITY, __float_as_uint(p.w)), &win);
        if (lane == win)
            c.bbest[b] = make_float4(p.x, p.y, p.z, 0.0f);
        if (lane == 0) {
            c.bbox[2 * b] = make_float4(lo[0], lo[1], lo[2], 0.0f);
            c.bbox[2 * b + 1] = make_float4(hi[0], hi[1], hi[2], 0.0f);
            c.bkey[b] = key;
        }
    }
    __syncthreads();
    for (int g = threadIdx.x; g < G; g += THREADS) {
        const int first = g * S, last = min(first + S, B);
        float4 lo = c.bbox[2 * first], hi = c.bbox[2 * first + 1];
        unsigned long long key = c.bkey[first];
        int far = first;
        for (int b = first + 1; b < last; b++) {
            const float4 l = c.bbox[2 * b], h = c.bbox[2 * b + 1];
            lo = make_float4(fminf(lo.x, l.x), fminf(lo.y, l.y), fminf(lo.z, l.z), 0.0f);
            hi = make_float4(fmaxf(hi.x, h.x), fmaxf(hi.y, h.y), fmaxf(hi.z, h.z), 0.0f);
            if (c.bkey[b] > key) {
                key = c.bkey[b];
                far = b;
            }
        }
        c.gbox[2 * g] = lo;
        c.gbox[2 * g + 1] = hi;
        c.gkey[g] = key;
        c.gbest[g] = c.bbest[far];
    }
    int32_t *out = a.out + cloud_id * a.m;
    if (threadIdx.x == 0)
        begin_rounds(&r, a, cloud_id, out);
    unsigned long long evals = 0, cand_evals = 0;
    int j = 1, base = FPS_ROUND_LEVEL0, rounds = 0; /* warp 0's but rounds */
    __syncthreads();

    while (!r.done) {
        /* Every warp: apply the last round's samples to its groups, gather
         * their candidates, post its farthest group. */
        const int count = r.q_count;
        float tau[FPS_ROUND_CLASSES];
#pragma unroll
        for (int k = 0; k < FPS_ROUND_CLASSES; k++)
            tau[k] = r.tau[k];
        unsigned long long best = 0;
        int best_g = -1;
        for (int g = warp; g < G; g += WARPS) {
            const unsigned long long gk = update_group(c, g, r.q, count, &evals);
            if (fps_key_dist(gk) > tau[0])
                gather_group(c, g, tau, r.row_count[rounds & 1], &r);
            if (gk > best)
                best = gk, best_g = g;
        }
        if (lane == 0) { /* it wrote gbest[best_g] itself */
            post_key[warp] = best;
            post_xyz[warp] = best_g >= 0 ? c.gbest[best_g] : make_float4(0, 0, 0, 0);
        }
        __syncthreads();
        const int from = j;
        j = take_round(&r, 1, post_key, post_xyz, WARPS, j, a.m, &base, rounds & 1, out,
                       &cand_evals, warp == 0);
        rounds++;
        __syncthreads();
        if (warp == 0)
            write_picks(&r, out, from, j, lane, 32);
    }
    if (lane == 0 && evals)
        atomicAdd(a.evals, evals * FPS_BUCKET);
    if (cand_evals)
        atomicAdd(a.evals, cand_evals);
    if (threadIdx.x == 0)
        atomicAdd(a.rounds, (unsigned long long)rounds);
}

/* ---- step 2 for clouds a cluster holds: a run of points a thread ----------- */
/* The owners, up to 992 threads a block, each own run = fps_run_length
 * (ceil(n / (992 x owner blocks))) consecutive sorted slots (the order is
 * Hilbert's or Morton's: fps_runs_hilbert), o*run .. o*run +
 * own - 1 (owners past n own none): their coordinates, 32-bit indexes and
 * minima in shared memory (slot i of a block's owner t at i * owners + t,
 * so a warp's accesses hit 32 banks), their box and key in registers. The
 * rounds are the bucket kernel's with a warp's 32 runs for a group and a
 * run for a bucket: lanes test the samples against the warp's box and key,
 * then each thread tests every sample that reached the warp against its
 * run's box and key (both as they were when the round began) and lowers
 * its own minima by all the samples that reach it in one pass: no
 * reduction across lanes.
 *
 * A cloud's owners spread over 1 to 16 blocks of a cluster (as many as the
 * GPU holds at once for the batch): a thread's serial share of the update,
 * two thirds of a round on one SM, shrinks with its run. Shared memory: the
 * posts (block 0's are read), then the runs. Block 0's last warp owns
 * nothing and coordinates the rounds; between the barriers all of block
 * 0's threads take the round's samples from the candidates (take_waves),
 * the other blocks wait. Where the batch still fits, block 0 is a taking
 * block that owns no points (a.taker): the take then runs without the
 * owners' state live beside it (impl/fps/README.md: its first wave 10%
 * shorter, the whole 2-7% faster). Owners post their farthest points and candidates into block 0's
 * shared memory, block 0 writes each round's samples into every block's;
 * the same two barriers a round, across the cluster, except that a taking
 * block replaces the second by the word it publishes (publish,
 * wait_published; impl/fps/README.md: a published handover). */
enum { RUN_BYTES = 4 * sizeof(float) + sizeof(uint32_t), POST_BYTES = 16 + 8 };

template <bool GLOBAL_RUNS, bool TAKER>
__global__ void __launch_bounds__(1024, 1) fps_sample_runs(fps_args a)
{
    extern __shared__ float4 smem[];
    __shared__ round_state r;
    const int ctas = a.ctas, rank = (int)(blockIdx.x % ctas);
    const int64_t cloud_id = blockIdx.x / ctas;
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5, T = a.owners, warps = T >> 5;
    /* A post an owner warp of the cluster. */
    float4 *post_xyz = smem;
    unsigned long long *post_key = (unsigned long long *)(post_xyz + warps * ctas);
    const float *xyz = a.xyz + cloud_id * a.n * 3;
    int32_t *out = a.out + cloud_id * a.m;
    cudaGridDependencySynchronize(); /* launched early (programmatic): the order is done */
    if (t == 0)
        begin_rounds(&r, a, cloud_id, rank == 0 ? out : NULL);

    unsigned long long cand_evals = 0; /* block 0's threads: the waves' distances */
    const int owner_blocks = ctas - a.taker, orank = rank - a.taker;
    /* A taking block: every warp takes, the last coordinates. (Its own loop:
     * one loop for it and the coordinating warps below, with the role a
     * run-time flag, measured 2-18% slower on the H100.) */
    if (TAKER && orank < 0) {
        const bool coordinator = warp == warps;
        int j = a.opening, base = fps_round_first_level(a.opening), rounds = 0;
        round_barrier(ctas);
        while (!r.done) {
            round_barrier(ctas); /* the owners' posts and candidates are in */
            const int from = j;
            j = take_round(&r, ctas, post_key, post_xyz, warps * owner_blocks, j, a.m, &base,
                           rounds & 1, out, &cand_evals, coordinator, (unsigned)rounds + 1);
            rounds++;
            if (coordinator && lane == 0)
                r.picks_from = from, r.picks_to = j;
            __syncthreads(); /* the owners go on at the published word */
            write_picks(&r, out, r.picks_from, r.picks_to, t, blockDim.x);
        }
        if (cand_evals)
            atomicAdd(a.evals, cand_evals);
        if (coordinator && lane == 0)
            atomicAdd(a.rounds, (unsigned long long)rounds);
        return;
    }
    if (TAKER && warp >= warps) { /* an owner block's last warp: the first barrier, after
                                     each round's final word */
        round_barrier(ctas);
        for (unsigned seq = 0;; seq++) {
            wait_published(&r.pub, seq, FPS_ROUND_CAP + 1);
            if (r.done)
                return;
            round_barrier(ctas);
        }
    }
    if (warp >= warps) { /* block 0's coordinates the rounds; the others' only keep the barriers */
        int j = a.opening, base = fps_round_first_level(a.opening), rounds = 0;
        round_barrier(ctas);
        while (!r.done) {
            round_barrier(ctas); /* the owners' posts and candidates are in */
            const int from = j;
            if (rank == 0)
                j = take_round(&r, ctas, post_key, post_xyz, warps * ctas, j, a.m, &base,
                               rounds & 1, out, &cand_evals, true);
            rounds++;
            round_barrier(ctas);
            if (rank == 0)
                write_picks(&r, out, from, j, lane, 32);
        }
        if (cand_evals)
            atomicAdd(a.evals, cand_evals);
        if (lane == 0 && rank == 0)
            atomicAdd(a.rounds, (unsigned long long)rounds);
        return;
    }

    const int run = a.run, owner = orank * T + t, first = owner * run,
              own = max(0, min(run, a.n - first));
    /* the runs: x, y, z, minimum, index, each run * T words; a template
     * parameter, so that shared ones are read as shared memory */
    float *sx = GLOBAL_RUNS ? a.runs + (size_t)blockIdx.x * run * T * 5
                            : (float *)(post_key + warps * ctas);
    float *sy = sx + run * T, *sz = sy + run * T, *sm = sz + run * T;
    uint32_t *sid = (uint32_t *)(sm + run * T);
    round_state *lead = in_block(&r, ctas, 0);
    unsigned long long *lead_key = in_block(post_key, ctas, 0);
    float4 *lead_xyz = in_block(post_xyz, ctas, 0);
    const uint32_t *order = a.order + cloud_id * a.n;
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    uint32_t low = 0xffffffffu;
    const float *opened = a.opened + cloud_id * a.n;
    float farthest = -1.0f;
    for (int i = 0; i < own; i++) {
        const uint32_t k = order[first + i];
        const float x = xyz[3 * k], y = xyz[3 * k + 1], z = xyz[3 * k + 2];
        const float v = a.opening > 1 ? opened[k] : INFINITY;
        sx[i * T + t] = x, sy[i * T + t] = y, sz[i * T + t] = z, sm[i * T + t] = v;
        sid[i * T + t] = k;
        lo[0] = fminf(lo[0], x), lo[1] = fminf(lo[1], y), lo[2] = fminf(lo[2], z);
        hi[0] = fmaxf(hi[0], x), hi[1] = fmaxf(hi[1], y), hi[2] = fmaxf(hi[2], z);
        const uint32_t id = k << FPS_RUNS_SLOT_BITS | i;
        if (v > farthest || (v == farthest && id < low))
            farthest = v, low = id;
    }
    /* The run's key and the slot of its farthest point (the lowest index at
     * the largest minimum); a thread without points has key 0. */
    const uint32_t slot_mask = (1u << FPS_RUNS_SLOT_BITS) - 1;
    unsigned long long key = own > 0 ? fps_key(farthest, low >> FPS_RUNS_SLOT_BITS) : 0ull;
    int at = own > 0 ? low & slot_mask : 0; /* a warp of a cluster's last block may own nothing */
    /* The warp's box (the union of its runs') and key. */
    float wlo[3] = {lo[0], lo[1], lo[2]}, whi[3] = {hi[0], hi[1], hi[2]};
    warp_box(wlo, whi);
    int win;
    unsigned long long wkey = warp_max_key(key, &win);
    unsigned evals = 0;
    int parity = 0; /* the round's */
    round_barrier(ctas);

    for (unsigned seq = 0;; seq++) {
        /* Samples q[from .. count): those that reach the warp's box, then
         * those of them that reach the run's (both against the keys at the
         * start of the round, however the samples come); then each slot is
         * lowered by all of those at once and the run's farthest point found
         * in the same pass. */
        const float wval = fps_key_dist(wkey), kval = fps_key_dist(key);
        unsigned round_evals = 0; /* counted once the round is known not to end the cloud */
        const auto apply = [&](int from, int count) {
        for (int s0 = from; s0 < count; s0 += 32) {
            const int s = s0 + lane;
            const float4 p = r.q[s < count ? s : 0];
            const unsigned hits = __ballot_sync(
                0xffffffffu, s < count && sp_box_d2(wlo, whi, p.x, p.y, p.z) < wval);
            unsigned mine = 0;
            for (unsigned h = hits; h; h &= h - 1) {
                const float4 q = r.q[s0 + __ffs(h) - 1];
                if (sp_box_d2(lo, hi, q.x, q.y, q.z) < kval)
                    mine |= h & -h;
            }
            if (!mine)
                continue;
            /* Four samples at a time in registers, their distances to a
             * slot independent of each other; the farthest point after the
             * last four. */
            float far = -1.0f;
            for (unsigned left = mine; left;) {
                const int now = min(__popc(left), 4);
                float4 q[4];
#pragma unroll
                for (int u = 0; u < 4; u++) {
                    q[u] = r.q[s0 + (left ? __ffs(left) - 1 : 0)];
                    left &= left - 1;
                }
                const bool last = !left;
                if (last)
                    far = -1.0f, low = 0xffffffffu;
                /* slot i (at e): lowered by the samples, the run's farthest kept */
                const auto lower = [&](int i, int e, float px, float py, float pz, float before,
                                       uint32_t pid) {
                    float v = before;
#pragma unroll
                    for (int u = 0; u < 4; u++) {
                        const float d = fps_dist(px, py, pz, q[u].x, q[u].y, q[u].z);
                        v = u < now && d < v ? d : v;
                    }
                    if (v < before)
                        sm[e] = v;
                    const uint32_t id = pid << FPS_RUNS_SLOT_BITS | i;
                    if (last && (v > far || (v == far && id < low)))
                        far = v, low = id;
                };
                if (GLOBAL_RUNS) {
                    /* L2 latency: the next slot's loads go out before this slot's
                     * store, which the compiler may not move them past */
                    float nx = 0.0f, ny = 0.0f, nz = 0.0f, nm = 0.0f;
                    uint32_t nid = 0;
                    if (own > 0)
                        nx = sx[t], ny = sy[t], nz = sz[t], nm = sm[t], nid = sid[t];
                    for (int i = 0; i < own; i++) {
                        const int e = i * T + t;
                        const float px = nx, py = ny, pz = nz, before = nm;
                        const uint32_t pid = nid;
                        if (i + 1 < own)
                            nx = sx[e + T], ny = sy[e + T], nz = sz[e + T], nm = sm[e + T],
                            nid = sid[e + T];
                        lower(i, e, px, py, pz, before, pid);
                    }
                } else {
                    for (int i = 0; i < own; i++) {
                        const int e = i * T + t;
                        lower(i, e, sx[e], sy[e], sz[e], sm[e], sid[e]);
                    }
                }
            }
            key = fps_key(far, low >> FPS_RUNS_SLOT_BITS);
            at = low & slot_mask;
            round_evals += own * __popc(mine);
        }
        };
        if (TAKER) { /* the samples as the taking block publishes them */
            bool done = false;
            for (int applied = 0;;) {
                const unsigned w = wait_published(&r.pub, seq, applied);
                const bool final = pub_final(w);
                if (final && r.done) {
                    done = true;
                    break;
                }
                apply(applied, pub_count(w));
                applied = pub_count(w);
                if (final)
                    break;
            }
            if (done)
                break;
        } else {
            if (r.done)
                break;
            apply(0, r.q_count);
        }
        evals += round_evals;
        float tau[FPS_ROUND_CLASSES];
#pragma unroll
        for (int k = 0; k < FPS_ROUND_CLASSES; k++)
            tau[k] = r.tau[k];
        /* Candidates: the warp counts its own in each row, takes its
         * places in block 0's lists with an atomic a row, then writes them
         * (past a list's end only the count matters). Counts a thread, then
         * prefixes over the lanes, 16 bits a row: a warp's runs hold at most
         * 2,048 slots. */
        const bool above = own > 0 && fps_key_dist(key) > tau[0];
        if (__any_sync(0xffffffffu, above)) {
            unsigned long long ours = 0;
            for (int i = 0; i < own && above; i++) {
                const int row = fps_round_row(sm[i * T + t], tau);
                ours += row < FPS_ROUND_CLASSES ? 1ull << (16 * row) : 0ull;
            }
            unsigned long long before = ours; /* inclusive prefix over the lanes */
            for (int o = 1; o < 32; o <<= 1) {
                const unsigned long long v = __shfl_up_sync(0xffffffffu, before, o);
                before += lane >= o ? v : 0ull;
            }
            const unsigned long long total = __shfl_sync(0xffffffffu, before, 31);
            const int in_row = lane < FPS_ROUND_CLASSES ? (int)(total >> (16 * lane) & 0xffff) : 0;
            int base = FPS_ROUND_CAP; /* lane k: row k's first place, at most the cap (8 bits) */
            if (in_row > 0)
                base = min(atomicAdd(&lead->row_count[parity][lane], in_row), (int)FPS_ROUND_CAP);
            const unsigned first = __reduce_or_sync(
                0xffffffffu, lane < FPS_ROUND_CLASSES ? (unsigned)base << (8 * lane) : 0u);
            unsigned long long at = before - ours;
            for (int i = 0; i < own && ours; i++) {
                const int e = i * T + t, row = fps_round_row(sm[e], tau);
                if (row < FPS_ROUND_CLASSES) {
                    const int c = (int)(first >> (8 * row) & 0xff) + (int)(at >> (16 * row) & 0xffff);
                    if (c < FPS_ROUND_CAP) {
                        lead->cand[row * FPS_ROUND_CAP + c] =
                            make_float4(sx[e], sy[e], sz[e], __uint_as_float(sid[e]));
                        lead->cand_key[row * FPS_ROUND_CAP + c] = fps_key(sm[e], sid[e]);
                    }
                    at += 1ull << (16 * row);
                }
            }
        }
        wkey = warp_max_key(key, &win);
        if (lane == win) {
            lead_key[orank * warps + warp] = wkey;
            lead_xyz[orank * warps + warp] =
                make_float4(sx[at * T + t], sy[at * T + t], sz[at * T + t], 0.0f);
        }
        round_barrier(ctas);
        if (!TAKER) {
            if (rank == 0) /* the round's picks, with the coordinating warp */
                take_round(&r, ctas, post_key, post_xyz, warps * owner_blocks, 0, a.m, NULL,
                           parity, NULL, &cand_evals, false);
            round_barrier(ctas);
        }
        parity ^= 1;
    }
    evals = __reduce_add_sync(0xffffffffu, evals);
    if (lane == 0 && evals)
        atomicAdd(a.evals, (unsigned long long)evals);
    if (cand_evals)
        atomicAdd(a.evals, cand_evals);
}

/* ---- small clouds: a block a cloud, its points in registers ---------------- */
/* dp on one block of DENSE_WARPS warps: point i = slot * DENSE_THREADS + tid,
 * K slots a thread, also kept in shared memory (structure of arrays) to read
 * each new sample from. Every step a thread updates its K minima, all
 * independent, and finds its farthest by a tree over its slots (a higher
 * slot wins only when strictly farther: the lowest index among ties); a
 * warp takes the largest distance bits (non-negative floats order as their
 * bits) and, among the lanes that hold it, the lowest index, one redux
 * instruction each; the warps' winners meet in shared memory, double
 * buffered, so one barrier a step, and a tree over the four posts names
 * the block's. A step is a chain of dependent instructions, so it is
 * written twice, for even and odd steps, with its buffer a constant: no
 * address arithmetic in the chain. Distances round as dp's (sp_d2: no
 * FMA). The result is pcb_fps_better's order, dp's sequence. */
enum { DENSE_WARPS = 4, DENSE_THREADS = DENSE_WARPS * 32 };

/* Whether post (key, index) a is the farther: larger distance bits, then the
 * lower index. */
__device__ __forceinline__ bool dense_farther(unsigned ka, unsigned ia, unsigned kb, unsigned ib)
{
    return ka > kb || (ka == kb && ia < ib);
}

template <int K>
__global__ void __launch_bounds__(DENSE_THREADS) fps_sample_dense(const float *xyz, int n, int m,
                                                                  int start, int32_t *out,
                                                                  unsigned long long *counts)
{
    static_assert(DENSE_WARPS == 4, "a tree over four posts");
    __shared__ float sx[K * DENSE_THREADS], sy[K * DENSE_THREADS], sz[K * DENSE_THREADS];
    __shared__ unsigned wkey[2][DENSE_WARPS], widx[2][DENSE_WARPS]; /* each warp's farthest */
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const float *cloud = xyz + (size_t)blockIdx.x * (size_t)n * 3;
    int32_t *picks = out + (size_t)blockIdx.x * (size_t)m;
    float px[K], py[K], pz[K], md[K];
#pragma unroll
    for (int k = 0; k < K; k++) {
        const int i = k * DENSE_THREADS + tid;
        const bool in = i < n;
        px[k] = in ? cloud[3 * i] : 0.0f;
        py[k] = in ? cloud[3 * i + 1] : 0.0f;
        pz[k] = in ? cloud[3 * i + 2] : 0.0f;
        sx[i] = px[k], sy[i] = py[k], sz[i] = pz[k];
        /* +inf; padding -1 stays -1 (no distance is below it): never farthest */
        md[k] = in ? __int_as_float(0x7f800000) : -1.0f;
    }
    __syncthreads();
    int last = start;
    if (tid == 0)
        picks[0] = last;
    /* step j posts into buffer j & 1, a constant in each of the loop's two
     * copies (no address arithmetic in the chain) */
    const auto step = [&](auto parity, int j) {
        constexpr int buf = decltype(parity)::value;
        const float qx = sx[last], qy = sy[last], qz = sz[last];
        float v[K];
        int at[K];
#pragma unroll
        for (int k = 0; k < K; k++) {
            const float d = sp_d2(SP_SUB(px[k], qx), SP_SUB(py[k], qy), SP_SUB(pz[k], qz));
            md[k] = d < md[k] ? d : md[k];
            v[k] = md[k];
            at[k] = k;
        }
#pragma unroll
        for (int w = 1; w < K; w *= 2)
#pragma unroll
            for (int k = 0; k + w < K; k += 2 * w)
                if (v[k + w] > v[k]) {
                    v[k] = v[k + w];
                    at[k] = at[k + w];
                }
        /* padding (-1) keys 0 with no index; a real 0 keys 0 too and wins */
        const unsigned key = v[0] >= 0.0f ? __float_as_uint(v[0]) : 0u;
        const unsigned idx = v[0] >= 0.0f ? (unsigned)(at[0] * DENSE_THREADS + tid) : 0xffffffffu;
        const unsigned top = __reduce_max_sync(0xffffffffu, key);
        const unsigned low = __reduce_min_sync(0xffffffffu, key == top ? idx : 0xffffffffu);
        if (lane == 0)
            wkey[buf][warp] = top, widx[buf][warp] = low;
        __syncthreads();
        /* the block's farthest: a tree over the four posts */
        const unsigned k0 = wkey[buf][0], k1 = wkey[buf][1], k2 = wkey[buf][2], k3 = wkey[buf][3];
        const unsigned i0 = widx[buf][0], i1 = widx[buf][1], i2 = widx[buf][2], i3 = widx[buf][3];
        const bool s1 = dense_farther(k1, i1, k0, i0), s3 = dense_farther(k3, i3, k2, i2);
        const unsigned ka = s1 ? k1 : k0, ia = s1 ? i1 : i0;
        const unsigned kb = s3 ? k3 : k2, ib = s3 ? i3 : i2;
        last = (int)(dense_farther(kb, ib, ka, ia) ? ib : ia);
        if (tid == 0)
            picks[j] = last;
    };
    for (int j = 1; j < m; j += 2) {
        step(std::integral_constant<int, 1>(), j);
        if (j + 1 < m)
            step(std::integral_constant<int, 0>(), j + 1);
    }
    if (tid == 0) {
        atomicAdd(counts, (unsigned long long)n * (unsigned long long)(m - 1));
        atomicAdd(counts + 1, (unsigned long long)(m - 1));
    }
}

/* ---- host side --------------------------------------------------------------- */
extern "C" const pcb_impl pcb_fps_cuda_pruned;
typedef struct {
    pcb_task task;
    pcb_cuda_ctx ctx;
    fps_args args;
    int warps;   /* the bucket sampler's block: 16 warps (8 or 32 for tuning) */
    int runs;    /* the run sampler's threads a block (owners and the coordinator), or 0: buckets */
    int global_runs; /* 1: its runs in global memory */
    int dense;   /* small clouds: slots a thread of the block-a-cloud kernel (1, 2, 4, 8), or 0 */
    size_t smem; /* dynamic shared memory of the sampler */
    int end_bit; /* sort key bits */
    void *arena, *temp;
    size_t temp_bytes;
    float *xyz;
    unsigned long long *keys[2];
    uint32_t *vals[2];
} pruned_state;

static void pruned_release(void *state)
{
    pruned_state *s = (pruned_state *)state;
    if (!s)
        return;
    pcb_cuda_ctx_free(&s->ctx);
    cudaFree(s->arena);
    free(s);
}

/* Warps a block: 16 (the update spreads over them; the round's picks are one
 * warp's). PCBENCH_FPS_WARPS (8, 16, 32) overrides, for tuning and tests. */
/* The block-a-cloud kernel's slots a thread for n points, or 0: the samplers.
 * PCBENCH_FPS_DENSE=0 turns it off, and forcing a sampler's layout
 * (PCBENCH_FPS_WARPS, PCBENCH_FPS_CTAS) does too. */
static int dense_slots(int64_t n)
{
    const char *off = getenv("PCBENCH_FPS_DENSE");
    if ((off && !strcmp(off, "0")) || getenv("PCBENCH_FPS_WARPS") || getenv("PCBENCH_FPS_CTAS") ||
        n > FPS_DENSE_MAX_N)
        return 0;
    return n <= 128 ? 1 : n <= 256 ? 2 : n <= 512 ? 4 : 8;
}

static int warps_for(void)
{
    const char *env = getenv("PCBENCH_FPS_WARPS");
    int w = env ? atoi(env) : 0;
    return w == 8 || w == 16 || w == 32 ? w : 16;
}

/* Shared memory: groups first (tested every step), then buckets, then the
 * points, each level whole or not at all. */
static void place(fps_args *a, size_t limit, size_t *used)
{
    const size_t group = (size_t)a->groups * (32 + 16 + 8), bucket = (size_t)a->buckets * (32 + 16 + 8),
                 points = (size_t)a->slots * (16 + 4);
    size_t u = 64; /* the carve alignment's worst case */
    a->smem_groups = u + group <= limit;
    u += a->smem_groups ? group + 48 : 0;
    a->smem_buckets = a->smem_groups && u + bucket <= limit;
    u += a->smem_buckets ? bucket + 48 : 0;
    a->smem_points = a->smem_buckets && u + points <= limit;
    u += a->smem_points ? points + 32 : 0;
    *used = u;
}

/* The run kernel's owner blocks a cloud as PCBENCH_FPS_CTAS forces them (1,
 * 2, 4, 8, 16; for tuning and tests), or 0: the most (up to 8, or 16 where
 * 8 cannot take the cloud) whose clusters the GPU holds at once for the
 * whole batch. Below 16 a taking block joins them where the clusters with
 * it still fit the batch at once. */
static int ctas_forced(void)
{
    const char *env = getenv("PCBENCH_FPS_CTAS");
    const int c = env ? atoi(env) : 0;
    return c >= 1 && c <= FPS_RUNS_CTAS_MAX && !(c & (c - 1)) ? c : 0;
}

/* The run kernel over a cluster of ctas blocks a cloud, the first of them a
 * taking block where taker is 1, its runs in shared memory or not: its
 * runs, threads and shared memory, into s. Returns 1, or 0 where a block's
 * shared memory cannot hold them. */
static int runs_size(pruned_state *s, int ctas, int taker, int shared, size_t optin)
{
    fps_args *a = &s->args;
    const int owner_blocks = ctas - taker, owner_warps = fps_run_owners(a->n, owner_blocks) / 32,
              warps = (owner_warps + owner_blocks - 1) / owner_blocks;
    a->ctas = ctas;
    a->taker = taker;
    a->run = fps_run_length(a->n, owner_blocks);
    a->owners = 32 * warps;
    s->runs = a->owners + 32; /* and the coordinator */
    s->global_runs = !shared;
    s->smem = (shared ? (size_t)a->run * 32 * warps * RUN_BYTES : 0) +
              (size_t)warps * ctas * POST_BYTES;
    return s->smem + sizeof(round_state) <= optin;
}

typedef void (*runs_kernel_fn)(fps_args);

/* The run kernel with its runs in global memory or in shared memory. */
static runs_kernel_fn runs_kernel_of(int global_runs, int taker)
{
    return global_runs ? taker ? fps_sample_runs<true, true> : fps_sample_runs<true, false>
           : taker     ? fps_sample_runs<false, true>
                       : fps_sample_runs<false, false>;
}

static runs_kernel_fn runs_kernel(const pruned_state *s)
{
    return runs_kernel_of(s->global_runs, s->args.taker);
}

/* The run kernel's launch for clouds clouds, a cluster of args.ctas blocks
 * each (cluster: the attribute that says so, which cfg points to). */
static cudaLaunchConfig_t runs_launch(const pruned_state *s, unsigned clouds,
                                      cudaLaunchAttribute *cluster)
{
    return pcb_cuda_cluster_launch(clouds, s->args.ctas, (unsigned)s->runs, s->smem,
                                   s->ctx.stream, cluster);
}

static int setup(pruned_state *s)
{
    const pcb_task *t = &s->task;
    fps_args *a = &s->args;
    int rc = pcb_cuda_ctx_init(&s->ctx);
    if (rc != PCB_OK)
        return rc;
    int dev = 0, optin = 0;
    PCB_CUDA_TRY(cudaGetDevice(&dev));
    PCB_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    const size_t statics = sizeof(round_state) + (size_t)s->warps * (8 + 16); /* and the posts */
    const void *kernel = s->warps == 8    ? (const void *)fps_sample<8>
                         : s->warps == 16 ? (const void *)fps_sample<16>
                                          : (const void *)fps_sample<32>;
    /* Runs: x, y, z, minimum and a 32-bit index a slot, if the cloud fits;
     * its owner warps spread over a cluster of blocks, fewer where the GPU
     * cannot hold a cluster that size. */
    if (s->runs) {
        const int forced = ctas_forced();
        int chosen = 0; /* blocks a cloud; 0: none holds the whole batch at once, buckets */
        for (int kind = 0; kind < 4; kind++)
            if (cudaFuncSetAttribute(runs_kernel_of(kind & 1, kind >> 1),
                                     cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess)
                (void)cudaGetLastError(); /* no clusters of 16 here: their launch check says so */
        /* runs in shared memory first, then in global memory */
        for (int shared = 1; shared >= 0 && !chosen; shared--)
            for (int c = forced ? forced : FPS_RUNS_CTAS_MAX; c >= 1 && !chosen; c >>= 1) {
                if (!forced && c > 8 && fps_runs_take_in(t->n, 8, shared))
                    continue; /* 16 blocks only where 8 cannot take the cloud */
                if (!fps_runs_take_in(t->n, c, shared))
                    continue;
                /* c owner blocks, and a taking block beside them where the
                 * GPU holds those clusters for the whole batch at once */
                for (int taker = c < FPS_RUNS_CTAS_MAX; taker >= 0 && !chosen; taker--) {
                    if (!runs_size(s, c + taker, taker, shared, (size_t)optin))
                        continue;
                    PCB_CUDA_TRY(cudaFuncSetAttribute(
                        runs_kernel(s), cudaFuncAttributeMaxDynamicSharedMemorySize, (int)s->smem));
                    int fit = 1 << 30;
                    if (c + taker > 1) {
                        cudaLaunchAttribute cluster;
                        const cudaLaunchConfig_t cfg = runs_launch(s, 1, &cluster);
                        fit = pcb_cuda_clusters_fit(runs_kernel(s), &cfg);
                    }
                    if (fit >= t->batch || (forced && !taker && fit > 0))
                        chosen = c;
                }
            }
        if (chosen) /* the loop's last sizing was chosen's */
            kernel = (const void *)runs_kernel(s);
        else
            s->runs = 0;
    }
    a->opening = s->runs ? fps_runs_opening(t->n, t->m) : 1;
    /* The opening beside the sort, not after it, where the GPU has an SM for
     * each (the sampler waits for both). */
    int sms = 0;
    PCB_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    a->opening_apart = a->opening > 1 && 2 * t->batch <= sms;
    if (!s->runs)
        place(a, (size_t)optin > statics ? (size_t)optin - statics : 0, &s->smem);
    else if (t->n <= FPS_RUNS_SMALL_N)
        PCB_CUDA_TRY(cudaFuncSetAttribute(fps_sorted_codes,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)sizeof(block_sort::TempStorage)));
    PCB_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)s->smem));

    const size_t batch = (size_t)t->batch, n = (size_t)t->n;
    s->end_bit = CODE_BITS;
    while (s->end_bit < 64 && (t->batch - 1) >> (s->end_bit - CODE_BITS))
        s->end_bit++;
    PCB_CUDA_TRY(cub::DeviceRadixSort::SortPairs(NULL, s->temp_bytes, (unsigned long long *)NULL,
                                                 (unsigned long long *)NULL, (uint32_t *)NULL,
                                                 (uint32_t *)NULL, (int64_t)(batch * n), 0,
                                                 s->end_bit, s->ctx.stream));
    /* One allocation (each cudaFree waits for the device). */
    const size_t sizes[] = {batch * n * 3 * sizeof(float),
                            2 * batch * n * sizeof(unsigned long long),
                            2 * batch * n * sizeof(uint32_t),
                            s->temp_bytes,
                            batch * a->slots * sizeof(float4),
                            batch * a->slots * sizeof(float),
                            batch * a->buckets * 3 * sizeof(float4),
                            batch * a->buckets * sizeof(unsigned long long),
                            batch * a->groups * 3 * sizeof(float4),
                            batch * a->groups * sizeof(unsigned long long),
                            batch * (size_t)t->m * sizeof(int32_t),
                            2 * sizeof(unsigned long long),
                            s->runs && s->global_runs
                                ? batch * a->ctas * (size_t)a->owners * a->run * RUN_BYTES
                                : 0,
                            a->opening > 1 ? batch * n * sizeof(float) : 0};
    enum { PARTS = sizeof sizes / sizeof sizes[0] };
    size_t offset[PARTS], total = 0;
    for (int i = 0; i < PARTS; i++) {
        offset[i] = total;
        total += (sizes[i] + 255) & ~(size_t)255;
    }
    PCB_CUDA_TRY(cudaMalloc(&s->arena, total));
    char *base = (char *)s->arena;
    s->xyz = (float *)(base + offset[0]);
    s->keys[0] = (unsigned long long *)(base + offset[1]);
    s->keys[1] = s->keys[0] + batch * n;
    s->vals[0] = (uint32_t *)(base + offset[2]);
    s->vals[1] = s->vals[0] + batch * n;
    s->temp = base + offset[3];
    a->pts = (float4 *)(base + offset[4]);
    a->mind = (float *)(base + offset[5]);
    a->bbox = (float4 *)(base + offset[6]);
    a->bbest = a->bbox + batch * a->buckets * 2;
    a->bkey = (unsigned long long *)(base + offset[7]);
    a->gbox = (float4 *)(base + offset[8]);
    a->gbest = a->gbox + batch * a->groups * 2;
    a->gkey = (unsigned long long *)(base + offset[9]);
    a->out = (int32_t *)(base + offset[10]);
    a->evals = (unsigned long long *)(base + offset[11]);
    a->rounds = a->evals + 1;
    a->runs = s->runs && s->global_runs ? (float *)(base + offset[12]) : NULL;
    a->opened = a->opening > 1 ? (float *)(base + offset[13]) : NULL;
    a->xyz = s->xyz;
    a->order = s->vals[1];
    if (t->memory == PCB_MEM_DEVICE)
        return PCB_OK; /* each run copies its clouds in */
    PCB_CUDA_TRY(cudaMemcpyAsync(s->xyz, t->a, sizes[0], cudaMemcpyHostToDevice, s->ctx.stream));
    return pcb_cuda_sync(&s->ctx);
}

static int pruned_prepare(const pcb_task *t, void **state)
{
    /* Slot indexes are ints and sort keys hold the cloud above 30 code bits. */
    if (t->n > (1 << 30))
        return pcb_fail(PCB_EUNSUPPORTED, "fps cuda_pruned: %lld points exceed its limit of 2^30",
                        (long long)t->n);
    if (t->batch > INT32_MAX)
        return pcb_fail(PCB_EUNSUPPORTED, "fps cuda_pruned: batch %lld exceeds the grid limit",
                        (long long)t->batch);
    pruned_state *s = (pruned_state *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "fps cuda_pruned: out of memory");
    s->task = *t;
    fps_args *a = &s->args;
    a->n = (int)t->n;
    a->m = (int)t->m;
    a->start = (int)t->start;
    a->buckets = (a->n + FPS_BUCKET - 1) / FPS_BUCKET;
    a->slots = a->buckets * FPS_BUCKET;
    s->warps = warps_for();
    s->runs = !getenv("PCBENCH_FPS_WARPS"); /* setup decides and sizes it */
    s->dense = dense_slots(t->n);
    a->group_size = fps_group_size(a->buckets, s->warps);
    a->groups = (a->buckets + a->group_size - 1) / a->group_size;
    int rc = setup(s);
    if (rc != PCB_OK) {
        pruned_release(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

/* The run's launches, queued on stream. */
static int enqueue(pruned_state *s, cudaStream_t stream)
{
    const pcb_task *t = &s->task;
    PCB_CUDA_TRY(cudaMemsetAsync(s->args.evals, 0, 2 * sizeof *s->args.evals, stream));
    const unsigned grid = (unsigned)t->batch;
    if (s->dense) {
        const fps_args *a = &s->args;
        void (*const kernel[4])(const float *, int, int, int, int32_t *, unsigned long long *) = {
            fps_sample_dense<1>, fps_sample_dense<2>, fps_sample_dense<4>, fps_sample_dense<8>};
        const int which = s->dense == 1 ? 0 : s->dense == 2 ? 1 : s->dense == 4 ? 2 : 3;
        kernel[which]<<<grid, DENSE_THREADS, 0, stream>>>(s->xyz, a->n, a->m, a->start, a->out,
                                                          a->evals);
        PCB_CUDA_LAUNCHED("fps_sample_dense");
        return PCB_OK;
    }
    if (s->runs && t->n <= FPS_RUNS_SMALL_N) {
        fps_sorted_codes<<<grid * (s->args.opening_apart ? 2 : 1), CODE_THREADS,
                           sizeof(block_sort::TempStorage), stream>>>(s->args);
        PCB_CUDA_LAUNCHED("fps_sorted_codes");
    } else {
        const int bits = s->runs ? fps_run_morton_bits((int)t->n) : FPS_MORTON_BITS;
        fps_codes<<<grid, CODE_THREADS, 0, stream>>>(s->xyz, (int)t->n, bits,
                                                     s->runs != 0, s->keys[0],
                                                     s->vals[0]);
        PCB_CUDA_LAUNCHED("fps_codes");
        PCB_CUDA_TRY(cub::DeviceRadixSort::SortPairs(s->temp, s->temp_bytes, s->keys[0],
                                                     s->keys[1], s->vals[0], s->vals[1],
                                                     t->batch * t->n, 0, s->end_bit, stream));
    }
    if (s->runs) {
        cudaLaunchAttribute attrs[2];
        cudaLaunchConfig_t cfg = runs_launch(s, grid, &attrs[0]);
        cfg.stream = stream;
        /* it may launch while the codes and sort finish (it waits for them
         * before reading the order): the launch's latency overlaps them */
        attrs[cfg.numAttrs].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attrs[cfg.numAttrs].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = attrs;
        cfg.numAttrs++;
        PCB_CUDA_TRY(cudaLaunchKernelEx(&cfg, runs_kernel(s), s->args));
    } else if (s->warps == 8)
        fps_sample<8><<<grid, 8 * 32, s->smem, stream>>>(s->args);
    else if (s->warps == 16)
        fps_sample<16><<<grid, 16 * 32, s->smem, stream>>>(s->args);
    else
        fps_sample<32><<<grid, 32 * 32, s->smem, stream>>>(s->args);
    PCB_CUDA_LAUNCHED("fps_sample");
    return PCB_OK;
}

static int pruned_compute(void *state)
{
    pruned_state *s = (pruned_state *)state;
    int rc = pcb_cuda_begin(&s->ctx);
    if (rc == PCB_OK && (rc = enqueue(s, s->ctx.stream)) == PCB_OK)
        rc = pcb_cuda_end(&s->ctx);
    return rc;
}

static int pruned_sync(void *state)
{
    return pcb_cuda_sync(&((pruned_state *)state)->ctx);
}

static int pruned_fetch(void *state, pcb_result *out)
{
    pruned_state *s = (pruned_state *)state;
    const size_t bytes = (size_t)s->task.batch * (size_t)s->task.m * sizeof(int32_t);
    PCB_CUDA_TRY(cudaMemcpyAsync(out->index, s->args.out, bytes, cudaMemcpyDeviceToHost,
                                 s->ctx.stream));
    return pcb_cuda_sync(&s->ctx);
}

static int pruned_counters(void *state, pcb_counters *c)
{
    pruned_state *s = (pruned_state *)state;
    unsigned long long got[2] = {0, 0}; /* distances, rounds */
    PCB_CUDA_TRY(cudaMemcpyAsync(got, s->args.evals, sizeof got, cudaMemcpyDeviceToHost,
                                 s->ctx.stream));
    int rc = pcb_cuda_sync(&s->ctx);
    c->distance_evals = (int64_t)got[0];
    c->iterations = (int64_t)got[1];
    return rc;
}

/* A device-resident run: the cached state's buffers, the caller's clouds
 * copied in (non-finite coordinates as 0), the samples written straight
 * into the caller's array, all on the caller's stream. */
static int pruned_device(void *state, const pcb_task *t, pcb_result *out, cudaStream_t stream)
{
    pruned_state *s = (pruned_state *)state;
    fps_args saved = s->args;
    s->args.start = (int)t->start;
    s->args.out = out->index;
    int rc = pcb_cuda_finite_copy(s->xyz, t->a, t->batch * t->n * 3, FLT_MAX, out->finite, stream);
    if (rc == PCB_OK)
        rc = enqueue(s, stream);
    s->args = saved; /* the state's own output array again, for the next caller */
    return rc;
}

static int pruned_run_device(const pcb_task *t, pcb_result *out)
{
    static const pcb_cuda_maker maker = {&pcb_fps_cuda_pruned, pruned_prepare, pruned_release,
                                         pruned_device};
    return pcb_cuda_run_cached(&maker, t, out);
}

static int pruned_device_ms(void *state, double *ms)
{
    return pcb_cuda_elapsed_ms(&((pruned_state *)state)->ctx, ms);
}

extern "C" const pcb_impl pcb_fps_cuda_pruned = {
    .name = "cuda_pruned",
    .problem = PCB_FPS,
    .device = PCB_CUDA,
    .exact = 1,
    .canonical = 1,
    .limits = {.max_n = 1 << 30, .max_m = 0, .max_batch = INT32_MAX},
    .cost = PCB_COST_SAMPLES,
    .reference = 0,
    .max_gap = 0,
    .gap_option = 0,
    .known_defect = NULL,
    .summary = "rounds of provably-next samples (FPS among the candidates above a threshold), "
               "Morton runs over a cluster of blocks or buckets with bounding boxes",
    .available = pcb_cuda_available,
    .prepare = pruned_prepare,
    .compute = pruned_compute,
    .sync = pruned_sync,
    .fetch = pruned_fetch,
    .release = pruned_release,
    .counters = pruned_counters,
    .device_ms = pruned_device_ms,
    .run_device = pruned_run_device,
    .device_index = NULL,
};
