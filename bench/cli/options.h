/* options.h - the command line the same way in every command: one set of
 * exit statuses and the one map from a status code to them; getopt's errors
 * in pcbench's words ("pcbench: fps: unrecognized option '--bogus'"); and
 * numbers checked whole, with the option named. */
#ifndef PCB_OPTIONS_H
#define PCB_OPTIONS_H

#include <getopt.h>
#include <stdint.h>

/* Exit statuses of every command. */
enum {
    PCB_EXIT_OK = 0,
    PCB_EXIT_VERIFY = 1,      /* a wrong answer, a failed verification, a regression */
    PCB_EXIT_USAGE = 2,       /* unknown command, option, problem or implementation */
    PCB_EXIT_INPUT = 3,       /* bad input: a file, or an argument's value */
    PCB_EXIT_UNSUPPORTED = 4, /* an implementation unsupported or unavailable here */
    PCB_EXIT_SYSTEM = 5       /* a device or system error */
};
/* The exit status for a library status code: PCB_EINVAL and PCB_EBADFILE
 * are bad input, PCB_EUNSUPPORTED and PCB_EUNAVAIL unsupported, the rest
 * system errors. */
int pcb_exit_for(int status);

/* getopt_long for command cmd, with getopt's own messages replaced by ours:
 * returns the option, -1 at the end, or '?' after printing what was wrong
 * (the caller then exits with the usage status, 2). */
int pcb_getopt(int argc, char **argv, const char *cmd, const char *shortopts,
               const struct option *longopts);

/* "pcbench: <cmd>: <message> (see pcbench <cmd> --help)" on stderr; returns 2. */
int pcb_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A whole integer, or a finite number within [lo, hi]; on anything else a
 * usage message naming the option and 0. */
int pcb_opt_i64(const char *cmd, const char *opt, const char *s, int64_t lo, int64_t hi,
                int64_t *out);
int pcb_opt_f64(const char *cmd, const char *opt, const char *s, double lo, double hi,
                double *out);

/* --problem and --impl lists (comma-separated, NULL for all): 1 when every
 * name is known, else a usage message and 0. */
int pcb_opt_selection(const char *cmd, const char *problems, const char *impls);

#endif
