/* pcbench.h - libpcbench for its users: problems, tasks, results, running
 * an implementation or the fastest verified one, the one-call functions and
 * the status codes. Implementation authors add pcbench_impl.h (the table
 * entry and its life cycle), verification adds pcbench_judge.h (validators,
 * promises, the judge).
 *
 * Points are float32 xyz, a batch is B clouds of N points stored contiguously
 * (B x N x 3). Sizes are int64_t; returned point indices are int32_t, so every
 * cloud is limited to PCB_MAX_POINTS points (checked, never silently wrapped).
 *
 * Every function returns a status code (PCB_OK = 0, errors < 0). The message
 * that goes with the last error of the calling thread is pcb_errmsg(). The
 * library never calls exit() or abort().
 */
#ifndef PCBENCH_H
#define PCBENCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PCB_MAX_POINTS INT32_MAX
/* kNN's and the ball query's k may exceed the reference's points (the rows
 * end in padding), but only up to this: an answer is batch x queries x k. */
#define PCB_PAD_K 1024

/* ---- status codes (libuv's UV_ERRNO_MAP style) ------------------------- */
/* The one list: X(name, code, message) makes the enum PCB_<name>, the names
 * of pcb_status_name and the messages of pcb_strerror. */
#define PCB_STATUS_MAP(X)                                                              \
    X(OK, 0, "ok")                                                                     \
    X(EINVAL, -1, "invalid argument")                                                  \
    X(EUNSUPPORTED, -2, "unsupported")     /* outside this implementation's limits */  \
    X(EUNAVAIL, -3, "unavailable")         /* not built, or no device */               \
    X(ENOMEM, -4, "out of memory")         /* host or device */                        \
    X(EDEVICE, -5, "device error")         /* the message carries the CUDA string */   \
    X(EBADFILE, -6, "bad input file")      /* the message names file and position */   \
    X(EIO, -7, "I/O error")                /* system: open, write, rename */

enum {
#define PCB_STATUS_ENUM(name, code, message) PCB_##name = code,
    PCB_STATUS_MAP(PCB_STATUS_ENUM)
#undef PCB_STATUS_ENUM
};

/* Short fixed message of a code: "invalid argument", "unsupported", ...
 * ("unknown error" for a code not in the list). */
const char *pcb_strerror(int code);
/* Its name: "PCB_EINVAL", ... ("PCB_?" for a code not in the list). */
const char *pcb_status_name(int code);
/* Detailed message of the calling thread's last error ("" if none). */
const char *pcb_errmsg(void);
/* ---- problems ---------------------------------------------------------- */
/* The one list of problems: X(ID, name, title) makes the enum PCB_<ID> (its
 * numbers are the library's ABI: a new problem goes last), the names of
 * pcb_problem_name and pcb_problem_parse, and, in the tool, the command
 * table, the verify matrices and every help text that lists problems. */
#define PCB_PROBLEM_MAP(X)                                                             \
    X(FPS, fps, "farthest point sampling")                                             \
    X(NN, nn, "nearest neighbour of each query point")                                 \
    X(EMD, emd, "earth mover's distance by assignment")                                \
    X(CHAMFER, chamfer, "chamfer distance (nearest points both ways)")                 \
    X(KNN, knn, "the k nearest neighbours of each query point")                        \
    X(BALL, ball, "ball query (first or nearest K inside)")                            \
    X(GRID, grid, "grid sampling (a point a voxel, counts, inverse map)")                \
    X(SERIALIZE, serialize, "serialization (Morton or Hilbert codes, their stable order)")

typedef enum {
#define PCB_PROBLEM_ENUM(ID, name, title) PCB_##ID,
    PCB_PROBLEM_MAP(PCB_PROBLEM_ENUM)
#undef PCB_PROBLEM_ENUM
    PCB_NPROBLEMS
} pcb_problem;
/* " fps nn emd chamfer knn ball": every problem's name, each after a space,
 * as one string literal (for help texts and messages). */
