/* bench_env.c - what a result needs to be interpreted later: the machine,
 * CPU, GPU and clocks, compilers, flags and the source commit. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "cuda_bench.h"
#include "harness.h"

/* First line of a shell command's output that contains `want` (or the
 * first line when want is NULL), without its newline; "" if none. */
static void command_line(const char *cmd, const char *want, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *p = popen(cmd, "r");
    if (!p)
        return;
    char line[512];
    while (fgets(line, sizeof line, p)) {
        if (want && !strstr(line, want))
            continue;
        line[strcspn(line, "\r\n")] = '\0';
        snprintf(buf, len, "%s", line);
        break;
    }
    while (fgets(line, sizeof line, p)) /* drain, so the child exits cleanly */
        ;
    pclose(p);
}

static void cpu_model(char *buf, size_t len)
{
    snprintf(buf, len, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            colon += 1 + strspn(colon + 1, " \t");
            colon[strcspn(colon, "\r\n")] = '\0';
            snprintf(buf, len, "%s", colon);
            break;
        }
    }
    fclose(f);
}

/* "Intel(R) Core(TM) i7-10710U CPU @ 1.10GHz" -> "intel-core-i7-10710u". */
static void slug(const char *in, char *out, size_t len)
{
    static const char *const drop[] = {"r", "tm", "cpu", "processor", NULL};
    size_t o = 0;
    const char *p = in;
    while (*p && *p != '@' && o + 1 < len) {
        while (*p && *p != '@' && !isalnum((unsigned char)*p))
            p++;
        char word[64];
        size_t w = 0;
        while (isalnum((unsigned char)*p) || (*p == '-' && w))
            if (w + 1 < sizeof word) word[w++] = (char)tolower((unsigned char)*p++);
            else p++;
        word[w] = '\0';
        int skip = !w;
        for (int i = 0; drop[i] && !skip; i++)
            skip = strcmp(word, drop[i]) == 0;
        if (!skip && o + w + 2 < len) {
            if (o)
                out[o++] = '-';
            memcpy(out + o, word, w);
            o += w;
        }
    }
    out[o] = '\0';
}

static void put_field(FILE *f, const char *key, const char *value, int comma)
{
    fprintf(f, "%s\n    ", comma ? "," : "");
    json_put_str(f, key);
    fputs(": ", f);
    json_put_str(f, value);
}

