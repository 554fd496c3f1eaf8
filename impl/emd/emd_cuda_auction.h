/* emd_cuda_auction.h - the rules of cuda_auction's certified auction, shared
 * by the kernel (emd_cuda_auction.cu) and its CPU replay (tests/
 * auction_replay.h): the same float and double operations in the same
 * order, so the replay reproduces the kernel's matching and prices bit for
 * bit.
 *
 * Minimising form, as in emd.h: bidder i of A takes the j of B with the
 * least c_ij + p_j. Costs are float (coordinates are float; a cost is
 * within about 1e-7 of itself), prices double (they reach the clouds'
 * extent, while the slack they must resolve is a thousandth of the mean
 * cost).
 *
 * Jacobi rounds: every unassigned bidder bids against the round's prices;
 * each bid is a 64-bit key, the increment (second least - least + eps)
 * rounded toward zero to float in the high half (positive floats order like
 * their bits), bidder + 1 in the low half; an atomic max per object keeps
 * the largest, ties to the larger bidder. The winner raises the price by
 * its increment, evicts the previous owner and clears the key. Bids depend
 * only on the round's prices and the winner only on the set of bids, so the
 * answer does not depend on thread timing.
 *
 * eps-scaling: phases from eps = C / 32 down, / PCB_CA_DIVISOR (4) each, more
 * where that reaches the target a phase earlier (pcb_ca_eps_next). After a
 * phase every bidder is assigned; a pass over all pairs computes
 * m_i = min_j (c_ij + p_j), the cost P and the certified lower bound
 * D = sum_i m_i - sum_j p_j (and 0: costs are >= 0). It stops when
 * P - D <= target * D; otherwise the next phase keeps every bidder still
 * within the next eps of its best (c_i,sigma(i) + p_sigma(i) <= m_i + eps)
 * and frees the rest. */
#ifndef PCB_EMD_CUDA_AUCTION_H
#define PCB_EMD_CUDA_AUCTION_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "impl/spatial.h"

#ifdef __CUDACC__
#define PCB_CA_FN static __host__ __device__ __forceinline__
#else
#define PCB_CA_FN static inline
#endif

/* Warps of a block: the kernel's sums run warp w over bidders w, w + 32,
 * ..., then over the warps in order; the replay sums the same way. */
#define PCB_CA_WARPS 32
/* The default promise: certified within 0.1 %; the auction stops at 0.09 %
 * of its own float-cost certificate, leaving room for the validator's
 * double-precision one. */
#define PCB_CA_MAX_GAP 0.001
#ifndef PCB_CA_TARGET /* tuning builds only */
#define PCB_CA_TARGET 0.0009
#endif
#ifndef PCB_CA_EPS_START
#define PCB_CA_EPS_START 0.03125
#define PCB_CA_DIVISOR 4.0
#endif
/* The last phase's eps, as a share of the cost bound C, when no --eps is
 * given: below it float costs (within 1e-7 of themselves) decide nothing. */
#define PCB_CA_EPS_FLOOR 1e-7
/* The margin of the float tests that rule objects out (scans and caches). */
#define PCB_CA_MARGIN 1.00001f

/* The certificate the auction stops at: none with an --eps (it runs down to
 * it), else the task's max_gap (loss mode) or the default promise, less the
 * room the validator's double-precision certificate needs (PCB_CA_TARGET of
 * PCB_CA_MAX_GAP). The kernel and its CPU replay both ask here. */
PCB_CA_FN double pcb_ca_stop_target(double eps_option, double max_gap)
{
    if (eps_option > 0)
        return 0.0;
    return max_gap > 0 ? max_gap * (PCB_CA_TARGET / PCB_CA_MAX_GAP) : PCB_CA_TARGET;
}

/* The float squared distance and cost, with the same rounding on both
 * sides. */
PCB_CA_FN float pcb_ca_d2(float ax, float ay, float az, float bx, float by, float bz)
{
    const float dx = ax - bx, dy = ay - by, dz = az - bz;
    return fmaf(dz, dz, fmaf(dy, dy, dx * dx));
}

