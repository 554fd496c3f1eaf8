/* emd_validate.c - the EMD validator, in double precision.
 *
 * Per pair: every index in -1..n-1 (anything else fails at once); no point of
 * B matched twice; points left at -1 are counted and make the answer fail
 * (not a bijection). The cost P is recomputed and compared with
 * result->value (relative 1e-5). With prices, the certified bound
 * (P - D) / D of emd.h (differences within 1e-12 of the pair's extent count
 * as rounding, 0). Up to n = t->opt.emd_gap_max_n points (0: 2048; -1:
 * never), the gap (P - OPT) / OPT to the optimum of the exact solver.
 *
 * D is raised to 0 when below: costs are not negative, so neither is the
 * optimum.
 *
 * Verdict: an exact implementation needs a bijection with gap <= 1e-9 and,
 * when it returns prices, bound <= 1e-9 (a proof of optimality that does
 * not trust the solver). An approximate one needs a bijection, and a gap
 * and, when it returns prices, a bound within the max_gap it promises (the
 * CPU auctions promise 1%, landing far inside it; cuda_auction 0.1%).
 * max_gap 0 is the strictest check, the exact one (1e-9, rounding);
 * PCB_EMD_ANY_GAP (infinity) asks for a bijection only: the seed's CUDA
 * kernel promises nothing more, its gap is measured and reported. A
 * negative or NaN max_gap is PCB_EINVAL, never a pass.
 * Gap and bound of a batch are the worst over its pairs. */
#include <float.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impl/pcbench_judge.h"
#include "emd.h"

#define EXACT_TOL 1e-9
#define VALUE_RTOL 1e-5
#define DEFAULT_GAP_MAX_N 2048
#define ROUNDING 1e-12

static int64_t gap_max_n(const pcb_task *t)
{
    const int64_t asked = t->opt.emd_gap_max_n;
    return asked > 0 ? asked : asked < 0 ? 0 : DEFAULT_GAP_MAX_N;
}

/* x relative to ref. Differences within ROUNDING of the pair's extent are
 * rounding and count as 0; when ref is not positive (an optimum of 0),
 * anything more is infinitely far. */
static double relative(double x, double ref, double extent)
{
    if (fabs(x) <= ROUNDING * extent)
        return 0;
    if (ref > 0)
        return x / ref;
    return x < 0 ? 0 : HUGE_VAL;
}

/* FNV-1a over a cloud's bytes: identifies a pair for the optimum cache. */
static uint64_t hash_cloud(const float *p, int64_t n)
{
    const unsigned char *c = (const unsigned char *)p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < (size_t)n * 3 * sizeof(float); i++)
        h = (h ^ c[i]) * 0x100000001b3ull;
    return h;
}

/* The optima of a batch's pairs (mean costs), by the exact solver, the
 * pairs solved side by side (at n = 2048 a batch of 32 takes about 20 s on
 * one core). The last 64 are remembered, for every thread: verify and bench
 * judge every implementation of a configuration against the same pairs,
 * batches of up to 32 and a loss mode's twin. */
enum { SLOTS = 64 };
static struct {
    int64_t n;
    uint64_t ha, hb;
    double opt;
} cache[SLOTS];
static int cache_next;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static int cache_find(int64_t n, uint64_t ha, uint64_t hb, double *opt)
{
    int found = 0;
    pthread_mutex_lock(&cache_lock);
    for (int k = 0; k < SLOTS && !found; k++)
        if (cache[k].n == n && cache[k].ha == ha && cache[k].hb == hb) {
            *opt = cache[k].opt;
            found = 1;
        }
    pthread_mutex_unlock(&cache_lock);
    return found;
}

static void cache_keep(int64_t n, uint64_t ha, uint64_t hb, double opt)
{
    pthread_mutex_lock(&cache_lock);
    cache[cache_next].n = n;
    cache[cache_next].ha = ha;
    cache[cache_next].hb = hb;
    cache[cache_next].opt = opt;
    cache_next = (cache_next + 1) % SLOTS;
    pthread_mutex_unlock(&cache_lock);
}