/* FNV-1a of a file's bytes into h (h unchanged when it cannot be read). */
static uint64_t hash_file(const char *path, uint64_t h)
{
    FILE *f = fopen(path, "rb");
    unsigned char buf[1 << 16];
    size_t got;
    while (f && (got = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; i < got; i++)
            h = (h ^ buf[i]) * 0x100000001b3ull;
    if (f)
        fclose(f);
    return h;
}

static uint64_t hash_text(const char *s, uint64_t h)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

int bench_env_collect(bench_env *e, const char *machine_override)
{
    memset(e, 0, sizeof *e);
    cpu_model(e->cpu, sizeof e->cpu);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    e->cores = cores > 0 ? (int)cores : 1;
    pcb_gpu_info gi;
    int have_gpu = pcb_cuda_gpu_info(&gi) == PCB_OK;
    if (have_gpu) {
        snprintf(e->gpu, sizeof e->gpu, "%s", gi.name);
        snprintf(e->gpu_bus, sizeof e->gpu_bus, "%s", gi.pci_bus_id);
    }
    char s[64];
    if (machine_override) {
        snprintf(e->machine, sizeof e->machine, "%s", machine_override);
    } else if (have_gpu) {
        slug(e->gpu, s, sizeof s);
        snprintf(e->machine, sizeof e->machine, "gpu-%s", s);
    } else {
        slug(e->cpu, s, sizeof s);
        snprintf(e->machine, sizeof e->machine, "cpu-%s-%dc", s, e->cores);
    }
    char dirty[256] = "";
    const char *stated = getenv("PCBENCH_GIT"); /* a copied tree: its history may be stale */
    if (stated && stated[0]) {
        snprintf(e->git, sizeof e->git, "%s", stated);
    } else {
        command_line("git rev-parse --short=12 HEAD 2>/dev/null", NULL, e->git, sizeof e->git);
        command_line("git status --porcelain --untracked-files=no -- . ':!results' 2>/dev/null",
                     NULL, dirty, sizeof dirty);
    }
    if (!e->git[0])
        snprintf(e->git, sizeof e->git, "unknown");
    else if (dirty[0])
        strncat(e->git, "+dirty", sizeof e->git - strlen(e->git) - 1);
    bench_utc_now(e->when, sizeof e->when);
    /* What measured a figure and where: a stored one is reused only by the
     * same binary on the same host (bench_entry_final). */
    const uint64_t fnv = 0xcbf29ce484222325ull;
    snprintf(e->build, sizeof e->build, "%016llx",
             (unsigned long long)hash_file("/proc/self/exe", fnv));
    char id[256] = "";
    FILE *mid = fopen("/etc/machine-id", "r");
    if (!mid || !fgets(id, sizeof id, mid))
        gethostname(id, sizeof id - 1);
    if (mid)
        fclose(mid);
    char driver[32] = "";
    if (have_gpu)
        snprintf(driver, sizeof driver, " driver %d", gi.driver);
    /* The CPU and GPU models too: containers made from one image share a
     * machine-id, whatever hardware they run on. */
    char models[420];
    snprintf(models, sizeof models, "%s x %d | %s", e->cpu, e->cores, e->gpu);
    snprintf(e->host, sizeof e->host, "%016llx",
             (unsigned long long)hash_text(models, hash_text(driver, hash_text(id, fnv))));

    char cc[256], nvcc[256], smi[512], os[256];
    struct utsname u;
    command_line("cc --version 2>/dev/null", NULL, cc, sizeof cc);
    command_line("{ nvcc --version || /usr/local/cuda/bin/nvcc --version; } 2>/dev/null",
                 "release", nvcc, sizeof nvcc);
    command_line("nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,"
                 "clocks.mem,clocks.max.mem,power.limit --format=csv,noheader 2>/dev/null",
                 NULL, smi, sizeof smi);
    if (uname(&u) == 0)
        snprintf(os, sizeof os, "%s %s %s", u.sysname, u.release, u.machine);
    else
        snprintf(os, sizeof os, "unknown");

    size_t size = 0;
    FILE *f = open_memstream(&e->json, &size);
    if (!f)
        return pcb_fail(PCB_ENOMEM, "out of memory for the environment record");
    fputs("{", f);
    put_field(f, "machine", e->machine, 0);
    put_field(f, "date", e->when, 1);
    put_field(f, "git", e->git, 1);
    put_field(f, "build", e->build, 1);
    put_field(f, "host", e->host, 1);
    put_field(f, "cpu", e->cpu, 1);
    if (e->gpu_bus[0])
        put_field(f, "gpu_bus", e->gpu_bus, 1);
    fprintf(f, ",\n    \"cores\": %d", e->cores);
    put_field(f, "os", os, 1);
    put_field(f, "cc", cc[0] ? cc : "not found", 1);
    put_field(f, "built_with", "gcc " __VERSION__, 1);
#ifdef PCB_BUILD_CFLAGS
    put_field(f, "cflags", PCB_BUILD_CFLAGS, 1);
#else
    put_field(f, "cflags", "not recorded at build time", 1);
#endif
    put_field(f, "optimized",
#ifdef __OPTIMIZE__
              "yes",
#else
              "no",
#endif
              1);
#ifdef _OPENMP
    fprintf(f, ",\n    \"openmp_threads\": %d", omp_get_max_threads());
#endif
    put_field(f, "nvcc", nvcc[0] ? nvcc : "not found", 1);
    if (have_gpu) {
        fprintf(f, ",\n    \"gpu\": {\"name\": ");
        json_put_str(f, gi.name);
        fprintf(f, ", \"compute_capability\": \"%d.%d\", \"sms\": %d, \"memory_bytes\": %lld, "
                   "\"l2_bytes\": %d, \"cuda_driver\": %d, \"cuda_runtime\": %d}",
                gi.cc_major, gi.cc_minor, gi.sms, (long long)gi.memory_bytes, gi.l2_bytes,
                gi.driver, gi.runtime);
    } else {
        fputs(",\n    \"gpu\": null", f);
    }
    put_field(f, "nvidia_smi", smi[0] ? smi : "not available", 1);
    /* NVML reads the clocks around every GPU sample (bench_nvml.c) */
    if (have_gpu)
        bench_nvml_open();
    put_field(f, "nvml", have_gpu ? bench_nvml_status() : "no GPU", 1);
    fputs("\n  }", f);
    if (fclose(f) != 0 || !e->json)
        return pcb_fail(PCB_ENOMEM, "out of memory for the environment record");
    return PCB_OK;
}

void bench_env_free(bench_env *e)
{
    free(e->json);
    e->json = NULL;
}

/* An environment variable's integer, or 0 where unset or not an integer. */
static int env_int(const char *name)
{
    const char *v = getenv(name);
    char *end;
    long x = v && *v ? strtol(v, &end, 10) : 0;
    return v && *v && !*end && x >= -1000 && x <= 1000 ? (int)x : 0;
}

void bench_tuning_env(pcb_options *o)
{
    const char *dense = getenv("PCBENCH_FPS_DENSE"), *start = getenv("PCBENCH_EMD_START");
    o->fps_warps = env_int("PCBENCH_FPS_WARPS");
    o->fps_ctas = env_int("PCBENCH_FPS_CTAS");
    o->fps_dense = dense && !strcmp(dense, "0") ? -1 : 0;
    o->emd_ctas = env_int("PCBENCH_EMD_CTAS");
    o->emd_start = start && !strcmp(start, "zero") ? -1 : 0;
    const char *gap = getenv("PCB_EMD_GAP_MAX_N");
    char *end;
    const long long n = gap && *gap ? strtoll(gap, &end, 10) : 0;
    o->emd_gap_max_n = gap && *gap && !*end && n >= 0 ? (n ? n : -1) : 0;
}