#define PCB_PROBLEM_WORD_(ID, name, title) " " #name
#define PCB_PROBLEM_NAMES PCB_PROBLEM_MAP(PCB_PROBLEM_WORD_)
typedef enum { PCB_CPU = 0, PCB_CUDA = 1 } pcb_device;
/* Where a task's arrays live (pcb_task.memory). */
typedef enum { PCB_MEM_HOST = 0, PCB_MEM_DEVICE = 1 } pcb_memory;

const char *pcb_problem_name(pcb_problem p); /* "fps", ...; "?" outside the list */
int pcb_problem_parse(const char *s, pcb_problem *out);
const char *pcb_device_name(pcb_device d);     /* "cpu", "cuda" */

/* Tunables; 0 means "the implementation's default". */
typedef struct {
    int threads;       /* OpenMP threads */
    int partitions;    /* NN azimuth partitions (cuda_attempt3) */
    double eps;        /* EMD auction target epsilon (absolute, cost units) */
    /* EMD: the relative gap to the optimum the answer must be certified
     * within, for implementations that stop on a certificate (cuda_auction);
     * 0: the implementation's own promise. */
    double max_gap;
    /* Tuning, for studies and tests (the tool reads them from PCBENCH_*
     * environment variables; the library reads no environment); 0 leaves
     * each to the implementation. FPS cuda_pruned: */
    int fps_warps; /* warps a sampler block, 8, 16 or 32 (and no runs kernel) */
    int fps_ctas;  /* the runs kernel's owner blocks a cloud: 1, 2, 4, 8 or 16 */
    int fps_dense; /* -1: no block-a-cloud kernel */
    /* EMD cuda_auction: */
    int emd_ctas;  /* blocks a pair where the GPU can run such clusters: 1 to 8 */
    int emd_start; /* -1: cold prices start at 0, not at the column reduction */
    /* The judge: EMD's gap to the exact optimum is computed for pairs of up
     * to this many points (0: 2,048; -1: never; the certificate decides). */
    int64_t emd_gap_max_n;
} pcb_options;

/* One problem instance, the same shape for every implementation.
 *   FPS: a = batch x n x 3 clouds, n = points, m = samples, start = first index.
 *   NN:  a = batch x n x 3 reference clouds, b = batch x nq x 3 query clouds.
 *   EMD: a, b = batch x n x 3 clouds (nq == n).
 *   KNN: as NN, and k = neighbours a query (1 or more; more than n is
 *        allowed up to PCB_PAD_K: the row is padded). b may be a (self-kNN:
 *        every point is its own nearest, at distance 0).
 *   BALL: as kNN (a the points, b the centres, k = K the most neighbours a
 *        centre keeps), radius > 0 and select: the reference points inside
 *        the ball of every centre, a point inside when its float32 squared
 *        distance (q - p)^2 is below r2 = (float)radius * (float)radius in
 *        float32 (pcb_ball_r2; PointNet++'s and PyTorch3D's strict test).
 *        PCB_BALL_FIRST keeps the K inside points of lowest index (the
 *        PointNet++ contract), PCB_BALL_NEAREST the K nearest (ties to the
 *        lower index).
 *   GRID: a = batch x n x 3 clouds, cell = a voxel's size along x, y, z, and
 *        the voxels' origin: t.origin where origin_given, else each cloud's
 *        minimum per axis. A point's voxel is (ix, iy, iz) = floor(((double)p
 *        - origin) / cell) per axis, in double precision (impl/grid/grid.h);
 *        select: which point a voxel keeps, PCB_BALL_FIRST the lowest index,
 *        PCB_BALL_NEAREST the nearest to the voxel's centre origin + (i +
 *        0.5) cell (its squared distance in double, ties to the lowest index),
 *        PCB_GRID_RANDOM the point of least pcb_grid_draw(seed, index),
 *        PCB_GRID_MEAN the lowest index, and the voxel's mean coordinates.
 *   SERIALIZE: a, cell, origin as GRID (a point's voxel by the same rule);
 *        curve a pcb_curve, depth the bits an axis of the codes (1 to
 *        PCB_CURVE_MAX_DEPTH; 0: the least that holds every voxel
 *        coordinate of the batch). A point's code is its cloud's number
 *        shifted left by 3 depth bits, or'ed with the curve's index of its
 *        voxel (impl/serialize/serialize.h); every voxel coordinate must lie
 *        in 0 .. 2^depth - 1, and 3 depth + the bits of batch - 1 <= 63.
 * memory PCB_MEM_DEVICE: a, b and every array of the result are device
 * pointers of the current CUDA device, and pcb_run queues the whole run on
 * stream (a cudaStream_t; NULL: the legacy default stream) and returns
 * without waiting for it: no host copy, no synchronisation. Only
 * implementations with run_device accept it (the others: PCB_EUNSUPPORTED).
 * The coordinates are not read on the host, so they are not checked for
 * non-finite values there: a device run reads a non-finite coordinate as 0,
 * and its answer is then that of the cloud with 0 in its place.
 *
 * Ragged batches (PyTorch3D's padded layout with lengths): lengths_a, when
 * not NULL, holds batch sizes, cloud i of a being its first lengths_a[i]
 * points (0..n; the rest of its n slots is padding, never read); lengths_b
 * likewise for b (0..nq; EMD: equal to lengths_a, or NULL). Every cloud's
 * answer is the answer of the task made of that cloud alone, written where
 * the equal-size layout puts it, and the entries beyond it are padding:
 * index -1, dist2 +inf, count 0. An empty cloud has a defined answer: FPS
 * samples min(m, length) points and pads the rest (start must be below every
 * non-zero length); a query without reference points gets a row of padding;
 * a chamfer or EMD value over an empty cloud is NaN (a mean of no terms; in
 * a "sum" chamfer convention, the distances to an empty cloud are +inf),
 * never a silent 0. The lengths live where the clouds do (device memory for
 * a device task, read there: a length outside 0..n is read as 0, and
 * finite set to 0). An implementation that reads lengths itself
 * (pcb_impl_ragged) takes a ragged batch whole, on host or device memory;
 * the others run a host task one cloud at a time and say PCB_EUNSUPPORTED
 * to a device one.
 */
