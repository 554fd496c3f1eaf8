/* emd.c - EMD in the tool: its configurations and their work. */
#include <string.h>

#include "stdlib.h"
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

static double pairs(const bench_config *c)
{
    (void)c;
    return 0;
}

/* ---- pcbench check emd ---- */
static const char *check_missing(const struct run_args *a)
{
    return !a->in_a || !a->in_b ? "check emd needs -a A and -b B" : NULL;
}

/* the gap to the optimum, whatever n */
static int check_ready(const struct run_args *a, const pcb_task *t, pcb_result *r, void **owned)
{
    (void)a, (void)r, (void)owned;
    char n[32];
    snprintf(n, sizeof n, "%lld", (long long)t->n);
    setenv("PCB_EMD_GAP_MAX_N", n, 1);
    return 0;
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

const bench_problem_face bench_emd_face = {
    .configs = configs,
    .size = size,
    .points = points,
    .pairs = pairs,
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
              .ready = check_ready,
              .summary = check_summary},
};
