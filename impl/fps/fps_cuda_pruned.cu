/* fps_cuda_pruned.cu - exact FPS on the GPU that takes many provably-next
 * samples a round and skips what a sample cannot change; the canonical
 * sequence, bit for bit dp's.
 *
 * compute runs on the device. Clouds of at most FPS_DENSE_MAX_N points take
 * one kernel, a block of four warps a cloud running dp on points held in
 * registers (fps_sample_dense); larger ones:
 *   1. a spatial order (Morton's; for the run kernel's clouds no flatter
 *      than 1 : 4 Hilbert's, fps_runs_hilbert): for small clouds the run
 *      kernel takes, one block a cloud computes the codes and sorts them (a
 *      stable block radix sort), and another beside it (or the same one,
 *      first, where the GPU lacks SMs for the pairs) takes the cloud's
 *      first samples by dp over all its points (the opening:
 *      fps_runs_opening, open_cloud);
 *      otherwise a block a cloud computes its bounding box and codes keyed
 *      by the cloud, and one CUB radix sort orders the batch (stable: equal
 *      codes keep index order);
 *   2. the sampler, a round at a time (fps_rounds.h: why each round's picks
 *      are dp's). A round: every warp applies the last round's samples to
 *      the points they can reach, gathers its points above the threshold
 *      (the candidates) and posts its farthest point; one barrier; the
 *      taking block picks among the candidates in waves (take_waves); one
 *      more barrier, or, where a block only takes, a word it publishes
 *      (the first wave's picks as soon as they are decided, the owners
 *      lowering their runs by them while the later waves run). Two samplers:
 *        - the run kernel (fps_runs_take), a cloud spread over a cluster of
 *          up to 16 blocks: owner threads hold runs of sorted points in
 *          shared memory (no reduction across lanes in the update); block
 *          0 takes the samples, its last warp, which owns nothing,
 *          coordinating the rounds (a taking block that owns no points,
 *          where the batch still fits with it);
 *        - the bucket kernel, any cloud, a block each: the CPU `pruned`'s
 *          layout (fps_bucket.h: buckets of 32 slots, groups of buckets,
 *          boxes and farthest keys), groups, buckets and points in shared
 *          memory as far as they fit (the rest in global memory, which L2
 *          holds); warps own groups, lanes test buckets, a warp updates a
 *          bucket's 32 minima and reduces its new key.
 *   3. the distinct rule (cuda_pruned/distinct.cuh): the samplers keep
 *      chosen points as candidates at distance 0 (the old rule), so a
 *      sequence that repeats gets its tail rewritten with the unchosen
 *      indices in increasing order.
 * The CPU replay in tests/fps_rounds_replay.h takes the same rounds with the
 * same tests: the tests require the kernel's counts of distances and rounds
 * to equal it.
 *
 * Each phase is a header of cuda_pruned/, opening with its outline: codes
 * (step 1), rounds and take (step 2's owners and taker), then the three
 * samplers, then the distinct rule; this file includes them in that order
 * (one compile unit) and holds the dispatch. */
#include <cooperative_groups.h>
#include <float.h>
#include <limits.h>

#include <cub/cub.cuh>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <type_traits>

#include "cuda_util.h"
#include "fps_rounds.h"

namespace cg = cooperative_groups;

enum {
    CODE_THREADS = 1024,
    CODE_BITS = 3 * FPS_MORTON_BITS,
    BATCH = 4 /* buckets of one group updated together (loads in flight) */
};

/* Where a cloud's arrays are; the kernel points each either into shared or
 * into global memory. */
