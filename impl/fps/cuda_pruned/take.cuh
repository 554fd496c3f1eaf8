/* cuda_pruned/take.cuh - step 2 of fps_cuda_pruned.cu, the taking block's
 * part of a round: the round's picks from its candidates in waves
 * (take_waves: each pick provably dp's next, fps_rounds.h), the round's
 * list and thresholds (take_round), the samples written in dp's order
 * (write_picks), and a cloud's first round (begin_rounds). */
#pragma once

/* Every thread of the taking block: the round's picks from its count
 * candidates, in waves (fps_rounds.h: fps_wave_holds), each pick into every
 * block's samples as it is decided (decide_append); returns how many. The
 * first wave tests every pair: a warp's lanes hold 32 candidates and go
 * through a share of the others, four at a time, no reduction. The later
 * steps work on short lists: a candidate a group of WAVE_GROUP lanes, each
 * lane a share of the list it is tested against, the group's answer by
 * shuffles, so that no warp walks several candidates one after another;
 * the lists grow by one shared-memory atomic a warp. The
 * rows past the first are free once moved up (take_round): the picks and
 * those left after a wave's drops live there, coordinates and keys copied,
 * so a test reads one list. A barrier a step, none a pick. */
enum { WAVE_GROUP = 16 };

/* Every lane of a warp, deciding candidate c (key kc at p) where decider:
 * into the undecided (by index) where held, else into the picks after the
 * first `before`, one atomic a warp for both lists (16 bits each in *n). A
 * pick goes straight to every block's samples, in the order picked: the
 * update does not care, and the coordinator orders the output later. */
__device__ __forceinline__ void decide_append(round_state *r, int ctas, int *n, bool decider,
                                              bool held, int c, float4 p, unsigned long long kc,
                                              int before)
{
    const int lane = threadIdx.x & 31;
    const unsigned below = (1u << lane) - 1, waits = __ballot_sync(0xffffffffu, decider && held),
                   picks = __ballot_sync(0xffffffffu, decider && !held);
    int base = 0;
    if ((waits | picks) && lane == 0)
        base = atomicAdd(n, __popc(waits) | __popc(picks) << 16);
    base = __shfl_sync(0xffffffffu, base, 0);
    if (decider && held)
        r->undecided[(base & 0xffff) + __popc(waits & below)] = c;
    if (decider && !held) {
        const int at = before + (base >> 16) + __popc(picks & below);
        r->cand[2 * FPS_ROUND_CAP + at] = p;
        r->pick_key[at] = kc;
        for (int b = 0; b < ctas; b++)
            in_block(r, ctas, b)->q[at] = p;
    }
}

/* seq: where nonzero (the coordinating warp of a taking block), the first
 * wave's picks are published as round seq's first samples when some
 * candidates are left undecided and the picks are fewer than want (the
 * samples the cloud still needs: a round that ends it is not applied). */
