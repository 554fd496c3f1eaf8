/* serialize.c - serialization in the tool: its configurations, their work
 * and fields, its check command (the lines pcbench serialize writes), its
 * planted defects (the field's failure modes). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli/cli.h"
#include "impl/serialize/serialize.h"
#include "problems.h"

static bench_config *add(bench_config_list *l, const char *dataset, int64_t batch, int64_t n,
                         double cell, int curve, int depth)
{
    bench_config *c = bench_config_add(l, PCB_SERIALIZE, dataset, batch, n, 0, 0);
    if (!c)
        return NULL;
    c->cell = cell, c->curve = curve, c->depth = depth;
    char at_depth[16] = "";
    if (depth)
        snprintf(at_depth, sizeof at_depth, "/d%d", depth);
    snprintf(c->id, sizeof c->id, "serialize/%s/b%lld/n%lld/c%g/%s%s", dataset, (long long)batch,
             (long long)n, cell, pcb_curve_name(curve), at_depth);
    return c;
}

/* What Point Transformer V3's serialization runs every step: lidar sweeps
 * at 5-10 cm (120k points, and 1M) at the least depth (settled on the
 * device) and the 1M sweep at Pointcept's depth 16 too, scans of 100k-200k
 * points at 2-5 cm in batches of 8-16 at depth 16 (a batch's depth given:
 * the peers' answers are judged a cloud at a time, at that depth); both
 * curves. */
static int configs(bench_config_list *l, const char *suite)
{
    static const struct {
        const char *kind;
        int64_t batch, n;
        double cell;
        int depth;
    } sizes[] = {
        {"lidar", 1, 120000, 0.1, 0},      {"lidar", 1, 120000, 0.05, 0},
        {"lidar", 1, 1000000, 0.1, 0},     {"lidar", 1, 1000000, 0.1, 16},
        {"uniform", 16, 200000, 0.02, 16}, {"sphere", 8, 100000, 0.05, 16},
    };
    int ok = 1;
    if (!strcmp(suite, "full") || !strcmp(suite, "grid"))
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            for (int curve = PCB_CURVE_MORTON; curve <= PCB_CURVE_HILBERT && ok; curve++)
                ok = add(l, sizes[i].kind, sizes[i].batch, sizes[i].n, sizes[i].cell, curve,
                         sizes[i].depth) != NULL;
    return ok ? PCB_OK : PCB_ENOMEM;
}

static double size(const bench_config *c)
{
    return (double)c->batch * (double)c->n * log2((double)c->n + 2) + c->curve;
}

static double points(const bench_config *c)
{
    return (double)c->batch * (double)c->n;
}

static void task(const bench_config *c, pcb_task *t)
{
    t->cell[0] = t->cell[1] = t->cell[2] = c->cell;
    t->curve = c->curve, t->depth = c->depth;
}

static void json_fields(FILE *f, const bench_config *c)
{
    fputs(", \"cell\": ", f);
    json_put_num(f, c->cell);
    fputs(", \"curve\": ", f);
    json_put_str(f, pcb_curve_name(c->curve));
    fprintf(f, ", \"depth\": %d", (int)c->depth);
}

static const char *curve_name(const bench_config *c)
{
    return pcb_curve_name(c->curve);
}

/* ---- pcbench check serialize ---- */
static const char *check_missing(const struct run_args *a)
{
    return !a->in_a || !a->have_cell || !a->have_curve
               ? "check serialize needs -i CLOUD, --size S and --curve morton|hilbert"
               : NULL;
}

static void check_task(const struct run_args *a, pcb_task *t)
{
    t->curve = a->curve, t->depth = a->depth, t->origin_given = a->have_origin;
    for (int k = 0; k < 3; k++)
        t->cell[k] = a->cell[k], t->origin[k] = a->origin[k] - a->applied[k]; /* as serialize */
}

/* The lines of pcbench serialize ('<index> <code>' in serialized order)
 * into the order, its inverse and each point's code; a point no line names
 * keeps -1 (never right, so the judge says which). */
