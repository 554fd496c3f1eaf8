/* harness.h - the benchmark harness behind `pcbench bench` and `pcbench
 * count` (their options and summaries: ../cli/bench.c, ../cli/count.c).
 *
 *   bench_suites.c   the suites (seed, full, quick), their data, selections;
 *                    each problem's configurations come from its face
 *                    (../problems/), which adds them with bench_config.c
 *   bench_run.c      one configuration: check, predict, verify (the judge)
 *   bench_time.c     timing with Google Benchmark (gbench_shim.cc, optional.c)
 *   bench_life.c     an implementation's phases, or one cloud at a time on a
 *                    ragged batch it does not read the lengths of
 *   bench_predict.c  references, stored results that are final, run-time prediction
 *   bench_store.c    results files: paths, an entry's fields, read back, resume
 *                    (json.c); bench_store_write.c writes and merges them
 *   bench_gate.c     the regression gate and comparisons between runs
 *   bench_count.c    instruction counts under callgrind
 *   bench_env.c      the environment record and the machine name
 *   leaves, calling nothing of the above: bench_clock.c (clocks, progress),
 *   bench_stats.c (a figure's statistics, its noise), bench_nvml.c (the GPU's
 *   clocks and throttling), bench_status.c, bench_outputs.c, bench_files.c,
 *   bench_fault.c (PCBENCH_FAULT), bench_mwu.c (Mann-Whitney, Hodges-Lehmann)
 */
#ifndef PCB_HARNESS_H
#define PCB_HARNESS_H

#include <stdio.h>

#include "impl/pcbench_judge.h"
#include "json.h"

/* ---- configurations and suites ------------------------------------------ */
typedef struct {
    pcb_problem problem;
    const char *dataset; /* generator kind; NN "lidar" is a pair of sensor poses */
    int64_t batch, n, nq, m;
    int64_t k;           /* kNN: neighbours a query */
    int self;            /* kNN: the queries are the reference clouds (self-kNN); ball:
                            the centres are the first nq points of each cloud */
    double radius;       /* ball */
    double cell;         /* grid, serialize: a voxel's size along every axis */
    int32_t curve;       /* serialize: a pcb_curve */
    int32_t depth;       /* serialize: bits an axis (0: the least that holds the batch) */
    int32_t select;      /* ball: a pcb_ball_select */
    double max_gap;      /* EMD: the certified gap asked of implementations with a
                            gap option (loss mode), 0 = their own promise */
    int64_t shortest;    /* a ragged batch (PyTorch3D's layout: padded clouds and
                            lengths): cloud lengths evenly from shortest to n
                            (bench_cloud_length); 0 = clouds of equal sizes */
    char id[96];         /* "fps/uniform/b6/n10000/m1000", "emd/sphere/b32/n1024/gap0.01",
                            "knn/sphere/b32/n1024/self/k16", "knn/uniform/b16/n1024/q4096/k3",
                            "ball/uniform/b32/n1024/q512/r0.2/k32/first",
                            "fps/lidar/b8/n120000/m4096/ragged" */
} bench_config;

typedef struct {
    const char *name;
    const char *about;
    bench_config *configs;
    int count;
    int reps;           /* samples per CPU figure at least (GPU figures: 10) */
    double rep_seconds; /* target length of one sample (repetition) */
    double figure_seconds; /* time limit of one figure once it has its minimum */
    double run_budget;  /* default per-run budget: longer runs are skipped, seconds */
    double budget;      /* default budget of the whole run, seconds (0: none) */
    int threads;        /* OpenMP threads while timing, 0 = all */
} bench_suite;

/* A suite's configurations as the problems' faces add them (bench_config.c). */
typedef struct {
    bench_config *v;
    int count, cap;
} bench_config_list;
/* A configuration appended to l: its problem, dataset and sizes, the rest
 * zero, its id still to write; NULL when out of memory (said). */
bench_config *bench_config_add(bench_config_list *l, pcb_problem p, const char *dataset,
                               int64_t batch, int64_t n, int64_t nq, int64_t m);
/* A configuration of a pair of clouds, its id "<problem>/<dataset>/b../n../q.."
 * (NN's, chamfer's). */
bench_config *bench_config_pair(bench_config_list *l, pcb_problem p, const char *dataset,
                                int64_t batch, int64_t n, int64_t nq);
