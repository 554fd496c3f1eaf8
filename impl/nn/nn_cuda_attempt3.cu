/* nn_cuda_attempt3.cu - the slides' attempt 3: a reduced search space.
 * Approximate by design.
 *
 * prepare (the index build) splits each reference cloud into P wedges of
 * azimuth around the origin, atan2(y, x), P = 300 unless opt.partitions
 * says otherwise, and stores the points grouped by wedge (a counting sort
 * on the host) with their original indices and each wedge's offsets.
 * compute: one block of 512 threads per query; the block searches only the
 * query's own wedge (threads stride over it when it holds more than 512
 * points: the slide's kernel assumed at most 512) and reduces (distance,
 * index) in shared memory. A query whose wedge is empty searches the
 * nearest non-empty wedges instead: k-1 and k+1, then k-2 and k+2, ...
 * (both when both hold points), so every query gets a valid index.
 * The answer is the true nearest neighbour only when that lies in the
 * searched wedge(s): the validator reports the recall. */
#include <math.h>
#include <string.h>

#include "nn_cuda.cuh"

enum { A3_BLOCK = 512, A3_DEFAULT_PARTS = 300, A3_MAX_PARTS = 1 << 24 };

typedef struct {
    nn_cuda_base base;
    int parts;
    int32_t *orig;    /* device: grouped position -> index in the cloud, batch*n */
    int32_t *offsets; /* device: batch * (parts + 1) wedge starts */
} a3_state;

/* The wedge of (x, y); host and device use the same float formula. */
__host__ __device__ static inline int a3_wedge(float x, float y, int parts)
{
    float turn = (atan2f(y, x) + 3.14159265f) * 0.159154943f; /* [0, 1] */
    int k = (int)(turn * (float)parts);
    return k < 0 ? 0 : k >= parts ? parts - 1 : k;
}

__global__ void a3_nearest_in_wedge(const float *ref, const int32_t *orig, const int32_t *offsets,
                                    int parts, unsigned n, const float *qry, long long nq,
                                    int32_t *idx, float *dist2)
{
    __shared__ float sd[A3_BLOCK];
    __shared__ int si[A3_BLOCK];
    long long g = blockIdx.x, b = g / nq;
    const float *cloud = ref + (size_t)b * n * 3, *q = qry + 3 * g;
    const int32_t *off = offsets + (size_t)b * (parts + 1);
    float qx = q[0], qy = q[1], qz = q[2], best = INFINITY;
    int besti = INT_MAX, k = a3_wedge(qx, qy, parts);
    /* Every thread finds the same ranges: no barrier needed. The cloud has
     * a point, so some wedge within parts / 2 steps holds one. */
    int lo1 = off[k], hi1 = off[k + 1], lo2 = 0, hi2 = 0;
    for (int step = 1; lo1 == hi1 && step <= parts / 2; step++) {
        int before = (k + parts - step) % parts, after = (k + step) % parts;
        lo1 = off[before];
        hi1 = off[before + 1];
        if (after != before) {
            lo2 = off[after];
            hi2 = off[after + 1];
        }
        if (lo1 == hi1) {
            lo1 = lo2;
            hi1 = hi2;
            lo2 = hi2 = 0;
        }
    }
    for (unsigned j = lo1 + threadIdx.x; j < (unsigned)hi1; j += A3_BLOCK)
        nn_consider(cloud, j, qx, qy, qz, &best, &besti);
    for (unsigned j = lo2 + threadIdx.x; j < (unsigned)hi2; j += A3_BLOCK)
        nn_consider(cloud, j, qx, qy, qz, &best, &besti);
    nn_block_min<A3_BLOCK>(sd, si, best, besti);
    if (threadIdx.x == 0) {
        idx[g] = orig[(size_t)b * n + si[0]];
        dist2[g] = sd[0];
    }
}

static void a3_release(void *state)
{
    a3_state *s = (a3_state *)state;
    if (!s)
        return;
    nn_cuda_base_free(&s->base);
    cudaFree(s->orig);
    cudaFree(s->offsets);
    free(s);
}

/* Group one cloud's points by wedge (stable counting sort). */
static void group_by_wedge(const float *xyz, int64_t n, int parts, int32_t *wedge,
                           int32_t *offsets, float *grouped, int32_t *orig)
{
    memset(offsets, 0, (size_t)(parts + 1) * sizeof *offsets);
    for (int64_t i = 0; i < n; i++) {
        wedge[i] = a3_wedge(xyz[3 * i], xyz[3 * i + 1], parts);
        offsets[wedge[i] + 1]++;
    }
    for (int k = 0; k < parts; k++)
        offsets[k + 1] += offsets[k];
    for (int64_t i = 0; i < n; i++) {
        int32_t at = offsets[wedge[i]]++;
        memcpy(grouped + 3 * (int64_t)at, xyz + 3 * i, 3 * sizeof(float));
        orig[at] = (int32_t)i;
    }
    /* The fill moved each start to the next wedge's start: shift back. */
    for (int k = parts; k > 0; k--)
        offsets[k] = offsets[k - 1];
    offsets[0] = 0;
}

