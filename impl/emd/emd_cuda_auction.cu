/* emd_cuda_auction.cu - certified EMD on the GPU: an eps-scaling Jacobi
 * auction, one block of 32 warps per pair (pairs of a batch in parallel;
 * where the batch leaves SMs idle, a cluster of up to 8 blocks a pair, the
 * team below), costs recomputed from the coordinates at every look (no
 * n x n buffer). The
 * rules (bids, keys, phases, the certificate that stops it) are in
 * emd_cuda_auction.h; tests/auction_replay.h replays them on the CPU.
 *
 * A round: every unassigned bidder finds its least two c_ij + p_j (a warp
 * each); an atomic max per object keeps the best key; after a barrier each
 * bidder reads the key of its object, the winner raises the price, evicts
 * the owner and clears the key; the losers and the evicted form the next
 * list. A lone bidder always wins, so warp 0 runs chains of one-bidder
 * rounds by itself. Up to n = 65,535 a phase's last few bidders are placed
 * by shortest augmenting paths instead (the finish, emd_cuda_auction.h).
 *
 * A bidder first looks into its candidate cache (128 objects and a bound,
 * see emd_cuda_auction.h): when the cache proves its least two, that is the
 * bid, at 4 costs a lane instead of n / 32. Otherwise the cache is rebuilt
 * by a float-only scan of B (by the warp, or by the whole block when few
 * bidders missed) and looked into again. Near-ties the bound cannot split
 * (duplicates), and n > 65535 (16-bit slots), take an exact scan: there most
 * objects cannot beat the lane's second least, which a float test on
 * squared distances and a float copy of the prices rules out with a 1e-5
 * margin, and only the rest get the exact float cost and double sum. Either
 * way the bid is the one a full exact scan gives.
 *
 * Memory: for n <= SMEM_MAX_N the pair's whole state sits in shared memory
 * (48 bytes a point); above, in a global scratch area that stays in L2. For
 * n <= SMEM_A_MAX_N A's coordinates are copied beside it (a block rebuild's
 * every thread, and every look, reads its bidder's), and the finish's
 * settled objects are staged after them, as many as fit (48 bytes a point;
 * with the state in global memory, GLOBAL_STAGE at a time; see
 * stage_capacity). The caches (264 bytes a point) are in global memory.
 *
 * Each phase is a header of cuda_auction/, opening with its outline: the
 * state, a bidder's least two, its cache, block rebuilds, the team, the
 * dual ascent, the finish, a helper's life and the kernel; this file
 * includes them in that order (one compile unit) and holds the host side. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <cooperative_groups.h>

#include "cuda_util.h"
#include "emd.h"
#include "emd_cuda_auction.h"

namespace cg = cooperative_groups;

#include "cuda_auction/state.cuh"
#include "cuda_auction/least.cuh"
#include "cuda_auction/cache.cuh"
#include "cuda_auction/rebuild.cuh"
#include "cuda_auction/team.cuh"
#include "cuda_auction/ascent.cuh"
#include "cuda_auction/finish.cuh"
#include "cuda_auction/team_help.cuh"
#include "cuda_auction/kernel.cuh"

/* ---- device-resident runs: what the host computes from host clouds -------- */
extern "C" const pcb_impl pcb_emd_cuda_auction;
#define PAIR_THREADS 256
/* Coordinates beyond this read as 0 in device runs (float costs overflow
 * far above; the host path refuses nothing, its clouds are checked finite). */
#define DEVICE_MAX_COORD 1e18f

/* Block per pair: the clouds copied in (non-finite or huge coordinates as
 * 0) and the pair's cost bound and last eps, as pair_constants computes them
 * on the host (min and max are exact; the double sums run in its order). */