/* c made ragged: its clouds evenly from shortest points to all n; its id
 * ends "/ragged". */
void bench_config_ragged(bench_config *c, int64_t shortest);
/* A problem's own maker of a pair configuration (its id written). */
typedef bench_config *(*bench_config_pair_fn)(bench_config_list *l, const char *dataset,
                                              int64_t batch, int64_t n, int64_t nq);
/* The training batches pairs are timed at (NN, chamfer): 8-32 clouds of
 * 1k-16k points, uniform and object-like (sphere surfaces), and one cloud
 * of the smallest and largest for comparison, each made by add. */
int bench_config_training(bench_config_list *l, bench_config_pair_fn add);

int bench_suite_get(const char *name, bench_suite *out); /* PCB_EINVAL if unknown */
void bench_suite_free(bench_suite *s);
const char *bench_suite_names(void);

/* The clouds of one configuration (batch x n x 3 and batch x nq x 3); a
 * ragged one's lengths (the padding is zeros), else NULL. */
typedef struct {
    float *a, *b;
    int64_t *lengths_a, *lengths_b;
} bench_data;

/* The length of cloud i of side 0 (a) or 1 (b: queries, second clouds) of c:
 * n or nq, or in a ragged configuration evenly from the shortest to all of
 * it (a second side's lengths run the other way, so a pair's sizes differ;
 * self-kNN's queries are the cloud itself). */
int64_t bench_cloud_length(const bench_config *c, int side, int64_t i);

int bench_data_make(const bench_config *c, bench_data *d);
/* The tuning options the tool takes from the environment (bench_env.c; the
 * library reads none): PCBENCH_FPS_WARPS, PCBENCH_FPS_CTAS,
 * PCBENCH_FPS_DENSE=0, PCBENCH_EMD_CTAS, PCBENCH_EMD_START=zero, and the
 * judge's PCB_EMD_GAP_MAX_N (0: never). */
void bench_tuning_env(pcb_options *o);
/* The task of configuration c on its clouds d (bench_suites.c), with the
 * environment's tuning. */
pcb_task bench_task_of(const bench_config *c, const bench_data *d);
void bench_data_free(bench_data *d);
/* The clouds of c as binary PLY files DIR/a-<i>.ply (and b-<i>.ply: NN
 * queries, EMD's second clouds), i over the batch, so other programs time
 * and answer the very inputs the harness uses (scripts/peers/). */
int bench_data_write(const bench_config *c, const char *dir);

/* ---- results -------------------------------------------------------------- */
typedef enum {
    ST_NONE = 0,
    ST_OK,
    ST_FAILED_VERIFY,
    ST_FAILED_RUN,
    ST_UNSUPPORTED,
    ST_SKIPPED_BUDGET,
    ST_UNAVAILABLE
} bench_status;

const char *bench_status_name(bench_status s);
bench_status bench_status_parse(const char *s);

enum { MAX_SAMPLES = 100, MAX_DROPPED = 32 };
enum { BENCH_STAGES = 4 }; /* an end-to-end run: prepare, compute, fetch, release */
extern const char *const bench_stage_names[BENCH_STAGES];

/* The GPU's state over one sample (bench_nvml.c); NAN where unknown. */
typedef struct {
    float sm_mhz, mem_mhz; /* the lower of the readings before and after */
    float temp_c, power_w; /* the higher */
    unsigned long long reasons; /* NVML's clock-event (throttle) reasons, either reading */
} bench_gpu_state;

/* One timing figure: per-repetition times per iteration, in seconds. A
 * sample taken while the GPU's SM clock was under the threshold is dropped:
 * kept apart, out of every statistic. */
typedef struct {
    int reps;          /* samples kept */
    int dropped;       /* samples dropped (the first MAX_DROPPED are stored) */
    int64_t iterations;
    const char *clock; /* "real", "device", or "verification run" */
    int have_gpu;      /* gpu[] and dropped_gpu[] hold the GPU's state */
    double sample[MAX_SAMPLES], cpu[MAX_SAMPLES];
    bench_gpu_state gpu[MAX_SAMPLES];
    double dropped_sample[MAX_DROPPED];
    bench_gpu_state dropped_gpu[MAX_DROPPED];
    double median, mean, stddev, cv, min, cpu_median;
    double noise;      /* relative standard error of the median (bench_stats.c) */
    double seconds;    /* wall time spent taking the samples */
    char stop[16];     /* why sampling stopped: noise, time, budget, samples, fixed */
    int unreliable;    /* more samples dropped than kept */
    /* End-to-end figures: where a run's wall time goes (prepare, compute,
     * fetch, release), summed over stage_runs timed runs. */
    double stage_s[BENCH_STAGES];
    int64_t stage_runs;
} bench_figure;

