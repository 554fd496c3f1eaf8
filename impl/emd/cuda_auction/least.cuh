/* cuda_auction/least.cuh - a bidder's least two c_ij + p_j by a warp: the
 * warp reductions (least value, least two, second least) and the exact
 * full scan every cache-less look falls back to (scan_least_two). */
#pragma once

/* The least of the warp's values (all >= +0, so their bits order like
 * them: two 32-bit reductions, high half then low). */
__device__ __forceinline__ double warp_min_value(double v)
{
    const unsigned long long bits = (unsigned long long)__double_as_longlong(v);
    const unsigned hi = __reduce_min_sync(0xffffffffu, (unsigned)(bits >> 32)),
                   lo = __reduce_min_sync(0xffffffffu,
                                          (unsigned)(bits >> 32) == hi ? (unsigned)bits : 0xffffffffu);
    return __longlong_as_double((long long)((unsigned long long)hi << 32 | lo));
}

/* The merge of the lanes' least two: the least (value, j), then the second
 * least of the union, which is the winning lane's second or another lane's
 * least. */
__device__ __forceinline__ pcb_ca_best warp_merge(pcb_ca_best b)
{
    pcb_ca_best r;
    r.w1 = warp_min_value(b.w1);
    r.j1 = (int32_t)__reduce_min_sync(0xffffffffu, b.w1 == r.w1 ? (unsigned)b.j1 : 0xffffffffu);
    r.w2 = warp_min_value(b.w1 == r.w1 && b.j1 == r.j1 ? b.w2 : b.w1);
    return r;
}

/* The second least of all the warp's lanes' least two, in float: an upper
 * bound on the second least the merged scan will find. */
__device__ __forceinline__ float warp_second(const pcb_ca_best &b)
{
    float m1 = (float)b.w1, m2 = (float)b.w2;
    for (int o = 16; o > 0; o >>= 1) {
        const float o1 = __shfl_xor_sync(0xffffffffu, m1, o),
                    o2 = __shfl_xor_sync(0xffffffffu, m2, o);
        m2 = fminf(fmaxf(m1, o1), fminf(m2, o2));
        m1 = fminf(m1, o1);
    }
    return m2;
}

/* The least of the warp's values, all >= +0 or infinite (v' of a slot):
 * their bits order like them, so one reduction. */
__device__ __forceinline__ float warp_min(float x)
{
    return __uint_as_float(__reduce_min_sync(0xffffffffu, __float_as_uint(x)));
}

/* The least two of c_ij + p_j over j = start, start + stride, ... (the
 * whole warp calls it with the same n and stride). Four objects per step,
 * their loads and squared distances independent of the running threshold,
 * so they overlap. Only an object that may come below the warp's second
 * least so far (a float test with a margin) gets the exact cost and double
 * sum: after steps 1, 2, 4, 8, ... the lanes share that threshold, so the
 * exact path, which a whole warp takes when one lane needs it, stays rare.
 * Values above the warp's second least cannot change the merged result. */
__device__ __forceinline__ pcb_ca_best scan(const float *ai, const pair_state &s, int n,
                                            int start, int stride)
{
    const float ax = ai[0], ay = ai[1], az = ai[2];
    pcb_ca_best b = pcb_ca_none();
    float w2f = INFINITY;
    int step = 0;
    for (int j0 = start; __any_sync(0xffffffffu, j0 < n); j0 += 4 * stride) {
        float d2[4], pf[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int j = j0 + u * stride;
            const float4 q = j < n ? s.bq[j] : make_float4(0.0f, 0.0f, 0.0f, INFINITY);
            d2[u] = pcb_ca_d2(ax, ay, az, q.x, q.y, q.z);
            pf[u] = q.w;
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const float t = w2f - pf[u];
            if (t > 0.0f && d2[u] <= t * t) { /* may come below the second least */
                const int j = j0 + u * stride;
                pcb_ca_take(&b, (double)sqrtf(d2[u]) + s.price[j], j);
                w2f = fminf(w2f, b.w2 < HUGE_VAL ? (float)b.w2 * PCB_CA_MARGIN : INFINITY);
            }
        }
        step++;
        if ((step & (step - 1)) == 0) /* a power of two */
            w2f = fminf(w2f, warp_second(b) * PCB_CA_MARGIN);
    }
    return b;
}
