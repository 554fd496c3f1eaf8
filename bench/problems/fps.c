/* fps.c - FPS in the tool: its configurations and their work. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli/cli.h"
#include "impl/fps/fps.h"
#include "problems.h"

static bench_config *add(bench_config_list *l, const char *dataset, int64_t batch, int64_t n,
                         int64_t m)
{
    bench_config *c = bench_config_add(l, PCB_FPS, dataset, batch, n, 0, m);
    if (c)
        snprintf(c->id, sizeof c->id, "fps/%s/b%lld/n%lld/m%lld", dataset, (long long)batch,
                 (long long)n, (long long)m);
    return c;
}

/* Where pruning matters: 4,096 samples of a 120k-point lidar sweep, and of
 * 50,000 uniform points (the size fpsample reports). */
static int beyond(bench_config_list *l)
{
    return add(l, "lidar", 1, 120000, 4096) && add(l, "uniform", 1, 50000, 4096) ? PCB_OK
                                                                                  : PCB_ENOMEM;
}

static int configs(bench_config_list *l, const char *suite)
{
    const int full = !strcmp(suite, "full");
    int ok = 1;
    if (!strcmp(suite, "seed")) { /* the documents' table */
        for (int b = 1; b <= 6 && ok; b++)
            ok = add(l, "uniform", b, 10000, 1000) != NULL;
        return ok && add(l, "uniform", 6, 10000, 10000) ? beyond(l) : PCB_ENOMEM;
    }
    if (full) {
        static const int64_t fb[] = {1, 2, 4, 8, 16, 32};
        static const int64_t fn[] = {1000, 4000, 10000, 16000, 100000, 1000000};
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6 && ok; j++)
                ok = add(l, "uniform", fb[i], fn[j], fn[j] / 10) &&
                     add(l, "uniform", fb[i], fn[j], fn[j] / 4);
        /* The sizes of the FPS targets: training batches of mid-size clouds,
         * one huge cloud, and the small clouds of a network's later layers
         * (32 x 1,000 x 100 and x 250 are in the sweep above). */
        static const int64_t more[][3] = {{32, 16384, 4096}, {16, 8192, 2048}, {64, 8192, 1024},
                                          {32, 1024, 256},   {32, 256, 64},    {1, 1000000, 16384}};
        for (int i = 0; i < 6 && ok; i++)
            ok = add(l, "uniform", more[i][0], more[i][1], more[i][2]) != NULL;
        if (!ok || beyond(l) != PCB_OK)
            return PCB_ENOMEM;
    }
    if (full || !strcmp(suite, "ragged")) { /* 8 lidar sweeps of 60k-120k points, its twin */
        bench_config *c = add(l, "lidar", 8, 120000, 4096);
        if (!c)
            return PCB_ENOMEM;
        bench_config_ragged(c, 60000);
        if (!add(l, "lidar", 8, 90000, 4096))
            return PCB_ENOMEM;
    }
    if (!strcmp(suite, "quick"))
        ok = add(l, "uniform", 1, 2000, 100) && add(l, "uniform", 2, 3000, 64);
    return ok ? PCB_OK : PCB_ENOMEM;
}

static double size(const bench_config *c)
{
    return (double)c->batch * (double)c->n * (double)c->m;
}

static double points(const bench_config *c)
{
    return (double)c->batch * (double)c->n;
}

/* ---- pcbench check fps ---- */
static const char *check_missing(const struct run_args *a)
{
    return !a->in_a || !a->have_m ? "check fps needs -i CLOUD and -m M" : NULL;
}

static void check_task(const struct run_args *a, pcb_task *t)
{
    t->m = a->m, t->start = a->start;
}

static void check_summary(const struct run_args *a, const pcb_task *t, const pcb_result *r,
                          const pcb_report *rep, int has_dist)
{
    (void)a, (void)r, (void)has_dist;
    printf("fps: %lld samples of %lld points from %lld%s%s\n", (long long)t->m, (long long)t->n,
           (long long)t->start, rep->ok ? ": " : "", rep->ok ? rep->detail : "");
}

/* ---- planted defects (pcbench verify --defects; bench/verify/defects.h) ---- */
enum { SKIP_NEAR_ORIGIN = 1, CAP_INIT = 2, REPEAT_WHEN_DONE = 4, TIES_HIGH = 8 };

