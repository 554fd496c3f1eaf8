/* fps.h - farthest point sampling: semantics, validator, shared helpers.
 *
 * Given n points, m <= n and a start index s: the first sample is s; each next
 * sample is the point whose minimum squared Euclidean distance (float32) to
 * the samples chosen so far is largest, ties to the lowest index. Every cloud
 * of a batch is sampled independently. */
#ifndef PCB_FPS_H
#define PCB_FPS_H

#include "../pcbench_impl.h"

/* Squared distance in float32, written once so every CPU implementation
 * rounds identically (the library is built with -ffp-contract=off). */
static inline float pcb_fps_d2(const float *p, const float *q)
{
    float dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
    return dx * dx + dy * dy + dz * dz;
}

/* The canonical order of candidates: larger distance first, then lower index. */
static inline int pcb_fps_better(float d, int32_t i, float best_d, int32_t best_i)
{
    return d > best_d || (d == best_d && i < best_i);
}

#endif
