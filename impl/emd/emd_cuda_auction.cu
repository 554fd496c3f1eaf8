/* emd_cuda_auction.cu - certified EMD on the GPU: an eps-scaling Jacobi
 * auction, one block of 32 warps per pair (pairs of a batch in parallel;
 * where the batch leaves SMs idle, a cluster of up to 8 blocks a pair, the
 * team below), costs recomputed from the coordinates at every look (no
 * n x n buffer). The
 * rules (bids, keys, phases, the certificate that stops it) are in
 * emd_cuda_auction.h; tests/auction_replay.h replays them on the CPU.
 *
 * A round: every unassigned bidder finds its least two c_ij + p_j (a warp
 * each); an atomic max per object keeps the best key; after a barrier each
 * bidder reads the key of its object, the winner raises the price, evicts
 * the owner and clears the key; the losers and the evicted form the next
 * list. A lone bidder always wins, so warp 0 runs chains of one-bidder
 * rounds by itself. Up to n = 65,535 a phase's last few bidders are placed
 * by shortest augmenting paths instead (the finish, emd_cuda_auction.h).
 *
 * A bidder first looks into its candidate cache (128 objects and a bound,
 * see emd_cuda_auction.h): when the cache proves its least two, that is the
 * bid, at 4 costs a lane instead of n / 32. Otherwise the cache is rebuilt
 * by a float-only scan of B (by the warp, or by the whole block when few
 * bidders missed) and looked into again. Near-ties the bound cannot split
 * (duplicates), and n > 65535 (16-bit slots), take an exact scan: there most
 * objects cannot beat the lane's second least, which a float test on
 * squared distances and a float copy of the prices rules out with a 1e-5
 * margin, and only the rest get the exact float cost and double sum. Either
 * way the bid is the one a full exact scan gives.
 *
 * Memory: for n <= SMEM_MAX_N the pair's whole state sits in shared memory
 * (48 bytes a point); above, in a global scratch area that stays in L2. For
 * n <= SMEM_A_MAX_N A's coordinates are copied beside it (a block rebuild's
 * every thread, and every look, reads its bidder's), and the finish's
 * settled objects are staged after them, as many as fit (48 bytes a point;
 * with the state in global memory, GLOBAL_STAGE at a time; see
 * stage_capacity). The caches (264 bytes a point) are in global memory. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <cooperative_groups.h>

#include "cuda_util.h"
#include "emd.h"
#include "emd_cuda_auction.h"

namespace cg = cooperative_groups;

#define THREADS (PCB_CA_WARPS * 32)
#define STATE_BYTES 48                 /* per point: see pair_state */
#define SMEM_LIMIT (227 * 1024)        /* opt-in shared memory of an sm_90 block */
/* Room for the static arrays (the block rebuilds' rows are twice as large
 * with 8 slots a lane). */
#define STATIC_SMEM (PCB_CA_SLOTS == 4 ? 4096 : 8192)
#define SMEM_MAX_N ((SMEM_LIMIT - STATIC_SMEM) / STATE_BYTES)
static_assert(PCB_CA_SLOTS != 4 || SMEM_MAX_N == PCB_CA_SHARED_MAX_N,
              "the rules' PCB_CA_SHARED_MAX_N is where the state leaves shared memory");
/* Where the finish's settled objects are staged (stage_capacity): 48 bytes
 * a point (see settled_offer); with less room than STAGE_MIN of them, none
 * are (each offer then reads its settled object itself). */
#define STAGE_BYTES 48
#define STAGE_MIN 64
/* Where A's coordinates fit beside the state too (12 bytes a point, rounded
 * to 16 for the block), leaving the finish room to stage STAGE_BESIDE_A
 * settled objects: every look and scan reads its bidder's from there
 * instead of L2 (1%-2% faster), while staging saves far more in the finish. */
#define A_BYTES 12
#define STAGE_BESIDE_A 256
#define SMEM_A_MAX_N \
    ((SMEM_LIMIT - STATIC_SMEM - 16 - STAGE_BESIDE_A * STAGE_BYTES) / (STATE_BYTES + A_BYTES))
#define A_AREA(n) (((size_t)(n) * A_BYTES + 15) / 16 * 16)
/* With the state in global memory the finish stages this many settled
 * objects at a time in shared memory (a larger bucket in chunks); the rest
 * of the 227 KB stays L1 cache for the state and the caches (4096 at a
 * time measured no faster: lidar pairs at 32 x 16,384 3.43 s against 3.40,
 * the cube at 32 x 8192 378 ms against 355). */
#ifndef GLOBAL_STAGE /* tuning builds only */
#define GLOBAL_STAGE 1024
#endif
static_assert(GLOBAL_STAGE * STAGE_BYTES <= SMEM_LIMIT - STATIC_SMEM, "the staging fits in shared memory");
#define MAX_ROUNDS_PER_N 256           /* a phase that needs more is a bug */

/* What the kernel reports per pair. */
typedef struct {
    long long bids, rounds, phases, stuck;
    unsigned long long scans, checks; /* full scans of B; cache looks */
    double p, d; /* the last certificate's sums */
    unsigned long long finish_evals; /* costs the finish evaluated */
} pair_stats;

/* A settled object of the finish as its offers read it (settled_of): its
 * owner's coordinates, value u and its dist, and its reach for the float
 * test (pcb_ca_finish_above); for finish_staged, staged once in shared
 * memory by the thread that settled it, the test's part first. */
struct __align__(16) settled_offer {
    float ax, ay, az, reach;
    double ds, u;
    int sj;
};
static_assert(sizeof(settled_offer) == STAGE_BYTES, "STAGE_BYTES is a settled_offer");
#define STAGE_WORDS (STAGE_BYTES / 16) /* float4s a settled_offer */

/* A block's work counts, which add_counts adds to its pair's: full scans
 * of B and cache looks by warp (its lane 0 counts them: count_scans,
 * count_check), the finish's cost evaluations by thread 0 (count x
 * unsettled objects a step, as every thread once added count a settled
 * object). In shared memory, reached from where they are counted: as
 * 64-bit registers that every thread held and passed down, they made the
 * kernel spill more (1.5%-1.7% of the time at 32 x 1024, 0.4% at 32 x 4096
 * and 8192 on the H100). With them the static arrays take all of
 * STATIC_SMEM; setup checks that they fit. */
__shared__ unsigned tally_scans[PCB_CA_WARPS];
__shared__ unsigned long long tally_checks[PCB_CA_WARPS], tally_evals;
__device__ __forceinline__ void count_scans(unsigned v = 1)
{
    if ((threadIdx.x & 31) == 0)
        tally_scans[threadIdx.x >> 5] += v;
}
__device__ __forceinline__ void count_check()
{
    if ((threadIdx.x & 31) == 0)
        tally_checks[threadIdx.x >> 5]++;
}

/* One pair's working state, n of each. */
struct pair_state {
    float4 *bq;              /* B's x, y, z and the float copy of the price */
    double *price;
    unsigned long long *top; /* the round's best key per object, 0 when none */
    int *owner;              /* point of A holding each point of B, -1 none */
    int *list[2];            /* bidders of this round and the next; together
                                they hold the certificate's least values */
    int *chose;              /* the object each listed bidder bid on */
    bool in_shared;          /* the state is in shared memory (n <= SMEM_MAX_N) */
    settled_offer *stage;    /* the finish's settled objects staged in shared
                                memory (stage_capacity), else NULL */
    int stage_cap;           /* how many stage holds */
};

/* The shared memory the pair's state and A's copy take at n points, where
 * the finish's stage begins (0: the state is in global memory). */
__host__ __device__ inline size_t shared_area(int n)
{
    if (n > SMEM_MAX_N)
        return 0;
    return (size_t)n * STATE_BYTES + (n <= SMEM_A_MAX_N ? A_AREA(n) : 0);
}

/* How many settled objects the finish stages in shared memory at n points
 * (a larger bucket goes by chunks): all of them where they fit beside the
 * state (and A), else as many as fit, GLOBAL_STAGE when the state is in
 * global memory, and none with room for fewer than STAGE_MIN (then each
 * offer reads its settled object itself, finish_whole). */
__host__ __device__ inline int stage_capacity(int n)
{
    if (pcb_ca_finish_at(n) == 0)
        return 0;
    if (n > SMEM_MAX_N)
        return GLOBAL_STAGE;
    const size_t room = (SMEM_LIMIT - STATIC_SMEM - shared_area(n)) / STAGE_BYTES;
    return room < STAGE_MIN ? 0 : room < (size_t)n ? (int)room : n;
}

/* Carve n points of state out of memory (16-byte aligned; in_shared: mem
 * is the block's shared memory). */
__device__ __forceinline__ pair_state carve(char *mem, int n, bool in_shared)
{
    pair_state s;
    s.bq = (float4 *)mem;
    s.price = (double *)(s.bq + n);
    s.top = (unsigned long long *)(s.price + n);
    s.list[0] = (int *)(s.top + n);
    s.list[1] = s.list[0] + n; /* list[0..1] also serve as a double array */
    s.owner = s.list[1] + n;
    s.chose = s.owner + n;
    s.in_shared = in_shared;
    s.stage = NULL;
    s.stage_cap = 0;
    return s;
}

/* The least of the warp's values (all >= +0, so their bits order like
 * them: two 32-bit reductions, high half then low). */
__device__ __forceinline__ double warp_min_value(double v)
{
    const unsigned long long bits = (unsigned long long)__double_as_longlong(v);
    const unsigned hi = __reduce_min_sync(0xffffffffu, (unsigned)(bits >> 32)),
                   lo = __reduce_min_sync(0xffffffffu,
                                          (unsigned)(bits >> 32) == hi ? (unsigned)bits : 0xffffffffu);
    return __longlong_as_double((long long)((unsigned long long)hi << 32 | lo));
}

/* The merge of the lanes' least two: the least (value, j), then the second
 * least of the union, which is the winning lane's second or another lane's
 * least. */
__device__ __forceinline__ pcb_ca_best warp_merge(pcb_ca_best b)
{
    pcb_ca_best r;
    r.w1 = warp_min_value(b.w1);
    r.j1 = (int32_t)__reduce_min_sync(0xffffffffu, b.w1 == r.w1 ? (unsigned)b.j1 : 0xffffffffu);
    r.w2 = warp_min_value(b.w1 == r.w1 && b.j1 == r.j1 ? b.w2 : b.w1);
    return r;
}

/* The second least of all the warp's lanes' least two, in float: an upper
 * bound on the second least the merged scan will find. */
__device__ __forceinline__ float warp_second(const pcb_ca_best &b)
{
    float m1 = (float)b.w1, m2 = (float)b.w2;
    for (int o = 16; o > 0; o >>= 1) {
        const float o1 = __shfl_xor_sync(0xffffffffu, m1, o),
                    o2 = __shfl_xor_sync(0xffffffffu, m2, o);
        m2 = fminf(fmaxf(m1, o1), fminf(m2, o2));
        m1 = fminf(m1, o1);
    }
    return m2;
}

/* The least of the warp's values, all >= +0 or infinite (v' of a slot):
 * their bits order like them, so one reduction. */
__device__ __forceinline__ float warp_min(float x)
{
    return __uint_as_float(__reduce_min_sync(0xffffffffu, __float_as_uint(x)));
}

/* The least two of c_ij + p_j over j = start, start + stride, ... (the
 * whole warp calls it with the same n and stride). Four objects per step,
 * their loads and squared distances independent of the running threshold,
 * so they overlap. Only an object that may come below the warp's second
 * least so far (a float test with a margin) gets the exact cost and double
 * sum: after steps 1, 2, 4, 8, ... the lanes share that threshold, so the
 * exact path, which a whole warp takes when one lane needs it, stays rare.
 * Values above the warp's second least cannot change the merged result. */
