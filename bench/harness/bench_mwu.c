/* bench_mwu.c - is one figure's set of samples slower than another's? The
 * two-sided Mann-Whitney U test and the Hodges-Lehmann estimate of the
 * ratio, from their definitions.
 *
 * U counts the pairs (a_i, b_j) with b_j > a_i, ties a half. Without ties
 * and with a sample of fewer than 8, p is exact: the number of orderings
 * of the pooled samples whose U is at least as far from its mean, over all
 * C(na + nb, na) (counted by the recursion on the largest value: it is an
 * a, taking nothing, or a b, taking one pair per a below it). Otherwise
 * the normal approximation, with the tie correction of the variance and a
 * continuity correction of 1/2. These are the choices of
 * scipy.stats.mannwhitneyu's method "auto", against which the tests hold
 * it.
 *
 * Timings change by factors, so the change is estimated on the log scale:
 * the ratio is the median of all na x nb ratios b_j / a_i (Hodges-Lehmann),
 * and its confidence interval the order statistics of those ratios that
 * the normal approximation of U's distribution gives (Lehmann's
 * distribution-free interval). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

enum { EXACT_BELOW = 8 };

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* P(U >= u) without ties, for samples of m a's and n b's: N(i, j, v), the
 * orderings of i a's and j b's with U = v, by the largest value: a b
 * (above all i a's: i pairs) or an a (none). */
static double exact_sf(int m, int n, double u)
{
    const size_t plane = (size_t)m * (size_t)n + 1;
    double *count = calloc((size_t)(m + 1) * (size_t)(n + 1) * plane, sizeof *count);
    if (!count)
        return NAN;
#define N(i, j, v) count[((size_t)(i) * (size_t)(n + 1) + (size_t)(j)) * plane + (size_t)(v)]
    for (int i = 0; i <= m; i++)
        for (int j = 0; j <= n; j++) {
            if (i == 0 || j == 0) {
                N(i, j, 0) = 1;
                continue;
            }
            for (int v = 0; v <= i * j; v++)
                N(i, j, v) = (v >= i ? N(i, j - 1, v - i) : 0) + N(i - 1, j, v);
        }
    double total = 0, tail = 0;
    for (size_t v = 0; v < plane; v++) {
        total += N(m, n, v);
        tail += (double)v >= u - 1e-9 ? N(m, n, v) : 0;
    }
#undef N
    free(count);
    return tail / total;
}

/* The standard normal's upper tail. */
static double normal_sf(double z)
{
    return 0.5 * erfc(z / sqrt(2.0));
}

/* The standard normal's quantile (Acklam's rational approximation, refined
 * by one Newton step on erfc: double precision in practice). */
static double normal_quantile(double p)
{
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                               -2.759285104469687e+02, 1.383577518672690e+02,
                               -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                               -1.556989798598866e+02, 6.680131188771972e+01,
                               -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                               -2.400758277161838e+00, -2.549732539343734e+00,
                               4.374664141464968e+00, 2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                               2.445134137142996e+00, 3.754408661907416e+00};
    double x;
    if (p < 0.02425) {
        const double q = sqrt(-2 * log(p));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else if (p > 1 - 0.02425) {
        const double q = sqrt(-2 * log(1 - p));
        x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else {
        const double q = p - 0.5, r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    }
    const double e = 0.5 * erfc(-x / sqrt(2.0)) - p; /* Newton on the CDF */
    return x - e * sqrt(2 * 3.14159265358979323846) * exp(x * x / 2);
}

int bench_mwu_test(const double *a, int na, const double *b, int nb, double alpha,
                   bench_mwu *out)
{
    if (!a || !b || !out || na < 1 || nb < 1 || na > MAX_SAMPLES || nb > MAX_SAMPLES ||
        !(alpha > 0 && alpha < 1))
        return pcb_fail(PCB_EINVAL, "mann-whitney: need 1..%d samples a side and 0 < alpha < 1",
                        MAX_SAMPLES);
    memset(out, 0, sizeof *out);
    /* U of b, and the tie groups of the pooled samples */
    double u = 0;
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++)
            u += b[j] > a[i] ? 1 : b[j] == a[i] ? 0.5 : 0;
    double pooled[2 * MAX_SAMPLES], ties = 0;
    const int n = na + nb;
    memcpy(pooled, a, (size_t)na * sizeof *a);
    memcpy(pooled + na, b, (size_t)nb * sizeof *b);
    qsort(pooled, (size_t)n, sizeof *pooled, cmp_double);
    for (int i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && pooled[j] == pooled[i]; j++)
            ;
        const double t = j - i;
        ties += t * t * t - t;
    }
    const double mn = (double)na * nb, mean = mn / 2, far = fmax(u, mn - u);
    out->u = u;
    out->exact = ties == 0 && (na < EXACT_BELOW || nb < EXACT_BELOW);
    if (out->exact) {
        out->p = fmin(1.0, 2 * exact_sf(na, nb, far));
    } else {
        const double var = mn / 12 * ((n + 1) - ties / ((double)n * (n - 1)));
        out->p = var > 0 ? fmin(1.0, 2 * normal_sf((far - mean - 0.5) / sqrt(var))) : 1.0;
    }
    /* Hodges-Lehmann on the ratios, and Lehmann's interval */
    double *r = malloc((size_t)na * (size_t)nb * sizeof *r);
    if (!r)
        return pcb_fail(PCB_ENOMEM, "mann-whitney: out of memory");
    int k = 0;
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++)
            r[k++] = a[i] > 0 ? b[j] / a[i] : NAN;
    qsort(r, (size_t)k, sizeof *r, cmp_double);
    out->ratio = k % 2 ? r[k / 2] : 0.5 * (r[k / 2 - 1] + r[k / 2]);
    const double z = normal_quantile(1 - alpha / 2);
    const int c = (int)floor(mean - z * sqrt(mn * (n + 1) / 12.0)); /* ratios cut a side */
    out->lo = c >= 0 ? r[c] : NAN;
    out->hi = c >= 0 ? r[k - 1 - c] : NAN;
    free(r);
    return PCB_OK;
}
