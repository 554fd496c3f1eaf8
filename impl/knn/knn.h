/* knn.h - k nearest neighbours: the answer's contract and what the
 * implementations share.
 *
 * A row a query: its min(k, n) nearest reference points by the float32
 * squared distance (q - p)^2 (nn.h's pcb_nn_d2, x then y then z, rounded
 * one operation at a time), ascending, equal distances by increasing index:
 * the canonical row, which naive, omp, kdtree and the CUDA implementations
 * return element for element. Past min(k, n) the row is padding that no
 * point can be mistaken for: index PCB_KNN_PAD (-1), distance +inf.
 * FLANN and nanoflann order ties their own way: exact, not canonical.
 *
 * Every implementation keeps a row as a sorted list, fills it with padding
 * first and offers it every candidate: padding is then what is left where
 * the reference ran out of points. */
#ifndef PCB_KNN_H
#define PCB_KNN_H

#include <math.h>

#include "impl/nn/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* (e, j) comes before (d, i): nearer, or as near with a lower index; the
 * padding's index -1 read unsigned is above every index, so a real point
 * always comes before padding. */
static inline int pcb_knn_before(float e, int32_t j, float d, int32_t i)
{
    return e < d || (e == d && (uint32_t)j < (uint32_t)i);
}

/* A row of k entries, all padding. */
static inline void pcb_knn_row_clear(float *d, int32_t *id, int64_t k)
{
    for (int64_t s = 0; s < k; s++)
        d[s] = INFINITY, id[s] = PCB_KNN_PAD;
}

/* Offer candidate (e, j) to a row kept sorted in its first len entries
 * (len = min(k, n)): it takes its place if it comes before the last. */
static inline void pcb_knn_offer(float *d, int32_t *id, int64_t len, float e, int32_t j)
{
    if (!pcb_knn_before(e, j, d[len - 1], id[len - 1]))
        return;
    int64_t p = len - 1;
    for (; p > 0 && pcb_knn_before(e, j, d[p - 1], id[p - 1]); p--)
        d[p] = d[p - 1], id[p] = id[p - 1];
    d[p] = e, id[p] = j;
}

/* Validation (knn_validate.c): the float32 tie band of nn.h. A returned
 * point may be up to PCB_NN_REL_TOL (relative) beyond the true k-th
 * distance; a point whose distance is below the k-th by more than that
 * must be present. */

/* The rows of a CPU implementation: the task and the answer, built in
 * prepare (nn.h's coordinate limit checked), filled by compute, copied out
 * by fetch. Every CPU implementation's state starts with one. */
typedef struct {
    pcb_task task;
    int32_t *idx; /* batch * nq * k */
    float *dist2;
} pcb_knn_rows;

int pcb_knn_rows_init(pcb_knn_rows *r, const pcb_task *t, const char *impl);
void pcb_knn_rows_free(pcb_knn_rows *r);
/* fetch for a state that starts with its rows. */
int pcb_knn_rows_fetch(void *state, pcb_result *out);

/* Brute force over queries [first, last) of the flattened batch (query
 * b * nq + i): every reference point offered in increasing index. */
void pcb_knn_scan(const pcb_task *t, int64_t first, int64_t last, int32_t *idx, float *dist2);

/* The double-precision oracle (nn_validate.c's tree): for every query the
 * squared distances of its min(k, n) nearest reference points, ascending;
 * batch * nq * min(k, n) entries. */
int pcb_knn_oracle(const pcb_task *t, double *d2);

#ifdef __cplusplus
}
#endif
#endif
