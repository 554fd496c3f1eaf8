/* bench_run.c - one configuration: for each implementation, check it can
 * run, predict its time against the budget, run it once and judge the
 * answer; then time every verified one (bench_time.c). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/problems/problems.h"
#include "bench_run.h"

/* The validator reads only these of a promise (the other rules are cheap,
 * and applied again). */
static int same_validation(const pcb_promise *a, const pcb_promise *b)
{
    return a->exact == b->exact && a->max_gap == b->max_gap;
}

/* An earlier answer of this configuration that is r bit for bit, validated
 * under the same promise: its validator's report is r's, and validating it
 * again would cost as much as the first time (FPS's validator replays every
 * step over every point). */
static const timed *judged_before(const pcb_task *t, const pcb_result *r, const pcb_promise *p,
                                  const timed *earlier, int nearlier)
{
    for (int i = 0; i < nearlier; i++)
        if (same_validation(&earlier[i].promise, p) && pcb_result_equal(t, r, &earlier[i].verified.r))
            return &earlier[i];
    return NULL;
}

/* The verification run, timed phase by phase with the wall clock, and its
 * answer judged (the reference's answer for the canonical rule, or NULL
 * and why it is missing), with the validator's report of an equal earlier
 * answer where there is one. Returns the name of the implementation whose
 * report it took, or NULL. */
static const char *verify(const pcb_impl *im, const pcb_task *t, bench_entry *e, timed *kept,
                          const bench_fault *fault, const int32_t *reference, const char *why,
                          const timed *earlier, int nearlier)
{
    void *state = NULL;
    pcb_result r = bench_outputs_result(&kept->verified);
    double t0 = bench_now(), t1 = t0, t2 = t0, t3 = t0;
    const char *phase = "prepare";
    int rc = bench_life_prepare(im, t, &state);
    if (rc == PCB_OK) {
        t1 = bench_now();
        phase = "compute";
        if ((rc = bench_life_compute(im, t, state)) == PCB_OK)
            rc = bench_life_sync(im, t, state);
    }
    if (rc == PCB_OK) {
        t2 = bench_now();
        phase = "fetch";
        rc = bench_life_fetch(im, t, state, &r);
        t3 = bench_now();
    }
    e->counters.distance_evals = e->counters.bids = e->counters.iterations = -1;
    if (rc == PCB_OK) {
        phase = "counters";
        rc = bench_life_counters(im, t, state, &e->counters);
    }
    char msg[300];
    snprintf(msg, sizeof msg, "%s", pcb_errmsg());
    if (state)
        bench_life_release(im, t, state);
    e->total_s = bench_now() - t0;
    if (rc != PCB_OK) {
        bench_set_status(e, bench_status_for(rc), "%s: %s: %s", phase, pcb_strerror(rc), msg);
        return NULL;
    }
    e->prepare_s = t1 - t0, e->compute_s = t2 - t1, e->fetch_s = t3 - t2;
    if (fault->count) {
        int64_t *c[3] = {&e->counters.distance_evals, &e->counters.bids, &e->counters.iterations};
        for (int i = 0; i < 3; i++)
            if (*c[i] >= 0)
                *c[i] += fault->count;
    }
    if (fault->ties && (rc = bench_fault_plant_ties(t, r.index)) != PCB_OK) {
        bench_set_status(e, ST_FAILED_RUN, "ties fault: %s", pcb_errmsg());
        return NULL;
    }
    kept->verified.r.has_price = r.has_price;
    kept->promise = pcb_promise_of(im, t);
    const timed *before = judged_before(t, &r, &kept->promise, earlier, nearlier);
    pcb_judgement j;
    rc = before ? pcb_judge_with_report(t, &r, &kept->promise, reference, &before->judgement.rep, &j)
                : pcb_judge(t, &r, &kept->promise, reference, &j);
    if (rc != PCB_OK) {
        bench_set_status(e, rc == PCB_EUNAVAIL ? ST_UNAVAILABLE : ST_FAILED_RUN, "%s", j.detail);
        return NULL;
    }
    kept->judgement = j;
    e->have_rep = 1;
    e->rep = j.rep;
    e->rep.ok = j.verdict == PCB_VERDICT_PASS;
    /* a known defect (pcb_impl.known_defect) is timed, as verify reports it:
     * shown, not counted as a failure */
    bench_set_status(e, j.verdict == PCB_VERDICT_FAIL ? ST_FAILED_VERIFY : ST_OK, "%s%s%s%s",
                     bench_life_each(im, t) ? "one call a cloud (lengths not read): " : "",
                     j.detail, j.compared < 0 && why ? ": " : "", j.compared < 0 && why ? why : "");
    snprintf(e->rep.detail, sizeof e->rep.detail, "%.255s", e->detail);
    return before ? before->im->name : NULL;
}

