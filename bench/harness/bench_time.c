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

#include "../../impl/cuda_bench.h"
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
        fprintf(stderr, "pcbench: bench: --flush-l2: %s\n", pcb_errmsg());
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

/* compute (+ sync), repeated for a slow fault; *ms sums device times. */
static int compute_once(timed *t, void *state, double *ms)
{
    int rc = PCB_OK;
    int repeats = bench_fault_repeats(t->slow, t->computes++);
    for (int i = 0; i < repeats && rc == PCB_OK; i++) {
        double one = 0;
        if ((rc = t->im->compute(state)) == PCB_OK && t->im->sync)
            rc = t->im->sync(state);
        if (rc == PCB_OK && ms && t->manual && (rc = t->im->device_ms(state, &one)) == PCB_OK)
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
    int rc = t->im->fetch(state, &r);
    if (rc != PCB_OK) {
        fail(t, st, ST_FAILED_RUN, "fetch after timing: %s: %s", pcb_strerror(rc), pcb_errmsg());
        return;
    }
    if (bench_outputs_equal(&t->scratch, &t->verified, t->task->problem))
        return;
    const pcb_promise promise = pcb_promise_of(t->im);
    pcb_judgement j;
    rc = pcb_judge_full(t->task, &r, &promise, &j);
    if (rc != PCB_OK)
        fail(t, st, ST_FAILED_RUN, "after timing: %s", j.detail);
    else if (j.verdict == PCB_VERDICT_FAIL)
        fail(t, st, ST_FAILED_VERIFY, "the answer after repeated computes is wrong: %s", j.detail);
}

static void bench_compute(pcb_gb_state *st, void *arg)
{
    timed *t = arg;
    void *state = NULL;
    int rc = t->im->prepare(t->task, &state);
    if (rc == PCB_OK && t->warmup)
        rc = compute_once(t, state, NULL);
    if (rc != PCB_OK) {
        fail(t, st, ST_FAILED_RUN, "prepare or warm-up: %s: %s", pcb_strerror(rc), pcb_errmsg());
        t->im->release(state);
        return;
    }
    while (pcb_gb_keep_running(st)) {
        if (t->flush)
            flush_caches(t, st);
        double ms = 0;
        if ((rc = compute_once(t, state, &ms)) != PCB_OK) {
            fail(t, st, ST_FAILED_RUN, "compute: %s: %s", pcb_strerror(rc), pcb_errmsg());
            break;
        }
        if (t->manual)
            pcb_gb_set_iteration_time(st, ms / 1e3);
    }
    if (rc == PCB_OK)
        check_after_timing(t, st, state);
    report_counters(t, st);
    t->im->release(state);
}

static void bench_e2e(pcb_gb_state *st, void *arg)
{
    timed *t = arg;
    while (pcb_gb_keep_running(st)) {
        if (t->flush)
            flush_caches(t, st);
        void *state = NULL;
        pcb_result r = t->scratch.r;
        int rc = t->im->prepare(t->task, &state);
        if (rc == PCB_OK)
            rc = compute_once(t, state, NULL);
        if (rc == PCB_OK)
            rc = t->im->fetch(state, &r);
        t->im->release(state);
        if (rc != PCB_OK) {
            fail(t, st, ST_FAILED_RUN, "end-to-end run: %s: %s", pcb_strerror(rc), pcb_errmsg());
            break;
        }
    }
    report_counters(t, st);
}

typedef struct {
    timed *t;
    int e2e;
} slot;

static void take_sample(const pcb_gb_sample *s, void *ctx)
{
    slot *sl = &((slot *)ctx)[s->bench];
    bench_figure *f = sl->e2e ? &sl->t->e->e2e : &sl->t->e->compute;
    if (s->error || f->reps >= MAX_SAMPLES)
        return;
    f->sample[f->reps] = s->real_s;
    f->cpu[f->reps] = s->cpu_s;
    f->iterations = s->iterations;
    f->reps++;
}

static int64_t clamp_i64(double v, int64_t lo, int64_t hi)
{
    return !(v > (double)lo) ? lo : v > (double)hi ? hi : (int64_t)llround(v);
}

/* Repetitions and iterations from the verification run: three quarters of
 * the budget for the compute figure, a quarter for end-to-end; at least two
 * compute repetitions; an end-to-end run that does not fit is reported from
 * the verification run itself. */
static int plan(const bench_ctx *ctx, timed *t, pcb_gb_bench *list, slot *slots, int k,
                char names[][160])
{
    const bench_entry *e = t->e;
    double budget = e->budget_s, reps = ctx->opt->reps > 0 ? ctx->opt->reps : ctx->suite->reps;
    double tc = fmax(e->compute_s, 1e-7), tt = fmax(e->total_s, 1e-7);
    if (reps > MAX_SAMPLES)
        reps = MAX_SAMPLES;
    snprintf(names[k], 160, "%s/%s/compute", ctx->cfg->id, t->im->name);
    list[k] = (pcb_gb_bench){.name = names[k], .fn = bench_compute, .arg = t,
                             .clock = t->manual ? PCB_GB_MANUAL : PCB_GB_REAL,
                             .iterations = clamp_i64(ctx->suite->rep_seconds / tc, 1, 1000000),
                             .repetitions = (int)clamp_i64(floor(0.75 * budget / tc), 2, (int64_t)reps)};
    slots[k] = (slot){t, 0};
    t->e->compute.clock = t->manual ? "device" : "real";
    int64_t e2e_reps = clamp_i64(floor(0.25 * budget / tt), 0, (int64_t)reps);
    if (e2e_reps == 0) {
        t->e->e2e.clock = "verification run";
        t->e->e2e.reps = 1;
        t->e->e2e.iterations = 1;
        t->e->e2e.sample[0] = t->e->e2e.cpu[0] = e->total_s;
        return 1;
    }
    snprintf(names[k + 1], 160, "%s/%s/e2e", ctx->cfg->id, t->im->name);
    list[k + 1] = (pcb_gb_bench){.name = names[k + 1], .fn = bench_e2e, .arg = t,
                                 .clock = PCB_GB_REAL,
                                 .iterations = clamp_i64(ctx->suite->rep_seconds / tt, 1, 1000000),
                                 .repetitions = (int)e2e_reps};
    slots[k + 1] = (slot){t, 1};
    t->e->e2e.clock = "real";
    return 2;
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

static double load_average(void)
{
    double one = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &one) != 1)
            one = -1;
        fclose(f);
    }
    return one;
}

