/* emd_auction_omp.c - forward auction with eps-scaling, Jacobi bidding in
 * OpenMP (bid, eps schedule and default eps as in emd.h).
 *
 * A round: every unassigned bidder computes its bid against the prices at
 * the start of the round, in parallel; then, serially in bidder-list order,
 * each object goes to its highest bid (the earlier bidder on equal bids),
 * its price becomes that bid and its previous owner rejoins the list. The
 * bids depend only on the round's prices and the resolution on the list
 * order, so the answer is the same for every thread count.
 *
 * A batch of at least as many pairs as threads runs one pair per thread
 * instead (each pair then bids serially, with the same result). Counters:
 * bids, iterations = eps phases, distance_evals = n per bid. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "emd.h"

/* Rounds with fewer cost evaluations than this bid serially: a fork and
 * join costs more than the work (the answer is the same either way). */
#define PARALLEL_MIN_EVALS 65536

/* What one pair needs, n each. */
typedef struct {
    int32_t *owner, *bidders, *next, *bid_j, *winner;
    double *bid, *bx, *by, *bz;
    int64_t bids, phases;
} pair_work;

typedef struct {
    pcb_task task;
    int threads, sets; /* work sets: one per thread in batch mode, else 1 */
    int32_t *match;
    double *price;
    pair_work *work;
} omp_state;

static void free_work(pair_work *w)
{
    free(w->owner);
    free(w->bidders);
    free(w->next);
    free(w->bid_j);
    free(w->winner);
    free(w->bid);
    free(w->bx);
    free(w->by);
    free(w->bz);
}

static int alloc_work(pair_work *w, size_t n)
{
    return (w->owner = malloc(n * sizeof(int32_t))) && (w->bidders = malloc(n * sizeof(int32_t))) &&
           (w->next = malloc(n * sizeof(int32_t))) && (w->bid_j = malloc(n * sizeof(int32_t))) &&
           (w->winner = malloc(n * sizeof(int32_t))) && (w->bid = malloc(n * sizeof(double))) &&
           (w->bx = malloc(n * sizeof(double))) && (w->by = malloc(n * sizeof(double))) &&
           (w->bz = malloc(n * sizeof(double)));
}

static void omp_release(void *state)
{
    omp_state *s = state;
    if (!s)
        return;
    for (int k = 0; s->work && k < s->sets; k++)
        free_work(&s->work[k]);
    free(s->work);
    free(s->match);
    free(s->price);
    free(s);
}

static int omp_prepare(const pcb_task *t, void **state)
{
    int rc = pcb_emd_auction_check_eps(t, "auction_omp");
    if (rc != PCB_OK)
        return rc;
    omp_state *s = calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "emd auction_omp: out of memory");
    s->task = *t;
    s->threads = t->opt.threads > 0 ? t->opt.threads : omp_get_max_threads();
    s->sets = t->batch >= s->threads ? s->threads : 1;
    size_t all = (size_t)(t->batch * t->n);
    int ok = (s->match = malloc(all * sizeof *s->match)) &&
             (s->price = malloc(all * sizeof *s->price)) &&
             (s->work = calloc((size_t)s->sets, sizeof *s->work));
    for (int k = 0; ok && k < s->sets; k++)
        ok = alloc_work(&s->work[k], (size_t)t->n);
    if (!ok) {
        omp_release(s);
        return pcb_fail(PCB_ENOMEM, "emd auction_omp: out of memory for %lld points",
                        (long long)t->n);
    }
    *state = s;
    return PCB_OK;
}

/* Award the round's bids; returns the number of bidders for the next one. */
static int32_t resolve(pair_work *w, int32_t count, int32_t *match, double *price)
{
    for (int32_t k = 0; k < count; k++) {
        int32_t j = w->bid_j[k], top = w->winner[j];
        if (top < 0 || w->bid[k] > w->bid[top])
            w->winner[j] = k;
    }
    int32_t next = 0;
    for (int32_t k = 0; k < count; k++) {
        int32_t i = w->bidders[k], j = w->bid_j[k];
        if (w->winner[j] != k) {
            w->next[next++] = i;
            continue;
        }
        int32_t evicted = w->owner[j];
        if (evicted >= 0) {
            match[evicted] = -1;
            w->next[next++] = evicted;
        }
        w->owner[j] = i;
        match[i] = j;
        price[j] = w->bid[k];
    }
    for (int32_t k = 0; k < count; k++)
        w->winner[w->bid_j[k]] = -1;
    return next;
}