/* The reference's answer for the canonical rule (FPS: dp's sequence), once
 * per configuration when an implementation needs it: the reference's own
 * verified answer when it ran first in this configuration, else a run of it
 * made for the purpose. */
typedef struct {
    const int32_t *index; /* NULL when not at hand */
    int32_t *owned;       /* index, when made here */
    char why[200];        /* when not at hand, why not, in words */
} reference_answer;

/* The reference the canonical rule needs for any of the pending ones, or NULL. */
static const pcb_impl *reference_needed(const pcb_task *task, const pcb_impl *const *pending,
                                        int np)
{
    const pcb_impl *ref = NULL;
    for (int i = 0; i < np && !ref; i++) {
        const pcb_promise p = pcb_promise_of(pending[i], task);
        ref = pcb_judge_reference(task, &p);
    }
    return ref;
}

static void reference_answer_make(bench_ctx *ctx, const pcb_task *task, double budget,
                                  const pcb_impl *ref, reference_answer *ra)
{
    const double predicted = bench_predict(ctx, ref, ctx->cfg);
    int rc;
    if (pcb_impl_available(ref) != PCB_OK || pcb_task_fits(ref, task) != PCB_OK) {
        snprintf(ra->why, sizeof ra->why, "%s cannot run it: %s", ref->name, pcb_errmsg());
        return;
    }
    if (predicted > budget) {
        snprintf(ra->why, sizeof ra->why, "%s would take about %.3g s, over the budget of %g s",
                 ref->name, predicted, budget);
        return;
    }
    if (predicted > 1)
        bench_progress(ctx, "%s %s: the reference answer (about %.1f s)", ctx->cfg->id, ref->name,
                       predicted);
    pcb_result r = {.index = malloc((size_t)pcb_answer_count(task) * sizeof *r.index)};
    if (!r.index)
        rc = pcb_fail(PCB_ENOMEM, "out of memory");
    else
        rc = pcb_run(ref, task, &r, NULL);
    if (rc != PCB_OK) {
        snprintf(ra->why, sizeof ra->why, "%s failed: %s", ref->name, pcb_errmsg());
        free(r.index);
        return;
    }
    ra->index = ra->owned = r.index;
}

