/* fps_bucket.h - the layout and arithmetic that the pruned FPS
 * implementations share (CPU `pruned`, GPU `cuda_pruned`), written once for
 * both compilers.
 *
 * Layout of a cloud: points sorted by a 30-bit Morton code (10 bits an axis
 * in the cloud's own bounding cube; ties keep index order), cut into
 * buckets of FPS_BUCKET consecutive slots; the last bucket is padded with
 * copies of the last sorted point (same coordinates, same index: a copy's
 * running minimum is always its original's, so it never changes an answer).
 * Buckets are grouped by consecutive runs. Each bucket and group keeps its
 * bounding box and the key of its farthest point.
 *
 * A key orders candidates canonically in one unsigned compare: the running
 * minimum's bits above (non-negative floats order like their bits), the
 * complement of the index below (the lower index wins a tie).
 *
 * Why skipping is exact: a sample q lowers a point's running minimum only
 * if d(p, q) < that minimum. The rounded box distance from q is <= d(p, q)
 * for every p inside (../spatial.h), so a box whose distance is >= its
 * largest minimum holds no point that q can change. */
#ifndef PCB_FPS_BUCKET_H
#define PCB_FPS_BUCKET_H

#include <stdint.h>
#include <string.h>

#include "impl/spatial.h"

enum {
    FPS_BUCKET = 32,    /* slots a bucket: a warp on the GPU, SIMD lanes on the CPU */
    FPS_MORTON_BITS = 10 /* an axis: 1024 cells along the widest side are plenty */
};

/* d >= 0 (a running minimum, possibly +inf); idx a point's index. */
SP_FN uint64_t fps_key(float d, uint32_t idx)
{
    return (uint64_t)sp_float_bits(d) << 32 | (uint32_t)~idx;
}

SP_FN float fps_key_dist(uint64_t key)
{
    return sp_bits_float((uint32_t)(key >> 32));
}

SP_FN uint32_t fps_key_index(uint64_t key)
{
    return ~(uint32_t)key;
}

/* The point's squared distance to q, rounded as pcb_fps_d2 rounds it. */
SP_FN float fps_dist(float px, float py, float pz, float qx, float qy, float qz)
{
    return sp_d2(SP_SUB(px, qx), SP_SUB(py, qy), SP_SUB(pz, qz));
}

/* Morton frame of one cloud: (lo x, y, z, scale); see sp_morton. */
SP_FN void fps_frame(const float *lo, const float *hi, float *frame)
{
    float ext = 0.0f;
    for (int d = 0; d < 3; d++) {
        float e = hi[d] - lo[d];
        ext = e > ext ? e : ext;
        frame[d] = lo[d];
    }
    frame[3] = ext > 0.0f ? (float)((1 << SP_BITS) - 1) / ext : 0.0f;
}

#endif
