/* knn_cuda_grid.cu - kNN for clouds past the tiles' sweet spot: nn_grid.cuh's
 * uniform grid a cloud, built for the whole batch in one launch a stage,
 * then a thread a query walking the cells around it shell by shell
 * (nn_grid.h's grid_walk, NN's walk) with a row of K in registers.
 *
 * The brute force (cuda_tiles) reads every point of a cloud for every
 * query; here a query reads the runs of cells that may hold a point nearer
 * than its row's last, a few hundred points at k = 16 whatever the cloud's
 * size. The queries get a grid of their own in the same build (the second
 * set of the sets, as chamfer's B), so thread i takes the i-th query in
 * cell order: a warp's 32 queries are neighbours and walk the same cells.
 * Cells hold a few points (kg_per_cell): a row of k is found within a
 * shell or two.
 *
 * Candidates come in cell order, not index order, so the row compares
 * (distance, index) (knn_insert<K, false>); the walk skips only what is
 * surely beyond the row's last (neither nearer nor a tie), so the rows are
 * naive's element for element, distances bit for bit (tested on the CPU by
 * tests/test_nn_grid.c's replay of the same walk, on the GPU by test_knn
 * and pcbench verify). A cloud whose points all share one cell (one place,
 * or outliers that stretch the bounds) reads every point: the brute force's
 * work, one thread a query.
 *
 * On clouds of GRID_KNN_COARSE_FROM points or more a coarse grid of the
 * references (GRID_KNN_COARSE_PER_CELL points a cell) is built beside: a
 * lidar sweep's far-field queries, whose fine walks would cross many empty
 * shells, finish there (NOTES.md: the cost model and the figures). */
#include <limits.h>

#include "impl/nn/nn_grid.cuh"
#include "knn_cuda.cuh"

enum { KG_THREADS = 128, KG_MAX_K = 64 };

/* Points a cell the budget aims at (grid_budget), measured on an H200
 * (NOTES.md): a point a cell makes shells of single points and, in a lidar
 * sweep's sparse far field, long walks through empty cells (the warp waits
 * for its longest); 4 hold a good part of a row of 16 in the query's own
 * shell and shorten those walks; rows of 64 read more points, so 2. */
static int64_t kg_per_cell(int64_t k, int64_t n)
{
    return (k < n ? k : n) > 32 ? 2 : 4;
}

/* One walk of a grid around q into the row (d, id, its last in bound):
 * every point not surely beyond min(bound, prune) offered, to the shell
 * limit; 1 when the limit cut it. */
template <int K>
__device__ __forceinline__ int kg_walk(const grid_cloud &c, const uint32_t *starts,
                                       const float4 *pts, const float q[3], int32_t limit,
                                       float prune, float (&d)[K], int32_t (&id)[K], int32_t len,
                                       float &bound)
{
    grid_walk w;
    uint32_t at, last;
    grid_walk_start(&w, &c, q);
    w.limit = limit;
    while (grid_walk_next(&w, &c, starts, q, fminf(bound, prune), &at, &last))
        for (; at < last; at++) {
            const float4 p = pts[at];
            const float e = sp_d2(SP_SUB(q[0], p.x), SP_SUB(q[1], p.y), SP_SUB(q[2], p.z));
            if (e <= bound && e <= prune) /* a tie of the last may still come before it */
                knn_insert<K, false>(d, id, e, __float_as_int(p.w), len, bound);
        }
    return w.cut;
}

/* A thread a query slot of the batch (pair * nq + slot): the slot-th query
 * of its pair in the queries' cell order (their grid, the sets' second),
 * its row written at the query's own index. A ragged pair's padding slots
 * write padding rows at theirs. With a coarse grid (coarse.clouds not
 * NULL), the fine walk stops after shell GRID_KNN_FINE_SHELLS; a query not
 * done by then (a lidar sweep's sparse far field) starts again on the
 * coarse grid with an empty row, every point beyond the fine row's last
 * left out: none of them can be in the final row. */
