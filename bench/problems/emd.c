/* emd.c - EMD in the tool: its configurations and their work. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli/cli.h"
#include "impl/emd/emd.h"
#include "problems.h"

static bench_config *add(bench_config_list *l, const char *dataset, int64_t batch, int64_t n)
{
    bench_config *c = bench_config_add(l, PCB_EMD, dataset, batch, n, n, 0);
    if (c)
        snprintf(c->id, sizeof c->id, "emd/%s/b%lld/n%lld", dataset, (long long)batch,
                 (long long)n);
    return c;
}

/* In loss mode: the certified gap asked for. */
static bench_config *add_gap(bench_config_list *l, const char *dataset, int64_t batch,
                             int64_t n, double gap)
{
    bench_config *c = add(l, dataset, batch, n);
    if (c) {
        c->max_gap = gap;
        size_t len = strlen(c->id);
        snprintf(c->id + len, sizeof c->id - len, "/gap%g", gap);
    }
    return c;
}

/* On a cube and on sphere surfaces, where auctions fight longest. */
static const char *const kinds[] = {"uniform", "sphere"};

static int seed(bench_config_list *l)
{
    static const int64_t sn[] = {1024, 2048, 4096}, sb[] = {1, 32};
    int ok = 1;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 2 && ok; j++)
                ok = add(l, kinds[k], sb[j], sn[i]) != NULL;
    /* as a training loss: a batch certified within 1% (its 0.1% twin above) */
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 3 && ok; i += 2)
            ok = add_gap(l, kinds[k], 32, sn[i], 0.01) != NULL;
    return ok ? PCB_OK : PCB_ENOMEM;
}

static int full(bench_config_list *l)
{
    static const int64_t fn[] = {256, 512, 1024, 2048, 4096, 8192}, fb[] = {1, 8, 32};
    int ok = 1;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 3 && ok; j++)
                ok = add(l, kinds[k], fb[j], fn[i]) != NULL;
    /* Time against the certified bound (0.1%: the configurations above), and
     * large pairs: uniform, consecutive lidar sweeps, noisy copies of a shape. */
    static const double gaps[] = {0.002, 0.005, 0.01, 0.02, 0.05, 0.1};
    for (int k = 0; k < 2; k++)
        for (int i = 2; i < 6; i += 2)
            for (int g = 0; g < 6 && ok; g++)
                ok = add_gap(l, kinds[k], 32, fn[i], gaps[g]) != NULL;
    /* a training loss's looser bounds where MSN's setting is the field's choice */
    for (int k = 0; k < 2; k++)
        for (int i = 3; i < 6; i += 2)
            for (int g = 4; g < 6 && ok; g++)
                ok = add_gap(l, kinds[k], 32, fn[i], gaps[g]) != NULL;
    /* and at the batches training runs at 2,048 */
    static const int64_t tb[] = {64, 128};
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 2; j++)
            for (int g = 4; g < 6 && ok; g++)
                ok = add_gap(l, kinds[k], tb[j], 2048, gaps[g]) != NULL;
    static const char *const pairs[] = {"lidar", "noisy"};
    for (int k = 0; k < 2; k++)
        for (int i = 2; i < 6 && ok; i += 2)
            ok = add(l, pairs[k], 32, fn[i]) != NULL;
    for (int k = 0; k < 3 && ok; k++)
        ok = add(l, k == 2 ? "noisy" : k ? "lidar" : "uniform", 32, 16384) != NULL;
    return ok ? PCB_OK : PCB_ENOMEM;
}

static int configs(bench_config_list *l, const char *suite)
{
    if (!strcmp(suite, "seed"))
        return seed(l);
    if (!strcmp(suite, "full"))
        return full(l);
    if (!strcmp(suite, "quick"))
        return add(l, "uniform", 1, 128) && add(l, "uniform", 2, 256) ? PCB_OK : PCB_ENOMEM;
    return PCB_OK;
}

/* the exact solver's cubic worst case */
static double size(const bench_config *c)
{
    return (double)c->batch * (double)c->n * (double)c->n * (double)c->n;
}

static double points(const bench_config *c)
{
    return (double)c->batch * (double)c->n;
}

/* ---- pcbench check emd ---- */
static const char *check_missing(const struct run_args *a)
{
    return !a->in_a || !a->in_b ? "check emd needs -a A and -b B" : NULL;
}

/* the gap to the optimum, whatever n */
static void check_task(const struct run_args *a, pcb_task *t)
{
    (void)a;
    t->opt.emd_gap_max_n = t->n;
}

static void check_summary(const struct run_args *a, const pcb_task *t, const pcb_result *r,
                          const pcb_report *rep, int has_dist)
{
    (void)has_dist;
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
    if (bij && rep->gap >= 0) {
        const double value = pcb_emd_mean_matched(t->a, t->b, t->n, r->index, NULL);
        printf(", value %.9g, optimum %.9g, gap %.3g (allowed %.3g)", value,
               value / (1 + rep->gap), rep->gap, a->max_gap);
    }
    printf("\n");
}

/* ---- planted defects (pcbench verify --defects; bench/verify/defects.h) ---- */
/* Every point of A to its nearest point of B, taken or not. */
static int nearest_compute(void *state)
{
    pcb_variant *v = state;
    const pcb_task *t = &v->task;
    for (int64_t b = 0; b < t->batch; b++) {
        const float *a = t->a + b * t->n * 3, *bb = t->b + b * t->n * 3;
        double sum = 0;
        for (int64_t i = 0; i < t->n; i++) {
            double best = HUGE_VAL;
            int32_t at = 0;
            for (int64_t j = 0; j < t->n; j++) {
                double d = pcb_emd_cost(a + 3 * i, bb + 3 * j);
                if (d < best)
                    best = d, at = (int32_t)j;
            }
            v->idx[b * t->n + i] = at;
            sum += best;
        }
        v->value[b] = sum / (double)t->n;
    }
    return PCB_OK;
}

