/* cuda_pruned/sample_runs.cuh - the run sampler of fps_cuda_pruned.cu, for
 * clouds a cluster holds (fps_sample_runs): owner threads hold runs of
 * sorted points in shared memory, so the update needs no reduction across
 * lanes; block 0 takes the samples (take.cuh), its last warp coordinating
 * the rounds. */
#pragma once

/* The owners, up to 992 threads a block, each own run = fps_run_length
 * (ceil(n / (992 x owner blocks))) consecutive sorted slots (the order is
 * Hilbert's or Morton's: fps_runs_hilbert), o*run .. o*run +
 * own - 1 (owners past n own none): their coordinates, 32-bit indexes and
 * minima in shared memory (slot i of a block's owner t at i * owners + t,
 * so a warp's accesses hit 32 banks), their box and key in registers. The
 * rounds are the bucket kernel's with a warp's 32 runs for a group and a
 * run for a bucket: lanes test the samples against the warp's box and key,
 * then each thread tests every sample that reached the warp against its
 * run's box and key (both as they were when the round began) and lowers
 * its own minima by all the samples that reach it in one pass: no
 * reduction across lanes.
 *
 * A cloud's owners spread over 1 to 16 blocks of a cluster (as many as the
 * GPU holds at once for the batch): a thread's serial share of the update,
 * two thirds of a round on one SM, shrinks with its run. Shared memory: the
 * posts (block 0's are read), then the runs. Block 0's last warp owns
 * nothing and coordinates the rounds; between the barriers all of block
 * 0's threads take the round's samples from the candidates (take_waves),
 * the other blocks wait. Where the batch still fits, block 0 is a taking
 * block that owns no points (a.taker): the take then runs without the
 * owners' state live beside it (impl/fps/NOTES.md: its first wave 10%
 * shorter, the whole 2-7% faster). Owners post their farthest points and candidates into block 0's
 * shared memory, block 0 writes each round's samples into every block's;
 * the same two barriers a round, across the cluster, except that a taking
 * block replaces the second by the word it publishes (publish,
 * wait_published; impl/fps/NOTES.md: a published handover). */
enum { RUN_BYTES = 4 * sizeof(float) + sizeof(uint32_t), POST_BYTES = 16 + 8 };

