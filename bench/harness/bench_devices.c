/* bench_devices.c - `pcbench bench --devices 0,1,2,3`: the several GPUs of
 * one host, one process a GPU.
 *
 * The selection's GPU implementations are dealt into one shard a device
 * (bench_shard_assign, as --shard deals them) and run side by side: each
 * shard is this program again (`bench ... --impl <the GPU ones> --shard
 * j/D`), with CUDA_VISIBLE_DEVICES naming its GPU and its own share of the
 * cores, its output in a log. The shards' configurations are disjoint, so
 * no two processes write one results file. When all have ended, the CPU
 * implementations run in this process alone, on every core, so no GPU
 * process disturbs a CPU figure; their entries merge into the same files.
 * Every CUDA figure records the PCI bus id of the GPU that ran it. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_bench.h"
#include "harness.h"

/* Whether t is a CUDA ordinal: digits only. */
static int is_ordinal(const char *t)
{
    return *t && strspn(t, "0123456789") == strlen(t);
}

/* One token of a comma list: a CUDA ordinal, or a GPU's or MIG's UUID as
 * CUDA_VISIBLE_DEVICES takes them. */
static int token_ok(const char *t)
{
    if (!*t)
        return 0;
    if (is_ordinal(t))
        return strlen(t) <= 4;
    return (!strncmp(t, "GPU-", 4) || !strncmp(t, "MIG-", 4)) &&
           strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-/") ==
               strlen(t);
}

/* The devices this process sees, as CUDA numbers them, named so that a child
 * finds the same one: the parent's CUDA_VISIBLE_DEVICES entry, else the
 * ordinal itself. */
static int visible_name(const char *ordinal, char *out, size_t len)
{
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    if (!vis || !is_ordinal(ordinal)) {
        snprintf(out, len, "%s", ordinal);
        return PCB_OK;
    }
    long want = strtol(ordinal, NULL, 10), at = 0;
    for (const char *p = vis; *p; at++) {
        const size_t w = strcspn(p, ",");
        if (at == want) {
            snprintf(out, len, "%.*s", (int)w, p);
            return PCB_OK;
        }
        p += w + (p[w] == ',');
    }
    return pcb_fail(PCB_EINVAL, "--devices: device %s is not among the %ld of "
                    "CUDA_VISIBLE_DEVICES=%s", ordinal, at, vis);
}

int bench_devices_parse(const char *text, bench_devices *out)
{
    memset(out, 0, sizeof *out);
    if (!text || !*text)
        return pcb_fail(PCB_EINVAL, "--devices: name the GPUs, e.g. 0,1,2,3 or all");
    if (!strcmp(text, "all")) {
        int n = 0;
        if (pcb_cuda_device_count(&n) != PCB_OK || n < 1)
            return pcb_fail(PCB_EINVAL, "--devices all: %s", n < 1 && pcb_errmsg()[0]
                                                                 ? pcb_errmsg()
                                                                 : "no CUDA device here");
        for (int i = 0; i < n && i < BENCH_MAX_DEVICES; i++)
            snprintf(out->id[out->count++], sizeof out->id[0], "%d", i);
    } else {
        for (const char *p = text;; p++) {
            const size_t w = strcspn(p, ",");
            char t[sizeof out->id[0]];
            snprintf(t, sizeof t, "%.*s", (int)(w < sizeof t - 1 ? w : sizeof t - 1), p);
            if (w >= sizeof t || !token_ok(t))
                return pcb_fail(PCB_EINVAL, "--devices '%s': '%.*s' is not a device (a CUDA "
                                "ordinal such as 0, or a GPU-/MIG- UUID)", text, (int)w, p);
            for (int i = 0; i < out->count; i++)
                if (!strcmp(out->id[i], t))
                    return pcb_fail(PCB_EINVAL, "--devices '%s': device %s twice (one process "
                                    "a GPU)", text, t);
            if (out->count == BENCH_MAX_DEVICES)
                return pcb_fail(PCB_EINVAL, "--devices '%s': at most %d", text,
                                BENCH_MAX_DEVICES);
            memcpy(out->id[out->count++], t, sizeof t);
            p += w;
            if (!*p)
                break;
        }
        int n = 0; /* ordinals past what CUDA sees here are said now, not per shard */
        if (pcb_cuda_device_count(&n) == PCB_OK && !getenv("CUDA_VISIBLE_DEVICES"))
            for (int i = 0; i < out->count; i++)
                if (is_ordinal(out->id[i]) &&
                    atoi(out->id[i]) >= n)
                    return pcb_fail(PCB_EINVAL, "--devices: device %s, but CUDA sees %d here",
                                    out->id[i], n);
    }
    for (int i = 0; i < out->count; i++)
        if (visible_name(out->id[i], out->visible[i], sizeof out->visible[i]) != PCB_OK)
            return PCB_EINVAL;
    return PCB_OK;
}

