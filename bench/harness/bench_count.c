/* bench_count.c - instruction counts of each CPU implementation's compute
 * region, the part of the regression gate that does not move with the
 * machine or its load.
 *
 * Times on a shared machine swing by several times, and CPU-time ratios
 * between implementations move 1.6x from an Intel to an AMD processor of the
 * same class. The number of instructions a compute executes does neither: it
 * depends on the code, the compiler and its flags, the C library and the
 * input, all of which are fixed here. Valgrind's callgrind counts them, the
 * way SQLite measures its speed: `pcbench count` runs itself again under
 * callgrind with instrumentation off, and around each compute region (after
 * prepare and one warm-up compute) switches it on, zeroes the counters,
 * computes and dumps the total under a name that says what was counted. The
 * outer process reads the dumps back. One thread (OpenMP implementations at
 * 1 thread, waiting passively), so the count is one thread's work.
 *
 * Counts depend on the toolchain, so a baseline records it (compiler, the
 * flags that shape code, libc) and counts are compared only with the
 * baseline of the same toolchain: results/baseline/instructions/<key>.json. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef PCB_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#endif

#include "datasets/outfile.h"
#include "harness.h"

#ifndef PCB_BUILD_CPU_FLAGS
#define PCB_BUILD_CPU_FLAGS "not recorded at build time"
#endif

/* ---- the toolchain ------------------------------------------------------------ */
void bench_toolchain_get(bench_toolchain *t)
{
    memset(t, 0, sizeof *t);
#if defined(__clang__)
    snprintf(t->compiler, sizeof t->compiler, "clang %s", __clang_version__);
#else
    snprintf(t->compiler, sizeof t->compiler, "gcc %s", __VERSION__);
#endif
    snprintf(t->cflags, sizeof t->cflags, "%s", PCB_BUILD_CPU_FLAGS);
    snprintf(t->libc, sizeof t->libc, "glibc %s", gnu_get_libc_version());
    /* The key names the file: readable versions, then a hash of everything. */
    uint32_t h = 2166136261u; /* FNV-1a */
    const char *parts[3] = {t->compiler, t->cflags, t->libc};
    for (int i = 0; i < 3; i++)
        for (const unsigned char *p = (const unsigned char *)parts[i]; *p; p++)
            h = (h ^ *p) * 16777619u;
    char cc[sizeof t->compiler], lc[sizeof t->libc];
    snprintf(cc, sizeof cc, "%s", t->compiler);
    snprintf(lc, sizeof lc, "%s", t->libc);
    for (char *p = cc; *p; p++)
        if (*p == ' ') *p = '-';
    for (char *p = lc; *p; p++)
        if (*p == ' ') *p = '-';
    cc[strcspn(cc, "()")] = '\0';
    snprintf(t->key, sizeof t->key, "%.40s_%.24s_%08x", cc, lc, (unsigned)h);
}

/* ---- results ------------------------------------------------------------------ */
void bench_icounts_free(bench_icounts *c)
{
    free(c->v);
    memset(c, 0, sizeof *c);
}

static int icount_add(bench_icounts *c, const char *config, const char *impl, double n)
{
    bench_icount *v = realloc(c->v, (size_t)(c->count + 1) * sizeof *v);
    if (!v)
        return pcb_fail(PCB_ENOMEM, "out of memory for instruction counts");
    c->v = v;
    bench_icount *e = &v[c->count++];
    snprintf(e->config, sizeof e->config, "%s", config);
    snprintf(e->impl, sizeof e->impl, "%s", impl);
    e->instructions = n;
    return PCB_OK;
}

const bench_icount *bench_icounts_find(const bench_icounts *c, const char *config,
                                       const char *impl)
{
    for (int i = 0; i < c->count; i++)
        if (strcmp(c->v[i].config, config) == 0 && strcmp(c->v[i].impl, impl) == 0)
            return &c->v[i];
    return NULL;
}

