/* verify.h - the verification matrix of each problem, and what they share.
 *
 * pcb_verify_<problem>() runs every available implementation (or only
 * `impl`, when not NULL) over that problem's matrix of datasets, prints one
 * row per (case, implementation) to out, and returns the number of
 * failures (0 = all passed), or a negative status on a system error. */
#ifndef PCB_VERIFY_H
#define PCB_VERIFY_H

#include <stdio.h>

#include "datasets/cloud.h"
#include "impl/pcbench_judge.h"

/* Also the large cases (NN: 1M-point clouds, ordinary and degenerate),
 * which only fast implementations can run: pcbench verify --large. */
void pcb_verify_set_large(int on);
int pcb_verify_large(void);

/* int pcb_verify_<problem>(const char *impl, FILE *out), a problem each
 * (bench/verify/verify_<problem>.c) */
#define PCB_VERIFY_MATRIX(ID, name, title) int pcb_verify_##name(const char *impl, FILE *out);
PCB_PROBLEM_MAP(PCB_VERIFY_MATRIX)
#undef PCB_VERIFY_MATRIX

/* The pairs NN's matrix is made of, for NN and chamfer (verify_nn.c): a
 * generated pair of kinds, batch clouds each, and a lidar sweep against
 * the next; the failures or a negative status. */
int pcb_verify_generated_pair(pcb_problem p, const char *kind_ref, const char *kind_qry,
                              int64_t n, int64_t nq, int64_t batch, int same_seed,
                              const char *impl, FILE *out);
int pcb_verify_lidar_pair(pcb_problem p, int64_t n, const char *impl, FILE *out);

/* One case of a matrix: a label and a fully built task (the caller owns
 * the point arrays). */
typedef struct {
    char label[96];
    pcb_task task;
} pcb_verify_case;

/* Print the table header for a problem. */
void pcb_verify_header(FILE *out, pcb_problem p);
/* Run every implementation of the case's problem (or only `impl`) on the
 * case, judge each answer (pcb_judge: the validator with the entry's
 * promises, the canonical comparison with the reference's answer, run once
 * a case, the known-defect rule), print one row each. Unsupported or unavailable implementations get
 * a "skip" row and do not count as failures. Returns the number of failures. */
int pcb_verify_case_run(const pcb_verify_case *c, const char *impl, FILE *out);
/* Defect mode (pcbench verify --defects): cases run the planted variants of
 * the defect catalog instead of the real implementations; a wrong answer
 * is "caught", not a failure. The report prints where each defect was
 * caught (the defects of one problem, or all) and returns how many were
 * missed (or, for the accepted ones, wrongly caught). */
void pcb_verify_set_defects(int on);
int pcb_verify_defect_report(FILE *out, int problem /* -1: all */);
/* How many answers so far showed a known defect (pcb_impl.known_defect). */
int pcb_verify_known_defects(void);
/* Rows so far: passed and skipped; and the implementations unavailable here
 * ("fps/cuda_pruned, ..."), whose rows after the first are not printed. */
void pcb_verify_counts(int *pass, int *skip, char *unavailable_names, size_t len);
/* A row for a case that could not be built (no data, no memory). */
void pcb_verify_skip(FILE *out, const char *label, const char *why);
/* Run one(path, name, impl, out) on the first max_files point-cloud files of
 * datasets/real (fetched by make datasets) in name order; a skip row when
 * there are none. Returns the sum of one()'s results (failures), or the
 * first negative status. */
int pcb_verify_real(size_t max_files,
                    int (*one)(const char *path, const char *name, const char *impl, FILE *out),
                    const char *impl, FILE *out);
/* 1 if `impl` names an implementation of problem p (or is NULL). */
int pcb_verify_impl_known(pcb_problem p, const char *impl);

#endif