PCB_CA_FN float pcb_ca_cost(float ax, float ay, float az, float bx, float by, float bz)
{
    return sqrtf(pcb_ca_d2(ax, ay, az, bx, by, bz));
}

/* The least two values of c_ij + p_j seen so far and the j of the least;
 * the order is (value, j), so ties go to the lower j and the pair is the
 * same whichever way the candidates are split and merged. */
typedef struct {
    double w1, w2;
    int32_t j1;
} pcb_ca_best;

PCB_CA_FN pcb_ca_best pcb_ca_none(void)
{
    pcb_ca_best b = {HUGE_VAL, HUGE_VAL, INT32_MAX};
    return b;
}

PCB_CA_FN void pcb_ca_take(pcb_ca_best *b, double v, int32_t j)
{
    if (v < b->w1 || (v == b->w1 && j < b->j1)) {
        b->w2 = b->w1;
        b->w1 = v;
        b->j1 = j;
    } else if (v < b->w2) {
        b->w2 = v;
    }
}

/* A double rounded toward zero to float (x > 0). */
PCB_CA_FN float pcb_ca_float_down(double x)
{
#ifdef __CUDA_ARCH__
    return __double2float_rz(x);
#else
    float f = (float)x;
    return (double)f > x ? nextafterf(f, 0.0f) : f;
#endif
}

/* The increment of a bid: second least - least + eps, rounded down so that
 * the bidder stays within eps of its best (second is the least itself when
 * B has one point). */
PCB_CA_FN float pcb_ca_increment(pcb_ca_best b, double eps)
{
    double second = b.w2 < HUGE_VAL ? b.w2 : b.w1;
    return pcb_ca_float_down(second - b.w1 + eps);
}

/* A bid's key: increment bits high, bidder + 1 low (0: no bid). */
PCB_CA_FN unsigned long long pcb_ca_key(float increment, int32_t bidder)
{
    return ((unsigned long long)sp_float_bits(increment) << 32) | (uint32_t)(bidder + 1);
}

PCB_CA_FN int32_t pcb_ca_key_bidder(unsigned long long key)
{
    return (int32_t)(uint32_t)(key & 0xffffffffu) - 1;
}

PCB_CA_FN float pcb_ca_key_increment(unsigned long long key)
{
    return sp_bits_float((uint32_t)(key >> 32));
}

/* The eps of the first phase and of the one after eps; floor is the last
 * phase's. */
PCB_CA_FN double pcb_ca_eps_first(double cost_bound, double floor)
{
    double e = PCB_CA_EPS_START * cost_bound;
    return e > floor ? e : floor;
}

/* The first phase's eps of a pair: a warm start's (pcb_emd_warm), held
 * between the cold run's first and last, else the cold run's first. */
PCB_CA_FN double pcb_ca_eps_start(double cost_bound, double floor, double warm)
{
    const double first = pcb_ca_eps_first(cost_bound, floor);
    if (!(warm > 0 && warm < HUGE_VAL)) /* 0, negative, NaN or infinite: cold */
        return first;
    return warm > first ? first : warm < floor ? floor : warm;
}

/* The cold start (issue 71): every object of B starts at the price the
 * Hungarian method's column reduction gives it, -m_j where m_j = min_i c_ij
 * (every object is then some bidder's best at reduced cost 0), shifted by
 * the greatest m_j so that the least price is 0 like the zero start's (a
 * constant shift changes neither bids nor certificate, and the float tests
 * need values that are not negative: pcb_ca_start_price_ok). On pairs whose
 * bidders all want the same few objects (an untrained decoder's collapsed
 * predictions) it removes most of the price war; elsewhere it is neutral
 * (impl/emd/NOTES.md). m_j is a float cost, min_i sqrtf(d2) = sqrtf(min_i d2)
 * (sqrtf is monotone), and the price its double difference: the same bits
 * on both sides. opt.emd_start -1 starts every price at 0 instead
 * (the start before issue 71; comparisons and tests). */
PCB_CA_FN double pcb_ca_column_price(float greatest, float least_cost)
{
    return (double)greatest - (double)least_cost;
}

