/* bench.c - `pcbench bench`: parses the options, runs the session
 * (harness/bench_session.c: resume, runs, store, gate, compare) and prints
 * the summary on stdout. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/harness/cuda_bench.h"
#include "datasets/outfile.h"
#include "bench/harness/harness.h"
#include "bench/harness/gbench.h"
#include "bench/problems/problems.h"
#include "cli.h"
#include "bench/columns.h"


static const char help[] =
    "usage: pcbench bench [--suite seed|full|train|knn|ball|ragged|grid|quick] [options]\n"
    "Verify, then time, every implementation on each configuration of a suite with\n"
    "Google Benchmark. Results go to RESULTS/MACHINE/SUITE/<configuration>.json, one\n"
    "file per configuration written as soon as it is done; a later run skips the\n"
    "configurations already stored (resume), so a long run may be split or stopped.\n"
    "  --suite NAME         seed (default): the configurations the documents report;\n"
    "                       full: sweeps for the plots; train: NN and chamfer at\n"
    "                       training batches; knn: k nearest at training batches\n"
    "                       and on lidar; ball: ball query; ragged: batches of\n"
    "                       clouds of different sizes beside equal-size twins;\n"
    "                       grid: grid sampling and serialization of sweeps and\n"
    "                       scans; quick: small, for CI\n"
    "  --problem P[,P]      only these problems, of" PCB_PROBLEM_NAMES "\n"
    "  --impl NAME[,NAME]   only these implementations\n"
    "  --filter TEXT[,TEXT] only configurations whose id contains one of the TEXTs\n"
    "                       (ids look like fps/uniform/b6/n10000/m1000)\n"
    "  --budget S           seconds for the whole run (default: seed 270; other\n"
    "                       suites none, 0 = none): what the verification runs\n"
    "                       leave goes to the configurations' figures in\n"
    "                       proportion to their predicted least times; a figure\n"
    "                       its share stops says \"stopped by the budget\"\n"
    "  --run-budget S       skip runs predicted to take over S seconds each, the\n"
    "                       problem's reference (the speedups' base) over 4 S\n"
    "                       (default per suite: seed 10, full 20, train 20, knn 20,\n"
    "                       quick 5)\n"
    "  --target-noise P     take samples until the median's relative standard error\n"
    "                       is under P (default 0.005), the figure's time is up, or\n"
    "                       100 samples are kept\n"
    "  --min-reps N         samples per figure at least (default: GPU 10; CPU per\n"
    "                       suite: 5, 3, 5, 5, 7)\n"
    "  --figure-time S      seconds a figure may take (default per suite: seed 1,\n"
    "                       others 1.5, quick 0.25; never over its share of a\n"
    "                       budget); a run longer than twice that is timed once:\n"
    "                       the verification run is its figure\n"
    "  --reps R             exactly R samples per figure, no noise target\n"
    "  --throttle-threshold F  drop GPU samples taken while the SM clock was under F\n"
    "                       times its maximum (default 0.75; NVML, read around\n"
    "                       every sample; a figure with more dropped than kept\n"
    "                       is marked unreliable)\n"
    "  --cpu-cold           CPU implementations also get a cold figure (64 MiB\n"
    "                       written and read before every iteration); GPU ones\n"
    "                       always have one (the L2 overwritten)\n"
    "  --threads T          OpenMP threads while timing, 0 = all (default; quick: 1,\n"
    "                       for stable CPU-time ratios); verification uses all\n"
    "  --force              re-run the selected implementations even where stored\n"
    "                       (the stored results of the others are kept)\n"
    "  --max-time S         start no new configuration after S seconds\n"
    "  --shard i/N          run the i-th of N shards (1-based) of the selected\n"
    "                       configurations: dealt longest first by their problem's\n"
    "                       work, the same on every host; without it Bazel's\n"
    "                       TEST_SHARD_INDEX/TEST_TOTAL_SHARDS, a Slurm array's\n"
    "                       SLURM_ARRAY_TASK_* or Kubernetes' JOB_COMPLETION_INDEX\n"
    "                       (with --shards N) are read, and said\n"
    "  --shards N           the shards of a Kubernetes Indexed Job (its completions)\n"
    "  --devices LIST       several GPUs of this host (0,1,2,3, or all): the CUDA\n"
    "                       implementations dealt into one shard a GPU, run side by\n"
    "                       side, one process a GPU on its share of the cores (logs\n"
    "                       in RESULTS/MACHINE/logs); then the CPU ones alone, on\n"
    "                       every core; each figure records its GPU's PCI bus id\n"
    "  --results DIR        results root (default results)\n"
    "  --machine NAME       machine folder name (default from the GPU, else the CPU\n"
    "                       model and core count)\n"
    "  --list               show the configurations and what is stored; run nothing\n"
    "  --regress DIR        run afresh, store nothing, and gate against the baseline\n"
    "                       in DIR: all verified, work counters equal, instructions per\n"
    "                       compute of every CPU implementation (pcbench count) within\n"
    "                       10% of the baseline of the same toolchain; CPU-time ratios\n"
    "                       to the reference are shown as information\n"
    "  --gate-timing        with --regress, also gate those ratios, only on the\n"
    "                       baseline's machine: a Mann-Whitney test over the samples,\n"
    "                       failing where the change is significant (p < --alpha)\n"
    "                       and beyond the tolerance (default 0.5)\n"
    "  --update-baseline DIR  run afresh and write the results and this toolchain's\n"
    "                       instruction counts to DIR as the baseline\n"
    "  --compare DIR        compare compute times with a machine folder (e.g.\n"
    "                       results/gpu-nvidia-h100-80gb-hbm3) by a Mann-Whitney test\n"
    "                       over the samples: fails where the change is significant\n"
    "                       (p < --alpha, default 0.01) and its Hodges-Lehmann ratio\n"
    "                       slower by more than the tolerance (default 0.25); see\n"
    "                       pcbench compare for two stored runs\n"
    "  --tolerance T        relative tolerance for --regress or --compare\n"
    "  --alpha A            significance level of --compare and --gate-timing\n"
    "                       (default 0.01)\n"
    "  --write-inputs DIR   time nothing: write the selected configurations' clouds\n"
    "                       (DIR/<configuration>/a-<i>.ply, b-<i>.ply) and DIR/configs.tsv,\n"
    "                       for timing other libraries on the same inputs\n"
    "Statuses: ok, failed-verification, failed-run, unsupported, skipped-budget,\n"
    "unavailable. Fault injection for testing the gate: PCBENCH_FAULT=slow:fps/dp:4\n"
    "runs that implementation's compute 4 times per timed or counted iteration (1.25:\n"
    "5 times in 4 iterations, a quarter more work);\n"
    "PCBENCH_FAULT=count:fps/dp adds 1 to its work counters; PCBENCH_FAULT=ties:fps/omp\n"
    "gives FPS clouds duplicated points and omp's answer ties broken toward the highest\n"
    "index: valid, but not dp's, so judged wrong (comma-separate several).\n"
    "Exit status: 0 ok, 1 a verification failure or a regression, 2 usage,\n"
    "4 Google Benchmark not built, 5 system error.\n";

#define usage(...) pcb_usage("bench", __VA_ARGS__)


static int parse(int argc, char **argv, bench_opts *o, bench_devices *devices,
                 unsigned char *skip)
{
    static const struct option opts[] = {
        {"suite", required_argument, 0, 's'},    {"problem", required_argument, 0, 'p'},
        {"impl", required_argument, 0, 'I'},     {"filter", required_argument, 0, 'f'},
        {"budget", required_argument, 0, 'B'},   {"reps", required_argument, 0, 'R'},
        {"run-budget", required_argument, 0, 'b'},
        {"cpu-cold", no_argument, 0, 'F'},       {"force", no_argument, 0, 'x'},
        {"target-noise", required_argument, 0, 'O'}, {"min-reps", required_argument, 0, 'm'},
        {"figure-time", required_argument, 0, 'Y'},
        {"throttle-threshold", required_argument, 0, 'H'},
        {"max-time", required_argument, 0, 'T'}, {"results", required_argument, 0, 'r'},
        {"machine", required_argument, 0, 'M'},  {"list", no_argument, 0, 'l'},
        {"regress", required_argument, 0, 'G'},  {"update-baseline", required_argument, 0, 'U'},
        {"compare", required_argument, 0, 'C'},  {"tolerance", required_argument, 0, 't'},
        {"alpha", required_argument, 0, 'A'},
        {"threads", required_argument, 0, 'N'},  {"help", no_argument, 0, 'h'},
        {"gate-timing", no_argument, 0, 'g'},    {"write-inputs", required_argument, 0, 'W'},
        {"shard", required_argument, 0, 'D'},    {"shards", required_argument, 0, 'E'},
        {"devices", required_argument, 0, 'V'},
        {0, 0, 0, 0}};
    const char *devices_text = NULL;
    const char *shard = NULL;
    int shards = 0;
    double v;
    int c;
    optind = 1;
    for (int before = optind; (c = pcb_getopt(argc, argv, "bench", "h", opts)) != -1;
         before = optind) {
        switch (c) {
        case 'V': /* its words are left out of the shards' own commands */
            devices_text = optarg;
            for (int i = before; i < optind && i < argc; i++)
                skip[i] = 1;
            break;
        case 's': o->suite = optarg; break;
        case 'p': o->problems = optarg; break;
        case 'I': o->impls = optarg; break;
        case 'f': o->filter = optarg; break;
        case 'B':
            if (!pcb_opt_f64("bench", "--budget", optarg, 0, 1e7, &o->budget))
                return PCB_EXIT_USAGE;
            o->have_budget = 1;
            break;
        case 'b':
            if (!pcb_opt_f64("bench", "--run-budget", optarg, 1e-3, 1e7, &o->run_budget))
                return PCB_EXIT_USAGE;
            o->have_run_budget = 1;
            break;
        case 'R':
            if (!pcb_opt_f64("bench", "--reps", optarg, 1, MAX_SAMPLES, &v))
                return PCB_EXIT_USAGE;
            o->reps = (int)v;
            break;
        case 'N':
            if (!pcb_opt_f64("bench", "--threads", optarg, 0, 4096, &v))
                return PCB_EXIT_USAGE;
            o->threads = (int)v;
            o->have_threads = 1;
            break;
        case 'F': o->cpu_cold = 1; break;
        case 'O':
            if (!pcb_opt_f64("bench", "--target-noise", optarg, 1e-5, 1, &o->target_noise))
                return PCB_EXIT_USAGE;
            break;
        case 'm':
            if (!pcb_opt_f64("bench", "--min-reps", optarg, 2, MAX_SAMPLES, &v))
                return PCB_EXIT_USAGE;
            o->min_reps = (int)v;
            break;
        case 'Y':
            if (!pcb_opt_f64("bench", "--figure-time", optarg, 1e-3, 1e6, &o->figure_time))
                return PCB_EXIT_USAGE;
            o->have_figure_time = 1;
            break;
        case 'H':
            if (!pcb_opt_f64("bench", "--throttle-threshold", optarg, 0, 1, &o->throttle))
                return PCB_EXIT_USAGE;
            break;
        case 'x': o->force = 1; break;
        case 'T':
            if (!pcb_opt_f64("bench", "--max-time", optarg, 0, 1e9, &o->max_time))
                return PCB_EXIT_USAGE;
            break;
        case 'r':
            if (!*optarg) /* "" would put results under the file system's root */
                return usage("--results: an empty folder name");
            o->results_dir = optarg;
            break;
        case 'M': o->machine = optarg; break;
        case 'l': o->list_only = 1; break;
        case 'G': o->regress_dir = optarg; break;
        case 'g': o->gate_timing = 1; break;
        case 'U': o->baseline_out = optarg; break;
        case 'W': o->inputs_dir = optarg; break;
        case 'C': o->compare_dir = optarg; break;
        case 't':
            if (!pcb_opt_f64("bench", "--tolerance", optarg, 1e-3, 100, &o->tolerance))
                return PCB_EXIT_USAGE;
            o->have_tolerance = 1;
            break;
        case 'A':
            if (!pcb_opt_f64("bench", "--alpha", optarg, 1e-9, 0.5, &o->alpha))
                return PCB_EXIT_USAGE;
            break;
        case 'D': shard = optarg; break;
        case 'E':
            if (!pcb_opt_f64("bench", "--shards", optarg, 1, 4096, &v))
                return PCB_EXIT_USAGE;
            shards = (int)v;
            break;
        case 'h': fputs(help, stdout); return 0;
        default: return PCB_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return usage("unexpected argument '%s'", argv[optind]);
    if (shard && shards)
        return usage("%s", "--shard and --shards exclude each other (--shards goes with "
                     "JOB_COMPLETION_INDEX)");
    if (shard ? bench_shard_parse(shard, &o->shard) != PCB_OK
              : bench_shard_from_env(shards, &o->shard) != PCB_OK)
        return usage("%s", pcb_errmsg());
    if (devices_text) {
        const char *other = o->shard.total      ? o->shard.source
                            : o->regress_dir    ? "--regress"
                            : o->baseline_out   ? "--update-baseline"
                            : o->compare_dir    ? "--compare"
                            : o->inputs_dir     ? "--write-inputs"
                            : o->list_only      ? "--list"
                                                : NULL;
        if (other)
            return usage("--devices runs its own shards, one a GPU; it excludes %s", other);
        if (bench_devices_parse(devices_text, devices) != PCB_OK)
            return usage("%s", pcb_errmsg());
    }
    if (o->regress_dir && o->baseline_out)
        return usage("%s", "--regress and --update-baseline exclude each other");
    if (o->gate_timing && !o->regress_dir)
        return usage("%s", "--gate-timing goes with --regress");
    if (o->machine && (!*o->machine || strspn(o->machine, "abcdefghijklmnopqrstuvwxyz"
                                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
                                           strlen(o->machine)))
        return usage("--machine '%s': use letters, digits, '.', '_' and '-'", o->machine);
    if (!pcb_opt_selection("bench", o->problems, o->impls))
        return PCB_EXIT_USAGE;
    return -1;
}

