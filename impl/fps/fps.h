/* fps.h - farthest point sampling: semantics, validator, shared helpers.
 *
 * Given n points, m <= n and a start index s: the first sample is s; each next
 * sample is the point whose minimum squared Euclidean distance (float32) to
 * the samples chosen so far is largest, ties to the lowest index, among the
 * points not chosen yet: the samples are distinct whenever m <= n. Once every
 * remaining point duplicates a chosen one (the largest distance is 0), the
 * rule takes the lowest unchosen index, then the next, as the seeds' Python
 * definition (which deletes chosen points) does. Every cloud of a batch is
 * sampled independently. */
#ifndef PCB_FPS_H
#define PCB_FPS_H

#include "impl/pcbench_impl.h"

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

/* The distinct rule applied to a canonical sequence of the old rule (chosen
 * points still candidates at distance 0): there, the first step whose
 * largest distance is 0 takes index 0, the lowest of all, and every later
 * step takes 0 again, so the sequence first repeats at the second 0. From
 * that step on the distinct rule takes the unchosen indices in increasing
 * order; this writes them there. O(m) when nothing repeats, O(n + m) (and
 * n / 8 bytes of memory) when it does. */
int pcb_fps_distinct_tail(int32_t *idx, int64_t n, int64_t m);

#endif