__device__ __forceinline__ pcb_ca_best scan(const float *ai, const pair_state &s, int n,
                                            int start, int stride)
{
    const float ax = ai[0], ay = ai[1], az = ai[2];
    pcb_ca_best b = pcb_ca_none();
    float w2f = INFINITY;
    int step = 0;
    for (int j0 = start; __any_sync(0xffffffffu, j0 < n); j0 += 4 * stride) {
        float d2[4], pf[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int j = j0 + u * stride;
            const float4 q = j < n ? s.bq[j] : make_float4(0.0f, 0.0f, 0.0f, INFINITY);
            d2[u] = pcb_ca_d2(ax, ay, az, q.x, q.y, q.z);
            pf[u] = q.w;
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const float t = w2f - pf[u];
            if (t > 0.0f && d2[u] <= t * t) { /* may come below the second least */
                const int j = j0 + u * stride;
                pcb_ca_take(&b, (double)sqrtf(d2[u]) + s.price[j], j);
                w2f = fminf(w2f, b.w2 < HUGE_VAL ? (float)b.w2 * PCB_CA_MARGIN : INFINITY);
            }
        }
        step++;
        if ((step & (step - 1)) == 0) /* a power of two */
            w2f = fminf(w2f, warp_second(b) * PCB_CA_MARGIN);
    }
    return b;
}

/* A cache row: a lane's PCB_CA_SLOTS 16-bit slots. */
#if PCB_CA_SLOTS == 4
typedef uint2 cache_row;
#else
typedef uint4 cache_row;
#endif

/* A bidder's caches: 32 lanes of PCB_CA_SLOTS 16-bit slots, and the bound (-1: none
 * yet). */
struct bidder_cache {
    cache_row *slot;
    double *bound;
};

/* A lane's slots over j = start, start + stride, ... (float tests only). */
__device__ __forceinline__ pcb_ca_slots scan_slots(const float *ai, const pair_state &s, int n,
                                                   int start, int stride)
{
    const float ax = ai[0], ay = ai[1], az = ai[2];
    pcb_ca_slots sl = pcb_ca_slots_empty();
    for (int j0 = start; j0 < n; j0 += 4 * stride) {
        float4 q[4]; /* four loads in flight */
#pragma unroll
        for (int u = 0; u < 4; u++)
            q[u] = j0 + u * stride < n ? s.bq[j0 + u * stride]
                                       : make_float4(0.0f, 0.0f, 0.0f, INFINITY);
        float d2[4], pf[4];
        int32_t j[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            d2[u] = pcb_ca_d2(ax, ay, az, q[u].x, q[u].y, q[u].z);
            pf[u] = q[u].w;
            j[u] = j0 + u * stride;
        }
        /* Four at once pays where B is in shared memory; with B in L2
         * (n > SMEM_MAX_N) a scan is long and most offers fail the float
         * test, so the four square roots cost more than the branches: one
         * by one there (32 x 16,384: 0.86 s against 1.03 s). */
        if (s.in_shared) {
            pcb_ca_slots_offer4(&sl, d2, pf, j);
        } else {
#pragma unroll
            for (int u = 0; u < 4; u++)
                pcb_ca_slots_offer(&sl, d2[u], pf[u], j[u]);
        }
    }
    return sl;
}

__device__ __forceinline__ cache_row pack_slots(const uint16_t j[PCB_CA_SLOTS])
{
#if PCB_CA_SLOTS == 4
    return make_uint2(j[0] | (unsigned)j[1] << 16, j[2] | (unsigned)j[3] << 16);
#else
    return make_uint4(j[0] | (unsigned)j[1] << 16, j[2] | (unsigned)j[3] << 16,
                      j[4] | (unsigned)j[5] << 16, j[6] | (unsigned)j[7] << 16);
#endif
}

/* A row's slots, unpacked. */
__device__ __forceinline__ void unpack_slots(cache_row row, unsigned js[PCB_CA_SLOTS])
{
    js[0] = row.x & 0xffffu, js[1] = row.x >> 16, js[2] = row.y & 0xffffu, js[3] = row.y >> 16;
#if PCB_CA_SLOTS == 8
    js[4] = row.z & 0xffffu, js[5] = row.z >> 16, js[6] = row.w & 0xffffu, js[7] = row.w >> 16;
#endif
}

/* The exact least two of c_ij + price_j over a cache (whole warp; `row`:
 * this lane's slots) and whether they are B's (with `least_only`, the
 * least: the certificate). */
__device__ __forceinline__ bool look_at(const float *ai, const pair_state &s, const double *price,
                                        cache_row row, double bound, bool least_only, pcb_ca_best *b)
{
    unsigned js[PCB_CA_SLOTS];
    unpack_slots(row, js);
    const float ax = ai[0], ay = ai[1], az = ai[2];
    /* No branch but sqrtf's rare slow path, and every load first: the
     * slots' loads and costs overlap. */
    float4 o[PCB_CA_SLOTS];
    double p[PCB_CA_SLOTS], v[PCB_CA_SLOTS];
    int32_t j[PCB_CA_SLOTS];
#pragma unroll
    for (int q = 0; q < PCB_CA_SLOTS; q++) {
        const unsigned k = js[q] != PCB_CA_NO_SLOT ? js[q] : 0u;
        o[q] = s.bq[k];
        p[q] = price[k];
    }
    float c[PCB_CA_SLOTS];
#pragma unroll
    for (int q = 0; q < PCB_CA_SLOTS; q++)
        c[q] = pcb_ca_cost(ax, ay, az, o[q].x, o[q].y, o[q].z);
#pragma unroll
    for (int q = 0; q < PCB_CA_SLOTS; q++) {
        const bool has = js[q] != PCB_CA_NO_SLOT;
        v[q] = has ? (double)c[q] + p[q] : HUGE_VAL;
        j[q] = has ? (int32_t)js[q] : INT32_MAX;
    }
    *b = warp_merge(pcb_ca_least_of(v, j, PCB_CA_SLOTS));
    return least_only ? pcb_ca_cache_least(*b, bound) : pcb_ca_cache_hit(*b, bound);
}

/* The same at the auction's prices. */
__device__ __forceinline__ bool look(const float *ai, const pair_state &s, cache_row row,
                                     double bound, bool least_only, pcb_ca_best *b)
{
    return look_at(ai, s, s.price, row, bound, least_only, b);
}

/* Look into a stored cache, loaded as its bound and this lane's row (whole
 * warp), at prices `price` (the auction's, or any at or above those the
 * cache was built with); a bound below 0: never built. */
__device__ __forceinline__ bool stored_look(const float *ai, const pair_state &s,
                                            const double *price, double bound, cache_row row,
                                            bool least_only, pcb_ca_best *b)
{
    if (bound < 0)
        return false;
    count_check();
    return look_at(ai, s, price, row, bound, least_only, b);
}

/* Look into bidder i's stored cache (whole warp). */
__device__ __forceinline__ bool cache_look(const float *ai, const pair_state &s,
                                           const double *price, int i, bool least_only,
                                           bidder_cache c, pcb_ca_best *b)
{
    return stored_look(ai, s, price, c.bound[i], c.slot[(size_t)i * 32 + (threadIdx.x & 31)],
                       least_only, b);
}

/* Rebuild bidder i's cache with one warp (row l: lane l's slots), store it
 * and look into it. */
__device__ __forceinline__ bool warp_rebuild(const float *ai, const pair_state &s, int n, int i,
                                             bool least_only, bidder_cache c, pcb_ca_best *b)
{
    const int lane = threadIdx.x & 31;
    const pcb_ca_slots sl = scan_slots(ai, s, n, lane, 32);
    const cache_row row = pack_slots(sl.j);
    const double bound = pcb_ca_cache_bound(warp_min(sl.v[PCB_CA_SLOTS - 1]));
    c.slot[(size_t)i * 32 + lane] = row;
    if (lane == 0)
        c.bound[i] = bound;
    count_scans();
    count_check();
    return look(ai, s, row, bound, least_only, b);
}

/* The exact least two by a full scan (whole warp). */
__device__ __forceinline__ pcb_ca_best exact_scan(const float *ai, const pair_state &s, int n)
{
    count_scans();
    return warp_merge(scan(ai, s, n, threadIdx.x & 31, 32));
}

/* Bidder i's least two (whole warp): from its cache, else from a rebuilt
 * one, else (near-ties the float bound cannot split) by an exact scan. */
template <bool CACHE>
__device__ __forceinline__ pcb_ca_best bidder_best(const float *a, const pair_state &s, int n,
                                                   int i, bool least_only, bidder_cache c)
{
    const float *ai = a + 3 * i;
    pcb_ca_best b;
    if (CACHE && (cache_look(ai, s, s.price, i, least_only, c, &b) ||
                  warp_rebuild(ai, s, n, i, least_only, c, &b)))
        return b;
    return exact_scan(ai, s, n);
}

/* The next item of a loop over items by warps (whole warp): warp w takes
 * item w first, then the next one left as soon as it is free (*taken: the
 * items taken past the first PCB_CA_WARPS, 0 at the start). A cache miss
 * costs its warp a scan of B, so fixed shares would leave the block
 * waiting on the warp with most misses. */
__device__ __forceinline__ int take_next(int *taken)
{
    int k = 0;
    if ((threadIdx.x & 31) == 0)
        k = PCB_CA_WARPS + atomicAdd(taken, 1);
    return __shfl_sync(0xffffffffu, k, 0);
}

/* Bid on best.j1 (one thread): bidder i, k-th of the round's list. */
__device__ __forceinline__ void place_bid(const pair_state &s, int k, int i, pcb_ca_best best,
                                          double eps)
{
    s.chose[k] = best.j1;
    atomicMax(&s.top[best.j1], pcb_ca_key(pcb_ca_increment(best, eps), i));
}

/* The rows and floors of a round's block rebuilds, one set a missed
 * bidder. */
#if PCB_CA_BLOCK_SCANS_MAX > 8
#error "block_rebuilds: at most 8 groups of 4 warps"
#endif
#define PART_SETS (PCB_CA_BLOCK_SCANS_MAX > 0 ? PCB_CA_BLOCK_SCANS_MAX : 1)
struct block_parts {
    cache_row row[PART_SETS][PCB_CA_WARPS];
    float floor[PART_SETS][PCB_CA_WARPS];
};

/* Block-rebuild thread vt's slots for bidder ai: what thread vt of the
 * block keeps seeing j = vt, vt + 1024, ... */
__device__ __forceinline__ pcb_ca_slots rebuild_slots(const float *ai, const pair_state &s, int n,
                                                      int vt)
{
    pcb_ca_slots sl = pcb_ca_slots_empty();
    if (n <= THREADS) { /* one object a thread: what offering it to empty slots keeps */
        if (vt < n) {
            const float4 o = s.bq[vt];
            const float v = pcb_ca_cost(ai[0], ai[1], ai[2], o.x, o.y, o.z) + o.w;
            if (v < INFINITY) {
                sl.v[0] = v;
                sl.j[0] = (uint16_t)vt;
            }
        }
    } else {
        sl = scan_slots(ai, s, n, vt, THREADS);
    }
    return sl;
}

/* Rows vw[0..R-1] of a block rebuild, computed by one warp standing in for
 * block warps vw[]: row w holds the PCB_CA_SLOTS least (v', j) of warp w's lanes'
 * slots, and its floor is the least over those lanes of the next value a
 * lane would have given (its largest kept one once all are taken). The R
 * rows' reductions are independent chains, interleaved. */