/* ---- output ----------------------------------------------------------------------- */
static void fmt_ms(char *buf, size_t len, const bench_figure *f)
{
    double ms = f->median * 1e3;
    if (f->reps < 1 || !isfinite(ms))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, ms >= 100 ? "%.0f" : ms >= 1 ? "%.3g" : "%.2g", ms);
}

/* Whether a figure stopped before its noise target: by its time, its share of
 * a budget, the most samples or throttling (not "noise", nor a fixed count). */
static int short_of_target(const bench_figure *f)
{
    return f->reps > 0 && (!strcmp(f->stop, "time") || !strcmp(f->stop, "budget") ||
                           !strcmp(f->stop, "samples") || !strcmp(f->stop, "throttled"));
}

/* since: when a --devices run's shards began ("" none): what they measured
 * is this run's, not stored before. */
static void summary(const bench_suite *s, const bench_env *env, bench_result *res, int count,
                    int fresh_configs, const char *since)
{
    int dropped = 0, unreliable = 0, shorts = 0;
    if (since[0]) /* what the device shards ran was run now too */
        for (int i = 0, k; i < count; i++) {
            for (k = 0; k < res[i].count && (res[i].entries[k].fresh ||
                                             strcmp(res[i].entries[k].when, since) < 0); k++)
                ;
            int fresh = 0;
            for (int j = 0; j < res[i].count; j++)
                fresh |= res[i].entries[j].fresh;
            fresh_configs += k < res[i].count && !fresh;
        }
    printf("\n== bench %s on %s: %d configuration%s (%d run now) ==\n", s->name, env->machine,
           count, count == 1 ? "" : "s", fresh_configs);
    printf("%-32s %-18s %-4s %11s %6s %11s %11s %9s  %s\n", "configuration", "implementation",
           "dev", "compute ms", "noise", "cold ms", "e2e ms", "vs ref", "status");
    for (int i = 0; i < count; i++) {
        bench_result *r = &res[i];
        const bench_entry *ref = r->reference[0] ? bench_result_entry(r, r->reference, 0) : NULL;
        if (r->count == 0)
            printf("%-32s (no %s implementation selected or built)\n", r->config.id,
                   pcb_problem_name(r->config.problem));
        for (int k = 0; k < r->count; k++) {
            const bench_entry *e = &r->entries[k];
            char cm[32], ck[32], em[32], sp[32] = "-", nz[16] = "-";
            fmt_ms(cm, sizeof cm, &e->compute);
            fmt_ms(ck, sizeof ck, &e->compute_cold);
            fmt_ms(em, sizeof em, &e->e2e);
            const int short_of = short_of_target(&e->compute);
            if (e->compute.reps == 1 && e->compute.clock &&
                !strcmp(e->compute.clock, "verification run"))
                snprintf(nz, sizeof nz, "1 run~");
            else if (isfinite(e->compute.noise) && e->compute.reps > 0)
                snprintf(nz, sizeof nz, "%.2g%%%s", e->compute.noise * 100, short_of ? "~" : "");
            else if (e->compute.reps > 0 && short_of)
                snprintf(nz, sizeof nz, "~");
            shorts += e->status == ST_OK && short_of;
            if (ref && ref->status == ST_OK && e->status == ST_OK && e->compute.median > 0)
                snprintf(sp, sizeof sp, "%.3gx", ref->compute.median / e->compute.median);
            const bench_figure *figs[3] = {&e->compute, &e->compute_cold, &e->e2e};
            int d = 0, u = 0;
            for (int f = 0; f < 3; f++) {
                d += figs[f]->dropped;
                u += figs[f]->unreliable;
            }
            dropped += d;
            unreliable += u;
            pcb_column(stdout, k ? "" : r->config.id, 32);
            printf(" %-18s %-4s %11s %6s %11s %11s %9s  %s",
                   e->impl, pcb_device_name(e->device), cm, nz, ck, em, sp,
                   bench_status_name(e->status));
            if (!e->fresh && since[0] && strcmp(e->when, since) >= 0)
                printf(" (a device's shard%s%s)", e->gpu_bus[0] ? ", GPU " : "", e->gpu_bus);
            else if (!e->fresh) /* this build measured it on this host, then */
                printf(" (stored %.10s)", e->when);
            if (d)
                printf(" (%d throttled sample%s dropped%s)", d, d == 1 ? "" : "s",
                       u ? ", unreliable" : "");
            putchar('\n');
        }
    }
    printf("(figures: medians of the kept samples; noise: the relative standard error of the "
           "compute median; cold: caches flushed before every iteration)\n");
    if (shorts)
        printf("~: %d compute figure%s stopped short of the noise target (the figure time or the "
               "budget's share ran out; 1 run: the verification run, longer than the figure "
               "time)\n", shorts, shorts == 1 ? "" : "s");
    if (dropped)
        printf("%d sample%s taken while the GPU was throttled %s dropped; %d figure%s unreliable "
               "(more dropped than kept)\n", dropped, dropped == 1 ? "" : "s",
               dropped == 1 ? "was" : "were", unreliable, unreliable == 1 ? "" : "s");
}

