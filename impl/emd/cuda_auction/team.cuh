/* cuda_auction/team.cuh - the team: a cluster of blocks a pair where the
 * batch leaves SMs idle. The lead posts orders (team_order), helpers take
 * a share of each (team_next), their keys are merged into the lead's
 * (team_merge), and the team's share of block rebuilds. */
#pragma once

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
