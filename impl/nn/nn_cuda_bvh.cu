/* nn_cuda_bvh.cu - exact nearest neighbour on the GPU through a bounding
 * volume hierarchy over Morton-sorted leaves (nn_bvh.h says what the index
 * is and why the search is exact).
 *
 * prepare uploads both clouds and builds each reference cloud's index on
 * the device: bounding box (two reduction kernels), Morton codes, a radix
 * sort (CUB), the points gathered into leaf slots, then every box bottom up
 * in one launch (a launch a level cost more than the work), captured as one
 * graph that runs while the queries upload on a second stream. Its buffers
 * are one allocation (every cudaFree waits for the device), kept with the
 * streams and graphs for the next run of the same sizes (bvh_release gives
 * the state back to the cache of impl/cuda_util.h).
 * compute sorts the queries by a 30-bit Morton code in the reference's
 * frame (so a warp's 32 queries are neighbours and walk nearly the same
 * nodes), then runs one thread per query over all pairs of the batch in one
 * launch: home leaf by binary search, then the tree. Those few launches are
 * captured once as a CUDA graph in prepare and replayed by compute: as
 * separate launches, the gaps between them took longer than the kernels. */
#include <cub/cub.cuh>

#include "nn_cuda.cuh"
#include "nn_bvh.h"

enum { BUILD_BLOCK = 256, BBOX_BLOCKS = 1024, QUERY_BLOCK = 128 };

typedef struct {
    nn_cuda_base base;
    int32_t log_p, slots, nodes;         /* per pair; P = 2^log_p leaves, nodes = 2P */
    void *arena;                         /* everything below and base's buffers */
    cudaGraph_t graph;                   /* compute's launches, captured */
    cudaGraphExec_t exec;
    float4 *pts, *box;                   /* batch * slots; batch * nodes * 2 (lo, hi) */
    uint64_t *codes;                     /* batch * n: sorted reference Morton codes */
    int32_t *ids;                        /* batch * slots: slot -> point index */
    float *frame;                        /* batch * 4: Morton frame of each reference */
    float *partial;                      /* bounding-box partials */
    uint64_t *keys[2];                   /* reference codes; the queries' use them as uint32 */
    int32_t *vals[2];
    int32_t *order; /* batch * nq: queries in Morton order, per pair */
    int32_t *arrived; /* batch * P: bvh_boxes' counts, 0 between builds */
    size_t arrived_bytes;
    void *temp;
    size_t temp_bytes;
    unsigned long long *evals;
    int32_t *beyond; /* host runs: set when a coordinate is beyond the limit */
    cudaGraph_t build_graph; /* host runs: the reference's index, captured */
    cudaGraphExec_t build;
    cudaStream_t side;       /* host runs: the queries' upload, beside the build */
    cudaEvent_t queries_in;
    int slot;                /* host runs: the cache slot taken, -1: not kept */
} bvh_state;

/* ---- building ------------------------------------------------------------- */
/* The block's box from every thread's (min x, y, z, max x, y, z), in s[k][0]. */
__device__ void bvh_block_box(float (*s)[BUILD_BLOCK], const float *v)
{
    for (int k = 0; k < 6; k++)
        s[k][threadIdx.x] = v[k];
    __syncthreads();
    for (int w = BUILD_BLOCK / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w)
            for (int k = 0; k < 6; k++)
                s[k][threadIdx.x] = k < 3 ? fminf(s[k][threadIdx.x], s[k][threadIdx.x + w])
                                          : fmaxf(s[k][threadIdx.x], s[k][threadIdx.x + w]);
        __syncthreads();
    }
}

__global__ void bvh_bbox_partial(const float *p, int32_t n, float *partial)
{
    __shared__ float s[6][BUILD_BLOCK];
    float v[6] = {INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, -INFINITY};
    for (int32_t i = blockIdx.x * BUILD_BLOCK + threadIdx.x; i < n; i += gridDim.x * BUILD_BLOCK)
        for (int d = 0; d < 3; d++) {
            v[d] = fminf(v[d], p[3 * (size_t)i + d]);
            v[3 + d] = fmaxf(v[3 + d], p[3 * (size_t)i + d]);
        }
    bvh_block_box(s, v);
    if (threadIdx.x < 6)
        partial[6 * blockIdx.x + threadIdx.x] = s[threadIdx.x][0];
}