/* Say which CUDA implementations did not run, and why. */
static void not_run_note(bench_result *res, int count)
{
    char seen[2048] = "";
    size_t used = 0;
    const char *why = NULL;
    for (int i = 0; i < count; i++)
        for (int k = 0; k < res[i].count; k++) {
            const bench_entry *e = &res[i].entries[k];
            char name[80];
            snprintf(name, sizeof name, " %s/%s", pcb_problem_name(res[i].config.problem), e->impl);
            if (e->device != PCB_CUDA || e->status != ST_UNAVAILABLE || strstr(seen, name))
                continue;
            used += (size_t)snprintf(seen + used, sizeof seen - (used < sizeof seen ? used : sizeof seen),
                                     "%s", name);
            if (used >= sizeof seen)
                used = sizeof seen - 1;
            why = e->detail;
        }
    if (why)
        printf("\nCUDA implementations not run here (%s):%s\n", why, seen);
}

static void list_plan(const bench_suite *s, const char *dir, bench_result *res, int count,
                      double budget, double whole, const bench_env *env, const bench_opts *o)
{
    printf("suite %s: %s; %d configuration%s, budget %g s per run", s->name, s->about, count,
           count == 1 ? "" : "s", budget);
    if (whole > 0)
        printf(", %g s for the whole run", whole);
    printf("%s%s\n", dir ? ", results in " : "", dir ? dir : "");
    for (int i = 0; i < count; i++) {
        bench_result *r = &res[i];
        printf("%s\n", r->config.id);
        for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
            if ((*it)->problem != r->config.problem)
                continue;
            const bench_entry *e = bench_result_entry(r, (*it)->name, 0);
            if (r->config.max_gap > 0 && !(*it)->gap_option) {
                printf("  %-18s %-4s not run: no max_gap option\n", (*it)->name,
                       pcb_device_name((*it)->device));
                continue;
            }
            int avail = pcb_impl_available(*it) == PCB_OK;
            printf("  %-18s %-4s %s%s\n", (*it)->name, pcb_device_name((*it)->device),
                   e && bench_entry_final(e, budget, env, o) ? "stored: " : avail ? "to run" : "unavailable: ",
                   e && bench_entry_final(e, budget, env, o) ? bench_status_name(e->status)
                   : avail                          ? ""
                                                    : pcb_errmsg());
        }
    }
}

