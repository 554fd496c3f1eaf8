/* fps_rounds_replay.h - the GPU sampler's rounds (impl/fps/fps_rounds.h,
 * impl/fps/fps_cuda_pruned.cu) replayed on the CPU, one cloud at a time:
 * the same layout (Morton's order for buckets; Hilbert's or Morton's for
 * runs: fps_runs_hilbert), groups and tests, the same candidates, thresholds
 * and levels. Without a GPU it proves the round logic returns dp's
 * sequence; with one, the kernel's counts of distances and rounds must equal
 * the replay's. The order of a round's candidates changes neither. */
#ifndef PCB_FPS_ROUNDS_REPLAY_H
#define PCB_FPS_ROUNDS_REPLAY_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "impl/fps/fps_rounds.h"

typedef struct {
    int64_t evals;  /* distances computed: bucket slots updated and candidate updates */
    int64_t rounds;
    int64_t taken_alone; /* rounds that took the farthest point alone */
    int64_t waves;       /* waves of picks (fps_wave_holds) */
    int64_t picked;      /* samples those rounds took */
} replay_counts;

typedef struct {
    uint64_t code;
    uint32_t idx;
} replay_order;

static int replay_by_code(const void *a, const void *b)
{
    const replay_order *x = a, *y = b;
    if (x->code != y->code)
        return x->code < y->code ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

typedef struct {
    float lo[3], hi[3];
} replay_box;

static float replay_box_d2(const replay_box *b, const float *q)
{
    return sp_box_d2(b->lo, b->hi, q[0], q[1], q[2]);
}

static float replay_dist(const float *a, const float *b)
{
    return fps_dist(a[0], a[1], a[2], b[0], b[1], b[2]);
}

static void replay_grow(replay_box *b, const float *p)
{
    for (int d = 0; d < 3; d++) {
        b->lo[d] = fminf(b->lo[d], p[d]);
        b->hi[d] = fmaxf(b->hi[d], p[d]);
    }
}

/* One cloud: out[0 .. m) and the counts (added to *c), as the bucket kernel
 * with that many warps takes them or, with warps 0, the run kernel over a
 * cluster of ctas owner blocks (units of fps_run_length slots a thread, a warp's
 * 32 runs a group, no padding). Returns 0, or -1 out of memory. */
static int rounds_replay(const float *xyz, int n, int m, int start, int warps, int ctas,
                         int32_t *out, replay_counts *c)
{
    const int U = warps ? FPS_BUCKET : fps_run_length(n, ctas), padded = warps != 0;
    const int B = warps ? (n + U - 1) / U : fps_run_owners(n, ctas), slots = B * U;
    const int S = warps ? fps_group_size(B, warps) : 32, G = (B + S - 1) / S;
    replay_order *order = malloc((size_t)n * sizeof *order);
    float(*p)[3] = malloc((size_t)slots * sizeof *p);
    uint32_t *id = malloc((size_t)slots * sizeof *id);
    float *mind = malloc((size_t)slots * sizeof *mind);
    replay_box *bbox = malloc((size_t)B * sizeof *bbox), *gbox = malloc((size_t)G * sizeof *gbox);
    uint64_t *bkey = malloc((size_t)B * sizeof *bkey), *gkey = malloc((size_t)G * sizeof *gkey);
    int *cand = malloc((size_t)n * sizeof *cand);
    float *cand_v = malloc((size_t)n * sizeof *cand_v);
    float(*q)[3] = malloc((size_t)(FPS_ROUND_CAP + 1) * sizeof *q);
    uint64_t start_key[FPS_GROUP_MAX];
    int rc = -1;
    if (!order || !p || !id || !mind || !bbox || !gbox || !bkey || !gkey || !cand || !cand_v || !q)
        goto done;

    /* Layout: the order's cells in the cloud's cube, ties by index; buckets pad
     * the last with the last point, runs leave slots past n out. */
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, frame[4];
    for (int i = 0; i < n; i++)
        for (int d = 0; d < 3; d++) {
            lo[d] = fminf(lo[d], xyz[3 * i + d]);
            hi[d] = fmaxf(hi[d], xyz[3 * i + d]);
        }
    fps_frame(lo, hi, frame);
    const int hilbert = fps_runs_hilbert(lo, hi);
    for (int i = 0; i < n; i++) {
        const float x = xyz[3 * i], y = xyz[3 * i + 1], z = xyz[3 * i + 2];
        order[i] = (replay_order){warps ? sp_morton(frame, x, y, z, FPS_MORTON_BITS)
                                        : fps_run_code(frame, hilbert, x, y, z,
                                                       fps_run_morton_bits(n)),
                                  (uint32_t)i};
    }
    qsort(order, (size_t)n, sizeof *order, replay_by_code);
    for (int s = 0; s < slots; s++) {
        id[s] = order[s < n ? s : n - 1].idx;
        for (int d = 0; d < 3; d++)
            p[s][d] = xyz[3 * id[s] + d];
        mind[s] = INFINITY;
    }
    /* The opening (fps_runs_opening): dp over the whole cloud (keys order
     * ties by the lowest index). */
    const int opening = warps ? 1 : fps_runs_opening(n, m);
    out[0] = start;
    float opened = INFINITY; /* the last sample's minimum */
    for (int k = 1; k < opening; k++) {
        const float *s0 = xyz + 3 * out[k - 1];
        uint64_t top = 0;
        for (int s = 0; s < n; s++) {
            const float d = fps_dist(p[s][0], p[s][1], p[s][2], s0[0], s0[1], s0[2]);
            mind[s] = d < mind[s] ? d : mind[s];
            const uint64_t key = fps_key(mind[s], id[s]);
            top = key > top ? key : top;
        }
        c->evals += n;
        out[k] = (int32_t)fps_key_index(top);
        opened = fps_key_dist(top);
    }
    c->rounds += opening - 1;
    for (int b = 0; b < B; b++) {
        bbox[b] = (replay_box){{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
        bkey[b] = 0;
        for (int s = b * U; s < (b + 1) * U && (padded || s < n); s++) {
            replay_grow(&bbox[b], p[s]);
            const uint64_t k = fps_key(mind[s], id[s]);
            bkey[b] = k > bkey[b] ? k : bkey[b];
        }
    }
    for (int g = 0; g < G; g++) {
        gbox[g] = bbox[g * S];
        gkey[g] = bkey[g * S];
        for (int b = g * S + 1; b < (g + 1) * S && b < B; b++) {
            for (int d = 0; d < 3; d++) { /* an empty run's box (+inf, -inf) changes nothing */
                gbox[g].lo[d] = fminf(gbox[g].lo[d], bbox[b].lo[d]);
                gbox[g].hi[d] = fmaxf(gbox[g].hi[d], bbox[b].hi[d]);
            }
            gkey[g] = bkey[b] > gkey[g] ? bkey[b] : gkey[g];
        }
    }

    /* The rounds apply the opening's last sample first; their thresholds
     * start below its minimum (+inf without an opening: the first round
     * takes the farthest point alone). */
    for (int d = 0; d < 3; d++)
        q[0][d] = xyz[3 * out[opening - 1] + d];
    int count = 1, j = opening, base = fps_round_first_level(opening);
    float taus[FPS_ROUND_CLASSES];
    for (int k = 0; k < FPS_ROUND_CLASSES; k++)
        taus[k] = fps_round_tau(base, k, opened);
    while (j < m) {
        /* Apply the samples, group by group, sample by sample; a group, a
         * bucket and a run are tested against their keys at the start of
         * the round (the kernels' samples come in any order). */
        for (int g = 0; g < G; g++) {
            const float gval = fps_key_dist(gkey[g]);
            int touched = 0;
            for (int b = g * S; b < (g + 1) * S && b < B; b++)
                start_key[b - g * S] = bkey[b];
            for (int s = 0; s < count; s++) {
                if (!(replay_box_d2(&gbox[g], q[s]) < gval))
                    continue;
                touched = 1;
                for (int b = g * S; b < (g + 1) * S && b < B; b++) {
                    const uint64_t test = start_key[b - g * S];
                    if (!(replay_box_d2(&bbox[b], q[s]) < fps_key_dist(test)))
                        continue;
                    bkey[b] = 0;
                    for (int k = b * U; k < (b + 1) * U && (padded || k < n); k++) {
                        c->evals++;
                        const float d = fps_dist(p[k][0], p[k][1], p[k][2], q[s][0], q[s][1], q[s][2]);
                        mind[k] = d < mind[k] ? d : mind[k];
                        const uint64_t key = fps_key(mind[k], id[k]);
                        bkey[b] = key > bkey[b] ? key : bkey[b];
                    }
                }
            }
            if (touched) {
                gkey[g] = 0;
                for (int b = g * S; b < (g + 1) * S && b < B; b++)
                    gkey[g] = bkey[b] > gkey[g] ? bkey[b] : gkey[g];
            }
        }
        /* The candidates at the lowest threshold the list holds them at,
         * and the farthest point. */
        int row_count[FPS_ROUND_CLASSES] = {0};
        for (int s = 0; s < n; s++) {
            const int row = fps_round_row(mind[s], taus);
            if (row < FPS_ROUND_CLASSES)
                row_count[row]++;
        }
        const int rows = fps_round_rows(row_count);
        const float tau = rows > 0 ? taus[FPS_ROUND_CLASSES - rows] : INFINITY;
        int cands = 0;
        for (int s = 0; s < n; s++)
            if (mind[s] > tau) {
                cand[cands] = s;
                cand_v[cands++] = mind[s];
            }
        uint64_t top = 0;
        for (int g = 0; g < G; g++)
            top = gkey[g] > top ? gkey[g] : top;
        const float far = fps_key_dist(top);
        float bound = far;
        c->rounds++;
        if (far == 0.0f) {
            while (j < m)
                out[j++] = (int32_t)fps_key_index(top);
        } else if (cands > 0) {
            /* The picks in waves (fps_wave_holds): state 0 undecided, -1
             * dropped, w > 0 picked by wave w. A wave picks the undecided
             * that no other undecided holds (the first: every candidate,
             * every pair); the next applies its picks to the rest. */
            int state[FPS_ROUND_CAP] = {0}, undecided = cands;
            uint64_t key[FPS_ROUND_CAP];
            for (int k = 0; k < cands; k++)
                key[k] = fps_key(cand_v[k], id[cand[k]]);
            for (int wave = 1;; wave++) {
                int left = 0, decided[FPS_ROUND_CAP];
                for (int a = 0; a < cands; a++) {
                    decided[a] = state[a];
                    if (state[a] != 0)
                        continue;
                    int held = 0;
                    for (int b = 0; b < cands; b++)
                        held |= b != a && state[b] == 0 &&
                                fps_wave_holds(key[b], cand_v[b], key[a],
                                               replay_dist(p[cand[a]], p[cand[b]]));
                    c->evals += undecided - 1;
                    decided[a] = held ? 0 : wave;
                    left |= held;
                }
                for (int a = 0; a < cands; a++)
                    state[a] = decided[a];
                c->waves++;
                if (!left)
                    break;
                int picked = 0;
                for (int b = 0; b < cands; b++)
                    picked += state[b] == wave;
                undecided = 0;
                for (int a = 0; a < cands; a++) {
                    if (state[a] != 0)
                        continue;
                    for (int b = 0; b < cands; b++)
                        if (state[b] == wave) {
                            const float d = replay_dist(p[cand[a]], p[cand[b]]);
                            cand_v[a] = d < cand_v[a] ? d : cand_v[a];
                        }
                    c->evals += picked;
                    key[a] = fps_key(cand_v[a], id[cand[a]]);
                    state[a] = cand_v[a] > tau ? 0 : -1;
                    undecided += state[a] == 0;
                }
                if (!undecided)
                    break;
            }
            /* the picks by falling key, as many as are still wanted */
            count = 0;
            for (uint64_t below = UINT64_MAX; j < m; count++) {
                int at = -1;
                for (int k = 0; k < cands; k++)
                    if (state[k] > 0 && key[k] < below && (at < 0 || key[k] > key[at]))
                        at = k;
                if (at < 0)
                    break;
                below = key[at];
                out[j++] = (int32_t)id[cand[at]];
                for (int d = 0; d < 3; d++)
                    q[count][d] = p[cand[at]][d];
            }
            c->picked += count;
            bound = tau;
        } else {
            out[j++] = (int32_t)fps_key_index(top);
            const uint32_t want = fps_key_index(top);
            for (int s = 0; s < n; s++)
                if (id[s] == want)
                    for (int d = 0; d < 3; d++)
                        q[0][d] = p[s][d];
            count = 1;
            c->taken_alone++;
        }
        base = fps_round_base(base, rows);
        for (int k = 0; k < FPS_ROUND_CLASSES; k++)
            taus[k] = fps_round_tau(base, k, bound);
    }
    rc = 0;
done:
    free(order);
    free(p);
    free(id);
    free(mind);
    free(bbox);
    free(gbox);
    free(bkey);
    free(gkey);
    free(cand);
    free(cand_v);
    free(q);
    return rc;
}

#endif
