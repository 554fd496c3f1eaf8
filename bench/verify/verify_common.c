/* verify_common.c - the shared part of `pcbench verify`: run one case through every
 * implementation, validate, print a row. The problems' matrices live in
 * verify_<problem>.c. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "defects.h"
#include "verify.h"
#include "bench/columns.h"
#include "bench/harness/harness.h"

static int known_defects;
/* Rows by result, and the implementations unavailable here (said once: a
 * host without a GPU would otherwise print a skip row per CUDA case). */
static int rows_pass, rows_skip;
enum { MAX_UNAVAILABLE = 64 };
static const pcb_impl *unavailable[MAX_UNAVAILABLE];
static int n_unavailable;

int pcb_verify_known_defects(void)
{
    return known_defects;
}

void pcb_verify_counts(int *pass, int *skip, char *unavailable_names, size_t len)
{
    *pass = rows_pass, *skip = rows_skip;
    size_t used = 0;
    if (len)
        unavailable_names[0] = '\0';
    for (int i = 0; i < n_unavailable && used < len; i++) {
        int n = snprintf(unavailable_names + used, len - used, "%s%s/%s", i ? ", " : "",
                         pcb_problem_name(unavailable[i]->problem), unavailable[i]->name);
        used += n > 0 ? (size_t)n : 0;
    }
}

/* 1 the first time an implementation is unavailable (its row is printed). */
static int first_unavailable(const pcb_impl *impl)
{
    for (int i = 0; i < n_unavailable; i++)
        if (unavailable[i] == impl)
            return 0;
    if (n_unavailable < MAX_UNAVAILABLE)
        unavailable[n_unavailable++] = impl;
    return 1;
}

void pcb_verify_header(FILE *out, pcb_problem p)
{
    fprintf(out, "\n== verify %s ==\n%-40s %-20s %-5s %-6s %s\n", pcb_problem_name(p), "case",
            "implementation", "dev", "result", "detail");
}

void pcb_verify_skip(FILE *out, const char *label, const char *why)
{
    pcb_column(out, label, 40);
    fprintf(out, " %-20s %-5s %-6s %s\n", "-", "-", "skip", why);
    fflush(out);
}

#define REAL_DIR "datasets/real"

static int is_cloud_file(const char *name)
{
    static const char *const ext[] = {".ply", ".pcd", ".xyz", ".txt", ".csv",
                                      ".pts", ".pwn", ".asc", ".bin"};
    size_t len = strlen(name);
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++)
        if (name[0] != '.' && len > 4 && strcmp(name + len - 4, ext[i]) == 0)
            return 1;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int pcb_verify_real(size_t max_files,
                    int (*one)(const char *path, const char *name, const char *impl, FILE *out),
                    const char *impl, FILE *out)
{
    DIR *dir = opendir(REAL_DIR);
    if (!dir) {
        pcb_verify_skip(out, "real clouds", "no " REAL_DIR " folder (make datasets fetches them)");
        return 0;
    }
    char **names = NULL;
    size_t count = 0, room = 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(dir))) {
        if (!is_cloud_file(e->d_name))
            continue;
        if (count == room) {
            char **more = realloc(names, (room = room ? 2 * room : 32) * sizeof *names);
            if (!more) {
                rc = pcb_fail(PCB_ENOMEM, "verify: no memory for file names");
                break;
            }
            names = more;
        }
        if (!(names[count] = strdup(e->d_name)))
            rc = pcb_fail(PCB_ENOMEM, "verify: no memory for file names");
        else
            count++;
    }
    closedir(dir);
    if (count)
        qsort(names, count, sizeof names[0], by_name);
    else if (rc == 0)
        pcb_verify_skip(out, "real clouds", "no point cloud files in " REAL_DIR);
    int failures = 0;
    for (size_t i = 0; i < count; i++) {
        if (rc == 0 && i < max_files) {
            char path[sizeof REAL_DIR + 256 + 1];
            snprintf(path, sizeof path, "%s/%s", REAL_DIR, names[i]);
            int r = one(path, names[i], impl, out);
            if (r < 0)
                rc = r;
            else
                failures += r;
        }
        free(names[i]);
    }
    free(names);
    return rc < 0 ? rc : failures;
}

int pcb_verify_impl_known(pcb_problem p, const char *impl)
{
    return !impl || pcb_find(p, impl) || pcb_not_built_find(p, impl);
}

static int large;

void pcb_verify_set_large(int on)
{
    large = on;
}

int pcb_verify_large(void)
{
    return large;
}

static void row(FILE *out, const pcb_verify_case *c, const pcb_impl *impl, const char *result,
                const char *detail)
{
    pcb_column(out, c->label, 40);
    fprintf(out, " %-20s %-5s %-6s %s\n", impl->name, pcb_device_name(impl->device), result,
            detail);
    fflush(out);
    rows_pass += !strcmp(result, "pass");
    rows_skip += !strcmp(result, "skip");
}

/* Defect mode: the cases run the planted variants of the catalog instead
 * of the real implementations, and tally where each one was caught. */
static int defect_mode;
static struct {
    int cases, caught;
    char where[200];
} tally[PCB_MAX_DEFECTS];

void pcb_verify_set_defects(int on)
{
    defect_mode = on;
    memset(tally, 0, sizeof tally);
}

static int defect_index(const pcb_impl *impl)
{
    const pcb_defect *d = pcb_defects();
    for (int k = 0; d[k].impl && k < PCB_MAX_DEFECTS; k++)
        if (d[k].impl == impl)
            return k;
    return -1;
}

