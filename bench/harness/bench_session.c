/* bench_session.c - one `pcbench bench` session: the stored results read
 * back (resume) and the predictions calibrated on them, the configurations
 * run and each written as soon as it is done, then the instruction counts,
 * the baseline, the gate and the comparison. The command (cli/bench.c)
 * parses the options, calls these in order and prints the summary. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

int bench_session_open(bench_session *s, const bench_opts *o, const bench_suite *suite)
{
    memset(s, 0, sizeof *s);
    s->opt = o;
    s->suite = suite;
    s->run_budget = o->have_run_budget ? o->run_budget : suite->run_budget;
    s->budget = o->have_budget ? o->budget : suite->budget;
    int rc = bench_env_collect(&s->env, o->machine);
    if (rc != PCB_OK)
        return rc;
    s->have_env = 1;
    /* Where results go: none for the gate, the baseline folder, or the machine's. */
    if (o->baseline_out)
        snprintf(s->store, sizeof s->store, "%s", o->baseline_out);
    else if (!o->regress_dir)
        snprintf(s->store, sizeof s->store, "%s/%s", o->results_dir, s->env.machine);
    s->res = calloc((size_t)suite->count, sizeof *s->res);
    s->calib = bench_calib_new();
    if (!s->res || !s->calib)
        return pcb_fail(PCB_ENOMEM, "out of memory");
    for (int i = 0; i < suite->count; i++) {
        const bench_config *c = &suite->configs[i];
        if (!bench_selected(o, c))
            continue;
        bench_result *r = &s->res[s->count++];
        r->config = *c;
        r->load_avg = -1;
        char path[1024];
        /* A baseline is written afresh; elsewhere --force re-runs the selected
         * implementations and keeps the stored results of the others. */
        if (!s->store[0] || o->baseline_out ||
            bench_store_path(s->store, suite->name, c, path, sizeof path))
            continue;
        int lr = bench_store_read(path, r);
        if (lr == PCB_EUNSUPPORTED) /* another format: refused, never overwritten */
            return lr;
        if (lr != PCB_OK && !(lr == PCB_EIO && errno == ENOENT)) {
            fprintf(stderr, "pcbench: bench: ignoring stored %s: %s\n", path, pcb_errmsg());
            bench_result_free(r);
            r->config = *c;
            r->load_avg = -1;
        }
        /* A file that says another CPU or GPU measured it is measured again
         * here, whatever its entries' host says. */
        if (lr == PCB_OK && (strcmp(r->cpu, s->env.cpu) != 0 || strcmp(r->gpu, s->env.gpu) != 0))
            for (int k = 0; k < r->count; k++)
                r->entries[k].host[0] = '\0';
        for (int k = 0; k < r->count; k++) /* stored runs calibrate the predictions */
            if (r->entries[k].status == ST_OK || r->entries[k].status == ST_SKIPPED_BUDGET)
                bench_calib_note(s->calib, pcb_find(c->problem, r->entries[k].impl), c,
                                 r->entries[k].total_s);
    }
    if (s->count == 0)
        return pcb_fail(PCB_EINVAL, "no configuration of suite %s matches", suite->name);
    /* A results folder that cannot be written is said before any work. */
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/%s", s->store, suite->name);
    if (s->store[0] && !o->list_only &&
        (bench_mkdirs(dir) != PCB_OK || access(dir, W_OK) != 0))
        return pcb_fail(PCB_EBADFILE, "results folder %s cannot be written: %s", dir,
                        strerror(errno));
    return PCB_OK;
}

static double sum_of(const double *v, int n)
{
    double t = 0;
    for (int i = 0; i < n; i++)
        t += v[i];
    return t;
}

static int write_result(const bench_session *s, const bench_result *r)
{
    char path[1024];
    int rc = bench_store_path(s->store, s->suite->name, &r->config, path, sizeof path);
    if (rc != PCB_OK)
        return rc;
    return s->opt->baseline_out ? bench_store_write(path, s->suite->name, &s->env, r)
                                : bench_store_merge(path, s->suite->name, &s->env, r);
}

/* When the run should end: the predictions of the configurations still to
 * come, scaled by how the finished ones went against theirs; under a budget,
 * its end, unless the verifications alone take longer. */
typedef struct { /* of the finished configurations */
    double verify_predicted, verify_taken, timing_most, timing_taken;
} progress_so_far;

static double scale_of(double taken, double predicted)
{
    return predicted > 1 ? fmin(fmax(taken / predicted, 0.25), 4) : 1;
}

