/* nn_cuda_tiles.cu - exact nearest neighbour for batches of small clouds:
 * nn_tiles.cuh's brute force, every pair of the batch in one launch.
 *
 * Where point networks call NN (batches of 8-64 clouds of 1k-16k points) a
 * tree's build is a dozen launches a cloud, while the whole batch's pairs
 * are tens of microseconds of arithmetic. A device run is that one launch
 * on the caller's arrays: no copy, no scratch memory, no state to cache.
 * Host runs upload both clouds in prepare, like the other CUDA attempts. */
#include "nn_cuda.cuh"
#include "nn_tiles.cuh"

extern "C" const pcb_impl pcb_nn_cuda_tiles;

typedef struct {
    nn_cuda_base base;
} tiles_state;

static tiles_dirs one_dir(const float *ref, const float *qry, int64_t n, int64_t nq, int32_t *idx,
                          float *dist2, const int64_t *ref_len = NULL,
                          const int64_t *qry_len = NULL)
{
    tiles_dirs d = {};
    d.dir[0] = tiles_direction(ref, qry, n, nq, idx, dist2, ref_len, qry_len);
    return d;
}

static void tiles_release(void *state)
{
    tiles_state *s = (tiles_state *)state;
    if (!s)
        return;
    nn_cuda_base_free(&s->base);
    free(s);
}

static int tiles_prepare(const pcb_task *t, void **state)
{
    tiles_state *s = (tiles_state *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "nn cuda_tiles: out of memory");
    int rc = nn_cuda_base_init(&s->base, t, "cuda_tiles", 1);
    if (rc != PCB_OK) {
        tiles_release(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static int tiles_compute(void *state)
{
    tiles_state *s = (tiles_state *)state;
    const pcb_task *t = &s->base.task;
    int rc = pcb_cuda_begin(&s->base.ctx);
    if (rc != PCB_OK)
        return rc;
    tiles_dirs d = one_dir(s->base.ref, s->base.qry, t->n, t->nq, s->base.idx, s->base.dist2,
                           t->lengths_a, t->lengths_b); /* a ragged task's, uploaded */
    if ((rc = tiles_launch(&d, 1, t->batch, (float)PCB_NN_MAX_COORD, NULL, s->base.ctx.stream)) !=
        PCB_OK)
        return rc;
    return pcb_cuda_end(&s->base.ctx);
}

/* A device-resident run: one launch on the caller's arrays and stream. */
static int tiles_run_device(const pcb_task *t, pcb_result *out)
{
    tiles_dirs d = one_dir(t->a, t->b, t->n, t->nq, out->index, out->dist2, t->lengths_a,
                           t->lengths_b); /* a ragged batch's lengths are read on the device */
    d.dir[0].idx64 = out->index64;
    return tiles_launch(&d, 1, t->batch, (float)PCB_NN_MAX_COORD, out->finite,
                        (cudaStream_t)t->stream);
}

/* ---- an index kept on the device: the reference's copy ---------------------- */
static void tiles_index_release(void *state)
{
    nn_cuda_index *x = (nn_cuda_index *)state;
    if (!x)
        return;
    nn_cuda_index_free(x);
    free(x);
}

static int tiles_index_build(const pcb_task *t, int32_t *finite, void **state)
{
    nn_cuda_index *x = (nn_cuda_index *)calloc(1, sizeof *x);
    if (!x)
        return pcb_fail(PCB_ENOMEM, "nn cuda_tiles: out of memory");
    int rc = nn_cuda_index_copy(x, t, finite);
    if (rc == PCB_OK)
        rc = nn_cuda_index_ready(x, t);
    if (rc != PCB_OK) {
        tiles_index_release(x);
        return rc;
    }
    *state = x;
    return PCB_OK;
}

/* A search: the one launch on stream, after the reference's copy. */
static int tiles_index_query(void *state, const float *query, int64_t nq, pcb_result *out,
                             void *stream)
{
    nn_cuda_index *x = (nn_cuda_index *)state;
    int rc = nn_cuda_index_wait(x, "cuda_tiles", nq, stream);
    if (rc != PCB_OK)
        return rc;
    tiles_dirs d = one_dir(x->ref, query, x->n, nq, out->index, out->dist2);
    return tiles_launch(&d, 1, x->batch, (float)PCB_NN_MAX_COORD, out->finite,
                        (cudaStream_t)stream);
}

static const pcb_index_ops tiles_index_ops = {tiles_index_build, tiles_index_query,
                                              tiles_index_release};

extern "C" const pcb_impl pcb_nn_cuda_tiles = {
    .name = "cuda_tiles",
    .problem = PCB_NN,
    .device = PCB_CUDA,
    .promise = {.exact = 1},
    /* chosen up to 2,048 points a cloud: cuda_grid's build costs more below
     * (impl/nn/README.md); beyond, only by name */
    .limits = {.max_n = 16384, .max_batch = 65535, .best_max_n = 1024},
    .cost = PCB_COST_ALL_PAIRS,
    .summary = "GPU brute force for batches of small clouds: every pair in one launch, queries "
               "in registers, reference tiles in shared memory, ties to the lowest index",
    .available = pcb_cuda_available,
    .prepare = tiles_prepare,
    .compute = tiles_compute,
    .sync = nn_cuda_sync,
    .fetch = nn_cuda_fetch,
    .release = tiles_release,
    .counters = nn_cuda_brute_counters,
    .device_ms = nn_cuda_device_ms,
    .run_device = tiles_run_device,
    .device_index = &tiles_index_ops,
    .ragged = 1,
    .index64 = 1,
};
