/* knn.c - kNN in the tool: its configurations, their work and fields. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli/cli.h"
#include "impl/knn/knn.h"
#include "impl/nn/nn.h"
#include "problems.h"

/* k neighbours of nq queries, or of every point of the cloud itself (self,
 * as DGCNN and Point Transformer ask). */
static bench_config *add(bench_config_list *l, const char *dataset, int64_t batch, int64_t n,
                         int64_t nq, int64_t k, int self)
{
    bench_config *c = bench_config_add(l, PCB_KNN, dataset, batch, n, self ? n : nq, 0);
    if (!c)
        return NULL;
    c->k = k, c->self = self;
    char q[32];
    snprintf(q, sizeof q, self ? "self" : "q%lld", (long long)c->nq);
    snprintf(c->id, sizeof c->id, "knn/%s/b%lld/n%lld/%s/k%lld", dataset, (long long)batch,
             (long long)n, q, (long long)k);
    return c;
}

/* Where networks run it: self-kNN of training batches at k = 3-64 (DGCNN k =
 * 20, Point Transformer 16, PointNet++'s three_nn 3), three_nn's shape (4,096
 * queries into 1,024), large object clouds (8 x 16,384 and 8 x 65,536), and
 * lidar sweeps of 120,000 and 1,000,000 points at k = 8-64, self and against a
 * second sweep. */
static int networks(bench_config_list *l)
{
    static const int64_t ks[] = {3, 8, 16, 20, 32, 64};
    static const struct {
        int64_t batch, n;
    } sizes[] = {{32, 1024}, {32, 2048}, {16, 4096}};
    int ok = 1;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (size_t j = 0; j < sizeof ks / sizeof ks[0] && ok; j++)
            ok = add(l, "sphere", sizes[i].batch, sizes[i].n, 0, ks[j], 1) != NULL;
    for (int64_t k = 16; k <= 32 && ok; k += 16)
        ok = add(l, "sphere", 16, 8192, 0, k, 1) != NULL;
    ok = ok && add(l, "sphere", 16, 16384, 0, 16, 1) && add(l, "uniform", 32, 1024, 0, 16, 1) &&
         add(l, "uniform", 16, 1024, 4096, 3, 0); /* three_nn: a layer into the coarser one */
    /* large clouds, where a spatial index pays: 8 x 16,384 and 8 x 65,536 */
    for (int64_t k = 8; k <= 64 && ok; k *= 2)
        ok = add(l, "sphere", 8, 16384, 0, k, 1) != NULL;
    ok = ok && add(l, "uniform", 8, 16384, 0, 16, 1) && add(l, "sphere", 8, 65536, 0, 16, 1) &&
         add(l, "sphere", 8, 65536, 0, 64, 1) && add(l, "uniform", 8, 65536, 0, 16, 1);
    /* lidar sweeps: queries from a second sweep (scan matching), and self */
    for (int64_t k = 8; k <= 64 && ok; k *= 2)
        ok = add(l, "lidar", 1, 120000, 120000, k, 0) != NULL;
    ok = ok && add(l, "lidar", 1, 120000, 0, 16, 1) && add(l, "lidar", 1, 1000000, 1000000, 16, 0) &&
         add(l, "lidar", 1, 1000000, 0, 16, 1);
    return ok ? PCB_OK : PCB_ENOMEM;
}

static int configs(bench_config_list *l, const char *suite)
{
    const int full = !strcmp(suite, "full");
    int ok = 1;
    if ((full || !strcmp(suite, "knn")) && networks(l) != PCB_OK)
        return PCB_ENOMEM;
    if (full || !strcmp(suite, "ragged")) {
        /* self-kNN (k = 16) of 32 object clouds of 512-4,096 points, beside
         * its equal-size twin */
        bench_config *c = add(l, "sphere", 32, 4096, 0, 16, 1);
        if (c)
            bench_config_ragged(c, 512);
        ok = c && add(l, "sphere", 32, 2304, 0, 16, 1);
    }
    if (!strcmp(suite, "quick"))
        ok = add(l, "uniform", 2, 2000, 1500, 8, 0) != NULL;
    return ok ? PCB_OK : PCB_ENOMEM;
}

static double size(const bench_config *c)
{
    return (double)c->batch * (double)c->n * (double)c->nq * (1 + (double)c->k / 64);
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
    fprintf(f, ", \"k\": %lld, \"self\": %s", (long long)c->k, c->self ? "true" : "false");
}

/* ---- pcbench check knn ---- */
static const char *check_missing(const struct run_args *a)
{
    return !a->in_a || !a->in_b || !a->have_k ? "check knn needs -r REF, -q QUERY and -k K" : NULL;
}

static void check_task(const struct run_args *a, pcb_task *t)
{
    t->k = a->k;
}

static void check_summary(const struct run_args *a, const pcb_task *t, const pcb_result *r,
                          const pcb_report *rep, int has_dist)
{
    (void)a, (void)r;
    printf("knn: %lld queries, k = %lld", (long long)t->nq, (long long)t->k);
    if (rep->recall >= 0)
        printf(", rows right %.6g", rep->recall);
    printf("%s\n", has_dist ? ", squared distances checked" : "");
}

/* ---- planted defects (pcbench verify --defects; bench/verify/defects.h) ---- */
enum {
    KNN_PAD_ZERO = 1,  /* short rows padded with point 0 at distance 0 */
    KNN_START_1E10 = 2, /* rows start at (0, 1e10): nothing farther ever enters */
    KNN_GEMM = 4,      /* expanded-norm distances */
    KNN_HIGH_TIES = 8, /* equal distances by decreasing index */
    KNN_CAP32 = 16     /* at most 32 neighbours, whatever k, the rest padding */
};