static int optima(const pcb_task *t, double *opt)
{
    const int64_t n = t->n, batch = t->batch;
    uint64_t *hash = malloc((size_t)batch * 2 * sizeof *hash);
    int *rc = calloc((size_t)batch, sizeof *rc);
    int64_t *unsolved = malloc((size_t)batch * sizeof *unsolved), count = 0;
    if (!hash || !rc || !unsolved) {
        free(hash), free(rc), free(unsolved);
        return pcb_fail(PCB_ENOMEM, "emd validate: no memory for the exact optima");
    }
    for (int64_t p = 0; p < batch; p++) {
        hash[2 * p] = hash_cloud(t->a + p * n * 3, n);
        hash[2 * p + 1] = hash_cloud(t->b + p * n * 3, n);
        if (!cache_find(n, hash[2 * p], hash[2 * p + 1], &opt[p]))
            unsolved[count++] = p;
    }
#pragma omp parallel for schedule(dynamic, 1) if (count > 1)
    for (int64_t i = 0; i < count; i++) {
        const int64_t p = unsolved[i];
        int32_t *match = malloc((size_t)n * sizeof *match);
        pcb_task one = {.problem = PCB_EMD, .batch = 1, .n = n, .nq = n,
                        .a = t->a + p * n * 3, .b = t->b + p * n * 3};
        pcb_result r = {.index = match, .value = &opt[p]};
        rc[p] = match ? pcb_run(&pcb_emd_exact, &one, &r, NULL) : PCB_ENOMEM;
        free(match);
    }
    int status = PCB_OK;
    for (int64_t i = 0; i < count; i++) {
        const int64_t p = unsolved[i];
        if (rc[p] == PCB_OK)
            cache_keep(n, hash[2 * p], hash[2 * p + 1], opt[p]);
        else if (status == PCB_OK) /* its message was the solving thread's */
            status = pcb_fail(rc[p], "emd validate: the exact optimum of pair %lld: %s",
                              (long long)p, pcb_strerror(rc[p]));
    }
    free(hash), free(rc), free(unsolved);
    return status;
}

/* D of emd.h for one pair, as a mean, less all that rounding could have put
 * into it: a D that rounding could have produced certifies nothing. Prices
 * are defined up to a constant (D is the same for p and p - s), so they are
 * shifted by the largest first: huge prices would cancel in double, and D > P
 * from the cancellation would "prove" any bijection optimal. The error bound
 * counts each cost (its square root and sums, relative 8u), each add, the
 * minima's and prices' recursive sums (n u of their magnitudes each), and the
 * mean, with room to spare. extent bounds every cost. */
static double dual_bound(const float *a, const float *b, int64_t n, const double *price,
                         double extent)
{
    double top = -HUGE_VAL;
    for (int64_t j = 0; j < n; j++)
        top = price[j] > top ? price[j] : top;
    double sum = 0, mass = 0, qmax = 0;
    for (int64_t i = 0; i < n; i++) {
        double low = HUGE_VAL;
        for (int64_t j = 0; j < n; j++) {
            double v = pcb_emd_cost(a + 3 * i, b + 3 * j) + (price[j] - top);
            low = v < low ? v : low;
        }
        sum += low;
        mass += fabs(low);
    }
    for (int64_t j = 0; j < n; j++) {
        const double q = price[j] - top;
        sum -= q;
        mass += fabs(q);
        qmax = fabs(q) > qmax ? fabs(q) : qmax;
    }
    const double err = 2.0 * (double)(n + 8) * DBL_EPSILON * (mass + (double)n * (extent + qmax));
    return (sum - err) / (double)n;
}