/* A figure of one sample: the verification run itself, for a run too long
 * to repeat within its budget. */
void bench_figure_from_run(bench_figure *f, double seconds);
/* Add a sample: kept, or dropped when throttled (gpu may be NULL). */
void bench_figure_add(bench_figure *f, double real_s, double cpu_s, const bench_gpu_state *gpu,
                      int throttled);
/* The relative standard error of the median of v (n values): half the width
 * of the distribution-free 95% interval of the median, over 1.96, over the
 * median; NAN under 3 values. */
double bench_noise(const double *v, int n);

typedef struct {
    char impl[48];
    pcb_device device;
    int exact;
    bench_status status;
    char detail[400];
    pcb_report rep;
    int have_rep;
    double prepare_s, compute_s, fetch_s, total_s; /* the verification run */
    pcb_counters counters;
    bench_figure compute, compute_cold, e2e; /* compute_cold: caches flushed first */
    double predicted_s, budget_s;
    char when[32], git[48];
    char build[24], host[24]; /* what measured it, where (bench_env's) */
    char gpu_bus[32]; /* a CUDA one: the PCI bus id of the GPU that ran it */
    int fresh; /* measured by this invocation */
} bench_entry;

typedef struct {
    bench_config config;
    char reference[48];
    char machine[80];     /* where a stored result was measured ("" unknown) */
    char cpu[128], gpu[256]; /* the models its file says measured it ("" unknown) */
    bench_entry *entries;
    int count;
    json gbench; /* arrays of Google Benchmark reports, one per timing run */
    double load_avg; /* 1-minute load average when timing started, -1 unknown */
} bench_result;

/* ---- whether one figure's samples differ from another's (bench_mwu.c) ---- */
typedef struct {
    double u;         /* Mann-Whitney U of b: pairs with b_j > a_i, ties a half */
    double p;         /* two-sided p-value */
    int exact;        /* 1: exact distribution (no ties, a sample under 8); 0: normal */
    double ratio;     /* Hodges-Lehmann: the median of the ratios b_j / a_i */
    double lo, hi;    /* its 1 - alpha interval; NAN when the samples are too few */
} bench_mwu;
int bench_mwu_test(const double *a, int na, const double *b, int nb, double alpha,
                   bench_mwu *out);

/* ---- the GPU's state around samples (bench_nvml.c) -------------------------- */
/* Load NVML and find CUDA's device 0 in it, once: PCB_OK, or PCB_EUNAVAIL
 * with a message beginning "no NVML" (PCBENCH_NVML names the library). */
int bench_nvml_open(void);
const char *bench_nvml_status(void); /* what bench_nvml_open found, in words */
double bench_nvml_max_sm_mhz(void);  /* NAN without NVML */
int bench_nvml_read(bench_gpu_state *s);
void bench_nvml_close(void);
/* NVML's reason bits as names: "sw-power-cap,hw-slowdown"; "" for none. */
void bench_gpu_reasons_text(unsigned long long reasons, char *buf, size_t len);
bench_gpu_state bench_gpu_span(const bench_gpu_state *before, const bench_gpu_state *after);
/* 1 when the state's SM clock is under threshold x the maximum. */
int bench_gpu_throttled(const bench_gpu_state *s, double max_sm_mhz, double threshold);

/* ---- when to stop sampling a figure (bench_time.c) ------------------------------ */
typedef struct {
    int kept, dropped;      /* samples so far */
    double noise, target;   /* bench_noise of the kept ones; the target (0: fixed count) */
    int min, max;           /* samples wanted at least, at most */
    double spent, limit;    /* seconds spent on the figure; its limit */
    double per_sample;      /* seconds one more sample costs */
    int budget_bound;       /* the limit is the run budget's share, not the figure time */
} bench_sampling;