template <int K>
__global__ void __launch_bounds__(KG_THREADS)
    knn_grid_kernel(grid_view g, grid_view coarse, int32_t nq_all, const int64_t *qry_len,
                    int32_t k, int32_t *idx, int64_t *idx64, float *dist2)
{
    const int64_t i = (int64_t)blockIdx.x * KG_THREADS + threadIdx.x;
    if (i >= g.batch * nq_all)
        return;
    const int64_t pair = i / nq_all;
    const int32_t slot = (int32_t)(i % nq_all);
    const int32_t nq = grid_length(qry_len, pair, nq_all);
    const int32_t n = grid_length(g.sets.len[0], pair, g.sets.n[0]);
    const int32_t len = k < n ? k : n; /* <= K */
    float d[K], bound = INFINITY;
    int32_t id[K], qi = slot;
#pragma unroll
    for (int s = 0; s < K; s++)
        d[s] = INFINITY, id[s] = PCB_KNN_PAD;
    if (slot < nq && n > 0) {
        /* the slot-th query in its cloud's cell order (read as the build
         * read it: a coordinate not finite is 0 and cleared the flag); a
         * self task's queries are the references' set */
        const int64_t qset = g.sets.nsets - 1;
        const float4 qp = g.pts[g.starts[(qset * g.batch + pair) * g.cells] + slot];
        const float q[3] = {qp.x, qp.y, qp.z};
        qi = __float_as_int(qp.w);
        const grid_cloud c = g.clouds[pair]; /* the reference set's: in registers */
        if (kg_walk<K>(c, g.starts + pair * g.cells, g.pts, q,
                       coarse.clouds ? GRID_KNN_FINE_SHELLS : INT_MAX, INFINITY, d, id, len,
                       bound)) {
            const float prune = bound;
            bound = INFINITY;
#pragma unroll
            for (int s = 0; s < K; s++)
                d[s] = INFINITY, id[s] = PCB_KNN_PAD;
            const grid_cloud cc = coarse.clouds[pair];
            kg_walk<K>(cc, coarse.starts + pair * coarse.cells, coarse.pts, q, INT_MAX, prune, d,
                       id, len, bound);
        }
    }
    const size_t row = (pair * (size_t)nq_all + qi) * (size_t)k;
#pragma unroll
    for (int s = 0; s < K; s++)
        if (s < k) {
            tiles_put_index(idx, idx64, row + s, id[s]);
            if (dist2)
                dist2[row + s] = d[s];
        }
    for (int32_t s = K; s < k; s++) { /* k > n: the row was cut to n <= K */
        tiles_put_index(idx, idx64, row + s, PCB_KNN_PAD);
        if (dist2)
            dist2[row + s] = INFINITY;
    }
}

/* The reference clouds, and the queries for their cell order: sorted
 * queries took 0.26 ms at 8 x 16,384 (k = 16) against 0.35 as given, 1.31
 * against 2.24 at k = 64 (H200). A self task's queries are the references:
 * one set, its cell order theirs (the scratch is made for two). */
static grid_sets kg_sets(const pcb_task *t)
{
    const grid_sets s = {{t->a, t->b}, {(int32_t)t->n, (int32_t)t->nq},
                         {t->lengths_a, t->lengths_b}, pcb_task_self(t) ? 1 : 2};
    return s;
}

/* The reference clouds alone, for the coarse grid. */
static grid_sets kg_coarse_sets(const pcb_task *t)
{
    const grid_sets s = {{t->a, NULL}, {(int32_t)t->n, 0}, {t->lengths_a, NULL}, 1};
    return s;
}

/* The fine grid (references and queries) and, for clouds of
 * GRID_KNN_COARSE_FROM points or more, the coarse one (references). */
typedef struct {
    grid_scratch *fine, *coarse;
} kg_scratch;

static void kg_free(void *state)
{
    kg_scratch *s = (kg_scratch *)state;
    if (!s)
        return;
    grid_free(s->fine);
    grid_free(s->coarse);
    free(s);
}