/* The certified bound (P - D) / D of one pair's bijection of mean cost
 * mean, D from its prices (raised to 0: costs are not negative, so neither
 * is the optimum); extent is the pair's cost bound. */
static double pair_bound(const float *a, const float *b, int64_t n, const double *price,
                         double mean, double extent)
{
    double d = dual_bound(a, b, n, price, extent);
    d = d > 0 ? d : 0;
    return relative(mean - d, d, extent);
}

/* Checks one pair's indices; returns 0 and writes the problem when the
 * pair is not a partial bijection. */
static int check_indices(const int32_t *match, int64_t n, int64_t pair, int32_t *owner,
                         int64_t *unmatched, char *detail, size_t size)
{
    for (int64_t j = 0; j < n; j++)
        owner[j] = -1;
    for (int64_t i = 0; i < n; i++) {
        int32_t j = match[i];
        if (j == -1) {
            (*unmatched)++;
        } else if (j < -1 || j >= n) {
            snprintf(detail, size, "pair %lld: point %lld of A has index %ld, out of -1..%lld",
                     (long long)pair, (long long)i, (long)j, (long long)n - 1);
            return 0;
        } else if (owner[j] >= 0) {
            snprintf(detail, size,
                     "not a bijection: pair %lld: point %lld of B matched to points %ld and "
                     "%lld of A",
                     (long long)pair, (long long)j, (long)owner[j], (long long)i);
            return 0;
        } else {
            owner[j] = (int32_t)i;
        }
    }
    return 1;
}

int pcb_emd_validate(const pcb_task *t, const pcb_result *r, int exact, double max_gap,
                     pcb_report *rep)
{
    if (!t || !r || !r->index || !rep || t->problem != PCB_EMD)
        return pcb_fail(PCB_EINVAL, "emd validate: missing task, result or report");
    if (!(max_gap >= 0))
        return pcb_fail(PCB_EINVAL, "emd validate: max_gap %g: need 0 (exact), a relative gap "
                        "> 0 or PCB_EMD_ANY_GAP", max_gap);
    int rc = pcb_task_check(t);
    if (rc != PCB_OK)
        return rc;
    const int64_t n = t->n;
    const int with_gap = n <= gap_max_n(t), with_bound = r->has_price && r->price;
    rep->ok = 0;
    rep->detail[0] = '\0';
    rep->recall = rep->worst_ratio = -1;
    rep->gap = with_gap ? 0 : -1;
    rep->bound = with_bound ? 0 : -1;
    rep->unmatched = 0;
    int32_t *owner = malloc((size_t)n * sizeof *owner);
    double *opt = with_gap ? malloc((size_t)t->batch * sizeof *opt) : NULL;
    if (!owner || (with_gap && !opt)) {
        free(owner), free(opt);
        return pcb_fail(PCB_ENOMEM, "emd validate: out of memory");
    }
    if (with_gap && (rc = optima(t, opt)) != PCB_OK) {
        free(owner), free(opt);
        return rc;
    }
    char problem[sizeof rep->detail] = "";
    for (int64_t p = 0; p < t->batch && !problem[0]; p++) {
        const float *a = t->a + p * n * 3, *b = t->b + p * n * 3;
        const int32_t *match = r->index + p * n;
        int64_t unmatched = 0;
        if (!check_indices(match, n, p, owner, &unmatched, problem, sizeof problem))
            break;
        rep->unmatched += unmatched;
        double mean = pcb_emd_mean_matched(a, b, n, match, NULL);
        if (r->value && !(fabs(r->value[p] - mean) <= VALUE_RTOL * mean)) {
            snprintf(problem, sizeof problem,
                     "pair %lld: value %.9g, but the matched costs average %.9g",
                     (long long)p, r->value[p], mean);
            break;
        }
        if (unmatched)
            continue; /* P is not a bijection's cost: no gap or bound */
        const double extent = pcb_emd_cost_bound(a, b, n);
        if (with_bound) {
            for (int64_t j = 0; j < n; j++)
                if (!isfinite(r->price[p * n + j])) {
                    snprintf(problem, sizeof problem, "pair %lld: price of point %lld is %g",
                             (long long)p, (long long)j, r->price[p * n + j]);
                    break;
                }
            if (problem[0])
                break;
            double bound = pair_bound(a, b, n, r->price + p * n, mean, extent);
            rep->bound = bound > rep->bound ? bound : rep->bound;
        }
        if (with_gap) {
            double gap = relative(mean - opt[p], opt[p], extent);
            if (gap < 0) {
                snprintf(problem, sizeof problem,
                         "pair %lld: cost %.12g below the exact solver's optimum %.12g: the "
                         "reference is wrong",
                         (long long)p, mean, opt[p]);
                break;
            }
            rep->gap = gap > rep->gap ? gap : rep->gap;
        }
    }
    free(owner), free(opt);

    char gap[48], bound[48];
    if (rep->gap >= 0)
        snprintf(gap, sizeof gap, "gap %.3g%%", 100 * rep->gap);
    else
        snprintf(gap, sizeof gap, "gap n/c (n > %lld)", (long long)gap_max_n(t));
    if (rep->bound >= 0)
        snprintf(bound, sizeof bound, "bound %.3g%%", 100 * rep->bound);
    else
        snprintf(bound, sizeof bound, "bound n/a (no prices)");
    const double tol = exact || max_gap < EXACT_TOL ? EXACT_TOL : max_gap;
    if (problem[0]) {
        snprintf(rep->detail, sizeof rep->detail, "%s", problem);
    } else if (rep->unmatched) {
        snprintf(rep->detail, sizeof rep->detail,
                 "bijection no: %lld point%s left unmatched, %s, %s", (long long)rep->unmatched,
                 rep->unmatched == 1 ? "" : "s", gap, bound);
    } else {
        /* A promise is kept by the certificate too, where there are prices. */
        rep->ok = rep->gap <= tol && rep->bound <= tol;
        snprintf(rep->detail, sizeof rep->detail, "bijection yes, %s, %s%s", gap, bound,
                 rep->ok          ? ""
                 : rep->gap > tol ? (tol == EXACT_TOL ? ": not optimal" : ": gap above its promise")
                 : tol == EXACT_TOL ? ": prices do not certify optimality"
                                  : ": bound above its promise");
    }
    return PCB_OK;
}

