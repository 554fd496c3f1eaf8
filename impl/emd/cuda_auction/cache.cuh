/* cuda_auction/cache.cuh - a bidder's candidate cache (emd_cuda_auction.h):
 * a lane's 16-bit slots and the bound, a look that proves the least two
 * from it, a warp's rebuild by a float-only scan of B, and the bid placed
 * on the winner's key (place_bid). */
#pragma once

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
