/* bench_stats.c - the statistics of a figure's samples. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double median_of(const double *v, int n)
{
    double s[MAX_SAMPLES];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

void bench_figure_stats(bench_figure *f)
{
    f->median = f->mean = f->stddev = f->cv = f->min = f->cpu_median = NAN;
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
}
