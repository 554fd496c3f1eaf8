/* check.c - pcbench check: judge an answer made anywhere. What each problem
 * reads, asks and says is its face's (bench/problems/<p>.c, .check). */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bench/problems/problems.h"
#include "cli.h"

/* text from column `indent` to 79, wrapped at spaces */
static void put_wrapped(FILE *out, const char *text, int indent, int first)
{
    int col = first;
    while (*text) {
        const char *end = text;
        while (*end && *end != ' ')
            end++;
        const int len = (int)(end - text);
        if (col > indent && col + 1 + len > 79) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', out);
            col++;
        }
        fprintf(out, "%.*s", len, text);
        col += len;
        text = *end ? end + 1 : end;
    }
    fputc('\n', out);
}

/* The help, made from the faces: each problem's usage and answer file.
 * Returns a string to free, NULL when out of memory. */
static char *help_text(void)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    if (!out)
        return NULL;
    for (int p = 0; p < PCB_NPROBLEMS; p++)
        fprintf(out, "%s pcbench check %s\n", p ? "      " : "usage:",
                bench_face((pcb_problem)p)->check.usage);
    fputs("Judge an answer made anywhere (another library, your own kernel) with the\n"
          "double-precision validators. FILE ('-': stdin) holds one answer a line:\n", out);
    for (int p = 0; p < PCB_NPROBLEMS; p++) {
        fprintf(out, "  %-8s ", pcb_problem_name((pcb_problem)p));
        put_wrapped(out, bench_face((pcb_problem)p)->check.answers, 11, 11);
    }
    fputs("Header lines, '#' comments and CSV (numpy, pandas) are read. Prints 'pass' or\n"
          "'FAIL: <the first thing wrong>', then a summary. --shift X,Y,Z and --no-shift\n"
          "work as in the other commands (see pcbench fps --help).\n"
          "Exit status: 0 right, 1 wrong, 2 usage, 3 bad input (clouds or answer file).\n",
          out);
    return fclose(out) == 0 ? text : (free(text), NULL);
}

/* The answer's verdict and the problem's summary line; 0 right, 1 wrong. A
 * passing answer's "pass" line only where say_pass (a failed value before it
 * is the verdict). */
static int judge(const bench_check_face *f, const run_args *a, const pcb_task *t, pcb_result *r,
                 int has_dist, int say_pass)
{
    /* an answer of unknown origin: exact, or within the gap allowed */
    const pcb_promise promise = {.exact = !f->gap, .max_gap = a->max_gap};
    void *owned = NULL;
    int rc = f->ready ? f->ready(a, t, r, &owned) : PCB_OK;
    if (rc != PCB_OK)
        return cli_report(rc, "check");
    pcb_judgement j;
    rc = pcb_judge(t, r, &promise, NULL, &j);
    if (rc != PCB_OK) {
        free(owned);
        return cli_report(rc, "check");
    }
    if (j.verdict != PCB_VERDICT_PASS || say_pass)
        printf(j.verdict == PCB_VERDICT_PASS ? "pass\n" : "FAIL: %s\n", j.detail);
    f->summary(a, t, r, &j.rep, has_dist);
    free(owned);
    return j.verdict == PCB_VERDICT_PASS ? 0 : PCB_EXIT_VERIFY;
}

/* The problem's value (chamfer's --value): 0 right, else an exit status. */
static int judge_value(const bench_check_face *f, const run_args *a, const pcb_task *t,
                       int say_pass)
{
    int right = 0, rc = f->value(a, t, say_pass, &right);
    return rc != PCB_OK ? cli_report(rc, "check") : right ? 0 : PCB_EXIT_VERIFY;
}

/* The answer file read into idx (and val, its distances, when *has). */
static int read_answer(const bench_check_face *f, const run_args *a, const pcb_task *t,
                       int32_t *idx, double *val, int *has)
{
    const int64_t count = pcb_answer_count(t);
    int rc = f->layout == CHECK_LINES ? pcb_read_answers(a->answer, count, idx, val, has)
                                      : pcb_read_rows(a->answer, t->nq, t->k,
                                                      f->layout == CHECK_FULL_ROWS
                                                          ? (t->k < t->n ? t->k : t->n)
                                                          : 0,
                                                      idx, val, has);
    if (rc == PCB_OK && *has && !f->distances)
        rc = pcb_fail(PCB_EBADFILE, "%s: %s answers are one index a line, these have two fields",
                      a->answer, pcb_problem_name(t->problem));
    return rc;
}