/* 1 when cold pairs start from the column reduction (the default; opt
 * emd_start -1: from 0); host only. */
static inline int pcb_ca_column_start(const pcb_options *o)
{
    return o->emd_start >= 0;
}

/* A start price a warm start can take: finite and not negative. The float
 * tests that rule objects out scale a least value c_ij + p_j by
 * PCB_CA_MARGIN, a margin only while that value is not negative; the
 * auction's own prices start at 0 and only rise (the ascent's too). A pair
 * with any other start price starts cold. */
PCB_CA_FN int pcb_ca_start_price_ok(double p)
{
    return p >= 0 && p < HUGE_VAL;
}

/* The eps of the phase after one whose certificate (p, d) missed target:
 * eps / PCB_CA_DIVISOR, unless that phase is predicted to miss too while a
 * step of up to PCB_CA_DIVISOR_MAX would not. A phase's bound scales with
 * its eps (about 4x per phase), and the dual ascent halves it, so the next
 * phase with eps x f should end near (p - d) / d x f / 2: the step taken is
 * the least f predicted to reach the target, with a margin (PCB_CA_REACH =
 * 1.8 where the halving alone gives 2). A pair that would otherwise miss by
 * a little and run one more phase (sphere surfaces at 1 %: the third phase
 * ends at 1.0 %-1.2 % after the ascent, so a fourth ran) ends a phase
 * earlier; far from the target the step stays 4, a larger one costing more
 * rounds than it saves (NOTES.md: the eps step). */
#ifndef PCB_CA_REACH /* tuning builds only: 0 keeps the step at PCB_CA_DIVISOR */
#define PCB_CA_REACH 1.8
#endif
#ifndef PCB_CA_DIVISOR_MAX
#define PCB_CA_DIVISOR_MAX 12.0
#endif
/* The most points for which the kernel keeps a pair's state in shared
 * memory (its SMEM_MAX_N, checked there); above, in global memory. The
 * rules that differ by where the state is ask here. */
#define PCB_CA_SHARED_MAX_N 4757
/* A longer step only where the state is in shared memory: above, a phase's
 * rounds grow faster than its step, and the phase it saves costs no more
 * than the long one (measured slower there: NOTES.md). */
PCB_CA_FN double pcb_ca_eps_next(double eps, double floor, double p, double d, double target,
                                 int32_t n)
{
    double f = 1.0 / PCB_CA_DIVISOR;
    if (PCB_CA_REACH > 0 && n <= PCB_CA_SHARED_MAX_N && target > 0 && d > 0 && p > d) {
        const double g = PCB_CA_REACH * target * d / (p - d);
        if (g < f && g >= 1.0 / PCB_CA_DIVISOR_MAX)
            f = g;
    }
    const double e = eps * f;
    return e > floor ? e : floor;
}

/* Whether (v, j) comes before (w, k) in the order of pcb_ca_take. */
PCB_CA_FN int pcb_ca_before(double v, int32_t j, double w, int32_t k)
{
    return v < w || (v == w && j < k);
}

/* The least two of four (value, j), as pcb_ca_take gives them taken in any
 * order (the least by (value, j), the second least value), with selects
 * only: the pairs sorted, then their heads compared. Empty entries are
 * (HUGE_VAL, INT32_MAX). A cache look's four slots go through it at once:
 * taken one by one, each behind the branches of the one before, they made a
 * chain about four times as long. */
PCB_CA_FN pcb_ca_best pcb_ca_least_of4(const double v[4], const int32_t j[4])
{
    const int s01 = pcb_ca_before(v[1], j[1], v[0], j[0]), s23 = pcb_ca_before(v[3], j[3], v[2], j[2]);
    const double a = s01 ? v[1] : v[0], b = s01 ? v[0] : v[1];
    const double c = s23 ? v[3] : v[2], d = s23 ? v[2] : v[3];
    const int32_t ja = s01 ? j[1] : j[0], jc = s23 ? j[3] : j[2];
    const int c_first = pcb_ca_before(c, jc, a, ja);
    const double other = c_first ? a : c, rest = b < d ? b : d;
    pcb_ca_best r;
    r.w1 = c_first ? c : a;
    r.j1 = c_first ? jc : ja;
    r.w2 = other < rest ? other : rest;
    return r;
}

