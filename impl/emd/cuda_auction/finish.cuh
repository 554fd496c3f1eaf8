/* cuda_auction/finish.cuh - the finish (emd_cuda_auction.h): a phase's last
 * few bidders placed by shortest augmenting paths (Dijkstra over objects,
 * keys in s.top), the settled objects' offers staged in shared memory;
 * where a team runs it, objects split among its blocks and the step's
 * reductions merged. */
#pragma once

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
             * as one, the team's kernel measured 10% slower: NOTES.md.) */
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