/* An EMD warm start (issue 71's first route): the prices and last eps of an
 * earlier solve of each pair, so a loss that meets the same target clouds
 * again (epoch after epoch) restarts near the answer. Every array is in and
 * out, one entry a pair (price: batch x n, a price a point of B), in the
 * task's memory:
 *   price:  in, the start prices; out, the run's final prices;
 *   eps:    in, the eps to start at (0, or not finite: this pair starts
 *           cold; clamped to the cold run's first and last eps); out, the
 *           run's last eps;
 *   budget: in, the most rounds a warm start may take before the pair
 *           drops its prices and starts again cold (0: no limit); out, the
 *           rounds of the run's cold solve where one ran, else unchanged.
 * Passing the same arrays in and out call after call keeps the rule for
 * stale prices: a warm start that costs more than the pair's last cold
 * solve is dropped. Any start prices give a valid certificate (the dual
 * bound needs no feasibility): only the time depends on them. A start
 * price that is negative or not finite makes its pair start cold (the
 * auction's own prices are never negative). All NULL: a cold
 * run. Implementations that take it: pcb_impl_warm; not with lengths. */
typedef struct {
    double *price;
    double *eps;
    int64_t *budget;
} pcb_emd_warm;

typedef struct {
    pcb_problem problem;
    int64_t batch;
    int64_t n;
    int64_t nq;
    int64_t m;
    int64_t start;
    int64_t k;
    double radius; /* ball */
    int32_t select; /* ball: a pcb_ball_select */
    const float *a;
    const float *b;
    pcb_options opt;
    pcb_memory memory;
    void *stream;
    const int64_t *lengths_a; /* ragged batches: NULL, or batch sizes of a's clouds */
    const int64_t *lengths_b; /* ... and of b's */
    pcb_emd_warm warm;        /* EMD: a warm start, or all NULL */
    double cell[3];           /* grid: a voxel's size along x, y, z (> 0) */
    double origin[3];         /* grid: the voxels' origin, where origin_given */
    int32_t origin_given;     /* grid: 0: each cloud's minimum per axis */
    int32_t curve;            /* serialize: a pcb_curve */
    int32_t depth;            /* serialize: bits an axis (0: the least that holds the batch) */
    uint64_t seed;            /* grid, PCB_GRID_RANDOM: the draw's seed */
} pcb_task;

