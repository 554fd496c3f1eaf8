/* chamfer_cuda_grid.cu - chamfer for batches of mid-size clouds: one grid
 * build over both clouds of every pair (nn_grid.cuh, A's and B's clouds as
 * two sets of one launch a stage), both directions in one search launch,
 * then the values. Host runs upload both clouds in prepare
 * (chamfer_cuda.cuh); device runs take their scratch from the state cache. */
#include "impl/nn/nn_grid.cuh"
#include "chamfer_cuda.cuh"

extern "C" const pcb_impl pcb_chamfer_cuda_grid;

static grid_sets both_sets(const pcb_task *t, const float *a, const float *b)
{
    const grid_sets s = {{a, b}, {(int32_t)t->n, (int32_t)t->nq}, {t->lengths_a, t->lengths_b}, 2};
    return s;
}

static int cg_make(const pcb_task *t, void **scratch)
{
    const grid_sets sets = both_sets(t, NULL, NULL);
    grid_scratch *s = NULL;
    int rc = grid_make("chamfer cuda_grid", &sets, t->batch, 1, 1, &s);
    if (rc == PCB_OK)
        *scratch = s;
    return rc;
}

/* The whole answer on st: A's points against B's grid (set 1), then B's
 * against A's (set 0), as the answer lays them out. */
static int cg_queue(void *scratch, const pcb_task *t, pcb_result *out, cudaStream_t st)
{
    if (!out->dist2)
        return pcb_fail(PCB_EINVAL, "chamfer cuda_grid: the answer needs its dist2 array");
    grid_scratch *s = (grid_scratch *)scratch;
    const float limit = (float)PCB_NN_MAX_COORD;
    const grid_sets sets = both_sets(t, t->a, t->b);
    int rc = grid_build(s, &sets, 0, limit, out->finite, st);
    if (rc != PCB_OK)
        return rc;
    const int64_t first = t->batch * t->n;
    grid_dirs d = {};
    d.dir[0].qry = t->a, d.dir[0].nq = (int32_t)t->n, d.dir[0].qry_len = t->lengths_a;
    d.dir[0].set = 1, d.dir[0].idx = out->index, d.dir[0].dist2 = out->dist2;
    d.dir[0].idx64 = out->index64;
    d.dir[1].qry = t->b, d.dir[1].nq = (int32_t)t->nq, d.dir[1].qry_len = t->lengths_b;
    d.dir[1].set = 0, d.dir[1].dist2 = out->dist2 + first;
    d.dir[1].idx = out->index ? out->index + first : NULL;
    d.dir[1].idx64 = out->index64 ? out->index64 + first : NULL;
    if ((rc = grid_nearest_launch(s, &d, 2, limit, out->finite, st)) == PCB_OK && out->value)
        rc = chamfer_value_launch(t, out->dist2, out->value, st);
    return rc;
}

static const pcb_cuda_maker cg_maker = {&pcb_chamfer_cuda_grid, cg_make, grid_free, cg_queue};

static int cg_prepare(const pcb_task *t, void **state)
{
    return chamfer_cuda_prepare(t, state, "cuda_grid", cg_queue, &cg_maker);
}

static int cg_run_device(const pcb_task *t, pcb_result *out)
{
    return pcb_cuda_run_cached(&cg_maker, t, out);
}

extern "C" const pcb_impl pcb_chamfer_cuda_grid = {
    .name = "cuda_grid",
    .problem = PCB_CHAMFER,
    .device = PCB_CUDA,
    .promise = {.exact = 1},
    /* the grid's bounds: a launch's y dimension a cloud, A's and B's; chosen
     * up to 16,384 points a cloud, as nn cuda_grid */
    .limits = {.max_batch = 32767, .best_max_n = 16384},
    .cost = PCB_COST_INDEXED,
    .summary = "a uniform grid a cloud, both clouds of the batch built in one launch a stage, "
               "both directions searched in one launch (nn cuda_grid's kernels)",
    .available = pcb_cuda_available,
    .prepare = cg_prepare,
    .compute = chamfer_cuda_compute,
    .sync = chamfer_cuda_sync,
    .fetch = chamfer_cuda_fetch,
    .release = chamfer_cuda_release,
    .device_ms = chamfer_cuda_device_ms,
    .run_device = cg_run_device,
    .ragged = 1,
    .index64 = 1,
};
