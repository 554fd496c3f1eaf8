/* grid.c - grid sampling in the tool: its configurations, their work and
 * fields, its check command (the lines pcbench grid writes), its planted
 * defects (the field's failure modes). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli/cli.h"
#include "impl/grid/grid.h"
#include "problems.h"

static bench_config *add(bench_config_list *l, const char *dataset, int64_t batch, int64_t n,
                         double cell, int select)
{
    bench_config *c = bench_config_add(l, PCB_GRID, dataset, batch, n, 0, 0);
    if (!c)
        return NULL;
    c->cell = cell, c->select = select;
    snprintf(c->id, sizeof c->id, "grid/%s/b%lld/n%lld/c%g/%s", dataset, (long long)batch,
             (long long)n, cell, pcb_ball_select_name(select));
    return c;
}

/* Where today's networks and detectors voxelize: a lidar sweep at 5-20 cm
 * (PointPillars, CenterPoint; 120k points, and 1M), scans of 100k-200k
 * points at 2-5 cm in batches of 8-16 (Point Transformer V3's data loader),
 * first and nearest; the mean (a voxel's mean point, Open3D's and PyG's
 * pooling) on a sweep of each size and the batch of 16. */
static int configs(bench_config_list *l, const char *suite)
{
    static const struct {
        const char *kind;
        int64_t batch, n;
        double cell;
    } sizes[] = {
        {"lidar", 1, 120000, 0.1}, {"lidar", 1, 120000, 0.05}, {"lidar", 1, 1000000, 0.1},
        {"lidar", 1, 1000000, 0.2}, {"uniform", 16, 200000, 0.02}, {"sphere", 8, 100000, 0.05},
        {"clusters", 16, 100000, 0.02},
    };
    int ok = 1;
    if (!strcmp(suite, "full") || !strcmp(suite, "grid")) {
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            for (int select = PCB_BALL_FIRST; select <= PCB_BALL_NEAREST && ok; select++)
                ok = add(l, sizes[i].kind, sizes[i].batch, sizes[i].n, sizes[i].cell,
                         select) != NULL;
        for (size_t i = 0; i < 5 && ok; i++)
            if (i != 1 && i != 3) /* 120k and 1M at 10 cm, 16 x 200k */
                ok = add(l, sizes[i].kind, sizes[i].batch, sizes[i].n, sizes[i].cell,
                         PCB_GRID_MEAN) != NULL;
    }
    return ok ? PCB_OK : PCB_ENOMEM;
}

static double size(const bench_config *c)
{
    return (double)c->batch * (double)c->n * log2((double)c->n + 2) + c->select;
}

static double points(const bench_config *c)
{
    return (double)c->batch * (double)c->n;
}

static void task(const bench_config *c, pcb_task *t)
{
    t->cell[0] = t->cell[1] = t->cell[2] = c->cell;
}

static void json_fields(FILE *f, const bench_config *c)
{
    fputs(", \"cell\": ", f);
    json_put_num(f, c->cell);
    fputs(", \"select\": ", f);
    json_put_str(f, pcb_ball_select_name(c->select));
}

static const char *select_name(const bench_config *c)
{
    return pcb_ball_select_name(c->select);
}

/* ---- pcbench check grid ---- */
static const char *check_missing(const struct run_args *a)
{
    return !a->in_a || !a->have_cell ? "check grid needs -i CLOUD and --size S" : NULL;
}

static void check_task(const struct run_args *a, pcb_task *t)
{
    t->select = a->select, t->origin_given = a->have_origin, t->seed = a->seed;
    for (int k = 0; k < 3; k++)
        t->cell[k] = a->cell[k], t->origin[k] = a->origin[k] - a->applied[k];
}

/* A voxel line: its coordinates and row. */
typedef struct {
    double v[3];
    int64_t line;
} voxel_line;

static int by_coordinates(const void *pa, const void *pb)
{
    const voxel_line *a = pa, *b = pb;
    for (int k = 0; k < 3; k++)
        if (a->v[k] != b->v[k])
            return a->v[k] < b->v[k] ? -1 : 1;
    return 0;
}

/* The voxel of point p under t's rule (the cloud's origin in origin). */
static void voxel_of(const pcb_task *t, const float *p, const double origin[3], double v[3])
{
    for (int k = 0; k < 3; k++)
        v[k] = pcb_grid_coord(p[k], origin[k], t->cell[k]);
}

/* The lines of pcbench grid (ix iy iz count index, then mx my mz for
 * --select mean) into the answer's rows;
 * the inverse map from --inverse FILE, else found from each point's voxel
 * among the lines. A line whose coordinates are not those of the point it
 * names keeps point -2 (never right, so the judge says where). */
