/* pcbench.h - the one public interface of libpcbench.
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

#include <math.h> /* HUGE_VAL */
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PCB_MAX_POINTS INT32_MAX

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
/* Record an error for this thread and return code (for implementations). */
int pcb_fail(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The largest magnitude among count floats (for implementations' checks of
 * their input), or infinity when one is not finite, *bad (when not NULL)
 * then its index, else count. One pass at memory speed. */
float pcb_max_abs(const float *x, size_t count, size_t *bad);

/* ---- problems and implementations ------------------------------------- */
typedef enum { PCB_FPS = 0, PCB_NN = 1, PCB_EMD = 2, PCB_NPROBLEMS = 3 } pcb_problem;
typedef enum { PCB_CPU = 0, PCB_CUDA = 1 } pcb_device;
/* Where a task's arrays live (pcb_task.memory). */
typedef enum { PCB_MEM_HOST = 0, PCB_MEM_DEVICE = 1 } pcb_memory;

const char *pcb_problem_name(pcb_problem p);   /* "fps", "nn", "emd" */
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
} pcb_options;

/* One problem instance, the same shape for every implementation.
 *   FPS: a = batch x n x 3 clouds, n = points, m = samples, start = first index.
 *   NN:  a = batch x n x 3 reference clouds, b = batch x nq x 3 query clouds.
 *   EMD: a, b = batch x n x 3 clouds (nq == n).
 * memory PCB_MEM_DEVICE: a, b and every array of the result are device
 * pointers of the current CUDA device, and pcb_run queues the whole run on
 * stream (a cudaStream_t; NULL: the legacy default stream) and returns
 * without waiting for it: no host copy, no synchronisation. Only
 * implementations with run_device accept it (the others: PCB_EUNSUPPORTED).
 * The coordinates are not read on the host, so they are not checked for
 * non-finite values there: a device run reads a non-finite coordinate as 0,
 * and its answer is then that of the cloud with 0 in its place.
 */
