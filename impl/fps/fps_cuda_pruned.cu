/* fps_cuda_pruned.cu - exact FPS on the GPU that skips what a new sample
 * cannot change; the canonical sequence, bit for bit dp's.
 *
 * The layout is the CPU `pruned`'s (fps_bucket.h: Morton-sorted slots,
 * buckets of 32, groups of S buckets, boxes and farthest keys), so the
 * buckets a step updates are the same on both, and so is the count of
 * distance evaluations. compute runs three steps, all on the device:
 *   1. a block per cloud: its bounding box, then every point's Morton code
 *      keyed by its cloud;
 *   2. one CUB radix sort of the batch (stable: equal codes keep index order);
 *   3. the sampler, a block of 1024 threads per cloud. Its prologue gathers
 *      the sorted points, bucket and group boxes into shared memory (as much
 *      as fits: groups first, then buckets, then points; the rest stays in
 *      global memory, which L2 holds). Then one step a sample:
 *        - lane-parallel, each warp tests its groups' boxes against their
 *          farthest key; for a group the sample can reach, lanes test its
 *          buckets; for a bucket it can reach, each lane updates one
 *          point's running minimum, and a warp max (redux.sync on the key's
 *          two halves) gives the bucket's new key and farthest point;
 *        - each warp posts its best group key and that point's coordinates;
 *        - one barrier; every warp reduces the 32 posts itself, so the next
 *          sample's index and coordinates reach every thread without a
 *          second barrier or a dependent global load.
 *      Posts alternate between two buffers by step parity, which is what
 *      makes one barrier a step enough.
 * A step's cost is the barrier and a few dependent shared-memory loads and
 * reductions (a few hundred cycles), plus the buckets near the sample. */
#include <cub/cub.cuh>
#include <stdint.h>
#include <stdlib.h>

#include "cuda_util.h"
#include "fps_bucket.h"

enum {
    CODE_THREADS = 1024,
    CODE_BITS = 3 * FPS_MORTON_BITS,
    MAX_GROUP = 32, /* buckets a group: one lane each */
    BATCH = 4       /* buckets of one group updated together (loads in flight) */
};

/* Where a cloud's arrays are; the kernel points each either into shared or
 * into global memory. */
typedef struct {
    int n, slots, buckets, groups, group_size, m, start;
    int per_thread;                             /* small clouds: points a thread */
    int smem_groups, smem_buckets, smem_points; /* 1: that level in shared memory */
    const float *xyz;                           /* batch x n x 3 */
    const uint32_t *order;                      /* batch x n: sorted index within its cloud */
    float4 *pts;                                /* batch x slots: x, y, z, index bits */
    float *mind;                                /* batch x slots */
    float4 *bbox, *bbest;                       /* batch x buckets x 2 (lo, hi); x 1 */
    unsigned long long *bkey;
    float4 *gbox, *gbest;
    unsigned long long *gkey;
    int32_t *out;                               /* batch x m */
    unsigned long long *evals;                  /* slots updated, all clouds */
} fps_args;

/* ---- step 1: codes ---------------------------------------------------------- */
__device__ float block_reduce(float v, int is_max, float *scratch)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int o = 16; o > 0; o >>= 1) {
        float u = __shfl_xor_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, u) : fminf(v, u);
    }
    __syncthreads(); /* scratch may still be read from the previous call */
    if (lane == 0)
        scratch[warp] = v;
    __syncthreads();
    v = scratch[lane];
    for (int o = 16; o > 0; o >>= 1) {
        float u = __shfl_xor_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, u) : fminf(v, u);
    }
    return v;
}

__global__ void __launch_bounds__(CODE_THREADS) fps_codes(const float *xyz, int n,
                                                     unsigned long long *keys, uint32_t *vals)
{
    __shared__ float scratch[CODE_THREADS / 32];
    __shared__ float frame[4];
    const int64_t cloud = blockIdx.x;
    const float *p = xyz + cloud * n * 3;
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int64_t k = threadIdx.x; k < n; k += CODE_THREADS)
        for (int d = 0; d < 3; d++) {
            lo[d] = fminf(lo[d], p[3 * k + d]);
            hi[d] = fmaxf(hi[d], p[3 * k + d]);
        }
    for (int d = 0; d < 3; d++) {
        lo[d] = block_reduce(lo[d], 0, scratch);
        hi[d] = block_reduce(hi[d], 1, scratch);
    }
    if (threadIdx.x == 0)
        fps_frame(lo, hi, frame);
    __syncthreads();
    for (int64_t k = threadIdx.x; k < n; k += CODE_THREADS) {
        keys[cloud * n + k] = (unsigned long long)cloud << CODE_BITS |
                              sp_morton(frame, p[3 * k], p[3 * k + 1], p[3 * k + 2],
                                        FPS_MORTON_BITS);
        vals[cloud * n + k] = (uint32_t)k;
    }
}

