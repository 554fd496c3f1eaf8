/* fps.c - FPS in the tool: its configurations and their work. */
#include <string.h>

#include "bench/cli/cli.h"
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

static double pairs(const bench_config *c)
{
    (void)c;
    return 0;
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

const bench_problem_face bench_fps_face = {
    .configs = configs,
    .size = size,
    .points = points,
    .pairs = pairs,
    .calibration = {.n = 2000, .m = 200},
    .sides = 1,
    .check = {.usage = "fps -i CLOUD -m M [--start S] --answer FILE",
              .answers = "the M sample indices in order",
              .options = "i:m:s:A:S:Nh",
              .letters = "imsASNh",
              .missing = check_missing,
              .task = check_task,
              .summary = check_summary},
};