/* Check, predict and verify one implementation; 1 when it is to be timed. */
static int prepare_entry(bench_ctx *ctx, const pcb_impl *im, const pcb_task *task,
                         const pcb_task *timing, const reference_answer *ref, bench_entry *e,
                         timed *t, const timed *earlier, int nearlier)
{
    const bench_config *cfg = ctx->cfg;
    double budget = e->budget_s;
    int rc;
    if ((rc = pcb_impl_available(im)) != PCB_OK) {
        bench_set_status(e, ST_UNAVAILABLE, "%s", pcb_errmsg());
        return 0;
    }
    if ((rc = pcb_task_fits(im, task)) != PCB_OK) {
        bench_set_status(e, ST_UNSUPPORTED, "%s", pcb_errmsg());
        return 0;
    }
    e->predicted_s = bench_predict(ctx, im, cfg);
    if (e->predicted_s > budget) {
        bench_set_status(e, ST_SKIPPED_BUDGET, "predicted %.3g s per run, over the budget of %g s",
                   e->predicted_s, budget);
        bench_progress(ctx, "%s %s: skipped (%s)", cfg->id, im->name, e->detail);
        return 0;
    }
    if (e->predicted_s > 1)
        bench_progress(ctx, "%s %s: verifying (about %.1f s)", cfg->id, im->name, e->predicted_s);
    memset(t, 0, sizeof *t);
    if ((rc = bench_outputs_alloc(&t->verified, task)) != PCB_OK ||
        (rc = bench_outputs_alloc(&t->scratch, task)) != PCB_OK) {
        bench_set_status(e, ST_UNSUPPORTED, "harness: %s", pcb_errmsg());
        bench_outputs_free(&t->verified);
        bench_outputs_free(&t->scratch);
        return 0;
    }
    const bench_fault fault = bench_fault_for(ctx->faults, ctx->nfaults, im);
    t->slow = fault.slow;
    char step[200];
    snprintf(step, sizeof step, "verifying %s %s", cfg->id, im->name);
    bench_step(step, e->predicted_s);
    const char *same_as = verify(im, task, e, t, &fault, ref->index, ref->why, earlier, nearlier);
    bench_step(NULL, 0);
    bench_utc_now(e->when, sizeof e->when);
    if (e->status == ST_OK || e->status == ST_FAILED_VERIFY)
        bench_calib_note(ctx->calib, im, cfg, e->total_s);
    bench_progress(ctx, "%s %s: %s in %.3g s%s%s%s%s%s", cfg->id, im->name,
                   e->status == ST_OK ? "verified" : bench_status_name(e->status), e->total_s,
                   same_as ? " (the answer of " : "", same_as ? same_as : "",
                   same_as ? " bit for bit: its validation)" : "", e->detail[0] ? ": " : "",
                   e->detail);
    if (e->status == ST_OK && e->total_s > budget) {
        bench_set_status(e, ST_SKIPPED_BUDGET, "one run took %.3g s, over the budget of %g s: verified, "
                   "not timed", e->total_s, budget);
        bench_figure_from_run(&e->e2e, e->total_s);
    }
    if (e->status != ST_OK) {
        bench_outputs_free(&t->verified);
        bench_outputs_free(&t->scratch);
        return 0;
    }
    t->ctx = ctx;
    t->im = im;
    t->task = timing;
    t->e = e;
    t->manual = im->device == PCB_CUDA && im->device_ms;
    /* A warm-up compute per repetition where it is cheap: GPU first launches
     * load modules and clocks ramp up; short CPU runs want warm caches. */
    t->warmup = e->compute_s <= (im->device == PCB_CUDA ? 1.0 : 0.05);
    t->points = bench_face(cfg->problem)->points(cfg);
    t->pairs = bench_face(cfg->problem)->pairs ? bench_face(cfg->problem)->pairs(cfg) : 0;
    return 1;
}