/* Where results go; the caller owns the arrays.
 *   FPS: index[batch*m] sample indices in selection order.
 *   NN:  index[batch*nq] nearest reference index, dist2[batch*nq] its
 *        squared distance (dist2 may be NULL).
 *   EMD: index[batch*n] the point of B matched to each point of A (-1 if an
 *        implementation left it unmatched), value[batch] the mean matched
 *        Euclidean distance (may be NULL), price[batch*n] the final prices of
 *        B's points for implementations that have them (may be NULL; sets
 *        has_price); bound[batch] the relative gap (P - D) / D between the
 *        matching's cost P and the dual bound D its prices prove, for
 *        implementations that certify (cuda_auction; may be NULL; left as
 *        it was by the others, which pcb_emd_bound serves).
 *   CHAMFER (A: batch x n points, B: batch x nq): index[batch*(n+nq)] and
 *        dist2 (required), first every point of A's nearest point of B (pair
 *        by pair, as NN with B the reference), then every point of B's
 *        nearest point of A; value[batch] (may be NULL) the chamfer distance
 *        in the default convention: the mean over A of the squared distance
 *        to B plus the same from B to A (pcb_chamfer_values gives the others).
 *   KNN: index[batch*nq*k] and dist2 (may be NULL), a row of k a query:
 *        its min(k, n) nearest reference points in ascending squared
 *        distance, ties to the lower index (the canonical answer; the
 *        validator accepts any order among equal distances), then padding
 *        that is no point: index PCB_KNN_PAD (-1), distance +inf.
 *   BALL: index[batch*nq*k] and dist2 (may be NULL), a row of k a centre:
 *        its selected inside points (FIRST: increasing index; NEAREST:
 *        ascending distance, ties to the lower index), then padding as kNN's
 *        (-1, +inf): an empty ball is a row of padding, never point 0.
 *        count[batch*nq] (may be NULL) how many a row holds.
 *   GRID: index[batch*2n]: first, a row a voxel of each cloud (n of them),
 *        the occupied voxels sorted by ix, then iy, then iz, each the point
 *        it keeps, then -1 past the cloud's last voxel; then each point's
 *        voxel, its row number (the inverse map, cloud by cloud).
 *        count[batch*n] (required) how many points each voxel holds, 0 past
 *        the last. A voxel's coordinates are those of the point it keeps.
 *        PCB_GRID_MEAN: mean[batch*n*3] (required) each voxel row's mean
 *        point, the sum in double of its points in increasing index order
 *        over the count, rounded to float32; 0 past the last.
 *   SERIALIZE: index[batch*2n]: first each cloud's serialized order, its
 *        point indices by ascending code, equal codes by increasing index;
 *        then each point's place in that order (the inverse, cloud by
 *        cloud). code[batch*n] (required) each point's code, in point
 *        order. A ragged cloud's slots past its length hold -1 in all three.
 * Device runs only: finite, a device int32 the run sets to 0 when it read
 * a coordinate that is not finite (or beyond the implementation's range) as
 * 0, and leaves as it was otherwise (may be NULL): the caller can check it
 * without waiting, e.g. in a device-side assertion.
 * Device runs only, implementations with pcb_impl_index64: index64, when not
 * NULL, gets the indices as int64 (PyTorch's index type, no conversion
 * after the run) and index is not written (may be NULL); the others say
 * PCB_EUNSUPPORTED to it.
 */
typedef struct {
    int32_t *index;
    float *dist2;
    double *value;
    double *price;
    int has_price;
    double *bound;
    int32_t *finite;
    int32_t *count; /* ball: entries a row (may be NULL); grid: points a voxel */
    int64_t *index64;
    int64_t *code; /* serialize: each point's code */
    float *mean;   /* grid, PCB_GRID_MEAN: each voxel's mean point */
} pcb_result;

/* Deterministic work counters; -1 where an implementation has none. */
typedef struct {
    int64_t distance_evals;
    int64_t bids;
    int64_t iterations;
} pcb_counters;

/* An implementation: opaque here (pcbench_impl.h declares its fields). */
typedef struct pcb_impl pcb_impl;

