/* nn.h - nearest neighbour between two clouds: semantics and shared helpers.
 *
 * For every query point: the index of its nearest reference point by
 * Euclidean distance and the squared distance (float32). Any index at the
 * minimal distance is correct. Pairs of a batch are independent. */
#ifndef PCB_NN_H
#define PCB_NN_H

#include "../pcbench.h"

/* (q - p)^2 computed directly: the |a|^2+|b|^2-2ab form loses everything at
 * lidar offsets. */
static inline float pcb_nn_d2(const float *p, const float *q)
{
    float dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
    return dx * dx + dy * dy + dz * dz;
}

#endif