__global__ void pair_constants_kernel(int n, const float *a_in, const float *b_in, float *a,
                                      float *b, double eps_option, double *bound,
                                      double *floor_eps, int32_t *finite)
{
    __shared__ float lo[3][PAIR_THREADS], hi[3][PAIR_THREADS];
    const int64_t pair = blockIdx.x, base = pair * n * 3;
    const int tid = threadIdx.x;
    float l[3] = {INFINITY, INFINITY, INFINITY}, h[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int64_t k = tid; k < 2 * (int64_t)n; k += PAIR_THREADS) {
        const float *in = k < n ? a_in + base + 3 * k : b_in + base + 3 * (k - n);
        float *out = k < n ? a + base + 3 * k : b + base + 3 * (k - n);
        for (int c = 0; c < 3; c++) {
            const bool keep = fabsf(in[c]) <= DEVICE_MAX_COORD; /* NaN fails it too */
            const float v = keep ? in[c] : 0.0f;
            if (!keep && finite)
                *finite = 0;
            out[c] = v;
            l[c] = fminf(l[c], v);
            h[c] = fmaxf(h[c], v);
        }
    }
    for (int c = 0; c < 3; c++) {
        lo[c][tid] = l[c];
        hi[c][tid] = h[c];
    }
    __syncthreads();
    for (int w = PAIR_THREADS / 2; w > 0; w >>= 1) {
        if (tid < w)
            for (int c = 0; c < 3; c++) {
                lo[c][tid] = fminf(lo[c][tid], lo[c][tid + w]);
                hi[c][tid] = fmaxf(hi[c][tid], hi[c][tid + w]);
            }
        __syncthreads();
    }
    if (tid == 0) {
        double d2 = 0;
        for (int c = 0; c < 3; c++) {
            const double d = __dsub_rn((double)hi[c][0], (double)lo[c][0]);
            d2 = __dadd_rn(d2, __dmul_rn(d, d));
        }
        bound[pair] = __dsqrt_rn(d2);
        floor_eps[pair] = eps_option > 0 ? eps_option : __dmul_rn(PCB_CA_EPS_FLOOR, bound[pair]);
    }
}

/* The relative gap (P - D) / D of a certificate (D raised to 0). */
__host__ __device__ static double certificate_gap(double p, double d)
{
    d = d > 0 ? d : 0;
    return d > 0 ? (p - d) / d : p > 0 ? HUGE_VAL : 0;
}

/* Thread per pair: the mean matched cost in double, summed in
 * pcb_emd_mean_matched's order without contraction (bit for bit the host's
 * value), and the certificate's gap (infinite for a pair that did not
 * settle). */
__global__ void pair_results_kernel(int64_t batch, int n, const float *a, const float *b,
                                    const int32_t *match, const pair_stats *stats, double *value,
                                    double *bound)
{
    const int64_t pair = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (pair >= batch)
        return;
    if (value) {
        const float *pa = a + pair * n * 3, *pb = b + pair * n * 3;
        const int32_t *m = match + pair * n;
        double sum = 0;
        int64_t matched = 0;
        for (int i = 0; i < n; i++)
            if (m[i] >= 0) {
                const float *p = pa + 3 * i, *q = pb + 3 * (int64_t)m[i];
                const double dx = __dsub_rn((double)p[0], (double)q[0]),
                             dy = __dsub_rn((double)p[1], (double)q[1]),
                             dz = __dsub_rn((double)p[2], (double)q[2]);
                sum = __dadd_rn(sum, __dsqrt_rn(__dadd_rn(__dadd_rn(__dmul_rn(dx, dx),
                                                                    __dmul_rn(dy, dy)),
                                                          __dmul_rn(dz, dz))));
                matched++;
            }
        value[pair] = matched ? __ddiv_rn(sum, (double)matched) : 0.0;
    }
    if (bound)
        bound[pair] = stats[pair].stuck ? HUGE_VAL : certificate_gap(stats[pair].p, stats[pair].d);
}

/* The cold start's prices (pcb_ca_column_price), in two passes. First a
 * thread per object j of B, a block per (pair, tile of B), A read through
 * shared memory a tile at a time: m_j = min_i c_ij into start, and the
 * pair's greatest m_j by an atomic max on its bits (costs are not
 * negative, so their bits order like them; greatest starts at 0). */