static const char *fmt_time(char *buf, size_t len, double s)
{
    if (s >= 1)
        snprintf(buf, len, "%.3g s", s);
    else
        snprintf(buf, len, "%.3g ms", s * 1e3);
    return buf;
}

void bench_time_all(bench_ctx *ctx, bench_result *r, timed *tv, int nt)
{
    pcb_gb_bench *list = calloc((size_t)nt * 2, sizeof *list);
    slot *slots = calloc((size_t)nt * 2, sizeof *slots);
    char (*names)[160] = calloc((size_t)nt * 2, sizeof *names);
    int k = 0, rc;
    char *report = NULL;
    if (!list || !slots || !names) {
        rc = pcb_fail(PCB_ENOMEM, "no memory for the benchmark list");
    } else {
        for (int i = 0; i < nt; i++)
            k += plan(ctx, &tv[i], list, slots, k, names);
        int threads = ctx->opt->have_threads ? ctx->opt->threads : ctx->suite->threads;
        bench_progress(ctx, "%s: timing %d implementation%s, %d benchmarks, repetitions "
                       "interleaved%s", r->config.id, nt, nt == 1 ? "" : "s", k,
                       threads == 1 ? ", one thread" : "");
        r->load_avg = load_average();
#ifdef _OPENMP
        int saved = omp_get_max_threads();
        if (threads > 0) /* for code that ignores opt.threads */
            omp_set_num_threads(threads);
#endif
        rc = pcb_gb_run(list, k, take_sample, slots, &report);
#ifdef _OPENMP
        omp_set_num_threads(saved);
#endif
    }
    if (rc == PCB_OK)
        append_report(r, report);
    free(report);
    for (int i = 0; i < nt; i++) {
        bench_entry *e = tv[i].e;
        bench_figure_stats(&e->compute);
        bench_figure_stats(&e->e2e);
        bench_utc_now(e->when, sizeof e->when);
        if (rc != PCB_OK)
            bench_set_status(e, bench_status_for(rc), "timing: %s", pcb_errmsg());
        else if (tv[i].fail_status != ST_NONE)
            bench_set_status(e, tv[i].fail_status, "%s", tv[i].fail_msg);
        else if (e->compute.reps < 1)
            bench_set_status(e, ST_FAILED_RUN, "timing produced no samples");
        char tc[32], te[32];
        if (e->status == ST_OK)
            bench_progress(ctx, "%s %s: %s (cv %.1f%%, %d x %lld), end-to-end %s", r->config.id,
                           e->impl, fmt_time(tc, sizeof tc, e->compute.median), e->compute.cv * 100,
                           e->compute.reps, (long long)e->compute.iterations,
                           fmt_time(te, sizeof te, e->e2e.median));
        else
            bench_progress(ctx, "%s %s: %s: %s", r->config.id, e->impl,
                           bench_status_name(e->status), e->detail);
    }
    free(list);
    free(slots);
    free(names);
}
