/* bench_clock.c - the clocks of the harness (monotonic seconds, UTC stamps),
 * its progress lines on stderr, and the heartbeat: a line when a step runs
 * far past its prediction, so a long run is never silent. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double bench_load_average(void)
{
    double one = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &one) != 1)
            one = -1;
        fclose(f);
    }
    return one;
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

/* ---- the heartbeat -------------------------------------------------------------- */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    int running, stop;
    char what[200];   /* the step in progress, "" for none */
    double began, predicted, next;
    double floor; /* seconds before a first word at least (PCBENCH_HEARTBEAT: tests) */
} beat = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static void *heartbeat(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&beat.lock);
    while (!beat.stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        long step_ns = beat.floor < 2 ? 100000000L : 1000000000L; /* a tenth of a second, or one */
        until.tv_nsec += step_ns;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&beat.wake, &beat.lock, &until);
        const double now = bench_now();
        if (beat.what[0] && now >= beat.next) {
            fprintf(stderr, "  ... still %s: %.3g s so far, %.3g s predicted\n", beat.what,
                    now - beat.began, beat.predicted);
            fflush(stderr);
            beat.next = now + fmax(3 * beat.floor, now - beat.began); /* then less often */
        }
    }
    pthread_mutex_unlock(&beat.lock);
    return NULL;
}

void bench_heartbeat_start(void)
{
    const char *env = getenv("PCBENCH_HEARTBEAT");
    char *end = NULL;
    double floor = env && *env ? strtod(env, &end) : 10;
    pthread_mutex_lock(&beat.lock);
    beat.floor = end && *end == '\0' && floor > 0 && floor <= 3600 ? floor : 10;
    beat.stop = 0;
    beat.what[0] = '\0';
    if (!beat.running)
        beat.running = pthread_create(&beat.thread, NULL, heartbeat, NULL) == 0;
    pthread_mutex_unlock(&beat.lock);
}

void bench_heartbeat_stop(void)
{
    pthread_mutex_lock(&beat.lock);
    beat.stop = 1;
    pthread_cond_signal(&beat.wake);
    const int running = beat.running;
    beat.running = 0;
    pthread_mutex_unlock(&beat.lock);
    if (running)
        pthread_join(beat.thread, NULL);
}

void bench_step(const char *what, double predicted)
{
    pthread_mutex_lock(&beat.lock);
    snprintf(beat.what, sizeof beat.what, "%s", what ? what : "");
    beat.began = bench_now();
    beat.predicted = predicted;
    /* a word once the step has run three times its prediction, and 10 s at least */
    beat.next = beat.began + fmax(beat.floor, 3 * fmax(predicted, 0));
    pthread_mutex_unlock(&beat.lock);
}