/* ---- step 3: the sampler ------------------------------------------------------ */
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

template <int WARPS>
__global__ void __launch_bounds__(WARPS * 32, 1) fps_sample(fps_args a)
{
    enum { THREADS = WARPS * 32 };
    extern __shared__ float4 smem[];
    __shared__ unsigned long long post_key[2][WARPS];
    __shared__ float4 post_xyz[2][WARPS];
    const int64_t cloud = blockIdx.x;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int S = a.group_size, B = a.buckets, G = a.groups;
    char *cursor = (char *)smem;

    /* This cloud's arrays, in shared memory where they fit. */
    float4 *gbox = a.gbox + cloud * G * 2, *gbest = a.gbest + cloud * G;
    unsigned long long *gkey = a.gkey + cloud * G;
    if (a.smem_groups) {
        gbox = (float4 *)carve(&cursor, sizeof(float4) * 2 * G);
        gbest = (float4 *)carve(&cursor, sizeof(float4) * G);
        gkey = (unsigned long long *)carve(&cursor, sizeof(unsigned long long) * G);
    }
    float4 *bbox = a.bbox + cloud * B * 2, *bbest = a.bbest + cloud * B;
    unsigned long long *bkey = a.bkey + cloud * B;
    if (a.smem_buckets) {
        bbox = (float4 *)carve(&cursor, sizeof(float4) * 2 * B);
        bbest = (float4 *)carve(&cursor, sizeof(float4) * B);
        bkey = (unsigned long long *)carve(&cursor, sizeof(unsigned long long) * B);
    }
    float4 *pts = a.pts + cloud * a.slots;
    float *mind = a.mind + cloud * a.slots;
    if (a.smem_points) {
        pts = (float4 *)carve(&cursor, sizeof(float4) * a.slots);
        mind = (float *)carve(&cursor, sizeof(float) * a.slots);
    }

    /* Prologue: slots in Morton order (the last bucket padded with copies of
     * the last point), bucket boxes and keys, group boxes and keys. */
    const float *xyz = a.xyz + cloud * a.n * 3;
    const uint32_t *order = a.order + cloud * a.n;
    for (int i = threadIdx.x; i < a.slots; i += THREADS) {
        const uint32_t k = order[i < a.n ? i : a.n - 1];
        pts[i] = make_float4(xyz[3 * k], xyz[3 * k + 1], xyz[3 * k + 2], __uint_as_float(k));
        mind[i] = INFINITY;
    }
    __syncthreads();
    for (int b = warp; b < B; b += WARPS) {
        const float4 p = pts[b * FPS_BUCKET + lane];
        float v[6] = {p.x, p.y, p.z, p.x, p.y, p.z};
        for (int o = 16; o > 0; o >>= 1)
            for (int d = 0; d < 6; d++) {
                const float u = __shfl_xor_sync(0xffffffffu, v[d], o);
                v[d] = d < 3 ? fminf(v[d], u) : fmaxf(v[d], u);
            }
        int win;
        const unsigned long long key = warp_max_key(fps_key(INFINITY, __float_as_uint(p.w)), &win);
        if (lane == win)
            bbest[b] = make_float4(p.x, p.y, p.z, 0.0f);
        if (lane == 0) {
            bbox[2 * b] = make_float4(v[0], v[1], v[2], 0.0f);
            bbox[2 * b + 1] = make_float4(v[3], v[4], v[5], 0.0f);
            bkey[b] = key;
        }
    }
    __syncthreads();
    for (int g = threadIdx.x; g < G; g += THREADS) {
        const int first = g * S, last = min(first + S, B);
        float4 lo = bbox[2 * first], hi = bbox[2 * first + 1];
        unsigned long long key = bkey[first];
        int far = first;
        for (int b = first + 1; b < last; b++) {
            const float4 l = bbox[2 * b], h = bbox[2 * b + 1];
            lo = make_float4(fminf(lo.x, l.x), fminf(lo.y, l.y), fminf(lo.z, l.z), 0.0f);
            hi = make_float4(fmaxf(hi.x, h.x), fmaxf(hi.y, h.y), fmaxf(hi.z, h.z), 0.0f);
            if (bkey[b] > key) {
                key = bkey[b];
                far = b;
            }
        }
        gbox[2 * g] = lo;
        gbox[2 * g + 1] = hi;
        gkey[g] = key;
        gbest[g] = bbest[far];
    }
    int32_t *out = a.out + cloud * a.m;
    const int64_t first = 3 * (int64_t)a.start;
    float qx = xyz[first], qy = xyz[first + 1], qz = xyz[first + 2];
    if (threadIdx.x == 0)
        out[0] = a.start;
    unsigned long long evals = 0;
    __syncthreads();

    for (int j = 1; j < a.m; j++) {
        unsigned long long best = 0; /* the lane's farthest group key, and that group */
        int best_g = -1;
        /* Warp w owns groups w, w + WARPS, ...; each lane tests one of them
         * a round (one round when the groups are sized for it). */
        for (int base = warp; base < G; base += WARPS * 32) {
            const int g = base + WARPS * lane;
            unsigned long long gk = g < G ? gkey[g] : 0ull;
            const bool reach = g < G && box_dist(gbox + 2 * g, qx, qy, qz) < fps_key_dist(gk);
            const unsigned touched = __ballot_sync(0xffffffffu, reach);
            if (touched) {
                /* (group, bucket) pairs of the reached groups, a lane each:
                 * lane i < count holds the lane of the i-th reached group. */
                const int count = __popc(touched), pairs = count * S;
                const int list = lane < count ? (int)__fns(touched, 0, lane + 1) : 0;
                for (int r = 0; r < pairs; r += 32) {
                    const int k = r + lane;
                    const int src = __shfl_sync(0xffffffffu, list, (k / S) & 31);
                    const int bk = (base + WARPS * src) * S + k % S;
                    const bool hit = k < pairs && bk < B &&
                                     box_dist(bbox + 2 * bk, qx, qy, qz) < fps_key_dist(bkey[bk]);
                    unsigned hits = __ballot_sync(0xffffffffu, hit);
                    evals += __popc(hits);
                    while (hits) {
                        int b4[BATCH];
#pragma unroll
                        for (int u = 0; u < BATCH; u++) {
                            const int from = hits ? __ffs(hits) - 1 : 0;
                            const int bb = __shfl_sync(0xffffffffu, bk, from);
                            b4[u] = hits ? bb : -1;
                            hits &= hits - 1;
                        }
                        update_buckets(pts, mind, bbest, bkey, b4, qx, qy, qz);
                    }
                }
                __syncwarp();
                if (reach) { /* the group's new key, by the lane that tested it */
                    const int first = g * S, last = min(first + S, B);
                    int far = first;
                    gk = bkey[first];
#pragma unroll 4
                    for (int bb = first + 1; bb < last; bb++) {
                        const unsigned long long k = bkey[bb];
                        if (k > gk) {
                            gk = k;
                            far = bb;
                        }
                    }
                    gkey[g] = gk;
                    gbest[g] = bbest[far];
                }
            }
            if (gk > best) {
                best = gk;
                best_g = g;
            }
        }
        /* The warp's post, by the lane holding it (it wrote that group). */
        int win;
        const unsigned long long top = warp_max_key(best, &win);
        const int par = j & 1;
        if (lane == win) {
            post_key[par][warp] = top;
            post_xyz[par][warp] = best_g >= 0 ? gbest[best_g] : make_float4(0, 0, 0, 0);
        }
        __syncthreads();
        const unsigned long long next =
            warp_max_key(lane < WARPS ? post_key[par][lane] : 0ull, &win);
        const float4 q = post_xyz[par][win];
        qx = q.x, qy = q.y, qz = q.z;
        if (threadIdx.x == 0)
            out[j] = (int32_t)fps_key_index(next);
    }
    if (lane == 0 && evals)
        atomicAdd(a.evals, evals * FPS_BUCKET);
}

