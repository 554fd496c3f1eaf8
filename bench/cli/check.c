/* check.c - pcbench check: judge an answer made anywhere. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "impl/emd/emd.h"
#include "impl/nn/nn.h"

static const char check_help[] =
    "usage: pcbench check fps -i CLOUD -m M [--start S] --answer FILE\n"
    "       pcbench check nn -r REF -q QUERY --answer FILE\n"
    "       pcbench check emd -a A -b B --answer FILE [--max-gap G]\n"
    "       pcbench check chamfer -a A -b B [--answer FILE] [--value V [--convention C]]\n"
    "       pcbench check knn -r REF -q QUERY -k K --answer FILE\n"
    "       pcbench check ball -r REF -q CENTRES --radius R -k K [--select S] [--pad P]\n"
    "                          --answer FILE\n"
    "Judge an answer made anywhere (another library, your own kernel) with the\n"
    "double-precision validators. FILE ('-': stdin) holds one answer a line: FPS the\n"
    "M sample indices in order; NN 'index [squared distance]' for every query point;\n"
    "EMD the index of B matched to each point of A; chamfer 'index [squared distance]'\n"
    "for every point of A (its nearest in B), then of B; kNN a line a query point, its\n"
    "min(K, n) neighbours as indices or 'index squared-distance' pairs, nearest first\n"
    "(any order among equal distances); ball a line a centre, its selected indices as\n"
    "pcbench ball writes them (an empty ball an empty line, -1 entries padding; with\n"
    "--pad first a repeat of the first index at the end of a line is padding); points\n"
    "within float32 rounding of the radius may be in or out. --value V judges a chamfer\n"
    "value (convention as in pcbench chamfer --help). Header lines, '#' comments and CSV\n"
    "(numpy, pandas) are read. Prints 'pass' or 'FAIL: <the first thing wrong>', then\n"
    "a summary. An EMD matching must be a bijection within 1e-6 (relative) of the\n"
    "optimum of the exact solver, or within G with --max-gap G. --shift X,Y,Z and\n"
    "--no-shift work as in the other commands (see pcbench fps --help).\n"
    "Exit status: 0 right, 1 wrong, 2 usage, 3 bad input (clouds or answer file).\n";

/* The answer's verdict and a summary line; 0 right, 1 wrong. A passing
 * answer's "pass" line only where say_pass (a failed chamfer value before it
 * is the verdict). */
static int judge(const pcb_task *t, const pcb_result *r, double max_gap, int has_dist,
                 int say_pass)
{
    /* an answer of unknown origin: exact, or (EMD) within the gap allowed */
    const pcb_promise promise = {.exact = t->problem != PCB_EMD, .max_gap = max_gap};
    float *own = NULL; /* a chamfer answer without distances: its indices' */
    pcb_result with = *r;
    if (t->problem == PCB_CHAMFER && !r->dist2) {
        const int64_t count = pcb_answer_count(t), first = t->batch * t->n;
        if (!(own = malloc((size_t)count * sizeof *own)))
            return cli_report(pcb_fail(PCB_ENOMEM, "no memory for %lld answers", (long long)count),
                              "check");
        for (int64_t i = 0; i < count; i++) {
            const int32_t j = r->index[i];
            const int64_t other = i < first ? t->nq : t->n;
            const float *x = i < first ? t->a + 3 * i : t->b + 3 * (i - first);
            const float *y = (i < first ? t->b : t->a) + 3 * (j >= 0 && j < other ? j : 0);
            own[i] = pcb_nn_d2(x, y); /* an index out of range is still caught below */
        }
        with.dist2 = own;
    }
    r = &with;
    pcb_judgement j;
    int rc = pcb_judge(t, r, &promise, NULL, &j);
    free(own);
    if (rc != PCB_OK)
        return cli_report(rc, "check");
    const pcb_report rep = j.rep;
    if (j.verdict != PCB_VERDICT_PASS || say_pass)
        printf(j.verdict == PCB_VERDICT_PASS ? "pass\n" : "FAIL: %s\n", j.detail);
    if (t->problem == PCB_FPS) {
        printf("fps: %lld samples of %lld points from %lld%s%s\n", (long long)t->m,
               (long long)t->n, (long long)t->start, rep.ok ? ": " : "",
               rep.ok ? rep.detail : "");
    } else if (t->problem == PCB_CHAMFER) {
        printf("chamfer: %lld + %lld points%s\n", (long long)t->n, (long long)t->nq,
               has_dist ? ", squared distances checked" : "");
    } else if (t->problem == PCB_KNN) {
        printf("knn: %lld queries, k = %lld", (long long)t->nq, (long long)t->k);
        if (rep.recall >= 0)
            printf(", rows right %.6g", rep.recall);
        printf("%s\n", has_dist ? ", squared distances checked" : "");
    } else if (t->problem == PCB_BALL) {
        printf("ball: %lld centres, k = %lld, radius %.9g, %s", (long long)t->nq, (long long)t->k,
               t->radius, pcb_ball_select_name(t->select));
        if (rep.recall >= 0)
            printf(", rows right %.6g", rep.recall);
        printf("\n");
    } else if (t->problem == PCB_NN) {
        printf("nn: %lld queries", (long long)t->nq);
        if (rep.recall >= 0)
            printf(", recall %.6g, worst distance ratio %.6g", rep.recall, rep.worst_ratio);
        printf("%s\n", has_dist ? ", squared distances checked" : "");
    } else {
        /* A bijection: every index in range, none twice. */
        char *seen = calloc((size_t)t->n, 1);
        int bij = seen != NULL;
        for (int64_t i = 0; bij && i < t->n; i++) {
            const int32_t k = r->index[i];
            bij = k >= 0 && k < t->n && !seen[k];
            if (bij)
                seen[k] = 1;
        }
        free(seen);
        printf("emd: bijection %s", bij ? "yes" : "no");
        if (bij && rep.gap >= 0) {
            const double value = pcb_emd_mean_matched(t->a, t->b, t->n, r->index, NULL);
            printf(", value %.9g, optimum %.9g, gap %.3g (allowed %.3g)", value,
                   value / (1 + rep.gap), rep.gap, max_gap);
        }
        printf("\n");
    }
    return j.verdict == PCB_VERDICT_PASS ? 0 : PCB_EXIT_VERIFY;
}