template <int R>
__device__ __forceinline__ void rebuild_rows(const float *ai, const pair_state &s, int n,
                                             const int *vw, block_parts &parts, int set)
{
    const int lane = threadIdx.x & 31;
    pcb_ca_slots sl[R];
    float last[R];
    uint16_t row[R][PCB_CA_SLOTS];
#pragma unroll
    for (int r = 0; r < R; r++) {
        sl[r] = rebuild_slots(ai, s, n, 32 * vw[r] + lane);
        last[r] = sl[r].v[PCB_CA_SLOTS - 1];
    }
#pragma unroll
    for (int q = 0; q < PCB_CA_SLOTS; q++) { /* each row's least (v', j) among the lanes' heads */
#pragma unroll
        for (int r = 0; r < R; r++) {
            const unsigned bits = __float_as_uint(sl[r].v[0]), /* v' >= +0: bits order as values */
                least = __reduce_min_sync(0xffffffffu, bits),
                j = __reduce_min_sync(0xffffffffu, bits == least ? sl[r].j[0] : 0xffffffffu);
            row[r][q] = (uint16_t)(least == __float_as_uint(INFINITY) ? PCB_CA_NO_SLOT : j);
            if (bits == least && sl[r].j[0] == j) { /* the owner pops its head */
#pragma unroll
                for (int t = 0; t < PCB_CA_SLOTS - 1; t++) {
                    sl[r].v[t] = sl[r].v[t + 1];
                    sl[r].j[t] = sl[r].j[t + 1];
                }
                sl[r].v[PCB_CA_SLOTS - 1] = INFINITY;
                sl[r].j[PCB_CA_SLOTS - 1] = (uint16_t)PCB_CA_NO_SLOT;
            }
        }
    }
#pragma unroll
    for (int r = 0; r < R; r++) {
        const float floor = warp_min(fminf(sl[r].v[0], last[r]));
        if (lane == 0) {
            parts.row[set][vw[r]] = pack_slots(row[r]);
            parts.floor[set][vw[r]] = floor;
        }
    }
}

/* The place of mask's g-th set bit (from 0). */
__device__ __forceinline__ int nth_set(unsigned mask, int g)
{
    for (int m = 0; m < g; m++)
        mask &= mask - 1;
    return __ffs(mask) - 1;
}

/* The k-th bidder of list, its cache rebuilt (row: this lane's, floor: its
 * floor): the cache stored, looked into, and its bid placed, by an exact
 * scan when the cache does not prove the least two (whole warp). */
__device__ __forceinline__ void rebuilt_bid(const float *a, const pair_state &s, int n,
                                            const int *list, int k, cache_row row, float floor,
                                            double eps, bidder_cache c)
{
    const int i = list[k];
    const float *ai = a + 3 * i;
    const double bound = pcb_ca_cache_bound(warp_min(floor));
    c.slot[(size_t)i * 32 + threadIdx.x % 32] = row;
    if (threadIdx.x % 32 == 0)
        c.bound[i] = bound;
    count_scans();
    count_check();
    pcb_ca_best b;
    if (!look(ai, s, row, bound, false, &b))
        b = exact_scan(ai, s, n);
    if (threadIdx.x % 32 == 0)
        place_bid(s, k, i, b, eps);
}

/* Rebuild the caches of a round's missed bidders (mask: their places in
 * the list, at most PCB_CA_BLOCK_SCANS_MAX) by the block, all at once: each
 * gets a group of 32 / R warps (R: the misses rounded up to a power of
 * two), and a warp of a group computes R of the 32 rows, two at a time, so
 * every cache is exactly what the whole block rebuilding it alone would
 * build (before, the block rebuilt them one by one, a barrier each). After
 * the barrier a group's first warp stores its cache, looks into it and
 * places its bidder's bid (by an exact scan of its own when the cache does
 * not prove the least two). Every thread calls it; the caller's barrier
 * ends it. */
__device__ __forceinline__ void block_rebuilds(const float *a, const pair_state &s, int n,
                                               const int *list, unsigned mask, double eps,
                                               bidder_cache c, block_parts &parts)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, misses = __popc(mask);
    /* R = 1 << shift; a group: 32 >> shift = 1 << (5 - shift) warps */
    const int shift = misses <= 1 ? 0 : 32 - __clz(misses - 1),
        group = warp >> (5 - shift), member = warp & ((PCB_CA_WARPS >> shift) - 1);
    int k = -1; /* the group's bidder: the group-th missed place */
    if (group < misses) {
        k = nth_set(mask, group);
        const float *ai = a + 3 * list[k];
        if (shift == 0 || n > THREADS) {
            for (int r = 0; r < 1 << shift; r++) {
                const int vw = member + (r << (5 - shift));
                rebuild_rows<1>(ai, s, n, &vw, parts, group);
            }
        } else {
            for (int r = 0; r < 1 << shift; r += 2) {
                const int vw[2] = {member + (r << (5 - shift)), member + ((r + 1) << (5 - shift))};
                rebuild_rows<2>(ai, s, n, vw, parts, group);
            }
        }
    }
    __syncthreads();
    if (group < misses && member == 0)
        rebuilt_bid(a, s, n, list, k, parts.row[group][lane], parts.floor[group][lane], eps, c);
}

/* ---- the team: a cluster of blocks a pair --------------------------------- */
/* Where the batch leaves SMs idle (32 pairs on a 132-SM GPU), a pair gets a
 * cluster of up to 8 blocks (setup picks how many). Block 0, the lead, runs
 * the auction as a lone block would; the others, its helpers, wait. For
 * the work that is a look per bidder (the rounds of 32 bidders or more, a
 * warp each; the certificate's least values; the dual ascent's two passes)
 * and for the ascent's c-transform, the lead posts an order, and block r of
 * the team takes items r, r + ctas, ... (its warps as take_next has them;
 * the c-transform in n / ctas ranges).
 *
 * With the state in shared memory (SHARED) a helper holds B's coordinates
 * (and A's where they fit), copies the lead's prices at each order, and
 * bids into keys of its own (an atomic max in its shared memory); the lead
 * pulls them into its keys before the awards, and so the ascent's demands
 * and gaps and the transform's maxima (its rows split). No atomic crosses
 * blocks there: an atomic on the lead's shared memory from another block
 * is not atomic with the lead's own (on the H100 such a team gave other
 * answers). With the state in global memory the team shares it: helpers
 * read the prices where they are and bid by atomics on the pair's keys, all
 * of them L2 atomics, and the transform is split by objects; the finish is
 * the whole team's too (finish: objects split, its reductions merged).
 *
 * Each result is exact whatever the split (maxima, minima, sums of
 * integers), a bid is the same whoever makes it, and a cache the same
 * whoever builds it, so the answer and the counts are the lone block's. An
 * order costs two cluster barriers (each a release and an acquire across
 * the cluster, about a thousand cycles), so rounds of fewer bidders (a
 * cache look each, then block rebuilds) stay the lead's. */
enum { TEAM_END, TEAM_BIDS, TEAM_LEAST, TEAM_GAPS, TEAM_ROWS, TEAM_TRANSFORM, TEAM_FINISH,
       TEAM_REBUILDS };
struct team_order {
    int op;      /* TEAM_... */
    int bidders; /* TEAM_BIDS, TEAM_FINISH: the round's list (list[which]) */
    int which;
    double eps;
    double *q; /* the dual ascent's prices (TEAM_ROWS, TEAM_TRANSFORM) */
    unsigned missed; /* TEAM_REBUILDS: the places in list[which] of the missed bidders */
};

/* With the state in global memory a round's block rebuilds of this many
 * misses or more are the team's (team_rebuild_rows): a cache row's scan
 * there is n / 1024 objects a lane, and a warp that computes two rows or
 * more (two misses or more) takes that many times as long. */
#ifndef TEAM_REBUILDS_FROM /* tuning builds only */
#define TEAM_REBUILDS_FROM 2
#endif

/* The next item of block `rank` in a loop over items split among ctas
 * blocks (whole warp; warp w takes the block's item w first). */
__device__ __forceinline__ int team_next(int *taken, int rank, int ctas)
{
    return rank + ctas * take_next(taken);
}

/* A barrier of the team where there is one, else of the block. */
__device__ __forceinline__ void team_sync(bool team)
{
    if (team)
        cg::this_cluster().sync();
    else
        __syncthreads();
}

/* The lead: post an order to its team (tid 0 writes it; every thread
 * calls); without a team, only a block barrier. */
__device__ __forceinline__ void team_post(bool team, team_order *order, team_order o)
{
    if (team && threadIdx.x == 0)
        *order = o;
    team_sync(team);
}

/* The lead, after a round's team barrier: the helpers' keys of the round's
 * objects into its own (a helper clears its keys at the next order). */
__device__ __forceinline__ void team_pull_keys(const pair_state &s, int bidders, int ctas)
{
    cg::cluster_group cluster = cg::this_cluster();
    for (int k = threadIdx.x; k < bidders; k += THREADS) {
        const int j = s.chose[k];
        for (int h = 1; h < ctas; h++) {
            const unsigned long long key = *cluster.map_shared_rank(&s.top[j], h);
            if (key)
                atomicMax(&s.top[j], key);
        }
    }
    __syncthreads();
}

/* Block rank's share of a round's block rebuilds (missed: the places in
 * list of the missed bidders): of each missed bidder's 32 cache rows, the
 * rows vw with vw % ctas == rank, a warp a row, into parts as block_rebuilds
 * has them (the same rows: a row is what block warp vw's lanes keep). The
 * lead then takes row vw from block vw % ctas (rebuilt_bid). */
__device__ __forceinline__ void team_rebuild_rows(const float *a, const pair_state &s, int n,
                                                  const int *list, unsigned missed,
                                                  block_parts &parts, int rank, int ctas)
{
    const int warp = threadIdx.x >> 5, misses = __popc(missed);
    const int rows = (PCB_CA_WARPS - 1 - rank) / ctas + 1; /* this block's rows a miss */
    for (int t = warp; t < misses * rows; t += PCB_CA_WARPS) {
        const int g = t / rows, vw = rank + ctas * (t % rows);
        rebuild_rows<1>(a + 3 * list[nth_set(missed, g)], s, n, &vw, parts, g);
    }
}

/* The lead, once the team's rows are in: warp g stores the g-th missed
 * bidder's cache, row l from block l % ctas, and places its bid (every
 * thread calls it; the caller's barrier ends it). */
__device__ __forceinline__ void team_rebuilt_bids(const float *a, const pair_state &s, int n,
                                                  const int *list, unsigned missed, double eps,
                                                  bidder_cache c, block_parts &parts, int ctas)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (warp >= __popc(missed))
        return;
    const block_parts *from = cg::this_cluster().map_shared_rank(&parts, lane % ctas);
    rebuilt_bid(a, s, n, list, nth_set(missed, warp), from->row[warp][lane],
                from->floor[warp][lane], eps, c);
}

/* q_j = max_i (u_i - c_ij) over rows i0 <= i < i1 and objects j0 <= j <
 * j1, u_i in s.top as double bits, into out: a thread per object, K at
 * once, every thread on the same row i at a time (its coordinates and u_i
 * are broadcast reads). */
template <int K>
__device__ __forceinline__ void c_transform(const float *a, const pair_state &s, int i0, int i1,
                                            int j0, int j1, double *out)
{
    const int tid = threadIdx.x;
    for (int jk = j0; jk < j1; jk += K * THREADS) {
        float bx[K], by[K], bz[K];
        double m[K];
#pragma unroll
        for (int k = 0; k < K; k++) {
            const int j = min(jk + k * THREADS + tid, j1 - 1);
            bx[k] = s.bq[j].x, by[k] = s.bq[j].y, bz[k] = s.bq[j].z;
            m[k] = -HUGE_VAL;
        }
        for (int i = i0; i < i1; i++) {
            const float ax = a[3 * i], ay = a[3 * i + 1], az = a[3 * i + 2];
            const double u = __longlong_as_double((long long)s.top[i]);
#pragma unroll
            for (int k = 0; k < K; k++)
                m[k] = fmax(m[k], u - (double)pcb_ca_cost(ax, ay, az, bx[k], by[k], bz[k]));
        }
#pragma unroll
        for (int k = 0; k < K; k++)
            if (jk + k * THREADS + tid < j1)
                out[jk + k * THREADS + tid] = m[k];
    }
}