static int check_read(const struct run_args *a, const pcb_task *t, pcb_result *r)
{
    const int64_t n = t->n;
    int64_t *code = malloc((size_t)n * sizeof *code);
    FILE *f = strcmp(a->answer, "-") == 0 ? stdin : fopen(a->answer, "r");
    char *buf = NULL;
    size_t cap = 0;
    int64_t j = 0, at = 0;
    int rc = PCB_OK;
    if (!code)
        rc = pcb_fail(PCB_ENOMEM, "no memory for %lld codes", (long long)n);
    else if (!f)
        rc = pcb_fail(PCB_EBADFILE, "%s: %s", a->answer, strerror(errno));
    for (int64_t i = 0; code && i < n; i++)
        r->index[i] = -1, r->index[n + i] = -1, code[i] = -1;
    while (rc == PCB_OK && getline(&buf, &cap, f) >= 0) {
        at++;
        long long w[2];
        int header;
        const int fields = bench_line_integers(buf, w, 2, &header);
        if (fields == 0 || (header && j == 0)) /* blank, a comment, a header line first */
            continue;
        if (fields != 2)
            rc = pcb_fail(PCB_EBADFILE, "%s:%lld: need 2 integers a line (index code)",
                          a->answer, (long long)at);
        else if (j == n)
            rc = pcb_fail(PCB_EBADFILE, "%s:%lld: more lines than the cloud's %lld points",
                          a->answer, (long long)at, (long long)n);
        else if (w[0] < 0 || w[0] >= n)
            rc = pcb_fail(PCB_EBADFILE, "%s:%lld: index %lld outside the cloud's %lld points",
                          a->answer, (long long)at, w[0], (long long)n);
        if (rc != PCB_OK)
            break;
        r->index[j] = (int32_t)w[0];
        if (r->index[n + w[0]] < 0) /* a point named twice keeps its first place */
            r->index[n + w[0]] = (int32_t)j, code[w[0]] = w[1];
        j++;
    }
    if (f && f != stdin)
        fclose(f);
    free(buf);
    if (rc == PCB_OK && j < n)
        rc = pcb_fail(PCB_EBADFILE, "%s: %lld lines, the cloud has %lld points", a->answer,
                      (long long)j, (long long)n);
    if (rc != PCB_OK) {
        free(code);
        return rc;
    }
    r->code = code;
    return PCB_OK;
}

static void check_summary(const struct run_args *a, const pcb_task *t, const pcb_result *r,
                          const pcb_report *rep, int has_dist)
{
    (void)a, (void)r, (void)has_dist;
    printf("serialize: %lld points, %s codes, voxels of %.9g x %.9g x %.9g", (long long)t->n,
           pcb_curve_name(t->curve), t->cell[0], t->cell[1], t->cell[2]);
    if (rep->recall >= 0)
        printf(", points right %.6g", rep->recall);
    printf("\n");
}

/* ---- planted defects (pcbench verify --defects; bench/verify/defects.h) ---- */
typedef enum {
    SER_UNSTABLE, /* equal codes in decreasing index: an unstable sort's order */
    SER_FLOAT32,  /* the voxel's floor taken in float32 */
    SER_MASK16,   /* 16 bits an axis: coordinates past 65,535 wrapped */
    SER_BATCH48   /* the cloud's number at bit 48 whatever the depth */
} ser_fault;

typedef struct {
    uint64_t code;
    int64_t index;
} keyed;

static int by_code(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    return a->code != b->code ? (a->code < b->code ? -1 : 1)
                              : (a->index > b->index) - (a->index < b->index);
}

/* The variant: the implementations' frame and curves, the fault's rule in
 * the voxels, the codes or the sort; qsort of (code, index) pairs (an
 * unstable sort modelled by negated indices). */
