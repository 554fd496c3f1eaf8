/* bench_run.h - shared by bench_run.c, bench_time.c, bench_predict.c and the
 * leaves they use (bench_outputs.c, bench_status.c).
 *
 * Figures per implementation and configuration:
 *   compute - inputs already prepared (uploaded, indexed): compute (+ sync)
 *             only; CUDA implementations report their device event time;
 *   compute_cold - the same with the caches flushed before every iteration
 *             (the GPU's L2 always; the CPU's with --cpu-cold);
 *   e2e     - host arrays to host results: prepare, compute, sync, fetch,
 *             release, wall clock (transfers, index builds, allocation).
 * compute() is called repeatedly on one prepared state; after timing, the
 * result is fetched again and must still be correct. */
#ifndef PCB_BENCH_RUN_H
#define PCB_BENCH_RUN_H

#include "harness.h"

/* The result arrays of one run (pcb_result_alloc) and their sizes. */
typedef struct {
    pcb_result r;
    size_t count, batch;
} outputs;

int bench_outputs_alloc(outputs *o, const pcb_task *t);
void bench_outputs_free(outputs *o);
/* A pcb_result over o, its indices poisoned: fetch must write them all. */
pcb_result bench_outputs_result(outputs *o);

void bench_set_status(bench_entry *e, bench_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* The status of a failed library call. */
bench_status bench_status_for(int rc);

/* An implementation verified and about to be timed. */
typedef struct {
    const bench_ctx *ctx;
    const pcb_impl *im;
    const pcb_task *task; /* the timing task (maybe fewer threads) */
    bench_entry *e;
    outputs verified, scratch;
    pcb_promise promise;     /* what verified was judged against, */
    pcb_judgement judgement; /* and how (an equal answer takes its report) */
    double slow; /* planted slowdown (PCBENCH_FAULT), 1 = none */
    int64_t computes; /* computes timed so far, for fractional slowdowns */
    int manual, warmup;
    double points, pairs;
    bench_status fail_status; /* ST_NONE while all is well */
    char fail_msg[300];
} timed;

/* An implementation's life cycle as the harness runs it (bench_life.c): its
 * own phases, or pcb_each's where the task is ragged and it does not read
 * lengths (one cloud at a time: the sum of single-cloud runs). */
int bench_life_each(const pcb_impl *im, const pcb_task *t);
int bench_life_prepare(const pcb_impl *im, const pcb_task *t, void **state);
int bench_life_compute(const pcb_impl *im, const pcb_task *t, void *state);
int bench_life_sync(const pcb_impl *im, const pcb_task *t, void *state); /* OK without sync */
int bench_life_fetch(const pcb_impl *im, const pcb_task *t, void *state, pcb_result *out);
/* -1 counters where it counts nothing */
int bench_life_counters(const pcb_impl *im, const pcb_task *t, void *state, pcb_counters *out);
int bench_life_device_ms(const pcb_impl *im, const pcb_task *t, void *state, double *ms);
void bench_life_release(const pcb_impl *im, const pcb_task *t, void *state);

/* Time the verified implementations of r's configuration together. */
void bench_time_all(bench_ctx *ctx, bench_result *r, timed *tv, int nt);

/* Seconds one run of im on cfg should take; negative when unknown. */
double bench_predict(bench_ctx *ctx, const pcb_impl *im, const bench_config *cfg);

#endif
