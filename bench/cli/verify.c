/* verify.c - pcbench verify: the verification matrices, and the defect catalog over them. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bench/harness/harness.h"
#include "bench/problems/problems.h"
#include "bench/verify/verify.h"
#include "cli.h"

static const char verify_help[] =
    "usage: pcbench verify [--problem P] [--impl NAME] [--large] [--defects] [--shard i/N]\n"
    "Run every available implementation over the problem's matrix of datasets (P,\n"
    "one of" PCB_PROBLEM_NAMES "; all of them without --problem) and\n"
    "print a pass/fail table (with each run's time, host to host). Exit status 1\n"
    "if anything fails. --large (with --impl) adds the NN cases of a million\n"
    "points against a million: a lidar sweep and uniform, all-equal, duplicated,\n"
    "collinear and 3,000 km offset clouds. --defects then runs the same matrices on\n"
    "the planted defects of the catalog (pcbench list --defects) and exits 0 only when\n"
    "every defect is caught somewhere and no real implementation failed. --shard i/N\n"
    "(or a scheduler's variables, as pcbench bench reads them; --shards N with\n"
    "JOB_COMPLETION_INDEX) verifies the i-th of N parts: the problems dealt in turn.\n";

/* The problems of a shard: those selected (problem, or all: -1), dealt in
 * turn; all of them without one. */
static int in_shard(int problem, const bench_shard *sh, int p)
{
    if (problem >= 0)
        return p == problem && (!sh->total || sh->index == 0);
    return !sh->total || p % sh->total == sh->index;
}

/* The verify matrix of one problem (or of all: -1) in the shard; the
 * failures, or a negative status. */
static int verify_problems(int problem, const bench_shard *sh, const char *impl)
{
    int failures = 0;
    for (int p = 0; p < PCB_NPROBLEMS; p++) {
        if (!in_shard(problem, sh, p))
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
                                         {"shard", required_argument, 0, 'S'},
                                         {"shards", required_argument, 0, 'N'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *problem = NULL, *impl = NULL, *shard = NULL;
    int c, large = 0, defects = 0;
    double shards = 0;
    optind = 1;
    while ((c = pcb_getopt(argc, argv, cli_command, "p:h", opts)) != -1) {
        switch (c) {
        case 'p': problem = optarg; break;
        case 'I': impl = optarg; break;
        case 'L': large = 1; break;
        case 'D': defects = 1; break;
        case 'S': shard = optarg; break;
        case 'N':
            if (!pcb_opt_f64(cli_command, "--shards", optarg, 1, 4096, &shards))
                return PCB_EXIT_USAGE;
            break;
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
    bench_shard sh;
    if (shard && shards > 0)
        return usage_error("--shard and --shards exclude each other");
    if (shard ? bench_shard_parse(shard, &sh) != PCB_OK
              : bench_shard_from_env((int)shards, &sh) != PCB_OK)
        return usage_error("%s", pcb_errmsg());
    if (sh.total && defects)
        return usage_error("--defects runs every problem: no shard");
    pcb_verify_set_large(large);
    const int which = problem ? (int)only : -1; /* -1: every problem */
    if (sh.total) {
        int mine = 0;
        for (int p = 0; p < PCB_NPROBLEMS; p++)
            mine += in_shard(which, &sh, p);
        fprintf(stderr, "pcbench: verify: shard %d/%d (%s): %d problem%s\n", sh.index + 1,
                sh.total, sh.source, mine, mine == 1 ? "" : "s");
        if (!mine)
            return 0;
    }
    int failures = verify_problems(which, &sh, impl);
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
    int rc = verify_problems(which, &sh, NULL);
    if (rc < 0)
        return cli_report(rc, "verify");
    int missed = pcb_verify_defect_report(stdout, which);
    pcb_verify_set_defects(0);
    printf("verify --defects: %d failure%s of real implementations, %d defect%s missed\n",
           failures, failures == 1 ? "" : "s", missed, missed == 1 ? "" : "s");
    return failures || missed ? PCB_EXIT_VERIFY : 0;
}
