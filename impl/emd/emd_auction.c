/* emd_auction.c - serial forward auction (Bertsekas) with eps-scaling,
 * Gauss-Seidel: one bidder at a time, taken from a FIFO queue of the
 * unassigned, bids against the current prices (see emd.h for the bid, the
 * eps schedule and the default target eps). A bid scans all of B, costs
 * recomputed in double precision: O(n) memory.
 *
 * Approximate by design: the total is within n * eps of the optimum, and
 * the final prices certify it (has_price). Counters: bids, iterations =
 * eps phases, distance_evals = n per bid. */
#include <stdlib.h>
#include <string.h>

#include "emd.h"

typedef struct {
    pcb_task task;
    int32_t *match, *owner, *queue;
    double *price, *bx, *by, *bz;
    int64_t bids, phases;
} auction_state;

static void auction_release(void *state)
{
    auction_state *s = state;
    if (!s)
        return;
    free(s->match);
    free(s->owner);
    free(s->queue);
    free(s->price);
    free(s->bx);
    free(s->by);
    free(s->bz);
    free(s);
}

static int auction_prepare(const pcb_task *t, void **state)
{
    int rc = pcb_emd_auction_check_eps(t, "auction");
    if (rc != PCB_OK)
        return rc;
    auction_state *s = calloc(1, sizeof *s);
    size_t n = (size_t)t->n, all = (size_t)(t->batch * t->n);
    if (!s || !(s->match = malloc(all * sizeof *s->match)) ||
        !(s->price = malloc(all * sizeof *s->price)) ||
        !(s->owner = malloc(n * sizeof *s->owner)) || !(s->queue = malloc(n * sizeof *s->queue)) ||
        !(s->bx = malloc(n * sizeof *s->bx)) || !(s->by = malloc(n * sizeof *s->by)) ||
        !(s->bz = malloc(n * sizeof *s->bz))) {
        auction_release(s);
        return pcb_fail(PCB_ENOMEM, "emd auction: out of memory for %lld points",
                        (long long)t->n);
    }
    s->task = *t;
    *state = s;
    return PCB_OK;
}

/* One eps phase: every bidder starts unassigned, bids until all hold one. */
static void phase(auction_state *s, const float *a, int32_t n, double eps, int32_t *match,
                  double *price)
{
    int32_t head = 0, queued = n;
    for (int32_t i = 0; i < n; i++) {
        match[i] = s->owner[i] = -1;
        s->queue[i] = i;
    }
    while (queued) {
        int32_t i = s->queue[head], j;
        head = head + 1 < n ? head + 1 : 0;
        queued--;
        double best, second;
        pcb_emd_best_two(a[3 * (int64_t)i], a[3 * (int64_t)i + 1], a[3 * (int64_t)i + 2], s->bx,
                         s->by, s->bz, price, n, &j, &best, &second);
        price[j] += second - best + eps;
        int32_t evicted = s->owner[j];
        if (evicted >= 0) {
            match[evicted] = -1;
            int32_t tail = head + queued < n ? head + queued : head + queued - n;
            s->queue[tail] = evicted;
            queued++;
        }
        s->owner[j] = i;
        match[i] = j;
        s->bids++;
    }
    s->phases++;
}

static void solve_pair(auction_state *s, const float *a, const float *b, int32_t n, double eps_opt,
                       int32_t *match, double *price)
{
    for (int32_t j = 0; j < n; j++) {
        s->bx[j] = b[3 * (int64_t)j];
        s->by[j] = b[3 * (int64_t)j + 1];
        s->bz[j] = b[3 * (int64_t)j + 2];
        price[j] = 0;
    }
    double c = pcb_emd_cost_bound(a, b, n), target = pcb_emd_auction_eps(eps_opt, c);
    for (double eps = pcb_emd_auction_eps_start(target, c);; eps /= PCB_EMD_AUCTION_EPS_DIVISOR) {
        eps = eps > target ? eps : target;
        phase(s, a, n, eps, match, price);
        if (eps <= target)
            break;
    }
}

static int auction_compute(void *state)
{
    auction_state *s = state;
    const pcb_task *t = &s->task;
    s->bids = s->phases = 0;
    for (int64_t p = 0; p < t->batch; p++)
        solve_pair(s, t->a + p * t->n * 3, t->b + p * t->n * 3, (int32_t)t->n, t->opt.eps,
                   s->match + p * t->n, s->price + p * t->n);
    return PCB_OK;
}

static int auction_fetch(void *state, pcb_result *out)
{
    auction_state *s = state;
    return pcb_emd_fetch(&s->task, s->match, s->price, out);
}

static int auction_counters(void *state, pcb_counters *c)
{
    auction_state *s = state;
    c->bids = s->bids;
    c->iterations = s->phases;
    c->distance_evals = s->bids * s->task.n;
    return PCB_OK;
}

const pcb_impl pcb_emd_auction = {
    .name = "auction",
    .cost = PCB_COST_CUBIC,
    .problem = PCB_EMD,
    .device = PCB_CPU,
    /* a gap far above n * eps means a broken auction */
    .promise = {.exact = 0, .max_gap = 0.01},
    .summary = "serial Gauss-Seidel forward auction with eps-scaling, double precision; "
               "within n*eps of optimal (eps default 1e-6 x extent), returns prices",
    .prepare = auction_prepare,
    .compute = auction_compute,
    .fetch = auction_fetch,
    .release = auction_release,
    .counters = auction_counters,
};
