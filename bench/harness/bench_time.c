/* bench_time.c - the Google Benchmark side of a configuration: the timed
 * callbacks (compute on a prepared state; end-to-end from host arrays),
 * cache flushing, repetitions and iterations from the verification run,
 * and the statistics of the samples. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "cuda_bench.h"
#include "gbench.h"
#include "bench_run.h"

static void fail(timed *t, pcb_gb_state *st, bench_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static void fail(timed *t, pcb_gb_state *st, bench_status s, const char *fmt, ...)
{
    if (t->fail_status == ST_NONE) {
        t->fail_status = s;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(t->fail_msg, sizeof t->fail_msg, fmt, ap);
        va_end(ap);
    }
    pcb_gb_error(st, t->fail_msg);
}

/* Evict the CPU caches: write, then read, 64 MiB (more than the L2 and most
 * L3 caches hold). */
static volatile unsigned char flush_sink; /* keeps the reads */

static void flush_cpu_caches(void)
{
    enum { SIZE = 64 << 20 };
    static unsigned char *buf;
    static unsigned char value;
    if (!buf && !(buf = malloc(SIZE)))
        return;
    memset(buf, ++value, SIZE);
    unsigned char acc = 0;
    for (size_t i = 0; i < SIZE; i += 4096)
        acc ^= buf[i];
    flush_sink = acc;
}

static void flush_gpu_cache(void)
{
    static int warned;
    if (pcb_cuda_flush_l2() != PCB_OK && !warned) {
        fprintf(stderr, "pcbench: bench: cold figures: %s\n", pcb_errmsg());
        warned = 1;
    }
}

static void flush_caches(timed *t, pcb_gb_state *st)
{
    if (t->manual) { /* device time excludes the flush anyway */
        flush_gpu_cache();
        return;
    }
    pcb_gb_pause(st);
    if (t->im->device == PCB_CUDA)
        flush_gpu_cache();
    else
        flush_cpu_caches();
    pcb_gb_resume(st);
}

/* Seconds one flush takes on im's device, measured once per device. */
static double flush_seconds(const pcb_impl *im)
{
    static double cost[2] = {-1, -1};
    int k = im->device == PCB_CUDA;
    if (cost[k] < 0) {
        (k ? flush_gpu_cache : flush_cpu_caches)(); /* allocates */
        double t0 = bench_now();
        (k ? flush_gpu_cache : flush_cpu_caches)();
        cost[k] = bench_now() - t0;
    }
    return cost[k];
}

/* compute (+ sync), repeated for a slow fault; *ms sums device times. */
static int compute_once(timed *t, void *state, double *ms)
{
    int rc = PCB_OK;
    int repeats = bench_fault_repeats(t->slow, t->computes++);
    for (int i = 0; i < repeats && rc == PCB_OK; i++) {
        double one = 0;
        if ((rc = bench_life_compute(t->im, t->task, state)) == PCB_OK)
            rc = bench_life_sync(t->im, t->task, state);
        if (rc == PCB_OK && ms && t->manual &&
            (rc = bench_life_device_ms(t->im, t->task, state, &one)) == PCB_OK)
            *ms += one;
    }
    return rc;
}

static void report_counters(timed *t, pcb_gb_state *st)
{
    pcb_gb_counter(st, "points_per_s", t->points, 1);
    if (t->pairs > 0)
        pcb_gb_counter(st, "pairs_per_s", t->pairs, 1);
    const pcb_counters *c = &t->e->counters;
    if (c->distance_evals >= 0)
        pcb_gb_counter(st, "distance_evals", (double)c->distance_evals, 0);
    if (c->bids >= 0)
        pcb_gb_counter(st, "bids", (double)c->bids, 0);
    if (c->iterations >= 0)
        pcb_gb_counter(st, "iterations", (double)c->iterations, 0);
}

/* The answer after repeated computes must still be right. */
static void check_after_timing(timed *t, pcb_gb_state *st, void *state)
{
    pcb_result r = bench_outputs_result(&t->scratch);
    int rc = bench_life_fetch(t->im, t->task, state, &r);
    if (rc != PCB_OK) {
        fail(t, st, ST_FAILED_RUN, "fetch after timing: %s: %s", pcb_strerror(rc), pcb_errmsg());
        return;
    }
    if (pcb_result_equal(t->task, &r, &t->verified.r))
        return;
    const pcb_promise promise = pcb_promise_of(t->im, t->task);
    pcb_judgement j;
    rc = pcb_judge_full(t->task, &r, &promise, &j);
    if (rc != PCB_OK)
        fail(t, st, ST_FAILED_RUN, "after timing: %s", j.detail);
    else if (j.verdict == PCB_VERDICT_FAIL)
        fail(t, st, ST_FAILED_VERIFY, "the answer after repeated computes is wrong: %s", j.detail);
}

