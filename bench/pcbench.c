/* pcbench.c - the command-line tool.
 *
 * Exit status: 0 success, 1 verification failure, 2 usage error, 3 bad input
 * (file or arguments), 4 implementation unsupported or unavailable, 5 device
 * or system error. Messages on stderr start with "pcbench:". */
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../datasets/cloud.h"
#include "../impl/pcbench.h"
#include "../impl/defects/defects.h"
#include "../impl/emd/emd.h"
#include "../impl/outfile.h"
#include "options.h"
#include "verify.h"

/* Print "pcbench: <what>: <message>" and return the exit status for rc. */
static int report(int rc, const char *what)
{
    fprintf(stderr, "pcbench: %s%s%s: %s\n", what ? what : "", what ? ": " : "",
            pcb_strerror(rc), pcb_errmsg());
    return pcb_exit_for(rc);
}

/* Usage errors of the command being run (set by main). */
static const char *command;
#define usage_error(...) pcb_usage(command, __VA_ARGS__)

/* ---- shared option handling for fps / nn / emd / check ----------------------- */
typedef struct {
    const char *impl, *out, *in_a, *in_b, *answer;
    int64_t m, start;
    int have_m;
    double max_gap; /* check emd */
    double shift[3];
    int have_shift, no_shift;
    pcb_options opt;
} run_args;

/* Every option of the running commands; each command takes those whose
 * letter is in its own list (parse_run_args), and no other. */
