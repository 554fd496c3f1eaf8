/* spatial.h - what the spatial indexes share, written once for GPU kernels
 * and CPU code: squared distances rounded one operation at a time, the
 * distance from a point to a box rounded the same way, and Morton codes.
 *
 * Exactness of pruning rests on this file: distances are (p - q)^2 in
 * float32, x then y then z, every operation rounded on its own (no FMA
 * contraction: the __f*_rn intrinsics on the GPU, -ffp-contract=off on the
 * CPU), and a box's distance takes the same operations on its nearest
 * faces. Rounding is monotone, so no point of a box is nearer than the box's
 * rounded distance: a box at distance >= D holds no point nearer than D. */
#ifndef PCB_SPATIAL_H
#define PCB_SPATIAL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define SP_FN __host__ __device__ __forceinline__
#else
#define SP_FN static inline
#endif

enum { SP_BITS = 21 }; /* Morton bits an axis at most: 63-bit codes */

/* Rounded one operation at a time, on both sides. */
#ifdef __CUDA_ARCH__
#define SP_SUB(a, b) __fsub_rn(a, b)
#define SP_ADD(a, b) __fadd_rn(a, b)
#define SP_MUL(a, b) __fmul_rn(a, b)
#else
#define SP_SUB(a, b) ((a) - (b))
#define SP_ADD(a, b) ((a) + (b))
#define SP_MUL(a, b) ((a) * (b))
#endif

/* A float's bits and back (ordered like the value for floats >= 0). */
SP_FN uint32_t sp_float_bits(float v)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(v);
#else
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u;
#endif
}

SP_FN float sp_bits_float(uint32_t u)
{
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float v;
    memcpy(&v, &u, sizeof v);
    return v;
#endif
}

/* A double's bits and back (ordered like the value for doubles >= 0). */
SP_FN uint64_t sp_double_bits(double v)
{
#ifdef __CUDA_ARCH__
    return (uint64_t)__double_as_longlong(v);
#else
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
#endif
}

SP_FN double sp_bits_double(uint64_t u)
{
#ifdef __CUDA_ARCH__
    return __longlong_as_double((long long)u);
#else
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
#endif
}

SP_FN float sp_d2(float dx, float dy, float dz)
{
    return SP_ADD(SP_ADD(SP_MUL(dx, dx), SP_MUL(dy, dy)), SP_MUL(dz, dz));
}

/* Per axis: lo - q if q is below the box, q - hi if above, else 0 (the two
 * are never both positive); an empty box (lo +inf, hi -inf) is +inf away. */
SP_FN float sp_gap(float lo, float hi, float q)
{
    float a = SP_SUB(lo, q), b = SP_SUB(q, hi);
    a = a > b ? a : b;
    return a > 0.0f ? a : 0.0f;
}

SP_FN float sp_box_d2(const float *lo, const float *hi, float qx, float qy, float qz)
{
    return sp_d2(sp_gap(lo[0], hi[0], qx), sp_gap(lo[1], hi[1], qy), sp_gap(lo[2], hi[2], qz));
}

/* Spread the low 21 bits of v to every third bit. */
SP_FN uint64_t sp_spread(uint64_t v)
{
    v &= 0x1fffff;
    v = (v | v << 32) & 0x1f00000000ffffULL;
    v = (v | v << 16) & 0x1f0000ff0000ffULL;
    v = (v | v << 8) & 0x100f00f00f00f00fULL;
    v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
    v = (v | v << 2) & 0x1249249249249249ULL;
    return v;
}

/* frame = (lo x, lo y, lo z, scale): scale = (2^21 - 1) / the widest extent
 * of the cloud (0 when it is a single point). Positions outside are
 * clamped. Only the order matters: `bits` an axis (<= 21), so a code has
 * 3 * bits bits; fewer bits make a shorter sort of coarser cells. */