/* ---- figures and their sampling ------------------------------------------------ */
enum { FIG_WARM, FIG_COLD, FIG_E2E };
enum { MAX_CALLS = MAX_SAMPLES + MAX_DROPPED };

/* One figure of one implementation: what Google Benchmark runs for it, and
 * the GPU's state around each of its calls (one call, one sample). */
typedef struct {
    timed *t;
    int kind;
    bench_figure *f;
    int64_t iterations;
    int min, max;
    double limit;      /* seconds */
    int budget_bound;  /* limit set by the run budget */
    int next;          /* samples asked of the coming round, 0: done */
    int calls, round_base;
    int gpu;           /* read the GPU's state around each call */
    bench_gpu_state before[MAX_CALLS], after[MAX_CALLS];
    char name[160];
} figure_plan;

static void read_gpu(figure_plan *p, bench_gpu_state *s)
{
    if (!p->gpu || p->calls >= MAX_CALLS || bench_nvml_read(s) != PCB_OK)
        *s = (bench_gpu_state){NAN, NAN, NAN, NAN, 0};
}

/* The end of a call (one sample): the GPU's state after it beside the one
 * read before, and the call's wall time. */
static void end_call(figure_plan *p, const bench_gpu_state *before, double t0)
{
    bench_gpu_state after;
    read_gpu(p, &after);
    if (p->calls < MAX_CALLS) {
        p->before[p->calls] = *before;
        p->after[p->calls] = after;
    }
    p->calls++;
    p->f->seconds += bench_now() - t0;
}

static void bench_compute(pcb_gb_state *st, void *arg)
{
    figure_plan *p = arg;
    timed *t = p->t;
    double t0 = bench_now();
    void *state = NULL;
    int rc = bench_life_prepare(t->im, t->task, &state);
    if (rc == PCB_OK && t->warmup)
        rc = compute_once(t, state, NULL);
    if (rc != PCB_OK) {
        fail(t, st, ST_FAILED_RUN, "prepare or warm-up: %s: %s", pcb_strerror(rc), pcb_errmsg());
        if (state)
            bench_life_release(t->im, t->task, state);
        return;
    }
    bench_gpu_state before;
    read_gpu(p, &before);
    while (pcb_gb_keep_running(st)) {
        if (p->kind == FIG_COLD)
            flush_caches(t, st);
        double ms = 0;
        if ((rc = compute_once(t, state, &ms)) != PCB_OK) {
            fail(t, st, ST_FAILED_RUN, "compute: %s: %s", pcb_strerror(rc), pcb_errmsg());
            break;
        }
        if (t->manual)
            pcb_gb_set_iteration_time(st, ms / 1e3);
    }
    end_call(p, &before, t0);
    if (rc == PCB_OK)
        check_after_timing(t, st, state);
    report_counters(t, st);
    bench_life_release(t->im, t->task, state);
}

static void bench_e2e(pcb_gb_state *st, void *arg)
{
    figure_plan *p = arg;
    timed *t = p->t;
    double t0 = bench_now();
    bench_gpu_state before;
    read_gpu(p, &before);
    while (pcb_gb_keep_running(st)) {
        void *state = NULL;
        pcb_result r = t->scratch.r;
        double at[BENCH_STAGES + 1];
        at[0] = bench_now();
        int rc = bench_life_prepare(t->im, t->task, &state);
        at[1] = bench_now();
        if (rc == PCB_OK)
            rc = compute_once(t, state, NULL);
        at[2] = bench_now();
        if (rc == PCB_OK)
            rc = bench_life_fetch(t->im, t->task, state, &r);
        at[3] = bench_now();
        if (state)
            bench_life_release(t->im, t->task, state);
        at[4] = bench_now();
        for (int k = 0; k < BENCH_STAGES && rc == PCB_OK; k++)
            p->f->stage_s[k] += at[k + 1] - at[k];
        p->f->stage_runs += rc == PCB_OK;
        if (rc != PCB_OK) {
            fail(t, st, ST_FAILED_RUN, "end-to-end run: %s: %s", pcb_strerror(rc), pcb_errmsg());
            break;
        }
    }
    end_call(p, &before, t0);
    report_counters(t, st);
}