static int upload_groups(a3_state *s)
{
    const pcb_task *t = &s->base.task;
    size_t refs = (size_t)(t->batch * t->n), offs = (size_t)t->batch * (size_t)(s->parts + 1);
    float *grouped = (float *)malloc(refs * 3 * sizeof(float));
    int32_t *orig = (int32_t *)malloc(refs * sizeof(int32_t));
    int32_t *offsets = (int32_t *)malloc(offs * sizeof(int32_t));
    int32_t *wedge = (int32_t *)malloc((size_t)t->n * sizeof(int32_t));
    int rc = PCB_OK;
    if (!grouped || !orig || !offsets || !wedge) {
        rc = pcb_fail(PCB_ENOMEM, "nn cuda_attempt3: no host memory to group the points");
    } else {
        for (int64_t b = 0; b < t->batch; b++)
            group_by_wedge(t->a + b * t->n * 3, t->n, s->parts, wedge,
                           offsets + b * (s->parts + 1), grouped + b * t->n * 3,
                           orig + b * t->n);
        cudaError_t err;
        cudaStream_t stream = s->base.ctx.stream;
        if ((err = cudaMalloc((void **)&s->base.ref, refs * 3 * sizeof(float))) != cudaSuccess ||
            (err = cudaMalloc((void **)&s->orig, refs * sizeof(int32_t))) != cudaSuccess ||
            (err = cudaMalloc((void **)&s->offsets, offs * sizeof(int32_t))) != cudaSuccess ||
            (err = cudaMemcpyAsync(s->base.ref, grouped, refs * 3 * sizeof(float),
                                   cudaMemcpyHostToDevice, stream)) != cudaSuccess ||
            (err = cudaMemcpyAsync(s->orig, orig, refs * sizeof(int32_t), cudaMemcpyHostToDevice,
                                   stream)) != cudaSuccess ||
            (err = cudaMemcpyAsync(s->offsets, offsets, offs * sizeof(int32_t),
                                   cudaMemcpyHostToDevice, stream)) != cudaSuccess ||
            (err = cudaStreamSynchronize(stream)) != cudaSuccess)
            rc = pcb_cuda_fail(err, "upload of the grouped cloud", __FILE__, __LINE__);
    }
    free(grouped);
    free(orig);
    free(offsets);
    free(wedge);
    return rc;
}

static int a3_prepare(const pcb_task *t, void **state)
{
    int parts = t->opt.partitions > 0 ? t->opt.partitions : A3_DEFAULT_PARTS;
    if (parts > A3_MAX_PARTS)
        return pcb_fail(PCB_EUNSUPPORTED, "nn cuda_attempt3: %d partitions exceed its limit of %d",
                        parts, A3_MAX_PARTS);
    if (t->batch * t->nq > INT_MAX)
        return pcb_fail(PCB_EUNSUPPORTED,
                        "nn cuda_attempt3: batch x queries = %lld exceeds one block per query "
                        "(%d blocks at most)",
                        (long long)(t->batch * t->nq), INT_MAX);
    a3_state *s = (a3_state *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "nn cuda_attempt3: out of memory");
    s->parts = parts;
    int rc = nn_cuda_base_init(&s->base, t, "cuda_attempt3", 0);
    if (rc == PCB_OK)
        rc = upload_groups(s);
    if (rc != PCB_OK) {
        a3_release(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static int a3_compute(void *state)
{
    a3_state *s = (a3_state *)state;
    const pcb_task *t = &s->base.task;
    int rc = pcb_cuda_begin(&s->base.ctx);
    if (rc != PCB_OK)
        return rc;
    a3_nearest_in_wedge<<<(unsigned)(t->batch * t->nq), A3_BLOCK, 0, s->base.ctx.stream>>>(
        s->base.ref, s->orig, s->offsets, s->parts, (unsigned)t->n, s->base.qry, t->nq,
        s->base.idx, s->base.dist2);
    PCB_CUDA_LAUNCHED("a3_nearest_in_wedge");
    return pcb_cuda_end(&s->base.ctx);
}

extern "C" const pcb_impl pcb_nn_cuda_attempt3 = {
    .name = "cuda_attempt3",
    .problem = PCB_NN,
    .device = PCB_CUDA,
    .cost = PCB_COST_ALL_PAIRS,
    .summary = "slides' attempt 3: azimuth wedges (300), a block of 512 per query (approximate)",
    .available = pcb_cuda_available,
    .prepare = a3_prepare,
    .compute = a3_compute,
    .sync = nn_cuda_sync,
    .fetch = nn_cuda_fetch,
    .release = a3_release,
    .device_ms = nn_cuda_device_ms,
    .run_device = NULL, /* host arrays only */
};
