/* emd_routes.c - the routes issue 71 asks to price before any is built,
 * measured on cuda_auction's CPU replay (auction_replay.h: the kernel's
 * rounds, bids and phases bit for bit), each run priced by the kernel's
 * measured cost of each kind of step (impl/emd/NOTES.md: 2,700 cycles a
 * lone bidder's step or a finish step, 7,000 a round of 2-31 bidders,
 * 38,000 a round of 32 or more; certificates and rebuilds not counted).
 *
 *   make build/studies/emd_routes && build/studies/emd_routes [n] [pairs] [parts, e.g. 12345]
 *                                                            [decoder pairs file]
 *
 * 1. Where a cold run's steps are, phase by phase (cube, sphere surfaces,
 *    consecutive lidar sweeps; certified within 1%).
 * 2. Oracle warm starts: from near-optimal prices (a run to 0.1%), plus
 *    noise of 1%, 5% and 20% of their spread, and from the prices of the
 *    pair with B moved by 0.1%, 1% and 5% of its extent; each started at
 *    the cold run's last eps, to a certified 1%.
 * 3, 4. Training drift: a prediction that is the target shuffled plus an
 *    error shrinking step by step (5% of the extent, x0.95 a step, 40
 *    steps), drawn anew each step (3) or drifting (4); each step solved
 *    cold, and warm from the previous step's prices and last eps (kept per
 *    sample, as a loss object would keep them).
 * 5. Global price updates (route 3, auction_replay.h): cold runs with an
 *    update at a phase's start, at its last 256 bidders, or each time the
 *    bidders halve; rounds priced as above (the updates free: an upper
 *    bound on what the route can give), and with each update priced as its
 *    longest path's arcs (hops) x one parallel pass over all n x n pairs
 *    (n^2 / 1,024 costs a thread at 8 cycles each). Pairs of cube, sphere
 *    surfaces and lidar, and, given a file of them (scripts/
 *    decoder_pairs.py: raw float32, A then B, n x 3 each), a folding
 *    decoder's predictions against their targets, the pairs the H100's
 *    training loop found hardest.
 * 6. A start from the costs themselves (the Hungarian method's column
 *    reduction): p_j = -min_i c_ij, so that every object is some bidder's
 *    best at reduced cost 0, shifted to a least price of 0; the cold
 *    schedule from its first eps. It is the kernel's cold start now
 *    (pcb_ca_column_price); every "cold" run here is the zero start the
 *    routes were measured against (PCBENCH_EMD_START=zero).
 * 7. The forward/reverse auction (route 3's other half) against a forward
 *    auction on one scaffold of their own (below), from the column start;
 *    reverse bids all the time, or only in a phase's tail.
 * 8. The batch's pairs from the column start, and the slowest of each kind
 *    phase by phase.
 * 9. The finish from more bidders (issue 93's third lever): each phase's
 *    last T bidders by augmenting paths (replay_finish_at), T = the rule's,
 *    8, 16, 32 and 64, from the column start within 5% and 1%; the rounds
 *    they save against the finish steps they cost, priced with a finish
 *    step at 2,700 cycles (the model above) and at 9,000 (closer to what a
 *    step over n = 4,096 objects costs the kernel: about 6,300 at 1,024). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/cloud.h"
#include "auction_replay.h"

static double cycles(const replay_stats *s)
{
    return 2700.0 * (double)(s->rounds_by[0] + s->finish_steps) + 7000.0 * (double)s->rounds_by[1] +
           38000.0 * (double)s->rounds_by[2];
}

/* The pair's clouds: A, and B of the kind (the harness's generators). */
static void make_pair(const char *kind, int32_t n, uint64_t seed, float *a, float *b)
{
    pcb_cloud x = {0}, y = {0};
    if (!strcmp(kind, "lidar")) {
        pcb_gen_lidar(n, seed, 0, 0, 0, &x);
        pcb_gen_lidar(n, seed, 0.8, 0.05, 0.01, &y);
    } else {
        pcb_generate(kind, n, seed, &x);
        pcb_generate(kind, n, seed + 1000, &y);
    }
    memcpy(a, x.xyz, (size_t)n * 3 * sizeof(float));
    memcpy(b, y.xyz, (size_t)n * 3 * sizeof(float));
    pcb_cloud_free(&x), pcb_cloud_free(&y);
}