static int serialize_with(pcb_variant *var, ser_fault fault)
{
    const pcb_task *t = &var->task;
    const int64_t n = t->n;
    keyed *keys = malloc((size_t)n * sizeof *keys);
    double *origin = malloc((size_t)t->batch * 3 * sizeof *origin);
    int depth = 0;
    int rc = keys && origin ? pcb_serialize_frame(t, 1, origin, &depth)
                            : pcb_fail(PCB_ENOMEM, "defect variant: out of memory");
    for (int64_t c = 0; rc == PCB_OK && c < t->batch; c++) {
        const float *xyz = t->a + c * n * 3;
        const int shift = fault == SER_BATCH48 ? 48 : 3 * depth;
        for (int64_t i = 0; i < n; i++) {
            uint32_t v[3];
            for (int k = 0; k < 3; k++) {
                const double o = origin[3 * c + k];
                const double q = fault == SER_FLOAT32
                                     ? floorf((xyz[3 * i + k] - (float)o) / (float)t->cell[k])
                                     : pcb_grid_coord(xyz[3 * i + k], o, t->cell[k]);
                v[k] = (uint32_t)fmax(q, 0) & (fault == SER_MASK16 ? 0xffff : 0x1fffff);
            }
            const uint64_t code = (uint64_t)c << shift |
                                  pcb_curve_index(t->curve, depth, v[0], v[1], v[2]);
            var->r.code[c * n + i] = (int64_t)code;
            keys[i] = (keyed){code, fault == SER_UNSTABLE ? -i : i};
        }
        qsort(keys, (size_t)n, sizeof *keys, by_code);
        for (int64_t j = 0; j < n; j++) {
            const int64_t i = keys[j].index < 0 ? -keys[j].index : keys[j].index;
            var->idx[c * n + j] = (int32_t)i;
            var->idx[t->batch * n + c * n + i] = (int32_t)j;
        }
    }
    free(keys), free(origin);
    return rc;
}

static int ser_unstable_compute(void *s) { return serialize_with(s, SER_UNSTABLE); }
static int ser_float32_compute(void *s) { return serialize_with(s, SER_FLOAT32); }
static int ser_mask16_compute(void *s) { return serialize_with(s, SER_MASK16); }
static int ser_batch48_compute(void *s) { return serialize_with(s, SER_BATCH48); }

PCB_VARIANT(PCB_SERIALIZE, serialize_unstable, 1, 0, PCB_COST_INDEXED, ser_unstable_compute,
            "sort, equal codes in decreasing index");
PCB_VARIANT(PCB_SERIALIZE, serialize_float32, 1, 0, PCB_COST_INDEXED, ser_float32_compute,
            "sort, the voxel's floor in float32");
PCB_VARIANT(PCB_SERIALIZE, serialize_mask16, 1, 0, PCB_COST_INDEXED, ser_mask16_compute,
            "sort, 16 bits an axis");
PCB_VARIANT(PCB_SERIALIZE, serialize_batch48, 1, 0, PCB_COST_INDEXED, ser_batch48_compute,
            "sort, the cloud's number at bit 48");

static const pcb_defect defects[] = {
    {&serialize_unstable, "points of one voxel (equal codes) not in increasing index",
     "an unstable sort of the codes (torch.argsort without stable=True, as Pointcept's "
     "serialization calls it)", 0, 0},
    {&serialize_float32, "the voxel computed in float32: a point near a boundary in the next "
                         "voxel, its code another's",
     "the float32 rule of GPU voxelizers", 0, 0},
    {&serialize_mask16, "16 bits a coordinate: voxels 65,536 apart given one code",
     "Pointcept's z-order tables (16 bits an axis at most)", 0, 0},
    {&serialize_batch48, "the cloud's number at bit 48: past depth 16 it overlaps the codes",
     "z-order keys with the batch at a fixed bit (Pointcept's xyz2key(..., b) puts it at "
     "b << 48)", 0, 0},
    {NULL, NULL, NULL, 0, 0}};

const bench_problem_face bench_serialize_face = {
    .configs = configs,
    .size = size,
    .points = points,
    .calibration = {.n = 20000, .cell = 0.05},
    .sides = 1,
    .task = task,
    .json_fields = json_fields,
    .select_name = curve_name,
    .check = {.usage = "serialize -i CLOUD --size S --curve morton|hilbert [--depth D]\n"
                       "                          [--origin X,Y,Z] --answer FILE",
              .answers = "a line a point as pcbench serialize writes them, '<index> <code>' in "
                         "serialized order",
              .options = "i:A:S:Nh",
              .letters = "iAZOUDSNh",
              .missing = check_missing,
              .task = check_task,
              .layout = CHECK_OWN,
              .read = check_read,
              .summary = check_summary},
    .verify = pcb_verify_serialize,
    .defects = defects,
};