/* ---- registry --------------------------------------------------------- */
/* All implementations that were built, NULL-terminated, in speed order
 * within a problem (fastest first). */
const pcb_impl *const *pcb_registry(void);
const pcb_impl *pcb_find(pcb_problem p, const char *name);
/* Implementations of the project that were not built here (CUDA ones
 * without nvcc, FLANN's without libflann-dev), ended by one whose name is
 * NULL. */
typedef struct {
    const char *problem; /* pcb_problem_name's spelling */
    const char *name;
    pcb_device device;
    const char *needs; /* what the build did not find: "nvcc", "libflann-dev" */
} pcb_missing;
const pcb_missing *pcb_not_built(void);
/* The entry of pcb_not_built for problem p and name, or NULL. */
const pcb_missing *pcb_not_built_find(pcb_problem p, const char *name);
/* Availability of an implementation (PCB_OK or PCB_EUNAVAIL + message). */
int pcb_impl_available(const pcb_impl *impl);

/* ---- running ---------------------------------------------------------- */
/* Check a task's arguments (sizes, overflow, non-finite coordinates). */
int pcb_task_check(const pcb_task *t);
/* How many answers a task has, the length of pcb_result.index: FPS batch*m,
 * NN batch*nq, EMD batch*n, chamfer batch*(n+nq), kNN batch*nq*k (0 for a
 * task of no known problem). */
int64_t pcb_answer_count(const pcb_task *t);
/* What a caller fills pcb_result.index with before a run, so an element the
 * implementation never wrote is caught: out of range for every problem. */
#define PCB_POISON (-7)
void pcb_result_poison(const pcb_task *t, pcb_result *r);
/* Every array of a result for task t (index, dist2, price: pcb_answer_count;
 * value: batch), index poisoned; PCB_ENOMEM leaves r empty. pcb_result_free
 * frees them (accepts an empty or NULL r). */
int pcb_result_alloc(const pcb_task *t, pcb_result *r);
void pcb_result_free(pcb_result *r);
/* 1 when two answers to t are the same bit for bit in every array the
 * problem's answer has (indices; distances, values, prices, counts where it
 * has them), else 0: equal answers get equal verdicts. */
int pcb_result_equal(const pcb_task *t, const pcb_result *a, const pcb_result *b);
/* Copy into dst every array of src the problem's answer has (those dst
 * holds: an absent array of dst is left out); has_price with the prices. */
void pcb_result_copy(const pcb_task *t, pcb_result *dst, const pcb_result *src);
/* Whole life cycle: check, prepare, compute, sync, fetch, release. */
int pcb_run(const pcb_impl *impl, const pcb_task *t, pcb_result *out,
            pcb_counters *counters /* may be NULL */);
/* The fastest available exact implementation that accepts the task (none
 * with a known defect: on a GPU older than sm_90, FPS goes to the CPU rather
 * than to the classic kernel, which may repeat samples). */
int pcb_best(const pcb_task *t, const pcb_impl **out);
/* The fastest available implementation of `device` that accepts the task
 * (a device-resident task: one with run_device) and whose answers are
 * verified right: exact, or an EMD certified within a promised gap, and no
 * known defect. */
int pcb_choose(const pcb_task *t, pcb_device device, const pcb_impl **out);
/* An implementation's name (for bindings that hold pcb_impl opaque). */
const char *pcb_impl_name(const pcb_impl *impl);
/* 1 when it reads a ragged task's lengths itself (host and device memory). */
int pcb_impl_ragged(const pcb_impl *impl);
/* 1 when it takes an EMD warm start (pcb_task.warm). */
int pcb_impl_warm(const pcb_impl *impl);
/* 1 when its device runs write int64 indices (pcb_result.index64). */
int pcb_impl_index64(const pcb_impl *impl);
/* The size of cloud i of a (which 0) or b (which 1): its length in a
 * ragged host task, else n or nq. */
