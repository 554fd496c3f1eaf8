/* cuda_pruned/rounds.cuh - step 2 of fps_cuda_pruned.cu, the owners' part of
 * a round (fps_rounds.h): a round's samples applied to the buckets they can
 * reach (update_buckets, update_group), the points above the round's
 * thresholds gathered as candidates (gather_group), and the state the
 * taking block hands every warp from one round to the next (round_state,
 * publish / wait_published where a block only takes). Both samplers
 * (sample_buckets.cuh, sample_runs.cuh) are built on it. */
#pragma once

/* The largest key among the warp's lanes, and the lowest lane holding it. */
__device__ __forceinline__ unsigned long long warp_max_key(unsigned long long key, int *lane)
{
    const unsigned hi = (unsigned)(key >> 32), lo = (unsigned)key;
    const unsigned top = __reduce_max_sync(0xffffffffu, hi);
    const unsigned low = __reduce_max_sync(0xffffffffu, hi == top ? lo : 0u);
    *lane = __ffs(__ballot_sync(0xffffffffu, hi == top && lo == low)) - 1;
    return (unsigned long long)top << 32 | low;
}

__device__ __forceinline__ float box_dist(const float4 *box, float qx, float qy, float qz)
{
    const float4 lo = box[0], hi = box[1];
    const float l[3] = {lo.x, lo.y, lo.z}, h[3] = {hi.x, hi.y, hi.z};
    return sp_box_d2(l, h, qx, qy, qz);
}

/* The union of the lanes' boxes (lo, hi), in every lane; an empty box
 * (+inf, -inf) changes nothing. */
__device__ __forceinline__ void warp_box(float *lo, float *hi)
{
    for (int o = 16; o > 0; o >>= 1)
        for (int d = 0; d < 3; d++) {
            lo[d] = fminf(lo[d], __shfl_xor_sync(0xffffffffu, lo[d], o));
            hi[d] = fmaxf(hi[d], __shfl_xor_sync(0xffffffffu, hi[d], o));
        }
}

/* Up to BATCH buckets (b[u] < 0: none), every lane one slot of each: all
 * loads first, so their latencies overlap; then each bucket's new key and
 * farthest point (written by lane 0). */
__device__ __forceinline__ void update_buckets(const float4 *pts, float *mind, float4 *bbest,
                                               unsigned long long *bkey, const int *b, float qx,
                                               float qy, float qz)
{
    const int lane = threadIdx.x & 31;
    float4 p[BATCH];
    float v[BATCH];
#pragma unroll
    for (int u = 0; u < BATCH; u++)
        if (b[u] >= 0) {
            p[u] = pts[b[u] * FPS_BUCKET + lane];
            v[u] = mind[b[u] * FPS_BUCKET + lane];
        }
#pragma unroll
    for (int u = 0; u < BATCH; u++)
        if (b[u] >= 0) {
            const float d = fps_dist(p[u].x, p[u].y, p[u].z, qx, qy, qz);
            if (d < v[u]) {
                v[u] = d;
                mind[b[u] * FPS_BUCKET + lane] = d;
            }
            int win;
            const unsigned long long key =
                warp_max_key(fps_key(v[u], __float_as_uint(p[u].w)), &win);
            const float bx = __shfl_sync(0xffffffffu, p[u].x, win),
                        by = __shfl_sync(0xffffffffu, p[u].y, win),
                        bz = __shfl_sync(0xffffffffu, p[u].z, win);
            if (lane == 0) {
                bkey[b[u]] = key;
                bbest[b[u]] = make_float4(bx, by, bz, 0.0f);
            }
        }
}

/* Carve n bytes (16-aligned) off the shared-memory cursor. */
__device__ __forceinline__ void *carve(char **cursor, size_t bytes)
{
    void *p = *cursor;
    *cursor += (bytes + 15) & ~(size_t)15;
    return p;
}

/* The cloud's arrays as the sampler sees them, in shared or global memory. */
struct cloud {
    float4 *pts;  /* slots: x, y, z, index bits */
    float *mind;  /* slots */
    float4 *bbox, *bbest, *gbox, *gbest;
    unsigned long long *bkey, *gkey;
    int n, buckets, groups, group_size;
};

/* What the taking block hands every warp from one round to the next
 * (written between a round's two barriers, read after the second), and its
 * candidates: a list a row (fps_round_row), FPS_ROUND_CAP each, row 0
 * first; the round's list is row 0 with the other rows it takes moved up
 * behind it. The rows' counts alternate by the round's parity, so that the
 * coordinator clears the next round's while this round's are still read. */
