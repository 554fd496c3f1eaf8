/* bench_predict.c - what runs and what is skipped: the reference of a
 * problem (its pcb_impl entry says), which stored results are final, and
 * run-time prediction for the budget (a complexity model per implementation,
 * pcb_impl.cost, scaled from its largest measured run). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/problems/problems.h"
#include "bench_run.h"

const char *bench_reference(pcb_problem p)
{
    const pcb_impl *ref = pcb_reference(p);
    if (ref)
        return ref->name;
    const char *last = NULL; /* else the slowest exact CPU one */
    for (const pcb_impl *const *it = pcb_registry(); *it; it++)
        if ((*it)->problem == p && (*it)->promise.exact && (*it)->device == PCB_CPU)
            last = (*it)->name;
    return last;
}

/* Whether a stored figure was taken on the terms this run asks: as many
 * samples (--reps, --min-reps; a --reps figure is not what a run with a
 * noise target takes), as long a time (--figure-time). */
static int figure_meets(const bench_figure *f, const bench_opts *o)
{
    if (f->reps <= 0)
        return 1; /* none taken: nothing to fall short */
    /* a --reps figure: its count fixed, or capped below what a run may take */
    const int fixed = strcmp(f->stop, "fixed") == 0 ||
                      (strcmp(f->stop, "samples") == 0 && f->reps < MAX_SAMPLES);
    if (o->reps > 0)
        return f->reps >= o->reps;
    if (fixed || (o->min_reps > 0 && f->reps < o->min_reps))
        return 0;
    return !(o->have_figure_time && strcmp(f->stop, "time") == 0 &&
             f->seconds < 0.9 * o->figure_time);
}

int bench_entry_final(const bench_entry *e, double budget, const bench_env *env,
                      const bench_opts *o)
{
    if (strcmp(e->build, env->build) != 0 || strcmp(e->host, env->host) != 0)
        return 0; /* another build, or another host: measured again */
    if (e->status == ST_OK && !(figure_meets(&e->compute, o) &&
                                figure_meets(&e->compute_cold, o) && figure_meets(&e->e2e, o)))
        return 0;
    switch (e->status) {
    case ST_OK:
    case ST_FAILED_VERIFY:
    case ST_FAILED_RUN:
    case ST_UNSUPPORTED: return 1;
    case ST_SKIPPED_BUDGET: return e->budget_s >= budget;
    default: return 0;
    }
}

/* ---- run-time prediction ------------------------------------------------------ */
/* Work of one run in the implementation's own complexity (pcb_impl.cost;
 * pcbench.h says each model). */
static double model_units(const pcb_impl *im, const bench_config *c)
{
    double b = (double)c->batch, n = (double)c->n, nq = (double)c->nq, m = (double)c->m;
    if (bench_face(c->problem)->rows_of_k) /* more points go into a row */
        b *= 1 + (double)c->k / 32;
    switch (im->cost) {
    case PCB_COST_SAMPLES: return b * n * m;
    case PCB_COST_SAMPLES_SQUARED: return b * n * m * m / 2;
    case PCB_COST_ALL_PAIRS: return b * n * nq;
    case PCB_COST_INDEXED: return b * (n + nq) * log2(n + 2);
    case PCB_COST_GPU_PAIRS: return ceil(b / 32) * n * n * sqrt(n);
    default: return b * n * n * n; /* PCB_COST_CUBIC, and pessimistic where unset */
    }
}

/* Measured runs an implementation's later ones are predicted from: one a
 * dataset and batch size (an auction fights longer on sphere surfaces than in
 * a cube, and its work grows with n more slowly than the cubic model says
 * but with the batch as the model does), the largest of each. */
struct bench_calib {
    struct {
        const pcb_impl *impl;
        char dataset[32];
        int64_t batch;
        double units, seconds;
    } *pt;
    int count;
};

bench_calib *bench_calib_new(void)
{
    return calloc(1, sizeof(bench_calib));
}

void bench_calib_free(bench_calib *c)
{
    if (c)
        free(c->pt);
    free(c);
}

void bench_calib_note(bench_calib *c, const pcb_impl *im, const bench_config *cfg, double s)
{
    if (!c || !im || !(s > 0))
        return;
    double units = model_units(im, cfg);
    const char *dataset = cfg->dataset ? cfg->dataset : "";
    for (int i = 0; i < c->count; i++)
        if (c->pt[i].impl == im && c->pt[i].batch == cfg->batch &&
            !strncmp(c->pt[i].dataset, dataset, sizeof c->pt[i].dataset - 1)) {
            if (units >= c->pt[i].units) /* the largest run predicts best */
                c->pt[i].units = units, c->pt[i].seconds = s;
            return;
        }
    void *p = realloc(c->pt, (size_t)(c->count + 1) * sizeof *c->pt);
    if (!p)
        return;
    c->pt = p;
    c->pt[c->count].impl = im;
    snprintf(c->pt[c->count].dataset, sizeof c->pt[c->count].dataset, "%s", dataset);
    c->pt[c->count].batch = cfg->batch;
    c->pt[c->count].units = units;
    c->pt[c->count].seconds = s;
    c->count++;
}

/* The measured run most like cfg: its dataset and batch size, else its
 * dataset, else any; the largest among those. -1 when none. */