__device__ int take_waves(round_state *r, int ctas, int count, float tau,
                          unsigned long long *evals, unsigned seq, int want)
{
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5, warps = blockDim.x >> 5;
    float4 *const left_at = r->cand + FPS_ROUND_CAP, *const pick_at = r->cand + 2 * FPS_ROUND_CAP;
    unsigned long long *const left_key = r->cand_key + FPS_ROUND_CAP;
    if (t == 0) /* the last round's were read before its barriers */
        r->n_decided[1] = r->n_left[1] = 0;
    const int blocks = (count + 31) >> 5, chunks = max(1, warps / blocks),
              chunk = (count + chunks - 1) / chunks;
    for (int task = warp; task < blocks * chunks; task += warps) {
        const int q = task % blocks * 32 + lane, c0 = task / blocks * chunk,
                  c1 = min(count, c0 + chunk);
        const float4 pq = r->cand[q < count ? q : 0];
        const unsigned long long kq = r->cand_key[q < count ? q : 0];
        bool held = false;
        for (int c = c0; c < c1; c += 4) {
            float4 pc[4];
            unsigned long long kc[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                pc[u] = r->cand[min(c + u, c1 - 1)];
                kc[u] = r->cand_key[min(c + u, c1 - 1)];
            }
#pragma unroll
            for (int u = 0; u < 4; u++)
                held |= fps_wave_holds(kc[u], fps_key_dist(kc[u]), kq,
                                       fps_dist(pq.x, pq.y, pq.z, pc[u].x, pc[u].y, pc[u].z));
        }
        if (q < count && held)
            r->held[q] = 1;
    }
    if (t == 0)
        *evals += (unsigned long long)count * (count - 1);
    __syncthreads();
    /* The first wave's decisions. */
    for (int c0 = 32 * warp; c0 < count; c0 += blockDim.x) {
        const int c = c0 + lane;
        const bool in = c < count, held = in && r->held[c];
        if (in)
            r->held[c] = 0; /* for the next round */
        decide_append(r, ctas, &r->n_decided[1], in, held, c, r->cand[in ? c : 0],
                      r->cand_key[in ? c : 0], 0);
    }
    const int per_warp = 32 / WAVE_GROUP, part = lane % WAVE_GROUP;
    int picked = 0;
    for (int wave = 1;; wave++) {
        /* The undecided lowered by the last wave's picks (pick_at[from ..
         * picked)); dropped at tau, else left. */
        __syncthreads();
        const int decided = r->n_decided[wave & 1], undecided = decided & 0xffff,
                  from = picked;
        picked += decided >> 16;
        if (!undecided)
            break;
        if (seq && wave == 1 && picked < want)
            publish(r, ctas, pub_word(seq, false, picked));
        bool left = false;
        for (int u0 = per_warp * warp; u0 < undecided; u0 += per_warp * warps) {
            const int u = u0 + lane / WAVE_GROUP;
            const bool in = u < undecided;
            const int c = in ? r->undecided[u] : 0;
            const float4 pc = r->cand[c];
            float v = INFINITY;
            for (int k = from + part; k < picked; k += WAVE_GROUP) {
                const float4 pq = pick_at[k];
                const float d = fps_dist(pc.x, pc.y, pc.z, pq.x, pq.y, pq.z);
                v = d < v ? d : v;
            }
#pragma unroll
            for (int o = WAVE_GROUP / 2; o > 0; o >>= 1) {
                const float w = __shfl_xor_sync(0xffffffffu, v, o);
                v = w < v ? w : v;
            }
            const float before = fps_key_dist(r->cand_key[c]);
            v = v < before ? v : before;
            const unsigned long long kc = fps_key(v, __float_as_uint(pc.w));
            const bool keep = in && part == 0 && v > tau;
            const unsigned keeps = __ballot_sync(0xffffffffu, keep);
            int base = 0;
            if (keeps && lane == 0)
                base = atomicAdd(&r->n_left[wave & 1], __popc(keeps));
            base = __shfl_sync(0xffffffffu, base, 0) + __popc(keeps & ((1u << lane) - 1));
            if (keep) {
                r->cand_key[c] = kc;
                r->left[base] = c;
                left_at[base] = pc;
                left_key[base] = kc;
            }
            left |= keep;
        }
        if (t == 0) {
            *evals += (unsigned long long)undecided * (picked - from);
            r->n_decided[(wave + 1) & 1] = 0; /* last read by the wave before */
        }
        if (!__syncthreads_or(left))
            break; /* all dropped */
        /* Then each of those left picked unless another of them holds it. */
        const int left_n = r->n_left[wave & 1];
        if (t == 0) {
            *evals += (unsigned long long)left_n * (left_n - 1);
            r->n_left[(wave + 1) & 1] = 0;
        }
        for (int u0 = per_warp * warp; u0 < left_n; u0 += per_warp * warps) {
            const int u = u0 + lane / WAVE_GROUP;
            const bool in = u < left_n;
            const float4 pc = left_at[in ? u : 0];
            const unsigned long long kc = left_key[in ? u : 0];
            bool held = false;
            for (int k = part; k < left_n; k += WAVE_GROUP) {
                const unsigned long long kq = left_key[k];
                const float4 pq = left_at[k];
                held |= fps_wave_holds(kq, fps_key_dist(kq), kc,
                                       fps_dist(pc.x, pc.y, pc.z, pq.x, pq.y, pq.z));
            }
            const unsigned group = __ballot_sync(0xffffffffu, held) >> (lane & ~(WAVE_GROUP - 1));
            held = group & ((1u << WAVE_GROUP) - 1);
            decide_append(r, ctas, &r->n_decided[(wave + 1) & 1], in && part == 0, held,
                          r->left[in ? u : 0], pc, kc, picked);
        }
    }
    return picked;
}

/* Every thread of the taking block, between a round's barriers: the round's
 * samples (fps_rounds.h) from the candidates of the rows it takes (the
 * parity's counts; rows past the first moved up behind it); the
 * coordinating warp also takes the global farthest point from the owner
 * warps' posts where the round has no list, and writes the next thresholds
 * and whether the cloud is done. Returns the next output position (the
 * coordinator's). */
