/* cuda_pruned/sample_buckets.cuh - the bucket sampler of fps_cuda_pruned.cu,
 * any cloud, a block each (fps_sample): the CPU pruned's layout
 * (fps_bucket.h), groups, buckets and points in shared memory as far as
 * they fit; warps own groups, lanes test buckets, a round a loop of
 * rounds.cuh's update and gather, one barrier, take.cuh's take, one more. */
#pragma once

template <int WARPS>
__global__ void __launch_bounds__(WARPS * 32, 1) fps_sample(fps_args a)
{
    enum { THREADS = WARPS * 32 };
    extern __shared__ float4 smem[];
    __shared__ unsigned long long post_key[WARPS];
    __shared__ float4 post_xyz[WARPS];
    __shared__ round_state r;
    const int64_t cloud_id = blockIdx.x;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int S = a.group_size, B = a.buckets, G = a.groups;
    char *cursor = (char *)smem;

    /* This cloud's arrays, in shared memory where they fit. */
    cloud c;
    c.n = a.n, c.buckets = B, c.groups = G, c.group_size = S;
    c.gbox = a.gbox + cloud_id * G * 2, c.gbest = a.gbest + cloud_id * G;
    c.gkey = a.gkey + cloud_id * G;
    if (a.smem_groups) {
        c.gbox = (float4 *)carve(&cursor, sizeof(float4) * 2 * G);
        c.gbest = (float4 *)carve(&cursor, sizeof(float4) * G);
        c.gkey = (unsigned long long *)carve(&cursor, sizeof(unsigned long long) * G);
    }
    c.bbox = a.bbox + cloud_id * B * 2, c.bbest = a.bbest + cloud_id * B;
    c.bkey = a.bkey + cloud_id * B;
    if (a.smem_buckets) {
        c.bbox = (float4 *)carve(&cursor, sizeof(float4) * 2 * B);
        c.bbest = (float4 *)carve(&cursor, sizeof(float4) * B);
        c.bkey = (unsigned long long *)carve(&cursor, sizeof(unsigned long long) * B);
    }
    c.pts = a.pts + cloud_id * a.slots;
    c.mind = a.mind + cloud_id * a.slots;
    if (a.smem_points) {
        c.pts = (float4 *)carve(&cursor, sizeof(float4) * a.slots);
        c.mind = (float *)carve(&cursor, sizeof(float) * a.slots);
    }

    /* Prologue: slots in Morton order (the last bucket padded with copies of
     * the last point), bucket boxes and keys, group boxes and keys. */
    const float *xyz = a.xyz + cloud_id * a.n * 3;
    const uint32_t *order = a.order + cloud_id * a.n;
    for (int i = threadIdx.x; i < a.slots; i += THREADS) {
        const uint32_t k = order[i < a.n ? i : a.n - 1];
        c.pts[i] = make_float4(xyz[3 * k], xyz[3 * k + 1], xyz[3 * k + 2], __uint_as_float(k));
        c.mind[i] = INFINITY;
    }
    __syncthreads();
    for (int b = warp; b < B; b += WARPS) {
        const float4 p = c.pts[b * FPS_BUCKET + lane];
        float lo[3] = {p.x, p.y, p.z}, hi[3] = {p.x, p.y, p.z};
        warp_box(lo, hi);
        int win;
        const unsigned long long key = warp_max_key(fps_key(INFINITY, __float_as_uint(p.w)), &win);
        if (lane == win)
            c.bbest[b] = make_float4(p.x, p.y, p.z, 0.0f);
        if (lane == 0) {
            c.bbox[2 * b] = make_float4(lo[0], lo[1], lo[2], 0.0f);
            c.bbox[2 * b + 1] = make_float4(hi[0], hi[1], hi[2], 0.0f);
            c.bkey[b] = key;
        }
    }
    __syncthreads();
    for (int g = threadIdx.x; g < G; g += THREADS) {
        const int first = g * S, last = min(first + S, B);
        float4 lo = c.bbox[2 * first], hi = c.bbox[2 * first + 1];
        unsigned long long key = c.bkey[first];
        int far = first;
        for (int b = first + 1; b < last; b++) {
            const float4 l = c.bbox[2 * b], h = c.bbox[2 * b + 1];
            lo = make_float4(fminf(lo.x, l.x), fminf(lo.y, l.y), fminf(lo.z, l.z), 0.0f);
            hi = make_float4(fmaxf(hi.x, h.x), fmaxf(hi.y, h.y), fmaxf(hi.z, h.z), 0.0f);
            if (c.bkey[b] > key) {
                key = c.bkey[b];
                far = b;
            }
        }
        c.gbox[2 * g] = lo;
        c.gbox[2 * g + 1] = hi;
        c.gkey[g] = key;
        c.gbest[g] = c.bbest[far];
    }
    int32_t *out = a.out + cloud_id * a.m;
    if (threadIdx.x == 0)
        begin_rounds(&r, a, cloud_id, out);
    unsigned long long evals = 0, cand_evals = 0;
    int j = 1, base = FPS_ROUND_LEVEL0, rounds = 0; /* warp 0's but rounds */
    __syncthreads();

    while (!r.done) {
        /* Every warp: apply the last round's samples to its groups, gather
         * their candidates, post its farthest group. */
        const int count = r.q_count;
        float tau[FPS_ROUND_CLASSES];
#pragma unroll
        for (int k = 0; k < FPS_ROUND_CLASSES; k++)
            tau[k] = r.tau[k];
        unsigned long long best = 0;
        int best_g = -1;
        for (int g = warp; g < G; g += WARPS) {
            const unsigned long long gk = update_group(c, g, r.q, count, &evals);
            if (fps_key_dist(gk) > tau[0])
                gather_group(c, g, tau, r.row_count[rounds & 1], &r);
            if (gk > best)
                best = gk, best_g = g;
        }
        if (lane == 0) { /* it wrote gbest[best_g] itself */
            post_key[warp] = best;
            post_xyz[warp] = best_g >= 0 ? c.gbest[best_g] : make_float4(0, 0, 0, 0);
        }
        __syncthreads();
        const int from = j;
        j = take_round(&r, 1, post_key, post_xyz, WARPS, j, a.m, &base, rounds & 1, out,
                       &cand_evals, warp == 0);
        rounds++;
        __syncthreads();
        if (warp == 0)
            write_picks(&r, out, from, j, lane, 32);
    }
    if (lane == 0 && evals)
        atomicAdd(a.evals, evals * FPS_BUCKET);
    if (cand_evals)
        atomicAdd(a.evals, cand_evals);
    if (threadIdx.x == 0)
        atomicAdd(a.rounds, (unsigned long long)rounds);
}
