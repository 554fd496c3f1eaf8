/* auction_replay.h - cuda_auction's certified auction replayed serially on
 * the CPU, one pair at a time, by the rules of impl/emd/emd_cuda_auction.h:
 * the same bids, keys, winners, phases and sums as the kernel, so its
 * matching and prices are the kernel's bit for bit. `shuffle` reorders
 * each round's bidder list (with that seed; 0 keeps it), which must change
 * nothing: the kernel builds its lists with atomics, in any order. It also
 * keeps the kernel's candidate caches, so its counts of scans and cache
 * looks are the kernel's, and checks every cache answer against a scan. */
#ifndef PCB_AUCTION_REPLAY_H
#define PCB_AUCTION_REPLAY_H

#include <stdlib.h>

#include "emd/emd.h"
#include "emd/emd_cuda_auction.h"

enum { REPLAY_PHASES = 12 };

typedef struct {
    int64_t bids, rounds, phases;
    int64_t scans, checks; /* full scans of B; looks into a cache */
    int64_t cache_wrong;   /* cache hits whose least two a full scan disputes */
    int64_t ascents;       /* dual ascents tried (emd_cuda_auction.h) */
    int64_t ascent_stops;  /* ... and that proved the target */
    int64_t long_steps;    /* eps steps longer than PCB_CA_DIVISOR (pcb_ca_eps_next) */
    int64_t finishes, finish_steps, finish_evals; /* augmenting paths, their
                                                     steps and costs */
    double p, d;           /* the last certificate's sums */
    double eps;            /* the last phase's eps (0 when every cost is 0) */
    int64_t restarts;      /* warm starts dropped for a cold one (budget) */
    int64_t global_updates, global_hops; /* replay_global_at: updates, their
                                            longest paths' arcs summed */
    int64_t cold_rounds;   /* rounds of the cold solve; -1: the run ended warm */
    /* rounds by their bidders (1, 2-31, 32 or more: the kernel's three
     * costs), over the run and in each of the first REPLAY_PHASES phases */
    int64_t rounds_by[3], phase_rounds[REPLAY_PHASES][3], phase_finish_steps[REPLAY_PHASES];
} replay_stats;