/* The rows block `rank` of ctas transforms (a range each). */
__device__ __forceinline__ void team_rows(int n, int rank, int ctas, int *i0, int *i1)
{
    *i0 = (int)((int64_t)n * rank / ctas);
    *i1 = (int)((int64_t)n * (rank + 1) / ctas);
}

/* Block rank's share of the c-transform: with the state in shared memory
 * its rows' maxima for every object (merged by the lead), else every row's
 * for its objects (no merge: out is the pair's). */
template <bool SHARED>
__device__ __forceinline__ void c_transform_share(const float *a, const pair_state &s, int n,
                                                  int rank, int ctas, double *out)
{
    int r0, r1;
    team_rows(n, rank, ctas, &r0, &r1);
    const int i0 = SHARED ? r0 : 0, i1 = SHARED ? r1 : n;
    const int j0 = SHARED ? 0 : r0, j1 = SHARED ? n : r1;
    if (j1 - j0 <= THREADS)
        c_transform<1>(a, s, i0, i1, j0, j1, out);
    else
        c_transform<4>(a, s, i0, i1, j0, j1, out);
}

/* The dual ascent's step 1 over block rank's share of the bidders: how
 * many demand each object (as its least) and their least gap (second least
 * - least), into this block's s.chose and s.top (0 and ~0 before). */
template <bool CACHE>
__device__ __forceinline__ void ascent_gaps(const float *a, const pair_state &s, int n,
                                            bidder_cache c, int *taken, int rank, int ctas)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int i = rank + ctas * warp; i < n; i = team_next(taken, rank, ctas)) {
        const pcb_ca_best b = bidder_best<CACHE>(a, s, n, i, false, c);
        if (lane == 0) {
            atomicAdd(&s.chose[b.j1], 1);
            atomicMin(&s.top[b.j1], (unsigned long long)__double_as_longlong(b.w2 - b.w1));
        }
    }
}

/* Step 2 over block rank's share: row minima at q (caches: q >= p), as
 * double bits into u (the lead's s.top). */
template <bool CACHE>
__device__ __forceinline__ void ascent_rows(const float *a, const pair_state &s, int n,
                                            bidder_cache c, const double *q,
                                            unsigned long long *u, int *taken, int rank, int ctas)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int i = rank + ctas * warp; i < n; i = team_next(taken, rank, ctas)) {
        const float *ai = a + 3 * i;
        pcb_ca_best b;
        if (!(CACHE && cache_look(ai, s, q, i, true, c, &b))) {
            double m = HUGE_VAL;
            for (int j = lane; j < n; j += 32) {
                const float4 o = s.bq[j];
                m = fmin(m, (double)pcb_ca_cost(ai[0], ai[1], ai[2], o.x, o.y, o.z) + q[j]);
            }
            b.w1 = warp_min_value(m);
            count_scans();
        }
        if (lane == 0)
            u[i] = (unsigned long long)__double_as_longlong(b.w1);
    }
}

/* The dual ascent of emd_cuda_auction.h (every thread calls it, after a
 * certificate that did not prove the target): improved prices into q (the
 * pair's price output), its D' returned to every thread. The auction's
 * state is left as it was: s.top and s.chose serve as scratch (the gaps and
 * demanders of step 1, then the row minima u) and top is cleared again.
 * With a team (ctas > 1, the lead calls it) the helpers take their share of
 * each step. */
template <bool SHARED, bool CACHE>
__device__ double dual_ascent(const float *a, const pair_state &s, int n, bidder_cache c,
                              double *q, double *sum_d, team_order *order, int ctas)
{
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const bool team = ctas > 1;
    cg::cluster_group cluster = cg::this_cluster();
    __shared__ int taken[2]; /* steps 1 and 2: see take_next */
    for (int j = tid; j < n; j += THREADS) {
        s.chose[j] = 0;
        s.top[j] = ~0ull; /* the least gap's bits (gaps >= +0 order like them) */
    }
    if (tid == 0)
        taken[0] = taken[1] = 0;
    team_post(team, order, team_order{TEAM_GAPS, 0, 0, 0.0, q});
    ascent_gaps<CACHE>(a, s, n, c, &taken[0], 0, ctas); /* 1 */
    team_sync(team); /* the helpers' demands and gaps are in */
    for (int j = tid; j < n; j += THREADS) {
        int demanders = s.chose[j];
        unsigned long long gap = s.top[j];
        for (int h = 1; SHARED && h < ctas; h++) { /* else they are in already */
            demanders += *cluster.map_shared_rank(&s.chose[j], h);
            gap = min(gap, *cluster.map_shared_rank(&s.top[j], h));
        }
        q[j] = pcb_ca_raised(s.price[j], demanders, __longlong_as_double((long long)gap));
    }
    team_post(team, order, team_order{TEAM_ROWS, 0, 0, 0.0, q});
    ascent_rows<CACHE>(a, s, n, c, q, s.top, &taken[1], 0, ctas); /* 2 */
    team_sync(team); /* the helpers' row minima are in */
    if (team)
        team_post(true, order, team_order{TEAM_TRANSFORM, 0, 0, 0.0, q});
    c_transform_share<SHARED>(a, s, n, 0, ctas, q); /* 3: this block's share */
    if (team)
        cluster.sync(); /* the helpers' maxima are in */
    if (team && SHARED) {
        for (int j = tid; j < n; j += THREADS) {
            double m = q[j];
            for (int h = 1; h < ctas; h++)
                m = fmax(m, ((const double *)cluster.map_shared_rank(s.list[0], h))[j]);
            q[j] = m;
        }
    }
    if (tid == 0)
        count_scans(n); /* its n x n costs, counted as n scans */
    __syncthreads();
    double my_d = 0; /* D', summed as the certificate's D */
    if (lane == 0)
        for (int i = warp; i < n; i += PCB_CA_WARPS)
            my_d += __longlong_as_double((long long)s.top[i]) - q[i];
    if (lane == 0)
        sum_d[warp] = my_d;
    __syncthreads();
    double d = 0;
    for (int w = 0; w < PCB_CA_WARPS; w++)
        d += sum_d[w];
    for (int j = tid; j < n; j += THREADS)
        s.top[j] = 0;
    __syncthreads();
    return d;
}

/* ---- the finish (emd_cuda_auction.h): shortest augmenting paths ---------- */
/* Object j's key (dist, pred + 1) is kept in top[j] (zero again after the
 * finish), whether it is settled in chose[j], a step's settled objects
 * staged in shared memory (beyond the stage's room, in the round's list).
 * A step: the reductions, a barrier, the bucket settled and staged, a
 * barrier, then a thread per object takes the offers of every settled one
 * and computes its part of the next step's reductions; the next step's
 * barrier ends them. */
#define UNSETTLED (-1)
#define SETTLED 0
struct finish_parts { /* reductions and counts by step parity */
    double lo[2][PCB_CA_WARPS], lof[2][PCB_CA_WARPS];
    int jf[2][PCB_CA_WARPS];
    int count[2]; /* settled objects */
    int rows[PCB_CA_FINISH_MOST];
};
union round_parts {
    block_parts rebuild;
    finish_parts finish;
};

/* A key read after other threads' atomics (not from a stale L1 line). */
__device__ __forceinline__ unsigned long long finish_key(const pair_state &s, int j)
{
    return *(volatile unsigned long long *)&s.top[j];
}

/* What settled object sj offers with: its owner's (i's) coordinates,
 * value and dist. */
__device__ __forceinline__ settled_offer settled_of(const float *a, const pair_state &s, int sj,
                                                   int i)
{
    settled_offer o;
    o.ax = a[3 * i];
    o.ay = a[3 * i + 1];
    o.az = a[3 * i + 2];
    o.sj = sj;
    o.ds = pcb_ca_finish_dist(finish_key(s, sj));
    const float4 q = s.bq[sj];
    o.u = (double)pcb_ca_cost(o.ax, o.ay, o.az, q.x, q.y, q.z) + s.price[sj]; /* its owner's value */
    o.reach = pcb_ca_finish_above(o.u - o.ds, fabs(o.u) + fabs(o.ds));
    return o;
}

/* Offers from the settled objects sj of list[0..count-1] to every
 * unsettled object: a thread per object, so no atomics (whole block). */
__device__ __forceinline__ void finish_whole(const float *a, const pair_state &s, int n,
                                             const int *list, int count)
{
    for (int j = threadIdx.x; j < n; j += THREADS) {
        if (s.chose[j] != UNSETTLED)
            continue;
        const float4 q = s.bq[j];
        const double pj = s.price[j];
        unsigned long long best = finish_key(s, j);
        for (int m = 0; m < count; m++) {
            const settled_offer o = settled_of(a, s, list[m], s.owner[list[m]]);
            const unsigned long long k = pcb_ca_finish_offer(
                o.ds, pcb_ca_cost(o.ax, o.ay, o.az, q.x, q.y, q.z), pj, o.u, o.sj);
            best = k < best ? k : best;
        }
        s.top[j] = best;
    }
}

/* finish_whole from the settled objects staged in shared memory (up to
 * stage_cap of them; more go by chunks): every thread reads the same one
 * at once (a broadcast), so an offer is a squared distance and a float test
 * (pcb_ca_finish_beyond), and only the few that may take the key get the
 * cost and double sums; not four dependent loads and the owner's value
 * again (at 32 x 1024 the finish was a third of the time, mostly these
 * offers). Each thread also returns its part of the next step's reductions
 * over the unsettled objects, whose keys it alone wrote: the least dist
 * (lo) and the least (dist, j) of a free one (lof, jf). The same keys as
 * finish_whole. Objects first, first + stride, ... (a team's
 * share; else all). */
__device__ __forceinline__ void finish_staged(const pair_state &s, int n, int count, int first,
                                              int stride, double &lo, double &lof, int &jf)
{
    lo = lof = HUGE_VAL;
    jf = INT_MAX;
    for (int j = first; j < n; j += stride) {
        if (s.chose[j] != UNSETTLED)
            continue;
        const float4 q = s.bq[j];
        const double pj = s.price[j];
        unsigned long long best = s.top[j];
        float reach = pcb_ca_finish_reach(pcb_ca_finish_dist(best), pj);
        for (int m = 0; m < count; m++) {
            const settled_offer &o = s.stage[m];
            const float d2 = pcb_ca_d2(o.ax, o.ay, o.az, q.x, q.y, q.z);
            if (pcb_ca_finish_beyond(d2, reach + o.reach))
                continue;
            const unsigned long long k = pcb_ca_finish_offer(o.ds, sqrtf(d2), pj, o.u, o.sj);
            if (k < best) {
                best = k;
                reach = pcb_ca_finish_reach(pcb_ca_finish_dist(best), pj);
            }
        }
        s.top[j] = best;
        const double d = pcb_ca_finish_dist(best);
        lo = d < lo ? d : lo;
        if (s.owner[j] < 0 && pcb_ca_before(d, j, lof, jf)) {
            lof = d;
            jf = j;
        }
    }
}

/* Where a team runs the finish (the state in global memory): each step's
 * settled objects staged in global memory, n at most, and their count by
 * step parity. */
struct team_stage {
    settled_offer *offers;
    int *count;
};

/* The least of this lane's (lo, lof, jf) of a step over the blocks of the
 * team. */
__device__ __forceinline__ void team_merge(finish_parts &f, int par, int ctas, double &lo,
                                           double &lof, int &jf)
{
    const int lane = threadIdx.x & 31;
    lo = lof = HUGE_VAL;
    jf = INT_MAX;
    for (int h = 0; h < ctas; h++) {
        const finish_parts *o = cg::this_cluster().map_shared_rank(&f, h);
        const double olo = o->lo[par][lane], olof = o->lof[par][lane];
        const int ojf = o->jf[par][lane];
        lo = olo < lo ? olo : lo;
        if (olof < lof || (olof == lof && ojf < jf)) {
            lof = olof;
            jf = ojf;
        }
    }
}