/* The candidate cache. A full scan of B also keeps, per lane (lane l sees
 * j = l, l + 32, ...), the PCB_CA_SLOTS objects of least float value
 * v' = sqrtf(d2) + (float)p_j; every object a lane turned away or pushed out
 * had v' >= its largest kept value f. The cache of bidder i is those 32 x K
 * objects with the bound t = (least f over the lanes) (1 - 1e-6): every
 * object outside had c_ij + p_j >= t (v' is within 2^-23 of the exact value,
 * the test below has a 1e-5 margin), and prices only rise, so t stays a
 * lower bound.
 * The next time i bids, its least two over the cache are the least two over
 * all of B when the second is below t; otherwise it scans again. The bid is
 * the same either way, so the cache changes the work, never the answer. */
/* Slots a lane: 8 (16-byte rows) miss less, but every look evaluates twice
 * as many and the kernel spills more: 4 measured faster everywhere
 * (NOTES.md). */
#ifndef PCB_CA_SLOTS /* tuning builds only */
#define PCB_CA_SLOTS 4
#endif
#if PCB_CA_SLOTS != 4 && PCB_CA_SLOTS != 8
#error "a cache row holds 4 or 8 slots a lane"
#endif
/* A round of fewer bidders than warps looks into their caches first; when
 * at most pcb_ca_block_scans(n) miss (never more than this), the block
 * rebuilds their caches (row w of the cache: the 4 least (v', j) of block
 * warp w's lanes' slots, the misses side by side on groups of warps), else
 * a warp scans for each (row l: lane l's slots). */
#ifndef PCB_CA_BLOCK_SCANS_MAX /* tuning builds only */
#define PCB_CA_BLOCK_SCANS_MAX 8
#endif
/* The limit for n points: up to n = 4096 a round's 5 to 8 misses go to
 * warps (about 1% faster than by the block); at 16,384 a warp's scan of
 * n / 32 objects a lane is too long (5% slower). */
PCB_CA_FN int pcb_ca_block_scans(int32_t n)
{
    return n <= 4096 && PCB_CA_BLOCK_SCANS_MAX > 4 ? 4 : PCB_CA_BLOCK_SCANS_MAX;
}
#define PCB_CA_CACHE_MAX_N 65535 /* slot indexes are 16 bits; 0xffff: none */
#define PCB_CA_NO_SLOT 0xffffu

typedef struct {
    float v[PCB_CA_SLOTS]; /* ascending; INFINITY when empty */
    uint16_t j[PCB_CA_SLOTS];
} pcb_ca_slots;

PCB_CA_FN pcb_ca_slots pcb_ca_slots_empty(void)
{
    pcb_ca_slots s;
    for (int q = 0; q < PCB_CA_SLOTS; q++) {
        s.v[q] = INFINITY;
        s.j[q] = (uint16_t)PCB_CA_NO_SLOT;
    }
    return s;
}

/* Insert value v of object j in order (an infinite v changes nothing):
 * carry the larger on. */
PCB_CA_FN void pcb_ca_slots_insert(pcb_ca_slots *s, float v, int32_t j)
{
    uint16_t jj = (uint16_t)j;
    for (int q = 0; q < PCB_CA_SLOTS; q++) {
        const int lower = v < s->v[q];
        const float fv = lower ? s->v[q] : v;
        const uint16_t fj = lower ? s->j[q] : jj;
        s->v[q] = lower ? v : s->v[q];
        s->j[q] = lower ? jj : s->j[q];
        v = fv;
        jj = fj;
    }
}

/* Offer object j (squared float distance d2, float price pf) to a lane's
 * slots: those that cannot come below the largest kept value are turned
 * away by a float test with a margin, the others are inserted in order. */