/* How many more samples to take in the next round (at most as many as are
 * kept, so the estimate of the noise catches up), or 0 and why in stop[16]:
 * "noise" (the target reached with the minimum count), "fixed" (a fixed
 * count reached), "samples" (the maximum), "time" or "budget" (no time left
 * for one more), "throttled" (MAX_DROPPED samples dropped). */
int bench_more_samples(const bench_sampling *s, char stop[16]);

bench_entry *bench_result_entry(bench_result *r, const char *impl, int create);
void bench_result_free(bench_result *r);
void bench_figure_stats(bench_figure *f);

/* ---- environment ------------------------------------------------------------ */
typedef struct {
    char machine[80];
    char cpu[128];
    int cores;
    char gpu[256];   /* "" without a usable CUDA device */
    char gpu_bus[32]; /* its PCI bus id, "0000:19:00.0": which of a host's GPUs ("" none) */
    char git[48];    /* short commit, "+dirty" when the tree has changes */
    char build[24];  /* a hash of this pcbench binary: code, flags and toolchain alike */
    char host[24];   /* a hash of this host's id (/etc/machine-id, else its name) and GPU driver */
    char when[32];   /* UTC, ISO 8601 */
    char *json;      /* the whole record as a JSON object */
} bench_env;

int bench_env_collect(bench_env *e, const char *machine_override);
void bench_env_free(bench_env *e);
void bench_utc_now(char *buf, size_t len);

/* ---- shards (bench_shard.c): a suite split over hosts, GPUs or a
 * scheduler's array ---------------------------------------------------------- */
typedef struct {
    int index;       /* 0-based */
    int total;       /* shards; 0: no sharding, the whole selection */
    char source[96]; /* what said so: "--shard 2/4", "SLURM_ARRAY_TASK_ID=3 of 1..8", ... */
} bench_shard;

/* "i/N", 1-based, 1 <= i <= N <= 4096 (Jest's and Playwright's --shard). */
int bench_shard_parse(const char *text, bench_shard *out);
/* Without --shard, the schedulers' variables, the first set of: Bazel's
 * TEST_SHARD_INDEX of TEST_TOTAL_SHARDS (0-based; TEST_SHARD_STATUS_FILE
 * touched), Slurm's SLURM_ARRAY_TASK_ID over _MIN.._MAX by _STEP, _COUNT
 * tasks (an array that is not such a progression refused), Kubernetes'
 * JOB_COMPLETION_INDEX (0-based) of shards (--shards N, required there).
 * total 0 when none is set. */
int bench_shard_from_env(int shards, bench_shard *out);
/* The shard of each of count configurations (shard[i] of configs[i]):
 * longest work first (their problem's brute-force size, at most cap, the
 * same on every host), each to the shard with the least so far, ties to the
 * lower shard and to the earlier configuration. */
int bench_shard_assign(const bench_config *const *configs, int count, int shards, double cap,
                       int *shard);

/* ---- several GPUs of one host (bench_devices.c) ------------------------------ */
enum { BENCH_MAX_DEVICES = 64 };
typedef struct {
    char id[BENCH_MAX_DEVICES][48];      /* as given: "0", "GPU-5d3c..." */
    char visible[BENCH_MAX_DEVICES][48]; /* what the shard's CUDA_VISIBLE_DEVICES says */
    int count;
} bench_devices;
/* "0,1,2,3" (CUDA ordinals as this process numbers them, or GPU-/MIG-
 * UUIDs), or "all": each once; an ordinal past the devices seen refused. */
int bench_devices_parse(const char *text, bench_devices *out);

/* ---- options and the run of one configuration ------------------------------ */
typedef struct {
    const char *suite, *problems, *impls, *filter, *results_dir, *machine;
    const char *regress_dir, *baseline_out, *compare_dir, *inputs_dir;
    double budget;         /* seconds for the whole run, spread over its configurations */
    double run_budget;     /* skip runs predicted to take longer, seconds */
    double tolerance, max_time, alpha;
    double target_noise;   /* stop a figure when its noise is under this (fraction) */
    double figure_time;    /* seconds one figure may take, unless its minimum needs more */
    double throttle;       /* drop GPU samples under this fraction of the maximum SM clock */
    int reps;              /* fixed sample count (min = max = reps, no noise target), 0: no */
    int min_reps;          /* at least this many samples (0: GPU 10, CPU the suite's reps) */
    int threads, cpu_cold, force, list_only, have_budget, have_run_budget, have_tolerance;
    int have_threads;
    int have_figure_time, gate_timing;
    bench_shard shard;     /* this run's part of the selection (total 0: all of it) */
    const bench_config *shard_base; /* bench_shard_select's: the suite's configurations, */
    unsigned char *shard_mine;      /* and which of them are this shard's (NULL: all) */
    int shard_selected, shard_count; /* the selection's size, and this shard's part of it */
    char devices_cpu_impls[4096]; /* --devices: what this process runs after the GPUs' */
} bench_opts;

