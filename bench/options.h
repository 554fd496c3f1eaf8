/* options.h - command-line options the same way in every command: getopt's
 * errors in pcbench's words ("pcbench: fps: unrecognized option '--bogus'")
 * and numbers checked whole, with the option named. */
#ifndef PCB_OPTIONS_H
#define PCB_OPTIONS_H

#include <getopt.h>
#include <stdint.h>

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
