/* common.c - what the running commands share: their options, loading the
 * clouds, choosing the implementation, the output file, reporting errors. */
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "bench/harness/harness.h"
#include "cli.h"

const char *cli_command;

int cli_report(int rc, const char *what)
{
    /* Every message names the running command first, then what failed
     * where that says more ("pcbench: check: fps: ..."). */
    if (what && cli_command && strcmp(what, cli_command) == 0)
        what = NULL;
    fprintf(stderr, "pcbench: %s: %s%s%s: %s\n", cli_command ? cli_command : "pcbench",
            what ? what : "", what ? ": " : "", pcb_strerror(rc), pcb_errmsg());
    return pcb_exit_for(rc);
}

/* Every option of the running commands; each command takes those whose
 * letter is in its own list (cli_parse_run_args), and no other. */
static const struct option run_opts[] = {
    {"impl", required_argument, 0, 'I'},     {"output", required_argument, 0, 'o'},
    {"input", required_argument, 0, 'i'},    {"samples", required_argument, 0, 'm'},
    {"start", required_argument, 0, 's'},    {"ref", required_argument, 0, 'r'},
    {"query", required_argument, 0, 'q'},    {"threads", required_argument, 0, 't'},
    {"partitions", required_argument, 0, 'P'}, {"eps", required_argument, 0, 'e'},
    {"answer", required_argument, 0, 'A'},   {"max-gap", required_argument, 0, 'G'},
    {"shift", required_argument, 0, 'S'},    {"no-shift", no_argument, 0, 'N'},
    {"convention", required_argument, 0, 'C'}, {"value", required_argument, 0, 'V'},
    {"neighbours", required_argument, 0, 'k'}, {"radius", required_argument, 0, 'R'},
    {"select", required_argument, 0, 'L'},   {"pad", required_argument, 0, 'F'},
    {"size", required_argument, 0, 'Z'},     {"origin", required_argument, 0, 'O'},
    {"inverse", required_argument, 0, 'J'},
    {"curve", required_argument, 0, 'U'},    {"depth", required_argument, 0, 'D'},
    {"seed", required_argument, 0, 'Y'},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0}};

/* X,Y,Z into v (or, where one is allowed, X for all three): finite numbers;
 * 1 when it reads so. */
static int triple(const char *text, double v[3], int one)
{
    char *end;
    const char *p = text;
    for (int k = 0; k < 3; k++, p = end + 1) {
        errno = 0;
        v[k] = strtod(p, &end);
        if (errno || end == p || !isfinite(v[k]))
            return 0;
        if (k == 0 && one && *end == '\0') {
            v[1] = v[2] = v[0];
            return 1;
        }
        if (*end != (k < 2 ? ',' : '\0'))
            return 0;
    }
    return 1;
}

/* Parse a running command's options: shortopts as getopt's, letters the
 * options (short or long) it takes. Returns -1 to go on, else an exit
 * status. */