/* The bidders of list (at most pcb_ca_finish_at(n)), each by its shortest
 * augmenting path, in increasing index order (whole block; the list is the
 * finish's scratch once read). With a team (ctas > 1, the state in global memory;
 * every block of it calls this, rank its place) each block takes objects
 * rank x THREADS + tid, then ctas x THREADS further on, settled objects
 * are staged in ts, and a step's reductions are merged across the team
 * (team_merge): every block takes the same steps. */
__device__ __forceinline__ void finish(const float *a, const pair_state &s, int n, int *list,
                                       int bidders, double eps, finish_parts &f, team_stage ts,
                                       int rank, int ctas)
{
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const bool team = ctas > 1;
    const int first = rank * THREADS + tid, stride = ctas * THREADS; /* this block's objects */
    const bool counts = rank == 0 && tid == 0; /* who counts the step's evaluations */
    if (tid < bidders) { /* by index: the order does not depend on the list's */
        const int r = list[tid];
        int place = 0;
        for (int m = 0; m < bidders; m++)
            place += list[m] < r;
        f.rows[place] = r;
    }
    if (tid == 0)
        f.count[0] = f.count[1] = 0;
    if (team && counts)
        ts.count[0] = ts.count[1] = 0;
    team_sync(team);
    const double w = PCB_CA_FINISH_WIDTH * eps;
    int par = 1;
    for (int k = 0; k < bidders; k++) {
        const int r = f.rows[k];
        const float rx = a[3 * r], ry = a[3 * r + 1], rz = a[3 * r + 2];
        for (int j = first; j < n; j += stride) {
            const float4 q = s.bq[j];
            s.top[j] = pcb_ca_finish_key((double)pcb_ca_cost(rx, ry, rz, q.x, q.y, q.z) + s.price[j], -1);
            s.chose[j] = UNSETTLED;
        }
        if (counts)
            tally_evals += n;
        int settled = 0; /* objects settled so far (counts: thread 0's) */
        double top;
        int jf;
        double lo, lof; /* this thread's part of a step's reductions */
        int jf_own;
        bool reduced = false; /* ... already made by finish_staged */
        for (;;) {
            par ^= 1;
            if (!reduced) {
                lo = lof = HUGE_VAL;
                jf_own = INT_MAX;
            }
            for (int j = first; j < n && !reduced; j += stride) {
                if (s.chose[j] != UNSETTLED)
                    continue;
                const double d = pcb_ca_finish_dist(finish_key(s, j));
                lo = d < lo ? d : lo;
                if (s.owner[j] < 0 && pcb_ca_before(d, j, lof, jf_own)) {
                    lof = d;
                    jf_own = j;
                }
            }
            lo = warp_min_value(lo);
            const double lof_warp = warp_min_value(lof);
            jf_own = (int)__reduce_min_sync(0xffffffffu, lof == lof_warp ? (unsigned)jf_own : INT_MAX);
            if (lane == 0) {
                f.lo[par][warp] = lo;
                f.lof[par][warp] = lof_warp;
                f.jf[par][warp] = jf_own;
            }
            team_sync(team);
            if (tid == 0)
                f.count[par ^ 1] = 0;
            if (team && counts)
                ts.count[par ^ 1] = 0; /* read before this barrier (last step's) */
            double lo_lane = f.lo[par][lane], lof_lane = f.lof[par][lane];
            int jf_lane = f.jf[par][lane];
            if (team)
                team_merge(f, par, ctas, lo_lane, lof_lane, jf_lane);
            lo = warp_min_value(lo_lane);
            lof = warp_min_value(lof_lane);
            jf = (int)__reduce_min_sync(0xffffffffu, lof_lane == lof ? (unsigned)jf_lane : INT_MAX);
            const double hi = lo + w;
            if (lof <= hi) {
                top = lof;
                break;
            }
            for (int j = first; j < n; j += stride) /* the bucket */
                if (s.chose[j] == UNSETTLED && pcb_ca_finish_dist(finish_key(s, j)) <= hi) {
                    s.chose[j] = SETTLED;
                    if (team) {
                        ts.offers[atomicAdd(&ts.count[par], 1)] = settled_of(a, s, j, s.owner[j]);
                        continue;
                    }
                    const int m = atomicAdd(&f.count[par], 1);
                    if (m < s.stage_cap) /* staged for finish_staged */
                        s.stage[m] = settled_of(a, s, j, s.owner[j]);
                    else
                        list[m] = j;
                }
            team_sync(team);
            const int count = team ? *(volatile int *)&ts.count[par] : f.count[par];
            if (counts) { /* their owners' values, then their offers to the unsettled */
                settled += count;
                tally_evals += count + (unsigned long long)count * (unsigned)(n - settled);
            }
            /* (The team's chunks and the lone block's below are two loops:
             * as one, the team's kernel measured 10% slower on lidar pairs at
             * 32 x 16,384, 1,833 ms against 1,662.) */
            if (team) { /* every block: all of them, by chunks, to its objects */
                for (int c0 = 0; c0 == 0 || c0 < count; c0 += s.stage_cap) {
                    const int k = min(count - c0, s.stage_cap);
                    const float4 *from = (const float4 *)(ts.offers + c0);
                    __syncthreads(); /* the last chunk is read */
                    for (int m = tid; m < k * STAGE_WORDS; m += THREADS)
                        ((float4 *)s.stage)[m] = __ldcg(from + m); /* L2: other SMs wrote it */
                    __syncthreads();
                    finish_staged(s, n, k, first, stride, lo, lof, jf_own);
                }
                reduced = true;
                continue; /* the next step's barrier ends it */
            }
            if (s.stage) { /* the lone block: staged, by chunks beyond the stage's room */
                finish_staged(s, n, min(count, s.stage_cap), tid, THREADS, lo, lof, jf_own);
                for (int c0 = s.stage_cap; c0 < count; c0 += s.stage_cap) {
                    const int k = min(count - c0, s.stage_cap);
                    __syncthreads(); /* the last chunk is read */
                    for (int m = tid; m < k; m += THREADS)
                        s.stage[m] = settled_of(a, s, list[c0 + m], s.owner[list[c0 + m]]);
                    __syncthreads();
                    finish_staged(s, n, k, tid, THREADS, lo, lof, jf_own);
                }
                reduced = true;
            } else {
                finish_whole(a, s, n, list, count);
            }
            /* the next step's barrier ends the offers */
        }
        for (int j = first; j < n; j += stride)
            if (s.chose[j] != UNSETTLED) {
                const double d = pcb_ca_finish_dist(finish_key(s, j));
                if (d < top) {
                    const double p = s.price[j] + (top - d);
                    s.price[j] = p;
                    s.bq[j].w = (float)p;
                }
            }
        __syncthreads();
        if (counts) /* the lead's thread 0 */
            for (int j = jf;;) { /* flip the path */
                const int sj = pcb_ca_finish_pred(finish_key(s, j));
                s.owner[j] = sj < 0 ? r : s.owner[sj];
                if (sj < 0)
                    break;
                j = sj;
            }
        team_sync(team);
    }
    for (int j = first; j < n; j += stride)
        s.top[j] = 0;
    team_sync(team);
}

/* A round's bids over block rank's share of its list (whole block): looks at
 * s's prices, bids into `to` (the lead's chosen objects; this block's
 * keys). */
template <bool CACHE>
__device__ __forceinline__ void team_bids(const float *a, const pair_state &s,
                                          const pair_state &to, int n, const int *list,
                                          int bidders, double eps, bidder_cache c, int *taken,
                                          int rank, int ctas)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int k = rank + ctas * warp; k < bidders; k = team_next(taken, rank, ctas)) {
        const int i = list[k];
        const pcb_ca_best best = bidder_best<CACHE>(a, s, n, i, false, c);
        if (lane == 0)
            place_bid(to, k, i, best, eps);
    }
}

/* The certificate's least values m_i over block rank's share, into least
 * (the lead's). */
template <bool CACHE>
__device__ __forceinline__ void team_least(const float *a, const pair_state &s, int n,
                                           double *least, bidder_cache c, int *taken, int rank,
                                           int ctas)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int i = rank + ctas * warp; i < n; i = team_next(taken, rank, ctas)) {
        const double m = bidder_best<CACHE>(a, s, n, i, true, c).w1;
        if (lane == 0)
            least[i] = m;
    }
}

/* A helper's life: orders until the end (every thread of the block). s:
 * with SHARED its own state (B and the prices copied in; its keys, the
 * ascent's demands and gaps, row minima and maxima), else the pair's;
 * taken: a counter of its own; parts: its block rebuilds' and finish's
 * (global state); ts: the finish's. */
template <bool SHARED, bool CACHE>
__device__ void team_help(const float *a, pair_state s, int n, bidder_cache cache,
                          team_order *order, int *taken, round_parts &parts, team_stage ts,
                          int rank, int ctas)
{
    cg::cluster_group cluster = cg::this_cluster();
    const int tid = threadIdx.x;
    const team_order *lead_order = cluster.map_shared_rank(order, 0);
    pair_state lead = s; /* the lead's state as this block reaches it */
    if (SHARED) {
        lead.price = cluster.map_shared_rank(s.price, 0);
        lead.top = cluster.map_shared_rank(s.top, 0);
        lead.chose = cluster.map_shared_rank(s.chose, 0);
        lead.list[0] = cluster.map_shared_rank(s.list[0], 0);
        lead.list[1] = cluster.map_shared_rank(s.list[1], 0);
    }
    pair_state bids = s; /* keys here, the chosen objects in the lead's */
    bids.chose = lead.chose;
    for (;;) {
        cluster.sync(); /* the order is out (and the lead took what it needed) */
        const team_order o = *lead_order;
        if (o.op == TEAM_END)
            break;
        int i0, i1; /* TEAM_TRANSFORM: this block's rows */
        team_rows(n, rank, ctas, &i0, &i1);
        for (int j = tid; SHARED && j < n; j += THREADS) {
            const double p = lead.price[j];
            s.price[j] = p;
            s.bq[j].w = (float)p;
            if (o.op == TEAM_BIDS || o.op == TEAM_GAPS) /* keys from 0; gaps from ~0 */
                s.top[j] = o.op == TEAM_BIDS ? 0ull : ~0ull;
            if (o.op == TEAM_GAPS)
                s.chose[j] = 0;
            if (o.op == TEAM_TRANSFORM && j >= i0 && j < i1) /* the row minima u */
                s.top[j] = lead.top[j];
        }
        if (tid == 0)
            *taken = 0;
        __syncthreads();
        if (o.op == TEAM_GAPS) {
            ascent_gaps<CACHE>(a, s, n, cache, taken, rank, ctas);
        } else if (o.op == TEAM_ROWS) {
            ascent_rows<CACHE>(a, s, n, cache, o.q, lead.top, taken, rank, ctas);
        } else if (o.op == TEAM_TRANSFORM) {
            c_transform_share<SHARED>(a, s, n, rank, ctas, SHARED ? (double *)s.list[0] : o.q);
        } else if (o.op == TEAM_BIDS) {
            team_bids<CACHE>(a, s, bids, n, lead.list[o.which], o.bidders, o.eps, cache, taken,
                             rank, ctas);
        } else if (!SHARED && o.op == TEAM_FINISH) { /* the lead posts it only then */
            finish(a, s, n, lead.list[o.which], o.bidders, o.eps, parts.finish, ts, rank, ctas);
        } else if (!SHARED && o.op == TEAM_REBUILDS) {
            team_rebuild_rows(a, s, n, lead.list[o.which], o.missed, parts.rebuild, rank, ctas);
        } else {
            team_least<CACHE>(a, s, n, (double *)lead.list[0], cache, taken, rank, ctas);
        }
        cluster.sync(); /* the work is in */
    }
    cluster.sync(); /* the lead's shared memory stays until every helper read the end */
}