/* One block: the partials' box, then the frame (lo, scale). */
__global__ void bvh_bbox_final(const float *partial, int blocks, float *frame)
{
    __shared__ float s[6][BUILD_BLOCK];
    float v[6] = {INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, -INFINITY};
    for (int b = threadIdx.x; b < blocks; b += BUILD_BLOCK)
        for (int k = 0; k < 6; k++)
            v[k] = k < 3 ? fminf(v[k], partial[6 * b + k]) : fmaxf(v[k], partial[6 * b + k]);
    bvh_block_box(s, v);
    if (threadIdx.x == 0) {
        float ext = fmaxf(fmaxf(s[3][0] - s[0][0], s[4][0] - s[1][0]), s[5][0] - s[2][0]);
        frame[0] = s[0][0], frame[1] = s[1][0], frame[2] = s[2][0];
        frame[3] = ext > 0 ? (float)((1 << SP_BITS) - 1) / ext : 0.0f;
    }
}

template <typename K>
__global__ void bvh_codes(const float *p, int32_t n, const float *frame, int bits, K *keys,
                          int32_t *vals)
{
    int32_t i = blockIdx.x * BUILD_BLOCK + threadIdx.x;
    if (i < n) {
        keys[i] = (K)sp_morton(frame, p[3 * (size_t)i], p[3 * (size_t)i + 1],
                                p[3 * (size_t)i + 2], bits);
        vals[i] = i;
    }
}

/* Slots in Morton order; slots past n are +inf points (never nearer). */
__global__ void bvh_gather(const float *p, int32_t n, const int32_t *sorted, int32_t slots,
                           float4 *pts, int32_t *ids)
{
    int32_t s = blockIdx.x * BUILD_BLOCK + threadIdx.x;
    if (s >= slots)
        return;
    if (s < n) {
        int32_t i = sorted[s];
        pts[s] = make_float4(p[3 * (size_t)i], p[3 * (size_t)i + 1], p[3 * (size_t)i + 2], 0.0f);
        ids[s] = i;
    } else {
        pts[s] = make_float4(INFINITY, INFINITY, INFINITY, 0.0f);
        ids[s] = -1;
    }
}

/* Every box of the tree in one launch. Leaf k = node P + k: the box of its
 * real points; leaves past the last are empty boxes (+inf away). box[2v] =
 * lo, box[2v + 1] = hi. Then up the tree: of a node's two children, the
 * thread of the second to finish (an atomic count a node) makes the
 * parent's box, reading its sibling's through L2, and clears the count for
 * the next build; min and max are exact, so the boxes are those level by
 * level launches make (one launch a level cost more than the work). */
__global__ void bvh_boxes(const float4 *pts, int32_t n, int32_t p, float4 *box, int32_t *arrived)
{
    int32_t k = blockIdx.x * BUILD_BLOCK + threadIdx.x;
    if (k >= p)
        return;
    float4 l = make_float4(INFINITY, INFINITY, INFINITY, INFINITY);
    float4 h = make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
    for (int32_t s = k * BVH_LEAF; s < (k + 1) * BVH_LEAF && s < n; s++) {
        float4 v = pts[s];
        l.x = fminf(l.x, v.x), l.y = fminf(l.y, v.y), l.z = fminf(l.z, v.z);
        h.x = fmaxf(h.x, v.x), h.y = fmaxf(h.y, v.y), h.z = fmaxf(h.z, v.z);
    }
    box[2 * (p + k)] = l;
    box[2 * (p + k) + 1] = h;
    for (int32_t v = (p + k) / 2; v >= 1; v /= 2) {
        __threadfence(); /* this child's box before its count */
        if (atomicAdd(&arrived[v], 1) == 0)
            return; /* the sibling's thread goes on */
        arrived[v] = 0;
        const float4 a = __ldcg(&box[4 * v]), c = __ldcg(&box[4 * v + 1]),
                     b = __ldcg(&box[4 * v + 2]), d = __ldcg(&box[4 * v + 3]);
        box[2 * v] = make_float4(fminf(a.x, b.x), fminf(a.y, b.y), fminf(a.z, b.z), 0.0f);
        box[2 * v + 1] = make_float4(fmaxf(c.x, d.x), fmaxf(c.y, d.y), fmaxf(c.z, d.z), 0.0f);
    }
}

/* Host runs check NN's coordinate limit here, not by a host scan: the
 * clouds are on the device anyway, and a scan of 240k points cost the host
 * more than the whole search (NaN fails the test too). */