typedef struct {
    const bench_ctx *ctx;
    figure_plan **running; /* this round's list, by Google Benchmark's index */
} sink_ctx;

static void take_sample(const pcb_gb_sample *s, void *arg)
{
    sink_ctx *sc = arg;
    figure_plan *p = sc->running[s->bench];
    if (s->error)
        return;
    p->f->iterations = s->iterations;
    int64_t call = p->round_base + s->repetition;
    if (!p->gpu || call < 0 || call >= MAX_CALLS) {
        bench_figure_add(p->f, s->real_s, s->cpu_s, NULL, 0);
        return;
    }
    bench_gpu_state g = bench_gpu_span(&p->before[call], &p->after[call]);
    bench_figure_add(p->f, s->real_s, s->cpu_s, &g,
                     bench_gpu_throttled(&g, bench_nvml_max_sm_mhz(), sc->ctx->opt->throttle));
}

int bench_more_samples(const bench_sampling *s, char stop[16])
{
    const char *why = NULL;
    int want = 0;
    if (s->dropped >= MAX_DROPPED)
        why = "throttled";
    else if (s->kept >= s->max)
        why = "samples";
    else if (s->kept >= s->min && s->target <= 0)
        why = "fixed";
    else if (s->kept >= s->min && s->noise <= s->target)
        why = "noise";
    if (!why) {
        if (s->kept < s->min)
            want = s->min - s->kept;
        else if (!(s->noise < HUGE_VAL)) /* NAN: too few samples to say */
            want = s->kept;
        else /* the standard error falls as 1/sqrt(n) */
            want = (int)ceil(s->kept * (s->noise * s->noise / (s->target * s->target) - 1));
        want = want < 1 ? 1 : want > s->kept && s->kept >= s->min ? s->kept : want;
        if (want > s->max - s->kept)
            want = s->max - s->kept;
        double left = s->limit - s->spent;
        int affordable = s->per_sample > 0 ? (int)floor(left / s->per_sample) : want;
        if (affordable < want)
            want = affordable;
        if (want <= 0)
            why = s->budget_bound ? "budget" : "time";
    }
    snprintf(stop, 16, "%s", why ? why : "");
    return why ? 0 : want;
}

static int64_t clamp_i64(double v, int64_t lo, int64_t hi)
{
    return !(v > (double)lo) ? lo : v > (double)hi ? hi : (int64_t)llround(v);
}

/* What one sample of a figure costs: a prepare and a warm-up per call
 * (compute figures), then the iterations. */
static double sample_seconds(const timed *t, int kind, int64_t iterations, double run, double flush)
{
    const bench_entry *e = t->e;
    return (kind == FIG_E2E ? 0 : e->prepare_s + (t->warmup ? run : 0)) +
           (double)iterations * (run + flush);
}

/* The seconds of one run of a figure's kind, from the verification run. */
static double run_seconds(const timed *t, int kind)
{
    return fmax(kind == FIG_E2E ? t->e->total_s : t->e->compute_s, 1e-7);
}

/* A figure's plan from the verification run: iterations per sample (a
 * sample lasts about the suite's rep_seconds), the minimum and maximum
 * counts, the time limit and the first round (the minimum, as far as the
 * limit allows). The limit is the figure time, or less where the figure's
 * share of a budget is less: of the per-run budget (compute warm a half,
 * cold and end-to-end a quarter each; without a cold figure, compute three
 * quarters), or allowed, its share of the whole run's budget. 0 when not
 * one sample fits: the figure is then the verification run's. */