int64_t pcb_cloud_size(const pcb_task *t, int which, int64_t i);
/* ---- a nearest-neighbour index kept on the device ----------------------
 * For loops that search one reference many times (ICP: the reference sweep
 * stays while the moved source is searched again and again): build once,
 * then each search costs only the search. t is a device-resident NN task
 * whose a holds the reference clouds and nq the most queries a cloud a
 * search will ask (b is not read); the build is queued on t->stream, and
 * sets *finite to 0 if it read a non-finite coordinate as 0 (finite may be
 * NULL). pcb_nn_index_query searches batch x nq queries (device pointers,
 * nq at most the built capacity) on stream, writing out->index and
 * out->dist2 (and out->finite as device runs do), without waiting. The
 * index keeps its own copy of the reference. Building allocates; a search
 * waits on the host only when nq differs from the last search's (its
 * launches are captured once a query count). pcb_nn_index_free waits for
 * the searches queued, then frees (accepts NULL). Implementations with
 * device_index: cuda_bvh; the others say PCB_EUNSUPPORTED. */
typedef struct pcb_nn_index pcb_nn_index;
int pcb_nn_index_build(const pcb_impl *impl, const pcb_task *t, int32_t *finite,
                       pcb_nn_index **index);
int pcb_nn_index_query(pcb_nn_index *index, const float *query, int64_t nq, pcb_result *out,
                       void *stream);
void pcb_nn_index_free(pcb_nn_index *index);

/* sizeof one of the public structs by name ("pcb_task", "pcb_result",
 * "pcb_options", "pcb_report", "pcb_promise", "pcb_judgement"), 0 for another
 * name: bindings that mirror them check their layout against it. */
size_t pcb_abi_size(const char *type);
/* Free the scratch memory device-resident runs keep between calls (and
 * cuda_bvh's host runs too: their device buffers, streams and graphs);
 * waits for the work queued with it. graphs = 1 frees the states calls
 * captured in CUDA graphs took as well: only once those graphs are
 * destroyed. Nothing to do without CUDA. */
void pcb_device_cache_clear(int graphs);

/* ---- simple entry points: fastest available verified exact ----------- */
/* One argument order for every problem: the input clouds, then the sizes
 * (batch first) and parameters, then the outputs. */
int pcb_fps(const float *xyz, int64_t batch, int64_t n, int64_t m, int64_t start,
            int32_t *idx);
int pcb_nn(const float *ref, const float *query, int64_t batch, int64_t n, int64_t nq,
           int32_t *idx, float *dist2 /* may be NULL */);
int pcb_emd(const float *a, const float *b, int64_t batch, int64_t n, int32_t *match,
            double *value /* may be NULL */);
/* The k nearest reference points of every query (idx and dist2:
 * batch*nq*k, rows as pcb_result says; dist2 may be NULL). */
#define PCB_KNN_PAD (-1)
int pcb_knn(const float *ref, const float *query, int64_t batch, int64_t n, int64_t nq, int64_t k,
            int32_t *idx, float *dist2 /* may be NULL */);
/* Ball query: the selected inside points of every centre (idx and dist2:
 * batch*nq*k, count: batch*nq; dist2 and count may be NULL). */
typedef enum { PCB_BALL_FIRST = 0, PCB_BALL_NEAREST = 1 } pcb_ball_select;
/* Grid sampling's third rule (pcb_task.select): a voxel keeps its point of
 * least pcb_grid_draw(seed, index) (impl/grid/grid.h), a seeded random
 * choice that every implementation and the validator make alike. */
#define PCB_GRID_RANDOM 2
/* Grid sampling's fourth rule: a voxel keeps its lowest index, as FIRST, and
 * its points' mean coordinates (pcb_result.mean). */
#define PCB_GRID_MEAN 3
const char *pcb_ball_select_name(int select); /* "first", "nearest" ("random", "mean": grid's) */
int pcb_ball_select_parse(const char *s, int32_t *out);
/* The float32 squared radius of the inside test. */
static inline float pcb_ball_r2(double radius)
{
    const float r = (float)radius;
    return r * r;
}
int pcb_ball(const float *ref, const float *centres, int64_t batch, int64_t n, int64_t nq,
             int64_t k, double radius, int select, int32_t *idx, float *dist2, int32_t *count);
