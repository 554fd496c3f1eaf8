/* cli.h - the commands of pcbench (one file each) and what they share
 * (common.c). main and the command table are in ../pcbench.c. Exit
 * statuses come from pcb_exit_for (options.h); messages on stderr start
 * with "pcbench:". */
#ifndef PCB_CLI_H
#define PCB_CLI_H

#include <stdio.h>

#include "datasets/cloud.h"
#include "datasets/outfile.h"
#include "impl/pcbench_judge.h"
#include "options.h"

/* The commands: argv[0] is the command's name. Each returns an exit status. */
int cli_list(int argc, char **argv);
int cli_gen(int argc, char **argv);
/* A problem's command, cli_<name>, and its line in pcbench --help */
#define CLI_PROBLEM_COMMAND(ID, name, title)                                                       \
    int cli_##name(int argc, char **argv);                                                         \
    extern const char cli_##name##_synopsis[];
PCB_PROBLEM_MAP(CLI_PROBLEM_COMMAND)
#undef CLI_PROBLEM_COMMAND
int cli_check(int argc, char **argv);
int cli_verify(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_count(int argc, char **argv);
int cli_compare(int argc, char **argv);
int cli_merge(int argc, char **argv);

/* The command being run (set by main), for messages. */
extern const char *cli_command;
#define usage_error(...) pcb_usage(cli_command, __VA_ARGS__)

/* Print "pcbench: <what>: <message>" and return the exit status for rc. */
int cli_report(int rc, const char *what);

/* ---- the running commands: one a problem (cli_<name>, PCB_PROBLEM_MAP), and check ---- */
typedef struct run_args {
    const char *impl, *out, *in_a, *in_b, *answer;
    int64_t m, start, k;
    int have_m, have_k;
    double max_gap; /* check emd */
    pcb_chamfer_convention convention; /* chamfer, check chamfer: the default is zeros */
    double value; /* check chamfer --value */
    int have_value, have_convention;
    double radius; /* ball */
    int have_radius;
    int32_t select; /* ball: a pcb_ball_select (first by default) */
    int pad_first;  /* ball: --pad first (PointNet++'s repeat of the first hit) */
    double cell[3];   /* grid: --size S or SX,SY,SZ */
    double origin[3]; /* grid: --origin X,Y,Z */
    int have_cell, have_origin;
    const char *inverse; /* grid: --inverse FILE */
    int32_t curve, depth; /* serialize: --curve, --depth (0: the least that holds the cloud) */
    uint64_t seed;        /* grid: --seed (--select random) */
    int have_curve;
    double shift[3];
    int have_shift, no_shift;
    double applied[3]; /* check: the shift its clouds got (0 where none) */
    pcb_options opt;
} run_args;

/* Parse a running command's options: shortopts as getopt's, letters the
 * options (short or long) it takes. Returns -1 to go on, else an exit
 * status. */
int cli_parse_run_args(int argc, char **argv, const char *shortopts, const char *letters,
                       const char *help, run_args *a);
/* The command's shift on its clouds (--shift, or the automatic one of
 * geo-referenced clouds); 0 or an exit status. */
int cli_apply_shift(const run_args *a, pcb_cloud *first, pcb_cloud *second);
/* The same, the shift subtracted in *applied (0 where none). */
int cli_apply_shift_to(const run_args *a, pcb_cloud *first, pcb_cloud *second,
                       double applied[3]);
/* The task's arguments, then the implementation (--impl NAME, else the
 * fastest exact one); 0 or an exit status. */
int cli_check_and_choose(const char *name, const pcb_task *t, const pcb_impl **impl);
/* Load a cloud; an input that cannot be read is bad input (3). */
int cli_load(const char *path, pcb_cloud *c);
/* pcb_run, its error reported; 0 or an exit status. */
int cli_run_task(const pcb_impl *impl, const pcb_task *t, pcb_result *r);
/* Open -o before any work; 0 or an exit status. */
int cli_open_output(const run_args *a, pcb_outfile *o);

#endif
