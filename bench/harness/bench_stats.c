/* bench_stats.c - the statistics of a figure's samples. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static void sorted(const double *v, int n, double *s)
{
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
}

static double median_of(const double *v, int n)
{
    double s[MAX_SAMPLES];
    sorted(v, n, s);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* The order statistics x(r) and x(s) (1-based) with r = floor((n - 1.96
 * sqrt(n)) / 2) and s = ceil(1 + (n + 1.96 sqrt(n)) / 2) bound the median
 * with about 95% confidence whatever the distribution (the binomial count
 * of samples below it, in its normal approximation); (x(s) - x(r)) / 3.92
 * then estimates the median's standard error. It errs high, so sampling
 * stops late rather than early: on normal samples (simulated) it is 2x the
 * true error at 10 samples, 1.3x at 30, 1.09x at 100. Robust to the odd
 * slow sample, as the median itself is. */
double bench_noise(const double *v, int n)
{
    if (n < 3 || n > MAX_SAMPLES)
        return NAN;
    double s[MAX_SAMPLES];
    sorted(v, n, s);
    double med = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    double half = 1.96 * sqrt((double)n);
    int r = (int)floor((n - half) / 2), u = (int)ceil(1 + (n + half) / 2);
    if (r < 1)
        r = 1;
    if (u > n)
        u = n;
    return med > 0 ? (s[u - 1] - s[r - 1]) / (2 * 1.96) / med : NAN;
}

void bench_figure_add(bench_figure *f, double real_s, double cpu_s, const bench_gpu_state *gpu,
                      int throttled)
{
    if (gpu)
        f->have_gpu = 1;
    if (throttled) {
        if (f->dropped < MAX_DROPPED) {
            f->dropped_sample[f->dropped] = real_s;
            if (gpu)
                f->dropped_gpu[f->dropped] = *gpu;
        }
        f->dropped++;
        return;
    }
    if (f->reps >= MAX_SAMPLES)
        return;
    f->sample[f->reps] = real_s;
    f->cpu[f->reps] = cpu_s;
    if (gpu)
        f->gpu[f->reps] = *gpu;
    f->reps++;
}

void bench_figure_from_run(bench_figure *f, double seconds)
{
    f->clock = "verification run";
    f->iterations = 1;
    bench_figure_add(f, seconds, seconds, NULL, 0);
    snprintf(f->stop, sizeof f->stop, "budget");
    bench_figure_stats(f);
}

void bench_figure_stats(bench_figure *f)
{
    f->median = f->mean = f->stddev = f->cv = f->min = f->cpu_median = f->noise = NAN;
    f->unreliable = f->dropped > f->reps;
    if (f->reps < 1)
        return;
    double sum = 0, sq = 0;
    f->min = f->sample[0];
    for (int i = 0; i < f->reps; i++) {
        sum += f->sample[i];
        f->min = fmin(f->min, f->sample[i]);
    }
    f->mean = sum / f->reps;
    for (int i = 0; i < f->reps; i++)
        sq += (f->sample[i] - f->mean) * (f->sample[i] - f->mean);
    f->stddev = f->reps > 1 ? sqrt(sq / (f->reps - 1)) : 0;
    f->cv = f->mean > 0 ? f->stddev / f->mean : 0;
    f->median = median_of(f->sample, f->reps);
    f->cpu_median = median_of(f->cpu, f->reps);
    f->noise = bench_noise(f->sample, f->reps);
}