static int check(int argc, char **argv, const char *help);

int cli_check(int argc, char **argv)
{
    if (argc < 2)
        return usage_error("check needs a problem, one of" PCB_PROBLEM_NAMES);
    char *help = help_text();
    if (!help)
        return cli_report(pcb_fail(PCB_ENOMEM, "no memory for the help"), "check");
    int rc = check(argc, argv, help);
    free(help);
    return rc;
}

static int check(int argc, char **argv, const char *help)
{
    pcb_problem p;
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(help, stdout);
        return 0;
    }
    if (pcb_problem_parse(argv[1], &p) != PCB_OK)
        return usage_error("%s", pcb_errmsg());
    const bench_problem_face *face = bench_face(p);
    const bench_check_face *f = &face->check;
    run_args a = {.max_gap = 1e-6};
    int rc = cli_parse_run_args(argc - 1, argv + 1, f->options, f->letters, help, &a);
    if (rc >= 0)
        return rc;
    const char *missing = f->missing(&a);
    if (missing)
        return usage_error("%s", missing);
    const int value = f->has_value && f->has_value(&a);
    if (!a.answer && !value)
        return usage_error(f->value ? "check %s needs --answer FILE or --value V"
                                    : "check needs --answer FILE",
                           pcb_problem_name(p));
    pcb_cloud ca = {0}, cb = {0};
    const int two = face->sides == 2;
    if ((rc = cli_load(a.in_a, &ca)) || (two && (rc = cli_load(a.in_b, &cb))) ||
        (rc = cli_apply_shift_to(&a, &ca, two ? &cb : NULL, a.applied))) {
        pcb_cloud_free(&ca);
        pcb_cloud_free(&cb);
        return rc;
    }
    pcb_task t = {.problem = p, .batch = 1, .n = ca.n, .nq = two ? cb.n : 0, .a = ca.xyz,
                  .b = cb.xyz};
    if (f->task)
        f->task(&a, &t);
    const int64_t count = pcb_answer_count(&t);
    int32_t *idx = NULL;
    pcb_result own = {0}; /* a reader's counts or codes */
    double *val = NULL;
    float *d2 = NULL;
    int has = 0;
    if ((rc = pcb_task_check(&t)) != PCB_OK)
        rc = cli_report(rc, "check");
    else if (!a.answer) /* a value alone */
        rc = judge_value(f, &a, &t, 1);
    else if (!(idx = malloc((size_t)count * sizeof *idx)) ||
             !(val = malloc((size_t)count * sizeof *val)) ||
             !(d2 = malloc((size_t)count * sizeof *d2)))
        rc = cli_report(pcb_fail(PCB_ENOMEM, "no memory for %lld answers", (long long)count), "check");
    else if ((own.index = idx, rc = f->layout == CHECK_OWN ? f->read(&a, &t, &own)
                                          : read_answer(f, &a, &t, idx, val, &has)) != PCB_OK)
        rc = cli_report(rc, NULL);
    else {
        for (int64_t i = 0; has && i < count; i++)
            d2[i] = (float)val[i];
        pcb_result r = {.index = idx, .dist2 = has ? d2 : NULL, .count = own.count,
                        .code = own.code, .mean = own.mean};
        /* with a value too: the value's verdict first, so that "pass" is
         * printed only when the answer and the value both pass */
        const int value_rc = value ? judge_value(f, &a, &t, 0) : 0;
        rc = judge(f, &a, &t, &r, has, value_rc == 0);
        rc = value_rc ? value_rc : rc;
    }
    free(idx), free(val), free(d2), free(own.count), free(own.code), free(own.mean);
    pcb_cloud_free(&ca);
    pcb_cloud_free(&cb);
    return rc;
}