typedef struct {
    int n, slots, buckets, groups, group_size, m, start;
    int run, ctas;                              /* the run kernel's slots a thread, blocks a cloud */
    int taker;                                  /* 1: its block 0 owns no points, only takes */
    int owners;                                 /* the run kernel's owner threads a block: its
                                                   blockDim less the coordinating warp, passed
                                                   since the kernel measured faster so */
    int smem_groups, smem_buckets, smem_points; /* 1: that level in shared memory */
    const float *xyz;                           /* batch x n x 3 */
    uint32_t *order;                            /* batch x n: sorted index within its cloud */
    float4 *pts;                                /* batch x slots: x, y, z, index bits */
    float *mind;                                /* batch x slots */
    float4 *bbox, *bbest;                       /* batch x buckets x 2 (lo, hi); x 1 */
    unsigned long long *bkey;
    float4 *gbox, *gbest;
    unsigned long long *gkey;
    float *runs;                                /* the run kernel's runs in global memory:
                                                   blocks x T x run x 5 words; NULL: shared */
    int opening;                                /* the run kernel's first samples, taken
                                                   where its codes are sorted
                                                   (fps_runs_opening) */
    int opening_apart;                          /* 1: in a block of its own beside the
                                                   sort's, 0: in the sort's, before it */
    float *opened;                              /* batch x n: the minima they leave, by index */
    int32_t *out;                               /* batch x m */
    unsigned long long *evals;                  /* distances computed, all clouds */
    unsigned long long *rounds;                 /* rounds, all clouds */
} fps_args;

#include "cuda_pruned/codes.cuh"
#include "cuda_pruned/rounds.cuh"
#include "cuda_pruned/take.cuh"
#include "cuda_pruned/sample_buckets.cuh"
#include "cuda_pruned/sample_runs.cuh"
#include "cuda_pruned/sample_dense.cuh"
#include "cuda_pruned/distinct.cuh"

/* ---- host side --------------------------------------------------------------- */
extern "C" const pcb_impl pcb_fps_cuda_pruned;
typedef struct {
    pcb_task task;
    pcb_cuda_ctx ctx;
    fps_args args;
    int warps;   /* the bucket sampler's block: 16 warps (8 or 32 for tuning) */
    int runs;    /* the run sampler's threads a block (owners and the coordinator), or 0: buckets */
    int global_runs; /* 1: its runs in global memory */
    int dense;   /* small clouds: slots a thread of the block-a-cloud kernel (1, 2, 4, 8), or 0 */
    size_t smem; /* dynamic shared memory of the sampler */
    int end_bit; /* sort key bits */
    void *arena, *temp;
    size_t temp_bytes;
    float *xyz;
    unsigned long long *keys[2];
    uint32_t *vals[2];
    uint32_t *flags; /* the distinct rule's bit sets, a cloud's (n + 31) / 32 words */
    int32_t *lengths; /* a ragged run's lengths (a device run's as read), or NULL */
    int32_t *used;    /* their place in the arena */
} pruned_state;

static void pruned_release(void *state)
{
    pruned_state *s = (pruned_state *)state;
    if (!s)
        return;
    pcb_cuda_ctx_free(&s->ctx);
    cudaFree(s->arena);
    free(s);
}

/* The block-a-cloud kernel's slots a thread for n points, or 0: the samplers.
 * opt.fps_dense -1 turns it off, and forcing a sampler's layout
 * (opt.fps_warps, opt.fps_ctas) does too. */
static int dense_slots(const pcb_options *o, int64_t n)
{
    if (o->fps_dense < 0 || o->fps_warps || o->fps_ctas || n > FPS_DENSE_MAX_N)
        return 0;
    return n <= 128 ? 1 : n <= 256 ? 2 : n <= 512 ? 4 : 8;
}

/* Warps a block: 16 (the update spreads over them; the round's picks are one
 * warp's). opt.fps_warps (8, 16, 32) overrides, for tuning and tests. */
static int warps_for(const pcb_options *o)
{
    const int w = o->fps_warps;
    return w == 8 || w == 16 || w == 32 ? w : 16;
}

/* Shared memory: groups first (tested every step), then buckets, then the
 * points, each level whole or not at all. */
static void place(fps_args *a, size_t limit, size_t *used)
{
    const size_t group = (size_t)a->groups * (32 + 16 + 8), bucket = (size_t)a->buckets * (32 + 16 + 8),
                 points = (size_t)a->slots * (16 + 4);
    size_t u = 64; /* the carve alignment's worst case */
    a->smem_groups = u + group <= limit;
    u += a->smem_groups ? group + 48 : 0;
    a->smem_buckets = a->smem_groups && u + bucket <= limit;
    u += a->smem_buckets ? bucket + 48 : 0;
    a->smem_points = a->smem_buckets && u + points <= limit;
    u += a->smem_points ? points + 32 : 0;
    *used = u;
}

