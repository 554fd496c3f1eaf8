/* cuda_auction/ascent.cuh - the dual ascent (emd_cuda_auction.h): where a
 * certificate does not prove the target, prices raised by a c-transform and
 * two passes over the bidders (demands and gaps, then row minima), so the
 * dual bound D' rises without another auction phase. */
#pragma once

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