static int calib_pick(const bench_calib *c, const pcb_impl *im, const bench_config *cfg)
{
    const char *dataset = cfg->dataset ? cfg->dataset : "";
    int best = -1, best_rank = -1;
    for (int i = 0; i < c->count; i++) {
        if (c->pt[i].impl != im)
            continue;
        const int same_data = !strncmp(c->pt[i].dataset, dataset, sizeof c->pt[i].dataset - 1);
        const int rank = same_data ? 1 + (c->pt[i].batch == cfg->batch) : 0;
        if (rank > best_rank || (rank == best_rank && c->pt[i].units > c->pt[best].units))
            best = i, best_rank = rank;
    }
    return best;
}

/* A small run of the problem, twice (the first pays one-time set-up such
 * as CUDA context creation), when nothing larger was measured yet. */
static void calibrate(bench_ctx *ctx, const pcb_impl *im)
{
    bench_config cfg = bench_face(im->problem)->calibration;
    cfg.problem = im->problem, cfg.dataset = "uniform", cfg.batch = 1;
    bench_data d;
    if (bench_data_make(&cfg, &d) != PCB_OK)
        return;
    pcb_task t = bench_task_of(&cfg, &d);
    size_t count = (size_t)pcb_answer_count(&t);
    int32_t *index = malloc(count * sizeof *index);
    float *dist2 = malloc(count * sizeof *dist2);
    double value, best = INFINITY;
    pcb_result r = {.index = index, .dist2 = dist2, .value = &value};
    for (int i = 0; i < 2 && index && dist2; i++) {
        double t0 = bench_now();
        if (pcb_run(im, &t, &r, NULL) != PCB_OK)
            break;
        best = fmin(best, bench_now() - t0);
    }
    if (isfinite(best))
        bench_calib_note(ctx->calib, im, &cfg, best);
    free(index);
    free(dist2);
    bench_data_free(&d);
}

/* Seconds one run is expected to take; negative when unknown. */
double bench_predict(bench_ctx *ctx, const pcb_impl *im, const bench_config *cfg)
{
    for (int pass = 0; pass < 2; pass++) {
        const int i = calib_pick(ctx->calib, im, cfg);
        if (i >= 0)
            return ctx->calib->pt[i].seconds * model_units(im, cfg) / ctx->calib->pt[i].units;
        if (pass == 0)
            calibrate(ctx, im);
    }
    return -1;
}

/* ---- what a configuration costs ------------------------------------------------- */
int bench_min_samples(const bench_ctx *ctx, const pcb_impl *im)
{
    const bench_opts *o = ctx->opt;
    int min = o->reps > 0 ? o->reps : o->min_reps > 0 ? o->min_reps
                                    : im->device == PCB_CUDA ? 10 : ctx->suite->reps;
    return min > MAX_SAMPLES ? MAX_SAMPLES : min;
}

double bench_figure_time(const bench_ctx *ctx)
{
    return ctx->opt->have_figure_time ? ctx->opt->figure_time : ctx->suite->figure_seconds;
}

double bench_figure_minimum(double run_s, int min, double sample_s, double figure_s)
{
    if (run_s > 2 * figure_s)
        return 0; /* the verification run is the figure */
    return fmin((double)min * fmax(run_s, sample_s), figure_s);
}

double bench_run_budget(const bench_ctx *ctx, const pcb_problem problem, const char *impl)
{
    const bench_opts *o = ctx->opt;
    const double budget = o->have_run_budget ? o->run_budget : ctx->suite->run_budget;
    const char *ref = impl ? bench_reference(problem) : NULL;
    /* the reference is the base of every speedup: a table without it has none */
    return ref && !strcmp(impl, ref) ? 4 * budget : budget;
}

double bench_predict_config(bench_ctx *ctx, bench_result *r, double *verify_s, double *timing_s,
                            double *most_s)
{
    const bench_opts *o = ctx->opt;
    const bench_config *cfg = &r->config;
    const double run_budget = bench_run_budget(ctx, cfg->problem, NULL);
    *verify_s = *timing_s = *most_s = 0;
    for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
        const pcb_impl *im = *it;
        if (im->problem != cfg->problem || !bench_listed(o->impls, im->name) ||
            (cfg->max_gap > 0 && !im->gap_option) || pcb_impl_available(im) != PCB_OK)
            continue;
        const bench_entry *e = bench_result_entry(r, im->name, 0);
        if (!o->force && e && bench_entry_final(e, run_budget, ctx->env, o))
            continue;
        double run = bench_predict(ctx, im, cfg);
        if (run < 0)
            run = 0.01; /* unknown: a small run */
        if (run > bench_run_budget(ctx, cfg->problem, im->name))
            continue; /* skipped */
        const int figures = im->device == PCB_CUDA || o->cpu_cold ? 3 : 2;
        const int min = bench_min_samples(ctx, im);
        const double sample = ctx->suite->rep_seconds, figure = bench_figure_time(ctx);
        const double least = bench_figure_minimum(run, min, sample, figure);
        *verify_s += run;
        *timing_s += figures * least;
        if (least > 0) /* the minimum, then more while the figure time allows */
            *most_s += figures * fmax(min * fmax(run, sample), figure);
    }
    return *verify_s + *timing_s;
}
