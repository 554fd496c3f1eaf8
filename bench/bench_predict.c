/* bench_predict.c - what runs and what is skipped: the reference of a
 * problem (its pcb_impl entry says), which stored results are final, the fault injection of the
 * gate's own test, and run-time prediction for the budget (a complexity
 * model per implementation scaled from its largest measured run). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_run.h"

const char *bench_reference(pcb_problem p)
{
    const pcb_impl *ref = pcb_reference(p);
    if (ref)
        return ref->name;
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
        double factor = 0;
        int used = 0;
        if (sscanf(item, "%7[a-z]:%7[a-z]/%47[a-z0-9_]%n", kind, x->problem, x->impl, &used) != 3)
            return pcb_fail(PCB_EINVAL, "PCBENCH_FAULT: '%s' is not kind:problem/impl[:n]", item);
        const char *rest = item + used;
        char tail;
        if (strcmp(kind, "slow") == 0 && sscanf(rest, ":%lf%c", &factor, &tail) == 1 &&
            factor >= 1 && factor <= 100)
            x->slow = factor;
        else if (strcmp(kind, "count") == 0 && !*rest)
            x->count = 1;
        else if (strcmp(kind, "ties") == 0 && strcmp(x->problem, "fps") == 0 && !*rest)
            x->ties = 1;
        else
            return pcb_fail(PCB_EINVAL, "PCBENCH_FAULT: '%s' (use slow:P/I:F, F from 1 to 100, "
                                        "count:P/I or ties:fps/I)", item);
    }
    return PCB_OK;
}

bench_fault bench_fault_for(const bench_fault *f, int nfaults, const pcb_impl *im)
{
    bench_fault sum = {.slow = 1};
    for (int i = 0; i < nfaults; i++)
        if (strcmp(f[i].problem, pcb_problem_name(im->problem)) == 0 &&
            strcmp(f[i].impl, im->name) == 0) {
            sum.slow *= f[i].slow;
            sum.count += f[i].count;
            sum.ties |= f[i].ties;
        }
    return sum;
}

int bench_fault_ties(const bench_fault *f, int nfaults, pcb_problem p)
{
    for (int i = 0; i < nfaults; i++)
        if (f[i].ties && strcmp(f[i].problem, pcb_problem_name(p)) == 0)
            return 1;
    return 0;
}

/* The FPS sequence that breaks exact ties toward the highest index, in
 * double precision as the validator measures: as right as dp's, but not
 * dp's wherever the farthest point has a copy. */
int bench_fault_plant_ties(const pcb_task *t, int32_t *index)
{
    double *mind = malloc((size_t)t->n * sizeof *mind);
    if (!mind)
        return pcb_fail(PCB_ENOMEM, "ties fault: out of memory");
    for (int64_t b = 0; b < t->batch; b++) {
        const float *xyz = t->a + 3 * b * t->n;
        int32_t *out = index + b * t->m;
        for (int64_t k = 0; k < t->n; k++)
            mind[k] = INFINITY;
        out[0] = (int32_t)t->start;
        for (int64_t j = 1; j < t->m; j++) {
            const float *q = xyz + 3 * (int64_t)out[j - 1];
            double best = -1;
            for (int64_t k = 0; k < t->n; k++) {
                const double dx = (double)xyz[3 * k] - q[0], dy = (double)xyz[3 * k + 1] - q[1],
                             dz = (double)xyz[3 * k + 2] - q[2];
                mind[k] = fmin(mind[k], dx * dx + dy * dy + dz * dz);
                if (mind[k] >= best) {
                    best = mind[k];
                    out[j] = (int32_t)k;
                }
            }
        }
    }
    free(mind);
    return PCB_OK;
}

int bench_fault_repeats(double slow, int64_t k)
{
    return (int)(floor((double)(k + 1) * slow) - floor((double)k * slow));
}

/* ---- run-time prediction ------------------------------------------------------ */
/* Work of one run in the implementation's own complexity (pcb_impl.cost;
 * pcbench.h says each model). */
static double model_units(const pcb_impl *im, const bench_config *c)
{
    double b = (double)c->batch, n = (double)c->n, nq = (double)c->nq, m = (double)c->m;
    switch (im->cost) {
    case PCB_COST_SAMPLES: return b * n * m;
    case PCB_COST_SAMPLES_SQUARED: return b * n * m * m / 2;
    case PCB_COST_ALL_PAIRS: return b * n * nq;
    case PCB_COST_INDEXED: return b * (n + nq) * log2(n + 2);
    case PCB_COST_GPU_PAIRS: return ceil(b / 32) * n * n * sqrt(n);
    default: return b * n * n * n; /* PCB_COST_CUBIC, and pessimistic where unset */
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
double bench_predict(bench_ctx *ctx, const pcb_impl *im, const bench_config *cfg)
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
