/* fps_rounds.h - the rules of the GPU's sampling rounds, written once for the
 * kernel (fps_cuda_pruned.cu) and for the CPU replay that tests it.
 *
 * A round accepts many samples at once, each provably the one dp picks next.
 * After the previous round's samples are applied, every running minimum is
 * exact. Take a threshold tau and gather the candidates: every point whose
 * minimum is > tau. Then run FPS on the candidates alone: pick the largest
 * key, lower every candidate's minimum by its distance to the pick, and pick
 * again, while the largest candidate is still > tau. Each pick is dp's:
 * minima only fall, so every point outside the candidates stays <= tau,
 * below the pick; and inside, the candidates' minima are computed exactly as
 * dp computes them (same rounding, min is order-free). The first pick is the
 * global farthest point (it is > tau, so it is a candidate). When the
 * candidates overflow the list or there are none, the round accepts the
 * global farthest point alone, which is always dp's next sample.
 *
 * tau is a fraction of an upper bound of the next maximum (the last round's
 * tau, or the farthest point's minimum when the round took it alone). The
 * owners gather their candidates at FPS_ROUND_CLASSES thresholds at once, a
 * list a row (fps_round_row), and the round takes the lowest threshold
 * whose candidates the list holds (fps_round_rows): a fixed tau either
 * overflowed (a round for one sample) or took few, and early on, when each
 * round's picks lower the maximum a lot, the right tau moves every round.
 * The next round's thresholds sit around the one taken. Any tau is exact;
 * the thresholds only decide how many samples a round takes (a few dozen on
 * uniform clouds, so m samples take about m / 33 rounds). */
#ifndef PCB_FPS_ROUNDS_H
#define PCB_FPS_ROUNDS_H

#include "fps_bucket.h"

enum {
    FPS_ROUND_CAP = 128,    /* candidates a round: 4 a lane of one warp */
    FPS_ROUND_CLASSES = 4,  /* thresholds a round gathers at */
    FPS_ROUND_LEVEL0 = 8,   /* the first thresholds' level: 0.875 of the bound */
    /* the highest first level: its tightest, 88, is 1 - 2^-23 */
    FPS_ROUND_LEVEL_MAX = 88 - FPS_ROUND_CLASSES + 1,
    FPS_GROUP_MAX = 32      /* buckets a group: a lane each */
};

/* The fraction of the bound that a threshold takes at a level, in quarter
 * steps: 1 - 2^-(level / 4 + 1), the same float on the CPU and the GPU (a
 * constant 2^-(level % 4 / 4), scaled exactly by a power of two). */
SP_FN float fps_round_fraction(int level)
{
    const int q = level & 3;
    const float quarter = q == 0 ? 1.0f : q == 1 ? 0.840896416f : q == 2 ? 0.707106781f : 0.594603558f;
    return SP_SUB(1.0f, SP_MUL(quarter, ldexpf(1.0f, -(level >> 2) - 1)));
}

/* Threshold k (0, the loosest, to FPS_ROUND_CLASSES - 1) of a round whose
 * thresholds start at level base. */
SP_FN float fps_round_tau(int base, int k, float bound)
{
    return SP_MUL(fps_round_fraction(base + k), bound);
}

/* A candidate's list: row 0 above the tightest threshold, row k between the
 * thresholds k and k + 1 from the tightest; FPS_ROUND_CLASSES when it is not
 * above the loosest. */
SP_FN int fps_round_row(float v, const float *tau)
{
    int row = FPS_ROUND_CLASSES;
    for (int k = 0; k < FPS_ROUND_CLASSES; k++)
        row -= v > tau[k];
    return row;
}

/* The rows a round takes, 0 .. rows - 1: the most whose candidates the list
 * holds together; 0 when row 0 alone overflows (the round takes the
 * farthest point alone, as it does when the rows taken hold none). */
SP_FN int fps_round_rows(const int *count)
{
    int rows = 0;
    for (int total = 0; rows < FPS_ROUND_CLASSES && total + count[rows] <= FPS_ROUND_CAP; rows++)
        total += count[rows];
    return rows;
}