/* ---- step 3 for clouds of at most SMALL_MAX * SMALL_THREADS points ---------- */
/* Thread t owns P Morton-sorted points, t*P .. t*P + P - 1 (P = 4, 8 or 16,
 * a compile-time constant so nothing is predicated; runs past n are padded
 * with copies of the run's last point): their coordinates and indexes in
 * shared memory (slot i of thread t at i * T + t, so a warp's loads hit 32
 * banks), their running minima, box, farthest key and its coordinates in
 * registers. A step tests the thread's box against its key; only reached
 * threads update their P points (independent loads and tree reductions, for
 * instruction-level parallelism): the rest of a step is one warp max, one
 * post, one barrier and one reduction of the posts. A step costs about
 * 0.4 us with 8 warps and 0.8 us with 32 (timed on the H100): every warp
 * pays the reductions, so P is the smallest that 1024 threads allow. With
 * P = 16 the update's reduction trees need more than the 64 registers a
 * thread of a full block gets, so it reduces in chains instead. */
enum { SMALL_THREADS = 1024, SMALL_WARPS = SMALL_THREADS / 32, SMALL_MAX = 16 };

/* v[0] = the largest (MAX) or smallest of v[0 .. LEN-1], in a tree of depth
 * log2 LEN. */
template <int LEN, bool MAX, typename V>
__device__ __forceinline__ void tree_reduce(V *v)
{
    if constexpr (LEN > 1) {
        constexpr int W = (LEN + 1) / 2;
#pragma unroll
        for (int i = 0; i + W < LEN; i++)
            v[i] = (MAX ? v[i] > v[i + W] : v[i] < v[i + W]) ? v[i] : v[i + W];
        tree_reduce<W, MAX>(v);
    }
}

