/* bench_store.c - one JSON file per configuration, rewritten atomically
 * after the configuration ran, so an interrupted run loses at most the
 * configuration in progress and the next run resumes after the last one
 * written. Layout: <results>/<machine>/<suite>/<problem>-<...>.json
 * This file: the paths, an entry's fields (one table for the writer and
 * the reader), the reader; bench_store_write.c writes a file (its
 * configuration's fields from the problem's face) and merges runs. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datasets/outfile.h"
#include "harness.h"

bench_entry *bench_result_entry(bench_result *r, const char *impl, int create)
{
    for (int i = 0; i < r->count; i++)
        if (strcmp(r->entries[i].impl, impl) == 0)
            return &r->entries[i];
    if (!create)
        return NULL;
    bench_entry *v = realloc(r->entries, (size_t)(r->count + 1) * sizeof *v);
    if (!v)
        return NULL;
    r->entries = v;
    bench_entry *e = &v[r->count++];
    memset(e, 0, sizeof *e);
    snprintf(e->impl, sizeof e->impl, "%s", impl);
    e->predicted_s = -1;
    return e;
}

void bench_result_free(bench_result *r)
{
    free(r->entries);
    r->entries = NULL;
    r->count = 0;
    json_free(&r->gbench);
}

void bench_config_name(const bench_config *c, char name[96])
{
    snprintf(name, 96, "%s", c->id);
    for (char *p = name; *p; p++)
        if (*p == '/')
            *p = '-';
}

int bench_store_path(const char *dir, const char *suite, const bench_config *c, char *buf,
                     size_t len)
{
    char name[96];
    bench_config_name(c, name);
    if (snprintf(buf, len, "%s/%s/%s.json", dir, suite, name) >= (int)len)
        return pcb_fail(PCB_EINVAL, "path too long under %s", dir);
    return PCB_OK;
}

/* ---- writing ------------------------------------------------------------------- */
static void put_ms_array(FILE *f, const double *v, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        if (i)
            fputs(", ", f);
        json_put_num(f, v[i] * 1e3);
    }
    fputc(']', f);
}

/* The GPU's state over samples, as parallel arrays (one value a sample). */
static void put_gpu(FILE *f, const bench_gpu_state *g, int n)
{
    const char *names[] = {"sm_mhz", "mem_mhz", "temp_c", "power_w"};
    fputc('{', f);
    for (int k = 0; k < 4; k++) {
        fprintf(f, "%s\"%s\": [", k ? ", " : "", names[k]);
        for (int i = 0; i < n; i++) {
            const float v[4] = {g[i].sm_mhz, g[i].mem_mhz, g[i].temp_c, g[i].power_w};
            if (i)
                fputs(", ", f);
            json_put_num(f, v[k]);
        }
        fputc(']', f);
    }
    fputs(", \"reasons\": [", f);
    for (int i = 0; i < n; i++) {
        char text[160];
        bench_gpu_reasons_text(g[i].reasons, text, sizeof text);
        if (i)
            fputs(", ", f);
        json_put_str(f, text);
    }
    fputs("]}", f);
}

const char *const bench_stage_names[BENCH_STAGES] = {"prepare", "compute", "fetch", "release"};

