/* cuda_auction/state.cuh - what a pair's block works on in
 * emd_cuda_auction.cu: the memory plan (shared-memory sizes, where A and
 * the finish's stage fit), the per-pair report (pair_stats), the work
 * counts, and a pair's state carved out of shared or global memory
 * (pair_state). One compile unit: emd_cuda_auction.cu includes the phases
 * in order. */
#pragma once

/* A warm start's arrays (pcb_emd_warm), an entry a pair (prices: n a
 * pair), in and out (they may be the same arrays); NULL: none. */
struct warm_io {
    const double *price_in;
    const double *eps_in;
    const int64_t *budget_in;
    double *eps_out;
    int64_t *budget_out;
};

#define THREADS (PCB_CA_WARPS * 32)
#define STATE_BYTES 48                 /* per point: see pair_state */
#define SMEM_LIMIT (227 * 1024)        /* opt-in shared memory of an sm_90 block */
/* Room for the static arrays (the block rebuilds' rows are twice as large
 * with 8 slots a lane). */
#define STATIC_SMEM (PCB_CA_SLOTS == 4 ? 4096 : 8192)
#define SMEM_MAX_N ((SMEM_LIMIT - STATIC_SMEM) / STATE_BYTES)
static_assert(PCB_CA_SLOTS != 4 || SMEM_MAX_N == PCB_CA_SHARED_MAX_N,
              "the rules' PCB_CA_SHARED_MAX_N is where the state leaves shared memory");
/* Where the finish's settled objects are staged (stage_capacity): 48 bytes
 * a point (see settled_offer); with less room than STAGE_MIN of them, none
 * are (each offer then reads its settled object itself). */
#define STAGE_BYTES 48
#define STAGE_MIN 64
/* Where A's coordinates fit beside the state too (12 bytes a point, rounded
 * to 16 for the block), leaving the finish room to stage STAGE_BESIDE_A
 * settled objects: every look and scan reads its bidder's from there
 * instead of L2 (1%-2% faster), while staging saves far more in the finish. */
#define A_BYTES 12
#define STAGE_BESIDE_A 256
#define SMEM_A_MAX_N \
    ((SMEM_LIMIT - STATIC_SMEM - 16 - STAGE_BESIDE_A * STAGE_BYTES) / (STATE_BYTES + A_BYTES))
#define A_AREA(n) (((size_t)(n) * A_BYTES + 15) / 16 * 16)
/* With the state in global memory the finish stages this many settled
 * objects at a time in shared memory (a larger bucket in chunks); the rest
 * of the 227 KB stays L1 cache for the state and the caches (4096 at a
 * time measured no faster: NOTES.md). */
#ifndef GLOBAL_STAGE /* tuning builds only */
#define GLOBAL_STAGE 1024
#endif
static_assert(GLOBAL_STAGE * STAGE_BYTES <= SMEM_LIMIT - STATIC_SMEM, "the staging fits in shared memory");
#define MAX_ROUNDS_PER_N 256           /* a phase that needs more is a bug */

/* What the kernel reports per pair. */
typedef struct {
    long long bids, rounds, phases, stuck;
    unsigned long long scans, checks; /* full scans of B; cache looks */
    double p, d; /* the last certificate's sums */
    unsigned long long finish_evals; /* costs the finish evaluated */
} pair_stats;

/* A settled object of the finish as its offers read it (settled_of): its
 * owner's coordinates, value u and its dist, and its reach for the float
 * test (pcb_ca_finish_above); for finish_staged, staged once in shared
 * memory by the thread that settled it, the test's part first. */
struct __align__(16) settled_offer {
    float ax, ay, az, reach;
    double ds, u;
    int sj;
};
static_assert(sizeof(settled_offer) == STAGE_BYTES, "STAGE_BYTES is a settled_offer");
#define STAGE_WORDS (STAGE_BYTES / 16) /* float4s a settled_offer */

/* A block's work counts, which add_counts adds to its pair's: full scans
 * of B and cache looks by warp (its lane 0 counts them: count_scans,
 * count_check), the finish's cost evaluations by thread 0 (count x
 * unsettled objects a step, as every thread once added count a settled
 * object). In shared memory, reached from where they are counted: as
 * 64-bit registers that every thread held and passed down, they made the
 * kernel spill more (1.5%-1.7% of the time at 32 x 1024, 0.4% at 32 x 4096
 * and 8192 on the H100). With them the static arrays take all of
 * STATIC_SMEM; setup checks that they fit. */
__shared__ unsigned tally_scans[PCB_CA_WARPS];
__shared__ unsigned long long tally_checks[PCB_CA_WARPS], tally_evals;
__device__ __forceinline__ void count_scans(unsigned v = 1)
{
    if ((threadIdx.x & 31) == 0)
        tally_scans[threadIdx.x >> 5] += v;
}
__device__ __forceinline__ void count_check()
{
    if ((threadIdx.x & 31) == 0)
        tally_checks[threadIdx.x >> 5]++;
}

/* One pair's working state, n of each. */
struct pair_state {
    float4 *bq;              /* B's x, y, z and the float copy of the price */
    double *price;
    unsigned long long *top; /* the round's best key per object, 0 when none */
    int *owner;              /* point of A holding each point of B, -1 none */
    int *list[2];            /* bidders of this round and the next; together
                                they hold the certificate's least values */
    int *chose;              /* the object each listed bidder bid on */
    bool in_shared;          /* the state is in shared memory (n <= SMEM_MAX_N) */
    settled_offer *stage;    /* the finish's settled objects staged in shared
                                memory (stage_capacity), else NULL */
    int stage_cap;           /* how many stage holds */
};

/* The shared memory the pair's state and A's copy take at n points, where
 * the finish's stage begins (0: the state is in global memory). */
__host__ __device__ inline size_t shared_area(int n)
{
    if (n > SMEM_MAX_N)
        return 0;
    return (size_t)n * STATE_BYTES + (n <= SMEM_A_MAX_N ? A_AREA(n) : 0);
}

/* How many settled objects the finish stages in shared memory at n points
 * (a larger bucket goes by chunks): all of them where they fit beside the
 * state (and A), else as many as fit, GLOBAL_STAGE when the state is in
 * global memory, and none with room for fewer than STAGE_MIN (then each
 * offer reads its settled object itself, finish_whole). */
__host__ __device__ inline int stage_capacity(int n)
{
    if (pcb_ca_finish_at(n) == 0)
        return 0;
    if (n > SMEM_MAX_N)
        return GLOBAL_STAGE;
    const size_t room = (SMEM_LIMIT - STATIC_SMEM - shared_area(n)) / STAGE_BYTES;
    return room < STAGE_MIN ? 0 : room < (size_t)n ? (int)room : n;
}

/* Carve n points of state out of memory (16-byte aligned; in_shared: mem
 * is the block's shared memory). */
__device__ __forceinline__ pair_state carve(char *mem, int n, bool in_shared)
{
    pair_state s;
    s.bq = (float4 *)mem;
    s.price = (double *)(s.bq + n);
    s.top = (unsigned long long *)(s.price + n);
    s.list[0] = (int *)(s.top + n);
    s.list[1] = s.list[0] + n; /* list[0..1] also serve as a double array */
    s.owner = s.list[1] + n;
    s.chose = s.owner + n;
    s.in_shared = in_shared;
    s.stage = NULL;
    s.stage_cap = 0;
    return s;
}