static int icount_path(const char *dir, const char *key, char *buf, size_t len)
{
    if (snprintf(buf, len, "%s/instructions/%s.json", dir, key) >= (int)len)
        return pcb_fail(PCB_EINVAL, "path too long under %s", dir);
    return PCB_OK;
}

int bench_icounts_write(const char *dir, const char *suite, const bench_env *env,
                        const bench_icounts *c)
{
    char path[1024], sub[1024];
    int rc = icount_path(dir, c->tc.key, path, sizeof path);
    snprintf(sub, sizeof sub, "%s/instructions", dir);
    if (rc != PCB_OK || (rc = bench_mkdirs(sub)) != PCB_OK)
        return rc;
    pcb_outfile o;
    if ((rc = pcb_out_open(&o, path)) != PCB_OK)
        return rc;
    FILE *f = o.f;
    fputs("{\n  \"suite\": ", f);
    json_put_str(f, suite);
    fputs(",\n  \"toolchain\": {\"key\": ", f);
    json_put_str(f, c->tc.key);
    fputs(", \"compiler\": ", f);
    json_put_str(f, c->tc.compiler);
    fputs(", \"cflags\": ", f);
    json_put_str(f, c->tc.cflags);
    fputs(", \"libc\": ", f);
    json_put_str(f, c->tc.libc);
    fputs("},\n  \"counted_with\": ", f);
    json_put_str(f, c->counter);
    fputs(",\n  \"environment\": ", f);
    fputs(env->json, f);
    fputs(",\n  \"instructions_per_compute\": [", f);
    for (int i = 0; i < c->count; i++) {
        fprintf(f, "%s\n    {\"config\": ", i ? "," : "");
        json_put_str(f, c->v[i].config);
        fputs(", \"impl\": ", f);
        json_put_str(f, c->v[i].impl);
        fprintf(f, ", \"instructions\": %.0f}", c->v[i].instructions);
    }
    fputs("\n  ]\n}\n", f);
    return pcb_out_commit(&o);
}

int bench_icounts_read(const char *dir, const char *key, bench_icounts *c)
{
    char path[1024];
    memset(c, 0, sizeof *c);
    int rc = icount_path(dir, key, path, sizeof path);
    json j;
    if (rc != PCB_OK || (rc = json_load(path, &j)) != PCB_OK)
        return rc;
    const json *tc = json_get(&j, "toolchain"), *list = json_get(&j, "instructions_per_compute");
    const char *k = json_str(tc, "key");
    if (!k || strcmp(k, key) != 0 || !list || list->type != JSON_ARR) {
        json_free(&j);
        return pcb_fail(PCB_EBADFILE, "%s: not an instruction-count baseline for %s", path, key);
    }
    snprintf(c->tc.key, sizeof c->tc.key, "%s", k);
    snprintf(c->tc.compiler, sizeof c->tc.compiler, "%s", json_str(tc, "compiler") ? json_str(tc, "compiler") : "");
    snprintf(c->counter, sizeof c->counter, "%s", json_str(&j, "counted_with") ? json_str(&j, "counted_with") : "");
    for (int i = 0; i < list->count && rc == PCB_OK; i++) {
        const json *e = &list->kids[i];
        const char *cfg = json_str(e, "config"), *impl = json_str(e, "impl");
        double n = json_num(e, "instructions", -1);
        if (!cfg || !impl || !(n >= 0))
            rc = pcb_fail(PCB_EBADFILE, "%s: entry %d is incomplete", path, i + 1);
        else
            rc = icount_add(c, cfg, impl, n);
    }
    json_free(&j);
    if (rc != PCB_OK)
        bench_icounts_free(c);
    return rc;
}

/* ---- counting ----------------------------------------------------------------- */
typedef struct {
    const char *suite, *problems, *impls, *filter;
    const bench_shard *shard; /* NULL: the whole selection */
} count_sel;