__global__ void bvh_beyond(const float *a, int64_t na, const float *b, int64_t nb, float limit,
                           int32_t *beyond)
{
    bool out = false;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < na + nb;
         i += (int64_t)gridDim.x * blockDim.x)
        out |= !(fabsf(i < na ? a[i] : b[i - na]) <= limit);
    if (__any_sync(0xffffffffu, out) && (threadIdx.x & 31) == 0)
        *beyond = 1;
}

/* ---- querying ------------------------------------------------------------- */
/* Thread k of pair y answers that pair's k-th query in Morton order. */
__global__ void __launch_bounds__(QUERY_BLOCK)
    bvh_query(const float4 *pts, const int32_t *ids, const float4 *box, const uint64_t *codes,
              const float *frame, int32_t n, int32_t log_p, int32_t slots, int32_t nodes,
              const float *qry, const int32_t *order, int32_t nq, int32_t *idx, float *dist2,
              unsigned long long *evals)
{
    const size_t pair = blockIdx.y;
    int32_t k = blockIdx.x * QUERY_BLOCK + threadIdx.x;
    int64_t ev = 0;
    if (k < nq) {
        size_t i = pair * nq + order[pair * nq + k];
        bvh_tree t = {(const float *)(pts + pair * slots),
                      (const float *)(box + 2 * pair * nodes), log_p};
        float qx = qry[3 * i], qy = qry[3 * i + 1], qz = qry[3 * i + 2], best;
        int32_t slot, home = bvh_home_leaf(codes + pair * n, n,
                                           sp_morton(frame + 4 * pair, qx, qy, qz, SP_BITS));
        bvh_search(&t, home, qx, qy, qz, &best, &slot, &ev);
        idx[i] = ids[pair * slots + slot];
        dist2[i] = best;
    }
    for (int o = 16; o > 0; o >>= 1) /* every lane is here: full-warp sum */
        ev += __shfl_down_sync(0xffffffffu, ev, o);
    if ((threadIdx.x & 31) == 0 && ev)
        atomicAdd(evals, (unsigned long long)ev);
}

/* ---- life cycle ------------------------------------------------------------ */
extern "C" const pcb_impl pcb_nn_cuda_bvh;
static void bvh_free(void *state)
{
    bvh_state *s = (bvh_state *)state;
    if (!s)
        return;
    pcb_cuda_ctx_free(&s->base.ctx); /* waits for queued work first */
    if (s->side) {
        cudaStreamSynchronize(s->side);
        cudaStreamDestroy(s->side);
    }
    if (s->queries_in)
        cudaEventDestroy(s->queries_in);
    cudaGraphExec_t execs[] = {s->exec, s->build};
    cudaGraph_t graphs[] = {s->graph, s->build_graph};
    for (int k = 0; k < 2; k++) {
        if (execs[k])
            cudaGraphExecDestroy(execs[k]);
        if (graphs[k])
            cudaGraphDestroy(graphs[k]);
    }
    cudaFree(s->arena); /* base's buffers are carved from it too */
    free(s);
}

static unsigned blocks_for(int64_t count)
{
    return (unsigned)((count + BUILD_BLOCK - 1) / BUILD_BLOCK);
}

/* The index of pair b's reference cloud, queued on the stream. */
static int build_one(bvh_state *s, int64_t b, cudaStream_t st)
{
    const pcb_task *t = &s->base.task;
    const float *ref = s->base.ref + b * t->n * 3;
    int32_t n = (int32_t)t->n, p = 1 << s->log_p;
    float *frame = s->frame + 4 * b;
    unsigned pb = blocks_for(n) < (unsigned)BBOX_BLOCKS ? blocks_for(n) : (unsigned)BBOX_BLOCKS;
    bvh_bbox_partial<<<pb, BUILD_BLOCK, 0, st>>>(ref, n, s->partial);
    PCB_CUDA_LAUNCHED("bvh_bbox_partial");
    bvh_bbox_final<<<1, BUILD_BLOCK, 0, st>>>(s->partial, (int)pb, frame);
    PCB_CUDA_LAUNCHED("bvh_bbox_final");
    bvh_codes<<<blocks_for(n), BUILD_BLOCK, 0, st>>>(ref, n, frame, (int)SP_BITS, s->keys[0],
                                                     s->vals[0]);
    PCB_CUDA_LAUNCHED("bvh_codes");
    PCB_CUDA_TRY(cub::DeviceRadixSort::SortPairs(s->temp, s->temp_bytes, s->keys[0],
                                                 s->codes + b * t->n, s->vals[0], s->vals[1], n,
                                                 0, 3 * SP_BITS, st));
    float4 *pts = s->pts + b * s->slots, *box = s->box + 2 * b * s->nodes;
    bvh_gather<<<blocks_for(s->slots), BUILD_BLOCK, 0, st>>>(ref, n, s->vals[1], s->slots, pts,
                                                             s->ids + b * s->slots);
    PCB_CUDA_LAUNCHED("bvh_gather");
    bvh_boxes<<<blocks_for(p), BUILD_BLOCK, 0, st>>>(pts, n, p, box, s->arrived + b * p);
    PCB_CUDA_LAUNCHED("bvh_boxes");
    return PCB_OK;
}

