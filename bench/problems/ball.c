/* ball.c - ball query in the tool: its configurations, their work and
 * fields. */
#include <string.h>

#include "bench/cli/cli.h"
#include "problems.h"

/* nq centres, the first nq points of each cloud (as an FPS output is a
 * subset of it), up to k inside radius. */
static bench_config *add(bench_config_list *l, const char *dataset, int64_t batch, int64_t n,
                         int64_t nq, double radius, int64_t k, int select)
{
    bench_config *c = bench_config_add(l, PCB_BALL, dataset, batch, n, nq, 0);
    if (!c)
        return NULL;
    c->k = k, c->self = 1, c->radius = radius, c->select = select;
    snprintf(c->id, sizeof c->id, "ball/%s/b%lld/n%lld/q%lld/r%g/k%lld/%s", dataset,
             (long long)batch, (long long)n, (long long)nq, radius, (long long)k,
             pcb_ball_select_name(select));
    return c;
}

/* Where PointNet++ and its descendants group: SSG classification (32 x
 * 1,024: 512 centres r 0.2, 128 centres r 0.4), MSG's radii, the segmentation
 * network's first layers (16-32 x 16,384 points, 4,096 and 1,024 centres),
 * large radii (0.8), and a lidar sweep (4,096 centres, r 0.8 m); both
 * selections. Unit-scaled clouds: uniform in the unit cube, sphere surfaces
 * of radius 1. */
static int configs(bench_config_list *l, const char *suite)
{
    static const struct {
        const char *kind;
        int64_t batch, n, nq;
        double radius;
        int64_t k;
    } sizes[] = {
        {"uniform", 32, 1024, 512, 0.2, 32},    {"uniform", 32, 1024, 128, 0.4, 64},
        {"sphere", 32, 1024, 512, 0.1, 16},     {"sphere", 32, 2048, 512, 0.2, 32},
        {"uniform", 16, 4096, 1024, 0.1, 32},   {"uniform", 32, 16384, 4096, 0.1, 32},
        {"uniform", 16, 16384, 1024, 0.2, 64},  {"uniform", 32, 2048, 256, 0.8, 16},
        {"lidar", 1, 120000, 4096, 0.8, 32},
    };
    int ok = 1;
    if (!strcmp(suite, "full") || !strcmp(suite, "ball"))
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            for (int select = PCB_BALL_FIRST; select <= PCB_BALL_NEAREST && ok; select++)
                ok = add(l, sizes[i].kind, sizes[i].batch, sizes[i].n, sizes[i].nq,
                         sizes[i].radius, sizes[i].k, select) != NULL;
    if (!strcmp(suite, "quick"))
        ok = add(l, "uniform", 2, 2000, 500, 0.1, 16, PCB_BALL_NEAREST) != NULL;
    return ok ? PCB_OK : PCB_ENOMEM;
}

/* as kNN's, the selection last */
static double size(const bench_config *c)
{
    return (double)c->batch * (double)c->n * (double)c->nq * (1 + (double)c->k / 64) + c->select;
}

static double points(const bench_config *c)
{
    return (double)c->batch * (double)c->nq;
}

static double pairs(const bench_config *c)
{
    return (double)c->batch * (double)c->n * (double)c->nq;
}

static void json_fields(FILE *f, const bench_config *c)
{
    fprintf(f, ", \"k\": %lld, \"radius\": ", (long long)c->k);
    json_put_num(f, c->radius);
    fputs(", \"select\": ", f);
    json_put_str(f, pcb_ball_select_name(c->select));
}

static const char *select_name(const bench_config *c)
{
    return pcb_ball_select_name(c->select);
}

/* ---- pcbench check ball ---- */
static const char *check_missing(const struct run_args *a)
{
    return !a->in_a || !a->in_b || !a->have_k || !a->have_radius
               ? "check ball needs -r REF, -q CENTRES, --radius R and -k K"
               : NULL;
}

static void check_task(const struct run_args *a, pcb_task *t)
{
    t->k = a->k, t->radius = a->radius, t->select = a->select;
}

/* --pad first: the first index repeated at the end of a row is padding */
static int check_ready(const struct run_args *a, const pcb_task *t, pcb_result *r, void **owned)
{
    (void)owned;
    for (int64_t q = 0; a->pad_first && q < t->nq; q++) {
        int32_t *row = r->index + q * t->k;
        for (int64_t s = t->k - 1; s > 0 && (row[s] == PCB_KNN_PAD || row[s] == row[0]); s--)
            row[s] = PCB_KNN_PAD;
    }
    return 0;
}

static void check_summary(const struct run_args *a, const pcb_task *t, const pcb_result *r,
                          const pcb_report *rep, int has_dist)
{
    (void)a, (void)r, (void)has_dist;
    printf("ball: %lld centres, k = %lld, radius %.9g, %s", (long long)t->nq, (long long)t->k,
           t->radius, pcb_ball_select_name(t->select));
    if (rep->recall >= 0)
        printf(", rows right %.6g", rep->recall);
    printf("\n");
}

const bench_problem_face bench_ball_face = {
    .configs = configs,
    .size = size,
    .points = points,
    .pairs = pairs,
    .calibration = {.n = 2000, .nq = 500, .k = 16, .radius = 0.1, .self = 1},
    .rows_of_k = 1,
    .sides = 2,
    .json_fields = json_fields,
    .select_name = select_name,
    .check = {.usage = "ball -r REF -q CENTRES --radius R -k K [--select S] [--pad P]\n"
                       "                          --answer FILE",
              .answers = "a line a centre, its selected indices as pcbench ball writes them "
                         "(an empty ball an empty line, -1 entries padding; with --pad first "
                         "a repeat of the first index at the end of a line is padding); "
                         "points within float32 rounding of the radius may be in or out",
              .options = "r:q:k:A:S:Nh",
              .letters = "rqkARLFSNh",
              .missing = check_missing,
              .task = check_task,
              .layout = CHECK_ROWS,
              .ready = check_ready,
              .summary = check_summary},
};