#define COLUMN_THREADS 256
__global__ void column_least_kernel(int n, int tiles, const float *a, const float *b,
                                    double *start, unsigned *greatest)
{
    __shared__ float tile[3 * COLUMN_THREADS];
    const int64_t pair = blockIdx.x / tiles;
    const int j = (int)(blockIdx.x % tiles) * COLUMN_THREADS + threadIdx.x;
    const float *pa = a + pair * n * 3, *pb = b + pair * n * 3;
    const float bx = j < n ? pb[3 * j] : 0.0f, by = j < n ? pb[3 * j + 1] : 0.0f,
                bz = j < n ? pb[3 * j + 2] : 0.0f;
    float least = INFINITY;
    for (int i0 = 0; i0 < n; i0 += COLUMN_THREADS) {
        const int m = min(COLUMN_THREADS, n - i0);
        __syncthreads(); /* the last tile is read */
        for (int k = threadIdx.x; k < 3 * m; k += COLUMN_THREADS)
            tile[k] = pa[3 * (int64_t)i0 + k];
        __syncthreads();
        for (int i = 0; i < m; i++)
            least = fminf(least, pcb_ca_d2(tile[3 * i], tile[3 * i + 1], tile[3 * i + 2], bx, by,
                                           bz));
    }
    if (j < n) {
        const float m = sqrtf(least);
        start[pair * n + j] = m;
        atomicMax(&greatest[pair], __float_as_uint(m));
    }
}

/* ... then every price greatest - m_j (a thread a point of the batch). */
__global__ void column_shift_kernel(int64_t points, int n, double *start,
                                    const unsigned *greatest)
{
    const int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (k < points)
        start[k] = pcb_ca_column_price(__uint_as_float(greatest[k / n]), (float)start[k]);
}

typedef struct {
    pcb_task task;
    pcb_cuda_ctx ctx;
    float *a, *b;
    double *bound, *floor_eps, *price;
    double *start;      /* the cold start's prices (column_least_kernel) */
    unsigned *greatest; /* ... and each pair's greatest least cost, as bits */
    char *scratch; /* NULL when the state fits in shared memory */
    cache_row *cache_slot; /* NULL when n is too large for 16-bit slots */
    double *cache_bound;
    int32_t *match;
    pair_stats *stats, *host_stats;
    size_t smem;
    int ctas; /* blocks a pair (the team) */
    int fetched_stats;
    /* a host task's warm start: its inputs copied in, the outputs apart
     * (every compute starts from the same inputs) */
    double *warm_price, *warm_eps, *eps_out;
    int64_t *warm_budget, *budget_out;
} auction_state;

static void auction_release(void *state)
{
    auction_state *s = (auction_state *)state;
    if (!s)
        return;
    pcb_cuda_ctx_free(&s->ctx); /* waits for queued work first */
    cudaFree(s->a);
    cudaFree(s->b);
    cudaFree(s->bound);
    cudaFree(s->floor_eps);
    cudaFree(s->price);
    cudaFree(s->start);
    cudaFree(s->greatest);
    cudaFree(s->scratch);
    cudaFree(s->cache_slot);
    cudaFree(s->cache_bound);
    cudaFree(s->match);
    cudaFree(s->stats);
    cudaFree(s->warm_price);
    cudaFree(s->warm_eps);
    cudaFree(s->eps_out);
    cudaFree(s->warm_budget);
    cudaFree(s->budget_out);
    free(s->host_stats);
    free(s);
}

/* Per pair: the cost bound C and the last phase's eps. */
static void pair_constants(const pcb_task *t, double *bound, double *floor_eps)
{
    for (int64_t p = 0; p < t->batch; p++) {
        bound[p] = pcb_emd_cost_bound(t->a + p * t->n * 3, t->b + p * t->n * 3, t->n);
        floor_eps[p] = t->opt.eps > 0 ? t->opt.eps : PCB_CA_EPS_FLOOR * bound[p];
    }
}

