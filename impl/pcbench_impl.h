/* pcbench_impl.h - libpcbench for implementation authors: the table entry
 * (pcb_impl) an implementation is, its limits, cost model and promise, the
 * device-index operations, and the helpers its checks use (pcb_fail,
 * pcb_max_abs). One file an implementation, one entry in registry_list.h.
 */
#ifndef PCBENCH_IMPL_H
#define PCBENCH_IMPL_H

#include <math.h> /* HUGE_VAL */

#include "pcbench.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* Limits; 0 means none. */
typedef struct {
    int64_t max_n;
    int64_t max_m;
    int64_t max_batch;
    int64_t max_k; /* kNN neighbours a query */
    /* A preference, not a limit: pcb_best and pcb_choose take it up to this
     * many points a cloud, and beyond only when nothing registered after it
     * fits (a faster one for larger clouds follows it); 0: any it accepts. */
    int64_t best_max_n;
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
 * searches provides (pcb_nn_index_* of pcbench.h): build it from a device
 * task's reference, search it for new queries, free it. */
typedef struct {
    int (*build)(const pcb_task *task, int32_t *finite, void **state);
    int (*query)(void *state, const float *query, int64_t nq, pcb_result *out, void *stream);
    void (*release)(void *state);
} pcb_index_ops;

/* No gap promised: an EMD answer need only be a bijection. */
#define PCB_EMD_ANY_GAP HUGE_VAL

/* What an answer is held to: an implementation declares its own
 * (pcb_impl.promise, resolved for a task by pcb_promise_of); for an answer
 * made elsewhere (pcbench check): exact, or the max_gap the user allows. */
typedef struct {
    int exact;        /* NN: every query's true nearest; EMD: the optimum */
    double max_gap;   /* EMD when not exact; PCB_EMD_ANY_GAP: a bijection only */
    int canonical;    /* must equal its problem's reference answer, element for
                         element (FPS: dp's sequence, ties to the lowest index;
                         kNN: naive's rows, ascending, ties to the lower index;
                         ball: naive's rows in the selection's order) */
    const char *known_defect; /* what its unmatched EMD points or repeated FPS
                                 samples come from: "known", not a failure */
} pcb_promise;

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
struct pcb_impl {
    const char *name;
    pcb_problem problem;
    pcb_device device;
    /* What its answers are held to: exact (1) or approximate by design (0);
     * canonical (FPS: ties to the lowest index, bit for bit the serial
     * reference's, so verify compares it with dp); for approximate EMD the
     * relative gap to the optimum it promises (verification fails a larger
     * one; 0 here: no promise beyond a bijection, PCB_EMD_ANY_GAP to the
     * judge, the gap still measured and reported); a known defect of the
     * original reproduced on purpose (e.g. a forced stop that leaves points
     * unmatched), whose answers verify shows as "known", reported but not
     * counted as failures. pcb_promise_of resolves it for a task. */
    pcb_promise promise;
    pcb_limits limits;
    pcb_cost cost;
    /* 1: its problem's reference, the serial implementation that timing
     * ratios and the canonical comparison of verify are made against (one
     * entry a problem, tested). */
    int reference;
    /* 1: it stops where the task's opt.max_gap is certified (cuda_auction),
     * which then is its promise in place of promise.max_gap. */
    int gap_option;
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
    /* 1: it reads a ragged task's lengths itself: run_device on device
     * memory, prepare (which uploads them) and compute on host memory. The
     * others take a ragged host task cloud by cloud (pcb_each_*) and no
     * ragged device task. */
    int ragged;
    /* 1: it takes an EMD warm start (pcb_task.warm); the others say
     * PCB_EUNSUPPORTED to a task that carries one. */
    int warm_start;
    /* 1: its device runs write pcb_result.index64 when given; the others
     * say PCB_EUNSUPPORTED to a result that has one. */
    int index64;
};

/* A ragged host task cloud by cloud through impl's life cycle (an
 * implementation that does not read lengths): each non-empty cloud its own
 * task and state, every phase over all of them; fetch writes each cloud's
 * answer where the equal-size layout puts it, padding around it, and an
 * empty pair's values (ragged.c). pcb_run runs it whole for such an
 * implementation; the harness times its phases. device_ms: the clouds'
 * device times summed. */
typedef struct pcb_each pcb_each;
int pcb_each_prepare(const pcb_impl *impl, const pcb_task *t, pcb_each **out);
int pcb_each_compute(pcb_each *e);
int pcb_each_sync(pcb_each *e);
int pcb_each_fetch(pcb_each *e, pcb_result *out);
int pcb_each_counters(pcb_each *e, pcb_counters *out);
int pcb_each_device_ms(pcb_each *e, double *ms);
void pcb_each_release(pcb_each *e);


/* The problem's reference (pcb_impl.reference), NULL if none was built. */
const pcb_impl *pcb_reference(pcb_problem p);
/* Check a task against an implementation's limits. */
int pcb_task_fits(const pcb_impl *impl, const pcb_task *t);
/* 1 when the task carries an EMD warm start (pcb_task.warm). */
int pcb_task_warm(const pcb_task *t);
/* 1 when the task's queries are its reference (b is a, as many points and
 * the same lengths): a self-kNN as DGCNN calls it, which may build one
 * index for both sides. */
int pcb_task_self(const pcb_task *t);

#ifdef __cplusplus
}
#endif
#endif