static int kg_make(const pcb_task *t, void **scratch)
{
    kg_scratch *s = (kg_scratch *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "knn cuda_grid: out of memory");
    grid_sets sets = kg_sets(t);
    const grid_sets coarse = kg_coarse_sets(t);
    sets.nsets = 2; /* room for the queries' set: a cached scratch serves self and not */
    int rc = grid_make("knn cuda_grid", &sets, t->batch, kg_per_cell(t->k, t->n), 1, &s->fine);
    if (rc == PCB_OK && t->n >= GRID_KNN_COARSE_FROM)
        rc = grid_make("knn cuda_grid", &coarse, t->batch, GRID_KNN_COARSE_PER_CELL, 1,
                       &s->coarse);
    if (rc != PCB_OK) {
        kg_free(s);
        return rc;
    }
    *scratch = s;
    return PCB_OK;
}

/* Build and search on st: a device task (t->a, t->b and the lengths on the
 * device). */
static int kg_launch(void *scratch, const pcb_task *t, pcb_result *out, cudaStream_t st)
{
    kg_scratch *s = (kg_scratch *)scratch;
    const grid_sets sets = kg_sets(t), coarse_sets = kg_coarse_sets(t);
    const float limit = (float)PCB_NN_MAX_COORD;
    int rc = grid_build(s->fine, &sets, 0, limit, out->finite, st);
    if (rc == PCB_OK && s->coarse)
        rc = grid_build(s->coarse, &coarse_sets, 0, limit, out->finite, st);
    if (rc != PCB_OK)
        return rc;
    grid_view coarse = {};
    if (s->coarse)
        coarse = grid_view_of(s->coarse);
    const int64_t len = t->k < t->n ? t->k : t->n, slots = t->batch * t->nq;
    const unsigned blocks = (unsigned)((slots + KG_THREADS - 1) / KG_THREADS);
#define KG_CALL(K)                                                                               \
    knn_grid_kernel<K><<<blocks, KG_THREADS, 0, st>>>(grid_view_of(s->fine), coarse,             \
                                                      (int32_t)t->nq, t->lengths_b,              \
                                                      (int32_t)t->k, out->index, out->index64, \
                                                      out->dist2)
    if (len <= 4)
        KG_CALL(4);
    else if (len <= 8)
        KG_CALL(8);
    else if (len <= 16)
        KG_CALL(16);
    else if (len <= 24) /* DGCNN's k = 20: a row of 32 costs a third more a candidate */
        KG_CALL(24);
    else if (len <= 32)
        KG_CALL(32);
    else
        KG_CALL(64);
#undef KG_CALL
    PCB_CUDA_LAUNCHED("knn_grid_kernel");
    return PCB_OK;
}

extern "C" const pcb_impl pcb_knn_cuda_grid;

static const pcb_cuda_maker kg_maker = {&pcb_knn_cuda_grid, kg_make, kg_free, kg_launch};

static int kg_prepare(const pcb_task *t, void **state)
{
    return nn_cached_prepare(t, state, &kg_maker);
}

static int kg_run_device(const pcb_task *t, pcb_result *out)
{
    return pcb_cuda_run_cached(&kg_maker, t, out);
}

extern "C" const pcb_impl pcb_knn_cuda_grid = {
    .name = "cuda_grid",
    .problem = PCB_KNN,
    .device = PCB_CUDA,
    .promise = {.exact = 1, .canonical = 1},
    .limits = {.max_n = 0, .max_m = 0, .max_batch = 65535, .max_k = KG_MAX_K, .best_max_n = 0},
    .cost = PCB_COST_INDEXED,
    .summary = "a uniform grid a cloud and one of the queries, the batch's built in one launch "
               "a stage; a thread a query (in cell order) walking the cells around it shell by "
               "shell with a row of k in registers (k <= 64); from 65,536 points a coarse grid "
               "beside, for the queries not done within 2 shells",
    .available = pcb_cuda_available,
    .prepare = kg_prepare,
    .compute = nn_cached_compute,
    .sync = nn_cuda_sync,
    .fetch = nn_cuda_fetch,
    .release = nn_cached_release,
    .device_ms = nn_cuda_device_ms,
    .run_device = kg_run_device,
    .ragged = 1,
    .index64 = 1,
};