typedef void (*auction_kernel_fn)(int, const float *, const float *, const double *,
                                  const double *, double, char *, cache_row *, double *, int32_t *,
                                  double *, pair_stats *, int, const double *, warm_io);

/* The kernel for the task's size, the warm one (its own registers) for a
 * task with a warm start. */
template <bool WARM> static auction_kernel_fn kernel_of(int64_t n)
{
    if (n <= SMEM_MAX_N) /* < PCB_CA_CACHE_MAX_N: caches */
        return n <= SMEM_A_MAX_N ? auction_kernel<true, true, true, WARM>
                                 : auction_kernel<true, true, false, WARM>;
    return n <= PCB_CA_CACHE_MAX_N ? auction_kernel<false, true, false, WARM>
                                   : auction_kernel<false, false, false, WARM>;
}

static auction_kernel_fn kernel_for(const auction_state *s, int warm)
{
    return warm ? kernel_of<true>(s->task.n) : kernel_of<false>(s->task.n);
}

/* Blocks a pair (the team, team_help): where bidders have caches, the most,
 * up to 8, whose clusters the GPU holds at once for the whole batch; 1
 * elsewhere. opt.emd_ctas (1 to 8; tuning and tests) forces it where the
 * GPU can run such clusters at all. */
static int choose_ctas(const auction_state *s)
{
    const pcb_task *t = &s->task;
    if (t->n > PCB_CA_CACHE_MAX_N)
        return 1;
    const int asked = t->opt.emd_ctas, forced = asked >= 1 && asked <= 8 ? asked : 0;
    for (int c = forced ? forced : 8; c > 1; c--) {
        cudaLaunchAttribute cluster;
        const cudaLaunchConfig_t cfg =
            pcb_cuda_cluster_launch(1, c, THREADS, s->smem, s->ctx.stream, &cluster);
        const int fit = pcb_cuda_clusters_fit(kernel_for(s, 0), &cfg);
        if (fit >= t->batch || (forced && fit > 0))
            return c;
        if (forced)
            break;
    }
    return 1;
}

/* Where the state is in global memory, what a team's finish needs besides
 * (team_stage): every pair's staged offers, then their counts. */
static size_t team_scratch(int64_t batch, int n)
{
    return (size_t)batch * (size_t)n * STAGE_BYTES + (size_t)batch * 2 * sizeof(int);
}

/* The kernel's static shared memory fits the STATIC_SMEM its layout leaves
 * (the work counts fill it to the last byte). */
static int statics_fit(auction_kernel_fn kernel)
{
    cudaFuncAttributes fa;
    const cudaError_t e = cudaFuncGetAttributes(&fa, kernel);
    if (e != cudaSuccess)
        return pcb_cuda_fail(e, "emd cuda_auction: kernel attributes", __FILE__, __LINE__);
    if (fa.sharedSizeBytes > STATIC_SMEM)
        return pcb_fail(PCB_EDEVICE,
                        "emd cuda_auction: the kernel's static shared memory (%zu bytes) "
                        "exceeds the %d bytes its layout leaves (STATIC_SMEM)",
                        (size_t)fa.sharedSizeBytes, STATIC_SMEM);
    return PCB_OK;
}