/* (bench_shard.c) Whether --problem, --filter and the shard select
 * configuration c. */
int bench_selected(const bench_opts *o, const bench_config *c);
/* o->shard's configurations of suite (those --problem and --filter select,
 * dealt by bench_shard_assign), marked for bench_selected; nothing without
 * a shard. bench_shard_release frees the marks. */
int bench_shard_select(bench_opts *o, const bench_suite *suite);
void bench_shard_release(bench_opts *o);
/* (bench_devices.c) --devices: the selection's CUDA implementations dealt
 * into one shard a device and run side by side, one process a GPU (this
 * program with argv less its skipped words, logs in RESULTS/machine/logs),
 * waited for; then o->impls narrowed to the CPU implementations, for this
 * process to run alone. *failed: a shard found a wrong answer. */
int bench_devices_run(bench_opts *o, const bench_suite *suite, const bench_devices *d,
                      const char *machine, int argc, char **argv, const unsigned char *skip,
                      int *failed);

/* Fault injection for the gate's own test (PCBENCH_FAULT, see --help). */
typedef struct {
    char problem[8], impl[48];
    double slow; /* compute repeated this many times on average, 1 = no fault */
    int count;   /* added to every work counter */
    int ties;    /* FPS: the answer breaks ties toward the highest index, on clouds
                    with duplicated points (valid, but not the canonical answer) */
} bench_fault;

int bench_fault_parse(const char *spec, bench_fault *f, int max, int *count);
/* The faults planted in im, together: compute repeats, counter offset, ties. */
bench_fault bench_fault_for(const bench_fault *f, int nfaults, const pcb_impl *im);
/* 1 when a ties fault names problem p: its configurations use clouds with
 * duplicated points (the duplicates generator), for every implementation. */
int bench_fault_ties(const bench_fault *f, int nfaults, pcb_problem p);
/* Overwrite an FPS answer with the sequence that breaks ties to the highest index. */
int bench_fault_plant_ties(const pcb_task *t, int32_t *index);
/* How many computes the k-th iteration (from 0) runs under a slow factor:
 * floor((k+1) s) - floor(k s), so 1.25 runs 1, 1, 1, 2, 1, ... (5 in 4). */
int bench_fault_repeats(double slow, int64_t k);

/* Predicts run times from a calibration point per implementation. */
typedef struct bench_calib bench_calib;
bench_calib *bench_calib_new(void);
void bench_calib_free(bench_calib *c);
void bench_calib_note(bench_calib *c, const pcb_impl *impl, const bench_config *cfg, double s);

typedef struct {
    const bench_opts *opt;
    const bench_suite *suite;
    const bench_env *env;
    bench_calib *calib;
    const bench_fault *faults;
    int nfaults;
    const bench_config *cfg; /* the configuration being run */
    double started; /* monotonic seconds */
    int index, total;
    double cfg_started;  /* when this configuration began, monotonic seconds */
    double expected_end; /* when the run should end, monotonic seconds (0: unknown) */
    /* The session's predictions, per configuration (NULL: none): the
     * verification runs, and the figures' least times (bench_predict_config).
     * The timing of configuration i gets what --budget leaves after the
     * verifications still to come, in proportion to its least time. */
    const double *verify_cost, *timing_cost;
    double verify_scale; /* how the verifications so far went against their
                            predictions (taken over predicted; 0: as predicted) */
    double budget;       /* --budget: seconds for the whole run, 0: none */
} bench_ctx;
/* Seconds the timing of the current configuration may take (bench_time.c),
 * from the budget's remainder; 0 without a budget. */
double bench_timing_allowance(const bench_ctx *ctx);

/* Whether name is in a comma-separated list (NULL: every name is). */
int bench_listed(const char *list, const char *name);
/* Whether a configuration id contains any item of a comma-separated filter
 * (NULL: every id does). */
