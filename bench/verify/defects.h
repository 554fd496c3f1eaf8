/* defects.h - the catalog of planted defects: each problem's in its face
 * (bench/problems/<p>.c, .defects), gathered by bench/problems/problems.c;
 * the variants' common life cycle in defects.c. */
#ifndef PCB_DEFECTS_H
#define PCB_DEFECTS_H

#include "impl/pcbench_judge.h"

typedef struct {
    const pcb_impl *impl; /* the planted variant: its name, problem and life cycle */
    const char *defect;   /* the defect, in one line */
    const char *origin;   /* where it was found */
    int accepted;         /* 1: correct under this project's rules, so it must pass */
    int by_recall;        /* NN, approximate by design: caught where its recall is < 1 */
} pcb_defect;

/* Every planted defect, problem by problem (PCB_PROBLEM_MAP's order), at
 * most PCB_MAX_DEFECTS; the list ends with impl == NULL. */
#define PCB_MAX_DEFECTS 64
const pcb_defect *pcb_defects(void);

/* Whether the judge caught the variant's answer: a failing verdict, or, for
 * one approximate by design (by_recall), any miss of an exact neighbour. */
int pcb_defect_caught(const pcb_defect *d, const pcb_judgement *j);

/* A variant's state: its task and its answer, the arrays of pcb_result_alloc
 * (idx and the others alias r's). Deliberately plain (serial, brute force):
 * what matters is the defect, not speed. */
typedef struct {
    pcb_task task;
    pcb_result r;
    int32_t *idx;
    float *dist2;
    double *value;
    int32_t *count; /* ball */
} pcb_variant;

int pcb_variant_prepare(const pcb_task *t, void **state);
int pcb_variant_fetch(void *state, pcb_result *out);
void pcb_variant_release(void *state);
/* A CPU variant costing what its original costs, compute fn. */
#define PCB_VARIANT(p, nm, ex, gap, cost_, fn, about)                                          \
    static const pcb_impl nm = {.name = #nm, .problem = p, .device = PCB_CPU,                 \
                                .promise = {.exact = ex, .max_gap = gap}, .cost = cost_,      \
                                .summary = about, .prepare = pcb_variant_prepare,             \
                                .compute = fn, .fetch = pcb_variant_fetch,                    \
                                .release = pcb_variant_release}

/* NN answers (t an NN task) by squared distances as |q|^2 + |p|^2 - 2 q.p in
 * float32, which cancel to noise far from the origin (NN's and chamfer's
 * planted defects). */
void pcb_variant_expanded_nn(const pcb_task *t, int32_t *idx, float *dist2);

#endif
