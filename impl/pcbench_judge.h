/* pcbench_judge.h - libpcbench for verification: the validators (double
 * precision, accepting every correct answer), the promise an answer is held
 * to, and the judge that applies every rule for one verdict.
 */
#ifndef PCBENCH_JUDGE_H
#define PCBENCH_JUDGE_H

#include "pcbench_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- validation (double precision, accepts every correct answer) ------ */
typedef struct {
    int ok;              /* 1 when the answer is correct (or, for approximate
                            implementations, within their stated tolerance) */
    char detail[256];    /* the first problem found, or a short summary */
    double recall;       /* NN: share of queries answered exactly; -1 n/a */
    double worst_ratio;  /* NN: worst returned/true distance ratio; -1 n/a */
    double gap;          /* EMD: (cost - optimum) / optimum; -1 if not computed */
    double bound;        /* EMD: certified bound (P - D) / D; -1 n/a */
    int64_t unmatched;   /* EMD: points left unmatched; FPS: samples repeating an
                            earlier one where no unchosen point is farther */
} pcb_report;

/* Validate a result against the task; exact = whether to demand an exact
 * answer. Returns PCB_OK when validation ran (see rep->ok for the verdict).
 *   FPS: implemented in impl/fps/fps_validate.c
 *   NN:  impl/nn/nn_validate.c   EMD: impl/emd/emd_validate.c */
int pcb_fps_validate(const pcb_task *t, const pcb_result *r, pcb_report *rep);
int pcb_nn_validate(const pcb_task *t, const pcb_result *r, int exact, pcb_report *rep);
/* EMD: max_gap is the relative gap to the optimum (and certified bound)
 * allowed: 0 demands the exact optimum (within 1e-9, rounding), as exact = 1
 * does; PCB_EMD_ANY_GAP a bijection only. Negative or NaN: PCB_EINVAL. */
int pcb_emd_validate(const pcb_task *t, const pcb_result *r, int exact, double max_gap,
                     pcb_report *rep);
/* The certified bound of every pair of an EMD answer with prices, in double
 * precision: bound[p] = (P - D) / D for the matching's mean cost P and the
 * dual bound D = mean_i min_j (c_ij + p_j) - mean_j p_j (raised to 0); 0
 * when both are 0, HUGE_VAL when D is 0 alone; NAN for a pair that is not a
 * bijection. O(n^2) a pair. */
int pcb_emd_bound(const pcb_task *t, const pcb_result *r, double *bound);
/* Both directions as NN answers (exact), then every pair's value when given. */
int pcb_chamfer_validate(const pcb_task *t, const pcb_result *r, pcb_report *rep);
/* One pair (batch 1): *ok when value is the chamfer distance in convention
 * c within PCB_CHAMFER_REL_TOL; *want the true value. */
int pcb_chamfer_check_value(const pcb_task *t, double value, const pcb_chamfer_convention *c,
                            double *want, int *ok);

/* kNN: every row's entries are reference points (distinct, squared
 * distances recomputed in double, ascending), every point clearly nearer
 * than the true k-th is present and none is beyond it, up to the float32
 * tie band (impl/knn/knn.h), then the declared padding. recall: the share
 * of rows right. */
int pcb_knn_validate(const pcb_task *t, const pcb_result *r, pcb_report *rep);
/* Ball query (impl/ball/ball_validate.c): every row's entries distinct
 * points inside the ball, none missing that the selection keeps (FIRST: every
 * inside point of lower index than the last returned, or every inside point
 * when the row is not full; NEAREST: the kNN rule among the inside points),
 * in the selection's order, then padding; the count the row's entries. Points
 * within the float32 band of the radius may be in or out. */
int pcb_ball_validate(const pcb_task *t, const pcb_result *r, pcb_report *rep);
/* Grid sampling (impl/grid/grid_validate.c): the voxels recomputed in
 * double and sorted by a comparison of their coordinates (no packed keys):
 * every occupied voxel in order, its count and its kept point by the
 * selection's rule, -1 and 0 past the last, every point's inverse entry. */
int pcb_grid_validate(const pcb_task *t, const pcb_result *r, pcb_report *rep);
/* Serialization (impl/serialize/serialize_validate.c): every point's code
 * made again from the curve's definition (Hilbert by its octants'
 * recursion, not the implementations' bit transform), the order ascending
 * by (code, index), the inverse its inverse, -1 past a ragged cloud. */
int pcb_serialize_validate(const pcb_task *t, const pcb_result *r, pcb_report *rep);

/* ---- the judge: every rule, one verdict (impl/judge.c) --------------- */
/* The promise impl's answer to t is held to: its declared promise, with a
 * max_gap of 0 (none) as PCB_EMD_ANY_GAP, the task's opt.max_gap instead
 * where the implementation has gap_option and the task sets one, and not
 * canonical where it is the reference itself. t may be NULL; impl NULL
 * gives the exact promise. */
pcb_promise pcb_promise_of(const pcb_impl *impl, const pcb_task *t);

typedef enum {
    PCB_VERDICT_PASS = 0,  /* right, and every promise kept */
    PCB_VERDICT_FAIL = 1,  /* wrong: detail says the first thing wrong */
    PCB_VERDICT_KNOWN = 2  /* wrong only through the promised known defect */
} pcb_verdict;

typedef struct {
    pcb_verdict verdict;
    pcb_report rep;   /* the validator's report (recall, gap, bound, ...) */
    /* The canonical rule: 1 compared with the reference's answer, 0 does not
     * apply, -1 applies but no reference answer was at hand (detail says so). */
    int compared;
    char detail[320]; /* the first thing wrong, or the validator's summary and notes */
} pcb_judgement;

/* The implementation whose answer the canonical rule compares with, when it
 * applies to this task and promise (FPS, kNN or ball, canonical promise, the problem's
 * reference built and canonical); NULL when it does not apply. */
const pcb_impl *pcb_judge_reference(const pcb_task *t, const pcb_promise *p);
/* Judge an answer: the problem's validator with the promise's exactness and
 * gap, the canonical comparison with `reference` (that implementation's
 * answer indices for the same task, NULL when not at hand), the known-defect
 * rule. Returns PCB_OK when judging ran (the verdict is in j), else the
 * validator's error (j->detail says it too). */
int pcb_judge(const pcb_task *t, const pcb_result *answer, const pcb_promise *p,
              const int32_t *reference, pcb_judgement *j);
/* pcb_judge with the validator's report given: that of an answer equal to
 * this one bit for bit (pcb_result_equal), validated for the same task under
 * the same exact and max_gap. The validator is the judge's cost (FPS's replays
 * every step over every point); the other rules are applied again. A ragged
 * task is judged afresh (its report is a cloud's at a time). */
int pcb_judge_with_report(const pcb_task *t, const pcb_result *answer, const pcb_promise *p,
                          const int32_t *reference, const pcb_report *report,
                          pcb_judgement *j);
/* pcb_judge with the reference's answer computed here when the rule applies
 * (a run of the reference: dp's time). */
int pcb_judge_full(const pcb_task *t, const pcb_result *answer, const pcb_promise *p,
                   pcb_judgement *j);
/* A small valid task of problem p on clouds a and b of n points each, for
 * tests that go over every problem (b is read where the problem has a
 * second cloud): batch 1, the problem's own sizes its face's sample. */
int pcb_sample_task(pcb_problem p, const float *a, const float *b, int64_t n, pcb_task *t);
/* The validator alone with an implementation's promises (exact, max_gap). */
int pcb_validate(const pcb_impl *impl, const pcb_task *t, const pcb_result *r, pcb_report *rep);

#ifdef __cplusplus
}
#endif
#endif