/* Grid sampling: index batch*2n (a voxel's kept point, then each point's
 * voxel) and count batch*n, laid out as pcb_result says; origin NULL: each
 * cloud's minimum; select a pcb_ball_select or PCB_GRID_RANDOM (seed 0);
 * PCB_GRID_MEAN's mean points come through pcb_run's pcb_result.mean. */
int pcb_grid(const float *xyz, int64_t batch, int64_t n, const double cell[3],
             const double *origin, int select, int32_t *index, int32_t *count);
/* Space-filling curves (impl/serialize/serialize.h says which): a voxel's
 * coordinates (0 .. 2^depth - 1 each) to its index on the curve, and back. */
typedef enum { PCB_CURVE_MORTON = 0, PCB_CURVE_HILBERT = 1 } pcb_curve;
#define PCB_CURVE_MAX_DEPTH 21
const char *pcb_curve_name(int curve); /* "morton", "hilbert" */
int pcb_curve_parse(const char *s, int32_t *out);
/* count voxels (x, y, z a voxel) to their codes, and codes back; PCB_EINVAL
 * for a coordinate or code outside the depth's cube. */
int pcb_curve_encode(int curve, int depth, const int64_t *xyz, int64_t count, int64_t *code);
int pcb_curve_decode(int curve, int depth, const int64_t *code, int64_t count, int64_t *xyz);
/* Serialization: code batch*n, index batch*2n (the order, then the
 * inverse), laid out as pcb_result says; origin NULL: each cloud's
 * minimum; depth 0: the least that holds the batch. */
int pcb_serialize(const float *xyz, int64_t batch, int64_t n, const double cell[3],
                  const double *origin, int curve, int depth, int64_t *code, int32_t *index);
/* Both directions' nearest points (idx and dist2: batch*(n+nq), laid out as
 * pcb_result says) and the value a pair in the default convention. */
int pcb_chamfer(const float *a, const float *b, int64_t batch, int64_t n, int64_t nq,
                int32_t *idx, float *dist2, double *value /* may be NULL */);

/* The gradient of each pair's default-convention value, for a loss: t a
 * device-resident chamfer task, index its answer's (device); grad[batch]
 * the incoming gradient of each pair's value (device float32). Adds
 * 2 g (x - y) / count to grad_a at every point x and subtracts it at its
 * nearest y (grad_b likewise; count n for A's points, nq for B's): the
 * caller zeroes them. Queued on t->stream; PCB_EUNAVAIL without CUDA. */
int pcb_chamfer_backward(const pcb_task *t, const int32_t *index, const float *grad,
                         float *grad_a, float *grad_b);

/* ---- chamfer conventions ----------------------------------------------
 * Papers and libraries differ (impl/chamfer/README.md maps them): the
 * distance squared or Euclidean, the points of a direction averaged or
 * summed, the two directions summed, averaged, or A to B only. Named
 * "DISTANCE-POINTS-DIRECTIONS": "squared-mean-sum" (the default, PyTorch3D's),
 * "euclidean-mean-average" (PoinTr's L1), "squared-sum-forward" (chamferdist). */
typedef enum { PCB_CD_SQUARED = 0, PCB_CD_EUCLIDEAN = 1 } pcb_chamfer_distance;
typedef enum { PCB_CD_MEAN = 0, PCB_CD_SUM = 1 } pcb_chamfer_points;
typedef enum { PCB_CD_BOTH = 0, PCB_CD_AVERAGE = 1, PCB_CD_FORWARD = 2 } pcb_chamfer_directions;
typedef struct {
    pcb_chamfer_distance distance;
    pcb_chamfer_points points;
    pcb_chamfer_directions directions;
} pcb_chamfer_convention;
int pcb_chamfer_convention_parse(const char *name, pcb_chamfer_convention *out);
/* Its name, written into buf (at least 32 bytes). */
const char *pcb_chamfer_convention_name(const pcb_chamfer_convention *c, char *buf, size_t size);
/* value[b] of each pair in convention c from a chamfer answer's dist2
 * (host arrays; sums in double, in index order). */
int pcb_chamfer_values(const pcb_task *t, const float *dist2, const pcb_chamfer_convention *c,
                       double *value);

#ifdef __cplusplus
}
#endif
#endif