/* The run kernel's owner blocks a cloud as opt.fps_ctas forces them (1, 2,
 * 4, 8, 16; for tuning and tests), or 0: the most (up to 8, or 16 where 8
 * cannot take the cloud) whose clusters the GPU holds at once for the whole
 * batch. Below 16 a taking block joins them where the clusters with it
 * still fit the batch at once. */
static int ctas_forced(const pcb_options *o)
{
    const int c = o->fps_ctas;
    return c >= 1 && c <= FPS_RUNS_CTAS_MAX && !(c & (c - 1)) ? c : 0;
}

/* The run kernel over a cluster of ctas blocks a cloud, the first of them a
 * taking block where taker is 1, its runs in shared memory or not: its
 * runs, threads and shared memory, into s. Returns 1, or 0 where a block's
 * shared memory cannot hold them. */
static int runs_size(pruned_state *s, int ctas, int taker, int shared, size_t optin)
{
    fps_args *a = &s->args;
    const int owner_blocks = ctas - taker, owner_warps = fps_run_owners(a->n, owner_blocks) / 32,
              warps = (owner_warps + owner_blocks - 1) / owner_blocks;
    a->ctas = ctas;
    a->taker = taker;
    a->run = fps_run_length(a->n, owner_blocks);
    a->owners = 32 * warps;
    s->runs = a->owners + 32; /* and the coordinator */
    s->global_runs = !shared;
    s->smem = (shared ? (size_t)a->run * 32 * warps * RUN_BYTES : 0) +
              (size_t)warps * ctas * POST_BYTES;
    return s->smem + sizeof(round_state) <= optin;
}

typedef void (*runs_kernel_fn)(fps_args);

/* The run kernel with its runs in global memory or in shared memory. */
static runs_kernel_fn runs_kernel_of(int global_runs, int taker)
{
    return global_runs ? taker ? fps_sample_runs<true, true> : fps_sample_runs<true, false>
           : taker     ? fps_sample_runs<false, true>
                       : fps_sample_runs<false, false>;
}

static runs_kernel_fn runs_kernel(const pruned_state *s)
{
    return runs_kernel_of(s->global_runs, s->args.taker);
}


/* A ragged host task's upload: the clouds as a device run's copy-in makes
 * them (each padding slot a copy of the cloud's start point, an empty cloud
 * zeros; pcb_cuda_ragged_copy), made here on the host, and the lengths the
 * distinct pass reads. */