static double extent(const float *p, int32_t n)
{
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int32_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++)
            lo[c] = fminf(lo[c], p[3 * i + c]), hi[c] = fmaxf(hi[c], p[3 * i + c]);
    return fmax(fmax(hi[0] - lo[0], hi[1] - lo[1]), hi[2] - lo[2]);
}

static double uniform(uint64_t *s)
{
    return (double)(replay_random(s) >> 11) / 9007199254740992.0;
}

static double gauss(uint64_t *s)
{
    const double u = uniform(s) + 1e-300, v = uniform(s);
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

typedef struct {
    int32_t n;
    int32_t *match;
    double *price;
    replay_stats st;
} run;

static void solve(const float *a, const float *b, int32_t n, double gap, const double *start,
                  double eps, run *r)
{
    pcb_options opt = {0};
    opt.max_gap = gap;
    if (replay_pair_from(a, b, n, &opt, 0, start, eps, 0, r->match, r->price, &r->st) != 0) {
        fprintf(stderr, "emd_routes: out of memory\n");
        exit(1);
    }
}

static void phases(const char *kind, const replay_stats *s)
{
    printf("| %s | %lld |", kind, (long long)s->phases);
    for (int p = 0; p < REPLAY_PHASES && p < s->phases; p++) {
        const int64_t *r = s->phase_rounds[p];
        const double c = 2700.0 * (double)(r[0] + s->phase_finish_steps[p]) + 7000.0 * (double)r[1] +
                         38000.0 * (double)r[2];
        printf(" %.1f%s", c / 1e6, p + 1 < s->phases ? " /" : "");
    }
    printf(" | %.1f | %.2f%% |\n", cycles(s) / 1e6, 100 * (s->p - s->d) / s->d);
}

typedef struct {
    int32_t n;
    int pairs;
    float *a, *b, *moved;
    double *start;
    run cold, warm, oracle;
} study;

static const char *const kinds[] = {"uniform", "sphere", "lidar"};

/* 1. Where a cold run's steps are, phase by phase. */
static void by_phase(study *S)
{
    printf("1. Cold runs, phase by phase\n\n| pair | phases | cost a phase | total | gap bound |\n"
           "|---|---|---|---|---|\n");
    for (int k = 0; k < 3; k++)
        for (int p = 0; p < S->pairs; p++) {
            make_pair(kinds[k], S->n, 1 + (uint64_t)p, S->a, S->b);
            solve(S->a, S->b, S->n, 0.01, NULL, 0, &S->cold);
            char name[64];
            snprintf(name, sizeof name, "%s %d", kinds[k], p);
            phases(name, &S->cold.st);
        }
}

/* 2. Warm starts from near-optimal prices, noisy ones, and a moved pair's. */
static void oracle_starts(study *S)
{
    const int32_t n = S->n;
    printf("\n2. Oracle warm starts, at the cold run's last eps (cost: warm / cold)\n\n"
           "| pair | cold | oracle | +1%% | +5%% | +20%% | B moved 0.1%% | 1%% | 5%% |\n"
           "|---|---|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < 3; k++)
        for (int p = 0; p < S->pairs; p++) {
            make_pair(kinds[k], n, 1 + (uint64_t)p, S->a, S->b);
            solve(S->a, S->b, n, 0.01, NULL, 0, &S->cold);
            const double c0 = cycles(&S->cold.st), eps = S->cold.st.eps;
            solve(S->a, S->b, n, 0.001, NULL, 0, &S->oracle);
            double lo = INFINITY, hi = -INFINITY;
            for (int32_t j = 0; j < n; j++)
                lo = fmin(lo, S->oracle.price[j]), hi = fmax(hi, S->oracle.price[j]);
            printf("| %s %d | %.1f |", kinds[k], p, c0 / 1e6);
            static const double noise[] = {0, 0.01, 0.05, 0.2};
            uint64_t rng = 77 + (uint64_t)p;
            for (int q = 0; q < 4; q++) {
                for (int32_t j = 0; j < n; j++)
                    S->start[j] = S->oracle.price[j] + noise[q] * (hi - lo) * (2 * uniform(&rng) - 1);
                solve(S->a, S->b, n, 0.01, S->start, eps, &S->warm);
                printf(" %.2f |", cycles(&S->warm.st) / c0);
            }
            static const double shift[] = {0.001, 0.01, 0.05};
            const double ext = extent(S->b, n);
            for (int q = 0; q < 3; q++) {
                for (int32_t i = 0; i < 3 * n; i++)
                    S->moved[i] = S->b[i] + (float)(shift[q] * ext * gauss(&rng) / sqrt(3.0));
                solve(S->a, S->moved, n, 0.001, NULL, 0, &S->oracle);
                solve(S->a, S->b, n, 0.01, S->oracle.price, eps, &S->warm);
                printf(" %.2f |", cycles(&S->warm.st) / c0);
            }
            printf("\n");
        }
}

/* 3. A loss over training steps: cold each step, or warm from the last.
 * Each point's error starts at 5% of the extent and shrinks x0.95 a step;
 * fresh: drawn anew every step (the prediction jumps by its whole error),
 * else it drifts (x0.95, plus fresh noise of 2% of that: the prediction
 * moves a little each step, as late in training). */
static void drift(study *S, int fresh)
{
    const int32_t n = S->n;
    float *target = S->a, *pred = S->b, *err = S->moved;
    printf("\n%d. Training drift, 40 steps, errors from 5%% of the extent x0.95 a step, %s "
           "(cost a step)\n\n| target | steps 1-10 cold / warm | 11-20 | 21-30 | 31-40 | all, "
           "warm / cold |\n|---|---|---|---|---|---|\n", fresh ? 3 : 4,
           fresh ? "drawn anew each step" : "drifting");
    for (int k = 0; k < 2; k++) {
        make_pair(kinds[k], n, 9, target, pred);
        const double ext = extent(target, n);
        uint64_t rng = 5;
        double sums[2][4] = {{0}}, total[2] = {0}, last_eps = 0;
        for (int s = 0; s < 40; s++) {
            const double sigma = 0.05 * ext * pow(0.95, s);
            for (int32_t i = 0; i < n; i++) { /* the target shuffled, plus its error */
                const int32_t src = (int32_t)((i * 7919LL + 13) % n);
                for (int c = 0; c < 3; c++) {
                    const double e = sigma * gauss(&rng) / sqrt(3.0);
                    err[3 * i + c] = fresh || s == 0 ? (float)e
                                                     : (float)(0.95 * err[3 * i + c] + 0.02 * e);
                    pred[3 * i + c] = target[3 * src + c] + err[3 * i + c];
                }
            }
            solve(pred, target, n, 0.01, NULL, 0, &S->cold);
            solve(pred, target, n, 0.01, last_eps > 0 ? S->start : NULL, last_eps, &S->warm);
            memcpy(S->start, S->warm.price, (size_t)n * sizeof(double)); /* kept for the next step */
            last_eps = S->warm.st.eps;                                   /* and where it ended */
            sums[0][s / 10] += cycles(&S->cold.st) / 10, sums[1][s / 10] += cycles(&S->warm.st) / 10;
            total[0] += cycles(&S->cold.st), total[1] += cycles(&S->warm.st);
        }
        printf("| %s |", kinds[k]);
        for (int q = 0; q < 4; q++)
            printf(" %.1f / %.1f |", sums[0][q] / 1e6, sums[1][q] / 1e6);
        printf(" %.2f |\n", total[1] / total[0]);
    }
}

/* Parts 5 and 6: pair p of kind k into S->a and S->b, kinds 0-2 made by
 * the generators and kind 3 read from the decoder pairs file f; 0 when f
 * holds no more (or there is none). */
static int load_pair(study *S, int k, int p, FILE *f)
{
    const size_t bytes = (size_t)S->n * 3 * sizeof(float);
    if (k == 3)
        return f && fread(S->a, 1, bytes, f) == bytes && fread(S->b, 1, bytes, f) == bytes;
    make_pair(kinds[k], S->n, 1 + (uint64_t)p, S->a, S->b);
    return 1;
}

static FILE *open_pairs(const char *decoder)
{
    FILE *f = decoder ? fopen(decoder, "rb") : NULL;
    if (decoder && !f)
        fprintf(stderr, "emd_routes: %s: cannot open\n", decoder);
    return f;
}

/* 5. Global price updates: when, what they save, what they cost. */
static void global_updates(study *S, const char *decoder)
{
    const int32_t n = S->n;
    const double pass = (double)n * n / 1024 * 8; /* cycles of one parallel pass */
    printf("\n5. Global price updates (cost: with updates / cold; free: updates not counted; "
           "priced: hops x a pass of %.0f cycles)\n\n| pair | cold | at phase start: free / "
           "priced (updates, mean hops) | at 256 bidders | each halving |\n|---|---|---|---|---|\n",
           pass);
    FILE *f = open_pairs(decoder);
    for (int k = 0; k < 4; k++)
        for (int p = 0; p < S->pairs && load_pair(S, k, p, f); p++) {
            replay_global_at = 0;
            solve(S->a, S->b, n, 0.01, NULL, 0, &S->cold);
            const double c0 = cycles(&S->cold.st);
            printf("| %s %d | %.1f (bound %.2f%%) |", k < 3 ? kinds[k] : "decoder", p, c0 / 1e6,
                   100 * (S->cold.st.p - S->cold.st.d) / S->cold.st.d);
            static const struct { int32_t at; int repeat; } when[] = {{0, 0}, {256, 0}, {0, 1}};
            for (int w = 0; w < 3; w++) {
                replay_global_at = when[w].at ? when[w].at : n;
                replay_global_repeat = when[w].repeat;
                solve(S->a, S->b, n, 0.01, NULL, 0, &S->warm);
                const replay_stats *g = &S->warm.st;
                const double c = cycles(g);
                printf(" %.2f / %.2f (%lld, %.0f; bound %.2f%%) |", c / c0,
                       (c + (double)g->global_hops * pass) / c0, (long long)g->global_updates,
                       g->global_updates ? (double)g->global_hops / (double)g->global_updates : 0,
                       100 * (g->p - g->d) / g->d);
                fflush(stdout);
            }
            replay_global_at = 0, replay_global_repeat = 0;
            printf("\n");
        }
    if (f)
        fclose(f);
}

/* 6. The column-reduction start against the cold run, pair by pair. */
static void column_start(study *S, const char *decoder)
{
    const int32_t n = S->n;
    printf("\n6. Column-reduction start p_j = -min_i c_ij, from the first eps (cost: with it / "
           "cold)\n\n| pair | cold | column start | its bound |\n|---|---|---|---|\n");
    FILE *f = open_pairs(decoder);
    for (int k = 0; k < 4; k++)
        for (int p = 0; p < S->pairs && load_pair(S, k, p, f); p++) {
            solve(S->a, S->b, n, 0.01, NULL, 0, &S->cold);
            replay_column_prices(S->a, S->b, n, S->start);
            solve(S->a, S->b, n, 0.01, S->start, 1e300, &S->warm); /* held to the first eps */
            const replay_stats *w = &S->warm.st;
            printf("| %s %d | %.1f | %.2f | %.2f%% |\n", k < 3 ? kinds[k] : "decoder", p,
                   cycles(&S->cold.st) / 1e6, cycles(w) / cycles(&S->cold.st),
                   100 * (w->p - w->d) / w->d);
            fflush(stdout);
        }
    if (f)
        fclose(f);
}

/* 7. Route 3's other half, the forward/reverse auction (Bertsekas, Castanon
 * and Tsaknakis 1993), against a forward auction on the same scaffold: Jacobi
 * rounds, full scans, the column start, eps from C / 32 down / 4 a phase, a
 * certificate after each phase; no caches, finish or dual ascent, so its
 * figures compare the two with each other, not with the kernel. In cost
 * form: persons i (A) hold duals u_i, objects j (B) w_j (w = -price), and
 * u_i + w_j <= c_ij + eps for every pair, with equality for assigned ones.
 * A forward bid of a free person takes its least c_ij - w_j (v1, then v2)
 * and sets w_j1 = c_ij1 - v2 - eps; a reverse bid of a free object takes
 * its least c_ij - u_i (b1, b2) and sets u_i1 = c_i1j - b2 - eps. Each
 * object (person) keeps the least of its bids, ties to the larger bidder.
 * The direction switches only once a round has matched one more pair
 * (their rule: with prices moving both ways, switching freely can cycle). */
typedef struct {
    int64_t rounds_by[3], bids, rounds[2]; /* rounds[0] forward, [1] reverse */
    int phases;
    double p, d;
} fr_stats;

static double fr_cost(const float *a, const float *b, int32_t i, int32_t j)
{
    const double dx = (double)a[3 * i] - b[3 * j], dy = (double)a[3 * i + 1] - b[3 * j + 1],
                 dz = (double)a[3 * i + 2] - b[3 * j + 2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* One side's round: every free bidder x (of side `a`'s points, duals own)
 * bids for its best y (points of `b`, duals other); mate[x] and of[y] the
 * matches (-1 free). Returns the number of bidders. */
static int32_t fr_round(const float *a, const float *b, int32_t n, double eps, double *own,
                        double *other, int32_t *mate, int32_t *of, double *key, int32_t *who)
{
    int32_t bidders = 0;
    for (int32_t y = 0; y < n; y++)
        key[y] = INFINITY, who[y] = -1;
    for (int32_t x = 0; x < n; x++)
        bidders += mate[x] < 0;
#pragma omp parallel for schedule(dynamic, 16)
    for (int32_t x = 0; x < n; x++) {
        if (mate[x] >= 0)
            continue;
        double v1 = INFINITY, v2 = INFINITY;
        int32_t y1 = -1;
        for (int32_t y = 0; y < n; y++) {
            const double v = fr_cost(a, b, x, y) - other[y];
            if (v < v1)
                v2 = v1, v1 = v, y1 = y;
            else if (v < v2)
                v2 = v;
        }
        const double k = fr_cost(a, b, x, y1) - (v2 < INFINITY ? v2 : v1) - eps;
#pragma omp critical
        if (k < key[y1] || (k == key[y1] && x > who[y1]))
            key[y1] = k, who[y1] = x;
    }
    for (int32_t y = 0; y < n; y++) {
        const int32_t x = who[y];
        if (x < 0)
            continue;
        if (of[y] >= 0)
            mate[of[y]] = -1;
        of[y] = x, mate[x] = y;
        other[y] = key[y];
        own[x] = fr_cost(a, b, x, y) - key[y];
    }
    return bidders;
}

static void fr_solve(const float *a, const float *b, int32_t n, double gap, int reverse,
                     fr_stats *st)
{
    double *u = malloc((size_t)n * sizeof *u), *w = malloc((size_t)n * sizeof *w);
    double *key = malloc((size_t)n * sizeof *key);
    int32_t *match = malloc((size_t)n * sizeof *match), *owner = malloc((size_t)n * sizeof *owner);
    int32_t *who = malloc((size_t)n * sizeof *who);
    if (!u || !w || !key || !match || !owner || !who) {
        fprintf(stderr, "emd_routes: out of memory\n");
        exit(1);
    }
    *st = (fr_stats){0};
    /* the column start: w_j = min_i c_ij, shifted (a constant changes no bid) */
    double big = 0;
    for (int32_t j = 0; j < n; j++) {
        double m = INFINITY;
        for (int32_t i = 0; i < n; i++)
            m = fmin(m, fr_cost(a, b, i, j));
        w[j] = m, big = fmax(big, m);
    }
    for (int32_t j = 0; j < n; j++)
        w[j] -= big, owner[j] = -1;
    for (int32_t i = 0; i < n; i++)
        match[i] = -1;
    const double C = extent(a, n) + extent(b, n); /* a bound on every cost's spread */
    for (double eps = C / 32;; eps /= 4) {
        st->phases++;
        /* duals tight for persons; pairs farther than eps from their best freed */
        for (int32_t i = 0; i < n; i++) {
            double m = INFINITY;
            for (int32_t j = 0; j < n; j++)
                m = fmin(m, fr_cost(a, b, i, j) - w[j]);
            u[i] = m;
            if (match[i] >= 0 && fr_cost(a, b, i, match[i]) - w[match[i]] > m + eps)
                owner[match[i]] = -1, match[i] = -1;
            else if (match[i] >= 0)
                u[i] = fr_cost(a, b, i, match[i]) - w[match[i]];
        }
        int side = 0;
        for (;;) {
            int32_t free_now = 0;
            for (int32_t i = 0; i < n; i++)
                free_now += match[i] < 0;
            if (!free_now)
                break;
            /* reverse: objects bid for persons (B's points against A's) */
            const int32_t bidders = side ? fr_round(b, a, n, eps, w, u, owner, match, key, who)
                                         : fr_round(a, b, n, eps, u, w, match, owner, key, who);
            st->bids += bidders, st->rounds[side]++;
            st->rounds_by[bidders == 1 ? 0 : bidders < 32 ? 1 : 2]++;
            int32_t free_after = 0;
            for (int32_t i = 0; i < n; i++)
                free_after += match[i] < 0;
            if (reverse && free_after < free_now && (reverse == 1 || free_after < 32 || side))
                side = !side;
        }
        /* the certificate, from either side's duals */
        double P = 0, Dw = 0, Du = 0;
        for (int32_t i = 0; i < n; i++) {
            double m = INFINITY;
            for (int32_t j = 0; j < n; j++)
                m = fmin(m, fr_cost(a, b, i, j) - w[j]);
            P += fr_cost(a, b, i, match[i]), Dw += m + w[i], Du += u[i];
        }
        for (int32_t j = 0; j < n; j++) {
            double m = INFINITY;
            for (int32_t i = 0; i < n; i++)
                m = fmin(m, fr_cost(a, b, i, j) - u[i]);
            Du += m;
        }
        st->p = P / n, st->d = fmax(Dw, Du) / n;
        if (P - fmax(Dw, Du) <= gap * fmax(Dw, Du) || st->phases > 20)
            break;
    }
    free(u), free(w), free(key), free(match), free(owner), free(who);
}

static double fr_cycles(const fr_stats *s)
{
    return 2700.0 * (double)s->rounds_by[0] + 7000.0 * (double)s->rounds_by[1] +
           38000.0 * (double)s->rounds_by[2];
}

static void forward_reverse(study *S, const char *decoder)
{
    const int32_t n = S->n;
    printf("\n7. Forward/reverse auction against forward alone, on one scaffold (Jacobi rounds, "
           "column start, no finish or caches; priced as above)\n\n| pair | forward: cost "
           "(rounds 1 / 2-31 / 32+; bids; phases; bound) | forward/reverse: cost (rounds; "
           "forward, reverse; bids; bound) | ratio |\n|---|---|---|---|\n");
    FILE *f = open_pairs(decoder);
    for (int k = 0; k < 4; k++)
        for (int p = 0; p < S->pairs && load_pair(S, k, p, f); p++) {
            fr_stats fw, fr, tail;
            fr_solve(S->a, S->b, n, 0.01, 0, &fw);
            fr_solve(S->a, S->b, n, 0.01, 1, &fr);
            fr_solve(S->a, S->b, n, 0.01, 2, &tail);
            printf("| %s %d | %.1f (%lld / %lld / %lld; %lld; %d; %.2f%%) | %.1f (%lld / %lld / "
                   "%lld; %lld, %lld; %lld; %.2f%%) | %.2f |\n",
                   k < 3 ? kinds[k] : "decoder", p, fr_cycles(&fw) / 1e6,
                   (long long)fw.rounds_by[0], (long long)fw.rounds_by[1],
                   (long long)fw.rounds_by[2], (long long)fw.bids, fw.phases,
                   100 * (fw.p - fw.d) / fw.d, fr_cycles(&fr) / 1e6, (long long)fr.rounds_by[0],
                   (long long)fr.rounds_by[1], (long long)fr.rounds_by[2], (long long)fr.rounds[0],
                   (long long)fr.rounds[1], (long long)fr.bids, 100 * (fr.p - fr.d) / fr.d,
                   fr_cycles(&fr) / fr_cycles(&fw));
            printf("|  | tails only (under 32 free) | %.1f (%lld / %lld / %lld; %lld, %lld; %lld; "
                   "%.2f%%) | %.2f |\n", fr_cycles(&tail) / 1e6, (long long)tail.rounds_by[0],
                   (long long)tail.rounds_by[1], (long long)tail.rounds_by[2],
                   (long long)tail.rounds[0], (long long)tail.rounds[1], (long long)tail.bids,
                   100 * (tail.p - tail.d) / tail.d, fr_cycles(&tail) / fr_cycles(&fw));
            fflush(stdout);
        }
    if (f)
        fclose(f);
}

/* 8. The suite's batch of pairs (seeds 1 to `pairs`) from the kernel's cold
 * start (the column start): each pair's cost, and for the slowest of a kind,
 * phase by phase, what its chain is made of. */
static void slowest(study *S)
{
    const int32_t n = S->n;
    printf("\n8. The batch from the column start, the slowest pairs phase by phase (a phase: "
           "cost = lone rounds / rounds of 2-31 / of 32+ / finish steps)\n\n");
    for (int k = 0; k < 3; k++) {
        double *cost = malloc((size_t)S->pairs * sizeof *cost), worst = -1;
        int at = 0;
        replay_stats keep = {0};
        for (int p = 0; p < S->pairs; p++) {
            make_pair(kinds[k], n, 1 + (uint64_t)p, S->a, S->b);
            replay_column_prices(S->a, S->b, n, S->start);
            solve(S->a, S->b, n, 0.01, S->start, 1e300, &S->warm);
            cost[p] = cycles(&S->warm.st);
            if (cost[p] > worst)
                worst = cost[p], at = p, keep = S->warm.st;
        }
        double sum = 0;
        for (int p = 0; p < S->pairs; p++)
            sum += cost[p];
        printf("%s: %d pairs, mean %.1f, slowest %.1f (pair %d, seed %d), costs:", kinds[k],
               S->pairs, sum / S->pairs / 1e6, worst / 1e6, at, at + 1);
        for (int p = 0; p < S->pairs; p++)
            printf(" %.1f", cost[p] / 1e6);
        printf("\n\n| phase | cost | lone | 2-31 | 32+ | finish steps |\n|---|---|---|---|---|---|\n");
        for (int q = 0; q < REPLAY_PHASES && q < keep.phases; q++) {
            const int64_t *r = keep.phase_rounds[q];
            const double c = 2700.0 * (double)(r[0] + keep.phase_finish_steps[q]) +
                             7000.0 * (double)r[1] + 38000.0 * (double)r[2];
            printf("| %d | %.1f | %lld | %lld | %lld | %lld |\n", q + 1, c / 1e6, (long long)r[0],
                   (long long)r[1], (long long)r[2], (long long)keep.phase_finish_steps[q]);
        }
        printf("| all | %.1f (bound %.2f%%) | %lld | %lld | %lld | %lld |\n\n", worst / 1e6,
               100 * (keep.p - keep.d) / keep.d, (long long)keep.rounds_by[0],
               (long long)keep.rounds_by[1], (long long)keep.rounds_by[2],
               (long long)keep.finish_steps);
        fflush(stdout);
        free(cost);
    }
}

static void finish_from(study *S)
{
    const int32_t n = S->n, ts[] = {0, 8, 16, 32, 64};
    const double gaps[] = {0.05, 0.01};
    printf("\n9. The finish from T bidders, means over %d pair(s) a kind (column start): rounds "
           "of 2-31 / of 32+, finish steps and the costs they evaluate (millions), cost "
           "(Mcycles) with a finish step at 2,700 / 9,000 cycles\n\n| kind | bound | T | 2-31 "
           "| 32+ | finish steps | their costs | cost at 2,700 | at 9,000 |\n"
           "|---|---|---|---|---|---|---|---|---|\n", S->pairs);
    for (int k = 0; k < 3; k++)
        for (int g = 0; g < 2; g++)
            for (int t = 0; t < 5; t++) {
                double small = 0, wide = 0, steps = 0, evals = 0, c27 = 0, c90 = 0;
                replay_finish_at = ts[t];
                for (int p = 0; p < S->pairs; p++) {
                    make_pair(kinds[k], n, 1 + (uint64_t)p, S->a, S->b);
                    replay_column_prices(S->a, S->b, n, S->start);
                    solve(S->a, S->b, n, gaps[g], S->start, 1e300, &S->warm);
                    const replay_stats *s = &S->warm.st;
                    small += (double)s->rounds_by[1], wide += (double)s->rounds_by[2];
                    steps += (double)s->finish_steps;
                    evals += (double)s->finish_evals;
                    c27 += cycles(s);
                    c90 += cycles(s) + 6300.0 * (double)s->finish_steps;
                }
                const double m = S->pairs;
                printf("| %s | %g%% | %d | %.0f | %.0f | %.0f | %.1f | %.1f | %.1f |\n", kinds[k],
                       100 * gaps[g], ts[t] ? ts[t] : pcb_ca_finish_at(n), small / m, wide / m,
                       steps / m, evals / m / 1e6, c27 / m / 1e6, c90 / m / 1e6);
                fflush(stdout);
            }
    replay_finish_at = 0;
}

static int run_alloc(run *r, int32_t n)
{
    r->n = n;
    r->match = malloc((size_t)n * sizeof *r->match);
    r->price = malloc((size_t)n * sizeof *r->price);
    return r->match && r->price;
}

int main(int argc, char **argv)
{
    study S = {0};
    /* "cold" here is the zero start, which every route is measured against
     * (the column start, now the kernel's cold start, is part 6) */
    setenv("PCBENCH_EMD_START", "zero", 0);
    S.n = argc > 1 ? atoi(argv[1]) : 1024;
    S.pairs = argc > 2 ? atoi(argv[2]) : 2;
    const char *parts = argc > 3 ? argv[3] : "1234";
    const size_t bytes = (size_t)S.n * 3 * sizeof(float);
    S.a = malloc(bytes), S.b = malloc(bytes), S.moved = malloc(bytes);
    S.start = malloc((size_t)S.n * sizeof(double));
    if (S.n < 2 || S.pairs < 1 || !S.a || !S.b || !S.moved || !S.start ||
        !run_alloc(&S.cold, S.n) || !run_alloc(&S.warm, S.n) || !run_alloc(&S.oracle, S.n)) {
        fprintf(stderr, "usage: emd_routes [n >= 2] [pairs >= 1] [parts] (or out of memory)\n");
        return 1;
    }
    printf("n = %d, %d pair(s) a kind, certified within 1%%; millions of cycles a pair\n\n", S.n,
           S.pairs);
    if (strchr(parts, '1'))
        by_phase(&S);
    if (strchr(parts, '2'))
        oracle_starts(&S);
    if (strchr(parts, '3'))
        drift(&S, 1);
    if (strchr(parts, '4'))
        drift(&S, 0);
    if (strchr(parts, '5'))
        global_updates(&S, argc > 4 ? argv[4] : NULL);
    if (strchr(parts, '6'))
        column_start(&S, argc > 4 ? argv[4] : NULL);
    if (strchr(parts, '8'))
        slowest(&S);
    if (strchr(parts, '9'))
        finish_from(&S);
    if (strchr(parts, '7'))
        forward_reverse(&S, argc > 4 ? argv[4] : NULL);
    free(S.a), free(S.b), free(S.moved), free(S.start);
    run *runs[] = {&S.cold, &S.warm, &S.oracle};
    for (int r = 0; r < 3; r++)
        free(runs[r]->match), free(runs[r]->price);
    return 0;
}
