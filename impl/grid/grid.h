/* grid.h - grid sampling (voxel downsampling): the answer's contract and
 * what the implementations share.
 *
 * A point p of a cloud lies in voxel (ix, iy, iz), each floor(((double)p -
 * origin) / cell) of its axis, computed in double precision: one IEEE
 * subtraction and one division, correctly rounded on every CPU and GPU, so
 * every implementation and the validator put a point on a voxel boundary in
 * the same voxel (the rule: the double quotient's floor). The origin is the
 * task's (origin_given) or the cloud's minimum per axis, a float32 value,
 * exact in double; a cloud far from the origin (UTM coordinates) keeps its
 * voxels exact as long as the quotients are (below 2^53).
 *
 * The answer of a cloud of n points: its V occupied voxels sorted by ix,
 * then iy, then iz, a row each, holding the point the voxel keeps (FIRST:
 * its lowest index; NEAREST: the nearest to the voxel's centre origin + (i +
 * 0.5) cell, its squared distance in double with no fused operations, ties
 * to the lowest index; RANDOM: the least pcb_grid_draw(seed, index), no ties:
 * the draw is a bijection of the index) and its count; rows V..n-1 hold -1
 * and 0; then each
 * point's row number (the inverse map). It is unique: every implementation
 * returns it bit for bit.
 *
 * The implementations sort 64-bit keys: 19 bits an axis, counted from the
 * cloud's lowest voxel (the GPU's keep the cloud's number, up to 128 a sort,
 * in the 7 bits above), so a cloud may span at most 2^19 = 524,288 voxels
 * an axis (26 km at 5 cm, 1 km at 2 mm; PCB_EUNSUPPORTED beyond). The
 * validator compares the coordinates themselves and has no such limit. */
#ifndef PCB_GRID_H
#define PCB_GRID_H

#include <math.h>

#include "impl/pcbench_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PCB_GRID_AXIS_BITS 19
#define PCB_GRID_AXIS_SPAN ((int64_t)1 << PCB_GRID_AXIS_BITS)

#if defined(__CUDACC__)
#define PCB_GRID_FN static __host__ __device__ __forceinline__
#else
#define PCB_GRID_FN static inline
#endif

/* RANDOM's draw of point i: SplitMix64's output for the state seed + (i + 1)
 * x its odd increment, a bijection of i (so two points never tie). */
PCB_GRID_FN uint64_t pcb_grid_draw(uint64_t seed, int64_t i)
{
    uint64_t z = seed + (uint64_t)(i + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The voxel of a key, 19 bits an axis counted from the cloud's lowest voxel
 * low (the bits above them, a cloud's number, ignored). */
PCB_GRID_FN void pcb_grid_key_voxel(uint64_t key, const double low[3], double v[3])
{
    for (int k = 0; k < 3; k++)
        v[k] = low[k] + (double)((key >> (PCB_GRID_AXIS_BITS * (2 - k))) &
                                 (uint64_t)(PCB_GRID_AXIS_SPAN - 1));
}

/* MEAN's mean point of a voxel: its points' coordinates summed in double
 * in increasing index order, over the count, rounded to float32. */
PCB_GRID_FN void pcb_grid_mean_put(const double sum[3], int64_t count, float *mean)
{
    for (int k = 0; k < 3; k++)
        mean[k] = (float)(sum[k] / (double)count);
}

/* The voxel coordinate of p along an axis (an integer-valued double). */
static inline double pcb_grid_coord(float p, double origin, double cell)
{
    return floor(((double)p - origin) / cell);
}

/* The squared distance of point p to the centre of its voxel v, in double,
 * one rounded operation at a time (the build has no fused multiply-add). */
static inline double pcb_grid_d2(const float *p, const double v[3], const double origin[3],
                                 const double cell[3])
{
    double d2 = 0;
    for (int k = 0; k < 3; k++) {
        const double c = origin[k] + (v[k] + 0.5) * cell[k];
        const double d = (double)p[k] - c;
        d2 += d * d;
    }
    return d2;
}

/* The arguments grid sampling and serialization share (the face checks of
 * problem): the clouds, a finite cell > 0 an axis, a finite origin where
 * given, origin_given 0 or 1. */
int pcb_grid_check_frame(const pcb_task *t, const char *problem);

/* The origin of cloud xyz (n points): the task's where given, else its
 * minimum per axis. */
void pcb_grid_origin(const pcb_task *t, const float *xyz, int64_t n, double origin[3]);

/* The rows of a CPU implementation: index (batch * 2n), count (batch * n)
 * and, for MEAN, mean (batch * n * 3), filled by compute, copied out by
 * fetch; every CPU state starts with one. */
typedef struct {
    pcb_task task;
    int32_t *index;
    int32_t *count;
    float *mean; /* MEAN: batch * n * 3 */
} pcb_grid_rows;

int pcb_grid_rows_init(pcb_grid_rows *r, const pcb_task *t, const char *impl);
void pcb_grid_rows_free(pcb_grid_rows *r);
int pcb_grid_rows_fetch(void *state, pcb_result *out);

/* Cloud c of the task in its rows: keys, a stable sort (threads 0: the C
 * library's qsort of (key, index) pairs; 1: a radix sort; more: the
 * bounds, keys and radix sort on that many OpenMP threads), voxels;
 * scratch holds 4n 64-bit words. PCB_EUNSUPPORTED where it spans 2^19
 * voxels an axis. */
int pcb_grid_cloud(const pcb_task *t, int64_t c, int threads, uint64_t *scratch,
                   pcb_grid_rows *rows);

/* A cloud's rows from its keys sorted with their point indices (stable:
 * equal keys in increasing index), each key 19 bits an axis from the
 * cloud's lowest voxel low: each voxel's kept point and count (-1 and 0
 * past the last), each point's row (inverse) and, where mean is not NULL
 * (MEAN), each voxel's mean point (0 past the last). */
void pcb_grid_walk(const pcb_task *t, const float *xyz, int64_t n, const double origin[3],
                   const double low[3], const uint64_t *key, const int32_t *order, int32_t *rows,
                   int32_t *inverse, int32_t *counts, float *mean);

#ifdef __cplusplus
}
#endif
#endif