PCB_CA_FN void pcb_ca_slots_offer(pcb_ca_slots *s, float d2, float pf, int32_t j)
{
    const float t = fmaf(s->v[PCB_CA_SLOTS - 1], PCB_CA_MARGIN, -pf);
    if (!(t > 0.0f && d2 <= t * t))
        return;
    const float v = sqrtf(d2) + pf;
    if (!(v < s->v[PCB_CA_SLOTS - 1]))
        return;
    pcb_ca_slots_insert(s, v, j);
}

/* Four offers in a row (d2, pf, j: four objects), leaving exactly the slots
 * that pcb_ca_slots_offer leaves offering them one by one in that order:
 * the four square roots first, then each test and insertion as selects.
 * On the GPU one by one, each offer's branches (its test, sqrtf's slow
 * path) kept the next offer's independent work waiting. */
PCB_CA_FN void pcb_ca_slots_offer4(pcb_ca_slots *s, const float *d2, const float *pf,
                                   const int32_t *j)
{
    float v[4];
    for (int u = 0; u < 4; u++)
        v[u] = sqrtf(d2[u]) + pf[u];
    for (int u = 0; u < 4; u++) {
        const float last = s->v[PCB_CA_SLOTS - 1], t = fmaf(last, PCB_CA_MARGIN, -pf[u]);
        pcb_ca_slots_insert(s, t > 0.0f && d2[u] <= t * t && v[u] < last ? v[u] : INFINITY, j[u]);
    }
}

/* The least two of k (value, j) (k a multiple of 4: a lane's
 * PCB_CA_SLOTS slots), as pcb_ca_take gives them: by fours
 * (pcb_ca_least_of4), then merged (the least of the two leasts; the second
 * least is the other least or the winner's second). */
PCB_CA_FN pcb_ca_best pcb_ca_least_of(const double *v, const int32_t *j, int k)
{
    pcb_ca_best r = pcb_ca_least_of4(v, j);
    for (int h = 4; h < k; h += 4) {
        const pcb_ca_best o = pcb_ca_least_of4(v + h, j + h);
        const int o_first = pcb_ca_before(o.w1, o.j1, r.w1, r.j1);
        const double loser = o_first ? r.w1 : o.w1, second = o_first ? o.w2 : r.w2;
        r.w1 = o_first ? o.w1 : r.w1;
        r.j1 = o_first ? o.j1 : r.j1;
        r.w2 = loser < second ? loser : second;
    }
    return r;
}

/* The cache's bound from the least over lanes of their largest kept value
 * (INFINITY when every object is kept: then nothing is outside). */
PCB_CA_FN double pcb_ca_cache_bound(float least_last)
{
    return (double)least_last * (1.0 - 1e-6);
}

/* Costs one cache look evaluates: every slot, or all of B when it is
 * smaller (then every object is kept). */
PCB_CA_FN int64_t pcb_ca_cache_evals(int64_t n)
{
    return n < 32 * PCB_CA_SLOTS ? n : 32 * PCB_CA_SLOTS;
}

/* Whether the least two over the cache are the least two over B. */
PCB_CA_FN int pcb_ca_cache_hit(pcb_ca_best b, double bound)
{
    return b.w2 < bound;
}

/* Whether the least over the cache is the least over B (the certificate). */
PCB_CA_FN int pcb_ca_cache_least(pcb_ca_best b, double bound)
{
    return b.w1 <= bound;
}

/* Whether the certificate proves the target: P and D as sums over the
 * pair (D raised to 0, since costs are not negative). target 0: never (the
 * phases run down to the floor). */
PCB_CA_FN int pcb_ca_proven(double p, double d, double target)
{
    d = d > 0 ? d : 0;
    return p - d <= target * d;
}