/* A forward auction that stops after one phase at eps = 5% of the clouds'
 * extent, where the real ones scale eps down to their target. */
static int early_compute(void *state)
{
    pcb_variant *v = state;
    const pcb_task *t = &v->task;
    const int64_t n = t->n;
    double *price = malloc((size_t)n * sizeof *price);
    int32_t *owner = malloc((size_t)n * sizeof *owner);
    if (!price || !owner) {
        free(price), free(owner);
        return pcb_fail(PCB_ENOMEM, "defect variant: out of memory");
    }
    for (int64_t b = 0; b < t->batch; b++) {
        const float *a = t->a + b * n * 3, *bb = t->b + b * n * 3;
        int32_t *match = v->idx + b * n;
        const double extent = pcb_emd_cost_bound(a, bb, n), eps = extent > 0 ? 0.05 * extent : 1;
        for (int64_t j = 0; j < n; j++)
            price[j] = 0, owner[j] = -1;
        for (int64_t i = 0; i < n; i++)
            match[i] = -1;
        for (int64_t cursor = 0;;) { /* the lowest unassigned bidder bids */
            while (cursor < n && match[cursor] >= 0)
                cursor++;
            if (cursor == n)
                break;
            const int64_t i = cursor;
            double best = HUGE_VAL, second = HUGE_VAL;
            int64_t at = 0;
            for (int64_t j = 0; j < n; j++) {
                double c = pcb_emd_cost(a + 3 * i, bb + 3 * j) + price[j];
                if (c < best)
                    second = best, best = c, at = j;
                else if (c < second)
                    second = c;
            }
            price[at] += (second < HUGE_VAL ? second - best : 0) + eps;
            const int32_t prev = owner[at];
            owner[at] = (int32_t)i, match[i] = (int32_t)at;
            if (prev >= 0) {
                match[prev] = -1;
                cursor = prev < cursor ? prev : cursor;
            }
        }
        v->value[b] = pcb_emd_mean_matched(a, bb, n, match, NULL);
    }
    free(price), free(owner);
    return PCB_OK;
}

/* The exact solver, but for point counts the seed kernel cannot scan
 * without reading past a cost row, the last point of B is read from past
 * the row: here the start of the row, B's first point again. The matching
 * is optimal for the misread cloud, a bijection, and its value is B's real
 * one: only its distance to the optimum gives it away. */
static int overread_compute(void *state)
{
    pcb_variant *v = state;
    const pcb_task *t = &v->task;
    const size_t floats = (size_t)(t->batch * t->n * 3);
    float *b = malloc(floats * sizeof *b);
    if (!b)
        return pcb_fail(PCB_ENOMEM, "defect variant: out of memory");
    memcpy(b, t->b, floats * sizeof *b);
    for (int64_t c = 0; c < t->batch && !pcb_emd_seed_n_ok(t->n); c++)
        memcpy(b + (c * t->n + t->n - 1) * 3, b + c * t->n * 3, 3 * sizeof *b);
    pcb_task misread = *t;
    misread.b = b;
    pcb_result r = {.index = v->idx};
    int rc = pcb_run(&pcb_emd_exact, &misread, &r, NULL);
    for (int64_t c = 0; rc == PCB_OK && c < t->batch; c++)
        v->value[c] = pcb_emd_mean_matched(t->a + c * t->n * 3, t->b + c * t->n * 3, t->n,
                                           v->idx + c * t->n, NULL);
    free(b);
    return rc;
}

PCB_VARIANT(PCB_EMD, nearest_target, 0, 0, PCB_COST_CUBIC, nearest_compute, "each point to its nearest target");
PCB_VARIANT(PCB_EMD, early_stop, 0, 0.01, PCB_COST_CUBIC, early_compute, "one auction phase at a coarse eps");
PCB_VARIANT(PCB_EMD, row_overread, 1, 0, PCB_COST_CUBIC, overread_compute, "exact, B's last point misread");

static const pcb_defect defects[] = {
    {&nearest_target, "matches each point of A to its nearest point of B, so two points can "
                      "share one target: not a bijection", "MSN's EMD", 0, 0},
    {&early_stop, "an auction that stops at a coarse eps (5% of the extent) while promising "
                  "1% of the optimum", "auction EMD kernels with a fixed iteration cap", 0, 0},
    {&row_overread, "reads past a cost row for n outside {< 1024, 1024, 2048, 4096}: the last "
                    "target is misread", "the documents' CUDA auction kernel (its unrolled scan)",
     0, 0},
    {NULL, NULL, NULL, 0, 0}};

const bench_problem_face bench_emd_face = {
    .configs = configs,
    .size = size,
    .points = points,
    .calibration = {.n = 256, .nq = 256},
    .sides = 2,
    .square = 1,
    .check = {.usage = "emd -a A -b B --answer FILE [--max-gap G]",
              .answers = "the index of B matched to each point of A: a bijection within "
                         "1e-6 (relative) of the exact solver's optimum (--max-gap G: "
                         "within G)",
              .options = "a:b:A:G:S:Nh",
              .letters = "abAGSNh",
              .missing = check_missing,
              .gap = 1,
              .task = check_task,
              .summary = check_summary},
    .verify = pcb_verify_emd,
    .defects = defects,
};