/* The block's counts into its pair's (each warp's by its lane 0, which
 * alone wrote them; the finish's by thread 0). */
__device__ __forceinline__ void add_counts(pair_stats *st)
{
    const int warp = threadIdx.x >> 5;
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&st->scans, (unsigned long long)tally_scans[warp]);
        atomicAdd(&st->checks, tally_checks[warp]);
    }
    if (threadIdx.x == 0 && tally_evals)
        atomicAdd(&st->finish_evals, tally_evals);
}

template <bool SHARED, bool CACHE, bool SHARED_A>
__global__ void __launch_bounds__(THREADS, 1)
    auction_kernel(int n, const float *__restrict__ xyz1, const float *__restrict__ xyz2,
                   const double *__restrict__ bound, const double *__restrict__ floor_eps,
                   double target, char *__restrict__ scratch, cache_row *__restrict__ cache_slot,
                   double *__restrict__ cache_bound, int32_t *__restrict__ match_out,
                   double *__restrict__ price_out, pair_stats *__restrict__ stats, int ctas)
{
    extern __shared__ __align__(16) char smem[];
    __shared__ double sum_p[PCB_CA_WARPS], sum_d[PCB_CA_WARPS];
    __shared__ int count[2];
    __shared__ unsigned missed_bits[2]; /* by round parity: bidders k whose cache missed */
    __shared__ int taken[2]; /* by round parity: see take_next */
    __shared__ int cert_taken;
    __shared__ int solo_steps, solo_missed; /* see the lone bidder's chain */
    __shared__ round_parts parts;
    __shared__ int stop, ascend;
    __shared__ double cert_p, cert_d;
    __shared__ team_order order; /* the lead's to its helpers */
    int ascended = 0;
    const bool team = CACHE && ctas > 1; /* the host asks only then */
    const int64_t pair = team ? blockIdx.x / ctas : blockIdx.x;
    const int64_t batch = team ? gridDim.x / ctas : gridDim.x;
    const bool helper = team && blockIdx.x % ctas != 0;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const float *b = xyz2 + pair * n * 3;
    float *a_copy = (float *)(smem + (size_t)n * STATE_BYTES); /* SHARED_A: A beside the state */
    const float *a = SHARED_A ? a_copy : xyz1 + pair * n * 3;
    int32_t *match = match_out + pair * n;
    pair_state s = SHARED ? carve(smem, n, true)
                          : carve(scratch + (size_t)pair * n * STATE_BYTES, n, false);
    s.stage_cap = stage_capacity(n); /* beside A, or alone when the state is global */
    if (s.stage_cap)
        s.stage = (settled_offer *)(smem + shared_area(n));
    team_stage ts = {NULL, NULL}; /* a team's finish: after every pair's state (team_scratch) */
    if (!SHARED && team) {
        char *after = scratch + (size_t)batch * n * STATE_BYTES;
        ts.offers = (settled_offer *)after + (size_t)pair * n;
        ts.count = (int *)(after + (size_t)batch * n * STAGE_BYTES) + 2 * pair;
    }
    const double c = bound[pair], floor = floor_eps[pair];
    const bidder_cache cache = {CACHE ? cache_slot + pair * n * 32 : NULL,
                                CACHE ? cache_bound + pair * n : NULL};
    long long bids = 0, rounds = 0, phases = 0, stuck = 0;

    if (c <= 0) { /* every cost is 0: every bijection is optimal */
        if (helper)
            return; /* nothing to help with: no order comes */
        for (int i = tid; i < n; i += THREADS) {
            match[i] = i;
            price_out[pair * n + i] = 0;
        }
        if (tid == 0)
            stats[pair] = pair_stats{0, 0, 0, 0, 0, 0, 0.0, 0.0, 0};
        return;
    }
    if (lane == 0) { /* the block's counts: each is one thread's alone */
        tally_scans[warp] = 0;
        tally_checks[warp] = 0;
    }
    if (tid == 0)
        tally_evals = 0;
    if (SHARED_A)
        for (int k = tid; k < 3 * n; k += THREADS)
            a_copy[k] = xyz1[pair * n * 3 + k];
    if (helper) { /* B is the lead's to load where the state is global */
        for (int j = tid; SHARED && j < n; j += THREADS)
            s.bq[j] = make_float4(b[3 * j], b[3 * j + 1], b[3 * j + 2], 0.0f);
        __syncthreads();
        team_help<SHARED, CACHE>(a, s, n, cache, &order, &taken[0], parts, ts,
                                 (int)(blockIdx.x % ctas), ctas);
        add_counts(&stats[pair]);
        return;
    }
    for (int j = tid; j < n; j += THREADS) {
        s.bq[j] = make_float4(b[3 * j], b[3 * j + 1], b[3 * j + 2], 0.0f);
        s.price[j] = 0;
        s.top[j] = 0;
        s.owner[j] = -1;
        s.list[0][j] = j;
        if (CACHE)
            cache.bound[j] = -1;
    }
    if (tid == 0) {
        count[0] = n;
        count[1] = 0;
        missed_bits[0] = missed_bits[1] = 0;
        taken[0] = taken[1] = 0;
        solo_missed = 0;
        stats[pair].p = stats[pair].d = 0;
        stats[pair].scans = stats[pair].checks = stats[pair].finish_evals = 0;
    }
    __syncthreads();

    int cur = 0;
    const long long round_limit = (long long)MAX_ROUNDS_PER_N * n + 100000;
    for (double eps = pcb_ca_eps_first(c, floor);;) {
        long long phase_rounds = 0;
        for (;;) { /* rounds */
            const int bidders = count[cur];
            if (bidders == 0)
                break;
            if (bidders <= pcb_ca_finish_at(n)) { /* the phase's last bidders */
                const bool teamed = team && !SHARED; /* helpers share a global state only */
                if (teamed)
                    team_post(true, &order, team_order{TEAM_FINISH, bidders, cur, eps});
                finish(a, s, n, cur ? s.list[1] : s.list[0], bidders, eps, parts.finish, ts, 0,
                       teamed ? ctas : 1);
                if (teamed)
                    cg::this_cluster().sync(); /* the helpers are done */
                if (tid == 0)
                    solo_missed = 0; /* read next after the phase's barriers */
                break;
            }
            if (++phase_rounds > round_limit) {
                stuck = 1;
                break;
            }
            int *list = cur ? s.list[1] : s.list[0];
            const bool looked = solo_missed; /* the lone bidder's cache already missed */
            if (CACHE && bidders == 1 && !looked) {
                /* A lone bidder always wins: warp 0 runs the chain of
                 * one-bidder rounds (the evicted owner bids next) alone,
                 * while caches prove the bids, with no block barrier. */
                if (warp == 0) {
                    int i = list[0], steps = 0;
                    bool hit = true;
                    double bound = cache.bound[i];
                    cache_row row = cache.slot[(size_t)i * 32 + lane];
                    while (phase_rounds + steps < round_limit) {
                        pcb_ca_best best;
                        if (!(hit = stored_look(a + 3 * i, s, s.price, bound, row, false, &best)))
                            break;
                        const int j = best.j1,
                                  evicted = __shfl_sync(0xffffffffu, lane == 0 ? s.owner[j] : 0, 0);
                        if (evicted >= 0) { /* its cache loads while the price moves */
                            bound = cache.bound[evicted];
                            row = cache.slot[(size_t)evicted * 32 + lane];
                        }
                        if (lane == 0) {
                            const double p = s.price[j] + (double)pcb_ca_increment(best, eps);
                            s.price[j] = p;
                            s.bq[j].w = (float)p;
                            s.owner[j] = i;
                        }
                        __syncwarp();
                        i = evicted;
                        steps++;
                        if (i < 0)
                            break;
                    }
                    if (lane == 0) {
                        solo_steps = steps;
                        if (i < 0)
                            count[cur] = 0;
                        else
                            list[0] = i;
                        solo_missed = !hit;
                        missed_bits[0] = missed_bits[1] = 0;
                        taken[0] = taken[1] = 0;
                    }
                }
                __syncthreads();
                bids += solo_steps;
                rounds += solo_steps;
                phase_rounds += solo_steps;
                __syncthreads(); /* solo_steps is read */
                continue;
            }
            if (tid == 0) { /* last read a round ago */
                count[cur ^ 1] = 0;
                missed_bits[(rounds + 1) & 1] = 0;
                taken[(rounds + 1) & 1] = 0;
            }
            if (!CACHE || bidders >= PCB_CA_WARPS) { /* a warp per bidder */
                const int split = team ? ctas : 1; /* the helpers take their share */
                if (team)
                    team_post(true, &order, team_order{TEAM_BIDS, bidders, cur, eps});
                team_bids<CACHE>(a, s, s, n, list, bidders, eps, cache, &taken[rounds & 1], 0,
                                 split);
                if (team) {
                    cg::this_cluster().sync(); /* the helpers' bids are in */
                    if (SHARED) /* else they bid into the pair's keys */
                        team_pull_keys(s, bidders, ctas);
                } else {
                    __syncthreads();
                }
            } else { /* few: caches first, then the misses */
                bool missed = false;
                pcb_ca_best best;
                if (warp < bidders) {
                    const int i = list[warp];
                    missed = (warp == 0 && looked) ||
                             !cache_look(a + 3 * i, s, s.price, i, false, cache, &best);
                    if (lane == 0 && !missed)
                        place_bid(s, warp, i, best, eps);
                    if (lane == 0 && missed)
                        atomicOr(&missed_bits[rounds & 1], 1u << warp);
                }
                __syncthreads();
                if (tid == 0)
                    solo_missed = 0; /* read by all before the barrier */
                unsigned mask = missed_bits[rounds & 1];
                if (mask) {
                    if (!SHARED && team && __popc(mask) >= TEAM_REBUILDS_FROM &&
                        __popc(mask) <= pcb_ca_block_scans(n)) { /* the team's rows */
                        team_post(true, &order,
                                  team_order{TEAM_REBUILDS, bidders, cur, eps, NULL, mask});
                        team_rebuild_rows(a, s, n, list, mask, parts.rebuild, 0, ctas);
                        cg::this_cluster().sync(); /* the helpers' rows are in */
                        team_rebuilt_bids(a, s, n, list, mask, eps, cache, parts.rebuild, ctas);
                    } else if (__popc(mask) <= pcb_ca_block_scans(n)) {
                        block_rebuilds(a, s, n, list, mask, eps, cache, parts.rebuild);
                    } else if (missed) {
                        const int i = list[warp];
                        if (!warp_rebuild(a + 3 * i, s, n, i, false, cache, &best))
                            best = exact_scan(a + 3 * i, s, n);
                        if (lane == 0)
                            place_bid(s, warp, i, best, eps);
                    }
                    __syncthreads();
                }
            }
            int *next = cur ? s.list[0] : s.list[1];
            for (int k = tid; k < bidders; k += THREADS) {
                const int i = list[k], j = s.chose[k];
                const unsigned long long key = *(volatile unsigned long long *)&s.top[j];
                int requeue = i;
                if (pcb_ca_key_bidder(key) == i) {
                    const double p = s.price[j] + (double)pcb_ca_key_increment(key);
                    s.price[j] = p;
                    s.bq[j].w = (float)p;
                    s.top[j] = 0;
                    requeue = s.owner[j];
                    s.owner[j] = i;
                }
                if (requeue >= 0)
                    next[atomicAdd(&count[cur ^ 1], 1)] = requeue;
            }
            bids += bidders;
            rounds++;
            cur ^= 1;
            __syncthreads();
        }
        phases++;
        if (stuck)
            break;

        /* The certificate: least values, then P and D summed warp by warp
         * (warp w: i = w, w + 32, ... in order, as the replay sums). */
        for (int j = tid; j < n; j += THREADS)
            match[s.owner[j]] = j;
        if (tid == 0)
            cert_taken = 0;
        team_post(team, &order, team_order{TEAM_LEAST, 0, 0, 0.0});
        double *least = (double *)s.list[0];
        team_least<CACHE>(a, s, n, least, cache, &cert_taken, 0, team ? ctas : 1);
        team_sync(team); /* the helpers' least values are in */
        double my_p = 0, my_d = 0;
        for (int i = warp; i < n && lane == 0; i += PCB_CA_WARPS) {
            const int j = match[i];
            my_p += (double)pcb_ca_cost(a[3 * i], a[3 * i + 1], a[3 * i + 2], s.bq[j].x,
                                        s.bq[j].y, s.bq[j].z);
            my_d += least[i] - s.price[i];
        }
        if (lane == 0) {
            sum_p[warp] = my_p;
            sum_d[warp] = my_d;
        }
        __syncthreads();
        if (tid == 0) {
            double p = 0, d = 0;
            for (int w = 0; w < PCB_CA_WARPS; w++) {
                p += sum_p[w];
                d += sum_d[w];
            }
            stats[pair].p = cert_p = p;
            stats[pair].d = cert_d = d;
            stop = eps <= floor || pcb_ca_proven(p, d, target);
            ascend = !stop && pcb_ca_ascent_worth(p, d, target);
        }
        __syncthreads();
        if (ascend) {
            double *q = price_out + pair * n;
            const double d = dual_ascent<SHARED, CACHE>(a, s, n, cache, q, sum_d, &order,
                                                        team ? ctas : 1);
            if (pcb_ca_proven(cert_p, d, target)) { /* every thread: the same d */
                ascended = stop = 1;
                if (tid == 0)
                    stats[pair].d = d;
            }
        }
        if (stop)
            break;
        /* The next phase keeps the bidders still within its eps. */
        eps = pcb_ca_eps_next(eps, floor, cert_p, cert_d, target, n);
        for (int i = tid; i < n; i += THREADS) {
            const int j = match[i];
            const float ci = pcb_ca_cost(a[3 * i], a[3 * i + 1], a[3 * i + 2], s.bq[j].x,
                                         s.bq[j].y, s.bq[j].z);
            s.chose[i] = (double)ci + s.price[j] > least[i] + eps;
        }
        __syncthreads();
        cur = 0;
        if (tid == 0)
            count[0] = 0;
        __syncthreads();
        for (int i = tid; i < n; i += THREADS)
            if (s.chose[i]) {
                s.owner[match[i]] = -1;
                s.list[0][atomicAdd(&count[0], 1)] = i;
            }
        __syncthreads();
    }
    if (team) { /* the helpers go */
        team_post(true, &order, team_order{TEAM_END, 0, 0, 0.0});
        cg::this_cluster().sync();
    }
    for (int j = tid; j < n && !ascended; j += THREADS) /* else the ascent's are there */
        price_out[pair * n + j] = s.price[j];
    if (stuck)
        for (int i = tid; i < n; i += THREADS)
            match[i] = -1;
    add_counts(&stats[pair]);
    if (tid == 0) {
        stats[pair].bids = bids;
        stats[pair].rounds = rounds;
        stats[pair].phases = phases;
        stats[pair].stuck = stuck;
    }
}