int bench_filtered(const char *filter, const char *id);
/* Whether an entry is final (not re-run on resume) under these options: its
 * outcome is, the same build measured it on this host (env), and its figures
 * meet what o asks (--reps, --min-reps, --figure-time). */
int bench_entry_final(const bench_entry *e, double budget, const bench_env *env,
                      const bench_opts *o);
/* The serial reference of a problem among the implementations built here. */
const char *bench_reference(pcb_problem p);
/* Seconds configuration r is expected to take at least (bench_predict.c):
 * for each implementation still to run, its verification run (verify_s) and
 * each figure's least time (bench_figure_minimum; timing_s); most_s: the
 * figures' time at most, without a budget. May run small calibrations. */
double bench_predict_config(bench_ctx *ctx, bench_result *r, double *verify_s, double *timing_s,
                            double *most_s);
/* A figure's least time: min samples of at least the sample length, at most
 * the figure time; 0 when one run alone is over twice the figure time (the
 * figure is then the verification run's). */
double bench_figure_minimum(double run_s, int min, double sample_s, double figure_s);
/* An implementation's per-run budget (--run-budget, else the suite's); the
 * problem's reference, which anchors every speedup, may take twice that;
 * impl NULL: the budget itself. */
double bench_run_budget(const bench_ctx *ctx, pcb_problem problem, const char *impl);
/* The samples a figure takes at least, and the seconds it may take. */
int bench_min_samples(const bench_ctx *ctx, const pcb_impl *im);
double bench_figure_time(const bench_ctx *ctx);
/* Run one configuration: the entries of r not final (or all, with force). */
int bench_run_config(bench_ctx *ctx, bench_result *r);

double bench_now(void);
/* The 1-minute load average (/proc/loadavg), -1 where unknown. */
double bench_load_average(void);
/* The heartbeat (bench_clock.c): while a step named by bench_step runs past
 * three times its prediction (and 10 s, PCBENCH_HEARTBEAT seconds), a line
 * says so, then less and less often; bench_step(NULL, 0) ends the step. */
