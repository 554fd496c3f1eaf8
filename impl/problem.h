/* problem.h - a problem's face in the library, private to it: what the
 * task checks (task.c), the answer's layout (task.c, ragged.c), the judge
 * (judge.c) and the batch runs (each.c) ask of a problem, one file a problem
 * (impl/<p>/<p>_problem.c, with its one-call function), one entry a line of
 * PCB_PROBLEM_MAP. None of those files names a problem. */
#ifndef PCB_PROBLEM_H
#define PCB_PROBLEM_H

#include "pcbench_judge.h"

/* What a row of an answer stands for, a cloud: a sample (at most the
 * cloud's points), a point of cloud A, a point of cloud B (a query). */
typedef enum { PCB_ROWS_SAMPLES, PCB_ROWS_A, PCB_ROWS_B } pcb_rows;

typedef struct {
    /* its own arguments, after pcb_task_check's common ones */
    int (*check)(const pcb_task *t);
    /* its validator: one that reads the answer's promise (exact or within a
     * gap), or one that needs none */
    int (*validate_promised)(const pcb_task *t, const pcb_result *r, const pcb_promise *p,
                             pcb_report *rep);
    int (*validate)(const pcb_task *t, const pcb_result *r, pcb_report *rep);
    /* The answer: groups of rows, each group a batch's clouds one after the
     * other (chamfer: A's rows, then B's), a row k entries (kNN, ball) or one. */
    int groups;
    pcb_rows rows[2];
    int row_is_k;
    int reads_b;   /* reads cloud B: it must not be empty */
    int counts;    /* a count a row of its first group (ball) */
    int valued;    /* a value a pair, NaN for a pair with an empty cloud */
    int priced;    /* prices a point and a bound a pair (EMD) */
    int distances; /* dist2 entries beside its indices */
    int certified; /* an approximate answer certified within a promised gap */
    int codes;     /* a 64-bit code a point of A (pcb_result.code: serialize) */
    /* 1 where the task asks for a mean point (3 floats) a row of its first
     * group (pcb_result.mean: grid's MEAN); NULL: never */
    int (*means)(const pcb_task *t);
    /* 1: every implementation and the validator read a ragged task's
     * lengths themselves (the answer depends on the batch as a whole:
     * serialize's depth and cloud numbers), so it is judged whole */
    int whole_ragged;
    /* The canonical comparison with the reference's answer: printf format of
     * a mismatch (row, entry, index, reference's name, its index); NULL: none.
     * A row is the cloud's samples or the query's neighbours. */
    const char *canonical;
    /* A small task of it for the tests (pcb_sample_task): its own sizes
     * set on a task whose clouds and n are (NULL: none beyond them). */
    void (*sample)(pcb_task *t);
} pcb_problem_face;

#define PCB_PROBLEM_FACE(ID, name, title) extern const pcb_problem_face pcb_##name##_problem;
PCB_PROBLEM_MAP(PCB_PROBLEM_FACE)
#undef PCB_PROBLEM_FACE

/* The face of problem p; NULL outside the list. */
const pcb_problem_face *pcb_face(pcb_problem p);
/* Rows of cloud i in a group's span (the equal-size layout) and in the
 * cloud itself (a ragged cloud's length); entries a row. */
int64_t pcb_face_span(const pcb_task *t, pcb_rows rows);
int64_t pcb_face_width(const pcb_task *t);
/* Floats of pcb_result.mean a cloud's answer holds (0: none). */
int64_t pcb_face_means(const pcb_task *t);

/* A cloud's common checks (task.c): points given, 1..PCB_MAX_POINTS of
 * them, addressable, finite where on the host (a ragged cloud's own points). */
int pcb_check_cloud(const char *what, const float *xyz, int64_t batch, int64_t n,
                    pcb_memory memory, const int64_t *lengths);
/* A reference cloud A, a cloud of queries B (named as given) and k
 * entries a query (task.c; kNN's and ball's checks): k in 1..max(n,
 * PCB_PAD_K), the answer addressable. */
int pcb_check_k_rows(const pcb_task *t, const char *queries);
/* Run a task on the best available implementation (run.c): the one-call
 * functions' body. */
int pcb_run_best(const pcb_task *t, pcb_result *r);

#endif