static double expected_end(const bench_session *s, const bench_ctx *ctx, int i,
                           const progress_so_far *p)
{
    const double now = bench_now(), spent = now - ctx->started;
    double verify = 0, most = 0;
    for (int j = i; j < s->count; j++)
        verify += s->verify_cost[j], most += s->timing_most[j];
    verify *= scale_of(p->verify_taken, p->verify_predicted);
    double timing = most * scale_of(p->timing_taken, p->timing_most);
    if (s->budget > 0) /* the timing gets what the verifications leave of the budget */
        timing = fmin(timing, fmax(s->budget - spent - verify, 0));
    return now + verify + timing;
}

/* Ctrl-C: where the run stopped and how to go on, then the default action.
 * The message is written before each configuration (a handler may only write). */
static char interrupted[400];
static size_t interrupted_len;

static void on_interrupt(int sig)
{
    if (write(STDERR_FILENO, interrupted, interrupted_len) < 0) {
        /* nothing more to say */
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void say_where(const bench_session *s, int i)
{
    int n = snprintf(interrupted, sizeof interrupted,
                     "\npcbench: bench: interrupted during %s (%d of %d); %d configuration%s "
                     "before it %s stored in %s: run the same command again (make bench) to "
                     "go on from there\n",
                     s->res[i].config.id, i + 1, s->count, i, i == 1 ? "" : "s",
                     i == 1 ? "is" : "are", s->store[0] ? s->store : "(nowhere: this run stores nothing)");
    interrupted_len = n < 0 ? 0 : (size_t)n >= sizeof interrupted ? sizeof interrupted - 1 : (size_t)n;
}

/* The load average when it says other work shares the cores. */
static void say_load(const bench_ctx *ctx, int cores)
{
    const double one = bench_load_average();
    if (cores > 0 && one > cores)
        bench_progress(ctx, "load average %.1f on %d cores: other work shares this host, so CPU "
                       "figures will be noisier (the stored load says so; short ones marked ~)",
                       one, cores);
}

static int run_one(bench_session *s, bench_ctx *ctx, int i, progress_so_far *so_far);

int bench_session_run(bench_session *s, const bench_fault *faults, int nfaults)
{
    const bench_opts *o = s->opt;
    bench_ctx ctx = {.opt = o, .suite = s->suite, .env = &s->env, .calib = s->calib,
                     .faults = faults, .nfaults = nfaults, .started = bench_now(),
                     .total = s->count, .budget = s->budget};
    s->ran = s->count;
    /* What each configuration should take: the ETA, and the budget's shares. */
    s->verify_cost = calloc((size_t)s->count, sizeof *s->verify_cost);
    s->timing_cost = calloc((size_t)s->count, sizeof *s->timing_cost);
    s->timing_most = calloc((size_t)s->count, sizeof *s->timing_most);
    if (!s->verify_cost || !s->timing_cost || !s->timing_most)
        return pcb_fail(PCB_ENOMEM, "out of memory");
    double total = 0;
    progress_so_far so_far = {0};
    for (int i = 0; i < s->count; i++) {
        ctx.index = i;
        ctx.cfg = &s->res[i].config;
        total += bench_predict_config(&ctx, &s->res[i], &s->verify_cost[i], &s->timing_cost[i],
                                      &s->timing_most[i]);
    }
    ctx.verify_cost = s->verify_cost;
    ctx.timing_cost = s->timing_cost;
    ctx.index = 0;
    ctx.started = bench_now(); /* the budget, --max-time and the clock count from here */
    ctx.expected_end = expected_end(s, &ctx, 0, &so_far);
    say_load(&ctx, s->env.cores);
    if (s->budget > 0)
        bench_progress(&ctx, "predicted %.0f s (verification %.0f s); budget %g s, spread over "
                       "the configurations' figures", total, total - sum_of(s->timing_cost, s->count),
                       s->budget);
    else
        bench_progress(&ctx, "predicted %.0f s to %.0f s", total,
                       sum_of(s->verify_cost, s->count) + sum_of(s->timing_most, s->count));
    void (*saved)(int) = signal(SIGINT, on_interrupt);
    bench_heartbeat_start();
    int rc = PCB_OK;
    for (int i = 0; i < s->count && rc == PCB_OK; i++) {
        ctx.index = i;
        ctx.cfg = &s->res[i].config;
        if (o->max_time > 0 && bench_now() - ctx.started > o->max_time) {
            s->ran = i;
            break;
        }
        say_where(s, i);
        rc = run_one(s, &ctx, i, &so_far);
    }
    bench_heartbeat_stop();
    signal(SIGINT, saved == SIG_ERR ? SIG_DFL : saved);
    if (rc != PCB_OK)
        return rc;
    for (int i = 0; i < s->ran; i++)
        for (int k = 0; k < s->res[i].count; k++)
            if (s->res[i].entries[k].status == ST_FAILED_VERIFY ||
                s->res[i].entries[k].status == ST_FAILED_RUN)
                s->failed = 1;
    return PCB_OK;
}

/* One configuration: run it, weigh what it took against its predictions
 * (the ETA and the budget's shares), store it. */
static int run_one(bench_session *s, bench_ctx *ctx, int i, progress_so_far *so_far)
{
    if (i > 0)
        ctx->expected_end = expected_end(s, ctx, i, so_far);
    ctx->verify_scale = scale_of(so_far->verify_taken, so_far->verify_predicted);
    ctx->cfg_started = bench_now();
    int rc = bench_run_config(ctx, &s->res[i]);
    if (rc != PCB_OK)
        return pcb_fail(rc, "%s: %s", s->res[i].config.id, pcb_errmsg());
    const double verify_before = so_far->verify_taken;
    int fresh = 0;
    for (int k = 0; k < s->res[i].count; k++) {
        const bench_entry *e = &s->res[i].entries[k];
        fresh |= e->fresh;
        if (e->fresh && e->total_s > 0)
            so_far->verify_taken += e->total_s;
    }
    so_far->verify_predicted += s->verify_cost[i];
    so_far->timing_most += s->timing_most[i];
    so_far->timing_taken +=
        fmax(bench_now() - ctx->cfg_started - (so_far->verify_taken - verify_before), 0);
    s->fresh_configs += fresh;
    if (fresh && s->store[0] && !s->opt->baseline_out)
        return write_result(s, &s->res[i]);
    return PCB_OK;
}

int bench_session_finish(bench_session *s, FILE *out)
{
    const bench_opts *o = s->opt;
    const int whole = s->ran == s->count;
    /* The gate and the baseline also count instructions, one thread, under callgrind. */
    if ((o->regress_dir || (o->baseline_out && !s->failed)) && whole) {
        fprintf(stderr, "pcbench: bench: counting instructions under callgrind...\n");
        s->counted = bench_count(s->suite->name, o->problems, o->impls, o->filter, NULL,
                                 &s->counts) == PCB_OK;
        if (!s->counted)
            snprintf(s->counts_why, sizeof s->counts_why, "%s", pcb_errmsg());
    }
    int rc;
    if (o->baseline_out && (s->failed || !whole)) {
        fprintf(out, "\nBaseline NOT written: every configuration must run and verify.\n");
        s->failed = 1;
    } else if (o->baseline_out) { /* all or nothing: a baseline with failures is useless */
        for (int i = 0; i < s->ran; i++)
            if ((rc = write_result(s, &s->res[i])) != PCB_OK)
                return rc;
        if (s->counted &&
            (rc = bench_icounts_write(s->store, s->suite->name, &s->env, &s->counts)) != PCB_OK)
            return rc;
        if (s->counted)
            fprintf(out, "\nInstruction counts of toolchain %s: %s/instructions/%s.json\n",
                    s->counts.tc.key, s->store, s->counts.tc.key);
        else
            fprintf(out, "\nInstruction counts NOT recorded: %s\n", s->counts_why);
    }
    if (s->store[0] && !s->failed)
        fprintf(out, "\nResults: %s/%s/\n", s->store, s->suite->name);
    bench_gate_opts go = {.baseline_dir = o->regress_dir, .machine = s->env.machine,
                          .tolerance = o->have_tolerance ? o->tolerance : 0.5, .alpha = o->alpha,
                          .gate_timing = o->gate_timing, .counts = s->counted ? &s->counts : NULL,
                          .counts_why = s->counts_why};
    if (o->regress_dir)
        s->regressions += bench_gate(&go, s->suite, s->res, s->ran, out);
    if (o->compare_dir) {
        const int slower = bench_compare(o->compare_dir, s->suite, s->res, s->ran,
                                         o->have_tolerance ? o->tolerance : 0.25, o->alpha, out);
        if (slower < 0) /* could not compare: pcb_errmsg() says why */
            return PCB_EUNSUPPORTED;
        s->regressions += slower;
    }
    return PCB_OK;
}

void bench_session_close(bench_session *s)
{
    bench_icounts_free(&s->counts);
    for (int i = 0; s->res && i < s->count; i++)
        bench_result_free(&s->res[i]);
    free(s->res);
    free(s->verify_cost);
    free(s->timing_cost);
    free(s->timing_most);
    bench_calib_free(s->calib);
    if (s->have_env)
        bench_env_free(&s->env);
    memset(s, 0, sizeof *s);
}