/* Carve the next 256-byte-aligned piece of size bytes. */
static void *carve(char **at, size_t bytes)
{
    void *p = *at;
    *at += (bytes + 255) / 256 * 256;
    return p;
}

/* The stream, then one allocation for the clouds, results and index. */
static int bvh_alloc(bvh_state *s, const pcb_task *t)
{
    /* the coordinates are checked on the device: device runs' copies clamp
     * them, host runs' bvh_beyond refuses them */
    int rc = pcb_cuda_ctx_init(&s->base.ctx);
    if (rc != PCB_OK)
        return rc;
    s->base.task = *t;
    size_t batch = (size_t)t->batch, most = (size_t)(t->n > t->nq ? t->n : t->nq);
    size_t refs = batch * (size_t)t->n, qs = batch * (size_t)t->nq;
    /* One scratch area for both sorts: the larger of the two. */
    size_t a = 0, b = 0;
    PCB_CUDA_TRY(cub::DeviceRadixSort::SortPairs(NULL, a, (uint64_t *)NULL, (uint64_t *)NULL,
                                                 (int32_t *)NULL, (int32_t *)NULL, (int)t->n, 0,
                                                 3 * SP_BITS));
    PCB_CUDA_TRY(cub::DeviceRadixSort::SortPairs(NULL, b, (uint32_t *)NULL, (uint32_t *)NULL,
                                                 (int32_t *)NULL, (int32_t *)NULL, (int)t->nq, 0,
                                                 3 * BVH_QUERY_BITS));
    s->temp_bytes = a > b ? a : b;
    size_t sizes[] = {refs * 3 * sizeof(float), qs * 3 * sizeof(float), qs * sizeof(int32_t),
                      qs * sizeof(float), batch * s->slots * sizeof(float4),
                      batch * s->nodes * 2 * sizeof(float4), refs * sizeof(uint64_t),
                      batch * s->slots * sizeof(int32_t), batch * 4 * sizeof(float),
                      BBOX_BLOCKS * 6 * sizeof(float), most * sizeof(uint64_t),
                      most * sizeof(uint64_t), most * sizeof(int32_t), most * sizeof(int32_t),
                      qs * sizeof(int32_t), s->temp_bytes, sizeof(unsigned long long),
                      batch * ((size_t)1 << s->log_p) * sizeof(int32_t), sizeof(int32_t)};
    size_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        total += (sizes[i] + 255) / 256 * 256;
    PCB_CUDA_TRY(cudaMalloc(&s->arena, total));
    char *at = (char *)s->arena;
    s->base.ref = (float *)carve(&at, sizes[0]);
    s->base.qry = (float *)carve(&at, sizes[1]);
    s->base.idx = (int32_t *)carve(&at, sizes[2]);
    s->base.dist2 = (float *)carve(&at, sizes[3]);
    s->pts = (float4 *)carve(&at, sizes[4]);
    s->box = (float4 *)carve(&at, sizes[5]);
    s->codes = (uint64_t *)carve(&at, sizes[6]);
    s->ids = (int32_t *)carve(&at, sizes[7]);
    s->frame = (float *)carve(&at, sizes[8]);
    s->partial = (float *)carve(&at, sizes[9]);
    s->keys[0] = (uint64_t *)carve(&at, sizes[10]);
    s->keys[1] = (uint64_t *)carve(&at, sizes[11]);
    s->vals[0] = (int32_t *)carve(&at, sizes[12]);
    s->vals[1] = (int32_t *)carve(&at, sizes[13]);
    s->order = (int32_t *)carve(&at, sizes[14]);
    s->temp = carve(&at, sizes[15]);
    s->evals = (unsigned long long *)carve(&at, sizes[16]);
    s->arrived = (int32_t *)carve(&at, sizes[17]);
    s->arrived_bytes = sizes[17];
    s->beyond = (int32_t *)carve(&at, sizes[18]);
    return PCB_OK;
}