/* ---- the run ------------------------------------------------------------------------ */
/* --write-inputs: the clouds of the selected configurations and a table of
 * them, for scripts/peers/; no timing. An EMD configuration in loss mode
 * names its twin's folder (the same clouds), written once. */
static int write_inputs(const bench_opts *o, const bench_suite *suite)
{
    bench_env env;
    int rc = bench_env_collect(&env, o->machine);
    if (rc == PCB_OK)
        rc = bench_mkdirs(o->inputs_dir);
    pcb_outfile table = {0};
    char path[1200];
    snprintf(path, sizeof path, "%s/configs.tsv", o->inputs_dir);
    if (rc == PCB_OK)
        rc = pcb_out_open(&table, path);
    if (rc != PCB_OK) {
        fprintf(stderr, "pcbench: bench: %s\n", pcb_errmsg());
        return PCB_EXIT_SYSTEM;
    }
    fprintf(table.f, "# suite %s reps %d run_budget %g machine %s\n", suite->name,
            o->reps ? o->reps : suite->reps, o->have_run_budget ? o->run_budget : suite->run_budget,
            env.machine);
    fputs("id\tdir\tproblem\tdataset\tbatch\tn\tnq\tm\tstart\tk\tradius\tselect\tmax_gap\t"
          "fields\n", table.f);
    int written = 0;
    for (int i = 0; i < suite->count && rc == PCB_OK; i++) {
        const bench_config *c = &suite->configs[i];
        if (!bench_selected(o, c))
            continue;
        bench_config twin = *c;
        char name[96];
        if (c->max_gap > 0) /* "emd/.../gap0.05" -> "emd/..." */
            *strrchr(twin.id, '/') = '\0', twin.max_gap = 0;
        bench_config_name(&twin, name);
        snprintf(path, sizeof path, "%s/%s/a-0.ply", o->inputs_dir, name);
        const int have = c->max_gap > 0 && access(path, F_OK) == 0;
        snprintf(path, sizeof path, "%s/%s", o->inputs_dir, name);
        if (!have)
            rc = bench_data_write(&twin, path);
        /* the problem's own fields, as its results' "config" object has them */
        char *fields = NULL;
        size_t size = 0;
        FILE *own = open_memstream(&fields, &size);
        if (own && bench_face(c->problem)->json_fields)
            bench_face(c->problem)->json_fields(own, c);
        if (own)
            fclose(own);
        fprintf(table.f, "%s\t%s\t%s\t%s\t%lld\t%lld\t%lld\t%lld\t0\t%lld\t%.9g\t%s\t%.9g\t{%s}\n",
                c->id, name, pcb_problem_name(c->problem), c->dataset, (long long)c->batch,
                (long long)c->n, (long long)c->nq, (long long)c->m, (long long)c->k, c->radius,
                bench_face(c->problem)->select_name ? bench_face(c->problem)->select_name(c) : "",
                c->max_gap, fields && fields[0] == ',' ? fields + 2 : "");
        free(fields);
        written++;
    }
    bench_env_free(&env);
    if (rc == PCB_OK && written == 0)
        rc = pcb_fail(PCB_EINVAL, "no configuration of suite %s matches", suite->name);
    if (rc != PCB_OK) {
        pcb_out_abort(&table);
        fprintf(stderr, "pcbench: bench: %s\n", pcb_errmsg());
        return rc == PCB_EINVAL ? PCB_EXIT_USAGE : PCB_EXIT_SYSTEM;
    }
    if (pcb_out_commit(&table) != PCB_OK) {
        fprintf(stderr, "pcbench: bench: %s\n", pcb_errmsg());
        return PCB_EXIT_SYSTEM;
    }
    fprintf(stderr, "pcbench: bench: wrote the inputs of %d configuration%s to %s\n", written,
            written == 1 ? "" : "s", o->inputs_dir);
    return 0;
}