static int check_read(const struct run_args *a, const pcb_task *t, pcb_result *r)
{
    int32_t *index = r->index;
    const int64_t n = t->n;
    int32_t *count = calloc((size_t)n, sizeof *count);
    const int means = t->select == PCB_GRID_MEAN;
    float *mean = means ? calloc(3 * (size_t)n, sizeof *mean) : NULL;
    voxel_line *lines = malloc((size_t)n * sizeof *lines);
    FILE *f = strcmp(a->answer, "-") == 0 ? stdin : fopen(a->answer, "r");
    char *buf = NULL;
    size_t cap = 0;
    int64_t v = 0, at = 0;
    int rc = PCB_OK;
    if (!count || !lines || (means && !mean))
        rc = pcb_fail(PCB_ENOMEM, "no memory for %lld voxel lines", (long long)n);
    else if (!f)
        rc = pcb_fail(PCB_EBADFILE, "%s: %s", a->answer, strerror(errno));
    double origin[3];
    pcb_grid_origin(t, t->a, n, origin);
    for (int64_t i = 0; i < n; i++)
        index[i] = -1, index[n + i] = -1;
    while (rc == PCB_OK && getline(&buf, &cap, f) >= 0) {
        at++;
        long long w[5];
        double m[3]; /* a mean line's point, in the file's frame */
        int header;
        const int fields = bench_line_numbers(buf, w, 5, means ? m : NULL, 3, &header);
        if (fields == 0 || (header && v == 0)) /* blank, a comment, a header line first */
            continue;
        if (means && fields != 8)
            rc = pcb_fail(PCB_EBADFILE, "%s:%lld: select mean: need 5 integers and 3 numbers a "
                          "line (ix iy iz count index mx my mz)", a->answer, (long long)at);
        else if (!means && fields != 5)
            rc = pcb_fail(PCB_EBADFILE, "%s:%lld: need 5 integers a line (ix iy iz count "
                          "index)", a->answer, (long long)at);
        else if (v == n)
            rc = pcb_fail(PCB_EBADFILE, "%s:%lld: more voxel lines than the cloud's %lld "
                          "points", a->answer, (long long)at, (long long)n);
        else if (w[3] < 1 || w[3] > n || w[4] < -1 || w[4] >= n)
            rc = pcb_fail(PCB_EBADFILE, "%s:%lld: count %lld or index %lld outside the "
                          "cloud's %lld points", a->answer, (long long)at, w[3], w[4],
                          (long long)n);
        if (rc != PCB_OK)
            break;
        double have[3] = {(double)w[0], (double)w[1], (double)w[2]}, want[3] = {0, 0, 0};
        if (w[4] >= 0)
            voxel_of(t, t->a + 3 * w[4], origin, want);
        index[v] = w[4] >= 0 && memcmp(have, want, sizeof have) == 0 ? (int32_t)w[4] : -2;
        count[v] = (int32_t)w[3];
        for (int k = 0; means && k < 3; k++)
            mean[3 * v + k] = (float)(m[k] - a->applied[k]);
        memcpy(lines[v].v, have, sizeof have);
        lines[v].line = v;
        v++;
    }
    if (f && f != stdin)
        fclose(f);
    free(buf);
    if (rc == PCB_OK && a->inverse) {
        double *unused = malloc((size_t)n * sizeof *unused);
        int has = 0;
        rc = unused ? pcb_read_answers(a->inverse, n, index + n, unused, &has)
                    : pcb_fail(PCB_ENOMEM, "no memory for the inverse map");
        if (rc == PCB_OK && has)
            rc = pcb_fail(PCB_EBADFILE, "%s: the inverse map is one voxel line number a line",
                          a->inverse);
        free(unused);
    } else if (rc == PCB_OK) {
        qsort(lines, (size_t)v, sizeof *lines, by_coordinates);
        for (int64_t i = 0; i < n; i++) {
            voxel_line key;
            voxel_of(t, t->a + 3 * i, origin, key.v);
            const voxel_line *hit = bsearch(&key, lines, (size_t)v, sizeof *lines,
                                            by_coordinates);
            index[n + i] = hit ? (int32_t)hit->line : -1;
        }
    }
    free(lines);
    if (rc != PCB_OK) {
        free(count), free(mean);
        return rc;
    }
    r->count = count, r->mean = mean;
    return PCB_OK;
}

static void check_summary(const struct run_args *a, const pcb_task *t, const pcb_result *r,
                          const pcb_report *rep, int has_dist)
{
    (void)has_dist;
    int64_t voxels = 0;
    while (voxels < t->n && r->count[voxels] > 0)
        voxels++;
    printf("grid: %lld points, %lld voxels of %.9g x %.9g x %.9g, %s, inverse %s",
           (long long)t->n, (long long)voxels, t->cell[0], t->cell[1], t->cell[2],
           pcb_ball_select_name(t->select), a->inverse ? "read" : "from the voxels' lines");
    if (rep->recall >= 0)
        printf(", points right %.6g", rep->recall);
    printf("\n");
}