template <bool GLOBAL_RUNS, bool TAKER>
__global__ void __launch_bounds__(1024, 1) fps_sample_runs(fps_args a)
{
    extern __shared__ float4 smem[];
    __shared__ round_state r;
    const int ctas = a.ctas, rank = (int)(blockIdx.x % ctas);
    const int64_t cloud_id = blockIdx.x / ctas;
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5, T = a.owners, warps = T >> 5;
    /* A post an owner warp of the cluster. */
    float4 *post_xyz = smem;
    unsigned long long *post_key = (unsigned long long *)(post_xyz + warps * ctas);
    const float *xyz = a.xyz + cloud_id * a.n * 3;
    int32_t *out = a.out + cloud_id * a.m;
    cudaGridDependencySynchronize(); /* launched early (programmatic): the order is done */
    if (t == 0)
        begin_rounds(&r, a, cloud_id, rank == 0 ? out : NULL);

    unsigned long long cand_evals = 0; /* block 0's threads: the waves' distances */
    const int owner_blocks = ctas - a.taker, orank = rank - a.taker;
    /* A taking block: every warp takes, the last coordinates. (Its own loop:
     * one loop for it and the coordinating warps below, with the role a
     * run-time flag, measured 2-18% slower on the H100.) */
    if (TAKER && orank < 0) {
        const bool coordinator = warp == warps;
        int j = a.opening, base = fps_round_first_level(a.opening), rounds = 0;
        round_barrier(ctas);
        while (!r.done) {
            round_barrier(ctas); /* the owners' posts and candidates are in */
            const int from = j;
            j = take_round(&r, ctas, post_key, post_xyz, warps * owner_blocks, j, a.m, &base,
                           rounds & 1, out, &cand_evals, coordinator, (unsigned)rounds + 1);
            rounds++;
            if (coordinator && lane == 0)
                r.picks_from = from, r.picks_to = j;
            __syncthreads(); /* the owners go on at the published word */
            write_picks(&r, out, r.picks_from, r.picks_to, t, blockDim.x);
        }
        if (cand_evals)
            atomicAdd(a.evals, cand_evals);
        if (coordinator && lane == 0)
            atomicAdd(a.rounds, (unsigned long long)rounds);
        return;
    }
    if (TAKER && warp >= warps) { /* an owner block's last warp: the first barrier, after
                                     each round's final word */
        round_barrier(ctas);
        for (unsigned seq = 0;; seq++) {
            wait_published(&r.pub, seq, FPS_ROUND_CAP + 1);
            if (r.done)
                return;
            round_barrier(ctas);
        }
    }
    if (warp >= warps) { /* block 0's coordinates the rounds; the others' only keep the barriers */
        int j = a.opening, base = fps_round_first_level(a.opening), rounds = 0;
        round_barrier(ctas);
        while (!r.done) {
            round_barrier(ctas); /* the owners' posts and candidates are in */
            const int from = j;
            if (rank == 0)
                j = take_round(&r, ctas, post_key, post_xyz, warps * ctas, j, a.m, &base,
                               rounds & 1, out, &cand_evals, true);
            rounds++;
            round_barrier(ctas);
            if (rank == 0)
                write_picks(&r, out, from, j, lane, 32);
        }
        if (cand_evals)
            atomicAdd(a.evals, cand_evals);
        if (lane == 0 && rank == 0)
            atomicAdd(a.rounds, (unsigned long long)rounds);
        return;
    }

    const int run = a.run, owner = orank * T + t, first = owner * run,
              own = max(0, min(run, a.n - first));
    /* the runs: x, y, z, minimum, index, each run * T words; a template
     * parameter, so that shared ones are read as shared memory */
    float *sx = GLOBAL_RUNS ? a.runs + (size_t)blockIdx.x * run * T * 5
                            : (float *)(post_key + warps * ctas);
    float *sy = sx + run * T, *sz = sy + run * T, *sm = sz + run * T;
    uint32_t *sid = (uint32_t *)(sm + run * T);
    round_state *lead = in_block(&r, ctas, 0);
    unsigned long long *lead_key = in_block(post_key, ctas, 0);
    float4 *lead_xyz = in_block(post_xyz, ctas, 0);
    const uint32_t *order = a.order + cloud_id * a.n;
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    uint32_t low = 0xffffffffu;
    const float *opened = a.opened + cloud_id * a.n;
    float farthest = -1.0f;
    for (int i = 0; i < own; i++) {
        const uint32_t k = order[first + i];
        const float x = xyz[3 * k], y = xyz[3 * k + 1], z = xyz[3 * k + 2];
        const float v = a.opening > 1 ? opened[k] : INFINITY;
        sx[i * T + t] = x, sy[i * T + t] = y, sz[i * T + t] = z, sm[i * T + t] = v;
        sid[i * T + t] = k;
        lo[0] = fminf(lo[0], x), lo[1] = fminf(lo[1], y), lo[2] = fminf(lo[2], z);
        hi[0] = fmaxf(hi[0], x), hi[1] = fmaxf(hi[1], y), hi[2] = fmaxf(hi[2], z);
        const uint32_t id = k << FPS_RUNS_SLOT_BITS | i;
        if (v > farthest || (v == farthest && id < low))
            farthest = v, low = id;
    }
    /* The run's key and the slot of its farthest point (the lowest index at
     * the largest minimum); a thread without points has key 0. */
    const uint32_t slot_mask = (1u << FPS_RUNS_SLOT_BITS) - 1;
    unsigned long long key = own > 0 ? fps_key(farthest, low >> FPS_RUNS_SLOT_BITS) : 0ull;
    int at = own > 0 ? low & slot_mask : 0; /* a warp of a cluster's last block may own nothing */
    /* The warp's box (the union of its runs') and key. */
    float wlo[3] = {lo[0], lo[1], lo[2]}, whi[3] = {hi[0], hi[1], hi[2]};
    warp_box(wlo, whi);
    int win;
    unsigned long long wkey = warp_max_key(key, &win);
    unsigned evals = 0;
    int parity = 0; /* the round's */
    round_barrier(ctas);

    for (unsigned seq = 0;; seq++) {
        /* Samples q[from .. count): those that reach the warp's box, then
         * those of them that reach the run's (both against the keys at the
         * start of the round, however the samples come); then each slot is
         * lowered by all of those at once and the run's farthest point found
         * in the same pass. */
        const float wval = fps_key_dist(wkey), kval = fps_key_dist(key);
        unsigned round_evals = 0; /* counted once the round is known not to end the cloud */
        const auto apply = [&](int from, int count) {
        for (int s0 = from; s0 < count; s0 += 32) {
            const int s = s0 + lane;
            const float4 p = r.q[s < count ? s : 0];
            const unsigned hits = __ballot_sync(
                0xffffffffu, s < count && sp_box_d2(wlo, whi, p.x, p.y, p.z) < wval);
            unsigned mine = 0;
            for (unsigned h = hits; h; h &= h - 1) {
                const float4 q = r.q[s0 + __ffs(h) - 1];
                if (sp_box_d2(lo, hi, q.x, q.y, q.z) < kval)
                    mine |= h & -h;
            }
            if (!mine)
                continue;
            /* Four samples at a time in registers, their distances to a
             * slot independent of each other; the farthest point after the
             * last four. */
            float far = -1.0f;
            for (unsigned left = mine; left;) {
                const int now = min(__popc(left), 4);
                float4 q[4];
#pragma unroll
                for (int u = 0; u < 4; u++) {
                    q[u] = r.q[s0 + (left ? __ffs(left) - 1 : 0)];
                    left &= left - 1;
                }
                const bool last = !left;
                if (last)
                    far = -1.0f, low = 0xffffffffu;
                /* slot i (at e): lowered by the samples, the run's farthest kept */
                const auto lower = [&](int i, int e, float px, float py, float pz, float before,
                                       uint32_t pid) {
                    float v = before;
#pragma unroll
                    for (int u = 0; u < 4; u++) {
                        const float d = fps_dist(px, py, pz, q[u].x, q[u].y, q[u].z);
                        v = u < now && d < v ? d : v;
                    }
                    if (v < before)
                        sm[e] = v;
                    const uint32_t id = pid << FPS_RUNS_SLOT_BITS | i;
                    if (last && (v > far || (v == far && id < low)))
                        far = v, low = id;
                };
                if (GLOBAL_RUNS) {
                    /* L2 latency: the next slot's loads go out before this slot's
                     * store, which the compiler may not move them past */
                    float nx = 0.0f, ny = 0.0f, nz = 0.0f, nm = 0.0f;
                    uint32_t nid = 0;
                    if (own > 0)
                        nx = sx[t], ny = sy[t], nz = sz[t], nm = sm[t], nid = sid[t];
                    for (int i = 0; i < own; i++) {
                        const int e = i * T + t;
                        const float px = nx, py = ny, pz = nz, before = nm;
                        const uint32_t pid = nid;
                        if (i + 1 < own)
                            nx = sx[e + T], ny = sy[e + T], nz = sz[e + T], nm = sm[e + T],
                            nid = sid[e + T];
                        lower(i, e, px, py, pz, before, pid);
                    }
                } else {
                    for (int i = 0; i < own; i++) {
                        const int e = i * T + t;
                        lower(i, e, sx[e], sy[e], sz[e], sm[e], sid[e]);
                    }
                }
            }
            key = fps_key(far, low >> FPS_RUNS_SLOT_BITS);
            at = low & slot_mask;
            round_evals += own * __popc(mine);
        }
        };
        if (TAKER) { /* the samples as the taking block publishes them */
            bool done = false;
            for (int applied = 0;;) {
                const unsigned w = wait_published(&r.pub, seq, applied);
                const bool final = pub_final(w);
                if (final && r.done) {
                    done = true;
                    break;
                }
                apply(applied, pub_count(w));
                applied = pub_count(w);
                if (final)
                    break;
            }
            if (done)
                break;
        } else {
            if (r.done)
                break;
            apply(0, r.q_count);
        }
        evals += round_evals;
        float tau[FPS_ROUND_CLASSES];
#pragma unroll
        for (int k = 0; k < FPS_ROUND_CLASSES; k++)
            tau[k] = r.tau[k];
        /* Candidates: the warp counts its own in each row, takes its
         * places in block 0's lists with an atomic a row, then writes them
         * (past a list's end only the count matters). Counts a thread, then
         * prefixes over the lanes, 16 bits a row: a warp's runs hold at most
         * 2,048 slots. */
        const bool above = own > 0 && fps_key_dist(key) > tau[0];
        if (__any_sync(0xffffffffu, above)) {
            unsigned long long ours = 0;
            for (int i = 0; i < own && above; i++) {
                const int row = fps_round_row(sm[i * T + t], tau);
                ours += row < FPS_ROUND_CLASSES ? 1ull << (16 * row) : 0ull;
            }
            unsigned long long before = ours; /* inclusive prefix over the lanes */
            for (int o = 1; o < 32; o <<= 1) {
                const unsigned long long v = __shfl_up_sync(0xffffffffu, before, o);
                before += lane >= o ? v : 0ull;
            }
            const unsigned long long total = __shfl_sync(0xffffffffu, before, 31);
            const int in_row = lane < FPS_ROUND_CLASSES ? (int)(total >> (16 * lane) & 0xffff) : 0;
            int base = FPS_ROUND_CAP; /* lane k: row k's first place, at most the cap (8 bits) */
            if (in_row > 0)
                base = min(atomicAdd(&lead->row_count[parity][lane], in_row), (int)FPS_ROUND_CAP);
            const unsigned first = __reduce_or_sync(
                0xffffffffu, lane < FPS_ROUND_CLASSES ? (unsigned)base << (8 * lane) : 0u);
            unsigned long long at = before - ours;
            for (int i = 0; i < own && ours; i++) {
                const int e = i * T + t, row = fps_round_row(sm[e], tau);
                if (row < FPS_ROUND_CLASSES) {
                    const int c = (int)(first >> (8 * row) & 0xff) + (int)(at >> (16 * row) & 0xffff);
                    if (c < FPS_ROUND_CAP) {
                        lead->cand[row * FPS_ROUND_CAP + c] =
                            make_float4(sx[e], sy[e], sz[e], __uint_as_float(sid[e]));
                        lead->cand_key[row * FPS_ROUND_CAP + c] = fps_key(sm[e], sid[e]);
                    }
                    at += 1ull << (16 * row);
                }
            }
        }
        wkey = warp_max_key(key, &win);
        if (lane == win) {
            lead_key[orank * warps + warp] = wkey;
            lead_xyz[orank * warps + warp] =
                make_float4(sx[at * T + t], sy[at * T + t], sz[at * T + t], 0.0f);
        }
        round_barrier(ctas);
        if (!TAKER) {
            if (rank == 0) /* the round's picks, with the coordinating warp */
                take_round(&r, ctas, post_key, post_xyz, warps * owner_blocks, 0, a.m, NULL,
                           parity, NULL, &cand_evals, false);
            round_barrier(ctas);
        }
        parity ^= 1;
    }
    evals = __reduce_add_sync(0xffffffffu, evals);
    if (lane == 0 && evals)
        atomicAdd(a.evals, (unsigned long long)evals);
    if (cand_evals)
        atomicAdd(a.evals, cand_evals);
}
