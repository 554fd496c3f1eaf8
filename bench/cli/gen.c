/* gen.c - pcbench gen: write a generated cloud. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char gen_help[] =
    "usage: pcbench gen KIND -n N [--seed S] -o FILE\n"
    "Write a generated cloud as binary PLY. KIND: uniform, sphere, clusters, lidar,\n"
    "equal, duplicates, collinear, offset, lattice. Same KIND, N and seed give the\n"
    "same cloud.\n"
    "lidar with -n 0 gives a full sweep (about 120,000 points).\n";

int cli_gen(int argc, char **argv)
{
    static const struct option opts[] = {{"seed", required_argument, 0, 'S'},
                                         {"output", required_argument, 0, 'o'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int64_t n = -1, seed = 1;
    const char *out = NULL;
    int c;
    optind = 1;
    while ((c = pcb_getopt(argc, argv, cli_command, "n:o:S:h", opts)) != -1) {
        switch (c) {
        case 'n':
            if (!pcb_opt_i64(cli_command, "-n", optarg, 0, PCB_MAX_POINTS, &n)) return PCB_EXIT_USAGE;
            break;
        case 'S':
            if (!pcb_opt_i64(cli_command, "--seed", optarg, INT64_MIN, INT64_MAX, &seed))
                return PCB_EXIT_USAGE;
            break;
        case 'o': out = optarg; break;
        case 'h': fputs(gen_help, stdout); return 0;
        default: return PCB_EXIT_USAGE;
        }
    }
    if (optind != argc - 1)
        return usage_error("gen needs exactly one KIND");
    if (n < 0 || !out)
        return usage_error("gen needs -n N and -o FILE");
    int known = 0; /* an unknown KIND is a usage error, as an unknown option is */
    char kinds[160] = "";
    for (const char *const *k = pcb_generator_kinds(); *k; k++) {
        known |= strcmp(*k, argv[optind]) == 0;
        snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "%s%s",
                 kinds[0] ? ", " : "", *k);
    }
    if (!known)
        return usage_error("unknown KIND '%s' (%s)", argv[optind], kinds);
    if (n == 0 && strcmp(argv[optind], "lidar") != 0) /* 0: the lidar's natural sweep only */
        return usage_error("-n 0 is lidar's full sweep; %s needs 1..%d points", argv[optind],
                           PCB_MAX_POINTS);
    pcb_cloud cloud;
    int rc = pcb_generate(argv[optind], n, (uint64_t)seed, &cloud);
    if (rc == PCB_OK)
        rc = pcb_save_ply(out, &cloud);
    pcb_cloud_free(&cloud);
    return rc == PCB_OK ? 0 : cli_report(rc, "gen");
}