#ifdef PCB_HAVE_CALLGRIND
/* Inside callgrind: count every selected CPU implementation of the suite. */
static int count_inside(const count_sel *sel)
{
    bench_suite suite;
    bench_fault faults[8];
    int nfaults = 0, failures = 0, counted = 0;
    if (bench_suite_get(sel->suite, &suite) != PCB_OK ||
        bench_fault_parse(getenv("PCBENCH_FAULT"), faults, 8, &nfaults) != PCB_OK) {
        return PCB_EINVAL;
    }
    bench_opts part = {.problems = sel->problems, .filter = sel->filter};
    if (sel->shard)
        part.shard = *sel->shard;
    if (bench_shard_select(&part, &suite) != PCB_OK) {
        bench_suite_free(&suite);
        return PCB_ENOMEM;
    }
    for (int i = 0; i < suite.count; i++) {
        const bench_config *cfg = &suite.configs[i];
        if (!bench_selected(&part, cfg) || cfg->shortest) /* ragged: timed only */
            continue;
        bench_data d;
        if (bench_data_make(cfg, &d) != PCB_OK) {
            fprintf(stderr, "pcbench: count: %s: %s\n", cfg->id, pcb_errmsg());
            failures++;
            continue;
        }
        pcb_task task = bench_task_of(cfg, &d);
        task.opt.threads = 1;
        task.opt.max_gap = 0; /* CPU implementations have no gap option: the twin's run */
        for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
            const pcb_impl *im = *it;
            if (im->problem != cfg->problem || im->device != PCB_CPU || !bench_listed(sel->impls, im->name) ||
                pcb_impl_available(im) != PCB_OK || pcb_task_fits(im, &task) != PCB_OK)
                continue;
            const double slow = bench_fault_for(faults, nfaults, im).slow;
            /* A fractional slowdown shows over several iterations. */
            int iterations = slow == floor(slow) ? 1 : 4, rc;
            void *state = NULL;
            if ((rc = im->prepare(&task, &state)) == PCB_OK)
                rc = im->compute(state); /* warm-up, not counted */
            char name[200]; /* made before counting starts: snprintf is no part of it */
            snprintf(name, sizeof name, "pcbench|%d|%s|%s|%d", counted, cfg->id, im->name,
                     iterations);
            if (rc == PCB_OK) {
                CALLGRIND_START_INSTRUMENTATION;
                CALLGRIND_ZERO_STATS;
                for (int k = 0; k < iterations && rc == PCB_OK; k++)
                    for (int r = bench_fault_repeats(slow, k); r > 0 && rc == PCB_OK; r--)
                        rc = im->compute(state);
                if (rc == PCB_OK)
                    CALLGRIND_DUMP_STATS_AT(name);
                CALLGRIND_STOP_INSTRUMENTATION;
                counted += rc == PCB_OK;
            }
            if (rc != PCB_OK) {
                fprintf(stderr, "pcbench: count: %s %s: %s: %s\n", cfg->id, im->name,
                        pcb_strerror(rc), pcb_errmsg());
                failures++;
            }
            im->release(state);
        }
        bench_data_free(&d);
    }
    bench_shard_release(&part);
    bench_suite_free(&suite);
    fprintf(stderr, "pcbench: count: %d compute regions counted, %d failed\n", counted, failures);
    return failures;
}
#endif

/* The valgrind to run: $PCBENCH_VALGRIND, valgrind on PATH, or the one
 * unpacked from .deb files into the offline prefix (which needs VALGRIND_LIB). */