static int upload_ragged(pruned_state *s, const pcb_task *t)
{
    const size_t count = (size_t)(t->batch * t->n) * 3;
    float *padded = (float *)malloc(count * sizeof(float));
    int32_t *lengths = (int32_t *)malloc((size_t)t->batch * sizeof(int32_t));
    if (!padded || !lengths) {
        free(padded), free(lengths);
        return pcb_fail(PCB_ENOMEM, "fps cuda_pruned: out of memory");
    }
    for (int64_t c = 0; c < t->batch; c++) {
        const int64_t len = t->lengths_a[c];
        const float *src = t->a + c * t->n * 3;
        float *dst = padded + c * t->n * 3;
        lengths[c] = (int32_t)len;
        memcpy(dst, src, (size_t)len * 3 * sizeof(float));
        for (int64_t i = len; i < t->n; i++)
            for (int k = 0; k < 3; k++)
                dst[i * 3 + k] = len > 0 ? src[t->start * 3 + k] : 0.0f;
    }
    cudaError_t e = cudaMemcpyAsync(s->xyz, padded, count * sizeof(float),
                                    cudaMemcpyHostToDevice, s->ctx.stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(s->used, lengths, (size_t)t->batch * sizeof(int32_t),
                            cudaMemcpyHostToDevice, s->ctx.stream);
    int rc = e == cudaSuccess ? pcb_cuda_sync(&s->ctx)
                              : pcb_cuda_fail(e, "fps cuda_pruned: upload", __FILE__, __LINE__);
    free(padded), free(lengths);
    s->lengths = s->used; /* for every compute of this state */
    return rc;
}
/* The run kernel's launch for clouds clouds, a cluster of args.ctas blocks
 * each (cluster: the attribute that says so, which cfg points to). */
static cudaLaunchConfig_t runs_launch(const pruned_state *s, unsigned clouds,
                                      cudaLaunchAttribute *cluster)
{
    return pcb_cuda_cluster_launch(clouds, s->args.ctas, (unsigned)s->runs, s->smem,
                                   s->ctx.stream, cluster);
}

static int setup(pruned_state *s)
{
    const pcb_task *t = &s->task;
    fps_args *a = &s->args;
    int rc = pcb_cuda_ctx_init(&s->ctx);
    if (rc != PCB_OK)
        return rc;
    int dev = 0, optin = 0;
    PCB_CUDA_TRY(cudaGetDevice(&dev));
    PCB_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    const size_t statics = sizeof(round_state) + (size_t)s->warps * (8 + 16); /* and the posts */
    const void *kernel = s->warps == 8    ? (const void *)fps_sample<8>
                         : s->warps == 16 ? (const void *)fps_sample<16>
                                          : (const void *)fps_sample<32>;
    /* Runs: x, y, z, minimum and a 32-bit index a slot, if the cloud fits;
     * its owner warps spread over a cluster of blocks, fewer where the GPU
     * cannot hold a cluster that size. */
    if (s->runs) {
        const int forced = ctas_forced(&s->task.opt);
        int chosen = 0; /* blocks a cloud; 0: none holds the whole batch at once, buckets */
        for (int kind = 0; kind < 4; kind++)
            if (cudaFuncSetAttribute(runs_kernel_of(kind & 1, kind >> 1),
                                     cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess)
                (void)cudaGetLastError(); /* no clusters of 16 here: their launch check says so */
        /* runs in shared memory first, then in global memory */
        for (int shared = 1; shared >= 0 && !chosen; shared--)
            for (int c = forced ? forced : FPS_RUNS_CTAS_MAX; c >= 1 && !chosen; c >>= 1) {
                if (!forced && c > 8 && fps_runs_take_in(t->n, 8, shared))
                    continue; /* 16 blocks only where 8 cannot take the cloud */
                if (!fps_runs_take_in(t->n, c, shared))
                    continue;
                /* c owner blocks, and a taking block beside them where the
                 * GPU holds those clusters for the whole batch at once */
                for (int taker = c < FPS_RUNS_CTAS_MAX; taker >= 0 && !chosen; taker--) {
                    if (!runs_size(s, c + taker, taker, shared, (size_t)optin))
                        continue;
                    if ((rc = pcb_cuda_smem_at_least((const void *)runs_kernel(s), s->smem)) !=
                        PCB_OK)
                        return rc;
                    int fit = 1 << 30;
                    if (c + taker > 1) {
                        cudaLaunchAttribute cluster;
                        const cudaLaunchConfig_t cfg = runs_launch(s, 1, &cluster);
                        fit = pcb_cuda_clusters_fit(runs_kernel(s), &cfg);
                    }
                    if (fit >= t->batch || (forced && !taker && fit > 0))
                        chosen = c;
                }
            }
        if (chosen) /* the loop's last sizing was chosen's */
            kernel = (const void *)runs_kernel(s);
        else
            s->runs = 0;
    }
    a->opening = s->runs ? fps_runs_opening(t->n, t->m) : 1;
    /* The opening beside the sort, not after it, where the GPU has an SM for
     * each (the sampler waits for both). */
    int sms = 0;
    PCB_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    a->opening_apart = a->opening > 1 && 2 * t->batch <= sms;
    if (!s->runs)
        place(a, (size_t)optin > statics ? (size_t)optin - statics : 0, &s->smem);
    else if (t->n <= FPS_RUNS_SMALL_N)
        PCB_CUDA_TRY(cudaFuncSetAttribute(fps_sorted_codes,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)sizeof(block_sort::TempStorage)));
    if ((rc = pcb_cuda_smem_at_least(kernel, s->smem)) != PCB_OK)
        return rc;

    const size_t batch = (size_t)t->batch, n = (size_t)t->n;
    s->end_bit = CODE_BITS;
    while (s->end_bit < 64 && (t->batch - 1) >> (s->end_bit - CODE_BITS))
        s->end_bit++;
    PCB_CUDA_TRY(cub::DeviceRadixSort::SortPairs(NULL, s->temp_bytes, (unsigned long long *)NULL,
                                                 (unsigned long long *)NULL, (uint32_t *)NULL,
                                                 (uint32_t *)NULL, (int64_t)(batch * n), 0,
                                                 s->end_bit, s->ctx.stream));
    /* One allocation (each cudaFree waits for the device). */
    const size_t sizes[] = {batch * n * 3 * sizeof(float),
                            2 * batch * n * sizeof(unsigned long long),
                            2 * batch * n * sizeof(uint32_t),
                            s->temp_bytes,
                            batch * a->slots * sizeof(float4),
                            batch * a->slots * sizeof(float),
                            batch * a->buckets * 3 * sizeof(float4),
                            batch * a->buckets * sizeof(unsigned long long),
                            batch * a->groups * 3 * sizeof(float4),
                            batch * a->groups * sizeof(unsigned long long),
                            batch * (size_t)t->m * sizeof(int32_t),
                            2 * sizeof(unsigned long long),
                            s->runs && s->global_runs
                                ? batch * a->ctas * (size_t)a->owners * a->run * RUN_BYTES
                                : 0,
                            a->opening > 1 ? batch * n * sizeof(float) : 0,
                            batch * ((n + 31) / 32) * sizeof(uint32_t),
                            batch * sizeof(int32_t)};
    enum { PARTS = sizeof sizes / sizeof sizes[0] };
    size_t offset[PARTS], total = 0;
    for (int i = 0; i < PARTS; i++) {
        offset[i] = total;
        total += (sizes[i] + 255) & ~(size_t)255;
    }
    PCB_CUDA_TRY(cudaMalloc(&s->arena, total));
    char *base = (char *)s->arena;
    s->xyz = (float *)(base + offset[0]);
    s->keys[0] = (unsigned long long *)(base + offset[1]);
    s->keys[1] = s->keys[0] + batch * n;
    s->vals[0] = (uint32_t *)(base + offset[2]);
    s->vals[1] = s->vals[0] + batch * n;
    s->temp = base + offset[3];
    a->pts = (float4 *)(base + offset[4]);
    a->mind = (float *)(base + offset[5]);
    a->bbox = (float4 *)(base + offset[6]);
    a->bbest = a->bbox + batch * a->buckets * 2;
    a->bkey = (unsigned long long *)(base + offset[7]);
    a->gbox = (float4 *)(base + offset[8]);
    a->gbest = a->gbox + batch * a->groups * 2;
    a->gkey = (unsigned long long *)(base + offset[9]);
    a->out = (int32_t *)(base + offset[10]);
    a->evals = (unsigned long long *)(base + offset[11]);
    a->rounds = a->evals + 1;
    a->runs = s->runs && s->global_runs ? (float *)(base + offset[12]) : NULL;
    a->opened = a->opening > 1 ? (float *)(base + offset[13]) : NULL;
    s->flags = (uint32_t *)(base + offset[14]);
    s->used = (int32_t *)(base + offset[15]);
    a->xyz = s->xyz;
    a->order = s->vals[1];
    if (t->memory == PCB_MEM_DEVICE)
        return PCB_OK; /* each run copies its clouds in */
    if (t->lengths_a)
        return upload_ragged(s, t);
    PCB_CUDA_TRY(cudaMemcpyAsync(s->xyz, t->a, sizes[0], cudaMemcpyHostToDevice, s->ctx.stream));
    return pcb_cuda_sync(&s->ctx);
}

static int pruned_prepare(const pcb_task *t, void **state)
{
    /* Slot indexes are ints and sort keys hold the cloud above 30 code bits. */
    if (t->n > (1 << 30))
        return pcb_fail(PCB_EUNSUPPORTED, "fps cuda_pruned: %lld points exceed its limit of 2^30",
                        (long long)t->n);
    if (t->batch > INT32_MAX)
        return pcb_fail(PCB_EUNSUPPORTED, "fps cuda_pruned: batch %lld exceeds the grid limit",
                        (long long)t->batch);
    pruned_state *s = (pruned_state *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "fps cuda_pruned: out of memory");
    s->task = *t;
    fps_args *a = &s->args;
    a->n = (int)t->n;
    a->m = (int)t->m;
    a->start = (int)t->start;
    a->buckets = (a->n + FPS_BUCKET - 1) / FPS_BUCKET;
    a->slots = a->buckets * FPS_BUCKET;
    s->warps = warps_for(&t->opt);
    s->runs = !t->opt.fps_warps; /* setup decides and sizes it */
    s->dense = dense_slots(&t->opt, t->n);
    a->group_size = fps_group_size(a->buckets, s->warps);
    a->groups = (a->buckets + a->group_size - 1) / a->group_size;
    int rc = setup(s);
    if (rc != PCB_OK) {
        pruned_release(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

/* The samplers follow the old rule (chosen points stay candidates at 0):
 * the distinct rule rewrites the sequence's tail where it repeats. */
static int distinct(pruned_state *s, cudaStream_t stream)
{
    fps_distinct_tail<<<(unsigned)s->task.batch, DISTINCT_THREADS, 0, stream>>>(
        s->args.out, s->args.n, s->args.m, s->flags, s->lengths);
    PCB_CUDA_LAUNCHED("fps_distinct_tail");
    return PCB_OK;
}

/* The run's launches, queued on stream. */
static int enqueue(pruned_state *s, cudaStream_t stream)
{
    const pcb_task *t = &s->task;
    PCB_CUDA_TRY(cudaMemsetAsync(s->args.evals, 0, 2 * sizeof *s->args.evals, stream));
    const unsigned grid = (unsigned)t->batch;
    if (s->dense) {
        const fps_args *a = &s->args;
        void (*const kernel[4])(const float *, int, int, int, int32_t *, unsigned long long *) = {
            fps_sample_dense<1>, fps_sample_dense<2>, fps_sample_dense<4>, fps_sample_dense<8>};
        const int which = s->dense == 1 ? 0 : s->dense == 2 ? 1 : s->dense == 4 ? 2 : 3;
        kernel[which]<<<grid, DENSE_THREADS, 0, stream>>>(s->xyz, a->n, a->m, a->start, a->out,
                                                          a->evals);
        PCB_CUDA_LAUNCHED("fps_sample_dense");
        return distinct(s, stream);
    }
    if (s->runs && t->n <= FPS_RUNS_SMALL_N) {
        fps_sorted_codes<<<grid * (s->args.opening_apart ? 2 : 1), CODE_THREADS,
                           sizeof(block_sort::TempStorage), stream>>>(s->args);
        PCB_CUDA_LAUNCHED("fps_sorted_codes");
    } else {
        const int bits = s->runs ? fps_run_morton_bits((int)t->n) : FPS_MORTON_BITS;
        fps_codes<<<grid, CODE_THREADS, 0, stream>>>(s->xyz, (int)t->n, bits,
                                                     s->runs != 0, s->keys[0],
                                                     s->vals[0]);
        PCB_CUDA_LAUNCHED("fps_codes");
        PCB_CUDA_TRY(cub::DeviceRadixSort::SortPairs(s->temp, s->temp_bytes, s->keys[0],
                                                     s->keys[1], s->vals[0], s->vals[1],
                                                     t->batch * t->n, 0, s->end_bit, stream));
    }
    if (s->runs) {
        cudaLaunchAttribute attrs[2];
        cudaLaunchConfig_t cfg = runs_launch(s, grid, &attrs[0]);
        cfg.stream = stream;
        /* it may launch while the codes and sort finish (it waits for them
         * before reading the order): the launch's latency overlaps them */
        attrs[cfg.numAttrs].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attrs[cfg.numAttrs].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = attrs;
        cfg.numAttrs++;
        PCB_CUDA_TRY(cudaLaunchKernelEx(&cfg, runs_kernel(s), s->args));
    } else if (s->warps == 8)
        fps_sample<8><<<grid, 8 * 32, s->smem, stream>>>(s->args);
    else if (s->warps == 16)
        fps_sample<16><<<grid, 16 * 32, s->smem, stream>>>(s->args);
    else
        fps_sample<32><<<grid, 32 * 32, s->smem, stream>>>(s->args);
    PCB_CUDA_LAUNCHED("fps_sample");
    return distinct(s, stream);
}

static int pruned_compute(void *state)
{
    pruned_state *s = (pruned_state *)state;
    int rc = pcb_cuda_begin(&s->ctx);
    if (rc == PCB_OK && (rc = enqueue(s, s->ctx.stream)) == PCB_OK)
        rc = pcb_cuda_end(&s->ctx);
    return rc;
}

static int pruned_sync(void *state)
{
    return pcb_cuda_sync(&((pruned_state *)state)->ctx);
}

static int pruned_fetch(void *state, pcb_result *out)
{
    pruned_state *s = (pruned_state *)state;
    const size_t bytes = (size_t)s->task.batch * (size_t)s->task.m * sizeof(int32_t);
    PCB_CUDA_TRY(cudaMemcpyAsync(out->index, s->args.out, bytes, cudaMemcpyDeviceToHost,
                                 s->ctx.stream));
    return pcb_cuda_sync(&s->ctx);
}

static int pruned_counters(void *state, pcb_counters *c)
{
    pruned_state *s = (pruned_state *)state;
    unsigned long long got[2] = {0, 0}; /* distances, rounds */
    PCB_CUDA_TRY(cudaMemcpyAsync(got, s->args.evals, sizeof got, cudaMemcpyDeviceToHost,
                                 s->ctx.stream));
    int rc = pcb_cuda_sync(&s->ctx);
    c->distance_evals = (int64_t)got[0];
    c->iterations = (int64_t)got[1];
    return rc;
}

/* A device-resident run: the cached state's buffers, the caller's clouds
 * copied in (non-finite coordinates as 0), the samples written straight
 * into the caller's array, all on the caller's stream. */
static int pruned_device(void *state, const pcb_task *t, pcb_result *out, cudaStream_t stream)
{
    pruned_state *s = (pruned_state *)state;
    fps_args saved = s->args;
    s->args.start = (int)t->start;
    s->args.out = out->index;
    /* ragged: a cloud's padding copies its start point, never farther than
     * a sample, so the samplers for equal sizes take the cloud's sequence */
    int rc = t->lengths_a ? pcb_cuda_ragged_copy(s->xyz, t->a, t->batch, t->n, t->lengths_a,
                                                 t->start, FLT_MAX, out->finite, s->used, stream)
                          : pcb_cuda_finite_copy(s->xyz, t->a, t->batch * t->n * 3, FLT_MAX,
                                                 out->finite, stream);
    s->lengths = t->lengths_a ? s->used : NULL;
    if (rc == PCB_OK)
        rc = enqueue(s, stream);
    s->args = saved; /* the state's own output array again, for the next caller */
    s->lengths = NULL;
    return rc;
}

static int pruned_run_device(const pcb_task *t, pcb_result *out)
{
    static const pcb_cuda_maker maker = {&pcb_fps_cuda_pruned, pruned_prepare, pruned_release,
                                         pruned_device};
    return pcb_cuda_run_cached(&maker, t, out);
}

static int pruned_device_ms(void *state, double *ms)
{
    return pcb_cuda_elapsed_ms(&((pruned_state *)state)->ctx, ms);
}

extern "C" const pcb_impl pcb_fps_cuda_pruned = {
    .name = "cuda_pruned",
    .problem = PCB_FPS,
    .device = PCB_CUDA,
    .promise = {.exact = 1, .canonical = 1},
    .limits = {.max_n = 1 << 30, .max_batch = INT32_MAX},
    .cost = PCB_COST_SAMPLES,
    .summary = "rounds of provably-next samples (FPS among the candidates above a threshold), "
               "Morton runs over a cluster of blocks or buckets with bounding boxes",
    .available = pcb_cuda_available_clusters,
    .prepare = pruned_prepare,
    .compute = pruned_compute,
    .sync = pruned_sync,
    .fetch = pruned_fetch,
    .release = pruned_release,
    .counters = pruned_counters,
    .device_ms = pruned_device_ms,
    .run_device = pruned_run_device,
    .ragged = 1,
};