/* The next round's first level after a round at base that took rows rows:
 * the threshold taken one level up, or down by one, or up by two. */
SP_FN int fps_round_base(int base, int rows)
{
    const int taken = base + FPS_ROUND_CLASSES - (rows > 0 ? rows : 1);
    return taken < 1 ? 0 : taken - 1 > FPS_ROUND_LEVEL_MAX ? FPS_ROUND_LEVEL_MAX : taken - 1;
}

/* The round's picks in waves, by every thread of the taking block (and the
 * CPU replay). FPS on the candidates one pick at a time is a chain of
 * dependent reductions, a pick each. But a candidate c is sure to be picked,
 * with its minimum as it stands, when no undecided candidate q of larger key
 * (value, then the lower index) holds it: d(c, q) < v_q, within q's reach
 * (fps_wave_holds). Every candidate picked before c has a larger key, so
 * it is one of those q, too far to lower c (d >= v_q >= v_c), and c lowers
 * none of them (d >= v_q); candidates of smaller key cannot pass c, whose
 * key stays. So a wave picks every candidate nothing holds, all at once:
 * the largest key always, with 20-50 picks from a round's 30-128
 * candidates in one or two waves on uniform clouds. A wave first applies
 * the last wave's picks to the undecided ones, which also lowers those
 * they held, and drops those now <= tau (never picked). The picks go out in
 * the order of their keys as picked (the sequence's keys fall), the first
 * m - j of them. Distances computed: n (n - 1) for the first wave's test
 * of every pair of the round's n candidates; then for each undecided
 * candidate of a later wave, the last wave's picks, and, unless dropped,
 * the other undecided ones. */
SP_FN int fps_wave_holds(uint64_t key_q, float v_q, uint64_t key_c, float d)
{
    return key_q > key_c && d < v_q;
}

/* Buckets a group: about four groups a warp, so every warp has work in the
 * update; at most a lane's worth. */
SP_FN int fps_group_size(int buckets, int warps)
{
    int s = (buckets + 4 * warps - 1) / (4 * warps);
    return s < 1 ? 1 : s > FPS_GROUP_MAX ? FPS_GROUP_MAX : s;
}

/* Small clouds (at most FPS_DENSE_MAX_N points) take neither sampler: a block
 * of four warps a cloud holds its points in registers, up to 8 a thread, and
 * runs dp itself, every distance every step (evals n (m - 1), m - 1
 * rounds), with no codes or sort and one barrier a step: the samplers' fixed
 * costs are the whole time at these sizes. */
enum { FPS_DENSE_MAX_N = 1024 };

/* The run kernel spreads a cloud over a cluster of 1 to FPS_RUNS_CTAS_MAX
 * blocks, up to 992 owner threads a block, runs of equal length, 20 bytes a
 * point: in shared memory up to FPS_RUNS_SHARED_RUN points a thread, else
 * in global memory (L2 holds them) up to FPS_RUNS_MAX_RUN (a slot's place in
 * its run takes 6 bits of a key); a cluster of 16 only where 8 cannot hold
 * the cloud. Any cluster size that holds the whole batch at once beats the
 * bucket kernel: 32 x 16,384 x 4,096 over 2 blocks a cloud (runs of 9) took
 * 2.04 ms on the H100, the bucket kernel 3.56, 4 blocks a cloud in two
 * waves 2.98. */
enum {
    FPS_RUNS_OWNERS = 992,
    FPS_RUNS_SHARED_RUN = 10,
    FPS_RUNS_SLOT_BITS = 6,
    FPS_RUNS_MAX_RUN = 1 << FPS_RUNS_SLOT_BITS,
    FPS_RUNS_SMALL_N = 12288,
    FPS_RUNS_CTAS_MAX = 16,
    FPS_RUNS_MORTON_SMALL = 5, /* Morton bits an axis, up to FPS_RUNS_SMALL_N points */
    FPS_RUNS_MORTON_LARGE = 7
};

SP_FN int fps_run_length(int n, int ctas)
{
    const int owners = FPS_RUNS_OWNERS * ctas;
    return (n + owners - 1) / owners;
}

