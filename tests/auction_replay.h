/* auction_replay.h - cuda_auction's certified auction replayed serially on
 * the CPU, one pair at a time, by the rules of impl/emd/emd_cuda_auction.h:
 * the same bids, keys, winners, phases and sums as the kernel, so its
 * matching and prices are the kernel's bit for bit. `shuffle` reorders
 * each round's bidder list (with that seed; 0 keeps it), which must change
 * nothing: the kernel builds its lists with atomics, in any order. */
#ifndef PCB_AUCTION_REPLAY_H
#define PCB_AUCTION_REPLAY_H

#include <stdlib.h>

#include "emd/emd.h"
#include "emd/emd_cuda_auction.h"

typedef struct {
    int64_t bids, rounds, phases;
    double p, d; /* the last certificate's sums */
} replay_stats;

static uint64_t replay_random(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* One bidder's least two over B. */
static pcb_ca_best replay_best(const float *a, const float *b, const double *price, int32_t n,
                               int32_t i)
{
    pcb_ca_best best = pcb_ca_none();
    for (int32_t j = 0; j < n; j++) {
        float c = pcb_ca_cost(a[3 * i], a[3 * i + 1], a[3 * i + 2], b[3 * j], b[3 * j + 1],
                              b[3 * j + 2]);
        pcb_ca_take(&best, (double)c + price[j], j);
    }
    return best;
}

/* Solve one pair; returns 0, or -1 when out of memory. */
static int replay_pair(const float *a, const float *b, int32_t n, double eps_option,
                       uint64_t shuffle, int32_t *match, double *price, replay_stats *st)
{
    int32_t *owner = malloc((size_t)n * sizeof *owner), *list = malloc((size_t)n * sizeof *list),
            *next = malloc((size_t)n * sizeof *next), *chose = malloc((size_t)n * sizeof *chose);
    unsigned long long *top = calloc((size_t)n, sizeof *top);
    double *least = malloc((size_t)n * sizeof *least);
    if (!owner || !list || !next || !chose || !top || !least) {
        free(owner), free(list), free(next), free(chose), free(top), free(least);
        return -1;
    }
    const double c = pcb_emd_cost_bound(a, b, n);
    const double floor = eps_option > 0 ? eps_option : PCB_CA_EPS_FLOOR * c;
    const double target = eps_option > 0 ? 0 : PCB_CA_TARGET;
    int32_t count = n;
    for (int32_t k = 0; k < n; k++) {
        owner[k] = -1;
        list[k] = k;
        price[k] = 0;
    }
    st->bids = st->rounds = st->phases = 0;
    for (double eps = pcb_ca_eps_first(c, floor); c > 0;) {
        while (count > 0) { /* one round */
            for (int32_t k = 0; k < count; k++) {
                pcb_ca_best best = replay_best(a, b, price, n, list[k]);
                unsigned long long key = pcb_ca_key(pcb_ca_increment(best, eps), list[k]);
                chose[k] = best.j1;
                top[best.j1] = key > top[best.j1] ? key : top[best.j1];
            }
            int32_t after = 0;
            for (int32_t k = 0; k < count; k++) {
                int32_t i = list[k], j = chose[k];
                if (pcb_ca_key_bidder(top[j]) != i) {
                    next[after++] = i;
                    continue;
                }
                price[j] += (double)pcb_ca_key_increment(top[j]);
                top[j] = 0;
                if (owner[j] >= 0)
                    next[after++] = owner[j];
                owner[j] = i;
            }
            st->bids += count;
            st->rounds++;
            for (int32_t k = after - 1; shuffle && k > 0; k--) {
                int32_t r = (int32_t)(replay_random(&shuffle) % (uint64_t)(k + 1)), t = next[k];
                next[k] = next[r];
                next[r] = t;
            }
            int32_t *done = list;
            list = next;
            next = done;
            count = after;
        }
        st->phases++;
        /* The certificate, summed as the kernel's warps sum it. */
        for (int32_t j = 0; j < n; j++)
            match[owner[j]] = j;
        double p_warp[PCB_CA_WARPS] = {0}, d_warp[PCB_CA_WARPS] = {0};
        for (int32_t i = 0; i < n; i++) {
            least[i] = replay_best(a, b, price, n, i).w1;
            int32_t j = match[i];
            p_warp[i % PCB_CA_WARPS] += (double)pcb_ca_cost(a[3 * i], a[3 * i + 1], a[3 * i + 2],
                                                            b[3 * j], b[3 * j + 1], b[3 * j + 2]);
            d_warp[i % PCB_CA_WARPS] += least[i] - price[i];
        }
        st->p = st->d = 0;
        for (int w = 0; w < PCB_CA_WARPS; w++) {
            st->p += p_warp[w];
            st->d += d_warp[w];
        }
        if (eps <= floor || pcb_ca_proven(st->p, st->d, target))
            break;
        eps = pcb_ca_eps_next(eps, floor);
        for (int32_t i = 0; i < n; i++) {
            int32_t j = match[i];
            float ci = pcb_ca_cost(a[3 * i], a[3 * i + 1], a[3 * i + 2], b[3 * j], b[3 * j + 1],
                                   b[3 * j + 2]);
            if ((double)ci + price[j] > least[i] + eps) {
                owner[j] = -1;
                list[count++] = i;
            }
        }
    }
    if (c <= 0) /* every cost is 0: every bijection is optimal */
        for (int32_t i = 0; i < n; i++)
            match[i] = i;
    free(owner), free(list), free(next), free(chose), free(top), free(least);
    return 0;
}

#endif