int bench_run_config(bench_ctx *ctx, bench_result *r)
{
    const bench_config *cfg = &r->config;
    const bench_opts *o = ctx->opt;
    const double budget = bench_run_budget(ctx, cfg->problem, NULL);
    const char *ref = bench_reference(cfg->problem);
    snprintf(r->reference, sizeof r->reference, "%s", ref ? ref : "");

    const pcb_impl *pending[64];
    int np = 0, kept = 0;
    for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
        const pcb_impl *im = *it;
        if (im->problem != cfg->problem || !bench_listed(o->impls, im->name))
            continue;
        bench_entry *e = bench_result_entry(r, im->name, 1);
        if (!e)
            return pcb_fail(PCB_ENOMEM, "out of memory");
        /* Also kept: unavailable before and still unavailable (no device). */
        if (!o->force && (bench_entry_final(e, budget, ctx->env, o) ||
                          (e->status == ST_UNAVAILABLE && pcb_impl_available(im) != PCB_OK))) {
            kept++;
            continue;
        }
        memset(e, 0, sizeof *e);
        snprintf(e->impl, sizeof e->impl, "%s", im->name);
        e->device = im->device;
        e->exact = im->promise.exact;
        e->budget_s = bench_run_budget(ctx, cfg->problem, im->name);
        e->predicted_s = -1;
        e->fresh = 1;
        bench_utc_now(e->when, sizeof e->when);
        snprintf(e->git, sizeof e->git, "%s", ctx->env->git);
        snprintf(e->build, sizeof e->build, "%s", ctx->env->build);
        snprintf(e->host, sizeof e->host, "%s", ctx->env->host);
        if (im->device == PCB_CUDA) /* which of the host's GPUs ran it */
            snprintf(e->gpu_bus, sizeof e->gpu_bus, "%s", ctx->env->gpu_bus);
        if (cfg->max_gap > 0 && !im->gap_option) /* loss mode: its figure is the one without */
            bench_set_status(e, ST_UNSUPPORTED, "no max_gap option: it answers as on %.*s",
                             (int)(strrchr(cfg->id, '/') - cfg->id), cfg->id);
        else if (np < 64)
            pending[np++] = im;
    }
    for (const pcb_missing *m = pcb_not_built(); m->name; m++) {
        if (strcmp(m->problem, pcb_problem_name(cfg->problem)) != 0 ||
            !bench_listed(o->impls, m->name))
            continue;
        bench_entry *e = bench_result_entry(r, m->name, 1);
        if (!e)
            return pcb_fail(PCB_ENOMEM, "out of memory");
        if (e->status == ST_UNAVAILABLE && !o->force)
            continue;
        e->device = m->device;
        e->fresh = 1;
        bench_set_status(e, ST_UNAVAILABLE, "not built (%s was not found)", m->needs);
    }
    if (np == 0)
        return PCB_OK;
    if (!kept) /* nothing of earlier runs is left: their reports go too */
        json_free(&r->gbench);

    bench_data d;
    bench_config data = *cfg; /* a ties fault wants clouds with duplicated points */
    if (bench_fault_ties(ctx->faults, ctx->nfaults, cfg->problem))
        data.dataset = "duplicates";
    int rc = bench_data_make(&data, &d);
    if (rc != PCB_OK) {
        for (int i = 0; i < np; i++)
            bench_set_status(bench_result_entry(r, pending[i]->name, 0),
                       rc == PCB_ENOMEM ? ST_UNSUPPORTED : ST_UNAVAILABLE, "dataset %s: %s",
                       cfg->dataset, pcb_errmsg());
        bench_progress(ctx, "%s: dataset unavailable: %s", cfg->id, pcb_errmsg());
        return PCB_OK;
    }
    pcb_task task = bench_task_of(cfg, &d);
    pcb_task timing = task; /* verified with every thread, maybe timed on fewer */
    timing.opt.threads = o->have_threads ? o->threads : ctx->suite->threads;
    timed *tv = calloc((size_t)np, sizeof *tv);
    if (!tv) {
        bench_data_free(&d);
        return pcb_fail(PCB_ENOMEM, "out of memory");
    }
    /* The reference first, when it is pending: its verified answer is the one
     * the canonical ones are compared with. */
    reference_answer answer_of_ref = {0};
    const pcb_impl *needed = reference_needed(&task, pending, np);
    int nt = 0, first = -1;
    for (int i = 0; i < np && needed; i++)
        if (pending[i] == needed)
            first = i;
    if (first >= 0) {
        const bench_entry *e = bench_result_entry(r, needed->name, 0);
        if (prepare_entry(ctx, needed, &task, &timing, &answer_of_ref,
                          bench_result_entry(r, needed->name, 0), &tv[nt], tv, 0))
            answer_of_ref.index = tv[nt++].verified.r.index;
        else if (e->status == ST_FAILED_VERIFY || e->status == ST_FAILED_RUN)
            snprintf(answer_of_ref.why, sizeof answer_of_ref.why,
                     "%s's own answer failed: %.150s", needed->name, e->detail);
    }
    if (needed && !answer_of_ref.index && !answer_of_ref.why[0])
        reference_answer_make(ctx, &task, budget, needed, &answer_of_ref);
    for (int i = 0; i < np; i++)
        if (i != first)
            nt += prepare_entry(ctx, pending[i], &task, &timing, &answer_of_ref,
                                bench_result_entry(r, pending[i]->name, 0), &tv[nt], tv, nt);
    free(answer_of_ref.owned);
    if (nt > 0)
        bench_time_all(ctx, r, tv, nt);
    for (int i = 0; i < nt; i++) {
        bench_outputs_free(&tv[i].verified);
        bench_outputs_free(&tv[i].scratch);
    }
    free(tv);
    bench_data_free(&d);
    return PCB_OK;
}