/* ---- device-resident runs: what the host computes from host clouds -------- */
extern "C" const pcb_impl pcb_emd_cuda_auction;
#define PAIR_THREADS 256
/* Coordinates beyond this read as 0 in device runs (float costs overflow
 * far above; the host path refuses nothing, its clouds are checked finite). */
#define DEVICE_MAX_COORD 1e18f

/* Block per pair: the clouds copied in (non-finite or huge coordinates as
 * 0) and the pair's cost bound and last eps, as pair_constants computes them
 * on the host (min and max are exact; the double sums run in its order). */
__global__ void pair_constants_kernel(int n, const float *a_in, const float *b_in, float *a,
                                      float *b, double eps_option, double *bound,
                                      double *floor_eps, int32_t *finite)
{
    __shared__ float lo[3][PAIR_THREADS], hi[3][PAIR_THREADS];
    const int64_t pair = blockIdx.x, base = pair * n * 3;
    const int tid = threadIdx.x;
    float l[3] = {INFINITY, INFINITY, INFINITY}, h[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int64_t k = tid; k < 2 * (int64_t)n; k += PAIR_THREADS) {
        const float *in = k < n ? a_in + base + 3 * k : b_in + base + 3 * (k - n);
        float *out = k < n ? a + base + 3 * k : b + base + 3 * (k - n);
        for (int c = 0; c < 3; c++) {
            const bool keep = fabsf(in[c]) <= DEVICE_MAX_COORD; /* NaN fails it too */
            const float v = keep ? in[c] : 0.0f;
            if (!keep && finite)
                *finite = 0;
            out[c] = v;
            l[c] = fminf(l[c], v);
            h[c] = fmaxf(h[c], v);
        }
    }
    for (int c = 0; c < 3; c++) {
        lo[c][tid] = l[c];
        hi[c][tid] = h[c];
    }
    __syncthreads();
    for (int w = PAIR_THREADS / 2; w > 0; w >>= 1) {
        if (tid < w)
            for (int c = 0; c < 3; c++) {
                lo[c][tid] = fminf(lo[c][tid], lo[c][tid + w]);
                hi[c][tid] = fmaxf(hi[c][tid], hi[c][tid + w]);
            }
        __syncthreads();
    }
    if (tid == 0) {
        double d2 = 0;
        for (int c = 0; c < 3; c++) {
            const double d = __dsub_rn((double)hi[c][0], (double)lo[c][0]);
            d2 = __dadd_rn(d2, __dmul_rn(d, d));
        }
        bound[pair] = __dsqrt_rn(d2);
        floor_eps[pair] = eps_option > 0 ? eps_option : __dmul_rn(PCB_CA_EPS_FLOOR, bound[pair]);
    }
}

/* The relative gap (P - D) / D of a certificate (D raised to 0). */
__host__ __device__ static double certificate_gap(double p, double d)
{
    d = d > 0 ? d : 0;
    return d > 0 ? (p - d) / d : p > 0 ? HUGE_VAL : 0;
}

/* Thread per pair: the mean matched cost in double, summed in
 * pcb_emd_mean_matched's order without contraction (bit for bit the host's
 * value), and the certificate's gap (infinite for a pair that did not
 * settle). */
__global__ void pair_results_kernel(int64_t batch, int n, const float *a, const float *b,
                                    const int32_t *match, const pair_stats *stats, double *value,
                                    double *bound)
{
    const int64_t pair = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (pair >= batch)
        return;
    if (value) {
        const float *pa = a + pair * n * 3, *pb = b + pair * n * 3;
        const int32_t *m = match + pair * n;
        double sum = 0;
        int64_t matched = 0;
        for (int i = 0; i < n; i++)
            if (m[i] >= 0) {
                const float *p = pa + 3 * i, *q = pb + 3 * (int64_t)m[i];
                const double dx = __dsub_rn((double)p[0], (double)q[0]),
                             dy = __dsub_rn((double)p[1], (double)q[1]),
                             dz = __dsub_rn((double)p[2], (double)q[2]);
                sum = __dadd_rn(sum, __dsqrt_rn(__dadd_rn(__dadd_rn(__dmul_rn(dx, dx),
                                                                    __dmul_rn(dy, dy)),
                                                          __dmul_rn(dz, dz))));
                matched++;
            }
        value[pair] = matched ? __ddiv_rn(sum, (double)matched) : 0.0;
    }
    if (bound)
        bound[pair] = stats[pair].stuck ? HUGE_VAL : certificate_gap(stats[pair].p, stats[pair].d);
}

typedef struct {
    pcb_task task;
    pcb_cuda_ctx ctx;
    float *a, *b;
    double *bound, *floor_eps, *price;
    char *scratch; /* NULL when the state fits in shared memory */
    cache_row *cache_slot; /* NULL when n is too large for 16-bit slots */
    double *cache_bound;
    int32_t *match;
    pair_stats *stats, *host_stats;
    size_t smem;
    int ctas; /* blocks a pair (the team) */
    int fetched_stats;
} auction_state;

static void auction_release(void *state)
{
    auction_state *s = (auction_state *)state;
    if (!s)
        return;
    pcb_cuda_ctx_free(&s->ctx); /* waits for queued work first */
    cudaFree(s->a);
    cudaFree(s->b);
    cudaFree(s->bound);
    cudaFree(s->floor_eps);
    cudaFree(s->price);
    cudaFree(s->scratch);
    cudaFree(s->cache_slot);
    cudaFree(s->cache_bound);
    cudaFree(s->match);
    cudaFree(s->stats);
    free(s->host_stats);
    free(s);
}

/* Per pair: the cost bound C and the last phase's eps. */
static void pair_constants(const pcb_task *t, double *bound, double *floor_eps)
{
    for (int64_t p = 0; p < t->batch; p++) {
        bound[p] = pcb_emd_cost_bound(t->a + p * t->n * 3, t->b + p * t->n * 3, t->n);
        floor_eps[p] = t->opt.eps > 0 ? t->opt.eps : PCB_CA_EPS_FLOOR * bound[p];
    }
}

typedef void (*auction_kernel_fn)(int, const float *, const float *, const double *,
                                  const double *, double, char *, cache_row *, double *, int32_t *,
                                  double *, pair_stats *, int);

static auction_kernel_fn kernel_for(const auction_state *s)
{
    if (s->task.n <= SMEM_MAX_N) /* < PCB_CA_CACHE_MAX_N: caches */
        return s->task.n <= SMEM_A_MAX_N ? auction_kernel<true, true, true>
                                         : auction_kernel<true, true, false>;
    return s->task.n <= PCB_CA_CACHE_MAX_N ? auction_kernel<false, true, false>
                                           : auction_kernel<false, false, false>;
}

/* Blocks a pair (the team, team_help): where bidders have caches, the most,
 * up to 8, whose clusters the GPU holds at once for the whole batch; 1
 * elsewhere. PCBENCH_EMD_CTAS (1 to 8; tuning and tests) forces it where
 * the GPU can run such clusters at all. */
static int choose_ctas(const auction_state *s)
{
    const pcb_task *t = &s->task;
    if (t->n > PCB_CA_CACHE_MAX_N)
        return 1;
    const char *env = getenv("PCBENCH_EMD_CTAS");
    const int asked = env ? atoi(env) : 0, forced = asked >= 1 && asked <= 8 ? asked : 0;
    for (int c = forced ? forced : 8; c > 1; c--) {
        cudaLaunchAttribute cluster;
        const cudaLaunchConfig_t cfg =
            pcb_cuda_cluster_launch(1, c, THREADS, s->smem, s->ctx.stream, &cluster);
        const int fit = pcb_cuda_clusters_fit(kernel_for(s), &cfg);
        if (fit >= t->batch || (forced && fit > 0))
            return c;
        if (forced)
            break;
    }
    return 1;
}

/* Where the state is in global memory, what a team's finish needs besides
 * (team_stage): every pair's staged offers, then their counts. */
static size_t team_scratch(int64_t batch, int n)
{
    return (size_t)batch * (size_t)n * STAGE_BYTES + (size_t)batch * 2 * sizeof(int);
}

/* The kernel's static shared memory fits the STATIC_SMEM its layout leaves
 * (the work counts fill it to the last byte). */
static int statics_fit(auction_kernel_fn kernel)
{
    cudaFuncAttributes fa;
    const cudaError_t e = cudaFuncGetAttributes(&fa, kernel);
    if (e != cudaSuccess)
        return pcb_cuda_fail(e, "emd cuda_auction: kernel attributes", __FILE__, __LINE__);
    if (fa.sharedSizeBytes > STATIC_SMEM)
        return pcb_fail(PCB_EDEVICE,
                        "emd cuda_auction: the kernel's static shared memory (%zu bytes) "
                        "exceeds the %d bytes its layout leaves (STATIC_SMEM)",
                        (size_t)fa.sharedSizeBytes, STATIC_SMEM);
    return PCB_OK;
}