void bench_heartbeat_start(void);
void bench_heartbeat_stop(void);
void bench_step(const char *what, double predicted);
void bench_progress(const bench_ctx *ctx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- files ------------------------------------------------------------------ */
/* A configuration's name in file names: its id with '/' as '-'
 * ("fps-uniform-b6-n10000-m1000"). */
void bench_config_name(const bench_config *c, char name[96]);
/* dir/<suite>/<configuration name>.json */
int bench_store_path(const char *dir, const char *suite, const bench_config *c, char *buf,
                     size_t len);
int bench_store_write(const char *path, const char *suite, const bench_env *env,
                      const bench_result *r);
/* The results files' format version, written as their "format" and checked
 * on every read (scripts/pcbresults.py checks the same string). */
#define BENCH_RESULTS_FORMAT "pcbench-results/1"
/* PCB_EIO (errno ENOENT) when there is no file; PCB_EUNSUPPORTED for a file
 * of another format version (the message names it); the config must match. */
int bench_store_read(const char *path, bench_result *r);
/* One entry as the results file holds it (bench_store.c). */
void bench_entry_put(FILE *f, const bench_entry *e);
/* bench_store_write for a session: under a lock on the results folder, the
 * file is read again and every entry another run stored meanwhile is kept,
 * except those this run measured afresh (fresh), which replace theirs: two
 * runs on one folder never lose each other's figures. */
int bench_store_merge(const char *path, const char *suite, const bench_env *env,
                      const bench_result *r);
int bench_mkdirs(const char *dir);

/* ---- instruction counts (bench_count.c) -------------------------------------- */
/* What instruction counts depend on besides the source: counts are compared
 * only between runs whose toolchains have the same key. */
typedef struct {
    char compiler[96], cflags[256], libc[32];
    char key[96]; /* "gcc-12.2.0_glibc-2.36_<hash of the three>" */
} bench_toolchain;

void bench_toolchain_get(bench_toolchain *t);

typedef struct {
    char config[96], impl[48];
    double instructions; /* per compute */
    int seq;
} bench_icount;

typedef struct {
    bench_toolchain tc;
    char counter[64]; /* "valgrind-3.19.0" */
    bench_icount *v;
    int count;
} bench_icounts;

/* Count every selected CPU implementation of a suite under callgrind (NULL
 * selections mean all; shard, when given, that part of them). PCB_EUNAVAIL
 * when valgrind is missing. */
int bench_count(const char *suite, const char *problems, const char *impls, const char *filter,
                const bench_shard *shard, bench_icounts *out);
/* bench_count runs pcbench count again under callgrind: 1 in that child. */
int bench_count_in_child(void);
/* The child's part: count inside callgrind; the number of implementations
 * that failed, or a negative status (a bad suite or PCBENCH_FAULT). */
int bench_count_child(const char *suite, const char *problems, const char *impls,
                      const char *filter, const bench_shard *shard);
const bench_icount *bench_icounts_find(const bench_icounts *c, const char *config,
                                       const char *impl);
/* dir/instructions/<toolchain key>.json, written atomically. */
int bench_icounts_write(const char *dir, const char *suite, const bench_env *env,
                        const bench_icounts *c);
/* PCB_EIO (errno ENOENT) when dir has no baseline for that toolchain. */
int bench_icounts_read(const char *dir, const char *key, bench_icounts *c);
void bench_icounts_free(bench_icounts *c);

/* ---- gate and comparison ---------------------------------------------------- */
/* 1 when baseline_dir holds a baseline of the suite, else 0 and a message. */
int bench_gate_ready(const char *baseline_dir, const char *suite, FILE *out);
typedef struct {
    const char *baseline_dir;
    const char *machine;         /* where this run is */
    double tolerance;            /* CPU-time ratios */
    double alpha;                /* significance of the timing test */
    int gate_timing;             /* gate those ratios (same machine only) */
    const bench_icounts *counts; /* this run's instruction counts, or NULL */
    const char *counts_why;      /* why there are none */
} bench_gate_opts;

/* Print the regression report; returns the number of regressions. */
int bench_gate(const bench_gate_opts *go, const bench_suite *suite, bench_result *results,
               int count, FILE *out);
/* Compare results' figures with those stored in dir (bench_gate.c says how);
 * returns the number significantly slower, or -1 (pcb_errmsg() says why)
 * where a stored file cannot be read or is of another format version, where
 * nothing was compared, or where a figure's samples are too few for any
 * change to be significant at alpha. */
int bench_compare(const char *dir, const bench_suite *suite, bench_result *results, int count,
                  double tolerance, double alpha, FILE *out);

/* ---- a benchmark session (bench_session.c) ------------------------------------ */
typedef struct {
    const bench_opts *opt;
    const bench_suite *suite;
    bench_env env;
    int have_env;
    char store[1024];       /* where results go; "" for the gate, which stores nothing */
    double run_budget;      /* seconds a run may be predicted to take */
    double budget;          /* seconds for the whole run (0: none) */
    double *verify_cost;    /* each configuration's predicted verification runs, seconds */
    double *timing_cost;    /* and its figures' least times */
    double *timing_most;    /* and their most, without a budget */
    bench_result *res;      /* the selected configurations, stored results read back */
    int count, ran;         /* selected; run (fewer after --max-time) */
    int fresh_configs;      /* configurations this session measured */
    int failed;             /* a run failed or its answer did, or the baseline was not written */
    int regressions;        /* the gate's regressions and the comparison's slower figures */
    bench_calib *calib;
    bench_icounts counts;   /* instruction counts, for the gate and the baseline */
    int counted;
    char counts_why[400];   /* why they were not counted */
} bench_session;

/* The environment, where results go, and the selected configurations with
 * their stored results (resume; they calibrate the predictions).
 * PCB_EINVAL when no configuration is selected, PCB_EUNSUPPORTED when a
 * stored file is of another format version; close it whatever it returns. */
int bench_session_open(bench_session *s, const bench_opts *o, const bench_suite *suite);
/* Run the configurations in order until --max-time, each stored as soon as it
 * is done (a baseline only at the end, whole). */
int bench_session_run(bench_session *s, const bench_fault *faults, int nfaults);
/* The instruction counts, the baseline, the gate and the comparison, their
 * reports to out. PCB_EUNSUPPORTED: the comparison could not be made
 * (bench_compare says why). */
int bench_session_finish(bench_session *s, FILE *out);
void bench_session_close(bench_session *s);

#endif