int cli_parse_run_args(int argc, char **argv, const char *shortopts, const char *letters,
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
    bench_tuning_env(&a->opt);
    optind = 1;
    while ((c = pcb_getopt(argc, argv, cli_command, shortopts, own)) != -1) {
        switch (c) {
        case 'I': a->impl = optarg; break;
        case 'o': a->out = optarg; break;
        case 'i':
        case 'r':
        case 'a': a->in_a = optarg; break;
        case 'q':
        case 'b': a->in_b = optarg; break;
        /* One rule for numbers: outside what the option allows whatever the
         * input, a usage error (2); beyond this input (m > n, start >= n),
         * bad input (3, the task check's). */
        case 'm':
            if (!pcb_opt_i64(cli_command, "-m", optarg, 1, PCB_MAX_POINTS, &a->m))
                return PCB_EXIT_USAGE;
            a->have_m = 1;
            break;
        case 'k':
            if (!pcb_opt_i64(cli_command, "-k", optarg, 1, PCB_MAX_POINTS, &a->k))
                return PCB_EXIT_USAGE;
            a->have_k = 1;
            break;
        case 's':
            if (!pcb_opt_i64(cli_command, "--start", optarg, 0, PCB_MAX_POINTS - 1, &a->start))
                return PCB_EXIT_USAGE;
            break;
        case 't':
            if (!pcb_opt_i64(cli_command, "--threads", optarg, 0, 4096, &v)) return PCB_EXIT_USAGE;
            a->opt.threads = (int)v;
            break;
        case 'P':
            if (!pcb_opt_i64(cli_command, "--partitions", optarg, 1, 1000000, &v)) return PCB_EXIT_USAGE;
            a->opt.partitions = (int)v;
            break;
        case 'e':
            if (!pcb_opt_f64(cli_command, "--eps", optarg, 0, DBL_MAX, &a->opt.eps))
                return PCB_EXIT_USAGE;
            break;
        case 'A': a->answer = optarg; break;
        case 'R': { /* up to the largest whose float32 square is finite (FLT_MAX's root) */
            char *end;
            a->radius = strtod(optarg, &end);
            if (end == optarg || *end || !(a->radius > 0 && a->radius <= 1.8446742e19))
                return usage_error("--radius %s: need a number > 0 whose float32 square is "
                                   "finite (at most 1.8446742e19)", optarg);
            a->have_radius = 1;
            break;
        }
        case 'L':
            if (strchr(letters, 'Y') && strcmp(optarg, "random") == 0) /* grid's own rules */
                a->select = PCB_GRID_RANDOM;
            else if (strchr(letters, 'Y') && strcmp(optarg, "mean") == 0)
                a->select = PCB_GRID_MEAN;
            else if (pcb_ball_select_parse(optarg, &a->select) != PCB_OK)
                return usage_error("%s%s", pcb_errmsg(),
                                   strchr(letters, 'Y') ? " (grid: random and mean too)" : "");
            break;
        case 'Y': {
            int64_t v;
            if (!pcb_opt_i64(cli_command, "--seed", optarg, 0, INT64_MAX, &v))
                return PCB_EXIT_USAGE;
            a->seed = (uint64_t)v;
            break;
        }
        case 'F':
            if (strcmp(optarg, "first") != 0 && strcmp(optarg, "none") != 0)
                return usage_error("--pad takes none (-1 entries, the default) or first (the "
                                   "first hit repeated), not '%s'", optarg);
            a->pad_first = strcmp(optarg, "first") == 0;
            break;
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
        case 'Z': /* one size for every axis, or one an axis */
            if (!triple(optarg, a->cell, 1) || !(a->cell[0] > 0 && a->cell[1] > 0 &&
                                                  a->cell[2] > 0))
                return usage_error("--size takes S or SX,SY,SZ, finite sizes > 0, not '%s'",
                                   optarg);
            a->have_cell = 1;
            break;
        case 'O':
            if (!triple(optarg, a->origin, 0))
                return usage_error("--origin takes X,Y,Z, not '%s'", optarg);
            a->have_origin = 1;
            break;
        case 'J': a->inverse = optarg; break;
        case 'U':
            if (pcb_curve_parse(optarg, &a->curve) != PCB_OK)
                return usage_error("%s", pcb_errmsg());
            a->have_curve = 1;
            break;
        case 'D': {
            int64_t v;
            if (!pcb_opt_i64(cli_command, "--depth", optarg, 1, PCB_CURVE_MAX_DEPTH, &v))
                return PCB_EXIT_USAGE;
            a->depth = (int32_t)v;
            break;
        }
        case 'V':
            if (!pcb_opt_f64(cli_command, "--value", optarg, -HUGE_VAL, HUGE_VAL, &a->value))
                return PCB_EXIT_USAGE;
            a->have_value = 1;
            break;
        case 'C':
            if (pcb_chamfer_convention_parse(optarg, &a->convention) != PCB_OK)
                return usage_error("%s", pcb_errmsg());
            a->have_convention = 1;
            break;
        case 'G': /* 0: the exact optimum; check: inf, any bijection; emd: at most 1 */
            if (!pcb_opt_f64(cli_command, "--max-gap", optarg, 0,
                             strcmp(cli_command, "emd") == 0 ? 1 : HUGE_VAL, &a->max_gap))
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
int cli_apply_shift(const run_args *a, pcb_cloud *first, pcb_cloud *second)
{
    double s[3];
    return cli_apply_shift_to(a, first, second, s);
}

int cli_apply_shift_to(const run_args *a, pcb_cloud *first, pcb_cloud *second,
                       double applied[3])
{
    double *s = applied;
    s[0] = s[1] = s[2] = 0;
    if (a->have_shift)
        memcpy(s, a->shift, sizeof a->shift);
    else if (a->no_shift || pcb_shift_auto(first, s) != 1)
        return 0;
    int rc = pcb_cloud_shift(first, s);
    if (rc == PCB_OK && second)
        rc = pcb_cloud_shift(second, s);
    if (rc != PCB_OK) {
        s[0] = s[1] = s[2] = 0;
        return cli_report(rc, "--shift");
    }
    fprintf(stderr, "pcbench: shift %.17g,%.17g,%.17g subtracted from every cloud in double "
            "before rounding to float%s\n", s[0], s[1], s[2],
            a->have_shift ? "" : " (coordinates beyond 1e5; --no-shift keeps them)");
    return 0;
}

/* Pick the implementation: --impl NAME, else the fastest exact one. */
static int cli_choose_impl(const char *name, const pcb_task *t, const pcb_impl **impl)
{
    if (!name) {
        int rc = pcb_best(t, impl);
        return rc == PCB_OK ? 0 : cli_report(rc, pcb_problem_name(t->problem));
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
int cli_check_and_choose(const char *name, const pcb_task *t, const pcb_impl **impl)
{
    int rc = pcb_task_check(t);
    return rc == PCB_OK ? cli_choose_impl(name, t, impl) : cli_report(rc, cli_command);
}

/* An input that cannot be read, whatever the reason, is bad input (3). */
int cli_load(const char *path, pcb_cloud *c)
{
    int rc = pcb_load(path, c);
    if (rc == PCB_OK)
        return 0;
    cli_report(rc, NULL);
    return rc == PCB_ENOMEM ? PCB_EXIT_SYSTEM : PCB_EXIT_INPUT;
}

int cli_run_task(const pcb_impl *impl, const pcb_task *t, pcb_result *r)
{
    int rc = pcb_run(impl, t, r, NULL);
    if (rc == PCB_OK)
        return 0;
    char what[96];
    snprintf(what, sizeof what, "%s %s", pcb_problem_name(impl->problem), impl->name);
    return cli_report(rc, what);
}

/* Open -o before any work, so that an output that cannot be written costs
 * nothing and prints nothing. An -o naming an input (writing would destroy
 * it) or a name that must not be replaced (a folder, a device) is a bad
 * argument, status 3. Returns 0 or an exit status. */
int cli_open_output(const run_args *a, pcb_outfile *o)
{
    const char *in[2] = {a->in_a, a->in_b};
    for (int k = 0; k < 2; k++)
        if (in[k] && a->out && pcb_out_same_file(a->out, in[k]))
            return cli_report(pcb_fail(PCB_EINVAL, "-o %s is the input %s: writing the results "
                                   "would destroy it", a->out, in[k]), cli_command);
    int rc = pcb_out_open(o, a->out);
    return rc == PCB_OK ? 0 : cli_report(rc, cli_command);
}