static uint64_t replay_random(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The bidders' candidate caches: 32 lanes x PCB_CA_SLOTS per bidder and
 * the bound; NULL slots when n is too large for one. */
typedef struct {
    uint16_t *slot; /* [i][lane][q] */
    double *bound;  /* -1: not built yet */
} replay_cache;

/* How a bidder's cache is rebuilt, as the kernel does: by a warp (row l:
 * lane l's slots over j = l, l + 32, ...) or by the block (thread t sees
 * j = t, t + 1024, ...; row w: the 4 least (v', j) of warp w's lanes'
 * slots). */
enum { REPLAY_WARP_BUILD, REPLAY_BLOCK_BUILD };

/* The slots of kernel thread `thread` of `threads` for bidder ai. */
static pcb_ca_slots replay_slots(const float *ai, const float *b, const double *price, int32_t n,
                                 int thread, int threads)
{
    pcb_ca_slots s = pcb_ca_slots_empty();
    for (int32_t j = thread; j < n; j += threads)
        pcb_ca_slots_offer(&s, pcb_ca_d2(ai[0], ai[1], ai[2], b[3 * j], b[3 * j + 1], b[3 * j + 2]),
                           (float)price[j], j);
    return s;
}

/* Rebuild bidder i's cache the given way. */
static void replay_build(const float *a, const float *b, const double *price, int32_t n,
                         int32_t i, replay_cache *cache, int how)
{
    const float *ai = a + 3 * i;
    uint16_t *row = cache->slot + (size_t)i * 32 * PCB_CA_SLOTS;
    float least_last = INFINITY;
    if (how == REPLAY_WARP_BUILD)
        for (int lane = 0; lane < 32; lane++) {
            pcb_ca_slots s = replay_slots(ai, b, price, n, lane, 32);
            memcpy(row + lane * PCB_CA_SLOTS, s.j, sizeof s.j);
            least_last = s.v[PCB_CA_SLOTS - 1] < least_last ? s.v[PCB_CA_SLOTS - 1] : least_last;
        }
    else
        for (int w = 0; w < PCB_CA_WARPS; w++) {
            pcb_ca_slots s[32];
            int taken[32] = {0};
            for (int lane = 0; lane < 32; lane++)
                s[lane] = replay_slots(ai, b, price, n, w * 32 + lane, PCB_CA_WARPS * 32);
            for (int q = 0; q < PCB_CA_SLOTS; q++) { /* the least (v', j) of the heads */
                int from = -1;
                for (int lane = 0; lane < 32; lane++) {
                    if (taken[lane] == PCB_CA_SLOTS || s[lane].j[taken[lane]] == PCB_CA_NO_SLOT)
                        continue;
                    const float v = s[lane].v[taken[lane]];
                    const float fv = from < 0 ? INFINITY : s[from].v[taken[from]];
                    if (from < 0 || v < fv || (v == fv && s[lane].j[taken[lane]] < s[from].j[taken[from]]))
                        from = lane;
                }
                row[w * PCB_CA_SLOTS + q] =
                    from < 0 ? (uint16_t)PCB_CA_NO_SLOT : s[from].j[taken[from]++];
            }
            for (int lane = 0; lane < 32; lane++) { /* next head, or the last kept */
                const float next = taken[lane] < PCB_CA_SLOTS ? s[lane].v[taken[lane]] : INFINITY;
                const float last = s[lane].v[PCB_CA_SLOTS - 1];
                const float f = next < last ? next : last;
                least_last = f < least_last ? f : least_last;
            }
        }
    cache->bound[i] = pcb_ca_cache_bound(least_last);
}

/* One bidder's exact least two over B (not counted). */
static pcb_ca_best replay_full(const float *a, const float *b, const double *price, int32_t n,
                               int32_t i)
{
    const float *ai = a + 3 * i;
    pcb_ca_best best = pcb_ca_none();
    for (int32_t j = 0; j < n; j++)
        pcb_ca_take(&best, (double)pcb_ca_cost(ai[0], ai[1], ai[2], b[3 * j], b[3 * j + 1], b[3 * j + 2]) + price[j], j);
    return best;
}

/* Look into bidder i's cache: whether it proves the least two (with
 * `least_only`, the least: the certificate), which are then in *best. Every
 * answer it gives is checked against a full scan. */
static int replay_look(const float *a, const float *b, const double *price, int32_t n, int32_t i,
                       int least_only, replay_cache *cache, replay_stats *st, pcb_ca_best *best)
{
    if (!cache->slot || cache->bound[i] < 0)
        return 0;
    const float *ai = a + 3 * i;
    const uint16_t *slot = cache->slot + (size_t)i * 32 * PCB_CA_SLOTS;
    pcb_ca_best x = pcb_ca_none();
    for (int q = 0; q < 32 * PCB_CA_SLOTS; q++) {
        if (slot[q] == PCB_CA_NO_SLOT)
            continue;
        const int32_t j = slot[q];
        pcb_ca_take(&x, (double)pcb_ca_cost(ai[0], ai[1], ai[2], b[3 * j], b[3 * j + 1], b[3 * j + 2]) + price[j], j);
    }
    st->checks++;
    if (!(least_only ? pcb_ca_cache_least(x, cache->bound[i]) : pcb_ca_cache_hit(x, cache->bound[i])))
        return 0;
    pcb_ca_best full = replay_full(a, b, price, n, i);
    st->cache_wrong += full.w1 != x.w1 || full.j1 != x.j1 || (!least_only && full.w2 != x.w2);
    *best = x;
    return 1;
}

/* Rebuild bidder i's cache and look into it; when it does not prove the
 * least two (near-ties), an exact scan. */
static pcb_ca_best replay_rebuild(const float *a, const float *b, const double *price, int32_t n,
                                  int32_t i, int least_only, replay_cache *cache, int how,
                                  replay_stats *st)
{
    pcb_ca_best best;
    replay_build(a, b, price, n, i, cache, how);
    st->scans++;
    if (replay_look(a, b, price, n, i, least_only, cache, st, &best))
        return best;
    st->scans++;
    return replay_full(a, b, price, n, i);
}

/* Bidder i's least two: its cache's, else a warp rebuild's. */
static pcb_ca_best replay_best(const float *a, const float *b, const double *price, int32_t n,
                               int32_t i, int least_only, replay_cache *cache, replay_stats *st)
{
    pcb_ca_best best;
    if (replay_look(a, b, price, n, i, least_only, cache, st, &best))
        return best;
    if (cache->slot)
        return replay_rebuild(a, b, price, n, i, least_only, cache, REPLAY_WARP_BUILD, st);
    st->scans++;
    return replay_full(a, b, price, n, i);
}

static void replay_bid(pcb_ca_best best, double eps, int32_t k, int32_t i, int32_t *chose,
                       unsigned long long *top)
{
    unsigned long long key = pcb_ca_key(pcb_ca_increment(best, eps), i);
    chose[k] = best.j1;
    top[best.j1] = key > top[best.j1] ? key : top[best.j1];
}

/* The dual ascent of emd_cuda_auction.h from the phase's prices (left as
 * they are): the improved prices into q, returns D'. Scratch: demanders,
 * gap, u (n each). Counted as the kernel counts it. */
static double replay_ascent(const float *a, const float *b, int32_t n, const double *price,
                            replay_cache *cache, replay_stats *st, double *q, int32_t *demanders,
                            double *gap, double *u)
{
    for (int32_t j = 0; j < n; j++) {
        demanders[j] = 0;
        gap[j] = HUGE_VAL;
    }
    for (int32_t i = 0; i < n; i++) { /* 1: who has which object as its least */
        const pcb_ca_best best = replay_best(a, b, price, n, i, 0, cache, st);
        const double g = best.w2 - best.w1;
        demanders[best.j1]++;
        gap[best.j1] = g < gap[best.j1] ? g : gap[best.j1];
    }
    for (int32_t j = 0; j < n; j++)
        q[j] = pcb_ca_raised(price[j], demanders[j], gap[j]);
    for (int32_t i = 0; i < n; i++) { /* 2: the row minima at q (caches stay bounds: q >= p) */
        pcb_ca_best best;
        if (!replay_look(a, b, q, n, i, 1, cache, st, &best)) {
            st->scans++;
            best = replay_full(a, b, q, n, i);
        }
        u[i] = best.w1;
    }
    for (int32_t j = 0; j < n; j++) { /* 3: the c-transform */
        double m = -HUGE_VAL;
        for (int32_t i = 0; i < n; i++) {
            const double t = u[i] - (double)pcb_ca_cost(a[3 * i], a[3 * i + 1], a[3 * i + 2],
                                                       b[3 * j], b[3 * j + 1], b[3 * j + 2]);
            m = t > m ? t : m;
        }
        q[j] = m;
    }
    st->scans += n; /* the transform's n x n costs */
    double d_warp[PCB_CA_WARPS] = {0}, d = 0;
    for (int32_t i = 0; i < n; i++)
        d_warp[i % PCB_CA_WARPS] += u[i] - q[i];
    for (int w = 0; w < PCB_CA_WARPS; w++)
        d += d_warp[w];
    st->ascents++;
    return d;
}

/* The finish's scratch, n of each. */
typedef struct {
    unsigned long long *key; /* dist and pred + 1 of each object */
    unsigned char *settled;
    int32_t *bucket;
} replay_finish_space;

/* Offer object j through settled s (owned by i, value u) into keys. */
static void replay_finish_offer(const float *a, const float *b, const double *price, int32_t i,
                                int32_t s, double u, int32_t j, unsigned long long *keys)
{
    const unsigned long long k = pcb_ca_finish_offer(
        pcb_ca_finish_dist(keys[s]),
        pcb_ca_cost(a[3 * i], a[3 * i + 1], a[3 * i + 2], b[3 * j], b[3 * j + 1], b[3 * j + 2]),
        price[j], u, s);
    keys[j] = k < keys[j] ? k : keys[j];
}

/* The finish of emd_cuda_auction.h: free bidder r's shortest augmenting
 * path, by buckets, each settled object offering to every unsettled one.
 * Costs are counted as the kernel counts them: n to start; per settled
 * object its owner's value and one offer to each unsettled object. */
static void replay_finish(const float *a, const float *b, int32_t n, double eps, int32_t r,
                          double *price, int32_t *owner, replay_finish_space *f,
                          replay_stats *st)
{
    const double w = PCB_CA_FINISH_WIDTH * eps;
    unsigned long long *key = f->key;
    for (int32_t j = 0; j < n; j++) {
        key[j] = pcb_ca_finish_key(
            (double)pcb_ca_cost(a[3 * r], a[3 * r + 1], a[3 * r + 2], b[3 * j], b[3 * j + 1],
                                b[3 * j + 2]) + price[j], -1);
        f->settled[j] = 0;
    }
    st->finish_evals += n;
    int32_t jf, unsettled = n;
    for (;;) {
        double lo = HUGE_VAL, lof = HUGE_VAL;
        jf = INT32_MAX;
        for (int32_t j = 0; j < n; j++) {
            if (f->settled[j])
                continue;
            const double d = pcb_ca_finish_dist(key[j]);
            lo = d < lo ? d : lo;
            if (owner[j] < 0 && pcb_ca_before(d, j, lof, jf)) {
                lof = d;
                jf = j;
            }
        }
        st->finish_steps++;
        const double hi = lo + w;
        if (lof <= hi)
            break;
        int32_t count = 0;
        for (int32_t j = 0; j < n; j++)
            if (!f->settled[j] && pcb_ca_finish_dist(key[j]) <= hi) {
                f->settled[j] = 1;
                f->bucket[count++] = j;
            }
        unsettled -= count;
        for (int32_t k = 0; k < count; k++) {
            const int32_t s = f->bucket[k], i = owner[s];
            const double u = (double)pcb_ca_cost(a[3 * i], a[3 * i + 1], a[3 * i + 2], b[3 * s],
                                                 b[3 * s + 1], b[3 * s + 2]) + price[s];
            for (int32_t j = 0; j < n; j++)
                if (!f->settled[j])
                    replay_finish_offer(a, b, price, i, s, u, j, key);
            st->finish_evals += 1 + unsettled;
        }
    }
    const double top = pcb_ca_finish_dist(key[jf]);
    for (int32_t j = 0; j < n; j++)
        if (f->settled[j]) {
            const double d = pcb_ca_finish_dist(key[j]);
            if (d < top)
                price[j] += top - d;
        }
    for (int32_t j = jf;;) { /* flip the path */
        const int32_t sj = pcb_ca_finish_pred(key[j]);
        owner[j] = sj < 0 ? r : owner[sj];
        if (sj < 0)
            break;
        j = sj;
    }
    st->finishes++;
}

/* Issue 71's third route, priced by scripts/studies/emd_routes.c: a global price
 * update (Goldberg and Kennedy's, in auction form). Every owned object j
 * rises by D_j, its distance to a free object over the arcs j -> k of
 * length max(0, c_ik + p_k - c_ij - p_j) (i = j's owner moving to k): a
 * shortest-path pass (Dijkstra from the free objects, O(n^2) costs) that
 * keeps every owner within eps of its best (c_ij + p_j + D_j <= c_ik + p_k
 * + D_k + eps) and only raises prices (caches stay bounds). The unassigned
 * bidders then find the free objects without a chain of evictions. Off
 * (0) in the kernel's replay; emd_routes sets when: the first round of a
 * phase with at most replay_global_at bidders, and again each time the
 * count halves when replay_global_repeat. The longest path's arcs (hops)
 * are what a parallel pass (Bellman-Ford: every object relaxed at once)
 * would take. */
static int32_t replay_global_at;
static int replay_global_repeat;
/* The finish's threshold in place of pcb_ca_finish_at (0: the rule's;
 * emd_routes part 9 prices others: issue 93's third lever). */
static int32_t replay_finish_at;

static int64_t replay_global_update(const float *a, const float *b, int32_t n, double *price,
                                    const int32_t *owner, double *dist, int32_t *hops,
                                    int32_t *done)
{
    for (int32_t j = 0; j < n; j++) {
        dist[j] = owner[j] < 0 ? 0 : HUGE_VAL;
        hops[j] = 0;
        done[j] = 0;
    }
    int32_t longest = 0;
    for (;;) {
        int32_t k = -1;
        for (int32_t j = 0; j < n; j++)
            if (!done[j] && dist[j] < HUGE_VAL &&
                (k < 0 || dist[j] < dist[k] || (dist[j] == dist[k] && hops[j] < hops[k])))
                k = j;
        if (k < 0)
            break;
        done[k] = 1;
        longest = hops[k] > longest ? hops[k] : longest;
        for (int32_t j = 0; j < n; j++) {
            const int32_t i = owner[j];
            if (done[j] || i < 0)
                continue;
            const double here = (double)pcb_ca_cost(a[3 * i], a[3 * i + 1], a[3 * i + 2], b[3 * j],
                                                   b[3 * j + 1], b[3 * j + 2]) + price[j],
                         there = (double)pcb_ca_cost(a[3 * i], a[3 * i + 1], a[3 * i + 2], b[3 * k],
                                                    b[3 * k + 1], b[3 * k + 2]) + price[k];
            const double d = dist[k] + (there > here ? there - here : 0);
            if (d < dist[j] || (d == dist[j] && hops[k] + 1 < hops[j])) {
                dist[j] = d;
                hops[j] = hops[k] + 1;
            }
        }
    }
    for (int32_t j = 0; j < n; j++)
        if (dist[j] < HUGE_VAL)
            price[j] += dist[j];
    return longest;
}

/* The cold start's prices (pcb_ca_column_price) of a pair into price[n]:
 * the column kernels' rule, the same bits. */
static void replay_column_prices(const float *a, const float *b, int32_t n, double *price)
{
    float greatest = 0;
    for (int32_t j = 0; j < n; j++) {
        float m = INFINITY;
        for (int32_t i = 0; i < n; i++)
            m = fminf(m, pcb_ca_d2(a[3 * i], a[3 * i + 1], a[3 * i + 2], b[3 * j], b[3 * j + 1],
                                   b[3 * j + 2]));
        price[j] = sqrtf(m);
        greatest = fmaxf(greatest, sqrtf(m));
    }
    for (int32_t j = 0; j < n; j++)
        price[j] = pcb_ca_column_price(greatest, (float)price[j]);
}

/* Solve one pair; returns 0, or -1 when out of memory. start_price and
 * start_eps start it warm (pcb_emd_warm: NULL or eps 0, or a price that is
 * negative or not finite, start it cold): any prices keep the certificate valid (D needs
 * no feasibility). A warm start that reaches budget rounds (0: no limit)
 * drops its prices and starts again cold; st->cold_rounds is then the
 * rounds of that cold solve (of the whole run when it started cold), -1
 * when the run ended warm. */
static int replay_pair_from(const float *a, const float *b, int32_t n, const pcb_options *opt,
                            uint64_t shuffle, const double *start_price, double start_eps,
                            int64_t budget, int32_t *match, double *price, replay_stats *st)
{
    int32_t *owner = malloc((size_t)n * sizeof *owner), *list = malloc((size_t)n * sizeof *list),
            *next = malloc((size_t)n * sizeof *next), *chose = malloc((size_t)n * sizeof *chose);
    unsigned long long *top = calloc((size_t)n, sizeof *top);
    double *least = malloc((size_t)n * sizeof *least), *q = malloc((size_t)n * sizeof *q),
           *gap = malloc((size_t)n * sizeof *gap), *u = malloc((size_t)n * sizeof *u);
    double *cold = pcb_ca_column_start(opt) ? malloc((size_t)n * sizeof *cold) : NULL;
    replay_cache cache = {NULL, NULL};
    if (n <= PCB_CA_CACHE_MAX_N) {
        cache.slot = malloc((size_t)n * 32 * PCB_CA_SLOTS * sizeof *cache.slot);
        cache.bound = malloc((size_t)n * sizeof *cache.bound);
    }
    replay_finish_space fin = {malloc((size_t)n * sizeof *fin.key),
                               malloc((size_t)n * sizeof *fin.settled),
                               malloc((size_t)n * sizeof *fin.bucket)};
    if (!owner || !list || !next || !chose || !top || !least || !q || !gap || !u ||
        (pcb_ca_column_start(opt) && !cold) ||
        (n <= PCB_CA_CACHE_MAX_N && (!cache.slot || !cache.bound)) || !fin.key || !fin.settled ||
        !fin.bucket) {
        free(owner), free(list), free(next), free(chose), free(top), free(least);
        free(q), free(gap), free(u), free(cold);
        free(cache.slot), free(cache.bound);
        free(fin.key), free(fin.settled), free(fin.bucket);
        return -1;
    }
    const double c = pcb_emd_cost_bound(a, b, n);
    const double floor = opt->eps > 0 ? opt->eps : PCB_CA_EPS_FLOOR * c;
    const double target = pcb_ca_stop_target(opt->eps, opt->max_gap);
    int32_t count = n;
    int warm = start_price != NULL;
    for (int32_t k = 0; warm && k < n; k++)
        warm = pcb_ca_start_price_ok(start_price[k]);
    if (!(start_eps > 0 && start_eps < HUGE_VAL))
        warm = 0;
    if (cold) /* the cold start, kept for a warm start's restart */
        replay_column_prices(a, b, n, cold);
    for (int32_t k = 0; k < n; k++) {
        owner[k] = -1;
        list[k] = k;
        price[k] = warm ? start_price[k] : cold ? cold[k] : 0;
        if (cache.bound)
            cache.bound[k] = -1;
    }
    *st = (replay_stats){0};
    int64_t limit = warm && budget > 0 ? budget : 0, cold_from = 0;
    for (double eps = pcb_ca_eps_start(c, floor, warm ? start_eps : 0); c > 0;) {
        st->eps = eps;
        int restart = 0;
        int32_t global_next = replay_global_at; /* this phase's next global update */
        while (count > 0) { /* one round */
            if (count <= (replay_finish_at > 0 ? replay_finish_at : pcb_ca_finish_at(n))) {
                /* the finish, bidders by index */
                const int64_t steps = st->finish_steps;
                for (int32_t k = 1; k < count; k++)
                    for (int32_t m = k; m > 0 && list[m - 1] > list[m]; m--) {
                        const int32_t t = list[m];
                        list[m] = list[m - 1];
                        list[m - 1] = t;
                    }
                for (int32_t k = 0; k < count; k++)
                    replay_finish(a, b, n, eps, list[k], price, owner, &fin, st);
                if (st->phases < REPLAY_PHASES)
                    st->phase_finish_steps[st->phases] += st->finish_steps - steps;
                count = 0;
                break;
            }
            if (limit && st->rounds >= limit) { /* stale prices: start again cold */
                restart = 1;
                break;
            }
            if (global_next > 0 && count <= global_next) { /* route 3, emd_routes only */
                st->global_hops += replay_global_update(a, b, n, price, owner, least, chose,
                                                        next);
                st->global_updates++; /* prices only rose: the caches stay bounds */
                global_next = replay_global_repeat ? count / 2 : 0;
            }
            /* Bids, all against the round's prices. Few bidders: caches
             * first, then the misses, by the block when few. */
            int32_t missed[PCB_CA_WARPS], misses = 0;
            for (int32_t k = 0; k < count; k++) {
                pcb_ca_best best;
                if (cache.slot && count < PCB_CA_WARPS) {
                    if (!replay_look(a, b, price, n, list[k], 0, &cache, st, &best)) {
                        missed[misses++] = k;
                        continue;
                    }
                } else {
                    best = replay_best(a, b, price, n, list[k], 0, &cache, st);
                }
                replay_bid(best, eps, k, list[k], chose, top);
            }
            for (int m = 0; m < misses; m++) {
                const int32_t k = missed[m];
                pcb_ca_best best = replay_rebuild(a, b, price, n, list[k], 0, &cache,
                                                  misses <= pcb_ca_block_scans(n)
                                                      ? REPLAY_BLOCK_BUILD
                                                      : REPLAY_WARP_BUILD,
                                                  st);
                replay_bid(best, eps, k, list[k], chose, top);
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
            const int by = count == 1 ? 0 : count < PCB_CA_WARPS ? 1 : 2;
            st->rounds_by[by]++;
            if (st->phases < REPLAY_PHASES)
                st->phase_rounds[st->phases][by]++;
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
        if (restart) {
            for (int32_t k = 0; k < n; k++) {
                owner[k] = -1;
                list[k] = k;
                price[k] = cold ? cold[k] : 0;
                if (cache.bound)
                    cache.bound[k] = -1;
            }
            count = n;
            warm = 0;
            limit = 0;
            cold_from = st->rounds;
            st->restarts++;
            eps = pcb_ca_eps_first(c, floor);
            continue;
        }
        st->phases++;
        /* The certificate, summed as the kernel's warps sum it. */
        for (int32_t j = 0; j < n; j++)
            match[owner[j]] = j;
        double p_warp[PCB_CA_WARPS] = {0}, d_warp[PCB_CA_WARPS] = {0};
        for (int32_t i = 0; i < n; i++) {
            least[i] = replay_best(a, b, price, n, i, 1, &cache, st).w1;
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
        if (pcb_ca_ascent_worth(st->p, st->d, target)) {
            const double d = replay_ascent(a, b, n, price, &cache, st, q, chose, gap, u);
            if (pcb_ca_proven(st->p, d, target)) {
                st->d = d;
                st->ascent_stops++;
                memcpy(price, q, (size_t)n * sizeof *price);
                break;
            }
        }
        const double next = pcb_ca_eps_next(eps, floor, st->p, st->d, target, n);
        st->long_steps += next < eps / PCB_CA_DIVISOR;
        eps = next;
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
            match[i] = i, price[i] = 0;
    st->cold_rounds = warm ? -1 : st->rounds - cold_from;
    if (c <= 0)
        st->eps = 0, st->cold_rounds = 0;
    free(owner), free(list), free(next), free(chose), free(top), free(least);
    free(q), free(gap), free(u), free(cold), free(cache.slot), free(cache.bound);
    free(fin.key), free(fin.settled), free(fin.bucket);
    return 0;
}

static inline int replay_pair(const float *a, const float *b, int32_t n, const pcb_options *opt,
                              uint64_t shuffle, int32_t *match, double *price, replay_stats *st)
{
    return replay_pair_from(a, b, n, opt, shuffle, NULL, 0, 0, match, price, st);
}

#endif
