/* nn_cuda_grid.cu - exact nearest neighbour for batches of mid-size clouds
 * through nn_grid.cuh: a uniform grid a reference cloud, the whole batch's
 * built in one launch a stage (no per-cloud loop: cuda_bvh's build is a
 * dozen launches a cloud), then a thread a query visiting the cells around
 * it shell by shell.
 *
 * A query reads a few dozen points where cuda_tiles' brute force reads
 * them all, so from a few thousand points a cloud the grid's six build
 * launches pay for themselves (README.md, the H100 figures). The answer is
 * naive's bit for bit, ties to the lowest index. Device runs take their
 * scratch from the state cache; the index keeps a copy of the reference and
 * its grid on the device for NNIndex. */
#include "nn_grid.cuh"

extern "C" const pcb_impl pcb_nn_cuda_grid;

static grid_sets ref_sets(const pcb_task *t, const float *ref)
{
    const grid_sets s = {{ref, NULL}, {(int32_t)t->n, 0}, {t->lengths_a, NULL}, 1};
    return s;
}

static int ng_make(const pcb_task *t, void **scratch)
{
    const grid_sets sets = ref_sets(t, NULL);
    grid_scratch *s = NULL;
    int rc = grid_make("nn cuda_grid", &sets, t->batch, 1, 1, &s);
    if (rc == PCB_OK)
        *scratch = s;
    return rc;
}

/* The search alone over a built grid: t's queries into out. */
static int ng_search(grid_scratch *s, const float *qry, int64_t nq, const int64_t *qry_len,
                     pcb_result *out, cudaStream_t st)
{
    grid_dirs d = {};
    d.dir[0].qry = qry, d.dir[0].nq = (int32_t)nq, d.dir[0].qry_len = qry_len;
    d.dir[0].set = 0, d.dir[0].idx = out->index, d.dir[0].dist2 = out->dist2;
    d.dir[0].idx64 = out->index64;
    return grid_nearest_launch(s, &d, 1, (float)PCB_NN_MAX_COORD, out->finite, st);
}

/* Build and search on st: a device task (t->a, t->b and the lengths on the
 * device). */
static int ng_launch(void *scratch, const pcb_task *t, pcb_result *out, cudaStream_t st)
{
    grid_scratch *s = (grid_scratch *)scratch;
    const grid_sets sets = ref_sets(t, t->a);
    int rc = grid_build(s, &sets, 0, (float)PCB_NN_MAX_COORD, out->finite, st);
    return rc == PCB_OK ? ng_search(s, t->b, t->nq, t->lengths_b, out, st) : rc;
}

static const pcb_cuda_maker ng_maker = {&pcb_nn_cuda_grid, ng_make, grid_free, ng_launch};

static int ng_prepare(const pcb_task *t, void **state)
{
    return nn_cached_prepare(t, state, &ng_maker);
}

static int ng_run_device(const pcb_task *t, pcb_result *out)
{
    return pcb_cuda_run_cached(&ng_maker, t, out);
}

/* ---- an index kept on the device: the reference's copy and its grid --------- */
typedef struct {
    nn_cuda_index base;
    grid_scratch *grid;
} ng_index;

static void ng_index_release(void *state)
{
    ng_index *x = (ng_index *)state;
    if (!x)
        return;
    nn_cuda_index_free(&x->base); /* waits for the searches that read the grid */
    grid_free(x->grid);
    free(x);
}

static int ng_index_build(const pcb_task *t, int32_t *finite, void **state)
{
    ng_index *x = (ng_index *)calloc(1, sizeof *x);
    if (!x)
        return pcb_fail(PCB_ENOMEM, "nn cuda_grid: out of memory");
    void *grid = NULL;
    int rc = nn_cuda_index_copy(&x->base, t, finite);
    if (rc == PCB_OK && (rc = ng_make(t, &grid)) == PCB_OK) {
        x->grid = (grid_scratch *)grid;
        const grid_sets sets = ref_sets(t, x->base.ref);
        rc = grid_build(x->grid, &sets, 0, (float)PCB_NN_MAX_COORD, NULL,
                        (cudaStream_t)t->stream);
    }
    if (rc == PCB_OK)
        rc = nn_cuda_index_ready(&x->base, t);
    if (rc != PCB_OK) {
        ng_index_release(x);
        return rc;
    }
    *state = x;
    return PCB_OK;
}

/* A search: one launch on stream, after the build. */
static int ng_index_query(void *state, const float *query, int64_t nq, pcb_result *out,
                          void *stream)
{
    ng_index *x = (ng_index *)state;
    int rc = nn_cuda_index_wait(&x->base, "cuda_grid", nq, stream);
    return rc == PCB_OK ? ng_search(x->grid, query, nq, NULL, out, (cudaStream_t)stream) : rc;
}

static const pcb_index_ops ng_index_ops = {ng_index_build, ng_index_query, ng_index_release};

extern "C" const pcb_impl pcb_nn_cuda_grid = {
    .name = "cuda_grid",
    .problem = PCB_NN,
    .device = PCB_CUDA,
    .promise = {.exact = 1},
    /* chosen up to 16,384 points a cloud: beyond, cuda_bvh's search (lidar
     * sweeps, uneven density) was faster where measured (impl/nn/README.md) */
    .limits = {.max_batch = 65535, .best_max_n = 16384},
    .cost = PCB_COST_INDEXED,
    .summary = "a uniform grid a reference cloud, the batch's built in one launch a stage; a "
               "thread a query visiting the cells around it shell by shell",
    .available = pcb_cuda_available,
    .prepare = ng_prepare,
    .compute = nn_cached_compute,
    .sync = nn_cuda_sync,
    .fetch = nn_cuda_fetch,
    .release = nn_cached_release,
    .device_ms = nn_cuda_device_ms,
    .run_device = ng_run_device,
    .device_index = &ng_index_ops,
    .ragged = 1,
    .index64 = 1,
};
