/* ball.c - ball query in the tool: its configurations, their work and
 * fields. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli/cli.h"
#include "impl/ball/ball.h"
#include "impl/nn/nn.h"
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
    return PCB_OK;
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

/* ---- planted defects (pcbench verify --defects; bench/verify/defects.h) ---- */
enum {
    BALL_FIRST_AS_NEAREST = 1, /* the first k by index whatever the selection */
    BALL_PAD_POINT0 = 2,       /* rows padded with the first hit, an empty ball with point 0 */
    BALL_STRIDED = 4,          /* an overfull ball cut to every ceil(inside / k)-th point */
    BALL_DIST_INDEX = 8,       /* an overfull ball's distances overwritten by the indices */
    BALL_SHRUNK = 16           /* the radius test d2 < r2 (1 - 1e-3) */
};

static int ball_with(pcb_variant *v, int fault)
{
    const pcb_task *t = &v->task;
    const int64_t k = t->k;
    const float r2 = pcb_ball_r2(t->radius) * (fault & BALL_SHRUNK ? 1 - 1e-3f : 1);
    pcb_task as = *t;
    if (fault & BALL_FIRST_AS_NEAREST)
        as.select = PCB_BALL_FIRST;
    float *cd = malloc((size_t)t->n * sizeof *cd);
    int32_t *ci = malloc((size_t)t->n * sizeof *ci);
    if (!cd || !ci) {
        free(cd), free(ci);
        return pcb_fail(PCB_ENOMEM, "defect variant: out of memory");
    }
    for (int64_t q = 0; q < t->batch * t->nq; q++) {
        const float *p = t->b + 3 * q, *ref = t->a + q / t->nq * t->n * 3;
        float *d = v->dist2 + q * k;
        int32_t *id = v->idx + q * k;
        int64_t inside = 0;
        for (int64_t j = 0; j < t->n; j++) {
            const float e = pcb_nn_d2(ref + 3 * j, p);
            if (e < r2)
                cd[inside] = e, ci[inside++] = (int32_t)j;
        }
        int64_t kept = inside;
        if (fault & BALL_STRIDED && inside > k) {
            const int64_t stride = (inside + k - 1) / k;
            kept = 0;
            for (int64_t i = 0; i < inside; i += stride)
                cd[kept] = cd[i], ci[kept++] = ci[i];
        }
        int32_t c = pcb_ball_row_from(&as, cd, ci, kept, id, d);
        for (int64_t s = 0; fault & BALL_DIST_INDEX && inside > k && s < c; s++)
            d[s] = (float)id[s];
        if (fault & BALL_PAD_POINT0) {
            for (int64_t s = c; s < k; s++)
                id[s] = c ? id[0] : 0, d[s] = c ? d[0] : 0;
            c = (int32_t)k;
        }
        v->count[q] = c;
    }
    free(cd), free(ci);
    return PCB_OK;
}

static int ball_as_nearest_compute(void *s) { return ball_with(s, BALL_FIRST_AS_NEAREST); }
static int ball_point0_compute(void *s) { return ball_with(s, BALL_PAD_POINT0); }
static int ball_strided_compute(void *s) { return ball_with(s, BALL_STRIDED); }
static int ball_dist_index_compute(void *s) { return ball_with(s, BALL_DIST_INDEX); }
static int ball_shrunk_compute(void *s) { return ball_with(s, BALL_SHRUNK); }

PCB_VARIANT(PCB_BALL, ball_first_as_nearest, 1, 0, PCB_COST_ALL_PAIRS, ball_as_nearest_compute,
        "scan, the first k by index for either selection");
PCB_VARIANT(PCB_BALL, ball_point0, 1, 0, PCB_COST_ALL_PAIRS, ball_point0_compute,
        "scan, rows padded with the first hit, point 0 for an empty ball");
PCB_VARIANT(PCB_BALL, ball_strided, 1, 0, PCB_COST_ALL_PAIRS, ball_strided_compute,
        "scan, an overfull ball cut to a strided subset");
PCB_VARIANT(PCB_BALL, ball_dist_index, 1, 0, PCB_COST_ALL_PAIRS, ball_dist_index_compute,
        "scan, an overfull ball's distances replaced by indices");
PCB_VARIANT(PCB_BALL, ball_shrunk, 1, 0, PCB_COST_ALL_PAIRS, ball_shrunk_compute, "scan, radius test d2 < r2 (1 - 1e-3)");

static const pcb_defect defects[] = {
    {&ball_first_as_nearest, "the K inside points of lowest index returned as the K nearest",
     "PyTorch3D ball_query, pointnet2_ops, mmcv and torch_cluster radius used where the "
     "nearest are meant (yanx27/Pointnet_Pointnet2_pytorch #209, #245)", 0, 0},
    {&ball_point0, "rows padded with the first hit and an empty ball filled with point 0, a "
                   "real point, with no count", "pointnet2_ops ball_query", 0, 0},
    {&ball_strided, "an overfull ball cut to every ceil(inside / K)-th inside point: neither "
                    "the first nor the nearest K", "Pointcept's pointops ball query, "
                    "torch_cluster radius on the CPU (k-d-tree order)", 0, 0},
    {&ball_dist_index, "when a ball overflows, the distances of the row overwritten by the "
                       "candidates' indices", "Pointcept's pointops ball query", 0, 0},
    {&ball_shrunk, "the radius test d2 < r2 (1 - 1e-3): points inside by more than float32 "
                   "rounding lost", "ball queries with a tolerance subtracted from the radius",
     0, 0},
    {NULL, NULL, NULL, 0, 0}};

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
    .verify = pcb_verify_ball,
    .defects = defects,
};