/* The dual ascent. The auction's prices certify far less than its matching
 * achieves: after a phase the matching is typically within a tenth of its
 * bound, and the prices' dual sum D is what holds the certificate back
 * (each winner ends a bid eps above its second best). When a phase's
 * certificate misses the target by less than PCB_CA_ASCENT_TRY times, the
 * prices are improved without touching the matching, on a copy q:
 *   1. every bidder's least two over B (w1 at j1, w2); an object that is the
 *      least of two bidders or more is raised by the least gap w2 - w1 among
 *      them: each of them still has it as its least, so each row minimum
 *      rises by the raise and D by at least (demanders - 1) x raise;
 *   2. u_i = min_j (c_ij + q_j), the new row minima;
 *   3. the c-transform q'_j = max_i (u_i - c_ij): the least price at which
 *      no row minimum falls, so every price drops to it and D rises by the
 *      drop (objects nobody wants stop holding D down);
 *   D' = sum_i u_i - sum_j q'_j, a lower bound for any prices, like D.
 * When D' proves the target the auction stops with the prices q' (the
 * validator recomputes D from them); otherwise the auction goes on with its
 * own prices, unchanged. On the replay this certifies 1% one phase earlier
 * for uniform clouds and noisy copies and cuts a phase at 0.1% on most
 * kinds (fewer rounds, never more); a second ascent step gained nothing. */
#ifndef PCB_CA_ASCENT_TRY /* tuning builds only: 0 turns the ascent off */
#define PCB_CA_ASCENT_TRY 3.3
#endif

/* Whether a certificate (P, D) that misses the target is near enough to
 * try the ascent. */
PCB_CA_FN int pcb_ca_ascent_worth(double p, double d, double target)
{
    return d > 0 && !pcb_ca_proven(p, d, target) && p - d <= PCB_CA_ASCENT_TRY * target * d;
}

/* Step 1's price of an object: raised by the least gap of its demanders
 * when two or more have it as their least. */
PCB_CA_FN double pcb_ca_raised(double price, int demanders, double least_gap)
{
    return demanders >= 2 ? price + least_gap : price;
}


/* The finish. A phase's last bidders cost the auction most: one to a few
 * bid a round while the prices inch up by eps (a chain of evictions walks
 * to a free object), and every phase ends that way. So once a round would
 * have at most pcb_ca_finish_at(n) bidders, the phase is finished by
 * shortest augmenting paths instead (the Hungarian step), one bidder at a
 * time in increasing index order. For free bidder r, with u_i =
 * c_i,sigma(i) + p_sigma(i) the value an owner has:
 *   dist_j = c_rj + p_j, pred_j = -1 (reached from r itself);
 *   repeat: lo = least dist of the unsettled objects, hi = lo + w (w =
 *   PCB_CA_FINISH_WIDTH x eps);
 *     when a free object has dist <= hi, the least such (dist, j) ends
 *     the search at D = its dist;
 *     else every unsettled object with dist <= hi is settled at once (a
 *     bucket, not one object a step), and each settled s, owned by i,
 *     offers dist_s + max(0, c_ij + p_j - u_i) to every unsettled j;
 *   then every settled j with dist_j < D is raised by D - dist_j (prices
 *   only rise: the caches stay valid) and the path is flipped: the free
 *   object goes to its pred's owner (r when -1), that owner's object to
 *   its pred's owner, and so on back to r.
 * dist and pred are one 64-bit key, the least offer kept: the double dist
 * with its low 16 bits cleared (rounded toward 0; dists are >= 0, so the
 * bits order like the values), pred + 1 in them; ties in dist go to the
 * lower pred, and no order of the offers changes the result.
 * Reduced costs c_ij + p_j - u_i below 0 (within eps after the rounds) are
 * taken as 0 and a bucket settles objects up to w apart, so the new prices
 * keep every owner within a few eps of its best; the certificate, computed
 * from the prices whatever they are, is what the stop relies on.
 * A path costs tens of block-wide steps, so the finish takes only the last
 * few bidders; its offers go to all of B, staged and turned away by a
 * float test, which measured cheaper than offers through the owners'
 * caches (NOTES.md: the finish's offers to all of B; the finish for large
 * B). */
#ifndef PCB_CA_FINISH_AT /* tuning builds only */
#define PCB_CA_FINISH_AT 4
#endif
/* From n = 1024 to 2048 the finish takes over from 8 bidders instead: a
 * finish step there costs about half a round of 5 to 31 bidders, so the
 * paths of 5 to 8 bidders cost less than their rounds; at n = 512 and 4096
 * 4 measured faster (NOTES.md: the finish from 8 bidders). */