static int setup(auction_state *s)
{
    const pcb_task *t = &s->task;
    const size_t points = (size_t)t->batch * (size_t)t->n;
    double *host = (double *)malloc(2 * (size_t)t->batch * sizeof(double));
    if (!host || !(s->host_stats = (pair_stats *)malloc((size_t)t->batch * sizeof(pair_stats)))) {
        free(host);
        return pcb_fail(PCB_ENOMEM, "emd cuda_auction: out of host memory");
    }
    const int on_device = t->memory == PCB_MEM_DEVICE; /* each run copies its clouds in */
    if (!on_device)
        pair_constants(t, host, host + t->batch);
    int rc = pcb_cuda_ctx_init(&s->ctx);
    if (rc == PCB_OK)
        rc = statics_fit(kernel_for(s));
    if (rc == PCB_OK) {
        cudaError_t e = cudaSuccess;
        const size_t pairs = (size_t)t->batch * sizeof(double);
        if (e == cudaSuccess) e = cudaMalloc((void **)&s->a, points * 3 * sizeof(float));
        if (e == cudaSuccess) e = cudaMalloc((void **)&s->b, points * 3 * sizeof(float));
        if (e == cudaSuccess) e = cudaMalloc((void **)&s->bound, pairs);
        if (e == cudaSuccess) e = cudaMalloc((void **)&s->floor_eps, pairs);
        if (e == cudaSuccess) e = cudaMalloc((void **)&s->price, points * sizeof(double));
        if (e == cudaSuccess) e = cudaMalloc((void **)&s->match, points * sizeof(int32_t));
        if (e == cudaSuccess) e = cudaMalloc((void **)&s->stats, (size_t)t->batch * sizeof(pair_stats));
        if (e == cudaSuccess && s->smem)
            e = cudaFuncSetAttribute(kernel_for(s), cudaFuncAttributeMaxDynamicSharedMemorySize, (int)s->smem);
        s->ctas = e == cudaSuccess ? choose_ctas(s) : 1;
        if (e == cudaSuccess && t->n > SMEM_MAX_N) /* the state; a team's finish stages too */
            e = cudaMalloc((void **)&s->scratch,
                           points * STATE_BYTES + (s->ctas > 1 ? team_scratch(t->batch, t->n) : 0));
        if (e == cudaSuccess && t->n <= PCB_CA_CACHE_MAX_N)
            e = cudaMalloc((void **)&s->cache_slot, points * 32 * sizeof(cache_row));
        if (e == cudaSuccess && t->n <= PCB_CA_CACHE_MAX_N)
            e = cudaMalloc((void **)&s->cache_bound, points * sizeof(double));
        if (e == cudaSuccess && !on_device) e = cudaMemcpyAsync(s->a, t->a, points * 3 * sizeof(float), cudaMemcpyHostToDevice, s->ctx.stream);
        if (e == cudaSuccess && !on_device) e = cudaMemcpyAsync(s->b, t->b, points * 3 * sizeof(float), cudaMemcpyHostToDevice, s->ctx.stream);
        if (e == cudaSuccess && !on_device) e = cudaMemcpyAsync(s->bound, host, pairs, cudaMemcpyHostToDevice, s->ctx.stream);
        if (e == cudaSuccess && !on_device) e = cudaMemcpyAsync(s->floor_eps, host + t->batch, pairs, cudaMemcpyHostToDevice, s->ctx.stream);
        rc = e == cudaSuccess ? pcb_cuda_sync(&s->ctx)
                              : pcb_cuda_fail(e, "emd cuda_auction: setup", __FILE__, __LINE__);
    }
    free(host); /* the copies were synchronized (or failed) */
    return rc;
}

static int auction_prepare(const pcb_task *t, void **state)
{
    const int on_device = t->memory == PCB_MEM_DEVICE;
    if (on_device && t->opt.eps > 0)
        return pcb_fail(PCB_EUNSUPPORTED, "emd cuda_auction: a device run stops on max_gap; an "
                        "eps needs the clouds on the host to be checked");
    int rc = on_device ? PCB_OK : pcb_emd_auction_check_eps(t, "cuda_auction");
    if (rc != PCB_OK)
        return rc;
    auction_state *s = (auction_state *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "emd cuda_auction: out of memory");
    s->task = *t;
    s->smem = shared_area((int)t->n) + (size_t)stage_capacity((int)t->n) * STAGE_BYTES;
    rc = setup(s);
    if (rc != PCB_OK) {
        auction_release(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static double stop_target(const pcb_task *t)
{
    return pcb_ca_stop_target(t->opt.eps, t->opt.max_gap);
}

/* The auction, queued on stream, its matching and prices into match and
 * price. */
static int enqueue(auction_state *s, cudaStream_t stream, int32_t *match, double *price)
{
    const pcb_task *t = &s->task;
    cudaLaunchAttribute cluster;
    const cudaLaunchConfig_t cfg =
        pcb_cuda_cluster_launch((unsigned)t->batch, s->ctas, THREADS, s->smem, stream, &cluster);
    PCB_CUDA_TRY(cudaLaunchKernelEx(&cfg, kernel_for(s), (int)t->n, (const float *)s->a,
                                    (const float *)s->b, (const double *)s->bound,
                                    (const double *)s->floor_eps, stop_target(t), s->scratch,
                                    s->cache_slot, s->cache_bound, match, price, s->stats,
                                    s->ctas));
    PCB_CUDA_LAUNCHED("auction_kernel");
    return PCB_OK;
}

static int auction_compute(void *state)
{
    auction_state *s = (auction_state *)state;
    s->fetched_stats = 0;
    int rc = pcb_cuda_begin(&s->ctx);
    if (rc == PCB_OK && (rc = enqueue(s, s->ctx.stream, s->match, s->price)) == PCB_OK)
        rc = pcb_cuda_end(&s->ctx);
    return rc;
}

static int auction_sync(void *state)
{
    return pcb_cuda_sync(&((auction_state *)state)->ctx);
}

static int fetch_stats(auction_state *s)
{
    const pcb_task *t = &s->task;
    if (s->fetched_stats)
        return PCB_OK;
    PCB_CUDA_TRY(cudaMemcpyAsync(s->host_stats, s->stats, (size_t)t->batch * sizeof(pair_stats),
                                 cudaMemcpyDeviceToHost, s->ctx.stream));
    int rc = pcb_cuda_sync(&s->ctx);
    if (rc != PCB_OK)
        return rc;
    s->fetched_stats = 1;
    for (int64_t p = 0; p < t->batch; p++)
        if (s->host_stats[p].stuck)
            return pcb_fail(PCB_EDEVICE,
                            "emd cuda_auction: pair %lld did not settle within %d x n rounds "
                            "of a phase",
                            (long long)p, MAX_ROUNDS_PER_N);
    return PCB_OK;
}

static int auction_fetch(void *state, pcb_result *out)
{
    auction_state *s = (auction_state *)state;
    const pcb_task *t = &s->task;
    const size_t points = (size_t)t->batch * (size_t)t->n;
    int rc = fetch_stats(s);
    if (rc != PCB_OK)
        return rc;
    PCB_CUDA_TRY(cudaMemcpyAsync(out->index, s->match, points * sizeof(int32_t),
                                 cudaMemcpyDeviceToHost, s->ctx.stream));
    if (out->price)
        PCB_CUDA_TRY(cudaMemcpyAsync(out->price, s->price, points * sizeof(double),
                                     cudaMemcpyDeviceToHost, s->ctx.stream));
    if ((rc = pcb_cuda_sync(&s->ctx)) != PCB_OK)
        return rc;
    out->has_price = out->price != NULL;
    for (int64_t p = 0; out->bound && p < t->batch; p++)
        out->bound[p] = certificate_gap(s->host_stats[p].p, s->host_stats[p].d);
    if (out->value)
        for (int64_t p = 0; p < t->batch; p++)
            out->value[p] = pcb_emd_mean_matched(t->a + p * t->n * 3, t->b + p * t->n * 3, t->n,
                                                 out->index + p * t->n, NULL);
    return PCB_OK;
}

static int auction_counters(void *state, pcb_counters *c)
{
    auction_state *s = (auction_state *)state;
    const pcb_task *t = &s->task;
    int rc = fetch_stats(s);
    if (rc != PCB_OK)
        return rc;
    c->bids = c->iterations = c->distance_evals = 0;
    for (int64_t p = 0; p < t->batch; p++) {
        c->bids += s->host_stats[p].bids;
        c->iterations += s->host_stats[p].phases;
        /* a scan looks at all of B, a cache look at 32 x 4 objects (all when fewer) */
        c->distance_evals += (int64_t)s->host_stats[p].scans * t->n +
                             (int64_t)s->host_stats[p].checks * pcb_ca_cache_evals(t->n) +
                             (int64_t)s->host_stats[p].finish_evals;
    }
    return PCB_OK;
}

/* A device-resident run: the cached state's buffers, the caller's clouds
 * copied in with the pair constants computed beside them, the matching and
 * prices written straight into the caller's arrays, then value and bound,
 * all on the caller's stream. A pair that did not settle (the guard of
 * fetch's PCB_EDEVICE, which cannot be waited for here) is left at -1
 * with an infinite bound. */
static int auction_device(void *state, const pcb_task *t, pcb_result *out, cudaStream_t st)
{
    auction_state *s = (auction_state *)state;
    const unsigned batch = (unsigned)t->batch;
    pair_constants_kernel<<<batch, PAIR_THREADS, 0, st>>>((int)t->n, t->a, t->b, s->a, s->b,
                                                          t->opt.eps, s->bound, s->floor_eps,
                                                          out->finite);
    PCB_CUDA_LAUNCHED("pair_constants_kernel");
    int rc = enqueue(s, st, out->index, out->price ? out->price : s->price);
    if (rc != PCB_OK)
        return rc;
    if (out->value || out->bound) {
        pair_results_kernel<<<(batch + 127) / 128, 128, 0, st>>>(
            t->batch, (int)t->n, s->a, s->b, out->index, s->stats, out->value, out->bound);
        PCB_CUDA_LAUNCHED("pair_results_kernel");
    }
    out->has_price = out->price != NULL;
    return PCB_OK;
}

static int auction_run_device(const pcb_task *t, pcb_result *out)
{
    static const pcb_cuda_maker maker = {&pcb_emd_cuda_auction, auction_prepare, auction_release,
                                         auction_device};
    return pcb_cuda_run_cached(&maker, t, out);
}

static int auction_device_ms(void *state, double *ms)
{
    return pcb_cuda_elapsed_ms(&((auction_state *)state)->ctx, ms);
}

extern "C" const pcb_impl pcb_emd_cuda_auction = {
    .name = "cuda_auction",
    .problem = PCB_EMD,
    .device = PCB_CUDA,
    .exact = 0,
    .canonical = 0,
    .limits = {.max_n = INT32_MAX / 3, .max_m = 0, .max_batch = INT32_MAX}, /* int indexing */
    .cost = PCB_COST_GPU_PAIRS,
    .reference = 0,
    .max_gap = PCB_CA_MAX_GAP,
    .gap_option = 1,
    .known_defect = NULL,
    .summary = "eps-scaling Jacobi auction, a block per pair (a cluster of blocks where SMs "
               "are idle), costs on the fly, any n; stops "
               "when its prices certify 0.1% (or the task's max_gap; or at --eps); returns "
               "prices",
    .available = pcb_cuda_available,
    .prepare = auction_prepare,
    .compute = auction_compute,
    .sync = auction_sync,
    .fetch = auction_fetch,
    .release = auction_release,
    .counters = auction_counters,
    .device_ms = auction_device_ms,
    .run_device = auction_run_device,
    .device_index = NULL,
};
