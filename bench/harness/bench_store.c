/* bench_store.c - one JSON file per configuration, rewritten atomically
 * after the configuration ran, so an interrupted run loses at most the
 * configuration in progress and the next run resumes after the last one
 * written. Layout: <results>/<machine>/<suite>/<problem>-<...>.json */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../impl/outfile.h"
#include "bench.h"

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
static void put_key(FILE *f, const char *indent, const char *key)
{
    fprintf(f, "%s", indent);
    json_put_str(f, key);
    fputs(": ", f);
}

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

static void put_figure(FILE *f, const bench_figure *g)
{
    if (g->reps < 1) {
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
    fputs(",\n        \"samples_ms\": ", f);
    put_ms_array(f, g->sample, g->reps);
    fputs(", \"cpu_samples_ms\": ", f);
    put_ms_array(f, g->cpu, g->reps);
    fputc('}', f);
}

static void put_entry(FILE *f, const bench_entry *e)
{
    const char *in = "\n      ";
    fputs("    {", f);
    put_key(f, "", "impl");
    json_put_str(f, e->impl);
    fputs(", \"device\": ", f);
    json_put_str(f, pcb_device_name(e->device));
    fprintf(f, ", \"exact\": %s, \"status\": ", e->exact ? "true" : "false");
    json_put_str(f, bench_status_name(e->status));
    fputc(',', f);
    put_key(f, in, "detail");
    json_put_str(f, e->detail);
    fputc(',', f);
    put_key(f, in, "when");
    json_put_str(f, e->when);
    fputs(", \"git\": ", f);
    json_put_str(f, e->git);
    fputs(", \"budget_s\": ", f);
    json_put_num(f, e->budget_s);
    fputs(", \"predicted_s\": ", f);
    json_put_num(f, e->predicted_s);
    fputc(',', f);
    put_key(f, in, "verify");
    fputs("{\"prepare_s\": ", f);
    json_put_num(f, e->prepare_s);
    fputs(", \"compute_s\": ", f);
    json_put_num(f, e->compute_s);
    fputs(", \"fetch_s\": ", f);
    json_put_num(f, e->fetch_s);
    fputs(", \"total_s\": ", f);
    json_put_num(f, e->total_s);
    if (e->have_rep) {
        const pcb_report *r = &e->rep;
        fprintf(f, ",\n        \"ok\": %s, \"detail\": ", r->ok ? "true" : "false");
        json_put_str(f, r->detail);
        fputs(", \"recall\": ", f);
        json_put_num(f, r->recall);
        fputs(", \"worst_ratio\": ", f);
        json_put_num(f, r->worst_ratio);
        fputs(", \"gap\": ", f);
        json_put_num(f, r->gap);
        fputs(", \"bound\": ", f);
        json_put_num(f, r->bound);
        fprintf(f, ", \"unmatched\": %lld", (long long)r->unmatched);
    }
    fputs("},", f);
    put_key(f, in, "counters");
    fprintf(f, "{\"distance_evals\": %lld, \"bids\": %lld, \"iterations\": %lld},",
            (long long)e->counters.distance_evals, (long long)e->counters.bids,
            (long long)e->counters.iterations);
    put_key(f, in, "compute");
    put_figure(f, &e->compute);
    fputc(',', f);
    put_key(f, in, "e2e");
    put_figure(f, &e->e2e);
    fputs("}", f);
}

int bench_store_write(const char *path, const char *suite, const bench_env *env,
                      const bench_result *r)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
        int rc = bench_mkdirs(dir);
        if (rc != PCB_OK)
            return rc;
    }
    pcb_outfile o;
    int rc = pcb_out_open(&o, path);
    if (rc != PCB_OK)
        return rc;
    FILE *f = o.f;
    const bench_config *c = &r->config;
    fputs("{\n  \"format\": \"pcbench-results/1\",\n  \"suite\": ", f);
    json_put_str(f, suite);
    fputs(",\n  \"config\": {\"id\": ", f);
    json_put_str(f, c->id);
    fputs(", \"problem\": ", f);
    json_put_str(f, pcb_problem_name(c->problem));
    fputs(", \"dataset\": ", f);
    json_put_str(f, c->dataset);
    fprintf(f, ", \"batch\": %lld, \"n\": %lld, \"nq\": %lld, \"m\": %lld},\n",
            (long long)c->batch, (long long)c->n, (long long)c->nq, (long long)c->m);
    fputs("  \"reference\": ", f);
    json_put_str(f, r->reference);
    fputs(",\n  \"load_avg\": ", f);
    json_put_num(f, r->load_avg);
    fprintf(f, ",\n  \"env\": %s,\n  \"results\": [\n", env->json);
    for (int i = 0; i < r->count; i++) {
        put_entry(f, &r->entries[i]);
        fputs(i + 1 < r->count ? ",\n" : "\n", f);
    }
    fputs("  ],\n  \"gbench\": ", f);
    if (r->gbench.type == JSON_ARR)
        json_write(f, &r->gbench);
    else
        fputs("[]", f);
    fputs("\n}\n", f);
    return pcb_out_commit(&o);
}

