/* problems.h - a problem's face in the tool, one file a problem
 * (bench/problems/<p>.c), one entry a line of PCB_PROBLEM_MAP: what the
 * harness (bench_suites.c, bench_run.c, bench_predict.c, bench_store.c,
 * bench_count.c), the bench, check and verify commands ask of a problem.
 * None of those names a problem. The faces call below them only:
 * bench_config.c, json.c and the library. */
#ifndef PCB_BENCH_PROBLEMS_H
#define PCB_BENCH_PROBLEMS_H

#include "bench/harness/harness.h"
#include "bench/verify/defects.h"
#include "bench/verify/verify.h"

struct run_args; /* a command's options (bench/cli/cli.h) */

/* The problem in `pcbench check` (bench/cli/check.c): judging an answer
 * made anywhere, read from a file. */
typedef enum {
    CHECK_LINES,    /* one answer a line, pcb_answer_count of them */
    CHECK_ROWS,     /* a line a query: up to k indices (pcb_read_rows) */
    CHECK_FULL_ROWS, /* a line a query: min(k, n) indices */
    CHECK_OWN        /* the face's own reader (read) */
} bench_check_layout;

typedef struct {
    /* its usage, after "pcbench check " (continuation lines indented), and
     * what an answer file holds, for the help */
    const char *usage, *answers;
    const char *options, *letters; /* getopt's short options, the options it takes */
    /* The usage message when the arguments cannot make its task, else NULL
     * (an --answer FILE, or a value, is asked by check.c). */
    const char *(*missing)(const struct run_args *a);
    /* its own fields of the task from the arguments (the clouds are set) */
    void (*task)(const struct run_args *a, pcb_task *t);
    bench_check_layout layout;
    /* CHECK_OWN: the answer file read into r: its index (pcb_answer_count
     * entries, given) and the counts or codes it has (allocated here, freed
     * by check.c). */
    int (*read)(const struct run_args *a, const pcb_task *t, pcb_result *r);
    int distances; /* a line may be 'index squared-distance' */
    int gap;       /* held within --max-gap G, not exact */
    /* The answer made ready to judge (NULL: as read): what it owns to free
     * after the verdict in *owned. A library status. */
    int (*ready)(const struct run_args *a, const pcb_task *t, pcb_result *r, void **owned);
    /* A value judged (the answer optional where given; NULL: none), its
     * verdict in *right and its lines printed ("pass" only where say_pass).
     * A library status. */
    int (*value)(const struct run_args *a, const pcb_task *t, int say_pass, int *right);
    int (*has_value)(const struct run_args *a);
    /* its summary line after the verdict */
    void (*summary)(const struct run_args *a, const pcb_task *t, const pcb_result *r,
                    const pcb_report *rep, int has_dist);
} bench_check_face;

typedef struct {
    /* Its configurations in the named suite, appended to l (none where it
     * has none: the suites are "seed", "full", "train", "knn", "ball",
     * "ragged", "quick"; "full" holds those of train, knn, ball and ragged). */
    int (*configs)(bench_config_list *l, const char *suite);
    /* A configuration's brute-force work: a suite runs each problem's from
     * small to large, so a run's prediction rests on a smaller one. */
    double (*size)(const bench_config *c);
    /* Rows it answers (points per second) and point pairs a brute force
     * compares (pairs per second; NULL: not a problem of pairs). */
    double (*points)(const bench_config *c);
    double (*pairs)(const bench_config *c);
    /* The small run that calibrates an implementation's predictions: its
     * sizes (n, nq, m, k, radius, self); uniform clouds, batch 1. */
    bench_config calibration;
    int rows_of_k; /* a row of an answer holds k entries: more work a row */
    int sides;     /* clouds a configuration has: 1 (A) or 2 (A and B) */
    int square;    /* B is as large as A (EMD's bijection), whatever nq says */
    /* Its own fields of the task from a configuration, after the common
     * ones (NULL: none). */
    void (*task)(const bench_config *c, pcb_task *t);
    /* Its own fields of the results' "config" object, after the common
     * ones (NULL: none). */
    void (*json_fields)(FILE *f, const bench_config *c);
    /* Its selection rule's name (the inputs table), NULL: it has none. */
    const char *(*select_name)(const bench_config *c);
    bench_check_face check;
    /* Its verification matrix (bench/verify/verify_<p>.c): every
     * implementation (or impl) over its cases, a row each to out; the
     * failures, or a negative status. */
    int (*verify)(const char *impl, FILE *out);
    /* Its planted defects (pcbench verify --defects), ended by impl NULL. */
    const pcb_defect *defects;
} bench_problem_face;

#define BENCH_PROBLEM_FACE(ID, name, title) extern const bench_problem_face bench_##name##_face;
PCB_PROBLEM_MAP(BENCH_PROBLEM_FACE)
#undef BENCH_PROBLEM_FACE

/* A line of an answer file as integers (problems.c, for the faces' own
 * readers): commas and tabs are spaces, '#' starts a comment; up to want
 * of them into w. Returns how many the line holds (0: blank or a comment),
 * -1 where a field is not an integer (*header: it is the line's first and
 * a word, a header line's). The line is edited in place. */
int bench_line_integers(char *line, long long *w, int want, int *header);
/* The same, the fields past the first want read as numbers (up to reals of
 * them into x): a line of integers, then real numbers (grid's means). */
int bench_line_numbers(char *line, long long *w, int want, double *x, int reals, int *header);

/* The face of problem p (problems.c); NULL outside the list. */
const bench_problem_face *bench_face(pcb_problem p);

#endif
