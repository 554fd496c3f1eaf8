/* bench_clock.c - the clocks of the harness (monotonic seconds, UTC stamps)
 * and its progress lines on stderr. */
#include <math.h>
#include <stdarg.h>
#include <time.h>

#include "bench.h"

double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void bench_utc_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void bench_progress(const bench_ctx *ctx, const char *fmt, ...)
{
    const double now = bench_now();
    int s = (int)(now - ctx->started);
    fprintf(stderr, "[%d/%d %d:%02d", ctx->index + 1, ctx->total, s / 60, s % 60);
    if (ctx->expected_end > 0) { /* the ETA: at least a few seconds while work is left */
        int left = (int)fmax(ctx->expected_end - now, ctx->index + 1 < ctx->total ? 5 : 0);
        fprintf(stderr, ", ~%d:%02d left", left / 60, left % 60);
    }
    fputs("] ", stderr);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}