struct round_state {
    float4 q[FPS_ROUND_CAP + 1]; /* the samples to apply: x, y, z, index bits */
    float4 cand[FPS_ROUND_CLASSES * FPS_ROUND_CAP]; /* candidates: x, y, z, index bits */
    unsigned long long cand_key[FPS_ROUND_CLASSES * FPS_ROUND_CAP]; /* keys (waves lower them) */
    int held[FPS_ROUND_CAP];     /* the first wave: 1 where another candidate holds it */
    /* the waves' lists by index (take_waves), their lengths by the wave's
     * parity: undecided in the low 16 bits of n_decided, picks above */
    int undecided[FPS_ROUND_CAP], left[FPS_ROUND_CAP];
    int n_decided[2], n_left[2];
    unsigned long long pick_key[FPS_ROUND_CAP]; /* the samples' keys, to order the output */
    int row_count[2][FPS_ROUND_CLASSES];
    float tau[FPS_ROUND_CLASSES]; /* the round's thresholds, loosest first */
    int q_count, done;
    int picks_from, picks_to; /* a taking block's: the round's places in out */
    /* The taking-block layout's handover (publish): the round's sequence
     * number, whether it is final, and how many samples of q are out. */
    unsigned pub;
};

/* The publication word: sequence (22 bits), final (1), samples (9). */
static_assert(FPS_ROUND_CAP + 1 < 512, "a round's samples in 9 bits");
__device__ __forceinline__ unsigned pub_word(unsigned seq, bool final, int count)
{
    return (seq & 0x3fffffu) << 10 | (final ? 1u << 9 : 0u) | (unsigned)count;
}
__device__ __forceinline__ bool pub_final(unsigned w)
{
    return w >> 9 & 1;
}
__device__ __forceinline__ int pub_count(unsigned w)
{
    return (int)(w & 511);
}

/* Every lane of the taking block's coordinating warp: what this block
 * wrote before the last block barrier (q, and the round's state) is
 * released to the cluster, then the word goes into owner blocks 1 .. ctas
 * - 1 (a barrier and a fence make the release cover the other warps'
 * stores). */
__device__ __forceinline__ void publish(round_state *r, int ctas, unsigned word)
{
    const int lane = threadIdx.x & 31;
    asm volatile("fence.acq_rel.cluster;" ::: "memory");
    if (lane >= 1 && lane < ctas) {
        unsigned *to = &cg::this_cluster().map_shared_rank(r, lane)->pub;
        asm volatile("st.relaxed.cluster.b32 [%0], %1;" ::"l"(to), "r"(word) : "memory");
    }
}

/* Every lane of an owner warp: waits for round seq's samples past the first
 * `applied` (FPS_ROUND_CAP + 1: none, only its final word), or its final
 * word, and returns the word; what the taking block wrote before it is
 * visible to the whole warp. */
__device__ __forceinline__ unsigned wait_published(const unsigned *pub, unsigned seq, int applied)
{
    const unsigned at = (unsigned)__cvta_generic_to_shared(pub);
    unsigned w;
    do /* plain shared-memory loads, then one that acquires */
        asm volatile("ld.relaxed.cluster.shared::cta.b32 %0, [%1];" : "=r"(w) : "r"(at) : "memory");
    while (w >> 10 != (seq & 0x3fffffu) || (!pub_final(w) && pub_count(w) <= applied));
    asm volatile("ld.acquire.cluster.shared::cta.b32 %0, [%1];" : "=r"(w) : "r"(at) : "memory");
    __syncwarp();
    return w;
}

__device__ __forceinline__ void round_barrier(int ctas)
{
    if (ctas > 1)
        cg::this_cluster().sync(); /* release and acquire: shared memory across blocks */
    else
        __syncthreads();
}

/* p, a variable in this block's shared memory, in block rank's. */
template <typename T> __device__ __forceinline__ T *in_block(T *p, int ctas, int rank)
{
    return ctas > 1 ? cg::this_cluster().map_shared_rank(p, rank) : p;
}

/* Applies samples q[0 .. count) to group g: lanes test the samples against
 * the group's box; for each sample that reaches it, lanes test the group's
 * buckets (a lane each, against the bucket's key as the round began: the
 * samples come in the order they were picked, and this way what is
 * computed does not depend on it) and reached buckets update their 32
 * minima. Returns the group's key, recomputed when a sample reached the
 * group. */
