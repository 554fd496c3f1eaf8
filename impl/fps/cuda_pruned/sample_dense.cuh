/* cuda_pruned/sample_dense.cuh - small clouds in fps_cuda_pruned.cu
 * (fps_sample_dense): dp on one block a cloud, the points in registers,
 * one barrier a step. */
#pragma once

/* dp on one block of DENSE_WARPS warps: point i = slot * DENSE_THREADS + tid,
 * K slots a thread, also kept in shared memory (structure of arrays) to read
 * each new sample from. Every step a thread updates its K minima, all
 * independent, and finds its farthest by a tree over its slots (a higher
 * slot wins only when strictly farther: the lowest index among ties); a
 * warp takes the largest distance bits (non-negative floats order as their
 * bits) and, among the lanes that hold it, the lowest index, one redux
 * instruction each; the warps' winners meet in shared memory, double
 * buffered, so one barrier a step, and a tree over the four posts names
 * the block's. A step is a chain of dependent instructions, so it is
 * written twice, for even and odd steps, with its buffer a constant: no
 * address arithmetic in the chain. Distances round as dp's (sp_d2: no
 * FMA). The result is pcb_fps_better's order, dp's sequence. */
enum { DENSE_WARPS = 4, DENSE_THREADS = DENSE_WARPS * 32 };

/* Whether post (key, index) a is the farther: larger distance bits, then the
 * lower index. */
__device__ __forceinline__ bool dense_farther(unsigned ka, unsigned ia, unsigned kb, unsigned ib)
{
    return ka > kb || (ka == kb && ia < ib);
}

template <int K>
__global__ void __launch_bounds__(DENSE_THREADS) fps_sample_dense(const float *xyz, int n, int m,
                                                                  int start, int32_t *out,
                                                                  unsigned long long *counts)
{
    static_assert(DENSE_WARPS == 4, "a tree over four posts");
    __shared__ float sx[K * DENSE_THREADS], sy[K * DENSE_THREADS], sz[K * DENSE_THREADS];
    __shared__ unsigned wkey[2][DENSE_WARPS], widx[2][DENSE_WARPS]; /* each warp's farthest */
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const float *cloud = xyz + (size_t)blockIdx.x * (size_t)n * 3;
    int32_t *picks = out + (size_t)blockIdx.x * (size_t)m;
    float px[K], py[K], pz[K], md[K];
#pragma unroll
    for (int k = 0; k < K; k++) {
        const int i = k * DENSE_THREADS + tid;
        const bool in = i < n;
        px[k] = in ? cloud[3 * i] : 0.0f;
        py[k] = in ? cloud[3 * i + 1] : 0.0f;
        pz[k] = in ? cloud[3 * i + 2] : 0.0f;
        sx[i] = px[k], sy[i] = py[k], sz[i] = pz[k];
        /* +inf; padding -1 stays -1 (no distance is below it): never farthest */
        md[k] = in ? __int_as_float(0x7f800000) : -1.0f;
    }
    __syncthreads();
    int last = start;
    if (tid == 0)
        picks[0] = last;
    /* step j posts into buffer j & 1, a constant in each of the loop's two
     * copies (no address arithmetic in the chain) */
    const auto step = [&](auto parity, int j) {
        constexpr int buf = decltype(parity)::value;
        const float qx = sx[last], qy = sy[last], qz = sz[last];
        float v[K];
        int at[K];
#pragma unroll
        for (int k = 0; k < K; k++) {
            const float d = sp_d2(SP_SUB(px[k], qx), SP_SUB(py[k], qy), SP_SUB(pz[k], qz));
            md[k] = d < md[k] ? d : md[k];
            v[k] = md[k];
            at[k] = k;
        }
#pragma unroll
        for (int w = 1; w < K; w *= 2)
#pragma unroll
            for (int k = 0; k + w < K; k += 2 * w)
                if (v[k + w] > v[k]) {
                    v[k] = v[k + w];
                    at[k] = at[k + w];
                }
        /* padding (-1) keys 0 with no index; a real 0 keys 0 too and wins */
        const unsigned key = v[0] >= 0.0f ? __float_as_uint(v[0]) : 0u;
        const unsigned idx = v[0] >= 0.0f ? (unsigned)(at[0] * DENSE_THREADS + tid) : 0xffffffffu;
        const unsigned top = __reduce_max_sync(0xffffffffu, key);
        const unsigned low = __reduce_min_sync(0xffffffffu, key == top ? idx : 0xffffffffu);
        if (lane == 0)
            wkey[buf][warp] = top, widx[buf][warp] = low;
        __syncthreads();
        /* the block's farthest: a tree over the four posts */
        const unsigned k0 = wkey[buf][0], k1 = wkey[buf][1], k2 = wkey[buf][2], k3 = wkey[buf][3];
        const unsigned i0 = widx[buf][0], i1 = widx[buf][1], i2 = widx[buf][2], i3 = widx[buf][3];
        const bool s1 = dense_farther(k1, i1, k0, i0), s3 = dense_farther(k3, i3, k2, i2);
        const unsigned ka = s1 ? k1 : k0, ia = s1 ? i1 : i0;
        const unsigned kb = s3 ? k3 : k2, ib = s3 ? i3 : i2;
        last = (int)(dense_farther(kb, ib, ka, ia) ? ib : ia);
        if (tid == 0)
            picks[j] = last;
    };
    for (int j = 1; j < m; j += 2) {
        step(std::integral_constant<int, 1>(), j);
        if (j + 1 < m)
            step(std::integral_constant<int, 0>(), j + 1);
    }
    if (tid == 0) {
        atomicAdd(counts, (unsigned long long)n * (unsigned long long)(m - 1));
        atomicAdd(counts + 1, (unsigned long long)(m - 1));
    }
}