typedef struct {
    pcb_problem problem;
    int64_t batch;
    int64_t n;
    int64_t nq;
    int64_t m;
    int64_t start;
    const float *a;
    const float *b;
    pcb_options opt;
    pcb_memory memory;
    void *stream;
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
 * Device runs only: finite, a device int32 the run sets to 0 when it read
 * a coordinate that is not finite (or beyond the implementation's range) as
 * 0, and leaves as it was otherwise (may be NULL): the caller can check it
 * without waiting, e.g. in a device-side assertion.
 */
typedef struct {
    int32_t *index;
    float *dist2;
    double *value;
    double *price;
    int has_price;
    double *bound;
    int32_t *finite;
} pcb_result;

/* Deterministic work counters; -1 where an implementation has none. */
typedef struct {
    int64_t distance_evals;
    int64_t bids;
    int64_t iterations;
} pcb_counters;

/* Limits; 0 means none. */
typedef struct {
    int64_t max_n;
    int64_t max_m;
    int64_t max_batch;
} pcb_limits;

/* How an implementation's work grows (b batch, n points, nq queries, m
 * samples), for the benchmark's run-time prediction. */
typedef enum {
    PCB_COST_UNSET = 0,       /* no registered entry leaves it so (tested) */
    PCB_COST_SAMPLES,         /* FPS, running minima: b n m */
    PCB_COST_SAMPLES_SQUARED, /* FPS recomputed from every sample: b n m^2 / 2 */
    PCB_COST_ALL_PAIRS,       /* NN brute force: b n nq */
    PCB_COST_INDEXED,         /* NN through a spatial index: b (n + nq) log n */
    PCB_COST_CUBIC,           /* EMD on a CPU: b n^3 */
    PCB_COST_GPU_PAIRS        /* EMD on a GPU, 32 pairs at once: ceil(b / 32) n^2.5 */
} pcb_cost;

/* What an NN implementation that keeps its index on the device between
 * searches provides (pcb_nn_index_*, below): build it from a device task's
 * reference, search it for new queries, free it. */
typedef struct {
    int (*build)(const pcb_task *task, int32_t *finite, void **state);
    int (*query)(void *state, const float *query, int64_t nq, pcb_result *out, void *stream);
    void (*release)(void *state);
} pcb_index_ops;

/* An implementation is one table entry. The life cycle separates what a
 * benchmark must not time from what it times:
 *   prepare  - allocate, upload inputs, build indexes (state is private);
 *   compute  - the work itself, inputs resident where the implementation
 *              keeps them; for CUDA it returns after the work is queued on
 *              the state's stream, sync() waits for it;
 *   fetch    - copy results to host arrays;
 *   release  - free everything (accepts NULL).
 * compute may be called repeatedly on one prepared state; each call
 * recomputes from the inputs.
 * prepare validates the task against the implementation's limits and says
 * PCB_EUNSUPPORTED when it is outside them. */
typedef struct pcb_impl {
    const char *name;
    pcb_problem problem;
    pcb_device device;
    int exact;               /* 1 exact, 0 approximate by design */
    /* 1: returns the canonical answer (FPS: ties to the lowest index), bit
     * for bit the serial reference's, so verify compares it with dp. */
    int canonical;
    pcb_limits limits;
    pcb_cost cost;
    /* 1: its problem's reference, the serial implementation that timing
     * ratios and the canonical comparison of verify are made against (one
     * entry a problem, tested). */
    int reference;
    /* Approximate EMD implementations: the relative gap to the optimum they
     * promise (verification fails a larger one); 0 = no promise beyond a
     * bijection (the gap is still measured and reported). */
    double max_gap;
    /* 1: it stops where the task's opt.max_gap is certified (cuda_auction),
     * which then is its promise in place of max_gap. */
    int gap_option;
    /* A defect of the original reproduced on purpose (e.g. a forced stop that
     * leaves points unmatched), NULL if none. verify shows answers that fail
     * only through it as "known", reported but not counted as failures. */
    const char *known_defect;
    const char *summary;     /* one line */
    int (*available)(void);  /* PCB_OK, or PCB_EUNAVAIL with a message */
    int (*prepare)(const pcb_task *task, void **state);
    int (*compute)(void *state);
    int (*sync)(void *state);            /* NULL for CPU implementations */
    int (*fetch)(void *state, pcb_result *out);
    void (*release)(void *state);
    int (*counters)(void *state, pcb_counters *out); /* NULL if none */
    /* CUDA only: time the last compute with device events (ms). NULL else. */
    int (*device_ms)(void *state, double *ms);
    /* A device-resident run (task memory PCB_MEM_DEVICE): the whole run
     * queued on the task's stream, results written to out's device arrays,
     * bit for bit the host path's. Scratch memory stays cached between
     * calls of the same sizes (pcb_device_cache_clear frees it). NULL: this
     * implementation runs on host arrays only. */
    int (*run_device)(const pcb_task *task, pcb_result *out);
    /* NN: an index kept on the device between searches; NULL if none. */
    const pcb_index_ops *device_index;
} pcb_impl;

/* ---- registry --------------------------------------------------------- */
/* All implementations that were built, NULL-terminated, in speed order
 * within a problem (fastest first). */
const pcb_impl *const *pcb_registry(void);
const pcb_impl *pcb_find(pcb_problem p, const char *name);
/* The problem's reference (pcb_impl.reference), NULL if none was built. */
const pcb_impl *pcb_reference(pcb_problem p);
/* Implementations of the project that were not built here (CUDA ones
 * without nvcc, FLANN's without libflann-dev), ended by one whose name is
 * NULL. */
typedef struct {
    const char *problem; /* "fps", "nn", "emd" */
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
/* Check a task against an implementation's limits. */
int pcb_task_fits(const pcb_impl *impl, const pcb_task *t);
/* How many answers a task has, the length of pcb_result.index: FPS batch*m,
 * NN batch*nq, EMD batch*n (0 for a task of no known problem). */
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
/* Whole life cycle: check, prepare, compute, sync, fetch, release. */
int pcb_run(const pcb_impl *impl, const pcb_task *t, pcb_result *out,
            pcb_counters *counters /* may be NULL */);
/* The fastest available exact implementation that accepts the task. */
int pcb_best(const pcb_task *t, const pcb_impl **out);
/* The fastest available implementation of `device` that accepts the task
 * (a device-resident task: one with run_device) and whose answers are
 * verified right: exact, or an EMD certified within a promised gap. */
int pcb_choose(const pcb_task *t, pcb_device device, const pcb_impl **out);
/* An implementation's name (for bindings that hold pcb_impl opaque). */
const char *pcb_impl_name(const pcb_impl *impl);
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
 * waits for the work queued with it. Nothing to do without CUDA. */
void pcb_device_cache_clear(void);

/* ---- simple entry points: fastest available verified exact ----------- */
int pcb_fps(const float *xyz, int64_t batch, int64_t n, int64_t m,
            int64_t start, int32_t *idx);
int pcb_nn(const float *ref, int64_t n, const float *query, int64_t nq,
           int64_t batch, int32_t *idx, float *dist2);
int pcb_emd(const float *a, const float *b, int64_t batch, int64_t n,
            int32_t *match, double *value);

/* ---- validation (double precision, accepts every correct answer) ------ */
typedef struct {
    int ok;              /* 1 when the answer is correct (or, for approximate
                            implementations, within their stated tolerance) */
    char detail[256];    /* the first problem found, or a short summary */
    double recall;       /* NN: share of queries answered exactly; -1 n/a */
    double worst_ratio;  /* NN: worst returned/true distance ratio; -1 n/a */
    double gap;          /* EMD: (cost - optimum) / optimum; -1 if not computed */
    double bound;        /* EMD: certified bound (P - D) / D; -1 n/a */
    int64_t unmatched;   /* EMD: points left unmatched */
} pcb_report;

/* Validate a result against the task; exact = whether to demand an exact
 * answer. Returns PCB_OK when validation ran (see rep->ok for the verdict).
 *   FPS: implemented in impl/fps/fps_validate.c
 *   NN:  impl/nn/nn_validate.c   EMD: impl/emd/emd_validate.c */
int pcb_fps_validate(const pcb_task *t, const pcb_result *r, pcb_report *rep);
int pcb_nn_validate(const pcb_task *t, const pcb_result *r, int exact, pcb_report *rep);
/* EMD: max_gap is the relative gap to the optimum (and certified bound)
 * allowed: 0 demands the exact optimum (within 1e-9, rounding), as exact = 1
 * does; PCB_EMD_ANY_GAP a bijection only. Negative or NaN: PCB_EINVAL.
 * (pcb_impl's max_gap of 0, "no promise", reaches it as PCB_EMD_ANY_GAP.) */
#define PCB_EMD_ANY_GAP HUGE_VAL
int pcb_emd_validate(const pcb_task *t, const pcb_result *r, int exact, double max_gap,
                     pcb_report *rep);
/* The certified bound of every pair of an EMD answer with prices, in double
 * precision: bound[p] = (P - D) / D for the matching's mean cost P and the
 * dual bound D = mean_i min_j (c_ij + p_j) - mean_j p_j (raised to 0); 0
 * when both are 0, HUGE_VAL when D is 0 alone; NAN for a pair that is not a
 * bijection. O(n^2) a pair. */
int pcb_emd_bound(const pcb_task *t, const pcb_result *r, double *bound);

/* ---- the judge: every rule, one verdict (impl/judge.c) --------------- */
/* What an answer is held to. From an implementation (pcb_promise_of): its
 * exact flag, its max_gap (0, no promise, becomes PCB_EMD_ANY_GAP; the
 * task's opt.max_gap instead where the implementation has gap_option and
 * the task sets one), canonical unless it is the reference itself, its known
 * defect. For an answer made elsewhere (pcbench check): exact, or the
 * max_gap the user allows. */
typedef struct {
    int exact;        /* NN: every query's true nearest; EMD: the optimum */
    double max_gap;   /* EMD when not exact; PCB_EMD_ANY_GAP: a bijection only */
    int canonical;    /* must equal its problem's reference answer, element for
                         element (FPS: dp's sequence, ties to the lowest index) */
    const char *known_defect; /* unmatched EMD points from it are "known" */
} pcb_promise;
pcb_promise pcb_promise_of(const pcb_impl *impl, const pcb_task *t); /* t may be NULL */

typedef enum {
    PCB_VERDICT_PASS = 0,  /* right, and every promise kept */
    PCB_VERDICT_FAIL = 1,  /* wrong: detail says the first thing wrong */
    PCB_VERDICT_KNOWN = 2  /* wrong only through the promised known defect */
} pcb_verdict;

typedef struct {
    pcb_verdict verdict;
    pcb_report rep;   /* the validator's report (recall, gap, bound, ...) */
    /* The canonical rule: 1 compared with the reference's answer, 0 does not
     * apply, -1 applies but no reference answer was at hand (detail says so). */
    int compared;
    char detail[320]; /* the first thing wrong, or the validator's summary and notes */
} pcb_judgement;

/* The implementation whose answer the canonical rule compares with, when it
 * applies to this task and promise (FPS, canonical promise, the problem's
 * reference built and canonical); NULL when it does not apply. */
const pcb_impl *pcb_judge_reference(const pcb_task *t, const pcb_promise *p);
/* Judge an answer: the problem's validator with the promise's exactness and
 * gap, the canonical comparison with `reference` (that implementation's
 * answer indices for the same task, NULL when not at hand), the known-defect
 * rule. Returns PCB_OK when judging ran (the verdict is in j), else the
 * validator's error (j->detail says it too). */
int pcb_judge(const pcb_task *t, const pcb_result *answer, const pcb_promise *p,
              const int32_t *reference, pcb_judgement *j);
/* pcb_judge with the reference's answer computed here when the rule applies
 * (a run of the reference: dp's time). */
int pcb_judge_full(const pcb_task *t, const pcb_result *answer, const pcb_promise *p,
                   pcb_judgement *j);
/* The validator alone with an implementation's promises (exact, max_gap). */
int pcb_validate(const pcb_impl *impl, const pcb_task *t, const pcb_result *r, pcb_report *rep);

#ifdef __cplusplus
}
#endif
#endif
