/* emd.h - earth mover's distance between two clouds of equal size: semantics
 * and helpers shared by the implementations and the validator.
 *
 * Clouds A and B of n points each, cost c_ij = Euclidean distance (not
 * squared) between a_i and b_j. An answer is a bijection sigma from A to B;
 * its value is (1/n) sum_i c_i,sigma(i). The EMD is the least value over all
 * bijections. Pairs of a batch are independent.
 *
 * Prices: an implementation that keeps a price p_j per point of B (auctions,
 * or the negated column potentials of the exact solver) returns them. Any
 * price vector certifies a lower bound on the optimum:
 *   D = sum_i min_j (c_ij + p_j) - sum_j p_j <= OPT <= P = sum_i c_i,sigma(i),
 * since for every bijection sum_i c_i,sigma(i) = sum_i (c_i,sigma(i) +
 * p_sigma(i)) - sum_j p_j >= D. So (P - D) / D bounds the relative error of
 * sigma without an exact solver. */
#ifndef PCB_EMD_H
#define PCB_EMD_H

#include <math.h>
#include <string.h>

#include "impl/pcbench_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The exact solver, also the validator's reference. */
extern const pcb_impl pcb_emd_exact;

/* The cost in double precision: the reference every validator uses. */
static inline double pcb_emd_cost(const float *p, const float *q)
{
    double dx = (double)p[0] - q[0], dy = (double)p[1] - q[1], dz = (double)p[2] - q[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* An upper bound on every cost of a pair: the diagonal of the bounding box
 * of both clouds together. */
static inline double pcb_emd_cost_bound(const float *a, const float *b, int64_t n)
{
    double lo[3], hi[3], d2 = 0;
    for (int c = 0; c < 3; c++)
        lo[c] = hi[c] = a[c];
    for (int64_t k = 0; k < 2 * n; k++) {
        const float *p = k < n ? a + 3 * k : b + 3 * (k - n);
        for (int c = 0; c < 3; c++) {
            lo[c] = p[c] < lo[c] ? p[c] : lo[c];
            hi[c] = p[c] > hi[c] ? p[c] : hi[c];
        }
    }
    for (int c = 0; c < 3; c++)
        d2 += (hi[c] - lo[c]) * (hi[c] - lo[c]);
    return sqrt(d2);
}

/* Mean cost of the matched points of one pair (0 when none is matched);
 * *unmatched counts the points of A left at -1. */
static inline double pcb_emd_mean_matched(const float *a, const float *b, int64_t n,
                                          const int32_t *match, int64_t *unmatched)
{
    double sum = 0;
    int64_t matched = 0;
    for (int64_t i = 0; i < n; i++)
        if (match[i] >= 0) {
            sum += pcb_emd_cost(a + 3 * i, b + 3 * (int64_t)match[i]);
            matched++;
        }
    if (unmatched)
        *unmatched = n - matched;
    return matched ? sum / (double)matched : 0.0;
}

/* Copy a batch's matching and double prices into a result, and fill its
 * mean matched costs (the CPU implementations' fetch). */
static inline int pcb_emd_fetch(const pcb_task *t, const int32_t *match, const double *price,
                                pcb_result *out)
{
    size_t all = (size_t)(t->batch * t->n);
    memcpy(out->index, match, all * sizeof *out->index);
    if (out->price) {
        memcpy(out->price, price, all * sizeof *out->price);
        out->has_price = 1;
    }
    if (out->value)
        for (int64_t p = 0; p < t->batch; p++)
            out->value[p] = pcb_emd_mean_matched(t->a + p * t->n * 3, t->b + p * t->n * 3, t->n,
                                                 match + p * t->n, NULL);
    return PCB_OK;
}

/* ---- the CPU auctions (emd_auction.c, emd_auction_omp.c) ----------------
 * Minimising form: bidder i of A wants the j of B with the least c_ij + p_j
 * and raises p_j by (second least - least) + eps. Prices only rise, so every
 * phase ends with a bijection in which each i is within eps of its best
 * choice: the total is within n * eps of the optimum. eps-scaling: phases at
 * eps = C / 4, then / 8 each phase down to the target eps (C the cost bound
 * below), prices kept, assignment restarted.
 *
 * Target eps: opt.eps when given, else this share of C, so the mean cost is
 * within 1e-6 of the clouds' joint extent. A target below 1e-10 of C is
 * refused (PCB_EUNSUPPORTED): increments that small vanish against the
 * prices in double precision. */
#define PCB_EMD_AUCTION_EPS_SHARE 1e-6
#define PCB_EMD_AUCTION_EPS_MIN_SHARE 1e-10
#define PCB_EMD_AUCTION_EPS_START 0.25
#define PCB_EMD_AUCTION_EPS_DIVISOR 8.0

/* The target eps of one pair: 0 when the task's eps is too small for it. */
static inline double pcb_emd_auction_eps(double eps_option, double cost_bound)
{
    if (cost_bound <= 0)
        return 1.0; /* every cost is 0: every bijection is optimal */
    if (eps_option <= 0)
        return PCB_EMD_AUCTION_EPS_SHARE * cost_bound;
    return eps_option >= PCB_EMD_AUCTION_EPS_MIN_SHARE * cost_bound ? eps_option : 0;
}

/* Refuse a task whose eps is too small for one of its pairs. */
static inline int pcb_emd_auction_check_eps(const pcb_task *t, const char *name)
{
    for (int64_t p = 0; p < t->batch; p++) {
        double c = pcb_emd_cost_bound(t->a + p * t->n * 3, t->b + p * t->n * 3, t->n);
        if (pcb_emd_auction_eps(t->opt.eps, c) <= 0)
            return pcb_fail(PCB_EUNSUPPORTED,
                            "emd %s: eps %g is below %g x the extent %g of pair %lld: price "
                            "increments would vanish in double precision",
                            name, t->opt.eps, PCB_EMD_AUCTION_EPS_MIN_SHARE, c, (long long)p);
    }
    return PCB_OK;
}

/* The eps of the first phase. */
static inline double pcb_emd_auction_eps_start(double target, double cost_bound)
{
    double start = PCB_EMD_AUCTION_EPS_START * cost_bound;
    return start > target ? start : target;
}

/* One bid: the least and second least c_ij + p_j over B (given as double
 * x, y, z arrays), ties to the lowest j; second is the least itself when n
 * is 1 (nothing else to prefer). */
static inline void pcb_emd_best_two(double x, double y, double z, const double *bx,
                                    const double *by, const double *bz, const double *price,
                                    int64_t n, int32_t *best_j, double *best, double *second)
{
    double w1 = HUGE_VAL, w2 = HUGE_VAL;
    int32_t j1 = 0;
    for (int64_t j = 0; j < n; j++) {
        double dx = x - bx[j], dy = y - by[j], dz = z - bz[j];
        double v = sqrt(dx * dx + dy * dy + dz * dz) + price[j];
        if (v < w1) {
            w2 = w1;
            w1 = v;
            j1 = (int32_t)j;
        } else if (v < w2) {
            w2 = v;
        }
    }
    *best_j = j1;
    *best = w1;
    *second = n > 1 ? w2 : w1;
}

/* The seed's auction-match kernel: 32 blocks of 512 threads, shared arrays
 * for at most 4096 points. */
#define PCB_EMD_SEED_THREADS 512
#define PCB_EMD_SEED_MAX_N 4096

/* Point counts the seed kernel scans without reading past a cost row. Its
 * dispatch: n == 8T takes 8 values per thread (exactly the row); n >= 4T
 * loops j = t, t + 4T, ... reading j .. j + 3T, which stays in the row only
 * for n == 4T; n >= 2T likewise only for n == 2T; below 2T one value per
 * step is always safe. With T = 512: n < 1024, 1024, 2048, 4096. */
static inline int pcb_emd_seed_n_ok(int64_t n)
{
    const int64_t t = PCB_EMD_SEED_THREADS;
    return n >= 1 && (n < 2 * t || n == 2 * t || n == 4 * t || n == 8 * t);
}

#ifdef __cplusplus
}
#endif
#endif