__device__ unsigned long long update_group(const cloud &c, int g, const float4 *q, int count,
                                           unsigned long long *evals)
{
    const int lane = threadIdx.x & 31;
    const int first = g * c.group_size, nb = min(c.group_size, c.buckets - first), b = first + lane;
    const unsigned long long gk = c.gkey[g];
    const float gval = fps_key_dist(gk);
    bool touched = false;
    float4 lo = make_float4(0, 0, 0, 0), hi = lo; /* the lane's bucket */
    float bval = -1.0f;
    for (int s0 = 0; s0 < count; s0 += 32) {
        const int s = s0 + lane;
        const float4 p = q[s < count ? s : 0];
        unsigned hits = __ballot_sync(0xffffffffu, s < count && box_dist(c.gbox + 2 * g, p.x, p.y,
                                                                         p.z) < gval);
        if (hits && !touched) {
            touched = true;
            if (lane < nb) {
                lo = c.bbox[2 * b], hi = c.bbox[2 * b + 1];
                bval = fps_key_dist(c.bkey[b]);
            }
        }
        while (hits) {
            const int k = __ffs(hits) - 1;
            hits &= hits - 1;
            const float qx = __shfl_sync(0xffffffffu, p.x, k), qy = __shfl_sync(0xffffffffu, p.y, k),
                        qz = __shfl_sync(0xffffffffu, p.z, k);
            const float4 box[2] = {lo, hi};
            const bool reach = lane < nb && box_dist(box, qx, qy, qz) < bval;
            unsigned reached = __ballot_sync(0xffffffffu, reach);
            *evals += __popc(reached);
            while (reached) {
                int b4[BATCH];
#pragma unroll
                for (int u = 0; u < BATCH; u++) {
                    b4[u] = reached ? first + __ffs(reached) - 1 : -1;
                    reached &= reached - 1;
                }
                update_buckets(c.pts, c.mind, c.bbest, c.bkey, b4, qx, qy, qz);
            }
            __syncwarp();
        }
    }
    if (!touched)
        return gk;
    int win;
    const unsigned long long top = warp_max_key(lane < nb ? c.bkey[b] : 0ull, &win);
    if (lane == 0) {
        c.gkey[g] = top;
        c.gbest[g] = c.bbest[first + win];
    }
    return top;
}

/* Appends group g's points above the loosest threshold to their rows'
 * candidate lists (fps_round_row; slot order within a bucket, buckets race
 * for their places, which does not matter: the waves are order-free), lane
 * k counting row k's in with one atomic. Once row 0 has overflowed, the
 * round takes the farthest point alone: the gathering stops. Padding slots
 * are left out: their originals are in. */
__device__ void gather_group(const cloud &c, int g, const float *tau, int *row_count,
                             round_state *r)
{
    const int lane = threadIdx.x & 31;
    const int first = g * c.group_size, nb = min(c.group_size, c.buckets - first);
    unsigned above =
        __ballot_sync(0xffffffffu, lane < nb && fps_key_dist(c.bkey[first + lane]) > tau[0]);
    while (above && __shfl_sync(0xffffffffu, row_count[0], 0) <= FPS_ROUND_CAP) {
        const int slot = (first + __ffs(above) - 1) * FPS_BUCKET + lane;
        above &= above - 1;
        const float v = c.mind[slot];
        const int row = slot < c.n ? fps_round_row(v, tau) : FPS_ROUND_CLASSES;
        /* lane k counts row k's in */
        unsigned ours = 0, mine = 0;
#pragma unroll
        for (int k = 0; k < FPS_ROUND_CLASSES; k++) {
            const unsigned in_row = __ballot_sync(0xffffffffu, row == k);
            ours = lane == k ? in_row : ours;
            mine = row == k ? in_row : mine;
        }
        int base = 0;
        if (ours)
            base = atomicAdd(&row_count[lane], __popc(ours));
        const int at = __shfl_sync(0xffffffffu, base, row & 31) + __popc(mine & ((1u << lane) - 1));
        if (row < FPS_ROUND_CLASSES && at < FPS_ROUND_CAP) {
            r->cand[row * FPS_ROUND_CAP + at] = c.pts[slot];
            r->cand_key[row * FPS_ROUND_CAP + at] = fps_key(v, __float_as_uint(c.pts[slot].w));
        }
    }
}