static int plan_figure(const bench_ctx *ctx, timed *t, int kind, figure_plan *p, int cold,
                       double allowed)
{
    const bench_opts *o = ctx->opt;
    const bench_entry *e = t->e;
    const int gpu = t->im->device == PCB_CUDA;
    double flush = kind == FIG_COLD ? flush_seconds(t->im) : 0;
    double tc = run_seconds(t, kind);
    double share = kind == FIG_E2E ? 0.25 : kind == FIG_COLD ? 0.25 : cold ? 0.5 : 0.75;
    double budget = fmin(share * e->budget_s, allowed);
    memset(p, 0, sizeof *p);
    p->t = t;
    p->kind = kind;
    p->f = kind == FIG_E2E ? &t->e->e2e : kind == FIG_COLD ? &t->e->compute_cold : &t->e->compute;
    p->f->clock = kind != FIG_E2E && t->manual ? "device" : "real";
    p->iterations = clamp_i64(ctx->suite->rep_seconds / (tc + flush), 1, 1000000);
    p->gpu = gpu && bench_nvml_open() == PCB_OK;
    p->max = o->reps > 0 ? o->reps : MAX_SAMPLES;
    p->min = bench_min_samples(ctx, t->im);
    if (p->min > p->max)
        p->min = p->max;
    double figure_time = bench_figure_time(ctx);
    p->budget_bound = o->reps > 0 || budget < figure_time;
    p->limit = p->budget_bound ? budget : figure_time;
    double per_sample = sample_seconds(t, kind, p->iterations, tc, flush);
    if (o->reps <= 0 && tc + flush > 2 * figure_time) {
        /* a run over twice the figure time: the verification run is the figure */
        snprintf(p->f->stop, sizeof p->f->stop, "time");
        return 0;
    }
    if (per_sample > p->limit) /* a budget's share under one sample: one (measured warm: a
                                  verification run can be far slower), three where cheap */
        p->limit = (per_sample > 0.1 ? 1 : 3) * per_sample;
    /* The first round: the minimum, as far as the budgets allow (a whole-run
     * budget's share, else the per-run budget's), not the figure time. */
    p->next = (int)clamp_i64(floor((isinf(allowed) ? budget : p->limit) / per_sample), 1, p->min);
    snprintf(p->name, sizeof p->name, "%s/%s/%s", ctx->cfg->id, t->im->name,
             kind == FIG_E2E ? "e2e" : kind == FIG_COLD ? "compute_cold" : "compute");
    return 1;
}

/* A figure's least time (bench_figure_minimum), from the verification run. */
static double figure_least(const bench_ctx *ctx, const timed *t, int kind)
{
    double flush = kind == FIG_COLD ? flush_seconds(t->im) : 0;
    return bench_figure_minimum(run_seconds(t, kind) + flush, bench_min_samples(ctx, t->im),
                                ctx->suite->rep_seconds, bench_figure_time(ctx));
}

double bench_timing_allowance(const bench_ctx *ctx)
{
    if (!(ctx->budget > 0) || !ctx->timing_cost || !ctx->verify_cost)
        return 0;
    double left = ctx->budget - (bench_now() - ctx->started), weight = 0;
    for (int j = ctx->index; j < ctx->total; j++) {
        weight += ctx->timing_cost[j];
        if (j > ctx->index) /* the verifications still to come, as the past ones went */
            left -= ctx->verify_cost[j] * (ctx->verify_scale > 0 ? ctx->verify_scale : 1);
    }
    left = fmax(left, 0);
    return fmax(weight > 0 ? left * ctx->timing_cost[ctx->index] / weight : left, 1e-3);
}

/* After a round: the next round's count of each figure, 0 when it is done. */
static void plan_next(const bench_opts *o, figure_plan *p)
{
    timed *t = p->t;
    bench_figure_stats(p->f);
    if (t->fail_status != ST_NONE) {
        p->next = 0;
        snprintf(p->f->stop, sizeof p->f->stop, "failed");
        return;
    }
    bench_sampling s = {.kept = p->f->reps, .dropped = p->f->dropped, .noise = p->f->noise,
                        .target = o->reps > 0 ? 0 : o->target_noise, .min = p->min,
                        .max = p->max, .spent = p->f->seconds, .limit = p->limit,
                        .per_sample = p->calls > 0 ? p->f->seconds / p->calls : 0,
                        .budget_bound = p->budget_bound};
    p->next = bench_more_samples(&s, p->f->stop);
    if (p->calls + p->next > MAX_CALLS)
        p->next = MAX_CALLS - p->calls;
}

static void append_report(bench_result *r, const char *text)
{
    json doc;
    if (!text || json_parse(text, "Google Benchmark report", &doc) != PCB_OK)
        return;
    if (r->gbench.type != JSON_ARR) {
        json_free(&r->gbench);
        r->gbench.type = JSON_ARR;
    }
    json *kids = realloc(r->gbench.kids, (size_t)(r->gbench.count + 1) * sizeof *kids);
    if (!kids) {
        json_free(&doc);
        return;
    }
    r->gbench.kids = kids;
    kids[r->gbench.count++] = doc;
}