/* Adds name to a comma list once; 0 when it does not fit. */
static int add_name(char *out, size_t len, const char *name)
{
    if (bench_listed(out, name))
        return 1;
    const size_t used = strlen(out);
    const int w = snprintf(out + used, len - used, "%s%s", used ? "," : "", name);
    if (w < 0 || (size_t)w >= len - used) {
        out[used] = '\0';
        return 0;
    }
    return 1;
}

/* Whether a configuration of problem p is in the selection. */
static int problem_selected(const bench_opts *o, const bench_suite *suite, pcb_problem p)
{
    for (int i = 0; i < suite->count; i++)
        if (suite->configs[i].problem == p && bench_selected(o, &suite->configs[i]))
            return 1;
    return 0;
}

/* The implementations of the selected problems (--problem, --impl) on one
 * kind of device, comma-separated, each name once; for CUDA also those not
 * built here, which its shards then record as such, as one run would. */
static void impls_of(const bench_opts *o, const bench_suite *suite, pcb_device device,
                     char *out, size_t len)
{
    out[0] = '\0';
    for (const pcb_impl *const *it = pcb_registry(); *it; it++)
        if ((*it)->device == device && bench_listed(o->impls, (*it)->name) &&
            problem_selected(o, suite, (*it)->problem))
            add_name(out, len, (*it)->name);
    for (const pcb_missing *m = pcb_not_built(); m->name; m++) {
        pcb_problem p;
        if (m->device == device && bench_listed(o->impls, m->name) &&
            pcb_problem_parse(m->problem, &p) == PCB_OK && problem_selected(o, suite, p))
            add_name(out, len, m->name);
    }
}

/* The j-th of d equal parts of the cores this process may use. */
static void cores_of(int j, int d, cpu_set_t *out, int *n)
{
    cpu_set_t all;
    CPU_ZERO(out);
    *n = 0;
    if (sched_getaffinity(0, sizeof all, &all) != 0)
        return;
    int cpus[CPU_SETSIZE], c = 0;
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &all))
            cpus[c++] = i;
    if (c == 0)
        return;
    const int lo = c >= d ? (int)((long)j * c / d) : j % c;
    const int hi = c >= d ? (int)((long)(j + 1) * c / d) : lo + 1;
    for (int i = lo; i < hi; i++)
        CPU_SET(cpus[i], out), (*n)++;
}

/* The last line of a log that says something, for the progress report. */
static void last_line(const char *path, char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char tail[2048];
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    fseek(f, size > (long)sizeof tail - 1 ? size - (long)sizeof tail + 1 : 0, SEEK_SET);
    const size_t got = fread(tail, 1, sizeof tail - 1, f);
    fclose(f);
    tail[got] = '\0';
    for (long i = (long)got - 1; i >= 0 && (tail[i] == '\n' || tail[i] == '\r' || tail[i] == ' ');
         i--)
        tail[i] = '\0';
    const char *nl = strrchr(tail, '\n'), *from = nl ? nl + 1 : tail;
    size_t n = strlen(from);
    n = n < len ? n : len - 1;
    memcpy(out, from, n);
    out[n] = '\0';
}

