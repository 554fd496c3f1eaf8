/* bench_run.c - one configuration: for each implementation, check it can
 * run, predict its time against the budget, run it once and validate the
 * answer; then time every verified one with Google Benchmark, repetitions
 * of all of them interleaved.
 *
 * Two figures per implementation:
 *   compute - inputs already prepared (uploaded, indexed): compute (+ sync)
 *             only; CUDA implementations report their device event time;
 *   e2e     - host arrays to host results: prepare, compute, sync, fetch,
 *             release, wall clock (transfers, index builds, allocation).
 * compute() is called repeatedly on one prepared state; after timing, the
 * result is fetched again and must still be correct. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "../impl/cuda_bench.h"
#include "gbench.h"
#include "bench.h"

double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void bench_progress(const bench_ctx *ctx, const char *fmt, ...)
{
    int s = (int)(bench_now() - ctx->started);
    fprintf(stderr, "[%d/%d %d:%02d] ", ctx->index + 1, ctx->total, s / 60, s % 60);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

const char *bench_reference(pcb_problem p)
{
    /* The seed's "serial" FPS is the O(n m) dynamic-programming version. */
    static const char *const preferred[PCB_NPROBLEMS][3] = {
        {"dp", "naive", NULL}, {"naive", NULL, NULL}, {"exact", NULL, NULL}};
    for (int i = 0; preferred[p][i]; i++)
        if (pcb_find(p, preferred[p][i]))
            return preferred[p][i];
    const char *last = NULL; /* else the slowest exact CPU one */
    for (const pcb_impl *const *it = pcb_registry(); *it; it++)
        if ((*it)->problem == p && (*it)->exact && (*it)->device == PCB_CPU)
            last = (*it)->name;
    return last;
}

int bench_entry_final(const bench_entry *e, double budget)
{
    switch (e->status) {
    case ST_OK:
    case ST_FAILED_VERIFY:
    case ST_FAILED_RUN:
    case ST_UNSUPPORTED: return 1;
    case ST_SKIPPED_BUDGET: return e->budget_s >= budget;
    default: return 0;
    }
}

/* ---- faults (for the regression gate's own test) ---------------------------- */
int bench_fault_parse(const char *spec, bench_fault *f, int max, int *count)
{
    *count = 0;
    if (!spec || !*spec)
        return PCB_OK;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (*count == max)
            return pcb_fail(PCB_EINVAL, "PCBENCH_FAULT: too many faults");
        bench_fault *x = &f[(*count)++];
        memset(x, 0, sizeof *x);
        x->slow = 1;
        char kind[8];
        int factor = 0, used = 0;
        if (sscanf(item, "%7[a-z]:%7[a-z]/%47[a-z0-9_]%n", kind, x->problem, x->impl, &used) != 3)
            return pcb_fail(PCB_EINVAL, "PCBENCH_FAULT: '%s' is not kind:problem/impl[:n]", item);
        const char *rest = item + used;
        if (strcmp(kind, "slow") == 0 && sscanf(rest, ":%d", &factor) == 1 && factor >= 1 &&
            factor <= 100)
            x->slow = factor;
        else if (strcmp(kind, "count") == 0 && !*rest)
            x->count = 1;
        else
            return pcb_fail(PCB_EINVAL, "PCBENCH_FAULT: '%s' (use slow:P/I:N or count:P/I)", item);
    }
    return PCB_OK;
}

static void fault_for(const bench_ctx *ctx, const pcb_impl *im, int *slow, int *count)
{
    *slow = 1;
    *count = 0;
    for (int i = 0; i < ctx->nfaults; i++) {
        const bench_fault *f = &ctx->faults[i];
        if (strcmp(f->problem, pcb_problem_name(im->problem)) == 0 && strcmp(f->impl, im->name) == 0) {
            *slow *= f->slow;
            *count += f->count;
        }
    }
}

/* ---- run-time prediction ------------------------------------------------------ */
/* Work of one run in the implementation's own complexity (pessimistic where
 * unknown): FPS naive b n m^2, other FPS b n m; NN brute force b n nq, a
 * k-d tree b (n + nq) log n; EMD b n^3 (exact Hungarian; auctions less). */