static const char *fmt_time(char *buf, size_t len, double s)
{
    if (s >= 1)
        snprintf(buf, len, "%.3g s", s);
    else
        snprintf(buf, len, "%.3g ms", s * 1e3);
    return buf;
}

/* Time the figures in rounds: every figure's minimum first, all of them
 * interleaved; then, round after round, more samples for the figures whose
 * noise is above the target while their time allows. */
static int run_rounds(bench_ctx *ctx, bench_result *r, figure_plan *plans, int np)
{
    figure_plan **running = calloc((size_t)np, sizeof *running);
    pcb_gb_bench *list = calloc((size_t)np, sizeof *list);
    int rc = PCB_OK;
    if (!running || !list)
        rc = pcb_fail(PCB_ENOMEM, "no memory for the benchmark list");
    for (int round = 0; rc == PCB_OK; round++) {
        int k = 0;
        for (int i = 0; i < np; i++) {
            figure_plan *p = &plans[i];
            if (p->next <= 0)
                continue;
            p->round_base = p->calls;
            running[k] = p;
            list[k++] = (pcb_gb_bench){.name = p->name,
                                       .fn = p->kind == FIG_E2E ? bench_e2e : bench_compute,
                                       .arg = p,
                                       .clock = !strcmp(p->f->clock, "device") ? PCB_GB_MANUAL
                                                                               : PCB_GB_REAL,
                                       .iterations = p->iterations, .repetitions = p->next};
        }
        if (k == 0)
            break;
        if (round > 0)
            bench_progress(ctx, "%s: %d figure%s above the noise target, more samples",
                           r->config.id, k, k == 1 ? "" : "s");
        sink_ctx sc = {ctx, running};
        char *report = NULL;
        char step[160];
        double expect = 0;
        for (int i = 0; i < k; i++) /* a figure's round takes about its limit at most */
            expect += running[i]->limit;
        snprintf(step, sizeof step, "timing %s (round %d)", r->config.id, round + 1);
        bench_step(step, expect);
        rc = pcb_gb_run(list, k, take_sample, &sc, &report);
        bench_step(NULL, 0);
        if (rc == PCB_OK)
            append_report(r, report);
        free(report);
        for (int i = 0; i < k; i++)
            plan_next(ctx->opt, running[i]);
    }
    free(running);
    free(list);
    return rc;
}

static void say_nvml_once(bench_ctx *ctx, const timed *tv, int nt)
{
    static int said;
    for (int i = 0; i < nt && !said; i++)
        if (tv[i].im->device == PCB_CUDA) {
            bench_nvml_open();
            bench_progress(ctx, "%s", bench_nvml_status());
            said = 1;
        }
}

/* "2.30 ms (noise 0.12%, 10 samples)"; a figure that stopped short of the
 * noise target says why: "(noise 1.8%, 4 samples, stopped by the budget)",
 * "(one run, over the figure time)". */
static void fmt_figure(char *buf, size_t len, const bench_figure *f)
{
    char t[32];
    if (f->reps < 1) {
        snprintf(buf, len, "-");
        return;
    }
    const char *why = !strcmp(f->stop, "budget")  ? "stopped by the budget"
                      : !strcmp(f->stop, "time")    ? "stopped at the figure time"
                      : !strcmp(f->stop, "samples") ? "the most samples"
                      : !strcmp(f->stop, "fixed")   ? "fixed count"
                      : !strcmp(f->stop, "throttled") ? "too many throttled"
                                                      : NULL;
    int o = snprintf(buf, len, "%s", fmt_time(t, sizeof t, f->median));
    if (f->reps == 1 && f->clock && !strcmp(f->clock, "verification run"))
        o += snprintf(buf + o, len - (size_t)o, " (one run: the verification run, %s)",
                      !strcmp(f->stop, "budget") ? "over its share of the budget"
                                                 : "over the figure time");
    else if (isfinite(f->noise))
        o += snprintf(buf + o, len - (size_t)o, " (noise %.2g%%, %d samples%s%s)", f->noise * 100,
                      f->reps, why ? ", " : "", why ? why : "");
    else
        o += snprintf(buf + o, len - (size_t)o, " (%d sample%s, noise unknown%s%s)", f->reps,
                      f->reps == 1 ? "" : "s", why ? ", " : "", why ? why : "");
    if (f->dropped && o > 0 && (size_t)o < len)
        snprintf(buf + o, len - (size_t)o, " [%d dropped%s]", f->dropped,
                 f->unreliable ? ", unreliable" : "");
}