int bench_devices_run(bench_opts *o, const bench_suite *suite, const bench_devices *d,
                      const char *machine, int argc, char **argv, const unsigned char *skip,
                      int *failed)
{
    *failed = 0;
    char gpu[4096], cpu[4096];
    impls_of(o, suite, PCB_CUDA, gpu, sizeof gpu);
    impls_of(o, suite, PCB_CPU, cpu, sizeof cpu);
    /* This process goes on with the CPU implementations alone ("" selects none). */
    snprintf(o->devices_cpu_impls, sizeof o->devices_cpu_impls, "%s", cpu);
    o->impls = o->devices_cpu_impls;
    if (!gpu[0]) {
        fprintf(stderr, "pcbench: bench: --devices: no CUDA implementation of the selection is "
                "built here; the CPU ones run alone\n");
        return PCB_OK;
    }
    char self[4096];
    const ssize_t sn = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sn <= 0)
        return pcb_fail(PCB_EIO, "cannot find this program: %s", strerror(errno));
    self[sn] = '\0';
    char logs[1200];
    snprintf(logs, sizeof logs, "%s/%s/logs", o->results_dir, machine);
    int rc = bench_mkdirs(logs);
    if (rc != PCB_OK)
        return rc;

    pid_t pid[BENCH_MAX_DEVICES] = {0};
    char log[BENCH_MAX_DEVICES][1300];
    int status[BENCH_MAX_DEVICES] = {0};
    const double started = bench_now();
    char **args = calloc((size_t)argc + 8, sizeof *args);
    if (!args)
        return pcb_fail(PCB_ENOMEM, "out of memory");
    fflush(stdout);
    fflush(stderr);
    for (int j = 0; j < d->count; j++) {
        char part[32];
        snprintf(part, sizeof part, "%d/%d", j + 1, d->count);
        int a = 0;
        args[a++] = self;
        for (int i = 0; i < argc; i++) /* the command's own words, less --devices */
            if (!skip[i])
                args[a++] = argv[i];
        args[a++] = "--impl", args[a++] = gpu; /* the last --impl is the one taken */
        args[a++] = "--shard", args[a++] = part;
        args[a] = NULL;
        snprintf(log[j], sizeof log[j], "%s/bench-%s-device%s.log", logs, suite->name,
                 d->id[j]);
        cpu_set_t cores;
        int ncores = 0;
        cores_of(j, d->count, &cores, &ncores);
        pid[j] = fork();
        if (pid[j] == 0) {
            prctl(PR_SET_PDEATHSIG, SIGTERM); /* ends with its parent */
            FILE *l = freopen(log[j], "w", stdout);
            if (l)
                dup2(fileno(stdout), 2);
            setenv("CUDA_VISIBLE_DEVICES", d->visible[j], 1);
            if (ncores > 0) {
                char threads[16];
                snprintf(threads, sizeof threads, "%d", ncores);
                setenv("OMP_NUM_THREADS", threads, 1);
                sched_setaffinity(0, sizeof cores, &cores);
            }
            execv(self, args);
            fprintf(stderr, "cannot run %s: %s\n", self, strerror(errno));
            _exit(127);
        }
        if (pid[j] < 0) {
            rc = pcb_fail(PCB_EIO, "cannot start the shard of device %s: %s", d->id[j],
                          strerror(errno));
            break;
        }
        fprintf(stderr, "pcbench: bench: device %s: shard %s, %d core%s, log %s\n", d->id[j],
                part, ncores, ncores == 1 ? "" : "s", log[j]);
    }
    free(args);
    /* Wait for them all, saying every half minute where each one is. */
    int running = 0;
    for (int j = 0; j < d->count; j++)
        running += pid[j] > 0;
    double said = bench_now();
    while (running > 0) {
        int st = 0;
        const pid_t got = waitpid(-1, &st, WNOHANG);
        if (got < 0 && errno != EINTR)
            break;
        for (int j = 0; j < d->count; j++)
            if (got > 0 && got == pid[j]) {
                status[j] = st, pid[j] = 0, running--;
                const int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                fprintf(stderr, "pcbench: bench: device %s: done in %.0f s, exit %d%s\n",
                        d->id[j], bench_now() - started, code,
                        code == 0   ? ""
                        : code == 1 ? " (a verification failure: see its log)"
                                    : " (see its log)");
            }
        if (got > 0)
            continue;
        if (bench_now() - said >= 30) {
            said = bench_now();
            for (int j = 0; j < d->count; j++)
                if (pid[j] > 0) {
                    char line[200];
                    last_line(log[j], line, sizeof line);
                    fprintf(stderr, "pcbench: bench: device %s: %s\n", d->id[j], line);
                }
        }
        const struct timespec nap = {0, 200 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    int broken = 0;
    for (int j = 0; j < d->count; j++) {
        const int code = WIFEXITED(status[j]) ? WEXITSTATUS(status[j]) : -1;
        if (code == 1) /* the tool's exit status for a wrong answer */
            *failed = 1;
        else if (code != 0)
            broken++;
    }
    if (rc == PCB_OK && broken)
        rc = pcb_fail(PCB_EDEVICE, "%d of the %d device shards failed (their logs are in %s)",
                      broken, d->count, logs);
    return rc;
}
