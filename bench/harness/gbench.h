/* gbench.h - the C face of Google Benchmark (bench/gbench_shim.cc).
 *
 * The C side describes a list of benchmarks (name, callback, clock,
 * iterations, repetitions); pcb_gb_run registers them, runs them with their
 * repetitions randomly interleaved, hands every repetition's per-iteration
 * times back through a sink and returns Google Benchmark's JSON report. A
 * callback drives its loop with pcb_gb_keep_running(). Without
 * libbenchmark-dev, pcb_gb_run says PCB_EUNAVAIL. */
#ifndef PCB_GBENCH_H
#define PCB_GBENCH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pcb_gb_state pcb_gb_state; /* a benchmark::State */

enum {
    PCB_GB_REAL = 0,  /* wall clock, plus the whole process's CPU time */
    PCB_GB_MANUAL = 1 /* the callback reports each iteration's time */
};

typedef struct {
    const char *name;
    void (*fn)(pcb_gb_state *st, void *arg);
    void *arg;
    int clock;
    int64_t iterations;
    int repetitions;
} pcb_gb_bench;

/* One repetition of one benchmark, times per iteration. */
typedef struct {
    int bench; /* index into the list */
    int64_t repetition, iterations;
    double real_s, cpu_s;
    const char *error; /* NULL, or the message the callback gave */
} pcb_gb_sample;

typedef void (*pcb_gb_sink)(const pcb_gb_sample *s, void *ctx);

/* PCB_OK when Google Benchmark was built in, else PCB_EUNAVAIL + message. */
int pcb_gb_available(void);
/* Run the list; *json receives the report (malloc'ed, the caller frees). */
int pcb_gb_run(const pcb_gb_bench *list, int count, pcb_gb_sink sink, void *ctx, char **json);
void pcb_gb_shutdown(void);

int pcb_gb_keep_running(pcb_gb_state *st);
void pcb_gb_pause(pcb_gb_state *st);
void pcb_gb_resume(pcb_gb_state *st);
void pcb_gb_set_iteration_time(pcb_gb_state *st, double seconds);
/* per_second: value is per iteration, reported as a rate. */
void pcb_gb_counter(pcb_gb_state *st, const char *name, double value, int per_second);
void pcb_gb_error(pcb_gb_state *st, const char *message);

#ifdef __cplusplus
}
#endif
#endif
