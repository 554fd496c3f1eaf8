/* compare.c - pcbench compare A B: has anything become slower between two
 * stored runs? Every figure of B against the same one of A, by the test of
 * harness/bench_gate.c (bench_compare). */
#include <getopt.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "bench/harness/harness.h"
#include "cli.h"

static const char compare_help[] =
    "usage: pcbench compare A B [--suite S] [--tolerance T] [--alpha P]\n"
    "Compare the compute times stored in machine folder B (the later run, e.g.\n"
    "results/gpu-nvidia-h100-80gb-hbm3) with those in A, figure by figure: a\n"
    "two-sided Mann-Whitney U test over the stored samples (exact for small\n"
    "samples without ties, else the normal approximation with tie and continuity\n"
    "corrections) and the Hodges-Lehmann estimate of the ratio B / A with its\n"
    "1 - alpha interval. A figure fails only when the change is significant\n"
    "(p < alpha, default 0.01) and the ratio above 1 + T (default 0.25): noise\n"
    "alone never fails, a real change within the tolerance neither.\n"
    "Exit status 1 when a figure is significantly slower (whatever else could not be\n"
    "compared); 3 when none is, but figures could not be compared: too few samples\n"
    "to reach p < alpha, none on a side, or a median of 0 (their rows marked ?).\n";

int cli_compare(int argc, char **argv)
{
    static const struct option opts[] = {{"suite", required_argument, 0, 's'},
                                         {"tolerance", required_argument, 0, 't'},
                                         {"alpha", required_argument, 0, 'a'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *suite_name = "seed";
    double tolerance = 0.25, alpha = 0.01;
    int c;
    optind = 1;
    while ((c = pcb_getopt(argc, argv, "compare", "h", opts)) != -1) {
        switch (c) {
        case 's': suite_name = optarg; break;
        case 't':
            if (!pcb_opt_f64("compare", "--tolerance", optarg, 1e-3, 100, &tolerance))
                return PCB_EXIT_USAGE;
            break;
        case 'a':
            if (!pcb_opt_f64("compare", "--alpha", optarg, 1e-9, 0.5, &alpha))
                return PCB_EXIT_USAGE;
            break;
        case 'h': fputs(compare_help, stdout); return 0;
        default: return PCB_EXIT_USAGE;
        }
    }
    if (argc - optind != 2)
        return pcb_usage("compare", "need two result folders, A (before) and B (after)");
    const char *a = argv[optind], *b = argv[optind + 1];
    struct stat st;
    for (int k = 0; k < 2; k++)
        if (stat(k ? b : a, &st) != 0 || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "pcbench: compare: %s is not a folder\n", k ? b : a);
            return PCB_EXIT_INPUT;
        }
    bench_suite suite;
    if (bench_suite_get(suite_name, &suite) != PCB_OK) {
        fprintf(stderr, "pcbench: compare: %s\n", pcb_errmsg());
        return PCB_EXIT_USAGE;
    }
    /* B's stored results, every configuration of the suite it has */
    bench_result *res = calloc((size_t)suite.count, sizeof *res);
    int have = 0, status = PCB_EXIT_OK;
    for (int i = 0; res && i < suite.count; i++) {
        char path[1024];
        bench_result *r = &res[have];
        r->config = suite.configs[i];
        if (bench_store_path(b, suite.name, &r->config, path, sizeof path) != PCB_OK ||
            stat(path, &st) != 0)
            continue;
        if (bench_store_read(path, r) != PCB_OK) {
            fprintf(stderr, "pcbench: compare: %s\n", pcb_errmsg());
            bench_result_free(r);
            status = PCB_EXIT_INPUT;
            continue;
        }
        have++;
    }
    if (!res) {
        fprintf(stderr, "pcbench: compare: out of memory\n");
        status = PCB_EXIT_SYSTEM;
    } else if (!have && status == PCB_EXIT_OK) {
        fprintf(stderr, "pcbench: compare: no stored results of suite %s in %s\n", suite.name, b);
        status = PCB_EXIT_INPUT;
    } else if (status == PCB_EXIT_OK) {
        const int slower = bench_compare(a, &suite, res, have, tolerance, alpha, stdout);
        if (slower < 0)
            fprintf(stderr, "pcbench: compare: %s\n", pcb_errmsg());
        status = slower < 0 ? PCB_EXIT_INPUT : slower ? PCB_EXIT_VERIFY : PCB_EXIT_OK;
    }
    for (int i = 0; i < have; i++)
        bench_result_free(&res[i]);
    free(res);
    bench_suite_free(&suite);
    return status;
}