/* ---- reading --------------------------------------------------------------------- */
static void get_figure(const json *j, bench_figure *g)
{
    memset(g, 0, sizeof *g);
    if (!j || j->type != JSON_OBJ)
        return;
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
    bench_figure_stats(g);
}

static void get_entry(const json *j, bench_entry *e)
{
    const char *s;
    e->device = (s = json_str(j, "device")) && strcmp(s, "cuda") == 0 ? PCB_CUDA : PCB_CPU;
    const json *ex = json_get(j, "exact");
    e->exact = ex && ex->num != 0;
    e->status = bench_status_parse(json_str(j, "status"));
    snprintf(e->detail, sizeof e->detail, "%s", (s = json_str(j, "detail")) ? s : "");
    snprintf(e->when, sizeof e->when, "%s", (s = json_str(j, "when")) ? s : "");
    snprintf(e->git, sizeof e->git, "%s", (s = json_str(j, "git")) ? s : "");
    e->budget_s = json_num(j, "budget_s", 0);
    e->predicted_s = json_num(j, "predicted_s", -1);
    const json *v = json_get(j, "verify");
    e->prepare_s = json_num(v, "prepare_s", 0);
    e->compute_s = json_num(v, "compute_s", 0);
    e->fetch_s = json_num(v, "fetch_s", 0);
    e->total_s = json_num(v, "total_s", 0);
    if (json_get(v, "ok")) {
        e->have_rep = 1;
        e->rep.ok = json_num(v, "ok", 0) != 0;
        snprintf(e->rep.detail, sizeof e->rep.detail, "%s", (s = json_str(v, "detail")) ? s : "");
        e->rep.recall = json_num(v, "recall", -1);
        e->rep.worst_ratio = json_num(v, "worst_ratio", -1);
        e->rep.gap = json_num(v, "gap", -1);
        e->rep.bound = json_num(v, "bound", -1);
        e->rep.unmatched = (int64_t)json_num(v, "unmatched", 0);
    }
    const json *c = json_get(j, "counters");
    e->counters.distance_evals = (int64_t)json_num(c, "distance_evals", -1);
    e->counters.bids = (int64_t)json_num(c, "bids", -1);
    e->counters.iterations = (int64_t)json_num(c, "iterations", -1);
    get_figure(json_get(j, "compute"), &e->compute);
    get_figure(json_get(j, "e2e"), &e->e2e);
}

int bench_store_read(const char *path, bench_result *r)
{
    json doc;
    int rc = json_load(path, &doc);
    if (rc != PCB_OK)
        return rc;
    const json *cfg = json_get(&doc, "config"), *res = json_get(&doc, "results");
    const char *id = json_str(cfg, "id");
    if (!id || strcmp(id, r->config.id) != 0 || !res || res->type != JSON_ARR) {
        json_free(&doc);
        return pcb_fail(PCB_EBADFILE, "%s: not the results of %s", path, r->config.id);
    }
    r->load_avg = json_num(&doc, "load_avg", -1);
    const char *machine = json_str(json_get(&doc, "env"), "machine");
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
        get_entry(&res->kids[i], e);
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