/* What compute does, queued on the stream (captured into the graph). */
static int enqueue_compute(bvh_state *s, cudaStream_t st)
{
    const pcb_task *t = &s->base.task;
    int32_t nq = (int32_t)t->nq;
    PCB_CUDA_TRY(cudaMemsetAsync(s->evals, 0, sizeof *s->evals, st));
    uint32_t *k0 = (uint32_t *)s->keys[0], *k1 = (uint32_t *)s->keys[1];
    for (int64_t b = 0; b < t->batch; b++) { /* queries in Morton order, per pair */
        bvh_codes<<<blocks_for(nq), BUILD_BLOCK, 0, st>>>(s->base.qry + b * t->nq * 3, nq,
                                                          s->frame + 4 * b, (int)BVH_QUERY_BITS,
                                                          k0, s->vals[0]);
        PCB_CUDA_LAUNCHED("bvh_codes");
        PCB_CUDA_TRY(cub::DeviceRadixSort::SortPairs(s->temp, s->temp_bytes, k0, k1, s->vals[0],
                                                     s->order + b * t->nq, nq, 0,
                                                     3 * BVH_QUERY_BITS, st));
    }
    dim3 grid((unsigned)((nq + QUERY_BLOCK - 1) / QUERY_BLOCK), (unsigned)t->batch);
    bvh_query<<<grid, QUERY_BLOCK, 0, st>>>(s->pts, s->ids, s->box, s->codes, s->frame,
                                            (int32_t)t->n, s->log_p, s->slots, s->nodes,
                                            s->base.qry, s->order, nq, s->base.idx,
                                            s->base.dist2, s->evals);
    PCB_CUDA_LAUNCHED("bvh_query");
    return PCB_OK;
}

typedef int (*bvh_enqueue)(bvh_state *s, cudaStream_t st);

static int enqueue_build(bvh_state *s, cudaStream_t st)
{
    int rc = PCB_OK;
    for (int64_t b = 0; b < s->base.task.batch && rc == PCB_OK; b++)
        rc = build_one(s, b, st);
    return rc;
}

/* A device-resident run builds at every call: its clouds are new each time. */
static int enqueue_build_compute(bvh_state *s, cudaStream_t st)
{
    int rc = enqueue_build(s, st);
    return rc == PCB_OK ? enqueue_compute(s, st) : rc;
}

/* what's launches captured as a graph (replayed: as separate launches the
 * gaps between them took longer than the kernels). */