static int knn_with(pcb_variant *v, int fault)
{
    const pcb_task *t = &v->task;
    const int64_t k = t->k, len = k < t->n ? k : t->n;
    const int64_t cap = fault & KNN_CAP32 && len > 32 ? 32 : len;
    for (int64_t q = 0; q < t->batch * t->nq; q++) {
        const float *p = t->b + 3 * q, *ref = t->a + q / t->nq * t->n * 3;
        float *d = v->dist2 + q * k;
        int32_t *id = v->idx + q * k;
        for (int64_t s = 0; s < k; s++) {
            const int start = fault & KNN_START_1E10 && s < cap;
            d[s] = start ? 1e10f : INFINITY, id[s] = start ? 0 : PCB_KNN_PAD;
        }
        for (int64_t j = 0; j < t->n; j++) {
            const float *r = ref + 3 * j;
            float e = pcb_nn_d2(r, p);
            if (fault & KNN_GEMM) {
                e = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) +
                    (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]) -
                    2 * (p[0] * r[0] + p[1] * r[1] + p[2] * r[2]);
                e = e < 0 ? 0 : e;
            }
            int64_t s = cap;
            while (s > 0 && (e < d[s - 1] || (fault & KNN_HIGH_TIES && e == d[s - 1])))
                s--;
            if (s == cap)
                continue;
            memmove(d + s + 1, d + s, (size_t)(cap - s - 1) * sizeof *d);
            memmove(id + s + 1, id + s, (size_t)(cap - s - 1) * sizeof *id);
            d[s] = e, id[s] = (int32_t)j;
        }
        for (int64_t s = len; s < k && fault & KNN_PAD_ZERO; s++)
            d[s] = 0, id[s] = 0;
    }
    return PCB_OK;
}

static int knn_pad_zero_compute(void *s) { return knn_with(s, KNN_PAD_ZERO); }
static int knn_start_compute(void *s) { return knn_with(s, KNN_START_1E10); }
static int knn_gemm_compute(void *s) { return knn_with(s, KNN_GEMM); }
static int knn_ties_compute(void *s) { return knn_with(s, KNN_HIGH_TIES); }
static int knn_cap_compute(void *s) { return knn_with(s, KNN_CAP32); }

PCB_VARIANT(PCB_KNN, knn_pad_zero, 1, 0, PCB_COST_ALL_PAIRS, knn_pad_zero_compute, "brute force, padding (0, 0)");
PCB_VARIANT(PCB_KNN, knn_start_1e10, 1, 0, PCB_COST_ALL_PAIRS, knn_start_compute, "brute force, rows start at 1e10");
PCB_VARIANT(PCB_KNN, knn_gemm, 1, 0, PCB_COST_ALL_PAIRS, knn_gemm_compute, "brute force, expanded squared norm");
PCB_VARIANT(PCB_KNN, knn_cap32, 1, 0, PCB_COST_ALL_PAIRS, knn_cap_compute, "brute force, k silently capped at 32");
/* exact (any tie order is right) but promising the canonical one */
static const pcb_impl knn_high_ties = {.name = "knn_high_ties", .problem = PCB_KNN,
                                       .device = PCB_CPU, .promise = {.exact = 1, .canonical = 1},
                                       .cost = PCB_COST_ALL_PAIRS,
                                       .summary = "brute force, ties by decreasing index",
                                       .prepare = pcb_variant_prepare, .compute = knn_ties_compute,
                                       .fetch = pcb_variant_fetch, .release = pcb_variant_release};

static const pcb_defect defects[] = {
    {&knn_pad_zero, "a row shorter than k (k > n) padded with index 0 at distance 0: a real "
                    "point", "PyTorch3D's knn_points", 0, 0},
    {&knn_start_1e10, "every row starts at (0, 1e10): a neighbour farther than that (1e5 "
                      "units) never enters, point 0 is returned in its place",
     "torch_cluster's knn and mmcv's knn", 0, 0},
    {&knn_gemm, "squared distances as |q|^2 + |p|^2 - 2 q.p in float32: wrong neighbours far "
                "from the origin", "torch.cdist + topk, faiss GPU's flat index", 0, 0},
    {&knn_high_ties, "equal distances by decreasing index while promising the canonical order "
                     "(ties to the lower index)", "kNN kernels with an unstable sort or heap "
                                                  "that document a tie rule", 0, 0},
    {&knn_cap32, "at most 32 neighbours whatever k, the rest of the row padding, no error",
     "silent k caps (torch_cluster 100, mmcv 99, Open3D GPU 2,048)", 0, 0},
    {NULL, NULL, NULL, 0, 0}};

const bench_problem_face bench_knn_face = {
    .configs = configs,
    .size = size,
    .points = points,
    .pairs = pairs,
    .calibration = {.n = 2000, .nq = 2000, .k = 8},
    .rows_of_k = 1,
    .sides = 2,
    .json_fields = json_fields,
    .check = {.usage = "knn -r REF -q QUERY -k K --answer FILE",
              .answers = "a line a query point, its min(K, n) neighbours as indices or "
                         "'index squared-distance' pairs, nearest first (any order among "
                         "equal distances)",
              .options = "r:q:k:A:S:Nh",
              .letters = "rqkASNh",
              .missing = check_missing,
              .task = check_task,
              .layout = CHECK_FULL_ROWS,
              .distances = 1,
              .summary = check_summary},
    .verify = pcb_verify_knn,
    .defects = defects,
};
