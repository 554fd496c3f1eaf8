/* chamfer.c - chamfer in the tool: its configurations and their work. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli/cli.h"
#include "impl/chamfer/chamfer.h"
#include "impl/nn/nn.h"
#include "problems.h"

static bench_config *add(bench_config_list *l, const char *dataset, int64_t batch, int64_t n,
                         int64_t nq)
{
    return bench_config_pair(l, PCB_CHAMFER, dataset, batch, n, nq);
}

static int configs(bench_config_list *l, const char *suite)
{
    const int full = !strcmp(suite, "full");
    int ok = 1;
    if (full || !strcmp(suite, "train")) {
        /* a training loss, and a prediction against a target of another size */
        ok = bench_config_training(l, add) == PCB_OK && add(l, "sphere", 32, 2048, 1024) &&
             add(l, "sphere", 16, 16384, 4096);
    }
    if (ok && (full || !strcmp(suite, "ragged"))) {
        /* 32 object clouds of 512-4,096 points against a second batch, beside
         * its equal-size twin */
        bench_config *c = add(l, "sphere", 32, 4096, 4096);
        if (c)
            bench_config_ragged(c, 512);
        ok = c && add(l, "sphere", 32, 2304, 2304);
    }
    if (!strcmp(suite, "quick"))
        ok = add(l, "uniform", 2, 2000, 1500) != NULL;
    return ok ? PCB_OK : PCB_ENOMEM;
}

/* both directions */
static double size(const bench_config *c)
{
    return 2 * (double)c->batch * (double)c->n * (double)c->nq;
}

static double points(const bench_config *c)
{
    return (double)c->batch * (double)(c->n + c->nq);
}

/* ---- pcbench check chamfer ---- */
static const char *check_missing(const struct run_args *a)
{
    if (a->have_convention && !a->have_value)
        return "--convention is the convention of --value V: give the value too";
    return !a->in_a || !a->in_b ? "check chamfer needs -a A and -b B" : NULL;
}

/* An answer without distances: its indices' (an index out of range is still
 * caught by the judge). */
static int check_ready(const struct run_args *a, const pcb_task *t, pcb_result *r, void **owned)
{
    (void)a;
    if (r->dist2)
        return 0;
    const int64_t count = pcb_answer_count(t), first = t->batch * t->n;
    float *own = malloc((size_t)count * sizeof *own);
    if (!own)
        return pcb_fail(PCB_ENOMEM, "no memory for %lld answers", (long long)count);
    for (int64_t i = 0; i < count; i++) {
        const int32_t j = r->index[i];
        const int64_t other = i < first ? t->nq : t->n;
        const float *x = i < first ? t->a + 3 * i : t->b + 3 * (i - first);
        const float *y = (i < first ? t->b : t->a) + 3 * (j >= 0 && j < other ? j : 0);
        own[i] = pcb_nn_d2(x, y);
    }
    r->dist2 = own;
    *owned = own;
    return PCB_OK;
}

/* The value against the true one in the convention asked; say_pass 0: a
 * passing value prints no "pass" line (the answer's verdict follows, and is
 * the first line only when both pass). */
static int check_value(const struct run_args *a, const pcb_task *t, int say_pass, int *right)
{
    double want = 0;
    int ok = 0, rc = pcb_chamfer_check_value(t, a->value, &a->convention, &want, &ok);
    if (rc != PCB_OK)
        return rc;
    char name[32];
    pcb_chamfer_convention_name(&a->convention, name, sizeof name);
    if (ok && say_pass)
        printf("pass\n");
    else if (!ok)
        printf("FAIL: value %.9g, the nearest distances give %.9g\n", a->value, want);
    printf("chamfer: %s value %.9g, true %.9g\n", name, a->value, want);
    *right = ok;
    return PCB_OK;
}

static int check_has_value(const struct run_args *a)
{
    return a->have_value;
}

static void check_summary(const struct run_args *a, const pcb_task *t, const pcb_result *r,
                          const pcb_report *rep, int has_dist)
{
    (void)a, (void)r, (void)rep;
    printf("chamfer: %lld + %lld points%s\n", (long long)t->n, (long long)t->nq,
           has_dist ? ", squared distances checked" : "");
}

/* ---- planted defects (pcbench verify --defects; bench/verify/defects.h) ---- */
/* Both directions in the expanded form (a chamfer loss written with cdist),
 * or right (naive) but the value of A to B only (one direction taken for
 * the symmetric distance); values from the distances found. */
static int chamfer_with(pcb_variant *v, int one_way)
{
    const pcb_task *t = &v->task;
    const int64_t first = t->batch * t->n;
    int rc = PCB_OK;
    for (int k = 0; k < 2 && !one_way; k++) {
        const pcb_task dir = pcb_chamfer_direction(t, k);
        pcb_variant_expanded_nn(&dir, v->idx + (k ? first : 0), v->dist2 + (k ? first : 0));
    }
    if (one_way) {
        pcb_result r = {.index = v->idx, .dist2 = v->dist2};
        rc = pcb_run(pcb_reference(PCB_CHAMFER), t, &r, NULL);
    }
    const pcb_chamfer_convention c = {PCB_CD_SQUARED, PCB_CD_MEAN,
                                      one_way ? PCB_CD_FORWARD : PCB_CD_BOTH};
    return rc == PCB_OK ? pcb_chamfer_values(t, v->dist2, &c, v->value) : rc;
}

static int gemm_chamfer_compute(void *s) { return chamfer_with(s, 0); }
static int one_way_compute(void *s) { return chamfer_with(s, 1); }

PCB_VARIANT(PCB_CHAMFER, gemm_chamfer, 1, 0, PCB_COST_ALL_PAIRS, gemm_chamfer_compute, "brute force, expanded norm");
PCB_VARIANT(PCB_CHAMFER, one_way_value, 1, 0, PCB_COST_ALL_PAIRS, one_way_compute, "exact, value of A to B only");

static const pcb_defect defects[] = {
    {&gemm_chamfer, "chamfer from |a|^2 + |b|^2 - 2 a.b distances in float32 (both ways): "
                    "wrong neighbours and values far from the origin, negative distances "
                    "clamped", "chamfer losses written with torch.cdist or a matrix product", 0, 0},
    {&one_way_value, "the nearest points right, the value only the mean from A to B",
     "one-directional chamfer (chamferdist's default) compared with the symmetric one", 0, 0},
    {NULL, NULL, NULL, 0, 0}};

const bench_problem_face bench_chamfer_face = {
    .configs = configs,
    .size = size,
    .points = points,
    .pairs = size,
    .calibration = {.n = 2000, .nq = 2000},
    .sides = 2,
    .check = {.usage = "chamfer -a A -b B [--answer FILE] [--value V [--convention C]]",
              .answers = "'index [squared distance]' for every point of A (its nearest in "
                         "B), then of B; --value V judges a value (its convention as in "
                         "pcbench chamfer --help)",
              .options = "a:b:A:S:Nh",
              .letters = "abAVCSNh",
              .missing = check_missing,
              .distances = 1,
              .ready = check_ready,
              .value = check_value,
              .has_value = check_has_value,
              .summary = check_summary},
    .verify = pcb_verify_chamfer,
    .defects = defects,
};
