/* verify.c - pcbench verify: the verification matrices, and the defect catalog over them. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bench/problems/problems.h"
#include "bench/verify/verify.h"
#include "cli.h"

static const char verify_help[] =
    "usage: pcbench verify [--problem P] [--impl NAME] [--large] [--defects]\n"
    "Run every available implementation over the problem's matrix of datasets (P,\n"
    "one of" PCB_PROBLEM_NAMES "; all of them without --problem) and\n"
    "print a pass/fail table (with each run's time, host to host). Exit status 1\n"
    "if anything fails. --large (with --impl) adds the NN cases of a million\n"
    "points against a million: a lidar sweep and uniform, all-equal, duplicated,\n"
    "collinear and 3,000 km offset clouds. --defects then runs the same matrices on\n"
    "the planted defects of the catalog (pcbench list --defects) and exits 0 only when\n"
    "every defect is caught somewhere and no real implementation failed.\n";

/* The verify matrix of one problem (or of all: -1); the failures, or a
 * negative status. */
static int verify_problems(int problem, const char *impl)
{
    int failures = 0;
    for (int p = 0; p < PCB_NPROBLEMS; p++) {
        if (problem >= 0 && p != problem)
            continue;
        int rc = bench_face((pcb_problem)p)->verify(impl, stdout);
        if (rc < 0)
            return rc;
        failures += rc;
    }
    return failures;
}

int cli_verify(int argc, char **argv)
{
    static const struct option opts[] = {{"problem", required_argument, 0, 'p'},
                                         {"impl", required_argument, 0, 'I'},
                                         {"large", no_argument, 0, 'L'},
                                         {"defects", no_argument, 0, 'D'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *problem = NULL, *impl = NULL;
    int c, large = 0, defects = 0;
    optind = 1;
    while ((c = pcb_getopt(argc, argv, cli_command, "p:h", opts)) != -1) {
        switch (c) {
        case 'p': problem = optarg; break;
        case 'I': impl = optarg; break;
        case 'L': large = 1; break;
        case 'D': defects = 1; break;
        case 'h': fputs(verify_help, stdout); return 0;
        default: return PCB_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    pcb_problem only = (pcb_problem)0;
    if (problem && pcb_problem_parse(problem, &only) != PCB_OK)
        return usage_error("%s", pcb_errmsg());
    if (impl && !problem)
        return usage_error("--impl needs --problem");
    if (impl && !pcb_verify_impl_known(only, impl)) /* as fps --impl and bench --impl say */
        return usage_error("unknown %s implementation '%s'", pcb_problem_name(only), impl);
    if (large && !impl)
        return usage_error("--large needs --impl (brute force cannot do 1M x 1M)");
    if (defects && (impl || large))
        return usage_error("--defects runs every implementation and every planted defect");
    pcb_verify_set_large(large);
    const int which = problem ? (int)only : -1; /* -1: every problem */
    int failures = verify_problems(which, impl);
    if (failures < 0)
        return cli_report(failures, "verify");
    int known = pcb_verify_known_defects();
    int passed, skipped;
    char gone[1024];
    pcb_verify_counts(&passed, &skipped, gone, sizeof gone);
    printf("verify: %d failure%s", failures, failures == 1 ? "" : "s");
    if (known)
        printf(" (%d answer%s showed a known defect of a reproduced original)", known,
               known == 1 ? "" : "s");
    printf("; %d passed, %d skipped\n", passed, skipped);
    if (gone[0])
        printf("verify: not run here (unavailable, each said once above): %s\n", gone);
    if (!defects)
        return failures ? PCB_EXIT_VERIFY : 0;
    /* The same matrices again, on the planted defects. */
    pcb_verify_set_defects(1);
    int rc = verify_problems(which, NULL);
    if (rc < 0)
        return cli_report(rc, "verify");
    int missed = pcb_verify_defect_report(stdout, which);
    pcb_verify_set_defects(0);
    printf("verify --defects: %d failure%s of real implementations, %d defect%s missed\n",
           failures, failures == 1 ? "" : "s", missed, missed == 1 ? "" : "s");
    return failures || missed ? PCB_EXIT_VERIFY : 0;
}