#ifndef PCB_CA_FINISH_AT_MID
#define PCB_CA_FINISH_AT_MID 8
#endif
#define PCB_CA_FINISH_MID_LO 1024
#define PCB_CA_FINISH_MID_HI 2048
/* The most bidders any finish takes (the kernel's arrays). */
#define PCB_CA_FINISH_MOST \
    (PCB_CA_FINISH_AT_MID > PCB_CA_FINISH_AT ? PCB_CA_FINISH_AT_MID : PCB_CA_FINISH_AT)
#ifndef PCB_CA_FINISH_MAX_N
#define PCB_CA_FINISH_MAX_N 65535
#endif
#ifndef PCB_CA_FINISH_WIDTH
#define PCB_CA_FINISH_WIDTH 0.5
#endif
#if PCB_CA_FINISH_MAX_N > 65535
#error "the finish keys hold pred + 1 in 16 bits"
#endif


/* The most bidders a round may have for the finish to take them instead,
 * at n points (0: never). */
PCB_CA_FN int pcb_ca_finish_at(int32_t n)
{
    if (n > PCB_CA_FINISH_MAX_N)
        return 0;
    return n >= PCB_CA_FINISH_MID_LO && n <= PCB_CA_FINISH_MID_HI ? PCB_CA_FINISH_AT_MID
                                                                  : PCB_CA_FINISH_AT;
}

/* A dist and its pred as a key, and back. */
PCB_CA_FN unsigned long long pcb_ca_finish_key(double dist, int32_t pred)
{
    const unsigned long long bits = (unsigned long long)sp_double_bits(dist);
    return (bits & ~0xffffull) | (uint16_t)(pred + 1);
}

PCB_CA_FN double pcb_ca_finish_dist(unsigned long long key)
{
    return sp_bits_double(key & ~0xffffull);
}

PCB_CA_FN int32_t pcb_ca_finish_pred(unsigned long long key)
{
    return (int32_t)(key & 0xffffu) - 1;
}

/* The key of an offer to object j through settled s: dist_s plus the
 * reduced cost (c the float cost from s's owner, u that owner's value),
 * below 0 as 0. */
PCB_CA_FN unsigned long long pcb_ca_finish_offer(double dist_s, float c, double price_j, double u,
                                                 int32_t s)
{
    const double reduced = (double)c + price_j - u;
    return pcb_ca_finish_key(dist_s + (reduced > 0 ? reduced : 0.0), s);
}

/* The offer test in float, where a settled object offers to all of B (its
 * outcome changes no key, only the work). An offer through s, owned with
 * value u, to object j is at least c + p_j - (u - dist_s) (below 0 taken as
 * 0 only raises it), so it cannot take j's key (dist_j) when c > (dist_j -
 * p_j) + (u - dist_s) by more than the keys' and the double sums'
 * roundings. pcb_ca_finish_above(x, mag) is a float at least x + 2^-21 mag
 * for any |x| <= mag, whatever its roundings; the sum of two such, j's
 * reach and s's, is at least the exact threshold + 2^-22 of the magnitudes
 * involved (2^-36 of a key's dist is the most its low bits drop).
 * pcb_ca_finish_beyond(d2, thr): the float cost sqrtf(d2) is at least thr,
 * without the square root. */
PCB_CA_FN float pcb_ca_finish_above(double x, double mag)
{
    return (float)x + (float)mag * 0x1p-20f;
}

/* Object j's reach (infinite when its dist is 0: no offer is turned away). */
PCB_CA_FN float pcb_ca_finish_reach(double dist, double price)
{
    return dist > 0 ? pcb_ca_finish_above(dist - price, dist + fabs(price)) : INFINITY;
}

PCB_CA_FN int pcb_ca_finish_beyond(float d2, float thr)
{
    return thr < 0.0f || (thr > 0.0f && d2 > thr * thr * 1.000001f);
}

#endif
