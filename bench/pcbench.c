/* pcbench.c - the command-line tool: main and the command table. Each
 * command lives in cli/ (one file each), and reaches the verification
 * matrices (verify/) and the benchmark harness (harness/) from there.
 *
 * Exit status: 0 success, 1 verification failure, 2 usage error, 3 bad input
 * (file or arguments), 4 implementation unsupported or unavailable, 5 device
 * or system error. Messages on stderr start with "pcbench:". */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const char main_help_head[] =
    "usage: pcbench COMMAND [options]   (pcbench COMMAND --help for each)\n"
    "  list                      implementations and whether they can run here\n"
    "  gen KIND -n N -o FILE     write a generated cloud (binary PLY)\n";
/* then a line a problem: its command's synopsis and the problem's title */
static const char main_help_tail[] =
    "  verify [--problem P]      verify every implementation\n"
    "  check PROBLEM ...         judge an answer made anywhere (pass / FAIL)\n"
    "  bench [--suite S]         time implementations (Google Benchmark)\n"
    "  count [--suite S]         instructions per compute of the CPU implementations\n"
    "  compare A B               stored timings of two runs, by a Mann-Whitney test\n"
    "  merge OUT FOLDER...       shards' or runs' results folders into one\n"
    "Exit status: 0 ok, 1 verification failure, 2 usage, 3 bad input,\n"
    "4 unsupported or unavailable, 5 device or system error.\n";

/* "  SYNOPSIS   TITLE", the titles in one column where the synopsis fits */
static void help_line(const char *synopsis, const char *title)
{
    const int w = (int)strlen(synopsis);
    printf("  %s%*s%s\n", synopsis, w < 26 ? 26 - w : 2, "", title);
}

static void main_help(void)
{
    fputs(main_help_head, stdout);
#define HELP_LINE(ID, name, title) help_line(cli_##name##_synopsis, title);
    PCB_PROBLEM_MAP(HELP_LINE)
#undef HELP_LINE
    fputs(main_help_tail, stdout);
}

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
    } cmds[] = {{"list", cli_list}, {"gen", cli_gen},
#define COMMAND(ID, name, title) {#name, cli_##name},
                PCB_PROBLEM_MAP(COMMAND)
#undef COMMAND
                {"verify", cli_verify}, {"check", cli_check}, {"bench", cli_bench},
                {"count", cli_count}, {"compare", cli_compare}, {"merge", cli_merge}};
    if (argc < 2)
        return usage_error("no command given");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        main_help();
        return 0;
    }
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (strcmp(argv[1], cmds[i].name) == 0) {
            cli_command = cmds[i].name;
            return cmds[i].fn(argc - 1, argv + 1);
        }
    return usage_error("unknown command '%s'", argv[1]);
}