static int find_valgrind(char *path, size_t len, char *lib, size_t liblen)
{
    lib[0] = '\0';
    const char *env = getenv("PCBENCH_VALGRIND");
    if (env && *env) {
        snprintf(path, len, "%s", env);
        return access(path, X_OK) == 0;
    }
    const char *dirs = getenv("PATH");
    for (const char *p = dirs ? dirs : "/usr/bin:/bin"; *p;) {
        size_t w = strcspn(p, ":");
        snprintf(path, len, "%.*s/valgrind", (int)w, p);
        if (w && access(path, X_OK) == 0)
            return 1;
        p += w + (p[w] == ':');
    }
#ifdef PCB_DEPS_ROOT
    snprintf(path, len, "%s/usr/bin/valgrind", PCB_DEPS_ROOT);
    snprintf(lib, liblen, "%s/usr/libexec/valgrind", PCB_DEPS_ROOT);
    if (access(path, X_OK) == 0)
        return 1;
    lib[0] = '\0';
#else
    (void)liblen;
#endif
    return 0;
}

static int by_seq(const void *x, const void *y)
{
    const bench_icount *a = x, *b = y;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* Read the dumps in dir into out. */
static int read_dumps(const char *dir, bench_icounts *out)
{
    DIR *d = opendir(dir);
    if (!d)
        return pcb_fail(PCB_EIO, "cannot read %s: %s", dir, strerror(errno));
    int rc = PCB_OK;
    struct dirent *de;
    while (rc == PCB_OK && (de = readdir(d))) {
        if (strncmp(de->d_name, "cg.", 3) != 0)
            continue;
        char path[PATH_MAX], line[1024], config[96] = "", impl[48] = "";
        int seq = -1, iterations = 0;
        double total = -1;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        FILE *f = fopen(path, "r");
        if (!f) {
            rc = pcb_fail(PCB_EIO, "cannot read %s: %s", path, strerror(errno));
            break;
        }
        while (fgets(line, sizeof line, f)) {
            const char *tag = "desc: Trigger: Client Request: pcbench|";
            if (strncmp(line, tag, strlen(tag)) == 0)
                sscanf(line + strlen(tag), "%d|%95[^|]|%47[^|]|%d", &seq, config, impl,
                       &iterations);
            else if (strncmp(line, "totals:", 7) == 0)
                total = strtod(line + 7, NULL);
        }
        fclose(f);
        if (config[0] && iterations > 0 && total >= 0 &&
            (rc = icount_add(out, config, impl, total / iterations)) == PCB_OK)
            out->v[out->count - 1].seq = seq;
    }
    closedir(d);
    if (out->count > 1) /* in the order counted: the suite's */
        qsort(out->v, (size_t)out->count, sizeof *out->v, by_seq);
    return rc;
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char path[PATH_MAX];
    while (d && (de = readdir(d)))
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            unlink(path);
        }
    if (d)
        closedir(d);
    rmdir(dir);
}

