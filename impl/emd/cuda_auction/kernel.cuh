/* cuda_auction/kernel.cuh - the auction kernel, a block (or a team's lead)
 * a pair: eps-scaling phases of Jacobi rounds (every unassigned bidder
 * bids, an atomic max a object, awards after a barrier; warp 0 alone for
 * chains of one bidder), the finish for a phase's last bidders, the
 * certificate D <= OPT <= P after each phase, the dual ascent where it
 * falls short, and the answer and counts written out. A warm start
 * (pcb_emd_warm, WARM: a kernel of its own, so that the cold one keeps
 * its registers) begins from given prices at a given eps; one that spends
 * its budget of rounds drops them and begins again cold. A cold pair
 * starts from cold_start's prices (the column reduction:
 * column_least_kernel), or 0 where NULL. */
#pragma once

template <bool SHARED, bool CACHE, bool SHARED_A, bool WARM>
__global__ void __launch_bounds__(THREADS, 1)
    auction_kernel(int n, const float *__restrict__ xyz1, const float *__restrict__ xyz2,
                   const double *__restrict__ bound, const double *__restrict__ floor_eps,
                   double target, char *__restrict__ scratch, cache_row *__restrict__ cache_slot,
                   double *__restrict__ cache_bound, int32_t *__restrict__ match_out,
                   double *__restrict__ price_out, pair_stats *__restrict__ stats, int ctas,
                   const double *__restrict__ cold_start, warm_io warm)
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
    /* A warm start: read before anything is written (in and out may be one
     * array); its prices are checked below (pcb_ca_start_price_ok). */
    const double start_eps = WARM && warm.eps_in && !helper ? warm.eps_in[pair] : 0;
    const long long budget = WARM && warm.budget_in && !helper ? warm.budget_in[pair] : 0;
    bool warmed = WARM && warm.price_in && start_eps > 0 && start_eps < HUGE_VAL;

    if (c <= 0) { /* every cost is 0: every bijection is optimal */
        if (helper)
            return; /* nothing to help with: no order comes */
        for (int i = tid; i < n; i += THREADS) {
            match[i] = i;
            price_out[pair * n + i] = 0;
        }
        if (tid == 0) {
            stats[pair] = pair_stats{0, 0, 0, 0, 0, 0, 0.0, 0.0, 0};
            if (WARM && warm.eps_out)
                warm.eps_out[pair] = 0;
            if (WARM && warm.budget_out)
                warm.budget_out[pair] = 0;
        }
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
    if (WARM) {
        bool finite = true;
        for (int j = tid; warmed && j < n; j += THREADS)
            finite = finite && pcb_ca_start_price_ok(warm.price_in[pair * n + j]);
        warmed = __syncthreads_and(warmed && finite);
    }
    /* Every bidder free, every object unowned at its start price (start,
     * or 0 where NULL), every cache stale: the pair's start, and a warm
     * start's restart cold. */
    auto free_all = [&](const double *start) {
        for (int j = tid; j < n; j += THREADS) {
            const double p = start ? start[j] : 0.0;
            s.bq[j].w = (float)p;
            s.price[j] = p;
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
        }
    };
    for (int j = tid; j < n; j += THREADS) {
        s.bq[j] = make_float4(b[3 * j], b[3 * j + 1], b[3 * j + 2], 0.0f);
        s.top[j] = 0;
    }
    const double *cold = cold_start ? cold_start + pair * n : NULL;
    free_all(WARM && warmed ? warm.price_in + pair * n : cold);
    if (tid == 0) {
        stats[pair].p = stats[pair].d = 0;
        stats[pair].scans = stats[pair].checks = stats[pair].finish_evals = 0;
    }
    __syncthreads();

    int cur = 0;
    const long long round_limit = (long long)MAX_ROUNDS_PER_N * n + 100000;
    long long limit = WARM && warmed && budget > 0 ? budget : 0, cold_from = 0;
    double last_eps = 0;
    for (double eps = pcb_ca_eps_start(c, floor, warmed ? start_eps : 0);;) {
        long long phase_rounds = 0;
        last_eps = eps;
        bool restart = false;
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
            if (WARM && limit && rounds >= limit) { /* stale prices: start again cold */
                restart = true;
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
                    while (phase_rounds + steps < round_limit &&
                           (!WARM || !limit || rounds + steps < limit)) {
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
        if (WARM && restart) { /* as a cold start: every cache stale */
            free_all(cold);
            __syncthreads();
            cur = 0;
            warmed = false;
            limit = 0;
            cold_from = rounds;
            eps = pcb_ca_eps_first(c, floor);
            continue;
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
        if (WARM && warm.eps_out)
            warm.eps_out[pair] = last_eps;
        if (WARM && warm.budget_out)
            warm.budget_out[pair] = warmed ? budget : rounds - cold_from;
    }
}
