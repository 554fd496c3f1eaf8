/* nn.c - NN in the tool: its configurations and their work. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli/cli.h"
#include "impl/fps/fps.h"
#include "impl/nn/nn.h"
#include "problems.h"

static bench_config *add(bench_config_list *l, const char *dataset, int64_t batch, int64_t n,
                         int64_t nq)
{
    return bench_config_pair(l, PCB_NN, dataset, batch, n, nq);
}

static int configs(bench_config_list *l, const char *suite)
{
    const int full = !strcmp(suite, "full");
    int ok = 1;
    if (!strcmp(suite, "seed")) /* the documents' two lidar sweeps */
        ok = add(l, "lidar", 1, 120000, 120000) != NULL;
    if (full || !strcmp(suite, "train")) {
        /* where training loops call it */
        ok = bench_config_training(l, add) == PCB_OK;
    }
    if (ok && (full || !strcmp(suite, "ragged"))) {
        /* 8 lidar sweeps of 60k-120k points, each against the next (its
         * lengths running the other way), beside its equal-size twin */
        bench_config *c = add(l, "lidar", 8, 120000, 120000);
        if (c)
            bench_config_ragged(c, 60000);
        ok = c && add(l, "lidar", 8, 90000, 90000);
    }
    if (full) {
        static const int64_t nn_n[] = {10000, 30000, 120000, 1000000};
        for (int j = 0; j < 4 && ok; j++)
            ok = add(l, "lidar", 1, nn_n[j], nn_n[j]) && add(l, "uniform", 1, nn_n[j], nn_n[j]);
    }
    if (!strcmp(suite, "quick"))
        ok = add(l, "uniform", 1, 5000, 5000) && add(l, "uniform", 2, 2000, 3000);
    return ok ? PCB_OK : PCB_ENOMEM;
}

static double size(const bench_config *c)
{
    return (double)c->batch * (double)c->n * (double)c->nq;
}

static double points(const bench_config *c)
{
    return (double)c->batch * (double)c->nq;
}

/* ---- pcbench check nn ---- */
static const char *check_missing(const struct run_args *a)
{
    return !a->in_a || !a->in_b ? "check nn needs -r REF and -q QUERY" : NULL;
}

static void check_summary(const struct run_args *a, const pcb_task *t, const pcb_result *r,
                          const pcb_report *rep, int has_dist)
{
    (void)a, (void)r;
    printf("nn: %lld queries", (long long)t->nq);
    if (rep->recall >= 0)
        printf(", recall %.6g, worst distance ratio %.6g", rep->recall, rep->worst_ratio);
    printf("%s\n", has_dist ? ", squared distances checked" : "");
}

/* ---- planted defects (pcbench verify --defects; bench/verify/defects.h) ---- */
static int expanded_compute(void *state)
{
    pcb_variant *v = state;
    pcb_variant_expanded_nn(&v->task, v->idx, v->dist2);
    return PCB_OK;
}

enum { WEDGES = 300 };

static int wedge_of(const float *p)
{
    double a = atan2((double)p[1], (double)p[0]); /* -pi..pi */
    const double pi = 3.14159265358979323846;
    int w = (int)((a + pi) / (2 * pi) * WEDGES);
    return w < 0 ? 0 : w >= WEDGES ? WEDGES - 1 : w;
}

/* Only the reference points in the query's azimuth wedge (the nearest
 * non-empty wedge when it has none). */
static int wedge_compute(void *state)
{
    pcb_variant *v = state;
    const pcb_task *t = &v->task;
    int *wedge = malloc((size_t)t->n * sizeof *wedge);
    if (!wedge)
        return pcb_fail(PCB_ENOMEM, "defect variant: out of memory");
    for (int64_t b = 0; b < t->batch; b++) {
        const float *ref = t->a + b * t->n * 3;
        int count[WEDGES] = {0};
        for (int64_t k = 0; k < t->n; k++)
            count[wedge[k] = wedge_of(ref + 3 * k)]++;
        for (int64_t i = 0; i < t->nq; i++) {
            const float *q = t->b + (b * t->nq + i) * 3;
            const int home = wedge_of(q);
            int w = home;
            for (int off = 1; !count[w]; off++) /* some wedge holds a point: n >= 1 */
                w = (home + (off % 2 ? off / 2 + 1 : WEDGES - off / 2) + WEDGES) % WEDGES;
            float best = INFINITY;
            int32_t at = 0;
            for (int64_t k = 0; k < t->n; k++)
                if (wedge[k] == w) {
                    float d = pcb_fps_d2(q, ref + 3 * k);
                    if (d < best)
                        best = d, at = (int32_t)k;
                }
            v->idx[b * t->nq + i] = at;
            v->dist2[b * t->nq + i] = best;
        }
    }
    free(wedge);
    return PCB_OK;
}

PCB_VARIANT(PCB_NN, expanded_norm, 1, 0, PCB_COST_ALL_PAIRS, expanded_compute, "brute force, expanded squared norm");
PCB_VARIANT(PCB_NN, azimuth_wedge, 1, 0, PCB_COST_ALL_PAIRS, wedge_compute, "brute force within the query's wedge");
#ifdef PCB_HAVE_FLANN
extern const pcb_impl pcb_nn_flann_randomized; /* the real one, registered as approximate */
#endif

static const pcb_defect defects[] = {
    {&expanded_norm, "squared distance as |q|^2 + |p|^2 - 2 q.p in float32: cancels far from "
                     "the origin (lidar, UTM)", "batched distance code (the matrix-product "
                                                "trick) used for NN and ICP", 0, 0},
    {&azimuth_wedge, "searches only the query's azimuth wedge (300 wedges by atan2(y, x))",
     "the NN slides' attempt 3", 0, 0},
#ifdef PCB_HAVE_FLANN
    {&pcb_nn_flann_randomized, "FLANN's default randomized k-d trees (4 trees, 32 checks): "
                               "approximate, misses neighbours in 3-D", "FLANN's defaults, as "
                               "scan-matching code uses them", 0, 1},
#endif
    {NULL, NULL, NULL, 0, 0}};

const bench_problem_face bench_nn_face = {
    .configs = configs,
    .size = size,
    .points = points,
    .pairs = size,
    .calibration = {.n = 4000, .nq = 4000},
    .sides = 2,
    .check = {.usage = "nn -r REF -q QUERY --answer FILE",
              .answers = "'index [squared distance]' for every query point",
              .options = "r:q:A:S:Nh",
              .letters = "rqASNh",
              .missing = check_missing,
              .distances = 1,
              .summary = check_summary},
    .verify = pcb_verify_nn,
    .defects = defects,
};