void bench_time_all(bench_ctx *ctx, bench_result *r, timed *tv, int nt)
{
    figure_plan *plans = calloc((size_t)nt * 3, sizeof *plans);
    int np = 0, rc;
    if (!plans) {
        rc = pcb_fail(PCB_ENOMEM, "no memory for the benchmark list");
    } else {
        say_nvml_once(ctx, tv, nt);
        /* Under a whole-run budget, the configuration's allowance goes to
         * its figures in proportion to their least times. */
        const double allowance = bench_timing_allowance(ctx);
        double least = 0;
        for (int i = 0; i < nt && allowance > 0; i++)
            for (int kind = FIG_WARM; kind <= FIG_E2E; kind++)
                if (kind != FIG_COLD || tv[i].im->device == PCB_CUDA || ctx->opt->cpu_cold)
                    least += figure_least(ctx, &tv[i], kind);
        const double scale = allowance > 0 && least > 0 ? allowance / least : INFINITY;
        for (int i = 0; i < nt; i++) {
            timed *t = &tv[i];
            int cold = t->im->device == PCB_CUDA || ctx->opt->cpu_cold;
            for (int kind = FIG_WARM; kind <= FIG_E2E; kind++) {
                if (kind == FIG_COLD && !cold)
                    continue;
                double allowed = scale * figure_least(ctx, t, kind);
                if (plan_figure(ctx, t, kind, &plans[np], cold, isnan(allowed) ? INFINITY : allowed))
                    np++;
                else if (kind != FIG_COLD) { /* the verification run is the figure */
                    bench_figure *f = kind == FIG_WARM ? &t->e->compute : &t->e->e2e;
                    char why[16];
                    snprintf(why, sizeof why, "%s", f->stop);
                    bench_figure_from_run(f, kind == FIG_WARM ? t->e->compute_s : t->e->total_s);
                    snprintf(f->stop, sizeof f->stop, "%s", why);
                }
            }
        }
        if (allowance > 0)
            bench_progress(ctx, "%s: %.1f s of the budget for timing", r->config.id, allowance);
        int threads = ctx->opt->have_threads ? ctx->opt->threads : ctx->suite->threads;
        bench_progress(ctx, "%s: timing %d implementation%s, %d figures, samples interleaved%s",
                       r->config.id, nt, nt == 1 ? "" : "s", np,
                       threads == 1 ? ", one thread" : "");
        r->load_avg = bench_load_average();
#ifdef _OPENMP
        int saved = omp_get_max_threads();
        if (threads > 0) /* for code that ignores opt.threads */
            omp_set_num_threads(threads);
#endif
        rc = run_rounds(ctx, r, plans, np);
#ifdef _OPENMP
        omp_set_num_threads(saved);
#endif
    }
    for (int i = 0; i < nt; i++) {
        bench_entry *e = tv[i].e;
        bench_figure_stats(&e->compute);
        bench_figure_stats(&e->compute_cold);
        bench_figure_stats(&e->e2e);
        bench_utc_now(e->when, sizeof e->when);
        if (rc != PCB_OK)
            bench_set_status(e, bench_status_for(rc), "timing: %s", pcb_errmsg());
        else if (tv[i].fail_status != ST_NONE)
            bench_set_status(e, tv[i].fail_status, "%s", tv[i].fail_msg);
        else if (e->compute.reps < 1)
            bench_set_status(e, ST_FAILED_RUN, "timing produced no samples%s",
                             e->compute.dropped ? " (all dropped: the GPU was throttled)" : "");
        char tc[160], tk[160], te[160];
        fmt_figure(tc, sizeof tc, &e->compute);
        fmt_figure(tk, sizeof tk, &e->compute_cold);
        fmt_figure(te, sizeof te, &e->e2e);
        if (e->status == ST_OK)
            bench_progress(ctx, "%s %s: %s%s%s, end-to-end %s", r->config.id, e->impl, tc,
                           e->compute_cold.reps ? ", cold " : "", e->compute_cold.reps ? tk : "",
                           te);
        else
            bench_progress(ctx, "%s %s: %s: %s", r->config.id, e->impl,
                           bench_status_name(e->status), e->detail);
    }
    free(plans);
}