/* A chamfer value judged against the true one in the convention asked;
 * say_pass 0: a passing value prints no "pass" line (the answer's verdict
 * follows, and is the first line only when both pass). */
static int check_value(const pcb_task *t, const run_args *a, int say_pass)
{
    double want = 0;
    int ok = 0, rc = pcb_chamfer_check_value(t, a->value, &a->convention, &want, &ok);
    if (rc != PCB_OK)
        return cli_report(rc, "check");
    char name[32];
    pcb_chamfer_convention_name(&a->convention, name, sizeof name);
    if (ok && say_pass)
        printf("pass\n");
    else if (!ok)
        printf("FAIL: value %.9g, the nearest distances give %.9g\n", a->value, want);
    printf("chamfer: %s value %.9g, true %.9g\n", name, a->value, want);
    return ok ? 0 : PCB_EXIT_VERIFY;
}

int cli_check(int argc, char **argv)
{
    pcb_problem p;
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        if (argc < 2)
            return usage_error("check needs a problem, one of" PCB_PROBLEM_NAMES);
        fputs(check_help, stdout);
        return 0;
    }
    if (pcb_problem_parse(argv[1], &p) != PCB_OK)
        return usage_error("%s", pcb_errmsg());
    run_args a = {.max_gap = 1e-6};
    const char *opts = p == PCB_FPS ? "i:m:s:A:S:Nh"
                       : p == PCB_NN ? "r:q:A:S:Nh"
                       : p == PCB_KNN ? "r:q:k:A:S:Nh"
                       : p == PCB_BALL ? "r:q:k:A:S:Nh"
                       : p == PCB_CHAMFER ? "a:b:A:S:Nh" : "a:b:A:G:S:Nh";
    const char *letters = p == PCB_FPS ? "imsASNh"
                          : p == PCB_NN ? "rqASNh"
                          : p == PCB_KNN ? "rqkASNh"
                          : p == PCB_BALL ? "rqkARLFSNh"
                          : p == PCB_CHAMFER ? "abAVCSNh" : "abAGSNh";
    int rc = cli_parse_run_args(argc - 1, argv + 1, opts, letters, check_help, &a);
    if (rc >= 0)
        return rc;
    if (p == PCB_CHAMFER && a.have_convention && !a.have_value)
        return usage_error("--convention is the convention of --value V: give the value too");
    if (!a.answer && !(p == PCB_CHAMFER && a.have_value))
        return usage_error(p == PCB_CHAMFER ? "check chamfer needs --answer FILE or --value V"
                                            : "check needs --answer FILE");
    if (p == PCB_FPS ? !a.in_a || !a.have_m
                     : !a.in_a || !a.in_b || ((p == PCB_KNN || p == PCB_BALL) && !a.have_k) ||
                           (p == PCB_BALL && !a.have_radius))
        return usage_error(p == PCB_FPS  ? "check fps needs -i CLOUD and -m M"
                           : p == PCB_NN ? "check nn needs -r REF and -q QUERY"
                           : p == PCB_KNN ? "check knn needs -r REF, -q QUERY and -k K"
                           : p == PCB_BALL ? "check ball needs -r REF, -q CENTRES, --radius R and -k K"
                           : p == PCB_CHAMFER ? "check chamfer needs -a A and -b B"
                                              : "check emd needs -a A and -b B");
    pcb_cloud ca = {0}, cb = {0};
    if ((rc = cli_load(a.in_a, &ca)) || (p != PCB_FPS && (rc = cli_load(a.in_b, &cb))) ||
        (rc = cli_apply_shift(&a, &ca, p == PCB_FPS ? NULL : &cb))) {
        pcb_cloud_free(&ca);
        pcb_cloud_free(&cb);
        return rc;
    }
    pcb_task t = {.problem = p, .batch = 1, .n = ca.n, .nq = p == PCB_FPS ? 0 : cb.n,
                  .m = p == PCB_FPS ? a.m : 0, .start = a.start,
                  .k = p == PCB_KNN || p == PCB_BALL ? a.k : 0, .radius = a.radius,
                  .select = a.select, .a = ca.xyz, .b = cb.xyz};
    const int64_t count = pcb_answer_count(&t);
    int32_t *idx = NULL;
    double *val = NULL;
    float *d2 = NULL;
    int has = 0;
    if ((rc = pcb_task_check(&t)) != PCB_OK)
        rc = cli_report(rc, "check");
    else if (p == PCB_CHAMFER && !a.answer)
        rc = check_value(&t, &a, 1);
    else if (!(idx = malloc((size_t)count * sizeof *idx)) ||
             !(val = malloc((size_t)count * sizeof *val)) ||
             !(d2 = malloc((size_t)count * sizeof *d2)))
        rc = cli_report(pcb_fail(PCB_ENOMEM, "no memory for %lld answers", (long long)count), "check");
    else if ((rc = p == PCB_KNN ? pcb_read_rows(a.answer, t.nq, t.k, t.k < t.n ? t.k : t.n, idx,
                                                val, &has)
                   : p == PCB_BALL ? pcb_read_rows(a.answer, t.nq, t.k, 0, idx, val, &has)
                                   : pcb_read_answers(a.answer, count, idx, val, &has)) != PCB_OK)
        rc = cli_report(rc, NULL);
    else if (has && p != PCB_NN && p != PCB_CHAMFER && p != PCB_KNN)
        rc = cli_report(pcb_fail(PCB_EBADFILE, "%s: %s answers are one index a line, these have two "
                                           "fields", a.answer, pcb_problem_name(p)), NULL);
    else {
        for (int64_t q = 0; p == PCB_BALL && a.pad_first && q < t.nq; q++) {
            int32_t *row = idx + q * t.k; /* the first index repeated at the end: padding */
            for (int64_t s = t.k - 1; s > 0 && (row[s] == PCB_KNN_PAD || row[s] == row[0]); s--)
                row[s] = PCB_KNN_PAD;
        }
        for (int64_t i = 0; has && i < count; i++)
            d2[i] = (float)val[i];
        pcb_result r = {.index = idx, .dist2 = has ? d2 : NULL};
        if (p == PCB_EMD) { /* the gap to the optimum, whatever n */
            char n[32];
            snprintf(n, sizeof n, "%lld", (long long)t.n);
            setenv("PCB_EMD_GAP_MAX_N", n, 1);
        }
        /* with a value too: the value's verdict first, so that "pass" is
         * printed only when the answer and the value both pass */
        const int value_rc = p == PCB_CHAMFER && a.have_value ? check_value(&t, &a, 0) : 0;
        rc = judge(&t, &r, a.max_gap, has, value_rc == 0);
        rc = value_rc ? value_rc : rc;
    }
    free(idx), free(val), free(d2);
    pcb_cloud_free(&ca);
    pcb_cloud_free(&cb);
    return rc;
}
