/* pcbench.c - the command-line tool: main and the command table. Each
 * command lives in cli/ (one file each), and reaches the verification
 * matrices (verify/) and the benchmark harness (harness/) from there.
 *
 * Exit status: 0 success, 1 verification failure, 2 usage error, 3 bad input
 * (file or arguments), 4 implementation unsupported or unavailable, 5 device
 * or system error. Messages on stderr start with "pcbench:". */
#include <signal.h>
#include <string.h>

#include "cli/cli.h"

static const char main_help[] =
    "usage: pcbench COMMAND [options]   (pcbench COMMAND --help for each)\n"
    "  list                      implementations and whether they can run here\n"
    "  gen KIND -n N -o FILE     write a generated cloud (binary PLY)\n"
    "  fps -i FILE -m M          farthest point sampling\n"
    "  nn -r REF -q QUERY        nearest neighbour of each query point\n"
    "  emd -a A -b B             earth mover's distance by assignment\n"
    "  chamfer -a A -b B         chamfer distance (nearest points both ways)\n"
    "  knn -r REF -q QUERY -k K  the k nearest neighbours of each query point\n"
    "  ball -r REF -q CENTRES --radius R -k K  ball query (first or nearest K inside)\n"
    "  verify [--problem P]      verify every implementation\n"
    "  check PROBLEM ...         judge an answer made anywhere (pass / FAIL)\n"
    "  bench [--suite S]         time implementations (Google Benchmark)\n"
    "  count [--suite S]         instructions per compute of the CPU implementations\n"
    "  compare A B               stored timings of two runs, by a Mann-Whitney test\n"
    "Exit status: 0 ok, 1 verification failure, 2 usage, 3 bad input,\n"
    "4 unsupported or unavailable, 5 device or system error.\n";

/* An interrupted run removes the temporary file it was writing (where the
 * file system has no unnamed files), then dies of the signal as it would. */
static void on_signal(int sig)
{
    pcb_out_signal_cleanup();
    signal(sig, SIG_DFL);
    raise(sig);
}

int main(int argc, char **argv)
{
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa = {.sa_handler = on_signal};
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {{"list", cli_list},   {"gen", cli_gen},     {"fps", cli_fps},
                {"nn", cli_nn},       {"emd", cli_emd},     {"verify", cli_verify},
                {"chamfer", cli_chamfer}, {"knn", cli_knn}, {"ball", cli_ball},
                {"check", cli_check},
                {"bench", cli_bench}, {"count", cli_count}, {"compare", cli_compare}};
    if (argc < 2)
        return usage_error("no command given");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(main_help, stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (strcmp(argv[1], cmds[i].name) == 0) {
            cli_command = cmds[i].name;
            return cmds[i].fn(argc - 1, argv + 1);
        }
    return usage_error("unknown command '%s'", argv[1]);
}