int pcb_emd_bound(const pcb_task *t, const pcb_result *r, double *bound)
{
    if (!t || !r || !r->index || !bound || t->problem != PCB_EMD)
        return pcb_fail(PCB_EINVAL, "emd bound: missing task, result or bound array");
    if (!r->price || !r->has_price)
        return pcb_fail(PCB_EINVAL, "emd bound: the answer has no prices to certify it");
    int rc = pcb_task_check(t);
    if (rc != PCB_OK)
        return rc;
    if (t->memory != PCB_MEM_HOST)
        return pcb_fail(PCB_EUNSUPPORTED, "emd bound: host arrays only");
    const int64_t n = t->n;
    int32_t *owner = malloc((size_t)n * sizeof *owner);
    if (!owner)
        return pcb_fail(PCB_ENOMEM, "emd bound: out of memory");
    for (int64_t p = 0; p < t->batch; p++) {
        const float *a = t->a + p * n * 3, *b = t->b + p * n * 3;
        int64_t unmatched = 0;
        char detail[160];
        bound[p] = NAN;
        if (!check_indices(r->index + p * n, n, p, owner, &unmatched, detail, sizeof detail) ||
            unmatched)
            continue;
        bound[p] = pair_bound(a, b, n, r->price + p * n,
                              pcb_emd_mean_matched(a, b, n, r->index + p * n, NULL),
                              pcb_emd_cost_bound(a, b, n));
    }
    free(owner);
    return PCB_OK;
}
