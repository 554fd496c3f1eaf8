/* bench_status.c - an entry's status: its name in results files, and
 * the status of a failed library call. */
#include <stdarg.h>
#include <string.h>

#include "bench_run.h"

static const char *const status_names[] = {
    [ST_NONE] = "none",
    [ST_OK] = "ok",
    [ST_FAILED_VERIFY] = "failed-verification",
    [ST_FAILED_RUN] = "failed-run",
    [ST_UNSUPPORTED] = "unsupported",
    [ST_SKIPPED_BUDGET] = "skipped-budget",
    [ST_UNAVAILABLE] = "unavailable",
};

const char *bench_status_name(bench_status s)
{
    return (unsigned)s <= ST_UNAVAILABLE ? status_names[s] : "none";
}

bench_status bench_status_parse(const char *s)
{
    for (int i = 0; s && i <= ST_UNAVAILABLE; i++)
        if (strcmp(s, status_names[i]) == 0)
            return (bench_status)i;
    return ST_NONE;
}

void bench_set_status(bench_entry *e, bench_status s, const char *fmt, ...)
{
    e->status = s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->detail, sizeof e->detail, fmt, ap);
    va_end(ap);
}

/* Status of a failed library call. */
bench_status bench_status_for(int rc)
{
    switch (rc) {
    case PCB_EUNSUPPORTED:
    case PCB_ENOMEM: return ST_UNSUPPORTED;
    case PCB_EUNAVAIL: return ST_UNAVAILABLE;
    default: return ST_FAILED_RUN;
    }
}
