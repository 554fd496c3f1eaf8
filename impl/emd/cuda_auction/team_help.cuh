/* cuda_auction/team_help.cuh - a helper block's life: it waits for the
 * lead's orders and takes its share of each (bids, the certificate's least
 * values, the ascent's passes and transform, block rebuilds, the finish)
 * until the end; and the block's work counts added to its pair's. */
#pragma once

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