template <int P>
__global__ void __launch_bounds__(SMALL_THREADS, 1) fps_sample_small(fps_args a)
{
    extern __shared__ float4 smem[];
    __shared__ unsigned long long post_key[2][SMALL_WARPS];
    __shared__ float4 post_xyz[2][SMALL_WARPS];
    const int64_t cloud = blockIdx.x;
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5, T = blockDim.x,
              warps = T >> 5;
    float *sx = (float *)smem, *sy = sx + P * T, *sz = sy + P * T;
    uint16_t *sid = (uint16_t *)(sz + P * T);
    const float *xyz = a.xyz + cloud * a.n * 3;
    const uint32_t *order = a.order + cloud * a.n;
    const int first = t * P, count = min(P, a.n - first);

    float mind[P];
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    float bx = 0.0f, by = 0.0f, bz = 0.0f;
    uint32_t low = 0xffffffffu;
#pragma unroll
    for (int i = 0; i < P; i++) {
        mind[i] = INFINITY;
        if (count > 0) {
            const uint32_t k = order[first + min(i, count - 1)];
            const float x = xyz[3 * k], y = xyz[3 * k + 1], z = xyz[3 * k + 2];
            sx[i * T + t] = x, sy[i * T + t] = y, sz[i * T + t] = z;
            sid[i * T + t] = (uint16_t)k;
            lo[0] = fminf(lo[0], x), lo[1] = fminf(lo[1], y), lo[2] = fminf(lo[2], z);
            hi[0] = fmaxf(hi[0], x), hi[1] = fmaxf(hi[1], y), hi[2] = fmaxf(hi[2], z);
            if (k < low) {
                low = k;
                bx = x, by = y, bz = z;
            }
        }
    }
    /* A thread without points has key 0: nothing is ever below it. */
    unsigned long long key = count > 0 ? fps_key(INFINITY, low) : 0ull;
    int32_t *out = a.out + cloud * a.m;
    const int64_t first_xyz = 3 * (int64_t)a.start;
    float qx = xyz[first_xyz], qy = xyz[first_xyz + 1], qz = xyz[first_xyz + 2];
    if (t == 0)
        out[0] = a.start;
    unsigned evals = 0;
    __syncthreads();

    for (int j = 1; j < a.m; j++) {
        if (sp_box_d2(lo, hi, qx, qy, qz) < fps_key_dist(key)) {
            float far;
            uint32_t low_at; /* the lowest index at distance far << 4 | its slot */
            if constexpr (P <= 12) { /* trees: short dependency chains */
                float v[P];
#pragma unroll
                for (int i = 0; i < P; i++) {
                    const float d =
                        fps_dist(sx[i * T + t], sy[i * T + t], sz[i * T + t], qx, qy, qz);
                    mind[i] = d < mind[i] ? d : mind[i];
                    v[i] = mind[i];
                }
                tree_reduce<P, true>(v);
                far = v[0];
                uint32_t id[P];
#pragma unroll
                for (int i = 0; i < P; i++)
                    id[i] = mind[i] == far ? (uint32_t)sid[i * T + t] << 4 | i : 0xffffffffu;
                tree_reduce<P, false>(id);
                low_at = id[0];
            } else {
                /* Chains, each slot guarded by the run length known only at
                 * run time (always P): the compiler then does not hoist all
                 * 3 P loads at once, which spilled the 64 registers. */
                const int p = a.per_thread;
                far = 0.0f;
#pragma unroll
                for (int i = 0; i < P; i++)
                    if (i < p) {
                        const float d =
                            fps_dist(sx[i * T + t], sy[i * T + t], sz[i * T + t], qx, qy, qz);
                        mind[i] = d < mind[i] ? d : mind[i];
                        far = mind[i] > far ? mind[i] : far;
                    }
                low_at = 0xffffffffu;
#pragma unroll
                for (int i = 0; i < P; i++)
                    if (i < p && mind[i] == far)
                        low_at = min(low_at, (uint32_t)sid[i * T + t] << 4 | i);
            }
            /* (the index has at most 14 bits here, the slot 4) */
            const uint32_t at = low_at & 15;
            key = fps_key(far, low_at >> 4);
            bx = sx[at * T + t], by = sy[at * T + t], bz = sz[at * T + t];
            evals += P;
        }
        int win;
        const unsigned long long top = warp_max_key(key, &win);
        const int par = j & 1;
        if (lane == win) {
            post_key[par][warp] = top;
            post_xyz[par][warp] = make_float4(bx, by, bz, 0.0f);
        }
        __syncthreads();
        const unsigned long long next =
            warp_max_key(lane < warps ? post_key[par][lane] : 0ull, &win);
        const float4 q = post_xyz[par][win];
        qx = q.x, qy = q.y, qz = q.z;
        if (t == 0)
            out[j] = (int32_t)fps_key_index(next);
    }
    evals = __reduce_add_sync(0xffffffffu, evals);
    if (lane == 0 && evals)
        atomicAdd(a.evals, (unsigned long long)evals);
}

