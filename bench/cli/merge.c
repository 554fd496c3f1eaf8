/* merge.c - pcbench merge OUT FOLDER...: the results of shards (bench
 * --shard, make peers SHARD=) or of other runs into one results folder that
 * resume, compare, make tables and make plots read as one run's. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/harness/harness.h"
#include "cli.h"
#include "datasets/outfile.h"

static const char merge_help[] =
    "usage: pcbench merge OUT FOLDER [FOLDER...]\n"
    "Merge results folders (each a results root, <machine>/<suite>/*.json, as\n"
    "pcbench bench --results and make peers write them) into OUT, as Playwright's\n"
    "merge-reports merges shards: a configuration's figures implementation by\n"
    "implementation. One implementation of one configuration measured by two\n"
    "builds is refused (said; OUT keeps what it had); of one build, the newer\n"
    "figure is kept. The peers' files and the rest (logs) are copied where OUT\n"
    "has none; a different one OUT has is refused. Machines stay apart as their\n"
    "folders are. Exit status 0 merged, 1 something refused, 2 usage, 3 a folder\n"
    "or file that cannot be read, 5 a file that cannot be written.\n";

typedef struct {
    int configs, taken, kept, refused, copied, failed;
} tally;

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A results file's "env" object as text (bench_store_write writes it back). */
static char *env_text(const char *path)
{
    json doc;
    if (json_load(path, &doc) != PCB_OK)
        return NULL;
    char *text = NULL;
    size_t len = 0;
    const json *env = json_get(&doc, "env");
    FILE *f = env ? open_memstream(&text, &len) : NULL;
    if (f) {
        json_write(f, env);
        fclose(f);
    }
    json_free(&doc);
    return text;
}