/* A variant's row: "caught" where the answer was wrong, else "pass" (as every row). */
static void tally_defect(const pcb_verify_case *c, const pcb_impl *impl, int wrong)
{
    int k = defect_index(impl);
    if (k < 0)
        return;
    tally[k].cases++;
    if (wrong && tally[k].caught++ < 3) {
        size_t len = strlen(tally[k].where);
        snprintf(tally[k].where + len, sizeof tally[k].where - len, "%s%s", len ? "; " : "",
                 c->label);
    }
}

int pcb_verify_defect_report(FILE *out, int problem)
{
    int bad = 0;
    fprintf(out, "\n== defects: caught where the verify matrices find them wrong ==\n%-5s %-18s "
                 "%-8s %-9s %s\n", "prob", "defect", "verdict", "caught", "first cases caught");
    for (int k = 0; pcb_defects()[k].impl && k < PCB_MAX_DEFECTS; k++) {
        const pcb_defect *d = &pcb_defects()[k];
        if (problem >= 0 && (int)d->impl->problem != problem)
            continue;
        /* A variant that ran nowhere (a CUDA one without a device) is not
         * run here, neither caught nor missed. */
        const int ran = tally[k].cases > 0;
        const int ok = !ran || (d->accepted ? tally[k].caught == 0 : tally[k].caught > 0);
        char count[32];
        snprintf(count, sizeof count, "%d/%d", tally[k].caught, tally[k].cases);
        fprintf(out, "%-5s %-18s %-8s %-9s %s\n", pcb_problem_name(d->impl->problem),
                d->impl->name,
                !ran ? "not run" : ok ? (d->accepted ? "accepted" : "caught") : "MISSED", count,
                !ran ? "(unavailable here: every case skipped)"
                : d->accepted ? "(correct under the rules: must never be caught)"
                              : tally[k].where);
        bad += !ok;
    }
    return bad;
}

/* The reference's answer to the case for the canonical rule, run once for
 * every canonical implementation of the case (NULL: not needed yet, or it
 * could not run, and the judge says so). */
typedef struct {
    int32_t *index;
    int tried;
} case_reference;

static const int32_t *reference_of(const pcb_task *t, const pcb_promise *p, case_reference *c)
{
    const pcb_impl *ref = pcb_judge_reference(t, p);
    if (ref && !c->tried) {
        c->tried = 1;
        pcb_result r;
        if (pcb_result_alloc(t, &r) == PCB_OK && pcb_run(ref, t, &r, NULL) == PCB_OK)
            c->index = r.index, r.index = NULL;
        pcb_result_free(&r);
    }
    return ref ? c->index : NULL;
}

int pcb_verify_case_run(const pcb_verify_case *c, const char *name, FILE *out)
{
    pcb_task tuned = c->task;
    bench_tuning_env(&tuned.opt);
    const pcb_task *t = &tuned;
    int failures = 0;
    case_reference reference = {0};
    const pcb_impl *planted[PCB_MAX_DEFECTS + 1] = {0};
    for (int k = 0; defect_mode && pcb_defects()[k].impl && k < PCB_MAX_DEFECTS; k++)
        planted[k] = pcb_defects()[k].impl;
    for (const pcb_impl *const *it = defect_mode ? planted : pcb_registry(); *it; it++) {
        const pcb_impl *impl = *it;
        if (impl->problem != t->problem || (name && strcmp(name, impl->name) != 0))
            continue;
        pcb_result r;
        if (pcb_result_alloc(t, &r) != PCB_OK) {
            free(reference.index);
            return PCB_ENOMEM;
        }
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int rc = pcb_run(impl, t, &r, NULL);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ms = 1e3 * (double)(t1.tv_sec - t0.tv_sec) + 1e-6 * (double)(t1.tv_nsec - t0.tv_nsec);
        char detail[400];
        if (rc == PCB_EUNAVAIL && !first_unavailable(impl)) {
            rows_skip++; /* said in its first row and in the summary */
        } else if (rc == PCB_EUNSUPPORTED || rc == PCB_EUNAVAIL) {
            snprintf(detail, sizeof detail, "%s: %s%s", pcb_strerror(rc), pcb_errmsg(),
                     rc == PCB_EUNAVAIL ? " (its other cases: not listed)" : "");
            row(out, c, impl, "skip", detail);
        } else if (rc != PCB_OK) {
            snprintf(detail, sizeof detail, "%s: %s", pcb_strerror(rc), pcb_errmsg());
            row(out, c, impl, defect_mode ? "caught" : "FAIL", detail);
            tally_defect(c, impl, 1);
            failures += !defect_mode;
        } else {
            const pcb_promise promise = pcb_promise_of(impl, t);
            pcb_judgement j;
            if (pcb_judge(t, &r, &promise, reference_of(t, &promise, &reference), &j) == PCB_OK)
                snprintf(detail, sizeof detail, "%s; %.3g ms", j.detail, ms); /* host to host */
            else
                snprintf(detail, sizeof detail, "%s", j.detail);
            known_defects += j.verdict == PCB_VERDICT_KNOWN;
            const int k = defect_mode ? defect_index(impl) : -1;
            const int wrong = k >= 0 ? pcb_defect_caught(&pcb_defects()[k], &j)
                                     : j.verdict == PCB_VERDICT_FAIL;
            row(out, c, impl,
                defect_mode ? (wrong ? "caught" : "pass")
                : j.verdict == PCB_VERDICT_PASS  ? "pass"
                : j.verdict == PCB_VERDICT_KNOWN ? "known"
                                                 : "FAIL",
                detail);
            tally_defect(c, impl, wrong);
            failures += wrong && !defect_mode;
        }
        pcb_result_free(&r);
    }
    free(reference.index);
    return failures;
}
