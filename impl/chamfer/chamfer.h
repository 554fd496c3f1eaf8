/* chamfer.h - chamfer distance between two clouds: what the implementations
 * share.
 *
 * A chamfer answer is two nearest-neighbour answers: every point of A's
 * nearest point of B (B the reference), then every point of B's nearest
 * point of A, each with its float32 squared distance; the value of a pair
 * is computed from those distances in double. Most implementations are an
 * NN implementation run both ways (chamfer_by_nn below): the search is the
 * work, and one verified search serves both problems. */
#ifndef PCB_CHAMFER_H
#define PCB_CHAMFER_H

#include "impl/pcbench_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The NN task of one direction: forward (A's points queried against B) or
 * backward (B's against A). */
pcb_task pcb_chamfer_direction(const pcb_task *t, int backward);

/* Implementations by an NN implementation run both ways: each file defines
 * its prepare as pcb_chamfer_by_nn_prepare(&pcb_nn_<name>, ...) and takes
 * the other steps from here. */
int pcb_chamfer_by_nn_prepare(const pcb_impl *nn, const pcb_task *t, void **state);
int pcb_chamfer_by_nn_compute(void *state);
int pcb_chamfer_by_nn_sync(void *state);
int pcb_chamfer_by_nn_fetch(void *state, pcb_result *out);
void pcb_chamfer_by_nn_release(void *state);
int pcb_chamfer_by_nn_counters(void *state, pcb_counters *c);
int pcb_chamfer_by_nn_device_ms(void *state, double *ms);

/* Validation tolerance of a pair's value: the true value is the double
 * sum of exact nearest distances; every returned distance may be up to
 * PCB_NN_REL_TOL above its truth (nn.h), and the sums are rounded. */
#define PCB_CHAMFER_REL_TOL 1e-5
#define PCB_CHAMFER_ABS_TOL 1e-30

/* The truth of a chamfer task: every point's nearest squared distance in
 * double, laid out as the answer's dist2 (both directions). */
int pcb_chamfer_oracle(const pcb_task *t, double *d2);

/* A pair's value in convention c from its two directions' squared
 * distances (double; ab: n of them, ba: nq). */
double pcb_chamfer_combine(const double *ab, int64_t n, const double *ba, int64_t nq,
                           const pcb_chamfer_convention *c);

#ifdef __cplusplus
}
#endif
#endif