/* ---- host side --------------------------------------------------------------- */
static const void *small_kernel(int per_thread)
{
    switch (per_thread) {
    case 4: return (const void *)fps_sample_small<4>;
    case 6: return (const void *)fps_sample_small<6>;
    case 8: return (const void *)fps_sample_small<8>;
    case 10: return (const void *)fps_sample_small<10>;
    case 12: return (const void *)fps_sample_small<12>;
    default: return (const void *)fps_sample_small<16>;
    }
}

typedef struct {
    pcb_task task;
    pcb_cuda_ctx ctx;
    fps_args args;
    int warps;   /* the warp kernel's block: 8 or 16 warps (32 for tuning) */
    int small_threads; /* the thread kernel's block (a multiple of 32) */
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

/* Warps a block: every warp pays a step's fixed bookkeeping, so fewer warps
 * step faster; more warps share the first steps' full updates and the group
 * tests of large clouds. PCBENCH_FPS_WARPS (8, 16, 32) overrides, for tuning. */
static int warps_for(int buckets)
{
    const char *env = getenv("PCBENCH_FPS_WARPS");
    int w = env ? atoi(env) : 0;
    if (w == 8 || w == 16 || w == 32)
        return w;
    return buckets <= 8 * 32 * 32 ? 8 : 16; /* timed on the H100: 32 never won */
}

/* Group size: the smallest that gives each lane one group to test (one
 * round of tests a step), at most 32 buckets (a lane each). */
static int group_size(int buckets, int warps)
{
    int s = (buckets + 32 * warps - 1) / (32 * warps);
    return s < 1 ? 1 : s > MAX_GROUP ? MAX_GROUP : s;
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
    const size_t statics = 2 * (size_t)s->warps * (8 + 16); /* the posts */
    place(a, (size_t)optin > statics ? (size_t)optin - statics : 0, &s->smem);
    const void *kernel = s->warps == 8    ? (const void *)fps_sample<8>
                         : s->warps == 16 ? (const void *)fps_sample<16>
                                          : (const void *)fps_sample<32>;
    if (a->per_thread) { /* x, y, z and a 16-bit index a slot */
        s->smem = (size_t)a->per_thread * s->small_threads * (3 * sizeof(float) + sizeof(uint16_t));
        kernel = small_kernel(a->per_thread);
    }
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
                            sizeof(unsigned long long)};
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
    a->xyz = s->xyz;
    a->order = s->vals[1];
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
    s->warps = warps_for(a->buckets);
    if (t->n <= SMALL_MAX * SMALL_THREADS && !getenv("PCBENCH_FPS_WARPS")) {
        /* The fewest points a thread (4, 6, ..., 12, 16) that 1024 threads cover. */
        a->per_thread = 4;
        while (a->per_thread * SMALL_THREADS < a->n)
            a->per_thread += a->per_thread < 12 ? 2 : 4;
        const int threads = (a->n + a->per_thread - 1) / a->per_thread;
        s->small_threads = (threads + 31) / 32 * 32;
    }
    a->group_size = group_size(a->buckets, s->warps);
    a->groups = (a->buckets + a->group_size - 1) / a->group_size;
    int rc = setup(s);
    if (rc != PCB_OK) {
        pruned_release(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static int pruned_compute(void *state)
{
    pruned_state *s = (pruned_state *)state;
    const pcb_task *t = &s->task;
    int rc = pcb_cuda_begin(&s->ctx);
    if (rc != PCB_OK)
        return rc;
    PCB_CUDA_TRY(cudaMemsetAsync(s->args.evals, 0, sizeof *s->args.evals, s->ctx.stream));
    fps_codes<<<(unsigned)t->batch, CODE_THREADS, 0, s->ctx.stream>>>(s->xyz, (int)t->n, s->keys[0],
                                                                s->vals[0]);
    PCB_CUDA_LAUNCHED("fps_codes");
    PCB_CUDA_TRY(cub::DeviceRadixSort::SortPairs(s->temp, s->temp_bytes, s->keys[0], s->keys[1],
                                                 s->vals[0], s->vals[1], t->batch * t->n, 0,
                                                 s->end_bit, s->ctx.stream));
    const unsigned grid = (unsigned)t->batch;
    const unsigned st = (unsigned)s->small_threads;
    void *args[] = {&s->args};
    if (s->args.per_thread)
        PCB_CUDA_TRY(cudaLaunchKernel(small_kernel(s->args.per_thread), grid, st, args, s->smem,
                                      s->ctx.stream));
    else if (s->warps == 8)
        fps_sample<8><<<grid, 8 * 32, s->smem, s->ctx.stream>>>(s->args);
    else if (s->warps == 16)
        fps_sample<16><<<grid, 16 * 32, s->smem, s->ctx.stream>>>(s->args);
    else
        fps_sample<32><<<grid, 32 * 32, s->smem, s->ctx.stream>>>(s->args);
    PCB_CUDA_LAUNCHED("fps_sample");
    return pcb_cuda_end(&s->ctx);
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
    unsigned long long evals = 0;
    PCB_CUDA_TRY(cudaMemcpyAsync(&evals, s->args.evals, sizeof evals, cudaMemcpyDeviceToHost,
                                 s->ctx.stream));
    int rc = pcb_cuda_sync(&s->ctx);
    c->distance_evals = (int64_t)evals;
    c->iterations = s->task.batch * (s->task.m - 1);
    return rc;
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
    .max_gap = 0,
    .known_defect = NULL,
    .summary = "Morton buckets with bounding boxes in shared memory, a block per cloud, "
               "one barrier a step; skips what a sample cannot reach",
    .available = pcb_cuda_available,
    .prepare = pruned_prepare,
    .compute = pruned_compute,
    .sync = pruned_sync,
    .fetch = pruned_fetch,
    .release = pruned_release,
    .counters = pruned_counters,
    .device_ms = pruned_device_ms,
};