SP_FN uint64_t sp_morton(const float *frame, float x, float y, float z, int bits)
{
    const float top = (float)((1 << SP_BITS) - 1);
    float u[3] = {(x - frame[0]) * frame[3], (y - frame[1]) * frame[3], (z - frame[2]) * frame[3]};
    uint64_t c[3];
    for (int d = 0; d < 3; d++)
        c[d] = (uint64_t)(u[d] > 0.0f ? (u[d] < top ? u[d] : top) : 0.0f) >> (SP_BITS - bits);
    return sp_spread(c[0]) << 2 | sp_spread(c[1]) << 1 | sp_spread(c[2]);
}

/* sp_spread for the low 10 bits, in 32-bit arithmetic. */
SP_FN uint32_t sp_spread10(uint32_t v)
{
    v &= 0x3ff;
    v = (v | v << 16) & 0x030000ffu;
    v = (v | v << 8) & 0x0300f00fu;
    v = (v | v << 4) & 0x030c30c3u;
    v = (v | v << 2) & 0x09249249u;
    return v;
}

/* sp_morton's code for bits <= 10, in 32-bit arithmetic: on a GPU each
 * 64-bit shift and float-to-64-bit conversion is several instructions.
 * Written out beside sp_morton: a clamp helper shared by both changed the
 * GPU code of every kernel using them, 1-2% slower (H100). */
SP_FN uint32_t sp_morton32(const float *frame, float x, float y, float z, int bits)
{
    const float top = (float)((1 << SP_BITS) - 1);
    float u[3] = {(x - frame[0]) * frame[3], (y - frame[1]) * frame[3], (z - frame[2]) * frame[3]};
    uint32_t c[3];
    for (int d = 0; d < 3; d++)
        c[d] = (uint32_t)(u[d] > 0.0f ? (u[d] < top ? u[d] : top) : 0.0f) >> (SP_BITS - bits);
    return sp_spread10(c[0]) << 2 | sp_spread10(c[1]) << 1 | sp_spread10(c[2]);
}

/* The Hilbert index of cell (c0, c1, c2), bits <= 10 an axis: consecutive
 * indexes are adjacent cells, so a run of consecutive points has a compact
 * box (a Morton run that crosses a high bit of the code spans half the
 * cloud). Skilling's transform (AIP Conf. Proc. 707, 2004) to the
 * transposed index, whose bits interleave as Morton's do. */
SP_FN uint32_t sp_hilbert_cells(uint32_t c0, uint32_t c1, uint32_t c2, int bits)
{
    for (uint32_t q = 1u << (bits - 1); q > 1; q >>= 1) {
        const uint32_t p = q - 1;
        c0 ^= c0 & q ? p : 0u;
        uint32_t t = c1 & q ? 0u : (c0 ^ c1) & p;
        c0 ^= c1 & q ? p : t;
        c1 ^= t;
        t = c2 & q ? 0u : (c0 ^ c2) & p;
        c0 ^= c2 & q ? p : t;
        c2 ^= t;
    }
    c1 ^= c0;
    c2 ^= c1;
    uint32_t t = 0;
    for (uint32_t q = 1u << (bits - 1); q > 1; q >>= 1)
        t ^= c2 & q ? q - 1 : 0u;
    return sp_spread10(c0 ^ t) << 2 | sp_spread10(c1 ^ t) << 1 | sp_spread10(c2 ^ t);
}

/* sp_morton32's cells in Hilbert order (the cells written out as there, for the same reason). */
SP_FN uint32_t sp_hilbert32(const float *frame, float x, float y, float z, int bits)
{
    const float top = (float)((1 << SP_BITS) - 1);
    float u[3] = {(x - frame[0]) * frame[3], (y - frame[1]) * frame[3], (z - frame[2]) * frame[3]};
    uint32_t c[3];
    for (int d = 0; d < 3; d++)
        c[d] = (uint32_t)(u[d] > 0.0f ? (u[d] < top ? u[d] : top) : 0.0f) >> (SP_BITS - bits);
    return sp_hilbert_cells(c[0], c[1], c[2], bits);
}

#endif