static double model_units(const pcb_impl *im, const bench_config *c)
{
    double b = (double)c->batch, n = (double)c->n, nq = (double)c->nq, m = (double)c->m;
    switch (c->problem) {
    case PCB_FPS: return strcmp(im->name, "naive") == 0 ? b * n * m * m / 2 : b * n * m;
    case PCB_NN: return strcmp(im->name, "flann") == 0 ? b * (n + nq) * log2(n + 2) : b * n * nq;
    default: return b * n * n * n;
    }
}

struct bench_calib {
    struct {
        const pcb_impl *impl;
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
    for (int i = 0; i < c->count; i++)
        if (c->pt[i].impl == im) {
            if (units >= c->pt[i].units) /* the largest run predicts best */
                c->pt[i].units = units, c->pt[i].seconds = s;
            return;
        }
    void *p = realloc(c->pt, (size_t)(c->count + 1) * sizeof *c->pt);
    if (!p)
        return;
    c->pt = p;
    c->pt[c->count].impl = im;
    c->pt[c->count].units = units;
    c->pt[c->count].seconds = s;
    c->count++;
}

/* A small run of the problem, twice (the first pays one-time set-up such
 * as CUDA context creation), when nothing larger was measured yet. */
static void calibrate(bench_ctx *ctx, const pcb_impl *im)
{
    bench_config cfg = {.problem = im->problem, .dataset = "uniform", .batch = 1};
    if (im->problem == PCB_FPS)
        cfg.n = 2000, cfg.m = 200;
    else if (im->problem == PCB_NN)
        cfg.n = cfg.nq = 4000;
    else
        cfg.n = cfg.nq = 256;
    bench_data d;
    if (bench_data_make(&cfg, &d) != PCB_OK)
        return;
    size_t count = (size_t)(im->problem == PCB_FPS ? cfg.m : cfg.n);
    int32_t *index = malloc(count * sizeof *index);
    float *dist2 = malloc(count * sizeof *dist2);
    double value, best = INFINITY;
    pcb_task t = {.problem = im->problem, .batch = 1, .n = cfg.n, .nq = cfg.nq, .m = cfg.m,
                  .a = d.a, .b = d.b};
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
static double predict(bench_ctx *ctx, const pcb_impl *im, const bench_config *cfg)
{
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < ctx->calib->count; i++)
            if (ctx->calib->pt[i].impl == im)
                return ctx->calib->pt[i].seconds * model_units(im, cfg) / ctx->calib->pt[i].units;
        if (pass == 0)
            calibrate(ctx, im);
    }
    return -1;
}

/* ---- results of one run ----------------------------------------------------- */
typedef struct {
    int32_t *index;
    float *dist2;
    double *value, *price;
    size_t count, batch;
} outputs;

static int outputs_alloc(outputs *o, const pcb_task *t)
{
    memset(o, 0, sizeof *o);
    o->count = (size_t)t->batch * (size_t)(t->problem == PCB_FPS  ? t->m
                                           : t->problem == PCB_NN ? t->nq
                                                                  : t->n);
    o->batch = (size_t)t->batch;
    o->index = malloc(o->count * sizeof *o->index);
    o->dist2 = malloc(o->count * sizeof *o->dist2);
    o->value = malloc(o->batch * sizeof *o->value);
    o->price = malloc(o->count * sizeof *o->price);
    if (!o->index || !o->dist2 || !o->value || !o->price)
        return pcb_fail(PCB_ENOMEM, "no memory for %zu results", o->count);
    return PCB_OK;
}

static void outputs_free(outputs *o)
{
    free(o->index), free(o->dist2), free(o->value), free(o->price);
    memset(o, 0, sizeof *o);
}

/* Poison first: every element must be written by fetch. */
static pcb_result outputs_result(outputs *o)
{
    for (size_t i = 0; i < o->count; i++)
        o->index[i] = -7;
    pcb_result r = {.index = o->index, .dist2 = o->dist2, .value = o->value, .price = o->price};
    return r;
}

static int outputs_equal(const outputs *a, const outputs *b, pcb_problem p)
{
    if (memcmp(a->index, b->index, a->count * sizeof *a->index) != 0)
        return 0;
    if (p == PCB_NN && memcmp(a->dist2, b->dist2, a->count * sizeof *a->dist2) != 0)
        return 0;
    return p != PCB_EMD || memcmp(a->value, b->value, a->batch * sizeof *a->value) == 0;
}

