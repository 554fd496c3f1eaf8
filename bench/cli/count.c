/* count.c - pcbench count: instructions per compute of the CPU
 * implementations (the counting itself: harness/bench_count.c). */
#include <getopt.h>

#include "bench/harness/harness.h"
#include "cli.h"
#include "bench/columns.h"

static const char count_help[] =
    "usage: pcbench count [--suite S] [--problem P[,P]] [--impl NAME[,NAME]] [--filter TEXT]\n"
    "                     [--shard i/N | --shards N]\n"
    "Instructions executed by one compute of each CPU implementation on each\n"
    "configuration of a suite (default quick), counted by valgrind's callgrind on\n"
    "one thread: deterministic, whatever the machine's speed or load. The\n"
    "regression gate (pcbench bench --regress) compares them with a baseline of\n"
    "the same toolchain. Needs valgrind (make deps). P: of" PCB_PROBLEM_NAMES ".\n"
    "--shard i/N (or a scheduler's variables, --shards N with JOB_COMPLETION_INDEX):\n"
    "the i-th of N parts of the configurations, dealt as pcbench bench deals them.\n";

int cli_count(int argc, char **argv)
{
    static const struct option opts[] = {
        {"suite", required_argument, 0, 's'}, {"problem", required_argument, 0, 'p'},
        {"impl", required_argument, 0, 'I'},  {"filter", required_argument, 0, 'f'},
        {"shard", required_argument, 0, 'S'}, {"shards", required_argument, 0, 'N'},
        {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
    struct {
        const char *suite, *problems, *impls, *filter, *shard;
    } sel = {.suite = "quick"};
    double shards = 0;
    int c;
    optind = 1;
    while ((c = pcb_getopt(argc, argv, "count", "h", opts)) != -1) {
        switch (c) {
        case 's': sel.suite = optarg; break;
        case 'p': sel.problems = optarg; break;
        case 'I': sel.impls = optarg; break;
        case 'f': sel.filter = optarg; break;
        case 'S': sel.shard = optarg; break;
        case 'N':
            if (!pcb_opt_f64("count", "--shards", optarg, 1, 4096, &shards))
                return PCB_EXIT_USAGE;
            break;
        case 'h': fputs(count_help, stdout); return 0;
        default: return PCB_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return pcb_usage("count", "unexpected argument '%s'", argv[optind]);
    if (!pcb_opt_selection("count", sel.problems, sel.impls))
        return PCB_EXIT_USAGE;
    bench_shard part;
    if (sel.shard && shards > 0)
        return pcb_usage("count", "--shard and --shards exclude each other");
    if (sel.shard ? bench_shard_parse(sel.shard, &part) != PCB_OK
                  : bench_shard_from_env((int)shards, &part) != PCB_OK)
        return pcb_usage("count", "%s", pcb_errmsg());
    if (part.total && !bench_count_in_child())
        fprintf(stderr, "pcbench: count: shard %d/%d (%s)\n", part.index + 1, part.total,
                part.source);
    bench_suite s;
    if (bench_suite_get(sel.suite, &s) != PCB_OK) {
        fprintf(stderr, "pcbench: count: %s\n", pcb_errmsg());
        return PCB_EXIT_USAGE;
    }
    bench_suite_free(&s);
    if (bench_count_in_child()) {
        int failures = bench_count_child(sel.suite, sel.problems, sel.impls, sel.filter, &part);
        if (failures < 0)
            fprintf(stderr, "pcbench: count: %s\n", pcb_errmsg());
        return failures < 0 ? PCB_EXIT_USAGE : failures ? PCB_EXIT_VERIFY : PCB_EXIT_OK;
    }
    bench_icounts counts;
    int rc = bench_count(sel.suite, sel.problems, sel.impls, sel.filter, &part, &counts);
    if (rc != PCB_OK) {
        fprintf(stderr, "pcbench: count: %s: %s\n", pcb_strerror(rc), pcb_errmsg());
        return rc == PCB_EUNAVAIL ? PCB_EXIT_UNSUPPORTED : PCB_EXIT_SYSTEM;
    }
    printf("# %s; %s, %s, flags: %s (toolchain %s)\n", counts.counter, counts.tc.compiler,
           counts.tc.libc, counts.tc.cflags, counts.tc.key);
    printf("%-32s %-18s %16s\n", "configuration", "implementation", "instructions");
    for (int i = 0; i < counts.count; i++) {
        pcb_column(stdout, counts.v[i].config, 32);
        printf(" %-18s %16.0f\n", counts.v[i].impl, counts.v[i].instructions);
    }
    bench_icounts_free(&counts);
    return 0;
}