static const struct option run_opts[] = {
    {"impl", required_argument, 0, 'I'},     {"output", required_argument, 0, 'o'},
    {"input", required_argument, 0, 'i'},    {"samples", required_argument, 0, 'm'},
    {"start", required_argument, 0, 's'},    {"ref", required_argument, 0, 'r'},
    {"query", required_argument, 0, 'q'},    {"threads", required_argument, 0, 't'},
    {"partitions", required_argument, 0, 'P'}, {"eps", required_argument, 0, 'e'},
    {"answer", required_argument, 0, 'A'},   {"max-gap", required_argument, 0, 'G'},
    {"shift", required_argument, 0, 'S'},    {"no-shift", no_argument, 0, 'N'},
    {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};

/* Parse a running command's options: shortopts as getopt's, letters the
 * options (short or long) it takes. Returns -1 to go on, else an exit
 * status. */
static int parse_run_args(int argc, char **argv, const char *shortopts, const char *letters,
                          const char *help, run_args *a)
{
    struct option own[sizeof run_opts / sizeof run_opts[0]];
    size_t k = 0;
    for (const struct option *o = run_opts; o->name; o++)
        if (strchr(letters, o->val))
            own[k++] = *o;
    own[k] = (struct option){0, 0, 0, 0};
    int c;
    int64_t v;
    optind = 1;
    while ((c = pcb_getopt(argc, argv, command, shortopts, own)) != -1) {
        switch (c) {
        case 'I': a->impl = optarg; break;
        case 'o': a->out = optarg; break;
        case 'i':
        case 'r':
        case 'a': a->in_a = optarg; break;
        case 'q':
        case 'b': a->in_b = optarg; break;
        case 'm': /* its range depends on the cloud: the task check says (status 3) */
            if (!pcb_opt_i64(command, "-m", optarg, INT64_MIN, INT64_MAX, &a->m))
                return PCB_EXIT_USAGE;
            a->have_m = 1;
            break;
        case 's':
            if (!pcb_opt_i64(command, "--start", optarg, INT64_MIN, INT64_MAX, &a->start))
                return PCB_EXIT_USAGE;
            break;
        case 't':
            if (!pcb_opt_i64(command, "--threads", optarg, 0, 4096, &v)) return PCB_EXIT_USAGE;
            a->opt.threads = (int)v;
            break;
        case 'P':
            if (!pcb_opt_i64(command, "--partitions", optarg, 1, 1000000, &v)) return PCB_EXIT_USAGE;
            a->opt.partitions = (int)v;
            break;
        case 'e':
            if (!pcb_opt_f64(command, "--eps", optarg, 0, DBL_MAX, &a->opt.eps))
                return PCB_EXIT_USAGE;
            break;
        case 'A': a->answer = optarg; break;
        case 'S': {
            char *p = optarg, *end;
            for (int k = 0; k < 3; k++, p = end + 1) {
                errno = 0;
                a->shift[k] = strtod(p, &end);
                if (errno || end == p || !isfinite(a->shift[k]) || *end != (k < 2 ? ',' : '\0'))
                    return usage_error("--shift takes X,Y,Z, not '%s'", optarg);
            }
            a->have_shift = 1;
            break;
        }
        case 'N': a->no_shift = 1; break;
        case 'G': /* 0: the exact optimum; inf: any bijection */
            if (!pcb_opt_f64(command, "--max-gap", optarg, 0, HUGE_VAL, &a->max_gap))
                return PCB_EXIT_USAGE;
            break;
        case 'h': fputs(help, stdout); return 0;
        default: return PCB_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    if (a->have_shift && a->no_shift)
        return usage_error("--shift and --no-shift exclude each other");
    return -1;
}

/* Subtract the command's shift from its clouds: --shift, else the automatic
 * one of geo-referenced clouds (pcb_shift_auto on the first cloud) unless
 * --no-shift; said on stderr. Distances and indexes do not change with a
 * shift; no output holds coordinates. Returns 0 or an exit status. */
static int apply_shift(const run_args *a, pcb_cloud *first, pcb_cloud *second)
{
    double s[3] = {0, 0, 0};
    if (a->have_shift)
        memcpy(s, a->shift, sizeof s);
    else if (a->no_shift || pcb_shift_auto(first, s) != 1)
        return 0;
    int rc = pcb_cloud_shift(first, s);
    if (rc == PCB_OK && second)
        rc = pcb_cloud_shift(second, s);
    if (rc != PCB_OK)
        return report(rc, "--shift");
    fprintf(stderr, "pcbench: shift %.17g,%.17g,%.17g subtracted from every cloud in double "
            "before rounding to float%s\n", s[0], s[1], s[2],
            a->have_shift ? "" : " (coordinates beyond 1e5; --no-shift keeps them)");
    return 0;
}

/* Pick the implementation: --impl NAME, else the fastest exact one. */
static int choose_impl(const char *name, const pcb_task *t, const pcb_impl **impl)
{
    if (!name) {
        int rc = pcb_best(t, impl);
        return rc == PCB_OK ? 0 : report(rc, pcb_problem_name(t->problem));
    }
    *impl = pcb_find(t->problem, name);
    if (*impl)
        return 0;
    const pcb_missing *m = pcb_not_built_find(t->problem, name);
    if (m) {
        fprintf(stderr, "pcbench: %s %s: unavailable: not built (%s not found)\n", m->problem,
                name, m->needs);
        return PCB_EXIT_UNSUPPORTED;
    }
    return usage_error("unknown %s implementation '%s'", pcb_problem_name(t->problem), name);
}

/* The task's arguments, then the implementation; 0 or an exit status. */
static int check_and_choose(const char *name, const pcb_task *t, const pcb_impl **impl)
{
    int rc = pcb_task_check(t);
    return rc == PCB_OK ? choose_impl(name, t, impl) : report(rc, command);
}

/* An input that cannot be read, whatever the reason, is bad input (3). */
static int load(const char *path, pcb_cloud *c)
{
    int rc = pcb_load(path, c);
    if (rc == PCB_OK)
        return 0;
    report(rc, NULL);
    return rc == PCB_ENOMEM ? PCB_EXIT_SYSTEM : PCB_EXIT_INPUT;
}

static int run_task(const pcb_impl *impl, const pcb_task *t, pcb_result *r)
{
    int rc = pcb_run(impl, t, r, NULL);
    if (rc == PCB_OK)
        return 0;
    char what[96];
    snprintf(what, sizeof what, "%s %s", pcb_problem_name(impl->problem), impl->name);
    return report(rc, what);
}

/* Open -o before any work, so that an output that cannot be written costs
 * nothing and prints nothing. An -o naming an input (writing would destroy
 * it) or a name that must not be replaced (a folder, a device) is a bad
 * argument, status 3. Returns 0 or an exit status. */
static int open_output(const run_args *a, pcb_outfile *o)
{
    const char *in[2] = {a->in_a, a->in_b};
    for (int k = 0; k < 2; k++)
        if (in[k] && a->out && pcb_out_same_file(a->out, in[k]))
            return report(pcb_fail(PCB_EINVAL, "-o %s is the input %s: writing the results "
                                   "would destroy it", a->out, in[k]), command);
    int rc = pcb_out_open(o, a->out);
    return rc == PCB_OK ? 0 : report(rc, command);
}

/* ---- commands ------------------------------------------------------------- */
static int cmd_list(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--help") == 0) {
        puts("usage: pcbench list [--defects]\n"
             "One line per implementation: <problem> <name> <device> <exact|approx> <status>.\n"
             "--defects: the catalog of planted defects instead, one line each:\n"
             "<problem> <name>: <the defect> [from <where it was found>] (accepted: correct\n"
             "under this project's rules, must pass)");
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--defects") == 0) {
        for (const pcb_defect *d = pcb_defects(); d->impl; d++)
            printf("%s %s: %s [from %s]%s\n", pcb_problem_name(d->impl->problem), d->impl->name,
                   d->defect, d->origin, d->accepted ? " (accepted)" : "");
        return 0;
    }
    if (argc > 1)
        return usage_error("unexpected argument '%s'", argv[1]);
    for (int p = 0; p < PCB_NPROBLEMS; p++) {
        for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
            const pcb_impl *impl = *it;
            if ((int)impl->problem != p)
                continue;
            int rc = pcb_impl_available(impl);
            printf("%s %s %s %s %s%s%s\n", pcb_problem_name(impl->problem), impl->name,
                   pcb_device_name(impl->device), impl->exact ? "exact" : "approx",
                   rc == PCB_OK ? "available" : "unavailable", rc == PCB_OK ? "" : ": ",
                   rc == PCB_OK ? "" : pcb_errmsg());
        }
        for (const pcb_missing *m = pcb_not_built(); m->name; m++)
            if (strcmp(m->problem, pcb_problem_name((pcb_problem)p)) == 0)
                printf("%s %s %s - unavailable: not built (%s not found)\n", m->problem, m->name,
                       pcb_device_name(m->device), m->needs);
    }
    return 0;
}

static const char gen_help[] =
    "usage: pcbench gen KIND -n N [--seed S] -o FILE\n"
    "Write a generated cloud as binary PLY. KIND: uniform, sphere, clusters, lidar,\n"
    "equal, duplicates, collinear, offset. Same KIND, N and seed give the same cloud.\n"
    "lidar with -n 0 gives a full sweep (about 120,000 points).\n";

static int cmd_gen(int argc, char **argv)
{
    static const struct option opts[] = {{"seed", required_argument, 0, 'S'},
                                         {"output", required_argument, 0, 'o'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int64_t n = -1, seed = 1;
    const char *out = NULL;
    int c;
    optind = 1;
    while ((c = pcb_getopt(argc, argv, command, "n:o:S:h", opts)) != -1) {
        switch (c) {
        case 'n':
            if (!pcb_opt_i64(command, "-n", optarg, 0, PCB_MAX_POINTS, &n)) return PCB_EXIT_USAGE;
            break;
        case 'S':
            if (!pcb_opt_i64(command, "--seed", optarg, INT64_MIN, INT64_MAX, &seed))
                return PCB_EXIT_USAGE;
            break;
        case 'o': out = optarg; break;
        case 'h': fputs(gen_help, stdout); return 0;
        default: return PCB_EXIT_USAGE;
        }
    }
    if (optind != argc - 1)
        return usage_error("gen needs exactly one KIND");
    if (n < 0 || !out)
        return usage_error("gen needs -n N and -o FILE");
    pcb_cloud cloud;
    int rc = pcb_generate(argv[optind], n, (uint64_t)seed, &cloud);
    if (rc == PCB_OK)
        rc = pcb_save_ply(out, &cloud);
    pcb_cloud_free(&cloud);
    return rc == PCB_OK ? 0 : report(rc, "gen");
}

static const char fps_help[] =
    "usage: pcbench fps -i FILE -m M [--impl NAME] [--start S] [--threads T] [-o OUT]\n"
    "                   [--shift X,Y,Z | --no-shift]\n"
    "Farthest point sampling: M lines, each a 0-based index into FILE's points, in\n"
    "selection order. Without --impl the fastest available exact implementation runs.\n"
    "Geo-referenced clouds (a coordinate beyond 1e5) are shifted by the first cloud's\n"
    "rounded bounding-box minimum, in double, before rounding to float: --shift X,Y,Z\n"
    "sets the shift, --no-shift keeps the coordinates as they are.\n";

static int cmd_fps(int argc, char **argv)
{
    run_args a = {0};
    int rc = parse_run_args(argc, argv, "i:m:o:s:t:S:Nh", "IiomstSNh", fps_help, &a);
    if (rc >= 0)
        return rc;
    if (!a.in_a || !a.have_m)
        return usage_error("fps needs -i FILE and -m M");
    pcb_outfile o;
    if ((rc = open_output(&a, &o)))
        return rc;
    pcb_cloud cloud = {0};
    pcb_task t = {.problem = PCB_FPS, .batch = 1, .m = a.m, .start = a.start, .opt = a.opt};
    const pcb_impl *impl = NULL;
    int32_t *idx = NULL;
    if ((rc = load(a.in_a, &cloud)) || (rc = apply_shift(&a, &cloud, NULL)))
        goto done;
    t.n = cloud.n;
    t.a = cloud.xyz;
    if ((rc = check_and_choose(a.impl, &t, &impl)))
        goto done;
    if (!(idx = malloc((size_t)t.m * sizeof *idx))) {
        rc = report(pcb_fail(PCB_ENOMEM, "no memory for %lld indices", (long long)t.m), "fps");
        goto done;
    }
    pcb_result r = {.index = idx};
    if ((rc = run_task(impl, &t, &r)))
        goto done;
    for (int64_t i = 0; i < t.m; i++)
        fprintf(o.f, "%" PRId32 "\n", idx[i]);
    rc = pcb_out_commit(&o);
    rc = rc == PCB_OK ? 0 : report(rc, "fps");
done:
    pcb_out_abort(&o);
    free(idx);
    pcb_cloud_free(&cloud);
    return rc;
}

static const char nn_help[] =
    "usage: pcbench nn -r REF -q QUERY [--impl NAME] [--threads T] [--partitions P] [-o OUT]\n"
    "                  [--shift X,Y,Z | --no-shift]\n"
    "Nearest neighbour: one line per query point, '<index> <squared distance>' of its\n"
    "nearest point in REF. Without --impl the fastest available exact implementation runs.\n"
    "Geo-referenced clouds (a coordinate beyond 1e5) are shifted by the first cloud's\n"
    "rounded bounding-box minimum, in double, before rounding to float: --shift X,Y,Z\n"
    "sets the shift, --no-shift keeps the coordinates as they are.\n";

static int cmd_nn(int argc, char **argv)
{
    run_args a = {0};
    int rc = parse_run_args(argc, argv, "r:q:o:t:P:S:Nh", "IrqotPSNh", nn_help, &a);
    if (rc >= 0)
        return rc;
    if (!a.in_a || !a.in_b)
        return usage_error("nn needs -r REF and -q QUERY");
    pcb_outfile o;
    if ((rc = open_output(&a, &o)))
        return rc;
    pcb_cloud ref = {0}, qry = {0};
    const pcb_impl *impl = NULL;
    int32_t *idx = NULL;
    float *d2 = NULL;
    if ((rc = load(a.in_a, &ref)) || (rc = load(a.in_b, &qry)) ||
        (rc = apply_shift(&a, &ref, &qry)))
        goto done;
    pcb_task t = {.problem = PCB_NN, .batch = 1, .n = ref.n, .nq = qry.n, .a = ref.xyz,
                  .b = qry.xyz, .opt = a.opt};
    if ((rc = check_and_choose(a.impl, &t, &impl)))
        goto done;
    idx = malloc((size_t)qry.n * sizeof *idx);
    d2 = malloc((size_t)qry.n * sizeof *d2);
    if (!idx || !d2) {
        rc = report(pcb_fail(PCB_ENOMEM, "no memory for %lld results", (long long)qry.n), "nn");
        goto done;
    }
    pcb_result r = {.index = idx, .dist2 = d2};
    if ((rc = run_task(impl, &t, &r)))
        goto done;
    for (int64_t i = 0; i < t.nq; i++)
        fprintf(o.f, "%" PRId32 " %.9g\n", idx[i], (double)d2[i]);
    rc = pcb_out_commit(&o);
    rc = rc == PCB_OK ? 0 : report(rc, "nn");
done:
    pcb_out_abort(&o);
    free(idx);
    free(d2);
    pcb_cloud_free(&ref);
    pcb_cloud_free(&qry);
    return rc;
}

static const char emd_help[] =
    "usage: pcbench emd -a FILE_A -b FILE_B [--impl NAME] [--eps E] [--threads T] [-o OUT]\n"
    "                   [--shift X,Y,Z | --no-shift]\n"
    "Earth mover's distance between two clouds of equal size: prints 'emd <mean matched\n"
    "Euclidean distance>'. OUT (stdout after the emd line when there is no -o) gets one\n"
    "line per point of A: the index in B it is matched to (-1 if left unmatched).\n"
    "Geo-referenced clouds (a coordinate beyond 1e5) are shifted by the first cloud's\n"
    "rounded bounding-box minimum, in double, before rounding to float: --shift X,Y,Z\n"
    "sets the shift, --no-shift keeps the coordinates as they are.\n";

static int cmd_emd(int argc, char **argv)
{
    run_args a = {0};
    int rc = parse_run_args(argc, argv, "a:b:o:t:e:S:Nh", "IaboteSNh", emd_help, &a);
    if (rc >= 0)
        return rc;
    if (!a.in_a || !a.in_b)
        return usage_error("emd needs -a FILE_A and -b FILE_B");
    /* Opened first: an -o that cannot be written fails before the value is printed. */
    pcb_outfile o;
    if ((rc = open_output(&a, &o)))
        return rc;
    pcb_cloud ca = {0}, cb = {0};
    const pcb_impl *impl = NULL;
    int32_t *match = NULL;
    double value = 0;
    if ((rc = load(a.in_a, &ca)) || (rc = load(a.in_b, &cb)) || (rc = apply_shift(&a, &ca, &cb)))
        goto done;
    pcb_task t = {.problem = PCB_EMD, .batch = 1, .n = ca.n, .nq = cb.n, .a = ca.xyz,
                  .b = cb.xyz, .opt = a.opt};
    if ((rc = check_and_choose(a.impl, &t, &impl)))
        goto done;
    if (!(match = malloc((size_t)ca.n * sizeof *match))) {
        rc = report(pcb_fail(PCB_ENOMEM, "no memory for %lld results", (long long)ca.n), "emd");
        goto done;
    }
    pcb_result r = {.index = match, .value = &value};
    if ((rc = run_task(impl, &t, &r)))
        goto done;
    int64_t unmatched = 0;
    for (int64_t i = 0; i < t.n; i++)
        unmatched += match[i] < 0;
    if (unmatched)
        fprintf(stderr, "pcbench: emd %s: %lld points left unmatched\n", impl->name,
                (long long)unmatched);
    printf("emd %.9g\n", value);
    fflush(stdout);
    for (int64_t i = 0; i < t.n; i++)
        fprintf(o.f, "%" PRId32 "\n", match[i]);
    rc = pcb_out_commit(&o);
    rc = rc == PCB_OK ? 0 : report(rc, "emd");
done:
    pcb_out_abort(&o);
    free(match);
    pcb_cloud_free(&ca);
    pcb_cloud_free(&cb);
    return rc;
}

static const char check_help[] =
    "usage: pcbench check fps -i CLOUD -m M [--start S] --answer FILE\n"
    "       pcbench check nn -r REF -q QUERY --answer FILE\n"
    "       pcbench check emd -a A -b B --answer FILE [--max-gap G]\n"
    "Judge an answer made anywhere (another library, your own kernel) with the\n"
    "double-precision validators. FILE ('-': stdin) holds one answer a line: FPS the\n"
    "M sample indices in order; NN 'index [squared distance]' for every query point;\n"
    "EMD the index of B matched to each point of A. Header lines, '#' comments and CSV\n"
    "(numpy, pandas) are read. Prints 'pass' or 'FAIL: <the first thing wrong>', then\n"
    "a summary. An EMD matching must be a bijection within 1e-6 (relative) of the\n"
    "optimum of the exact solver, or within G with --max-gap G. --shift X,Y,Z and\n"
    "--no-shift work as in the other commands (see pcbench fps --help).\n"
    "Exit status: 0 right, 1 wrong, 2 usage, 3 bad input (clouds or answer file).\n";

/* The answer's verdict and a summary line; 0 right, 1 wrong. */
static int judge(const pcb_task *t, const pcb_result *r, double max_gap, int has_dist)
{
    /* an answer of unknown origin: exact, or (EMD) within the gap allowed */
    const pcb_promise promise = {.exact = t->problem != PCB_EMD, .max_gap = max_gap};
    pcb_judgement j;
    int rc = pcb_judge(t, r, &promise, NULL, &j);
    if (rc != PCB_OK)
        return report(rc, "check");
    const pcb_report rep = j.rep;
    printf(j.verdict == PCB_VERDICT_PASS ? "pass\n" : "FAIL: %s\n", j.detail);
    if (t->problem == PCB_FPS) {
        printf("fps: %lld samples of %lld points from %lld%s%s\n", (long long)t->m,
               (long long)t->n, (long long)t->start, rep.ok ? ": " : "",
               rep.ok ? rep.detail : "");
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

static int cmd_check(int argc, char **argv)
{
    pcb_problem p;
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        if (argc < 2)
            return usage_error("check needs a problem: fps, nn or emd");
        fputs(check_help, stdout);
        return 0;
    }
    if (pcb_problem_parse(argv[1], &p) != PCB_OK)
        return usage_error("unknown problem '%s' (fps, nn, emd)", argv[1]);
    run_args a = {.max_gap = 1e-6};
    const char *opts = p == PCB_FPS ? "i:m:s:A:S:Nh" : p == PCB_NN ? "r:q:A:S:Nh" : "a:b:A:G:S:Nh";
    const char *letters = p == PCB_FPS ? "imsASNh" : p == PCB_NN ? "rqASNh" : "abAGSNh";
    int rc = parse_run_args(argc - 1, argv + 1, opts, letters, check_help, &a);
    if (rc >= 0)
        return rc;
    if (!a.answer)
        return usage_error("check needs --answer FILE");
    if (p == PCB_FPS ? !a.in_a || !a.have_m : !a.in_a || !a.in_b)
        return usage_error(p == PCB_FPS  ? "check fps needs -i CLOUD and -m M"
                           : p == PCB_NN ? "check nn needs -r REF and -q QUERY"
                                         : "check emd needs -a A and -b B");
    pcb_cloud ca = {0}, cb = {0};
    if ((rc = load(a.in_a, &ca)) || (p != PCB_FPS && (rc = load(a.in_b, &cb))) ||
        (rc = apply_shift(&a, &ca, p == PCB_FPS ? NULL : &cb))) {
        pcb_cloud_free(&ca);
        pcb_cloud_free(&cb);
        return rc;
    }
    pcb_task t = {.problem = p, .batch = 1, .n = ca.n, .nq = p == PCB_FPS ? 0 : cb.n,
                  .m = p == PCB_FPS ? a.m : 0, .start = a.start, .a = ca.xyz, .b = cb.xyz};
    const int64_t count = pcb_answer_count(&t);
    int32_t *idx = NULL;
    double *val = NULL;
    float *d2 = NULL;
    int has = 0;
    if ((rc = pcb_task_check(&t)) != PCB_OK)
        rc = report(rc, "check");
    else if (!(idx = malloc((size_t)count * sizeof *idx)) ||
             !(val = malloc((size_t)count * sizeof *val)) ||
             !(d2 = malloc((size_t)count * sizeof *d2)))
        rc = report(pcb_fail(PCB_ENOMEM, "no memory for %lld answers", (long long)count), "check");
    else if ((rc = pcb_read_answers(a.answer, count, idx, val, &has)) != PCB_OK)
        rc = report(rc, NULL);
    else if (has && p != PCB_NN)
        rc = report(pcb_fail(PCB_EBADFILE, "%s: %s answers are one index a line, these have two "
                                           "fields", a.answer, pcb_problem_name(p)), NULL);
    else {
        for (int64_t i = 0; has && i < count; i++)
            d2[i] = (float)val[i];
        pcb_result r = {.index = idx, .dist2 = has ? d2 : NULL};
        if (p == PCB_EMD) { /* the gap to the optimum, whatever n */
            char n[32];
            snprintf(n, sizeof n, "%lld", (long long)t.n);
            setenv("PCB_EMD_GAP_MAX_N", n, 1);
        }
        rc = judge(&t, &r, a.max_gap, has);
    }
    free(idx), free(val), free(d2);
    pcb_cloud_free(&ca);
    pcb_cloud_free(&cb);
    return rc;
}

static const char verify_help[] =
    "usage: pcbench verify [--problem fps|nn|emd] [--impl NAME] [--large] [--defects]\n"
    "Run every available implementation over the problem's matrix of datasets and\n"
    "print a pass/fail table (with each run's time, host to host). Exit status 1\n"
    "if anything fails. --large (with --impl) adds the NN cases of a million\n"
    "points against a million: a lidar sweep and uniform, all-equal, duplicated,\n"
    "collinear and 3,000 km offset clouds. --defects then runs the same matrices on\n"
    "the planted defects of the catalog (pcbench list --defects) and exits 0 only when\n"
    "every defect is caught somewhere and no real implementation failed.\n";

/* The verify matrix of one problem (or of all: -1); the failures, or a
 * negative status. */
static int verify_problems(int problem, const char *impl)
{
    int (*const run[PCB_NPROBLEMS])(const char *, FILE *) = {pcb_verify_fps, pcb_verify_nn,
                                                             pcb_verify_emd};
    int failures = 0;
    for (int p = 0; p < PCB_NPROBLEMS; p++) {
        if (problem >= 0 && p != problem)
            continue;
        int rc = run[p](impl, stdout);
        if (rc < 0)
            return rc;
        failures += rc;
    }
    return failures;
}

static int cmd_verify(int argc, char **argv)
{
    static const struct option opts[] = {{"problem", required_argument, 0, 'p'},
                                         {"impl", required_argument, 0, 'I'},
                                         {"large", no_argument, 0, 'L'},
                                         {"defects", no_argument, 0, 'D'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *problem = NULL, *impl = NULL;
    int c, large = 0, defects = 0;
    optind = 1;
    while ((c = pcb_getopt(argc, argv, command, "p:h", opts)) != -1) {
        switch (c) {
        case 'p': problem = optarg; break;
        case 'I': impl = optarg; break;
        case 'L': large = 1; break;
        case 'D': defects = 1; break;
        case 'h': fputs(verify_help, stdout); return 0;
        default: return PCB_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    pcb_problem only = PCB_FPS;
    if (problem && pcb_problem_parse(problem, &only) != PCB_OK)
        return usage_error("%s", pcb_errmsg());
    if (impl && !problem)
        return usage_error("--impl needs --problem");
    if (impl && !pcb_verify_impl_known(only, impl)) /* as fps --impl and bench --impl say */
        return usage_error("unknown %s implementation '%s'", pcb_problem_name(only), impl);
    if (large && !impl)
        return usage_error("--large needs --impl (brute force cannot do 1M x 1M)");
    if (defects && (impl || large))
        return usage_error("--defects runs every implementation and every planted defect");
    pcb_verify_set_large(large);
    const int which = problem ? (int)only : -1; /* -1: every problem */
    int failures = verify_problems(which, impl);
    if (failures < 0)
        return report(failures, "verify");
    int known = pcb_verify_known_defects();
    printf("verify: %d failure%s", failures, failures == 1 ? "" : "s");
    if (known)
        printf(" (%d answer%s showed a known defect of a reproduced original)", known,
               known == 1 ? "" : "s");
    putchar('\n');
    if (!defects)
        return failures ? PCB_EXIT_VERIFY : 0;
    /* The same matrices again, on the planted defects. */
    pcb_verify_set_defects(1);
    int rc = verify_problems(which, NULL);
    if (rc < 0)
        return report(rc, "verify");
    int missed = pcb_verify_defect_report(stdout, which);
    pcb_verify_set_defects(0);
    printf("verify --defects: %d failure%s of real implementations, %d defect%s missed\n",
           failures, failures == 1 ? "" : "s", missed, missed == 1 ? "" : "s");
    return failures || missed ? PCB_EXIT_VERIFY : 0;
}

static const char main_help[] =
    "usage: pcbench COMMAND [options]   (pcbench COMMAND --help for each)\n"
    "  list                      implementations and whether they can run here\n"
    "  gen KIND -n N -o FILE     write a generated cloud (binary PLY)\n"
    "  fps -i FILE -m M          farthest point sampling\n"
    "  nn -r REF -q QUERY        nearest neighbour of each query point\n"
    "  emd -a A -b B             earth mover's distance by assignment\n"
    "  verify [--problem P]      verify every implementation\n"
    "  check fps|nn|emd ...      judge an answer file made anywhere (pass / FAIL)\n"
    "  bench [--suite S]         time implementations (Google Benchmark)\n"
    "  count [--suite S]         instructions per compute of the CPU implementations\n"
    "Exit status: 0 ok, 1 verification failure, 2 usage, 3 bad input,\n"
    "4 unsupported or unavailable, 5 device or system error.\n";

/* An interrupted run removes the temporary file it was writing (where the
 * file system has no unnamed files), then dies of the signal as it would. */
static void on_signal(int sig)
{
    pcb_out_signal_cleanup();
    signal(sig, SIG_DFL);
    raise(sig);
}

int main(int argc, char **argv)
{
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa = {.sa_handler = on_signal};
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {{"list", cmd_list},     {"gen", cmd_gen},       {"fps", cmd_fps},
                {"nn", cmd_nn},         {"emd", cmd_emd},       {"verify", cmd_verify},
                {"check", cmd_check},   {"bench", pcb_bench_main}, {"count", pcb_count_main}};
    if (argc < 2)
        return usage_error("no command given");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(main_help, stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (strcmp(argv[1], cmds[i].name) == 0) {
            command = cmds[i].name;
            return cmds[i].fn(argc - 1, argv + 1);
        }
    return usage_error("unknown command '%s'", argv[1]);
}