__device__ int take_round(round_state *r, int ctas, const unsigned long long *post_key,
                          const float4 *post_xyz, int posts, int j, int m, int *base, int parity,
                          int32_t *out, unsigned long long *evals, bool coordinator,
                          unsigned seq = 0)
{
    const int lane = threadIdx.x & 31;
    int row_count[FPS_ROUND_CLASSES], count = 0;
#pragma unroll
    for (int k = 0; k < FPS_ROUND_CLASSES; k++)
        row_count[k] = r->row_count[parity][k];
    const int rows = fps_round_rows(row_count);
#pragma unroll
    for (int k = 0; k < FPS_ROUND_CLASSES; k++)
        count += k < rows ? row_count[k] : 0;
    const float tau = rows > 0 ? r->tau[FPS_ROUND_CLASSES - rows] : INFINITY;
    const bool listed = count > 0;
    if (count > row_count[0]) { /* the other rows taken, up behind row 0 */
        for (int i = row_count[0] + threadIdx.x; i < count; i += blockDim.x) {
            int row = 1, at = i - row_count[0]; /* the counts in registers */
#pragma unroll
            for (int k = 1; k < FPS_ROUND_CLASSES - 1; k++)
                if (row == k && at >= row_count[k])
                    at -= row_count[k], row = k + 1;
            r->cand[i] = r->cand[row * FPS_ROUND_CAP + at];
            r->cand_key[i] = r->cand_key[row * FPS_ROUND_CAP + at];
        }
        __syncthreads();
    }
    const int picks =
        listed ? take_waves(r, ctas, count, tau, evals, coordinator ? seq : 0u, m - j) : 0;
    if (!coordinator)
        return j;
    /* Lane b writes the round's count, thresholds and done into block b's round
     * state (the candidates and posts are block 0's). */
    round_state *to = lane < ctas ? in_block(r, ctas, lane) : NULL;
    int taken = 1;
    float bound = tau, far = 1.0f;
    if (listed) {
        taken = min(picks, m - j);
    } else {
        unsigned long long mine = 0;
        int at = 0, win;
        for (int k = lane; k < posts; k += 32)
            if (post_key[k] > mine)
                mine = post_key[k], at = k;
        const unsigned long long top = warp_max_key(mine, &win);
        const int far_post = __shfl_sync(0xffffffffu, at, win);
        far = fps_key_dist(top);
        bound = far;
        if (far == 0.0f) { /* every minimum is 0: dp repeats the lowest index to the end */
            for (int k = j + lane; k < m; k += 32)
                out[k] = (int32_t)fps_key_index(top);
            taken = m - j;
        } else if (to) {
            const float4 p = post_xyz[far_post];
            to->q[0] = make_float4(p.x, p.y, p.z, __int_as_float((int)fps_key_index(top)));
        }
    }
    /* all the picks to apply (past m only when the cloud is done), none once all are 0 */
    const int samples = far == 0.0f ? 0 : listed ? picks : 1;
    *base = fps_round_base(*base, rows);
    if (to) {
        to->q_count = samples;
#pragma unroll
        for (int k = 0; k < FPS_ROUND_CLASSES; k++) {
            to->tau[k] = fps_round_tau(*base, k, bound);
            to->row_count[parity ^ 1][k] = 0; /* read last round, counted next */
        }
        to->done = j + taken >= m;
    }
    if (seq)
        publish(r, ctas, pub_word(seq, true, samples));
    return j + taken;
}

/* The coordinating warp (first: its lane, step 32), or a taking block's
 * every thread (first: the thread, step: the block's size), after a round's
 * second barrier or its published word, while the owners update: the
 * round's samples' indexes into out[from .. to), each at its place by key
 * (the picks of larger key before it; the first to - from of them). Written
 * now, their stores are done long before the next barrier waits for them. */
__device__ void write_picks(const round_state *r, int32_t *out, int from, int to, int first,
                            int step)
{
    const int count = r->q_count;
    for (int i = first; i < count; i += step) {
        const unsigned long long key = r->pick_key[i];
        int place = 0;
        for (int k = 0; k < count; k++)
            place += r->pick_key[k] > key;
        if (place < to - from)
            out[from + place] = __float_as_int(r->q[i].w);
    }
}

/* Thread 0, before the first round: the samples out so far (the start, or
 * the opening's; the start written to out unless NULL), the last of them
 * the one to apply. Without an opening there are no candidates yet
 * (thresholds +inf: the first round takes the farthest point alone); after
 * one, the thresholds start at FPS_OPENING_LEVEL of the last sample's
 * minimum. None held. */
__device__ void begin_rounds(round_state *r, const fps_args &a, int64_t cloud, int32_t *out)
{
    if (out)
        out[0] = a.start;
    const int last = a.opening > 1 ? a.out[cloud * a.m + a.opening - 1] : a.start;
    const float bound = a.opening > 1 ? a.opened[cloud * a.n + last] : INFINITY;
    const float *q = a.xyz + (cloud * a.n + last) * 3;
    r->q[0] = make_float4(q[0], q[1], q[2], __int_as_float(last));
    r->q_count = 1;
    for (int k = 0; k < FPS_ROUND_CLASSES; k++) {
        r->row_count[0][k] = r->row_count[1][k] = 0;
        r->tau[k] = fps_round_tau(fps_round_first_level(a.opening), k, bound);
    }
    r->done = a.m <= a.opening;
    r->pub = pub_word(0, true, 1);
    for (int c = 0; c < FPS_ROUND_CAP; c++)
        r->held[c] = 0;
}