/* ---- planted defects (pcbench verify --defects; bench/verify/defects.h) ---- */
typedef enum {
    GRID_FLOAT32, /* the voxel's floor taken in float32 */
    GRID_HASH,    /* voxels whose 20-bit spatial hash collides merged */
    GRID_CAP,     /* at most 5 points a voxel, the rest dropped */
    GRID_WRAP,    /* 16 bits an axis: coordinates 65,536 voxels apart merged */
    GRID_MEAN32   /* mean: the points summed in float32 */
} grid_fault;

typedef struct {
    uint64_t key, index;
} keyed;

static int by_key(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    return a->key != b->key ? (a->key < b->key ? -1 : 1) : (a->index > b->index) - (a->index < b->index);
}

static uint64_t hash20(const uint64_t c[3])
{
    return ((c[0] * 73856093u) ^ (c[1] * 19349663u) ^ (c[2] * 83492791u)) & 0xfffff;
}

/* The variant's keys (19 bits an axis from the cloud's lowest voxel, as the
 * implementations', under the fault's rule), sorted with their indices by
 * qsort, then the implementations' walk; the cap drops each voxel's points
 * past 5 afterwards, in index order. */
static int grid_with(pcb_variant *var, grid_fault fault)
{
    const pcb_task *t = &var->task;
    const int64_t n = t->n;
    keyed *keys = malloc((size_t)n * sizeof *keys);
    uint64_t *sorted = malloc((size_t)n * sizeof *sorted);
    int32_t *order = malloc((size_t)n * sizeof *order);
    uint64_t *least = fault == GRID_HASH ? malloc(((size_t)1 << 20) * sizeof *least) : NULL;
    if (!keys || !sorted || !order || (fault == GRID_HASH && !least)) {
        free(keys), free(sorted), free(order), free(least);
        return pcb_fail(PCB_ENOMEM, "defect variant: out of memory");
    }
    for (int64_t b = 0; b < t->batch; b++) {
        const float *xyz = t->a + b * n * 3;
        double origin[3], low[3] = {INFINITY, INFINITY, INFINITY};
        pcb_grid_origin(t, xyz, n, origin);
        for (int64_t i = 0; i < n; i++)
            for (int k = 0; k < 3; k++)
                low[k] = fmin(low[k], pcb_grid_coord(xyz[3 * i + k], origin[k], t->cell[k]));
        for (int64_t i = 0; i < n; i++) {
            uint64_t c[3], key = 0;
            for (int k = 0; k < 3; k++) {
                double v = fault == GRID_FLOAT32
                               ? floorf((xyz[3 * i + k] - (float)origin[k]) / (float)t->cell[k])
                               : pcb_grid_coord(xyz[3 * i + k], origin[k], t->cell[k]);
                c[k] = (uint64_t)fmax(v - low[k], 0) & (fault == GRID_WRAP ? 0xffff : 0x7ffff);
                key = key << 19 | c[k];
            }
            keys[i] = (keyed){key, (uint64_t)i};
        }
        if (fault == GRID_HASH) { /* every key of a bucket becomes the bucket's least */
            memset(least, 0xff, ((size_t)1 << 20) * sizeof *least);
            for (int64_t i = 0; i < n; i++) {
                const uint64_t c[3] = {keys[i].key >> 38, keys[i].key >> 19 & 0x7ffff,
                                       keys[i].key & 0x7ffff};
                uint64_t *m = &least[hash20(c)];
                *m = keys[i].key < *m ? keys[i].key : *m;
            }
            for (int64_t i = 0; i < n; i++) {
                const uint64_t c[3] = {keys[i].key >> 38, keys[i].key >> 19 & 0x7ffff,
                                       keys[i].key & 0x7ffff};
                keys[i].key = least[hash20(c)];
            }
        }
        qsort(keys, (size_t)n, sizeof *keys, by_key);
        for (int64_t j = 0; j < n; j++)
            sorted[j] = keys[j].key, order[j] = (int32_t)keys[j].index;
        int32_t *rows = var->idx + b * n, *inverse = var->idx + t->batch * n + b * n;
        int32_t *count = var->count + b * n;
        pcb_grid_walk(t, xyz, n, origin, low, sorted, order, rows, inverse, count,
                      var->r.mean ? var->r.mean + 3 * b * n : NULL);
        if (fault == GRID_MEAN32 && var->r.mean) { /* the sums again, in float32 */
            float *mean = var->r.mean + 3 * b * n;
            for (int64_t v = 0; v < n && count[v] > 0; v++)
                mean[3 * v] = mean[3 * v + 1] = mean[3 * v + 2] = 0;
            for (int64_t i = 0; i < n; i++)
                for (int k = 0; k < 3; k++)
                    mean[3 * inverse[i] + k] += xyz[3 * i + k];
            for (int64_t v = 0; v < n && count[v] > 0; v++)
                for (int k = 0; k < 3; k++)
                    mean[3 * v + k] /= (float)count[v];
        }
        if (fault == GRID_CAP) { /* count reused as each voxel's points kept so far */
            for (int64_t v = 0; v < n && count[v] > 0; v++)
                count[v] = 0;
            for (int64_t i = 0; i < n; i++) {
                const int32_t v = inverse[i];
                if (count[v] == 5)
                    inverse[i] = -1;
                else
                    count[v]++;
            }
        }
    }
    free(keys), free(sorted), free(order), free(least);
    return PCB_OK;
}

