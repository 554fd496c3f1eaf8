/* nn.h - nearest neighbour between two clouds: semantics and shared helpers.
 *
 * For every query point: the index of its nearest reference point by
 * Euclidean distance and the squared distance (float32). Any index at the
 * minimal distance is correct. Pairs of a batch are independent. */
#ifndef PCB_NN_H
#define PCB_NN_H

#include <math.h>

#include "impl/pcbench_impl.h"

/* (q - p)^2 computed directly: the |a|^2+|b|^2-2ab form loses everything at
 * lidar offsets. */
static inline float pcb_nn_d2(const float *p, const float *q)
{
    float dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
    return dx * dx + dy * dy + dz * dz;
}

/* Beyond this magnitude a float32 squared distance can overflow to infinity
 * (3 * (2e18)^2 = 1.2e37 < FLT_MAX = 3.4e38), and every point would tie. */
#define PCB_NN_MAX_COORD 1e18

/* PCB_EUNSUPPORTED when a coordinate of either cloud is beyond
 * PCB_NN_MAX_COORD; every float32 implementation calls it in prepare. */
static inline int pcb_nn_coords_fit(const pcb_task *t, const char *impl)
{
    const float *cloud[2] = {t->a, t->b};
    int64_t count[2] = {t->batch * t->n * 3, t->batch * t->nq * 3};
    for (int c = 0; c < 2; c++) {
        if (!((double)pcb_max_abs(cloud[c], (size_t)count[c], NULL) > PCB_NN_MAX_COORD))
            continue;
        for (int64_t i = 0; i < count[c]; i++) /* the first one, for the message */
            if (!(fabs((double)cloud[c][i]) <= PCB_NN_MAX_COORD))
                return pcb_fail(PCB_EUNSUPPORTED,
                                "nn %s: %s coordinate %g beyond +-%g (float32 squared "
                                "distances would overflow)",
                                impl, c ? "query" : "reference", (double)cloud[c][i],
                                PCB_NN_MAX_COORD);
    }
    return PCB_OK;
}

/* Validation tolerance (nn_validate.c). A returned point at double-precision
 * squared distance d is accepted for a query whose true nearest squared
 * distance is t when d <= t * (1 + PCB_NN_REL_TOL) + PCB_NN_ABS_TOL.
 * REL: 2^-18, 64 float32 ulps; a float32 squared distance carries at most
 * about 5 ulps of rounding, so comparing two of them can prefer a point up
 * to ~10 ulps farther. ABS: squared differences below FLT_MIN lose their
 * precision or flush to zero on GPUs; 1e-36 covers three such terms. The
 * returned dist2 must match d within the same tolerance. */
#define PCB_NN_REL_TOL 3.814697265625e-06
#define PCB_NN_ABS_TOL 1e-36

/* The double-precision oracle of the validator: for every query of the
 * task, the squared distance to its true nearest reference point and one
 * index at that distance (exact k-d tree search in double, OpenMP over
 * queries). d2 and idx have batch * nq entries; idx may be NULL. */
int pcb_nn_oracle(const pcb_task *t, double *d2, int32_t *idx);

#endif