/* Owner threads for those runs, whole warps. */
SP_FN int fps_run_owners(int n, int ctas)
{
    const int run = fps_run_length(n, ctas);
    return ((n + run - 1) / run + 31) / 32 * 32;
}

/* Whether the run kernel takes a cloud of n points over ctas blocks; with
 * runs in shared memory when shared. */
SP_FN int fps_runs_take_in(int64_t n, int ctas, int shared)
{
    const int most = shared ? FPS_RUNS_SHARED_RUN : FPS_RUNS_MAX_RUN;
    return n >= 1 && n <= (int64_t)FPS_RUNS_OWNERS * ctas * most;
}

SP_FN int fps_runs_take(int64_t n, int ctas)
{
    return fps_runs_take_in(n, ctas, 0);
}

/* The opening. A round costs about the same whether it takes one sample or
 * fifty, and the first rounds take one to three: while few samples are out
 * the distance field is broad, and the points above any threshold that the
 * list holds crowd around one far spot, so they hold each other (10,000
 * uniform points: 8 rounds for the first 14 samples). The clouds whose
 * codes one block sorts (at most FPS_RUNS_SMALL_N points) therefore take
 * their first samples in that block, by dp over the whole cloud, a barrier
 * a step: samples 0 .. opening - 1, each step's distances n. The rounds go
 * on from there with every minimum as dp has it (samples 0 .. opening - 2
 * applied), the last sample to apply, and thresholds at FPS_OPENING_LEVEL
 * of its minimum (the next maximum is no larger). */
#ifndef FPS_OPENING_STEPS
#define FPS_OPENING_STEPS 40
#endif
enum { FPS_OPENING = FPS_OPENING_STEPS, FPS_OPENING_LEVEL = 4 };

/* The first round's thresholds' level: after an opening (the opening's
 * samples, 1: none), or not. */
SP_FN int fps_round_first_level(int opening)
{
    return opening > 1 ? (int)FPS_OPENING_LEVEL : (int)FPS_ROUND_LEVEL0;
}

/* Samples a cloud of n points takes in its opening (1: none but the start). */
SP_FN int fps_runs_opening(int64_t n, int64_t m)
{
    return n <= FPS_RUNS_SMALL_N ? (int)(m < (int64_t)FPS_OPENING ? m : (int64_t)FPS_OPENING) : 1;
}

/* Its order's cells: 32 an axis for small clouds (a sort of 15 bits in one
 * block), 128 beyond. */
SP_FN int fps_run_morton_bits(int n)
{
    return n <= FPS_RUNS_SMALL_N ? FPS_RUNS_MORTON_SMALL : FPS_RUNS_MORTON_LARGE;
}

/* Whether the runs follow Hilbert's order (sp_hilbert32) rather than
 * Morton's: where the cloud's box (lo, hi) is no flatter than 1 : 4. A
 * warp's box bounds its 32 runs, and every sample that reaches it costs the
 * warp a test; the slowest warp sets the round. A Morton run that crosses a
 * high bit of the code spans half the cloud: on 10,000 uniform points
 * (the replay, 8 blocks) the warp reached by the most samples got 14.8 a
 * round in Morton's order, 5.4 in Hilbert's. On flat clouds (lidar sweeps,
 * a cube squashed to 1 : 20) Hilbert's curve crosses the empty space above
 * and below and its worst warps are worse (lidar: 29 a round against 5). */
SP_FN int fps_runs_hilbert(const float *lo, const float *hi)
{
    float most = 0.0f, least = INFINITY;
    for (int d = 0; d < 3; d++) {
        const float e = SP_SUB(hi[d], lo[d]);
        most = e > most ? e : most;
        least = e < least ? e : least;
    }
    return SP_MUL(least, 4.0f) >= most;
}

/* A point's code in the runs' order, in cells of bits an axis (<= 10). */
SP_FN uint32_t fps_run_code(const float *frame, int hilbert, float x, float y, float z, int bits)
{
    return hilbert ? sp_hilbert32(frame, x, y, z, bits) : sp_morton32(frame, x, y, z, bits);
}

#endif