/* A host task's warm start onto the device (setup). */
static cudaError_t upload_warm(auction_state *s)
{
    const pcb_task *t = &s->task;
    const size_t points = (size_t)t->batch * (size_t)t->n, pairs = (size_t)t->batch;
    cudaError_t e = cudaMalloc((void **)&s->warm_price, points * sizeof(double));
    if (e == cudaSuccess) e = cudaMalloc((void **)&s->warm_eps, pairs * sizeof(double));
    if (e == cudaSuccess) e = cudaMalloc((void **)&s->eps_out, pairs * sizeof(double));
    if (e == cudaSuccess) e = cudaMemcpyAsync(s->warm_price, t->warm.price, points * sizeof(double), cudaMemcpyHostToDevice, s->ctx.stream);
    if (e == cudaSuccess) e = cudaMemcpyAsync(s->warm_eps, t->warm.eps, pairs * sizeof(double), cudaMemcpyHostToDevice, s->ctx.stream);
    if (e == cudaSuccess && t->warm.budget) e = cudaMalloc((void **)&s->warm_budget, pairs * sizeof(int64_t));
    if (e == cudaSuccess && t->warm.budget) e = cudaMalloc((void **)&s->budget_out, pairs * sizeof(int64_t));
    if (e == cudaSuccess && t->warm.budget) e = cudaMemcpyAsync(s->warm_budget, t->warm.budget, pairs * sizeof(int64_t), cudaMemcpyHostToDevice, s->ctx.stream);
    return e;
}

static int setup(auction_state *s)
{
    const pcb_task *t = &s->task;
    const size_t points = (size_t)t->batch * (size_t)t->n;
    double *host = (double *)malloc(2 * (size_t)t->batch * sizeof(double));
    if (!host || !(s->host_stats = (pair_stats *)malloc((size_t)t->batch * sizeof(pair_stats)))) {
        free(host);
        return pcb_fail(PCB_ENOMEM, "emd cuda_auction: out of host memory");
    }
    const int on_device = t->memory == PCB_MEM_DEVICE; /* each run copies its clouds in */
    if (!on_device)
        pair_constants(t, host, host + t->batch);
    int rc = pcb_cuda_ctx_init(&s->ctx);
    if (rc == PCB_OK)
        rc = statics_fit(kernel_for(s, 0));
    if (rc == PCB_OK)
        rc = statics_fit(kernel_for(s, 1));
    if (rc == PCB_OK) {
        cudaError_t e = cudaSuccess;
        const size_t pairs = (size_t)t->batch * sizeof(double);
        if (e == cudaSuccess) e = cudaMalloc((void **)&s->a, points * 3 * sizeof(float));
        if (e == cudaSuccess) e = cudaMalloc((void **)&s->b, points * 3 * sizeof(float));
        if (e == cudaSuccess) e = cudaMalloc((void **)&s->bound, pairs);
        if (e == cudaSuccess) e = cudaMalloc((void **)&s->floor_eps, pairs);
        if (e == cudaSuccess) e = cudaMalloc((void **)&s->price, points * sizeof(double));
        if (e == cudaSuccess) e = cudaMalloc((void **)&s->start, points * sizeof(double));
        if (e == cudaSuccess) e = cudaMalloc((void **)&s->greatest, (size_t)t->batch * sizeof(unsigned));
        if (e == cudaSuccess) e = cudaMalloc((void **)&s->match, points * sizeof(int32_t));
        if (e == cudaSuccess) e = cudaMalloc((void **)&s->stats, (size_t)t->batch * sizeof(pair_stats));
        /* never lowered: a cached state sized for more launches it too */
        if (e == cudaSuccess && s->smem &&
            (pcb_cuda_smem_at_least((const void *)kernel_for(s, 0), s->smem) != PCB_OK ||
             pcb_cuda_smem_at_least((const void *)kernel_for(s, 1), s->smem) != PCB_OK))
            e = cudaErrorInvalidValue;
        s->ctas = e == cudaSuccess ? choose_ctas(s) : 1;
        if (e == cudaSuccess && t->n > SMEM_MAX_N) /* the state; a team's finish stages too */
            e = cudaMalloc((void **)&s->scratch,
                           points * STATE_BYTES + (s->ctas > 1 ? team_scratch(t->batch, t->n) : 0));
        if (e == cudaSuccess && t->n <= PCB_CA_CACHE_MAX_N)
            e = cudaMalloc((void **)&s->cache_slot, points * 32 * sizeof(cache_row));
        if (e == cudaSuccess && t->n <= PCB_CA_CACHE_MAX_N)
            e = cudaMalloc((void **)&s->cache_bound, points * sizeof(double));
        if (e == cudaSuccess && !on_device) e = cudaMemcpyAsync(s->a, t->a, points * 3 * sizeof(float), cudaMemcpyHostToDevice, s->ctx.stream);
        if (e == cudaSuccess && !on_device) e = cudaMemcpyAsync(s->b, t->b, points * 3 * sizeof(float), cudaMemcpyHostToDevice, s->ctx.stream);
        if (e == cudaSuccess && !on_device) e = cudaMemcpyAsync(s->bound, host, pairs, cudaMemcpyHostToDevice, s->ctx.stream);
        if (e == cudaSuccess && !on_device) e = cudaMemcpyAsync(s->floor_eps, host + t->batch, pairs, cudaMemcpyHostToDevice, s->ctx.stream);
        if (e == cudaSuccess && !on_device && pcb_task_warm(t)) e = upload_warm(s);
        rc = e == cudaSuccess ? pcb_cuda_sync(&s->ctx)
                              : pcb_cuda_fail(e, "emd cuda_auction: setup", __FILE__, __LINE__);
    }
    free(host); /* the copies were synchronized (or failed) */
    return rc;
}