static void set_status(bench_entry *e, bench_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void set_status(bench_entry *e, bench_status s, const char *fmt, ...)
{
    e->status = s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->detail, sizeof e->detail, fmt, ap);
    va_end(ap);
}

/* Status of a failed library call. */
static bench_status status_for(int rc)
{
    switch (rc) {
    case PCB_EUNSUPPORTED:
    case PCB_ENOMEM: return ST_UNSUPPORTED;
    case PCB_EUNAVAIL: return ST_UNAVAILABLE;
    default: return ST_FAILED_RUN;
    }
}

/* The verification run, timed phase by phase with the wall clock. */
static void verify(const pcb_impl *im, const pcb_task *t, bench_entry *e, outputs *out,
                   int count_fault)
{
    void *state = NULL;
    pcb_result r = outputs_result(out);
    double t0 = bench_now(), t1 = t0, t2 = t0, t3 = t0;
    const char *phase = "prepare";
    int rc = im->prepare(t, &state);
    if (rc == PCB_OK) {
        t1 = bench_now();
        phase = "compute";
        if ((rc = im->compute(state)) == PCB_OK && im->sync)
            rc = im->sync(state);
    }
    if (rc == PCB_OK) {
        t2 = bench_now();
        phase = "fetch";
        rc = im->fetch(state, &r);
        t3 = bench_now();
    }
    e->counters.distance_evals = e->counters.bids = e->counters.iterations = -1;
    if (rc == PCB_OK && im->counters) {
        phase = "counters";
        rc = im->counters(state, &e->counters);
    }
    char msg[300];
    snprintf(msg, sizeof msg, "%s", pcb_errmsg());
    im->release(state);
    e->total_s = bench_now() - t0;
    if (rc != PCB_OK) {
        set_status(e, status_for(rc), "%s: %s: %s", phase, pcb_strerror(rc), msg);
        return;
    }
    e->prepare_s = t1 - t0, e->compute_s = t2 - t1, e->fetch_s = t3 - t2;
    if (count_fault) {
        int64_t *c[3] = {&e->counters.distance_evals, &e->counters.bids, &e->counters.iterations};
        for (int i = 0; i < 3; i++)
            if (*c[i] >= 0)
                *c[i] += count_fault;
    }
    rc = pcb_validate(im, t, &r, &e->rep);
    if (rc != PCB_OK) {
        set_status(e, rc == PCB_EUNAVAIL ? ST_UNAVAILABLE : ST_FAILED_RUN, "validator: %s: %s",
                   pcb_strerror(rc), pcb_errmsg());
        return;
    }
    e->have_rep = 1;
    set_status(e, e->rep.ok ? ST_OK : ST_FAILED_VERIFY, "%s", e->rep.detail);
}