static int count_outside(const count_sel *sel, bench_icounts *out)
{
    memset(out, 0, sizeof *out);
    bench_toolchain_get(&out->tc);
#ifndef PCB_HAVE_CALLGRIND
    (void)sel;
    return pcb_fail(PCB_EUNAVAIL, "built without valgrind's callgrind.h (install valgrind: make "
                                  "deps, then rebuild)");
#else
    char vg[PATH_MAX], vglib[PATH_MAX], self[PATH_MAX];
    if (!find_valgrind(vg, sizeof vg, vglib, sizeof vglib))
        return pcb_fail(PCB_EUNAVAIL, "valgrind not found (install it: make deps)");
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return pcb_fail(PCB_EIO, "cannot find this program: %s", strerror(errno));
    self[n] = '\0';
    char dir[] = "/tmp/pcbench-count.XXXXXX";
    if (!mkdtemp(dir))
        return pcb_fail(PCB_EIO, "cannot make a temporary folder: %s", strerror(errno));
    char outfile[PATH_MAX + 16], log[PATH_MAX + 16];
    snprintf(outfile, sizeof outfile, "--callgrind-out-file=%s/cg.%%p", dir);
    snprintf(log, sizeof log, "%s/log", dir);
    char *argv[20];
    int a = 0;
    argv[a++] = vg;
    argv[a++] = "--tool=callgrind";
    argv[a++] = "-q";
    argv[a++] = "--instr-atstart=no";
    argv[a++] = outfile;
    argv[a++] = self;
    argv[a++] = "count";
    argv[a++] = "--suite";
    argv[a++] = (char *)sel->suite;
    if (sel->problems)
        argv[a++] = "--problem", argv[a++] = (char *)sel->problems;
    if (sel->impls)
        argv[a++] = "--impl", argv[a++] = (char *)sel->impls;
    if (sel->filter)
        argv[a++] = "--filter", argv[a++] = (char *)sel->filter;
    char part[32];
    if (sel->shard && sel->shard->total) {
        snprintf(part, sizeof part, "%d/%d", sel->shard->index + 1, sel->shard->total);
        argv[a++] = "--shard", argv[a++] = part;
    }
    argv[a] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        FILE *l = freopen(log, "w", stdout);
        if (l)
            dup2(fileno(stdout), 2);
        setenv("OMP_WAIT_POLICY", "passive", 1);
        setenv("OMP_NUM_THREADS", "1", 1);
        if (vglib[0])
            setenv("VALGRIND_LIB", vglib, 1);
        execv(vg, argv);
        fprintf(stderr, "cannot run %s: %s\n", vg, strerror(errno));
        _exit(127);
    }
    int status = 0, rc = PCB_OK;
    if (pid < 0)
        rc = pcb_fail(PCB_EIO, "cannot start valgrind: %s", strerror(errno));
    else if (waitpid(pid, &status, 0) < 0)
        rc = pcb_fail(PCB_EIO, "waiting for valgrind: %s", strerror(errno));
    if (rc == PCB_OK && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
        char tail[600] = "";
        FILE *f = fopen(log, "r");
        if (f) { /* the last lines say why */
            fseek(f, 0, SEEK_END);
            long size = ftell(f);
            fseek(f, size > 500 ? size - 500 : 0, SEEK_SET);
            size_t got = fread(tail, 1, sizeof tail - 1, f);
            tail[got] = '\0';
            fclose(f);
        }
        rc = pcb_fail(PCB_EDEVICE, "the counting run under %s failed (status %d): %s", vg,
                      WIFEXITED(status) ? WEXITSTATUS(status) : -1, tail);
    }
    if (rc == PCB_OK) {
        char cmd[2 * PATH_MAX + 48];
        snprintf(cmd, sizeof cmd, "%s%s%s'%s' --version 2>/dev/null", vglib[0] ? "VALGRIND_LIB='" : "",
                 vglib, vglib[0] ? "' " : "", vg);
        FILE *p = popen(cmd, "r");
        if (p) {
            if (fgets(out->counter, sizeof out->counter, p))
                out->counter[strcspn(out->counter, "\r\n")] = '\0';
            pclose(p);
        }
        rc = read_dumps(dir, out);
    }
    remove_dir(dir);
    if (rc != PCB_OK)
        bench_icounts_free(out);
    return rc;
#endif
}

int bench_count(const char *suite, const char *problems, const char *impls, const char *filter,
                const bench_shard *shard, bench_icounts *out)
{
    count_sel sel = {suite, problems, impls, filter, shard};
    return count_outside(&sel, out);
}

int bench_count_in_child(void)
{
#ifdef PCB_HAVE_CALLGRIND
    return RUNNING_ON_VALGRIND ? 1 : 0;
#else
    return 0;
#endif
}

int bench_count_child(const char *suite, const char *problems, const char *impls,
                      const char *filter, const bench_shard *shard)
{
#ifdef PCB_HAVE_CALLGRIND
    count_sel sel = {suite, problems, impls, filter, shard};
    return count_inside(&sel);
#else
    (void)suite, (void)problems, (void)impls, (void)filter, (void)shard;
    return pcb_fail(PCB_EUNAVAIL, "built without valgrind's callgrind.h");
#endif
}