static int grid_float32_compute(void *s) { return grid_with(s, GRID_FLOAT32); }
static int grid_hash_compute(void *s) { return grid_with(s, GRID_HASH); }
static int grid_cap_compute(void *s) { return grid_with(s, GRID_CAP); }
static int grid_wrap_compute(void *s) { return grid_with(s, GRID_WRAP); }
static int grid_mean32_compute(void *s) { return grid_with(s, GRID_MEAN32); }

PCB_VARIANT(PCB_GRID, grid_float32, 1, 0, PCB_COST_INDEXED, grid_float32_compute,
            "sort, the voxel's floor in float32");
PCB_VARIANT(PCB_GRID, grid_hash, 1, 0, PCB_COST_INDEXED, grid_hash_compute,
            "sort, voxels of colliding 20-bit hashes merged");
PCB_VARIANT(PCB_GRID, grid_cap, 1, 0, PCB_COST_INDEXED, grid_cap_compute,
            "sort, at most 5 points a voxel");
PCB_VARIANT(PCB_GRID, grid_wrap, 1, 0, PCB_COST_INDEXED, grid_wrap_compute,
            "sort, 16 bits an axis");
PCB_VARIANT(PCB_GRID, grid_mean32, 1, 0, PCB_COST_INDEXED, grid_mean32_compute,
            "sort, the mean summed in float32");

static const pcb_defect defects[] = {
    {&grid_float32, "the voxel computed in float32, (p - origin) / size rounded twice: a "
                    "point near a boundary goes to the next voxel",
     "the float32 rule of GPU voxelizers (spconv's PointToVoxel, torch_cluster grid_cluster)",
     0, 0},
    {&grid_hash, "voxels whose hashed keys collide merged into one",
     "hashed voxel keys without a collision check (Pointcept's grid sampling hashes with "
     "64-bit FNV, here a 20-bit spatial hash makes it visible)", 0, 0},
    {&grid_cap, "points past a voxel's cap dropped, the counts capped",
     "spconv's PointToVoxel (max_num_points_per_voxel)", 0, 0},
    {&grid_wrap, "16 bits a coordinate: voxels 65,536 apart merged",
     "serialization keys with the batch in the high bits and a fixed depth (Pointcept's "
     "16-bit depth)", 0, 0},
    {&grid_mean32, "a voxel's mean summed in float32: off by more than its rounding where "
                   "the coordinates are large beside the voxel",
     "scatter means on float32 features (torch scatter_reduce 'mean', PyG's avg_pool)", 0, 0},
    {NULL, NULL, NULL, 0, 0}};

const bench_problem_face bench_grid_face = {
    .configs = configs,
    .size = size,
    .points = points,
    .calibration = {.n = 20000, .cell = 0.05},
    .sides = 1,
    .task = task,
    .json_fields = json_fields,
    .select_name = select_name,
    .check = {.usage = "grid -i CLOUD --size S [--origin X,Y,Z] [--select S [--seed S]]\n"
                       "                          --answer FILE [--inverse FILE]",
              .answers = "a line a voxel as pcbench grid writes them, '<ix> <iy> <iz> <count> "
                         "<index>' in increasing ix, iy, iz (--select mean: then '<mx> <my> "
                         "<mz>'); --inverse FILE: a point's voxel line a line (else found from "
                         "the lines)",
              .options = "i:A:S:Nh",
              .letters = "iAZOLYJSNh",
              .missing = check_missing,
              .task = check_task,
              .layout = CHECK_OWN,
              .read = check_read,
              .summary = check_summary},
    .verify = pcb_verify_grid,
    .defects = defects,
};
