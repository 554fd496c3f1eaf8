/* cuda_auction/few.cuh - the rounds of few bidders (2 to 31) on their own
 * warps: warp w keeps bidder w of the round where the chain began, bids
 * for it, awards its own bid and takes the owner it evicts as its next
 * bidder, with barriers of those warps alone (named barrier 1) while the
 * rest of the block sleeps at its own barrier. */
#pragma once

/* What a chain hands back to the block (thread 0 writes it; in
 * round_parts, read before a rebuild reuses them). A chain's rounds stay
 * below the phase's round limit, 256 n + 100000, and its bids below 31
 * times as many: ints. */
struct few_report {
    int rounds;  /* rounds completed */
    int bids;    /* their bids */
    int pending; /* a round begun whose looks missed: the block rebuilds next */
    int live;    /* bidders in the slots: of the pending round, else after the last */
};

/* Barrier 1 of `threads` threads (the chain's warps), and the same counting
 * the threads whose pred holds. */
__device__ __forceinline__ void few_sync(int threads)
{
    asm volatile("bar.sync 1, %0;" ::"r"(threads) : "memory");
}

__device__ __forceinline__ int few_sync_count(int threads, bool pred)
{
    int c;
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %2, 0;\n\tbar.red.popc.u32 %0, 1, %1, p;\n\t}"
                 : "=r"(c)
                 : "r"(threads), "r"((unsigned)pred)
                 : "memory");
    return c;
}

/* Bidder i's bid of slot k after the round's barrier (one thread): if its
 * key is the object's top, the price rises, the key is cleared and i owns
 * the object; returns the slot's next bidder: the evicted owner (-1: none)
 * when i won, else i. */
__device__ __forceinline__ int award_own(const pair_state &s, int k, int i)
{
    const int j = s.chose[k];
    const unsigned long long key = *(volatile unsigned long long *)&s.top[j];
    if (pcb_ca_key_bidder(key) != i)
        return i;
    const double p = s.price[j] + (double)pcb_ca_key_increment(key);
    s.price[j] = p;
    s.bq[j].w = (float)p;
    s.top[j] = 0;
    const int evicted = s.owner[j];
    s.owner[j] = i;
    return evicted;
}

/* The chain (every thread calls it; warps at or past `width` return at
 * once). list[0..width-1] holds the round's bidders, one a slot, and keeps
 * them, -1 where a slot's bidder was placed. A round: every slot's bidder
 * looks into its cache and bids, barrier; on a miss the chain stops with
 * the round pending (its hits' bids placed, the misses in
 * missed_bits[round & 1]) for the block to rebuild and award, unless the
 * state is in shared memory (SHARED): there a miss is rebuilt by its own
 * warp (pcb_ca_chain_rebuilds) and the chain goes on; else each
 * slot awards its own bid (the replay's round: the same bids, whoever
 * makes them), and a counting barrier gives the bidders left. It stops
 * before a round the block loop would not run this way: fewer than 2
 * bidders, the finish's few, or `room` rounds begun (the round limit; a
 * warm start's budget). */
template <bool SHARED>
__device__ __forceinline__ void few_rounds(const float *a, const pair_state s, int n, int *list,
                                        int width, double eps, bidder_cache cache,
                                        unsigned *missed_bits, int *taken, long long round,
                                        long long room, few_report *out)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, threads = 32 * width;
    if (warp >= width)
        return;
    int me = list[warp], live = width, done = 0, bids = 0;
    bool pending = false;
    double bound = cache.bound[me];
    cache_row row = cache.slot[(size_t)me * 32 + lane];
    while (live >= 2 && live > pcb_ca_finish_at(n) && done < room) {
        const long long r = round + done;
        if (threadIdx.x == 0) { /* as the block's rounds: the next round's, read a round on */
            missed_bits[(r + 1) & 1] = 0;
            taken[(r + 1) & 1] = 0;
        }
        if (me >= 0) {
            pcb_ca_best best;
            bool hit = stored_look(a + 3 * me, s, s.price, bound, row, false, &best);
            if (!hit && SHARED) { /* pcb_ca_chain_rebuilds: its own warp's */
                if (!warp_rebuild(a + 3 * me, s, n, me, false, cache, &best, &row, &bound))
                    best = exact_scan(a + 3 * me, s, n);
                hit = true;
            }
            if (lane == 0 && hit)
                place_bid(s, warp, me, best, eps);
            if (lane == 0 && !hit)
                atomicOr(&missed_bits[r & 1], 1u << warp);
        }
        few_sync(threads);
        if (*(volatile unsigned *)&missed_bits[r & 1]) {
            pending = true;
            break;
        }
        if (me >= 0) {
            int next = lane == 0 ? award_own(s, warp, me) : 0;
            next = __shfl_sync(0xffffffffu, next, 0);
            if (next >= 0 && next != me) { /* its cache loads across the barrier */
                bound = cache.bound[next];
                row = cache.slot[(size_t)next * 32 + lane];
            }
            me = next;
        }
        bids += live;
        done++;
        live = few_sync_count(threads, lane == 0 && me >= 0);
    }
    if (lane == 0)
        list[warp] = me;
    if (threadIdx.x == 0)
        *out = few_report{done, bids, pending, live};
}

/* The slots' bidders packed to the list's front, their number in *count
 * (warp 0; width <= 32). */
__device__ __forceinline__ void few_pack(int *list, int width, int *count)
{
    if (threadIdx.x >= 32)
        return;
    const int lane = threadIdx.x, i = lane < width ? list[lane] : -1;
    const unsigned held = __ballot_sync(0xffffffffu, i >= 0);
    __syncwarp();
    if (i >= 0)
        list[__popc(held & ((1u << lane) - 1))] = i;
    if (lane == 0)
        *count = __popc(held);
}