static void phase(pair_work *w, const float *a, int32_t n, double eps, int team, int32_t *match,
                  double *price)
{
    int32_t count = n;
    for (int32_t i = 0; i < n; i++) {
        match[i] = w->owner[i] = w->winner[i] = -1;
        w->bidders[i] = i;
    }
    while (count) {
#pragma omp parallel for schedule(static) num_threads(team) \
    if (count > 1 && (int64_t)count * n >= PARALLEL_MIN_EVALS)
        for (int32_t k = 0; k < count; k++) {
            int32_t i = w->bidders[k];
            double best, second;
            pcb_emd_best_two(a[3 * (int64_t)i], a[3 * (int64_t)i + 1], a[3 * (int64_t)i + 2],
                             w->bx, w->by, w->bz, price, n, &w->bid_j[k], &best, &second);
            w->bid[k] = price[w->bid_j[k]] + second - best + eps;
        }
        w->bids += count;
        count = resolve(w, count, match, price);
        int32_t *done = w->bidders;
        w->bidders = w->next;
        w->next = done;
    }
    w->phases++;
}

static void solve_pair(pair_work *w, const float *a, const float *b, int32_t n, double eps_opt,
                       int team, int32_t *match, double *price)
{
    for (int32_t j = 0; j < n; j++) {
        w->bx[j] = b[3 * (int64_t)j];
        w->by[j] = b[3 * (int64_t)j + 1];
        w->bz[j] = b[3 * (int64_t)j + 2];
        price[j] = 0;
    }
    double c = pcb_emd_cost_bound(a, b, n), target = pcb_emd_auction_eps(eps_opt, c);
    for (double eps = pcb_emd_auction_eps_start(target, c);; eps /= PCB_EMD_AUCTION_EPS_DIVISOR) {
        eps = eps > target ? eps : target;
        phase(w, a, n, eps, team, match, price);
        if (eps <= target)
            break;
    }
}

static int omp_compute(void *state)
{
    omp_state *s = state;
    const pcb_task *t = &s->task;
    const int32_t n = (int32_t)t->n;
    for (int k = 0; k < s->sets; k++)
        s->work[k].bids = s->work[k].phases = 0;
    if (s->sets > 1) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(s->threads)
        for (int64_t p = 0; p < t->batch; p++)
            solve_pair(&s->work[omp_get_thread_num()], t->a + p * n * 3, t->b + p * n * 3, n,
                       t->opt.eps, 1, s->match + p * n, s->price + p * n);
    } else {
        for (int64_t p = 0; p < t->batch; p++)
            solve_pair(&s->work[0], t->a + p * n * 3, t->b + p * n * 3, n, t->opt.eps,
                       s->threads, s->match + p * n, s->price + p * n);
    }
    return PCB_OK;
}

static int omp_fetch(void *state, pcb_result *out)
{
    omp_state *s = state;
    return pcb_emd_fetch(&s->task, s->match, s->price, out);
}

static int omp_counters(void *state, pcb_counters *c)
{
    omp_state *s = state;
    c->bids = c->iterations = 0;
    for (int k = 0; k < s->sets; k++) {
        c->bids += s->work[k].bids;
        c->iterations += s->work[k].phases;
    }
    c->distance_evals = c->bids * s->task.n;
    return PCB_OK;
}

const pcb_impl pcb_emd_auction_omp = {
    .name = "auction_omp",
    .cost = PCB_COST_CUBIC,
    .problem = PCB_EMD,
    .device = PCB_CPU,
    /* a gap far above n * eps means a broken auction */
    .promise = {.exact = 0, .max_gap = 0.01},
    .summary = "OpenMP Jacobi forward auction with eps-scaling (one pair per thread for "
               "large batches), same answer for every thread count; returns prices",
    .prepare = omp_prepare,
    .compute = omp_compute,
    .fetch = omp_fetch,
    .release = omp_release,
    .counters = omp_counters,
};
