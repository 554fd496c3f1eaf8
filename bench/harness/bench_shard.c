/* bench_shard.c - a suite split into N shards that hosts, GPUs or a
 * scheduler's array run apart: which shard this run is (--shard i/N, else
 * the schedulers' variables) and which configurations are its; and the
 * run's selection itself (bench_selected: --problem, --filter, the shard).
 *
 * The assignment reads nothing of the host: each configuration's work is
 * its problem's brute-force size (the face's size(), the same everywhere),
 * capped where the run budget would skip the reference, and the
 * configurations are dealt longest first, each to the shard with the least
 * work so far (ties to the lower shard), over the selected ones in suite
 * order. Every host that selects the same configurations (the same
 * suite, --problem and --filter) deals them alike, so the shards are
 * disjoint and together the selection. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/problems/problems.h"
#include "harness.h"

enum { MAX_SHARDS = 4096 };

/* A whole number from text: all of it, within lo..hi. */
static int whole(const char *text, long lo, long hi, long *out)
{
    if (!text || !*text)
        return 0;
    char *end = NULL;
    errno = 0;
    const long v = strtol(text, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

int bench_shard_parse(const char *text, bench_shard *out)
{
    memset(out, 0, sizeof *out);
    const char *slash = text ? strchr(text, '/') : NULL;
    char first[32];
    long i = 0, n = 0;
    if (!slash || (size_t)(slash - text) >= sizeof first)
        return pcb_fail(PCB_EINVAL, "--shard '%s': need i/N, 1 <= i <= N (as Jest and "
                        "Playwright write it)", text ? text : "");
    memcpy(first, text, (size_t)(slash - text));
    first[slash - text] = '\0';
    if (!whole(slash + 1, 1, MAX_SHARDS, &n) || !whole(first, 1, n, &i))
        return pcb_fail(PCB_EINVAL, "--shard '%s': need i/N with 1 <= i <= N <= %d", text,
                        MAX_SHARDS);
    out->index = (int)i - 1, out->total = (int)n;
    snprintf(out->source, sizeof out->source, "--shard %s", text);
    return PCB_OK;
}

/* A variable's value as a whole number, or 0 when unset; -1 (and the
 * message) when set but not one. */
static int env_whole(const char *name, long lo, long hi, long *out)
{
    const char *v = getenv(name);
    if (!v)
        return 0;
    if (!whole(v, lo, hi, out)) {
        pcb_fail(PCB_EINVAL, "%s=%s: not a whole number in %ld..%ld", name, v, lo, hi);
        return -1;
    }
    return 1;
}

/* Bazel: TEST_SHARD_INDEX (0-based) of TEST_TOTAL_SHARDS; the status file
 * touched says the test runner understands sharding. */
static int from_bazel(bench_shard *out)
{
    long i = 0, n = 0;
    const int hi = env_whole("TEST_SHARD_INDEX", 0, MAX_SHARDS - 1, &i);
    const int hn = env_whole("TEST_TOTAL_SHARDS", 1, MAX_SHARDS, &n);
    if (hi < 0 || hn < 0)
        return -1;
    if (!hi && !hn)
        return 0;
    if (!hi || !hn || i >= n) {
        pcb_fail(PCB_EINVAL, "Bazel's TEST_SHARD_INDEX and TEST_TOTAL_SHARDS: need both, the "
                 "index below the total");
        return -1;
    }
    const char *status = getenv("TEST_SHARD_STATUS_FILE");
    if (status && *status) {
        const int fd = open(status, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0)
            close(fd);
    }
    out->index = (int)i, out->total = (int)n;
    snprintf(out->source, sizeof out->source, "TEST_SHARD_INDEX=%ld of TEST_TOTAL_SHARDS=%ld", i,
             n);
    return 1;
}

/* Slurm's job array: task id over min..max by step, count tasks; an array
 * whose ids are not that progression (--array=1,4,9) cannot be mapped. */
static int from_slurm(bench_shard *out)
{
    long id = 0, lo = 0, hi = 0, step = 1, count = 0;
    const int h = env_whole("SLURM_ARRAY_TASK_ID", 0, 1L << 30, &id);
    if (h <= 0)
        return h;
    if (env_whole("SLURM_ARRAY_TASK_MIN", 0, 1L << 30, &lo) <= 0 ||
        env_whole("SLURM_ARRAY_TASK_MAX", 0, 1L << 30, &hi) <= 0 ||
        env_whole("SLURM_ARRAY_TASK_STEP", 1, 1L << 30, &step) < 0 ||
        env_whole("SLURM_ARRAY_TASK_COUNT", 1, MAX_SHARDS, &count) <= 0) {
        pcb_fail(PCB_EINVAL, "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_MIN, _MAX and "
                 "_COUNT are not all whole numbers (an array job sets them)");
        return -1;
    }
    if (hi < lo || (hi - lo) / step + 1 != count || (hi - lo) % step || id < lo || id > hi ||
        (id - lo) % step) {
        pcb_fail(PCB_EINVAL, "Slurm array task %ld of %ld..%ld step %ld, %ld tasks: not an even "
                 "progression, so not a shard i/N (submit --array=1-N, or give --shard)", id,
                 lo, hi, step, count);
        return -1;
    }
    out->index = (int)((id - lo) / step), out->total = (int)count;
    snprintf(out->source, sizeof out->source, "SLURM_ARRAY_TASK_ID=%ld of %ld..%ld", id, lo, hi);
    return 1;
}

/* Kubernetes' Indexed Job: JOB_COMPLETION_INDEX (0-based); the total is the
 * Job's completions, which only --shards can say. */
static int from_kubernetes(int shards, bench_shard *out)
{
    long i = 0;
    const int h = env_whole("JOB_COMPLETION_INDEX", 0, MAX_SHARDS - 1, &i);
    if (h <= 0)
        return h;
    if (shards <= 0) {
        pcb_fail(PCB_EINVAL, "JOB_COMPLETION_INDEX=%ld: give --shards N (the Job's "
                 "completions), which the environment does not say", i);
        return -1;
    }
    if (i >= shards) {
        pcb_fail(PCB_EINVAL, "JOB_COMPLETION_INDEX=%ld is not below --shards %d", i, shards);
        return -1;
    }
    out->index = (int)i, out->total = shards;
    snprintf(out->source, sizeof out->source, "JOB_COMPLETION_INDEX=%ld of --shards %d", i,
             shards);
    return 1;
}

int bench_shard_from_env(int shards, bench_shard *out)
{
    memset(out, 0, sizeof *out);
    int (*const sources[])(bench_shard *) = {from_bazel, from_slurm};
    for (size_t s = 0; s < sizeof sources / sizeof sources[0]; s++) {
        const int h = sources[s](out);
        if (h)
            return h < 0 ? PCB_EINVAL : PCB_OK;
    }
    const int h = from_kubernetes(shards, out);
    if (h)
        return h < 0 ? PCB_EINVAL : PCB_OK;
    if (shards > 0)
        return pcb_fail(PCB_EINVAL, "--shards %d without JOB_COMPLETION_INDEX: give --shard i/N",
                        shards);
    return PCB_OK; /* total 0: the whole selection */
}

typedef struct {
    double work;
    int at;
} dealt;

static int longest_first(const void *pa, const void *pb)
{
    const dealt *a = pa, *b = pb;
    if (a->work != b->work)
        return a->work > b->work ? -1 : 1;
    return (a->at > b->at) - (a->at < b->at);
}

int bench_shard_assign(const bench_config *const *configs, int count, int shards, double cap,
                       int *shard)
{
    dealt *order = calloc((size_t)(count > 0 ? count : 1), sizeof *order);
    double *load = calloc((size_t)(shards > 0 ? shards : 1), sizeof *load);
    if (!order || !load) {
        free(order), free(load);
        return pcb_fail(PCB_ENOMEM, "out of memory");
    }
    for (int i = 0; i < count; i++)
        order[i] = (dealt){fmin(bench_face(configs[i]->problem)->size(configs[i]), cap), i};
    qsort(order, (size_t)count, sizeof *order, longest_first);
    for (int i = 0; i < count; i++) {
        int least = 0;
        for (int s = 1; s < shards; s++)
            if (load[s] < load[least])
                least = s;
        shard[order[i].at] = least;
        load[least] += order[i].work;
    }
    free(order), free(load);
    return PCB_OK;
}

/* Chosen by --problem and --filter (a shard deals these). */
static int by_name(const bench_opts *o, const bench_config *c)
{
    return bench_listed(o->problems, pcb_problem_name(c->problem)) &&
           bench_filtered(o->filter, c->id);
}

int bench_selected(const bench_opts *o, const bench_config *c)
{
    return by_name(o, c) && (!o->shard_mine || o->shard_mine[c - o->shard_base]);
}

int bench_shard_select(bench_opts *o, const bench_suite *suite)
{
    o->shard_mine = NULL, o->shard_selected = o->shard_count = 0;
    if (o->shard.total <= 0)
        return PCB_OK;
    const bench_config **chosen = calloc((size_t)suite->count + 1, sizeof *chosen);
    int *shard = calloc((size_t)suite->count + 1, sizeof *shard);
    o->shard_mine = calloc((size_t)suite->count + 1, 1);
    if (!chosen || !shard || !o->shard_mine) {
        free(chosen), free(shard), bench_shard_release(o);
        return pcb_fail(PCB_ENOMEM, "out of memory");
    }
    int n = 0;
    for (int i = 0; i < suite->count; i++) {
        const bench_config *c = &suite->configs[i];
        if (by_name(o, c))
            chosen[n++] = c;
    }
    /* a reference runs at most 4 run budgets, at about 1e9 pairs a second:
     * past that a configuration's brute force is skipped, not run */
    const double budget = o->have_run_budget ? o->run_budget : suite->run_budget;
    int rc = bench_shard_assign(chosen, n, o->shard.total, 4 * budget * 1e9, shard);
    for (int j = 0; rc == PCB_OK && j < n; j++)
        if (shard[j] == o->shard.index) {
            o->shard_mine[chosen[j] - suite->configs] = 1;
            o->shard_count++;
        }
    o->shard_base = suite->configs, o->shard_selected = n;
    free(chosen), free(shard);
    if (rc != PCB_OK)
        bench_shard_release(o);
    return rc;
}

void bench_shard_release(bench_opts *o)
{
    free(o->shard_mine);
    o->shard_mine = NULL;
}
