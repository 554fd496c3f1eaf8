/* cuda_auction/rebuild.cuh - block rebuilds: where few bidders of a round
 * missed their caches, the whole block rebuilds them (groups of four warps
 * a bidder), and each missed bidder then bids from its fresh cache. */
#pragma once

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
