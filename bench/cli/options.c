/* options.c - getopt in pcbench's words, and checked numbers. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impl/pcbench_impl.h"
#include "options.h"

int pcb_exit_for(int status)
{
    switch (status) {
    case PCB_OK: return PCB_EXIT_OK;
    case PCB_EINVAL:
    case PCB_EBADFILE: return PCB_EXIT_INPUT;
    case PCB_EUNSUPPORTED:
    case PCB_EUNAVAIL: return PCB_EXIT_UNSUPPORTED;
    default: return PCB_EXIT_SYSTEM;
    }
}

int pcb_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "pcbench: %s%s", cmd ? cmd : "", cmd ? ": " : "");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see pcbench %s%s--help)\n", cmd ? cmd : "", cmd ? " " : "");
    va_end(ap);
    return PCB_EXIT_USAGE;
}

int pcb_getopt(int argc, char **argv, const char *cmd, const char *shortopts,
               const struct option *longopts)
{
    char spec[64];
    snprintf(spec, sizeof spec, ":%s", shortopts); /* ':' reports a missing value apart */
    opterr = 0;
    const int before = optind;
    int c = getopt_long(argc, argv, spec, longopts, NULL);
    if (c != '?' && c != ':')
        return c;
    /* The text of the option at fault: a whole word ("--bogus=1") when getopt
     * moved past it, else the short letter. */
    const char *word = optind > before && optind - 1 < argc ? argv[optind - 1] : NULL;
    char letter[3] = {'-', (char)optopt, 0};
    const char *text = word && (word[0] == '-' && word[1] == '-') ? word : optopt ? letter : word;
    if (!text)
        text = "?";
    if (c == ':')
        pcb_usage(cmd, "option '%s' needs a value", text);
    else if (optopt && text == word)
        pcb_usage(cmd, "option '%s' takes no value", text);
    else
        pcb_usage(cmd, "unrecognized option '%s'", text);
    return '?';
}

int pcb_opt_i64(const char *cmd, const char *opt, const char *s, int64_t lo, int64_t hi,
                int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return pcb_usage(cmd, "%s: '%s' is not an integer", opt, s), 0;
    if (v < lo || v > hi)
        return pcb_usage(cmd, "%s: %lld is out of range %lld..%lld", opt, v, (long long)lo,
                         (long long)hi), 0;
    *out = v;
    return 1;
}

int pcb_opt_f64(const char *cmd, const char *opt, const char *s, double lo, double hi,
                double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || isnan(v))
        return pcb_usage(cmd, "%s: '%s' is not a number", opt, s), 0;
    if (!(v >= lo && v <= hi))
        return pcb_usage(cmd, "%s: %s is out of range %g..%g", opt, s, lo, hi), 0;
    *out = v;
    return 1;
}

/* 1 if name is an implementation of some problem, built here or not. */
static int impl_known(const char *name)
{
    for (int p = 0; p < PCB_NPROBLEMS; p++)
        if (pcb_find((pcb_problem)p, name) || pcb_not_built_find((pcb_problem)p, name))
            return 1;
    return 0;
}

int pcb_opt_selection(const char *cmd, const char *problems, const char *impls)
{
    for (const char *p = problems; p && *p;) {
        char name[16];
        size_t w = strcspn(p, ",");
        snprintf(name, sizeof name, "%.*s", (int)(w < 15 ? w : 15), p);
        pcb_problem pr;
        if (pcb_problem_parse(name, &pr) != PCB_OK)
            return pcb_usage(cmd, "%s", pcb_errmsg()), 0;
        p += w + (p[w] == ',');
    }
    for (const char *p = impls; p && *p;) {
        char name[64];
        size_t w = strcspn(p, ",");
        snprintf(name, sizeof name, "%.*s", (int)(w < 63 ? w : 63), p);
        if (!impl_known(name))
            return pcb_usage(cmd, "unknown implementation '%s'", name), 0;
        p += w + (p[w] == ',');
    }
    return 1;
}
