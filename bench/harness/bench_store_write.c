/* bench_store_write.c - a results file written whole (a temporary file
 * renamed), its configuration's fields from the problem's face, and the
 * merge of this run's figures with a stored file's under the folder's
 * lock. The paths, the entries' fields and the reader: bench_store.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/problems/problems.h"
#include "datasets/outfile.h"
#include "harness.h"

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
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return pcb_fail(PCB_EIO, "%s: not a regular file (%s): left alone, these results not "
                        "written", path, S_ISLNK(st.st_mode) ? "a symbolic link" : "a special file");
    pcb_outfile o;
    int rc = pcb_out_open(&o, path);
    if (rc != PCB_OK)
        return rc;
    FILE *f = o.f;
    const bench_config *c = &r->config;
    fputs("{\n  \"format\": ", f);
    json_put_str(f, BENCH_RESULTS_FORMAT);
    fputs(",\n  \"suite\": ", f);
    json_put_str(f, suite);
    fputs(",\n  \"config\": {\"id\": ", f);
    json_put_str(f, c->id);
    fputs(", \"problem\": ", f);
    json_put_str(f, pcb_problem_name(c->problem));
    fputs(", \"dataset\": ", f);
    json_put_str(f, c->dataset);
    fprintf(f, ", \"batch\": %lld, \"n\": %lld, \"nq\": %lld, \"m\": %lld",
            (long long)c->batch, (long long)c->n, (long long)c->nq, (long long)c->m);
    const bench_problem_face *face = bench_face(c->problem);
    if (face->json_fields)
        face->json_fields(f, c);
    if (c->max_gap > 0) {
        fputs(", \"max_gap\": ", f);
        json_put_num(f, c->max_gap);
    }
    if (c->shortest) { /* a ragged batch: each side's lengths */
        fputs(", \"lengths\": [", f);
        for (int side = 0; side < face->sides; side++) {
            fputs(side ? "], [" : "[", f);
            for (int64_t i = 0; i < c->batch; i++)
                fprintf(f, "%s%lld", i ? ", " : "", (long long)bench_cloud_length(c, side, i));
        }
        fputs("]]", f);
    }
    fputs("},\n", f);
    fputs("  \"reference\": ", f);
    json_put_str(f, r->reference);
    fputs(",\n  \"load_avg\": ", f);
    json_put_num(f, r->load_avg);
    fprintf(f, ",\n  \"env\": %s,\n  \"results\": [\n", env->json);
    for (int i = 0; i < r->count; i++) {
        bench_entry_put(f, &r->entries[i]);
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

/* The folder's lock: flock on the folder itself (no lock file left among
 * the results); held until the descriptor is closed. */
static int lock_folder(const char *path)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    if (bench_mkdirs(dir) != PCB_OK)
        return -1;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        pcb_fail(PCB_EIO, "%s: cannot open the results folder to lock it: %s", dir,
                 strerror(errno));
        return -1;
    }
    while (flock(fd, LOCK_EX) != 0)
        if (errno != EINTR) {
            pcb_fail(PCB_EIO, "%s: cannot lock the results folder: %s", dir, strerror(errno));
            close(fd);
            return -1;
        }
    return fd;
}

int bench_store_merge(const char *path, const char *suite, const bench_env *env,
                      const bench_result *r)
{
    const int lock = lock_folder(path);
    if (lock < 0)
        return PCB_EIO;
    bench_result stored = {.config = r->config};
    int rc = bench_store_read(path, &stored);
    if (rc == PCB_EUNSUPPORTED) { /* another format: refused, never overwritten */
        close(lock);
        return rc;
    }
    if (rc != PCB_OK) /* none yet, or unreadable: this run's alone */
        stored.count = 0;
    bench_result out = *r; /* its config, reference and Google Benchmark output (the
                              other run's raw output is not kept: its figures are) */
    out.count = 0;
    out.entries = calloc((size_t)(r->count + stored.count) + 1, sizeof *out.entries);
    if (!out.entries) {
        bench_result_free(&stored);
        close(lock);
        return pcb_fail(PCB_ENOMEM, "out of memory");
    }
    for (int i = 0; i < r->count; i++) { /* this run's, or the newer stored one */
        const bench_entry *theirs = bench_result_entry(&stored, r->entries[i].impl, 0);
        out.entries[out.count++] = r->entries[i].fresh || !theirs ? r->entries[i] : *theirs;
    }
    for (int i = 0; i < stored.count; i++) /* what only the other run measured */
        if (!bench_result_entry((bench_result *)r, stored.entries[i].impl, 0))
            out.entries[out.count++] = stored.entries[i];
    rc = bench_store_write(path, suite, env, &out);
    free(out.entries);
    bench_result_free(&stored);
    close(lock);
    return rc;
}