static int auction_prepare(const pcb_task *t, void **state)
{
    const int on_device = t->memory == PCB_MEM_DEVICE;
    if (on_device && t->opt.eps > 0)
        return pcb_fail(PCB_EUNSUPPORTED, "emd cuda_auction: a device run stops on max_gap; an "
                        "eps needs the clouds on the host to be checked");
    int rc = on_device ? PCB_OK : pcb_emd_auction_check_eps(t, "cuda_auction");
    if (rc != PCB_OK)
        return rc;
    auction_state *s = (auction_state *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "emd cuda_auction: out of memory");
    s->task = *t;
    s->smem = shared_area((int)t->n) + (size_t)stage_capacity((int)t->n) * STAGE_BYTES;
    rc = setup(s);
    if (rc != PCB_OK) {
        auction_release(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static double stop_target(const pcb_task *t)
{
    return pcb_ca_stop_target(t->opt.eps, t->opt.max_gap);
}

/* The auction, queued on stream, its matching and prices into match and
 * price, from a warm start where warm has one; cold pairs from the column
 * reduction (pcb_ca_column_price), or from 0 (opt.emd_start -1). */
static int enqueue(auction_state *s, cudaStream_t stream, int32_t *match, double *price,
                   warm_io warm)
{
    const pcb_task *t = &s->task;
    const double *cold = NULL;
    if (pcb_ca_column_start(&t->opt)) {
        const int tiles = (int)((t->n + COLUMN_THREADS - 1) / COLUMN_THREADS);
        const int64_t points = t->batch * t->n;
        PCB_CUDA_TRY(cudaMemsetAsync(s->greatest, 0, (size_t)t->batch * sizeof(unsigned), stream));
        column_least_kernel<<<(unsigned)(t->batch * tiles), COLUMN_THREADS, 0, stream>>>(
            (int)t->n, tiles, s->a, s->b, s->start, s->greatest);
        PCB_CUDA_LAUNCHED("column_least_kernel");
        column_shift_kernel<<<(unsigned)((points + 255) / 256), 256, 0, stream>>>(
            points, (int)t->n, s->start, s->greatest);
        PCB_CUDA_LAUNCHED("column_shift_kernel");
        cold = s->start;
    }
    cudaLaunchAttribute cluster;
    const cudaLaunchConfig_t cfg =
        pcb_cuda_cluster_launch((unsigned)t->batch, s->ctas, THREADS, s->smem, stream, &cluster);
    PCB_CUDA_TRY(cudaLaunchKernelEx(&cfg, kernel_for(s, warm.price_in != NULL), (int)t->n,
                                    (const float *)s->a,
                                    (const float *)s->b, (const double *)s->bound,
                                    (const double *)s->floor_eps, stop_target(t), s->scratch,
                                    s->cache_slot, s->cache_bound, match, price, s->stats,
                                    s->ctas, cold, warm));
    PCB_CUDA_LAUNCHED("auction_kernel");
    return PCB_OK;
}

static int auction_compute(void *state)
{
    auction_state *s = (auction_state *)state;
    s->fetched_stats = 0;
    int rc = pcb_cuda_begin(&s->ctx);
    const warm_io warm = {s->warm_price, s->warm_eps, s->warm_budget, s->eps_out, s->budget_out};
    if (rc == PCB_OK && (rc = enqueue(s, s->ctx.stream, s->match, s->price, warm)) == PCB_OK)
        rc = pcb_cuda_end(&s->ctx);
    return rc;
}

static int auction_sync(void *state)
{
    return pcb_cuda_sync(&((auction_state *)state)->ctx);
}

static int fetch_stats(auction_state *s)
{
    const pcb_task *t = &s->task;
    if (s->fetched_stats)
        return PCB_OK;
    PCB_CUDA_TRY(cudaMemcpyAsync(s->host_stats, s->stats, (size_t)t->batch * sizeof(pair_stats),
                                 cudaMemcpyDeviceToHost, s->ctx.stream));
    int rc = pcb_cuda_sync(&s->ctx);
    if (rc != PCB_OK)
        return rc;
    s->fetched_stats = 1;
    for (int64_t p = 0; p < t->batch; p++)
        if (s->host_stats[p].stuck)
            return pcb_fail(PCB_EDEVICE,
                            "emd cuda_auction: pair %lld did not settle within %d x n rounds "
                            "of a phase",
                            (long long)p, MAX_ROUNDS_PER_N);
    return PCB_OK;
}

static int auction_fetch(void *state, pcb_result *out)
{
    auction_state *s = (auction_state *)state;
    const pcb_task *t = &s->task;
    const size_t points = (size_t)t->batch * (size_t)t->n;
    int rc = fetch_stats(s);
    if (rc != PCB_OK)
        return rc;
    PCB_CUDA_TRY(cudaMemcpyAsync(out->index, s->match, points * sizeof(int32_t),
                                 cudaMemcpyDeviceToHost, s->ctx.stream));
    if (out->price)
        PCB_CUDA_TRY(cudaMemcpyAsync(out->price, s->price, points * sizeof(double),
                                     cudaMemcpyDeviceToHost, s->ctx.stream));
    if (s->warm_price) { /* the warm start's outputs, for the next call */
        PCB_CUDA_TRY(cudaMemcpyAsync(t->warm.price, s->price, points * sizeof(double),
                                     cudaMemcpyDeviceToHost, s->ctx.stream));
        PCB_CUDA_TRY(cudaMemcpyAsync(t->warm.eps, s->eps_out, (size_t)t->batch * sizeof(double),
                                     cudaMemcpyDeviceToHost, s->ctx.stream));
    }
    if (s->budget_out)
        PCB_CUDA_TRY(cudaMemcpyAsync(t->warm.budget, s->budget_out,
                                     (size_t)t->batch * sizeof(int64_t), cudaMemcpyDeviceToHost,
                                     s->ctx.stream));
    if ((rc = pcb_cuda_sync(&s->ctx)) != PCB_OK)
        return rc;
    out->has_price = out->price != NULL;
    for (int64_t p = 0; out->bound && p < t->batch; p++)
        out->bound[p] = certificate_gap(s->host_stats[p].p, s->host_stats[p].d);
    if (out->value)
        for (int64_t p = 0; p < t->batch; p++)
            out->value[p] = pcb_emd_mean_matched(t->a + p * t->n * 3, t->b + p * t->n * 3, t->n,
                                                 out->index + p * t->n, NULL);
    return PCB_OK;
}

static int auction_counters(void *state, pcb_counters *c)
{
    auction_state *s = (auction_state *)state;
    const pcb_task *t = &s->task;
    int rc = fetch_stats(s);
    if (rc != PCB_OK)
        return rc;
    c->bids = c->iterations = c->distance_evals = 0;
    for (int64_t p = 0; p < t->batch; p++) {
        c->bids += s->host_stats[p].bids;
        c->iterations += s->host_stats[p].phases;
        /* a scan looks at all of B, a cache look at 32 x 4 objects (all when fewer) */
        c->distance_evals += (int64_t)s->host_stats[p].scans * t->n +
                             (int64_t)s->host_stats[p].checks * pcb_ca_cache_evals(t->n) +
                             (int64_t)s->host_stats[p].finish_evals;
    }
    return PCB_OK;
}

/* A device-resident run: the cached state's buffers, the caller's clouds
 * copied in with the pair constants computed beside them, the matching and
 * prices written straight into the caller's arrays, then value and bound,
 * all on the caller's stream. A pair that did not settle (the guard of
 * fetch's PCB_EDEVICE, which cannot be waited for here) is left at -1
 * with an infinite bound. */
static int auction_device(void *state, const pcb_task *t, pcb_result *out, cudaStream_t st)
{
    auction_state *s = (auction_state *)state;
    const unsigned batch = (unsigned)t->batch;
    pair_constants_kernel<<<batch, PAIR_THREADS, 0, st>>>((int)t->n, t->a, t->b, s->a, s->b,
                                                          t->opt.eps, s->bound, s->floor_eps,
                                                          out->finite);
    PCB_CUDA_LAUNCHED("pair_constants_kernel");
    /* a warm start's arrays are read and written in place */
    const warm_io warm = {t->warm.price, t->warm.eps, t->warm.budget, t->warm.eps,
                          t->warm.budget};
    double *price = t->warm.price ? t->warm.price : out->price ? out->price : s->price;
    int rc = enqueue(s, st, out->index, price, warm);
    if (rc != PCB_OK)
        return rc;
    if (t->warm.price && out->price && out->price != t->warm.price)
        PCB_CUDA_TRY(cudaMemcpyAsync(out->price, price, (size_t)t->batch * (size_t)t->n *
                                     sizeof(double), cudaMemcpyDeviceToDevice, st));
    if (out->value || out->bound) {
        pair_results_kernel<<<(batch + 127) / 128, 128, 0, st>>>(
            t->batch, (int)t->n, s->a, s->b, out->index, s->stats, out->value, out->bound);
        PCB_CUDA_LAUNCHED("pair_results_kernel");
    }
    out->has_price = out->price != NULL;
    return PCB_OK;
}

static int auction_run_device(const pcb_task *t, pcb_result *out)
{
    static const pcb_cuda_maker maker = {&pcb_emd_cuda_auction, auction_prepare, auction_release,
                                         auction_device};
    return pcb_cuda_run_cached(&maker, t, out);
}

static int auction_device_ms(void *state, double *ms)
{
    return pcb_cuda_elapsed_ms(&((auction_state *)state)->ctx, ms);
}

extern "C" const pcb_impl pcb_emd_cuda_auction = {
    .name = "cuda_auction",
    .problem = PCB_EMD,
    .device = PCB_CUDA,
    .promise = {.max_gap = PCB_CA_MAX_GAP},
    .limits = {.max_n = INT32_MAX / 3, .max_m = 0, .max_batch = INT32_MAX, .max_k = 0,
               .best_max_n = 0}, /* int indexing */
    .cost = PCB_COST_GPU_PAIRS,
    .gap_option = 1,
    .summary = "eps-scaling Jacobi auction, a block per pair (a cluster of blocks where SMs "
               "are idle), costs on the fly, any n; stops "
               "when its prices certify 0.1% (or the task's max_gap; or at --eps); returns "
               "prices",
    .available = pcb_cuda_available_clusters,
    .prepare = auction_prepare,
    .compute = auction_compute,
    .sync = auction_sync,
    .fetch = auction_fetch,
    .release = auction_release,
    .counters = auction_counters,
    .device_ms = auction_device_ms,
    .run_device = auction_run_device,
    .warm_start = 1,
};