static void put_figure(FILE *f, const bench_figure *g)
{
    if (g->reps < 1 && g->dropped < 1) {
        fputs("null", f);
        return;
    }
    fputs("{\"clock\": ", f);
    json_put_str(f, g->clock ? g->clock : "real");
    fprintf(f, ", \"reps\": %d, \"iterations\": %lld", g->reps, (long long)g->iterations);
    const char *names[] = {"median_ms", "mean_ms", "stddev_ms", "min_ms", "cpu_median_ms"};
    const double vals[] = {g->median, g->mean, g->stddev, g->min, g->cpu_median};
    for (int i = 0; i < 5; i++) {
        fprintf(f, ", \"%s\": ", names[i]);
        json_put_num(f, vals[i] * 1e3);
    }
    fputs(", \"cv\": ", f);
    json_put_num(f, g->cv);
    fputs(",\n        \"noise\": ", f);
    json_put_num(f, g->noise);
    fputs(", \"stop\": ", f);
    json_put_str(f, g->stop);
    fputs(", \"seconds\": ", f);
    json_put_num(f, g->seconds);
    fprintf(f, ", \"dropped\": %d, \"unreliable\": %s", g->dropped,
            g->unreliable ? "true" : "false");
    fputs(",\n        \"samples_ms\": ", f);
    put_ms_array(f, g->sample, g->reps);
    fputs(", \"cpu_samples_ms\": ", f);
    put_ms_array(f, g->cpu, g->reps);
    int nd = g->dropped < MAX_DROPPED ? g->dropped : MAX_DROPPED;
    if (nd) {
        fputs(",\n        \"dropped_samples_ms\": ", f);
        put_ms_array(f, g->dropped_sample, nd);
    }
    if (g->stage_runs > 0) { /* mean ms a run */
        fputs(",\n        \"stages_ms\": {", f);
        for (int k = 0; k < BENCH_STAGES; k++) {
            fprintf(f, "%s\"%s\": ", k ? ", " : "", bench_stage_names[k]);
            json_put_num(f, g->stage_s[k] / (double)g->stage_runs * 1e3);
        }
        fprintf(f, "}, \"stage_runs\": %lld", (long long)g->stage_runs);
    }
    if (g->have_gpu) {
        fputs(",\n        \"gpu\": ", f);
        put_gpu(f, g->gpu, g->reps);
        if (nd) {
            fputs(",\n        \"dropped_gpu\": ", f);
            put_gpu(f, g->dropped_gpu, nd);
        }
    }
    fputc('}', f);
}

/* ---- the entry's fields: one table for the writer and the reader ------------- */
/* Where each field of an entry lives and how it is spelled: a key of the
 * entry, or of one of its groups ("verify", "counters"; a group's fields
 * are contiguous). REP fields exist only where the answer was judged
 * (have_rep): the reader sets it where "ok" is there. */
typedef enum { F_STR, F_F64, F_I64, F_BOOL, F_DEVICE, F_STATUS } field_kind;
typedef struct {
    const char *group, *key;
    field_kind kind;
    size_t off, len;
    double absent; /* the reader's value where the file lacks it */
    int rep;
} entry_field;
#define FIELD(group, key, kind, member, absent, rep)                                              \
    {group, key, kind, offsetof(bench_entry, member), sizeof(((bench_entry *)0)->member), absent, \
     rep}
static const entry_field entry_fields[] = {
    FIELD(NULL, "impl", F_STR, impl, 0, 0),
    FIELD(NULL, "device", F_DEVICE, device, 0, 0),
    FIELD(NULL, "exact", F_BOOL, exact, 0, 0),
    FIELD(NULL, "status", F_STATUS, status, 0, 0),
    FIELD(NULL, "detail", F_STR, detail, 0, 0),
    FIELD(NULL, "when", F_STR, when, 0, 0),
    FIELD(NULL, "git", F_STR, git, 0, 0),
    FIELD(NULL, "build", F_STR, build, 0, 0),
    FIELD(NULL, "host", F_STR, host, 0, 0),
    FIELD(NULL, "gpu_bus", F_STR, gpu_bus, 0, 0),
    FIELD(NULL, "budget_s", F_F64, budget_s, 0, 0),
    FIELD(NULL, "predicted_s", F_F64, predicted_s, -1, 0),
    FIELD("verify", "prepare_s", F_F64, prepare_s, 0, 0),
    FIELD("verify", "compute_s", F_F64, compute_s, 0, 0),
    FIELD("verify", "fetch_s", F_F64, fetch_s, 0, 0),
    FIELD("verify", "total_s", F_F64, total_s, 0, 0),
    FIELD("verify", "ok", F_BOOL, rep.ok, 0, 1),
    FIELD("verify", "detail", F_STR, rep.detail, 0, 1),
    FIELD("verify", "recall", F_F64, rep.recall, -1, 1),
    FIELD("verify", "worst_ratio", F_F64, rep.worst_ratio, -1, 1),
    FIELD("verify", "gap", F_F64, rep.gap, -1, 1),
    FIELD("verify", "bound", F_F64, rep.bound, -1, 1),
    FIELD("verify", "unmatched", F_I64, rep.unmatched, 0, 1),
    FIELD("counters", "distance_evals", F_I64, counters.distance_evals, -1, 0),
    FIELD("counters", "bids", F_I64, counters.bids, -1, 0),
    FIELD("counters", "iterations", F_I64, counters.iterations, -1, 0),
};
#define ENTRY_FIELDS (int)(sizeof entry_fields / sizeof entry_fields[0])