int cli_bench(int argc, char **argv)
{
    bench_opts o = {.suite = "seed", .results_dir = "results", .target_noise = 0.005,
                    .throttle = 0.75, .alpha = 0.01};
    static bench_devices devices;
    static unsigned char skip[4096]; /* the words of --devices, left out of its shards' */
    if (argc >= (int)sizeof skip)
        return usage("%s", "too many arguments");
    memset(skip, 0, sizeof skip);
    int rc = parse(argc, argv, &o, &devices, skip);
    if (rc >= 0)
        return rc;
    bench_suite suite;
    if (bench_suite_get(o.suite, &suite) != PCB_OK)
        return usage("%s", pcb_errmsg());
    bench_fault faults[8];
    int nfaults = 0;
    if (bench_fault_parse(getenv("PCBENCH_FAULT"), faults, 8, &nfaults) != PCB_OK) {
        bench_suite_free(&suite);
        return usage("%s", pcb_errmsg());
    }
    if (bench_shard_select(&o, &suite) != PCB_OK) {
        fprintf(stderr, "pcbench: bench: %s\n", pcb_errmsg());
        bench_suite_free(&suite);
        return PCB_EXIT_SYSTEM;
    }
    if (o.shard.total) {
        fprintf(stderr, "pcbench: bench: shard %d/%d (%s): %d of the %d selected "
                "configurations\n", o.shard.index + 1, o.shard.total, o.shard.source,
                o.shard_count, o.shard_selected);
        if (o.shard_count == 0) { /* more shards than configurations: nothing, and fine */
            bench_shard_release(&o);
            bench_suite_free(&suite);
            return PCB_EXIT_OK;
        }
    }
    if (o.inputs_dir) {
        rc = write_inputs(&o, &suite);
        bench_shard_release(&o);
        bench_suite_free(&suite);
        return rc;
    }
    if (o.regress_dir && !bench_gate_ready(o.regress_dir, suite.name, stdout)) {
        bench_shard_release(&o);
        bench_suite_free(&suite);
        return PCB_EXIT_VERIFY;
    }
    if (!o.list_only && pcb_gb_available() != PCB_OK) {
        fprintf(stderr, "pcbench: bench: unavailable: %s\n", pcb_errmsg());
        bench_shard_release(&o);
        bench_suite_free(&suite);
        return PCB_EXIT_UNSUPPORTED;
    }
    o.force = o.force || o.regress_dir || o.baseline_out;
    bench_session ses;
    memset(&ses, 0, sizeof ses);
    int exit_status = PCB_EXIT_OK, device_failed = 0;
    char since[32] = "";
    if (devices.count) { /* the GPUs' shards first, side by side; then the CPU ones here */
        bench_utc_now(since, sizeof since);
        bench_env env;
        rc = bench_env_collect(&env, o.machine);
        if (rc == PCB_OK)
            rc = bench_devices_run(&o, &suite, &devices, env.machine, argc, argv, skip,
                                   &device_failed);
        bench_env_free(&env);
        if (rc != PCB_OK) {
            fprintf(stderr, "pcbench: bench: %s\n", pcb_errmsg());
            exit_status = PCB_EXIT_SYSTEM;
            goto done;
        }
    }
    rc = bench_session_open(&ses, &o, &suite);
    if (rc != PCB_OK) {
        fprintf(stderr, "pcbench: bench: %s\n", pcb_errmsg());
        exit_status = rc == PCB_EUNSUPPORTED ? PCB_EXIT_INPUT /* a stored file of another format */
                      : rc == PCB_EBADFILE   ? PCB_EXIT_INPUT /* a results folder it cannot write */
                      : rc == PCB_EINVAL     ? PCB_EXIT_USAGE /* no configuration selected */
                                             : PCB_EXIT_SYSTEM;
        goto done;
    }
    if (o.list_only) {
        list_plan(&suite, ses.store[0] ? ses.store : NULL, ses.res, ses.count, ses.run_budget,
                  ses.budget, &ses.env, &o);
        goto done;
    }
    if (nfaults)
        fprintf(stderr, "pcbench: bench: fault injection active: PCBENCH_FAULT=%s\n",
                getenv("PCBENCH_FAULT"));
    fprintf(stderr, "pcbench: bench: suite %s, %d configuration%s, machine %s%s%s\n", suite.name,
            ses.count, ses.count == 1 ? "" : "s", ses.env.machine,
            ses.store[0] ? ", results in " : "", ses.store);
    if ((rc = bench_session_run(&ses, faults, nfaults)) != PCB_OK) {
        fprintf(stderr, "pcbench: bench: %s\n", pcb_errmsg());
        exit_status = PCB_EXIT_SYSTEM;
        goto done;
    }
    summary(&suite, &ses.env, ses.res, ses.ran, ses.fresh_configs, since);
    not_run_note(ses.res, ses.ran);
    if (ses.ran < ses.count)
        printf("\nStopped after --max-time %g s: %d configuration%s left; run the same command "
               "again to continue.\n",
               o.max_time, ses.count - ses.ran, ses.count - ses.ran == 1 ? "" : "s");
    if ((rc = bench_session_finish(&ses, stdout)) != PCB_OK) {
        fprintf(stderr, "pcbench: bench: %s\n", pcb_errmsg());
        exit_status = rc == PCB_EUNSUPPORTED ? PCB_EXIT_INPUT : PCB_EXIT_SYSTEM;
        goto done;
    }
    exit_status = ses.failed || ses.regressions || device_failed ? PCB_EXIT_VERIFY : PCB_EXIT_OK;
done:
    bench_session_close(&ses);
    bench_shard_release(&o);
    bench_suite_free(&suite);
    pcb_cuda_flush_release();
    pcb_gb_shutdown();
    fflush(stdout);
    return exit_status;
}