/* ---- timing --------------------------------------------------------------------- */
typedef struct {
    const bench_ctx *ctx;
    const pcb_impl *im;
    const pcb_task *task;
    bench_entry *e;
    outputs verified, scratch;
    int slow, manual, warmup, flush;
    double points, pairs;
    bench_status fail_status; /* ST_NONE while all is well */
    char fail_msg[300];
} timed;

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
    for (int i = 0; i < t->slow && rc == PCB_OK; i++) {
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
    pcb_result r = outputs_result(&t->scratch);
    int rc = t->im->fetch(state, &r);
    if (rc != PCB_OK) {
        fail(t, st, ST_FAILED_RUN, "fetch after timing: %s: %s", pcb_strerror(rc), pcb_errmsg());
        return;
    }
    if (outputs_equal(&t->scratch, &t->verified, t->task->problem))
        return;
    pcb_report rep;
    rc = pcb_validate(t->im, t->task, &r, &rep);
    if (rc != PCB_OK)
        fail(t, st, ST_FAILED_RUN, "validator after timing: %s", pcb_errmsg());
    else if (!rep.ok)
        fail(t, st, ST_FAILED_VERIFY, "the answer after repeated computes is wrong: %s", rep.detail);
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
        pcb_result r = {.index = t->scratch.index, .dist2 = t->scratch.dist2,
                        .value = t->scratch.value, .price = t->scratch.price};
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

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double median_of(const double *v, int n)
{
    double s[MAX_SAMPLES];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

void bench_figure_stats(bench_figure *f)
{
    f->median = f->mean = f->stddev = f->cv = f->min = f->cpu_median = NAN;
    if (f->reps < 1)
        return;
    double sum = 0, sq = 0;
    f->min = f->sample[0];
    for (int i = 0; i < f->reps; i++) {
        sum += f->sample[i];
        f->min = fmin(f->min, f->sample[i]);
    }
    f->mean = sum / f->reps;
    for (int i = 0; i < f->reps; i++)
        sq += (f->sample[i] - f->mean) * (f->sample[i] - f->mean);
    f->stddev = f->reps > 1 ? sqrt(sq / (f->reps - 1)) : 0;
    f->cv = f->mean > 0 ? f->stddev / f->mean : 0;
    f->median = median_of(f->sample, f->reps);
    f->cpu_median = median_of(f->cpu, f->reps);
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

/* ---- one configuration ---------------------------------------------------------- */
static int selected(const char *list, const char *name)
{
    if (!list)
        return 1;
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        size_t w = strcspn(p, ",");
        if (w == len && strncmp(p, name, len) == 0)
            return 1;
        p += w + (p[w] == ',');
    }
    return 0;
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

static double work_points(const bench_config *c)
{
    return (double)c->batch * (double)(c->problem == PCB_NN ? c->nq : c->n);
}

/* Check, predict and verify one implementation; 1 when it is to be timed. */
static int prepare_entry(bench_ctx *ctx, const pcb_impl *im, const pcb_task *task,
                         const pcb_task *timing, bench_entry *e, timed *t)
{
    const bench_config *cfg = ctx->cfg;
    double budget = e->budget_s;
    int rc;
    if ((rc = pcb_impl_available(im)) != PCB_OK) {
        set_status(e, ST_UNAVAILABLE, "%s", pcb_errmsg());
        return 0;
    }
    if ((rc = pcb_task_fits(im, task)) != PCB_OK) {
        set_status(e, ST_UNSUPPORTED, "%s", pcb_errmsg());
        return 0;
    }
    e->predicted_s = predict(ctx, im, cfg);
    if (e->predicted_s > budget) {
        set_status(e, ST_SKIPPED_BUDGET, "predicted %.3g s per run, over the budget of %g s",
                   e->predicted_s, budget);
        bench_progress(ctx, "%s %s: skipped (%s)", cfg->id, im->name, e->detail);
        return 0;
    }
    if (e->predicted_s > 1)
        bench_progress(ctx, "%s %s: verifying (about %.1f s)", cfg->id, im->name, e->predicted_s);
    memset(t, 0, sizeof *t);
    if ((rc = outputs_alloc(&t->verified, task)) != PCB_OK ||
        (rc = outputs_alloc(&t->scratch, task)) != PCB_OK) {
        set_status(e, ST_UNSUPPORTED, "harness: %s", pcb_errmsg());
        outputs_free(&t->verified);
        outputs_free(&t->scratch);
        return 0;
    }
    int count_fault;
    fault_for(ctx, im, &t->slow, &count_fault);
    verify(im, task, e, &t->verified, count_fault);
    bench_utc_now(e->when, sizeof e->when);
    if (e->status == ST_OK || e->status == ST_FAILED_VERIFY)
        bench_calib_note(ctx->calib, im, cfg, e->total_s);
    bench_progress(ctx, "%s %s: %s in %.3g s%s%s", cfg->id, im->name,
                   e->status == ST_OK ? "verified" : bench_status_name(e->status), e->total_s,
                   e->detail[0] ? ": " : "", e->detail);
    if (e->status == ST_OK && e->total_s > budget) {
        set_status(e, ST_SKIPPED_BUDGET, "one run took %.3g s, over the budget of %g s: verified, "
                   "not timed", e->total_s, budget);
        e->e2e.clock = "verification run";
        e->e2e.reps = 1;
        e->e2e.iterations = 1;
        e->e2e.sample[0] = e->e2e.cpu[0] = e->total_s;
        bench_figure_stats(&e->e2e);
    }
    if (e->status != ST_OK) {
        outputs_free(&t->verified);
        outputs_free(&t->scratch);
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
    t->flush = ctx->opt->flush_l2;
    t->points = work_points(cfg);
    t->pairs = cfg->problem == PCB_NN ? (double)cfg->batch * (double)cfg->n * (double)cfg->nq : 0;
    return 1;
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

static void time_all(bench_ctx *ctx, bench_result *r, timed *tv, int nt)
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
            set_status(e, status_for(rc), "timing: %s", pcb_errmsg());
        else if (tv[i].fail_status != ST_NONE)
            set_status(e, tv[i].fail_status, "%s", tv[i].fail_msg);
        else if (e->compute.reps < 1)
            set_status(e, ST_FAILED_RUN, "timing produced no samples");
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

int bench_run_config(bench_ctx *ctx, bench_result *r)
{
    const bench_config *cfg = &r->config;
    const bench_opts *o = ctx->opt;
    double budget = o->have_budget ? o->budget : ctx->suite->budget;
    const char *ref = bench_reference(cfg->problem);
    snprintf(r->reference, sizeof r->reference, "%s", ref ? ref : "");

    const pcb_impl *pending[64];
    int np = 0, kept = 0;
    for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
        const pcb_impl *im = *it;
        if (im->problem != cfg->problem || !selected(o->impls, im->name))
            continue;
        bench_entry *e = bench_result_entry(r, im->name, 1);
        if (!e)
            return pcb_fail(PCB_ENOMEM, "out of memory");
        /* Also kept: unavailable before and still unavailable (no device). */
        if (!o->force && (bench_entry_final(e, budget) ||
                          (e->status == ST_UNAVAILABLE && pcb_impl_available(im) != PCB_OK))) {
            kept++;
            continue;
        }
        memset(e, 0, sizeof *e);
        snprintf(e->impl, sizeof e->impl, "%s", im->name);
        e->device = im->device;
        e->exact = im->exact;
        e->budget_s = budget;
        e->predicted_s = -1;
        e->fresh = 1;
        bench_utc_now(e->when, sizeof e->when);
        snprintf(e->git, sizeof e->git, "%s", ctx->env->git);
        if (np < 64)
            pending[np++] = im;
    }
    for (const char *const *m = pcb_not_built(); *m; m += 2) {
        if (strcmp(m[0], pcb_problem_name(cfg->problem)) != 0 || !selected(o->impls, m[1]))
            continue;
        bench_entry *e = bench_result_entry(r, m[1], 1);
        if (!e)
            return pcb_fail(PCB_ENOMEM, "out of memory");
        if (e->status == ST_UNAVAILABLE && !o->force)
            continue;
        e->device = strcmp(m[1], "flann") == 0 ? PCB_CPU : PCB_CUDA;
        e->fresh = 1;
        set_status(e, ST_UNAVAILABLE, "not built (%s)",
                   strcmp(m[1], "flann") == 0 ? "libflann-dev was not found" : "nvcc was not found");
    }
    if (np == 0)
        return PCB_OK;
    if (!kept) /* nothing of earlier runs is left: their reports go too */
        json_free(&r->gbench);

    bench_data d;
    int rc = bench_data_make(cfg, &d);
    if (rc != PCB_OK) {
        for (int i = 0; i < np; i++)
            set_status(bench_result_entry(r, pending[i]->name, 0),
                       rc == PCB_ENOMEM ? ST_UNSUPPORTED : ST_UNAVAILABLE, "dataset %s: %s",
                       cfg->dataset, pcb_errmsg());
        bench_progress(ctx, "%s: dataset unavailable: %s", cfg->id, pcb_errmsg());
        return PCB_OK;
    }
    pcb_task task = {.problem = cfg->problem, .batch = cfg->batch, .n = cfg->n,
                     .nq = cfg->problem == PCB_EMD ? cfg->n : cfg->nq, .m = cfg->m,
                     .a = d.a, .b = d.b};
    pcb_task timing = task; /* verified with every thread, maybe timed on fewer */
    timing.opt.threads = o->have_threads ? o->threads : ctx->suite->threads;
    timed *tv = calloc((size_t)np, sizeof *tv);
    if (!tv) {
        bench_data_free(&d);
        return pcb_fail(PCB_ENOMEM, "out of memory");
    }
    int nt = 0;
    for (int i = 0; i < np; i++)
        nt += prepare_entry(ctx, pending[i], &task, &timing,
                            bench_result_entry(r, pending[i]->name, 0), &tv[nt]);
    if (nt > 0)
        time_all(ctx, r, tv, nt);
    for (int i = 0; i < nt; i++) {
        outputs_free(&tv[i].verified);
        outputs_free(&tv[i].scratch);
    }
    free(tv);
    bench_data_free(&d);
    return PCB_OK;
}