static int same_group(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static void put_field(FILE *f, const entry_field *d, const bench_entry *e)
{
    const char *at = (const char *)e + d->off;
    switch (d->kind) {
    case F_STR: json_put_str(f, at); break;
    case F_F64: json_put_num(f, *(const double *)at); break;
    case F_I64: fprintf(f, "%lld", (long long)*(const int64_t *)at); break;
    case F_BOOL: fputs(*(const int *)at ? "true" : "false", f); break;
    case F_DEVICE: json_put_str(f, pcb_device_name(*(const pcb_device *)at)); break;
    case F_STATUS: json_put_str(f, bench_status_name(*(const bench_status *)at)); break;
    }
}

static void get_field(const json *j, const entry_field *d, bench_entry *e)
{
    char *at = (char *)e + d->off;
    const json *v = json_get(j, d->key);
    const char *s;
    switch (d->kind) {
    case F_STR: snprintf(at, d->len, "%s", (s = json_str(j, d->key)) ? s : ""); break;
    case F_F64: *(double *)at = json_num(j, d->key, d->absent); break;
    case F_I64: *(int64_t *)at = (int64_t)json_num(j, d->key, d->absent); break;
    case F_BOOL: *(int *)at = v && v->num != 0; break;
    case F_DEVICE:
        *(pcb_device *)at = (s = json_str(j, d->key)) && strcmp(s, "cuda") == 0 ? PCB_CUDA : PCB_CPU;
        break;
    case F_STATUS: *(bench_status *)at = bench_status_parse(json_str(j, d->key)); break;
    }
}

void bench_entry_put(FILE *f, const bench_entry *e)
{
    const char *group = NULL;
    int first = 1;
    fputs("    {", f);
    for (int i = 0; i < ENTRY_FIELDS; i++) {
        const entry_field *d = &entry_fields[i];
        if (d->rep && !e->have_rep)
            continue;
        if (!same_group(d->group, group)) { /* close the last group, open this one */
            fputs(group ? "}," : ",", f);
            fputs("\n      ", f);
            json_put_str(f, d->group);
            fputs(": {", f);
            group = d->group, first = 1;
        }
        fputs(first ? "" : ", ", f);
        json_put_str(f, d->key);
        fputs(": ", f);
        put_field(f, d, e);
        first = 0;
    }
    fputs(group ? "}," : ",", f);
    const char *names[3] = {"compute", "compute_cold", "e2e"};
    const bench_figure *fig[3] = {&e->compute, &e->compute_cold, &e->e2e};
    for (int k = 0; k < 3; k++) {
        fputs(k ? ",\n      " : "\n      ", f);
        json_put_str(f, names[k]);
        fputs(": ", f);
        put_figure(f, fig[k]);
    }
    fputs("}", f);
}

/* ---- reading --------------------------------------------------------------------- */
static unsigned long long reasons_parse(const char *text)
{
    unsigned long long bits = 0;
    for (int i = 0; text && *text && i < 64; i++) {
        char name[160];
        bench_gpu_reasons_text(1ull << i, name, sizeof name);
        const char *p = strstr(text, name);
        size_t len = strlen(name);
        /* whole names only: "sw-thermal" is not inside "hw-thermal" */
        while (p && !((p == text || p[-1] == ',') && (p[len] == ',' || p[len] == '\0')))
            p = strstr(p + 1, name);
        if (p)
            bits |= 1ull << i;
    }
    return bits;
}

static void get_gpu(const json *j, bench_gpu_state *g, int n)
{
    const char *names[] = {"sm_mhz", "mem_mhz", "temp_c", "power_w"};
    for (int k = 0; k < 4; k++) {
        const json *a = json_get(j, names[k]);
        for (int i = 0; i < n; i++) {
            float v = a && a->type == JSON_ARR && i < a->count && a->kids[i].type == JSON_NUM
                          ? (float)a->kids[i].num
                          : NAN;
            float *slot[4] = {&g[i].sm_mhz, &g[i].mem_mhz, &g[i].temp_c, &g[i].power_w};
            *slot[k] = v;
        }
    }
    const json *r = json_get(j, "reasons");
    for (int i = 0; i < n; i++)
        g[i].reasons = r && r->type == JSON_ARR && i < r->count && r->kids[i].type == JSON_STR
                           ? reasons_parse(r->kids[i].str)
                           : 0;
}

/* Samples are times: finite, not negative. NULL, or what is wrong. */
static const char *bad_samples(const json *s, const char *key)
{
    static _Thread_local char why[96];
    if (!s)
        return NULL;
    if (s->type != JSON_ARR) {
        snprintf(why, sizeof why, "%s is not an array", key);
        return why;
    }
    for (int i = 0; i < s->count; i++)
        if (s->kids[i].type != JSON_NUM || !isfinite(s->kids[i].num) || s->kids[i].num < 0) {
            snprintf(why, sizeof why, "%s[%d] is not a time (a finite number >= 0)", key, i);
            return why;
        }
    return NULL;
}

/* A figure; NULL, or what is wrong with its samples. */
static const char *get_figure(const json *j, bench_figure *g)
{
    memset(g, 0, sizeof *g);
    if (!j || j->type != JSON_OBJ)
        return NULL;
    const char *why = bad_samples(json_get(j, "samples_ms"), "samples_ms");
    if (!why)
        why = bad_samples(json_get(j, "cpu_samples_ms"), "cpu_samples_ms");
    if (why)
        return why;
    const char *clock = json_str(j, "clock");
    g->clock = clock && strcmp(clock, "device") == 0 ? "device"
               : clock && strcmp(clock, "verification run") == 0 ? "verification run"
                                                                  : "real";
    g->iterations = (int64_t)json_num(j, "iterations", 1);
    const json *s = json_get(j, "samples_ms"), *c = json_get(j, "cpu_samples_ms");
    for (int i = 0; s && s->type == JSON_ARR && i < s->count && i < MAX_SAMPLES; i++) {
        g->sample[i] = s->kids[i].num / 1e3;
        g->cpu[i] = c && c->type == JSON_ARR && i < c->count ? c->kids[i].num / 1e3 : NAN;
        g->reps = i + 1;
    }
    const json *d = json_get(j, "dropped_samples_ms");
    for (int i = 0; d && d->type == JSON_ARR && i < d->count && i < MAX_DROPPED; i++)
        g->dropped_sample[i] = d->kids[i].num / 1e3;
    double dropped = json_num(j, "dropped", 0);
    g->dropped = dropped > 0 && dropped < 1e9 ? (int)dropped : 0;
    const json *gpu = json_get(j, "gpu");
    if (gpu && gpu->type == JSON_OBJ) {
        g->have_gpu = 1;
        get_gpu(gpu, g->gpu, g->reps);
        get_gpu(json_get(j, "dropped_gpu"), g->dropped_gpu,
                g->dropped < MAX_DROPPED ? g->dropped : MAX_DROPPED);
    }
    const json *st = json_get(j, "stages_ms");
    const double runs = json_num(j, "stage_runs", 0);
    if (st && st->type == JSON_OBJ && runs >= 1 && runs < 1e12) {
        g->stage_runs = (int64_t)runs;
        for (int k = 0; k < BENCH_STAGES; k++)
            g->stage_s[k] = json_num(st, bench_stage_names[k], 0) / 1e3 * runs;
    }
    const char *stop = json_str(j, "stop");
    snprintf(g->stop, sizeof g->stop, "%s", stop ? stop : "");
    g->seconds = json_num(j, "seconds", 0);
    bench_figure_stats(g);
    return NULL;
}

/* An entry; NULL, or the field that is wrong and why (static). */
static const char *get_entry(const json *j, bench_entry *e)
{
    e->have_rep = json_get(json_get(j, "verify"), "ok") != NULL;
    for (int i = 0; i < ENTRY_FIELDS; i++) {
        const entry_field *d = &entry_fields[i];
        if (!d->rep || e->have_rep)
            get_field(d->group ? json_get(j, d->group) : j, d, e);
    }
    const char *names[3] = {"compute", "compute_cold", "e2e"};
    bench_figure *fig[3] = {&e->compute, &e->compute_cold, &e->e2e};
    static _Thread_local char why[160];
    for (int k = 0; k < 3; k++) {
        const char *bad = get_figure(json_get(j, names[k]), fig[k]);
        if (bad) {
            snprintf(why, sizeof why, "%s.%s", names[k], bad);
            return why;
        }
    }
    return NULL;
}

/* Results are files of the results folder: a link found there is reported
 * and left alone, never read through nor written through. */
static int is_link(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

int bench_store_read(const char *path, bench_result *r)
{
    if (is_link(path))
        return pcb_fail(PCB_EBADFILE, "%s: a symbolic link, not a results file: left alone", path);
    json doc;
    int rc = json_load(path, &doc);
    if (rc != PCB_OK)
        return rc;
    const char *format = json_str(&doc, "format");
    if (!format || strcmp(format, BENCH_RESULTS_FORMAT) != 0) {
        char seen[64];
        const json *fv = json_get(&doc, "format");
        if (fv && fv->type == JSON_NUM)
            snprintf(seen, sizeof seen, "%g", fv->num);
        else
            snprintf(seen, sizeof seen, "%s", format ? format : "none");
        json_free(&doc);
        return pcb_fail(PCB_EUNSUPPORTED, "%s: results format %s; this pcbench reads %s only", path,
                        seen, BENCH_RESULTS_FORMAT);
    }
    const json *cfg = json_get(&doc, "config"), *res = json_get(&doc, "results");
    const char *id = json_str(cfg, "id");
    if (!id || strcmp(id, r->config.id) != 0 || !res || res->type != JSON_ARR) {
        json_free(&doc);
        return pcb_fail(PCB_EBADFILE, "%s: not the results of %s", path, r->config.id);
    }
    r->load_avg = json_num(&doc, "load_avg", -1);
    const char *machine = json_str(json_get(&doc, "env"), "machine");
    const char *cpu = json_str(json_get(&doc, "env"), "cpu");
    const json *gpu_env = json_get(json_get(&doc, "env"), "gpu");
    const char *gpu = gpu_env && gpu_env->type == JSON_OBJ ? json_str(gpu_env, "name") : NULL;
    snprintf(r->cpu, sizeof r->cpu, "%s", cpu ? cpu : "");
    snprintf(r->gpu, sizeof r->gpu, "%s", gpu ? gpu : "");
    snprintf(r->machine, sizeof r->machine, "%s", machine ? machine : "");
    const char *ref = json_str(&doc, "reference");
    snprintf(r->reference, sizeof r->reference, "%s", ref ? ref : "");
    for (int i = 0; i < res->count; i++) {
        const char *impl = json_str(&res->kids[i], "impl");
        bench_entry *e = impl ? bench_result_entry(r, impl, 1) : NULL;
        if (!impl)
            continue;
        if (!e) {
            json_free(&doc);
            return pcb_fail(PCB_ENOMEM, "out of memory reading %s", path);
        }
        const char *bad = get_entry(&res->kids[i], e);
        if (bad) {
            pcb_fail(PCB_EBADFILE, "%s: results[%d] (%s): %s", path, i, impl, bad);
            json_free(&doc); /* impl is the document's */
            return PCB_EBADFILE;
        }
    }
    /* Keep the Google Benchmark reports: move them out of the document. */
    for (int i = 0; i < doc.count; i++)
        if (strcmp(doc.kids[i].key, "gbench") == 0 && doc.kids[i].type == JSON_ARR) {
            char *key = doc.kids[i].key; /* stays with the document */
            json_free(&r->gbench);
            r->gbench = doc.kids[i];
            r->gbench.key = NULL;
            doc.kids[i] = (json){.type = JSON_NULL, .key = key};
        }
    json_free(&doc);
    return PCB_OK;
}