/* Whole files alike. */
static int same_bytes(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        const int ca = fgetc(fa), cb = fgetc(fb);
        same = ca == cb;
        if (ca == EOF || cb == EOF)
            break;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

/* src copied to dst (written whole, then renamed). */
static int copy_file(const char *src, const char *dst)
{
    FILE *in = fopen(src, "rb");
    if (!in)
        return pcb_fail(PCB_EIO, "%s: %s", src, strerror(errno));
    pcb_outfile o;
    int rc = pcb_out_open(&o, dst);
    char buf[65536];
    size_t n;
    while (rc == PCB_OK && (n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, o.f) != n)
            rc = pcb_fail(PCB_EIO, "%s: %s", dst, strerror(errno));
    fclose(in);
    if (rc != PCB_OK) {
        if (o.f)
            pcb_out_abort(&o);
        return rc;
    }
    return pcb_out_commit(&o);
}

/* One configuration's file of a source into OUT's. */
static void merge_config(const char *src, const char *dst, const char *suite,
                         const bench_config *c, const char *from, tally *t)
{
    bench_result in = {.config = *c}, out = {.config = *c};
    if (bench_store_read(src, &in) != PCB_OK) {
        fprintf(stderr, "pcbench: merge: %s: left out\n", pcb_errmsg());
        t->failed++;
        return;
    }
    const int had = is_file(dst);
    if (had && bench_store_read(dst, &out) != PCB_OK) { /* another format, or broken */
        fprintf(stderr, "pcbench: merge: %s: left alone\n", pcb_errmsg());
        t->failed++;
        bench_result_free(&out);
        bench_result_free(&in);
        return;
    }
    bench_result merged = had ? out : in;
    merged.entries = calloc((size_t)(in.count + out.count) + 1, sizeof *merged.entries);
    merged.count = 0;
    if (!merged.entries) {
        fprintf(stderr, "pcbench: merge: %s: out of memory: left out\n", src);
        t->failed++;
        bench_result_free(&in);
        if (had)
            bench_result_free(&out);
        return;
    }
    int changed = !had;
    for (int i = 0; had && i < out.count; i++)
        merged.entries[merged.count++] = out.entries[i];
    for (int i = 0; i < in.count; i++) {
        const bench_entry *e = &in.entries[i];
        bench_entry *have = had ? bench_result_entry(&merged, e->impl, 0) : NULL;
        if (!have) {
            merged.entries[merged.count++] = *e;
            t->taken++, changed = 1;
        } else if (strcmp(have->build, e->build) != 0) {
            printf("refused: %s %s: measured by build %s in %s, %s here\n", c->id, e->impl,
                   e->build, from, have->build);
            t->refused++;
        } else if (strcmp(e->when, have->when) > 0) { /* the same build's newer figure */
            *have = *e;
            t->taken++, changed = 1;
        } else
            t->kept++;
    }
    char *env = changed ? env_text(had ? dst : src) : NULL;
    if (changed && env) {
        bench_env e = {.json = env};
        if (bench_store_write(dst, suite, &e, &merged) != PCB_OK) {
            fprintf(stderr, "pcbench: merge: %s: %s\n", dst, pcb_errmsg());
            t->failed++;
        } else
            t->configs++;
    } else if (changed) {
        fprintf(stderr, "pcbench: merge: %s: cannot read it back: left out\n", src);
        t->failed++;
    }
    free(env);
    free(merged.entries);
    bench_result_free(&in);
    if (had)
        bench_result_free(&out);
}

/* A suite folder of a source: its configurations merged, every other file
 * (the peers', logs) copied where OUT has none. */
static void merge_suite(const char *from, const char *machine, const char *name, const char *out,
                        tally *t)
{
    char src_dir[2048], dst_dir[2048], src[3072], dst[3072];
    snprintf(src_dir, sizeof src_dir, "%s/%s", from, machine);
    snprintf(dst_dir, sizeof dst_dir, "%s/%s", out, machine);
    bench_suite suite;
    const int known = bench_suite_get(name, &suite) == PCB_OK;
    char **done = NULL;
    int ndone = 0;
    for (int i = 0; known && i < suite.count; i++) {
        const bench_config *c = &suite.configs[i];
        if (bench_store_path(src_dir, name, c, src, sizeof src) != PCB_OK || !is_file(src) ||
            bench_store_path(dst_dir, name, c, dst, sizeof dst) != PCB_OK)
            continue;
        char **grown = realloc(done, (size_t)(ndone + 1) * sizeof *done);
        if (grown)
            done = grown, done[ndone++] = strdup(strrchr(src, '/') + 1);
        merge_config(src, dst, name, c, from, t);
    }
    snprintf(src, sizeof src, "%s/%s", src_dir, name);
    DIR *d = opendir(src);
    struct dirent *ent;
    while (d && (ent = readdir(d))) {
        int merged = ent->d_name[0] == '.';
        for (int k = 0; k < ndone && !merged; k++)
            merged = done[k] && strcmp(done[k], ent->d_name) == 0;
        snprintf(src, sizeof src, "%s/%s/%s", src_dir, name, ent->d_name);
        snprintf(dst, sizeof dst, "%s/%s/%s", dst_dir, name, ent->d_name);
        if (merged || !is_file(src))
            continue;
        if (!is_file(dst)) {
            char folder[2600];
            snprintf(folder, sizeof folder, "%s/%s", dst_dir, name);
            if (bench_mkdirs(folder) != PCB_OK || copy_file(src, dst) != PCB_OK) {
                fprintf(stderr, "pcbench: merge: %s\n", pcb_errmsg());
                t->failed++;
            } else
                t->copied++;
        } else if (!same_bytes(src, dst)) {
            printf("refused: %s: OUT holds another %s/%s/%s\n", src, machine, name, ent->d_name);
            t->refused++;
        }
    }
    if (d)
        closedir(d);
    for (int k = 0; k < ndone; k++)
        free(done[k]);
    free(done);
    if (known)
        bench_suite_free(&suite);
}

int cli_merge(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = pcb_getopt(argc, argv, "merge", "h", opts)) != -1) {
        if (c == 'h') {
            fputs(merge_help, stdout);
            return 0;
        }
        return PCB_EXIT_USAGE;
    }
    if (argc - optind < 2)
        return pcb_usage("merge", "need OUT and at least one results folder to merge into it");
    const char *out = argv[optind];
    for (int k = optind + 1; k < argc; k++)
        if (!is_dir(argv[k])) {
            fprintf(stderr, "pcbench: merge: %s is not a folder\n", argv[k]);
            return PCB_EXIT_INPUT;
        }
    tally t = {0};
    for (int k = optind + 1; k < argc; k++) {
        DIR *machines = opendir(argv[k]);
        struct dirent *m;
        while (machines && (m = readdir(machines))) {
            char path[2048];
            snprintf(path, sizeof path, "%s/%s", argv[k], m->d_name);
            if (m->d_name[0] == '.' || !is_dir(path))
                continue;
            DIR *suites = opendir(path);
            struct dirent *s;
            while (suites && (s = readdir(suites))) {
                char sp[3072];
                snprintf(sp, sizeof sp, "%s/%s", path, s->d_name);
                if (s->d_name[0] != '.' && is_dir(sp))
                    merge_suite(argv[k], m->d_name, s->d_name, out, &t);
            }
            if (suites)
                closedir(suites);
        }
        if (machines)
            closedir(machines);
    }
    printf("merge: %d configuration file%s written (%d figure%s taken, %d kept as OUT had "
           "them), %d other file%s copied, %d refused%s\n", t.configs, t.configs == 1 ? "" : "s",
           t.taken, t.taken == 1 ? "" : "s", t.kept, t.copied, t.copied == 1 ? "" : "s",
           t.refused, t.failed ? ", some files could not be read or written (said above)" : "");
    return t.failed ? PCB_EXIT_SYSTEM : t.refused ? PCB_EXIT_VERIFY : PCB_EXIT_OK;
}