static int fps_with(pcb_variant *v, int defect)
{
    const pcb_task *t = &v->task;
    float *mind = malloc((size_t)t->n * sizeof *mind);
    if (!mind)
        return pcb_fail(PCB_ENOMEM, "defect variant: out of memory");
    for (int64_t b = 0; b < t->batch; b++) {
        const float *xyz = t->a + b * t->n * 3;
        int32_t *idx = v->idx + b * t->m;
        for (int64_t k = 0; k < t->n; k++)
            mind[k] = defect & CAP_INIT ? 5e4f : INFINITY;
        idx[0] = (int32_t)t->start;
        for (int64_t j = 1; j < t->m; j++) {
            const float *q = xyz + 3 * (int64_t)idx[j - 1];
            mind[idx[j - 1]] = -1; /* dp's mark: a sample is not a candidate again */
            float best = -1;
            int32_t besti = 0;
            for (int64_t k = 0; k < t->n; k++) {
                const float *p = xyz + 3 * k;
                if ((defect & SKIP_NEAR_ORIGIN) && p[0] * p[0] + p[1] * p[1] + p[2] * p[2] <= 1e-3f)
                    continue;
                float d = pcb_fps_d2(p, q);
                mind[k] = d < mind[k] ? d : mind[k];
                if (mind[k] > best || ((defect & TIES_HIGH) && mind[k] == best))
                    best = mind[k], besti = (int32_t)k;
            }
            idx[j] = (defect & REPEAT_WHEN_DONE) && best == 0 ? idx[j - 1] : besti;
        }
    }
    free(mind);
    return PCB_OK;
}

static int near_origin_compute(void *s) { return fps_with(s, SKIP_NEAR_ORIGIN); }
static int capped_compute(void *s) { return fps_with(s, CAP_INIT); }
static int repeat_compute(void *s) { return fps_with(s, REPEAT_WHEN_DONE); }
static int ties_high_compute(void *s) { return fps_with(s, TIES_HIGH); }

PCB_VARIANT(PCB_FPS, near_origin_skip, 1, 0, PCB_COST_SAMPLES, near_origin_compute, "dp, skipping near-origin points");
PCB_VARIANT(PCB_FPS, capped_init, 1, 0, PCB_COST_SAMPLES, capped_compute, "dp, minima starting at 5e4");
PCB_VARIANT(PCB_FPS, repeat_when_done, 1, 0, PCB_COST_SAMPLES, repeat_compute, "dp, repeating once all are chosen");
PCB_VARIANT(PCB_FPS, ties_to_highest, 1, 0, PCB_COST_SAMPLES, ties_high_compute, "dp, ties to the highest index");
#ifdef PCB_HAVE_CUDA
extern const pcb_impl pcb_defect_fps_torn_argmax; /* bench/verify/defect_torn_argmax.cu */
#endif

static const pcb_defect defects[] = {
    {&near_origin_skip, "skips every point whose squared norm is <= 1e-3 (never updated, never "
                        "chosen)", "PointNet++'s CUDA FPS kernel and its copies (pointnet2_ops, timed as a peer)",
     0, 0},
    {&capped_init, "running minimum distances start at 5e4, capping larger squared distances",
     "FPS kernels that initialise their distance buffer to a constant instead of +inf "
     "(torch_cluster's fps, timed as a peer)", 0, 0},
#ifdef PCB_HAVE_CUDA
    {&pcb_defect_fps_torn_argmax, "block-wide argmax by an unguarded compare-and-store into "
                                  "one shared (distance, index) pair: racing threads tear the "
                                  "pair and lose the maximum", "CUDA FPS kernels whose "
                                  "reduction trades barriers or atomics for speed", 0, 0},
#endif
    {&repeat_when_done, "repeats its previous sample once every distinct point is chosen "
                        "(m above the distinct points)",
     "the classic kernel and its copies on clouds with duplicates (PyTorch3D #1486): samples "
     "must be distinct", 0, 0},
    {&ties_to_highest, "takes the highest index among tied farthest points (and among the "
                       "unchosen duplicates once only those remain)",
     "kernels whose reduction keeps the last of equal candidates; correct (any tie is "
     "right), so it must pass", 1, 0},
    {NULL, NULL, NULL, 0, 0}};

const bench_problem_face bench_fps_face = {
    .configs = configs,
    .size = size,
    .points = points,
    .calibration = {.n = 2000, .m = 200},
    .sides = 1,
    .check = {.usage = "fps -i CLOUD -m M [--start S] --answer FILE",
              .answers = "the M sample indices in order",
              .options = "i:m:s:A:S:Nh",
              .letters = "imsASNh",
              .missing = check_missing,
              .task = check_task,
              .summary = check_summary},
    .verify = pcb_verify_fps,
    .defects = defects,
};
