/* ball.h - ball query: the answer's contract and what the implementations
 * share.
 *
 * A point is inside the ball of a centre when its float32 squared distance
 * (q - p)^2 (nn.h's pcb_nn_d2, rounded one operation at a time) is below
 * r2 = pcb_ball_r2(radius), the strict test of PointNet++ and PyTorch3D.
 * Two selections of at most k inside points a centre:
 *   FIRST   - the inside points of lowest index, in increasing index (the
 *             PointNet++ contract: what pointnet2_ops, PyTorch3D, mmcv and
 *             torch_cluster's GPU radius return);
 *   NEAREST - the nearest inside points, ascending, ties to the lower index
 *             (the kNN row restricted to the ball: FRNN's, Open3D's hybrid).
 * The row then holds padding, index -1 and distance +inf (an empty ball is
 * a row of padding), and count says how many entries it holds. Both rows are
 * canonical: naive, omp and the CUDA implementations return them element
 * for element; FLANN and nanoflann order ties their own way. */
#ifndef PCB_BALL_H
#define PCB_BALL_H

#include "impl/knn/knn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The rows of a CPU implementation (built in prepare, filled by compute,
 * copied out by fetch); every CPU implementation's state starts with one. */
typedef struct {
    pcb_task task;
    int32_t *idx; /* batch * nq * k */
    float *dist2;
    int32_t *count; /* batch * nq */
} pcb_ball_rows;

int pcb_ball_rows_init(pcb_ball_rows *r, const pcb_task *t, const char *impl);
void pcb_ball_rows_free(pcb_ball_rows *r);
int pcb_ball_rows_fetch(void *state, pcb_result *out);

/* Brute force over centres [first, last) of the flattened batch: every
 * point visited in increasing index; FIRST stops at the k-th inside one. */
void pcb_ball_scan(const pcb_task *t, int64_t first, int64_t last, int32_t *idx, float *dist2,
                   int32_t *count);

/* A row from len inside candidates in any order (the tree searches), each
 * offered to a row kept in the selection's order (FIRST by index, NEAREST by
 * distance then index), then padded; returns the count. */
int32_t pcb_ball_row_from(const pcb_task *t, const float *cand_d2, const int32_t *cand_id, int64_t len,
                          int32_t *idx, float *dist2);

#ifdef __cplusplus
}
#endif
#endif