static int capture(bvh_state *s, bvh_enqueue what, cudaGraph_t *graph, cudaGraphExec_t *exec)
{
    cudaStream_t st = s->base.ctx.stream;
    PCB_CUDA_TRY(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    int rc = what(s, st);
    cudaError_t err = cudaStreamEndCapture(st, graph); /* always: the stream must leave capture */
    if (rc != PCB_OK)
        return rc;
    if (err != cudaSuccess)
        return pcb_cuda_fail(err, "cudaStreamEndCapture", __FILE__, __LINE__);
    PCB_CUDA_TRY(cudaGraphInstantiate(exec, *graph, 0));
    return PCB_OK;
}

/* A state sized for t: the tree's shape, then bvh_alloc. */
static int bvh_new(const pcb_task *t, bvh_state **out)
{
    bvh_state *s = (bvh_state *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "nn cuda_bvh: out of memory");
    int32_t leaves = (int32_t)((t->n + BVH_LEAF - 1) / BVH_LEAF);
    while ((1 << s->log_p) < leaves)
        s->log_p++;
    s->slots = leaves * BVH_LEAF;
    s->nodes = 2 << s->log_p;
    *out = s;
    return bvh_alloc(s, t);
}

/* A state for t, its searches captured: with the build for device runs;
 * host runs capture the build on its own (their prepare replays it) and
 * get a second stream for the queries' upload. */
static int bvh_make(const pcb_task *t, void **state)
{
    bvh_state *s = NULL;
    int rc = bvh_new(t, &s);
    if (!s)
        return rc;
    s->slot = -1;
    const int on_device = t->memory == PCB_MEM_DEVICE;
    cudaError_t e = cudaSuccess;
    if (rc == PCB_OK &&
        (e = cudaMemsetAsync(s->arrived, 0, s->arrived_bytes, s->base.ctx.stream)) != cudaSuccess)
        rc = pcb_cuda_fail(e, "cudaMemsetAsync", __FILE__, __LINE__);
    if (rc == PCB_OK && !on_device) {
        if ((e = cudaStreamCreateWithFlags(&s->side, cudaStreamNonBlocking)) == cudaSuccess)
            e = cudaEventCreateWithFlags(&s->queries_in, cudaEventDisableTiming);
        rc = e == cudaSuccess ? PCB_OK : pcb_cuda_fail(e, "nn cuda_bvh: stream", __FILE__, __LINE__);
        if (rc == PCB_OK)
            rc = capture(s, enqueue_build, &s->build_graph, &s->build);
    }
    if (rc == PCB_OK)
        rc = capture(s, on_device ? enqueue_build_compute : enqueue_compute, &s->graph, &s->exec);
    /* the counts' clearing must be done before another stream builds */
    if (rc == PCB_OK)
        rc = pcb_cuda_sync(&s->base.ctx);
    if (rc != PCB_OK) {
        bvh_free(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static const pcb_cuda_maker bvh_host_maker = {&pcb_nn_cuda_bvh, bvh_make, bvh_free, NULL};

/* A host run: the clouds uploaded, the reference's upload first so that its
 * index builds while the queries' upload runs on the side stream; then the
 * limit checked on the device, and everything waited for (the uploads read
 * the caller's arrays). */
static int bvh_load(bvh_state *s, const pcb_task *t)
{
    cudaStream_t st = s->base.ctx.stream;
    const size_t refs = (size_t)(t->batch * t->n) * 3, qs = (size_t)(t->batch * t->nq) * 3;
    int32_t beyond = 0;
    PCB_CUDA_TRY(cudaMemsetAsync(s->beyond, 0, sizeof *s->beyond, st));
    PCB_CUDA_TRY(cudaMemcpyAsync(s->base.ref, t->a, refs * sizeof(float), cudaMemcpyHostToDevice, st));
    PCB_CUDA_TRY(cudaGraphLaunch(s->build, st));
    PCB_CUDA_TRY(cudaMemcpyAsync(s->base.qry, t->b, qs * sizeof(float), cudaMemcpyHostToDevice,
                                 s->side));
    PCB_CUDA_TRY(cudaEventRecord(s->queries_in, s->side));
    PCB_CUDA_TRY(cudaStreamWaitEvent(st, s->queries_in, 0));
    const int64_t blocks = (int64_t)(refs + qs + 255) / 256;
    bvh_beyond<<<(unsigned)(blocks < 1024 ? blocks : 1024), 256, 0, st>>>(
        s->base.ref, (int64_t)refs, s->base.qry, (int64_t)qs, (float)PCB_NN_MAX_COORD, s->beyond);
    PCB_CUDA_LAUNCHED("bvh_beyond");
    PCB_CUDA_TRY(cudaMemcpyAsync(&beyond, s->beyond, sizeof beyond, cudaMemcpyDeviceToHost, st));
    int rc = pcb_cuda_sync(&s->base.ctx);
    if (rc == PCB_OK && beyond) /* the host scan names the coordinate */
        rc = pcb_nn_coords_fit(t, "cuda_bvh");
    if (rc == PCB_OK && beyond)
        rc = pcb_fail(PCB_EDEVICE, "nn cuda_bvh: the device saw a coordinate beyond +-%g that "
                      "the host does not", PCB_NN_MAX_COORD);
    return rc;
}

/* Host runs keep their state (buffers, graphs, streams) between runs of
 * the same sizes, as device runs do: a scan-matching loop pays the
 * allocation and the captures once. */
static void bvh_release(void *state)
{
    bvh_state *s = (bvh_state *)state;
    if (!s)
        return;
    if (s->slot < 0)
        bvh_free(s);
    else
        (void)pcb_cuda_cache_give(s->slot, s->base.ctx.stream);
}

static int bvh_prepare(const pcb_task *t, void **state)
{
    void *got = NULL;
    int slot = -1, rc = pcb_cuda_cache_take(&bvh_host_maker, t, &got, &slot);
    if (rc != PCB_OK)
        return rc;
    bvh_state *s = (bvh_state *)got;
    s->slot = slot;
    s->base.task = *t; /* this run's arrays */
    if ((rc = bvh_load(s, t)) != PCB_OK) {
        bvh_release(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static int bvh_compute(void *state)
{
    bvh_state *s = (bvh_state *)state;
    int rc = pcb_cuda_begin(&s->base.ctx);
    if (rc != PCB_OK)
        return rc;
    PCB_CUDA_TRY(cudaGraphLaunch(s->exec, s->base.ctx.stream));
    return pcb_cuda_end(&s->base.ctx);
}

/* The captured graph replayed on st, then its count answers copied into out. */
static int replay_out(bvh_state *s, int64_t count, pcb_result *out, cudaStream_t st)
{
    PCB_CUDA_TRY(cudaGraphLaunch(s->exec, st));
    PCB_CUDA_TRY(cudaMemcpyAsync(out->index, s->base.idx, (size_t)count * sizeof(int32_t),
                                 cudaMemcpyDeviceToDevice, st));
    if (out->dist2)
        PCB_CUDA_TRY(cudaMemcpyAsync(out->dist2, s->base.dist2, (size_t)count * sizeof(float),
                                     cudaMemcpyDeviceToDevice, st));
    return PCB_OK;
}

/* A device-resident run: the caller's clouds copied into the cached
 * state's buffers (non-finite coordinates as 0), build and search replayed
 * as one graph, the answers copied out, all on the caller's stream. */
static int bvh_device(void *state, const pcb_task *t, pcb_result *out, cudaStream_t st)
{
    bvh_state *s = (bvh_state *)state;
    const float limit = PCB_NN_MAX_COORD;
    int rc = pcb_cuda_finite_copy(s->base.ref, t->a, t->batch * t->n * 3, limit, out->finite, st);
    if (rc == PCB_OK)
        rc = pcb_cuda_finite_copy(s->base.qry, t->b, t->batch * t->nq * 3, limit, out->finite, st);
    if (rc != PCB_OK || !pcb_cuda_capturing(st, NULL))
        return rc == PCB_OK ? replay_out(s, t->batch * t->nq, out, st) : rc;
    /* inside the caller's capture the launches themselves join its graph */
    const int64_t count = t->batch * t->nq;
    if ((rc = enqueue_build_compute(s, st)) != PCB_OK)
        return rc;
    PCB_CUDA_TRY(cudaMemcpyAsync(out->index, s->base.idx, (size_t)count * sizeof(int32_t),
                                 cudaMemcpyDeviceToDevice, st));
    if (out->dist2)
        PCB_CUDA_TRY(cudaMemcpyAsync(out->dist2, s->base.dist2, (size_t)count * sizeof(float),
                                     cudaMemcpyDeviceToDevice, st));
    return PCB_OK;
}

static int bvh_run_device(const pcb_task *t, pcb_result *out)
{
    static const pcb_cuda_maker maker = {&pcb_nn_cuda_bvh, bvh_make, bvh_free, bvh_device};
    return pcb_cuda_run_cached(&maker, t, out);
}

/* ---- an index kept between searches (pcb_nn_index_*) ---------------------- */
typedef struct {
    bvh_state *s;
    int64_t capacity;         /* the most queries a cloud a search may ask */
    int64_t graph_nq;         /* the query count the captured search is for; 0: none */
    cudaEvent_t last;         /* after the build, then after each search */
    cudaStream_t last_stream; /* where that was queued */
} bvh_index;

static void bvh_index_release(void *state)
{
    bvh_index *x = (bvh_index *)state;
    if (!x)
        return;
    if (x->last) {
        cudaEventSynchronize(x->last); /* the searches queued read the index */
        cudaEventDestroy(x->last);
    }
    bvh_free(x->s);
    free(x);
}

/* The reference copied in and its index built, on the task's stream. */
static int bvh_index_build(const pcb_task *t, int32_t *finite, void **state)
{
    bvh_index *x = (bvh_index *)calloc(1, sizeof *x);
    if (!x)
        return pcb_fail(PCB_ENOMEM, "nn cuda_bvh: out of memory");
    cudaStream_t st = (cudaStream_t)t->stream;
    int rc = bvh_new(t, &x->s);
    cudaError_t e = cudaSuccess;
    if (rc == PCB_OK && (e = cudaMemsetAsync(x->s->arrived, 0, x->s->arrived_bytes, st)) != cudaSuccess)
        rc = pcb_cuda_fail(e, "cudaMemsetAsync", __FILE__, __LINE__);
    if (rc == PCB_OK)
        rc = pcb_cuda_finite_copy(x->s->base.ref, t->a, t->batch * t->n * 3, PCB_NN_MAX_COORD,
                                  finite, st);
    for (int64_t b = 0; b < t->batch && rc == PCB_OK; b++)
        rc = build_one(x->s, b, st);
    if (rc == PCB_OK && (e = cudaEventCreateWithFlags(&x->last, cudaEventDisableTiming)) == cudaSuccess)
        e = cudaEventRecord(x->last, st);
    if (rc == PCB_OK && e != cudaSuccess)
        rc = pcb_cuda_fail(e, "nn cuda_bvh: index event", __FILE__, __LINE__);
    if (rc != PCB_OK) {
        bvh_index_release(x);
        return rc;
    }
    x->capacity = t->nq;
    x->last_stream = st;
    *state = x;
    return PCB_OK;
}

/* The queries copied in, the search (captured once a query count) replayed,
 * the answers copied out, on stream; after the earlier work on the index. */
static int bvh_index_query(void *state, const float *query, int64_t nq, pcb_result *out,
                           void *stream)
{
    bvh_index *x = (bvh_index *)state;
    bvh_state *s = x->s;
    cudaStream_t st = (cudaStream_t)stream;
    if (nq > x->capacity)
        return pcb_fail(PCB_EINVAL, "nn cuda_bvh index: %lld queries a cloud, built for at most "
                        "%lld", (long long)nq, (long long)x->capacity);
    if (pcb_cuda_capturing(st, NULL)) /* its search is a graph of its own, replayed */
        return pcb_fail(PCB_EUNSUPPORTED, "nn cuda_bvh index: a search cannot be captured in a "
                        "CUDA graph (the NN call can: it builds and searches in the capture)");
    if (st != x->last_stream)
        PCB_CUDA_TRY(cudaStreamWaitEvent(st, x->last, 0));
    if (nq != x->graph_nq) { /* a new count: the last search must be done with the old graph */
        if (s->exec)
            PCB_CUDA_TRY(cudaEventSynchronize(x->last));
        if (s->exec)
            cudaGraphExecDestroy(s->exec);
        if (s->graph)
            cudaGraphDestroy(s->graph);
        s->exec = NULL;
        s->graph = NULL;
        x->graph_nq = 0;
        s->base.task.nq = nq;
        int rc = capture(s, enqueue_compute, &s->graph, &s->exec);
        if (rc != PCB_OK)
            return rc;
        x->graph_nq = nq;
    }
    const int64_t batch = s->base.task.batch;
    int rc = pcb_cuda_finite_copy(s->base.qry, query, batch * nq * 3, PCB_NN_MAX_COORD,
                                  out->finite, st);
    if (rc != PCB_OK || (rc = replay_out(s, batch * nq, out, st)) != PCB_OK)
        return rc;
    PCB_CUDA_TRY(cudaEventRecord(x->last, st));
    x->last_stream = st;
    return PCB_OK;
}

static const pcb_index_ops bvh_index_ops = {bvh_index_build, bvh_index_query, bvh_index_release};

static int bvh_counters(void *state, pcb_counters *c)
{
    bvh_state *s = (bvh_state *)state;
    unsigned long long evals = 0;
    PCB_CUDA_TRY(cudaMemcpyAsync(&evals, s->evals, sizeof evals, cudaMemcpyDeviceToHost,
                                 s->base.ctx.stream));
    int rc = pcb_cuda_sync(&s->base.ctx);
    c->distance_evals = (int64_t)evals;
    return rc;
}

extern "C" const pcb_impl pcb_nn_cuda_bvh = {
    .name = "cuda_bvh",
    .problem = PCB_NN,
    .device = PCB_CUDA,
    .promise = {.exact = 1},
    .limits = {.max_n = 1 << 30, .max_batch = 65535},
    .cost = PCB_COST_INDEXED,
    .summary = "GPU BVH over Morton-sorted leaves of 8, built on the device; queries "
               "Morton-sorted, one thread each, from their home leaf, nearest box first",
    .available = pcb_cuda_available,
    .prepare = bvh_prepare,
    .compute = bvh_compute,
    .sync = nn_cuda_sync,
    .fetch = nn_cuda_fetch,
    .release = bvh_release,
    .counters = bvh_counters,
    .device_ms = nn_cuda_device_ms,
    .run_device = bvh_run_device,
    .device_index = &bvh_index_ops,
};
