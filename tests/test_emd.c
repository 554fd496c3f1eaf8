/* test_emd.c - EMD: the exact solver against brute force, every CPU
 * implementation validated, the price certificate against the exact
 * optimum, the validator's rejections, argument checks, the seed kernel's
 * point-count rule, cuda_auction's rules replayed on the CPU, and the CUDA
 * kernels where a device exists (cuda_auction bit for bit against its
 * replay). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pcbench_judge.h"
#include "auction_replay.h"
#include "emd/emd.h"
#include "testlib.h"

/* A pair of clouds (and room for an answer), batch x n points each. */
typedef struct {
    pcb_task task;
    float *a, *b;
    int32_t *index;
    double *value, *price;
} instance;

static void instance_free(instance *in)
{
    free(in->a);
    free(in->b);
    free(in->index);
    free(in->value);
    free(in->price);
}

/* Test clouds from a local generator: the library's generators live with
 * the loaders, which this test does not need. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *state)
{
    return (double)(next_random(state) >> 11) * 0x1.0p-53;
}

/* Kinds: uniform (unit cube), sphere (unit sphere surface), clusters (8
 * tight blobs), duplicates (n/8 distinct points, repeated), lattice (a
 * 3 x 3 x 3 integer grid: exact ties and repeats), equal (one point n
 * times), collinear, offset (a 100-unit cube 3,000 km from the origin). */
static void make_cloud(const char *kind, int64_t n, uint64_t seed, float *xyz)
{
    uint64_t st = seed;
    double centre[8][3], base[3] = {uniform01(&st), uniform01(&st), uniform01(&st)};
    for (int k = 0; k < 8; k++)
        for (int c = 0; c < 3; c++)
            centre[k][c] = uniform01(&st);
    for (int64_t i = 0; i < n; i++) {
        double p[3];
        for (int c = 0; c < 3; c++)
            p[c] = uniform01(&st);
        if (strcmp(kind, "sphere") == 0) {
            double len = 0;
            for (int c = 0; c < 3; c++)
                len += (p[c] - 0.5) * (p[c] - 0.5);
            for (int c = 0; c < 3; c++)
                p[c] = len > 0 ? (p[c] - 0.5) / sqrt(len) : 1;
        } else if (strcmp(kind, "clusters") == 0) {
            const double *m = centre[next_random(&st) % 8];
            for (int c = 0; c < 3; c++)
                p[c] = m[c] + 0.05 * (p[c] - 0.5);
        } else if (strcmp(kind, "duplicates") == 0) {
            uint64_t pick = seed * 7919 + next_random(&st) % (uint64_t)(n / 8 + 1);
            for (int c = 0; c < 3; c++)
                p[c] = uniform01(&pick);
        } else if (strcmp(kind, "lattice") == 0) {
            for (int c = 0; c < 3; c++)
                p[c] = (double)(next_random(&st) % 3);
        } else if (strcmp(kind, "equal") == 0) {
            for (int c = 0; c < 3; c++)
                p[c] = base[c];
        } else if (strcmp(kind, "collinear") == 0) {
            p[1] = 2 * p[0];
            p[2] = -p[0];
        } else if (strcmp(kind, "offset") == 0) {
            p[0] = 3.0e6 + 100 * p[0];
            p[1] = -2.0e6 + 100 * p[1];
            p[2] = 1.0e3 + 100 * p[2];
        }
        for (int c = 0; c < 3; c++)
            xyz[3 * i + c] = (float)p[c];
    }
}

static int instance_make(instance *in, const char *kind_a, const char *kind_b, int64_t batch,
                         int64_t n, uint64_t seed)
{
    size_t all = (size_t)(batch * n);
    memset(in, 0, sizeof *in);
    in->a = malloc(all * 3 * sizeof(float));
    in->b = malloc(all * 3 * sizeof(float));
    in->index = malloc(all * sizeof(int32_t));
    in->value = malloc((size_t)batch * sizeof(double));
    in->price = malloc(all * sizeof(double));
    if (!in->a || !in->b || !in->index || !in->value || !in->price)
        return PCB_ENOMEM;
    for (int64_t p = 0; p < batch; p++) {
        make_cloud(kind_a, n, seed * 1000 + (uint64_t)(2 * p), in->a + p * n * 3);
        make_cloud(kind_b, n, seed * 1000 + (uint64_t)(2 * p + 1), in->b + p * n * 3);
    }
    pcb_task t = {.problem = PCB_EMD, .batch = batch, .n = n, .nq = n, .a = in->a, .b = in->b};
    in->task = t;
    return PCB_OK;
}

static int run(const pcb_impl *impl, instance *in, pcb_result *r)
{
    size_t all = (size_t)(in->task.batch * in->task.n);
    for (size_t i = 0; i < all; i++)
        in->index[i] = -7;
    pcb_result fresh = {.index = in->index, .value = in->value, .price = in->price};
    *r = fresh;
    return pcb_run(impl, &in->task, r, NULL);
}

static pcb_report validate(const instance *in, const pcb_result *r, int exact)
{
    pcb_report rep;
    memset(&rep, 0, sizeof rep);
    CHECK_RC(pcb_emd_validate(&in->task, r, exact, exact ? 0 : 0.01, &rep), PCB_OK);
    return rep;
}

/* The least total cost over all n! bijections (n <= 8), by recursion. */
static double brute_force(const double *cost, int n, int row, unsigned used, double sum,
                          double best)
{
    if (row == n)
        return sum < best ? sum : best;
    for (int j = 0; j < n; j++)
        if (!(used & (1u << j)))
            best = brute_force(cost, n, row + 1, used | (1u << j), sum + cost[row * n + j], best);
    return best;
}

static void test_exact_matches_brute_force(void)
{
    static const char *const kinds[][2] = {
        {"uniform", "uniform"}, {"lattice", "lattice"}, {"duplicates", "uniform"},
        {"equal", "sphere"},    {"collinear", "clusters"},  {"offset", "offset"}};
    int compared = 0;
    for (int n = 1; n <= 8; n++)
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
            for (uint64_t seed = 1; seed <= (n < 8 ? 8u : 3u); seed++) {
                instance in;
                pcb_result r;
                CHECK_RC(instance_make(&in, kinds[k][0], kinds[k][1], 1, n, seed), PCB_OK);
                CHECK_RC(run(&pcb_emd_exact, &in, &r), PCB_OK);
                double cost[64];
                for (int i = 0; i < n; i++)
                    for (int j = 0; j < n; j++)
                        cost[i * n + j] = pcb_emd_cost(in.a + 3 * i, in.b + 3 * j);
                double best = brute_force(cost, n, 0, 0, 0, HUGE_VAL) / n;
                CHECK(fabs(in.value[0] - best) <= 1e-12 * (1 + best));
                pcb_report rep = validate(&in, &r, 1);
                CHECK(rep.ok && rep.unmatched == 0);
                compared++;
                instance_free(&in);
            }
    CHECK(compared == 7 * 6 * 8 + 6 * 3);
}

/* Every CPU implementation, small and awkward cases. */
static void test_cpu_implementations(void)
{
    static const struct {
        const char *a, *b;
        int64_t batch, n;
    } cases[] = {{"uniform", "uniform", 1, 1},     {"uniform", "sphere", 1, 2},
                 {"lattice", "lattice", 1, 40},    {"duplicates", "duplicates", 1, 64},
                 {"equal", "uniform", 1, 50},      {"equal", "equal", 1, 30},
                 {"clusters", "uniform", 1, 200},  {"sphere", "clusters", 3, 90},
                 {"offset", "offset", 1, 100},     {"uniform", "collinear", 5, 33}};
    int ran = 0;
    for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
        const pcb_impl *impl = *it;
        if (impl->problem != PCB_EMD || impl->device != PCB_CPU)
            continue;
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            instance in;
            pcb_result r;
            CHECK_RC(instance_make(&in, cases[c].a, cases[c].b, cases[c].batch, cases[c].n, c + 1),
                     PCB_OK);
            CHECK_RC(run(impl, &in, &r), PCB_OK);
            CHECK(r.has_price);
            pcb_report rep = validate(&in, &r, impl->promise.exact);
            if (!rep.ok)
                fprintf(stderr, "%s on %s/%s n=%lld: %s\n", impl->name, cases[c].a, cases[c].b,
                        (long long)cases[c].n, rep.detail);
            CHECK(rep.ok);
            CHECK(rep.gap >= 0 && rep.bound >= 0);
            instance_free(&in);
            ran++;
        }
    }
    CHECK(ran >= 3 * (int)(sizeof cases / sizeof cases[0]));
}

/* The auctions' stated guarantee: the mean within their target eps of the
 * optimum, for the default eps and a coarse one. */
static void test_auctions_within_eps(void)
{
    const pcb_impl *impls[] = {pcb_find(PCB_EMD, "auction"), pcb_find(PCB_EMD, "auction_omp")};
    for (int k = 0; k < 2; k++) {
        CHECK(impls[k] != NULL);
        for (int coarse = 0; impls[k] && coarse < 2; coarse++)
            for (uint64_t seed = 1; seed <= 4; seed++) {
                instance in, ref;
                pcb_result r, rr;
                CHECK_RC(instance_make(&in, "clusters", "sphere", 1, 150, seed), PCB_OK);
                CHECK_RC(instance_make(&ref, "clusters", "sphere", 1, 150, seed), PCB_OK);
                in.task.opt.eps = coarse ? 0.02 : 0;
                CHECK_RC(run(impls[k], &in, &r), PCB_OK);
                CHECK_RC(run(&pcb_emd_exact, &ref, &rr), PCB_OK);
                double extent = pcb_emd_cost_bound(in.a, in.b, 150);
                double eps = coarse ? 0.02 : PCB_EMD_AUCTION_EPS_SHARE * extent;
                CHECK(in.value[0] >= ref.value[0] - 1e-12);
                CHECK(in.value[0] - ref.value[0] <= eps + 1e-12);
                instance_free(&in);
                instance_free(&ref);
            }
    }
}

/* D <= OPT for any prices: the bound covers the gap, on many instances,
 * with the auctions' own prices (coarse eps: real gaps) and with perturbed
 * and arbitrary prices on a non-optimal bijection. */
static void test_certificate_bounds_gap(void)
{
    static const char *const kinds[] = {"uniform", "sphere", "clusters", "duplicates", "lattice"};
    const pcb_impl *auction = pcb_find(PCB_EMD, "auction");
    const pcb_impl *omp = pcb_find(PCB_EMD, "auction_omp");
    int positive = 0, checked = 0;
    for (int k = 0; k < 5; k++)
        for (uint64_t seed = 1; seed <= 6; seed++) {
            const int64_t n = 20 + 13 * (int64_t)seed;
            instance in;
            pcb_result r;
            CHECK_RC(instance_make(&in, kinds[k], kinds[(k + 1) % 5], 1, n, seed), PCB_OK);
            in.task.opt.eps = 0.01 * (double)seed;
            for (int which = 0; which < 3; which++) {
                if (which < 2) {
                    CHECK_RC(run(which ? omp : auction, &in, &r), PCB_OK);
                } else {
                    /* exact prices, perturbed; a bijection two swaps off */
                    CHECK_RC(run(&pcb_emd_exact, &in, &r), PCB_OK);
                    uint64_t st = seed;
                    for (int64_t j = 0; j < n; j++)
                        in.price[j] += 0.05 * (uniform01(&st) - 0.5);
                    int32_t t = in.index[0];
                    in.index[0] = in.index[n - 1];
                    in.index[n - 1] = t;
                    t = in.index[1];
                    in.index[1] = in.index[2];
                    in.index[2] = t;
                    in.value[0] = pcb_emd_mean_matched(in.a, in.b, n, in.index, NULL);
                }
                pcb_report rep = validate(&in, &r, 0);
                CHECK(rep.gap >= 0 && rep.bound >= 0);
                CHECK(rep.bound >= rep.gap - 1e-12);
                positive += rep.gap > 1e-9;
                checked++;
            }
            instance_free(&in);
        }
    CHECK(checked == 90);
    CHECK(positive >= 30); /* the check had real gaps to bound */
}

static void test_omp_same_for_every_thread_count(void)
{
    const pcb_impl *omp = pcb_find(PCB_EMD, "auction_omp");
    for (int64_t batch = 1; batch <= 4; batch += 3) {
        instance ref, in;
        pcb_result r;
        CHECK_RC(instance_make(&ref, "uniform", "clusters", batch, 300, 9), PCB_OK);
        ref.task.opt.threads = 1;
        CHECK_RC(run(omp, &ref, &r), PCB_OK);
        static const int threads[] = {2, 3, 5, 8};
        for (int k = 0; k < 4; k++) {
            CHECK_RC(instance_make(&in, "uniform", "clusters", batch, 300, 9), PCB_OK);
            in.task.opt.threads = threads[k];
            CHECK_RC(run(omp, &in, &r), PCB_OK);
            size_t all = (size_t)(batch * 300);
            CHECK(memcmp(in.index, ref.index, all * sizeof *in.index) == 0);
            CHECK(memcmp(in.price, ref.price, all * sizeof *in.price) == 0);
            instance_free(&in);
        }
        instance_free(&ref);
    }
}

static void test_validator_rejects(void)
{
    const int64_t n = 40;
    instance in;
    pcb_result r;
    CHECK_RC(instance_make(&in, "uniform", "uniform", 2, n, 3), PCB_OK);
    CHECK_RC(run(&pcb_emd_exact, &in, &r), PCB_OK);
    CHECK(validate(&in, &r, 1).ok);
    int32_t saved[80];
    memcpy(saved, in.index, sizeof saved);
    double saved_value[2] = {in.value[0], in.value[1]};
    pcb_report rep;

    in.index[n + 5] = in.index[n + 6]; /* second pair: a point of B twice */
    rep = validate(&in, &r, 0);
    CHECK(!rep.ok && strstr(rep.detail, "not a bijection"));
    memcpy(in.index, saved, sizeof saved);

    in.index[3] = (int32_t)n; /* out of range */
    rep = validate(&in, &r, 0);
    CHECK(!rep.ok && strstr(rep.detail, "out of"));
    in.index[3] = -7; /* the poison of an element never written */
    rep = validate(&in, &r, 0);
    CHECK(!rep.ok && strstr(rep.detail, "out of"));
    memcpy(in.index, saved, sizeof saved);

    in.index[4] = -1; /* unmatched: reported and failed, even approximate */
    in.index[n + 1] = -1;
    in.value[0] = pcb_emd_mean_matched(in.a, in.b, n, in.index, NULL);
    in.value[1] = pcb_emd_mean_matched(in.a + n * 3, in.b + n * 3, n, in.index + n, NULL);
    rep = validate(&in, &r, 0);
    CHECK(!rep.ok && rep.unmatched == 2 && strstr(rep.detail, "bijection no"));
    memcpy(in.index, saved, sizeof saved);
    in.value[0] = saved_value[0];
    in.value[1] = saved_value[1];

    in.value[1] *= 1.001; /* a wrong value */
    rep = validate(&in, &r, 1);
    CHECK(!rep.ok && strstr(rep.detail, "value"));
    in.value[1] = saved_value[1];

    /* a slightly worse bijection (the cheapest swap that costs something):
     * not exact, approximate ok */
    int64_t swap_i = 0, swap_k = 1;
    double least = HUGE_VAL;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = i + 1; k < n; k++) {
            double d = pcb_emd_cost(in.a + 3 * i, in.b + 3 * (int64_t)in.index[k]) +
                       pcb_emd_cost(in.a + 3 * k, in.b + 3 * (int64_t)in.index[i]) -
                       pcb_emd_cost(in.a + 3 * i, in.b + 3 * (int64_t)in.index[i]) -
                       pcb_emd_cost(in.a + 3 * k, in.b + 3 * (int64_t)in.index[k]);
            if (d > 1e-6 && d < least) {
                least = d;
                swap_i = i;
                swap_k = k;
            }
        }
    int32_t t = in.index[swap_i];
    in.index[swap_i] = in.index[swap_k];
    in.index[swap_k] = t;
    in.value[0] = pcb_emd_mean_matched(in.a, in.b, n, in.index, NULL);
    r.has_price = 0;
    rep = validate(&in, &r, 1);
    CHECK(!rep.ok && rep.gap > 1e-9 && strstr(rep.detail, "not optimal"));
    rep = validate(&in, &r, 0);
    CHECK(rep.ok && rep.gap < 0.05);
    memcpy(in.index, saved, sizeof saved);
    in.value[0] = saved_value[0];

    for (int64_t i = 0; i < n; i++) /* far from optimal: fails approximate too */
        in.index[i] = (int32_t)(n - 1 - i);
    in.value[0] = pcb_emd_mean_matched(in.a, in.b, n, in.index, NULL);
    rep = validate(&in, &r, 0);
    CHECK(!rep.ok && rep.gap > 0.05);
    memcpy(in.index, saved, sizeof saved);
    in.value[0] = saved_value[0];

    r.has_price = 1; /* an optimal bijection whose prices prove nothing */
    for (int64_t j = 0; j < 2 * n; j++)
        in.price[j] = 0;
    rep = validate(&in, &r, 1);
    CHECK(!rep.ok && rep.bound > 1e-9 && rep.gap == 0);
    rep = validate(&in, &r, 0); /* a promise is kept by the prices too */
    CHECK(!rep.ok && rep.gap == 0 && strstr(rep.detail, "bound above its promise"));
    CHECK_RC(pcb_emd_validate(&in.task, &r, 0, PCB_EMD_ANY_GAP, &rep), PCB_OK); /* no promise */
    CHECK(rep.ok);
    /* max_gap 0 is the strictest check (exact), never "no promise"; a
     * negative or NaN one is an error, never a pass. */
    r.has_price = 0;
    for (int64_t i = 0; i < n; i++)
        in.index[i] = (int32_t)(n - 1 - i);
    in.value[0] = pcb_emd_mean_matched(in.a, in.b, n, in.index, NULL);
    CHECK_RC(pcb_emd_validate(&in.task, &r, 0, 0, &rep), PCB_OK);
    CHECK(!rep.ok && strstr(rep.detail, "not optimal"));
    CHECK_RC(pcb_emd_validate(&in.task, &r, 0, PCB_EMD_ANY_GAP, &rep), PCB_OK);
    CHECK(rep.ok);
    CHECK_RC(pcb_emd_validate(&in.task, &r, 0, -0.5, &rep), PCB_EINVAL);
    CHECK_RC(pcb_emd_validate(&in.task, &r, 0, NAN, &rep), PCB_EINVAL);
    CHECK(strstr(pcb_errmsg(), "max_gap"));
    memcpy(in.index, saved, sizeof saved);
    in.value[0] = saved_value[0];
    CHECK_RC(pcb_emd_validate(&in.task, &r, 0, 0, &rep), PCB_OK); /* the optimum passes */
    CHECK(rep.ok);

    CHECK_RC(pcb_emd_validate(NULL, &r, 1, 0, &rep), PCB_EINVAL);
    CHECK_RC(pcb_emd_validate(&in.task, NULL, 1, 0, &rep), PCB_EINVAL);
    instance_free(&in);
}

/* Prices are defined up to a constant, and the judge's dual bound must not
 * lose to cancellation: prices of 1e20 and more once "proved" any bijection
 * optimal (D > P from rounding). The gap's exact solve is switched off, so
 * the certificate alone decides, through the validator, the bound and the
 * judge. */
static void test_huge_prices_certify_nothing(void)
{
    const int64_t n = 200;
    instance in;
    pcb_result r;
    CHECK_RC(instance_make(&in, "uniform", "uniform", 2, n, 5), PCB_OK);
    CHECK_RC(run(&pcb_emd_exact, &in, &r), PCB_OK);
    in.task.opt.emd_gap_max_n = -1; /* no exact solve: the certificate decides */
    pcb_report rep = validate(&in, &r, 1); /* the optimum and its potentials */
    CHECK(rep.ok && rep.bound <= 1e-9);
    for (int64_t j = 0; j < 2 * n; j++) /* shifted by a constant: still a proof */
        in.price[j] += 1000;
    rep = validate(&in, &r, 1);
    CHECK(rep.ok && rep.bound <= 1e-9);

    for (int64_t i = 0; i < n; i++) /* far from optimal, with huge prices */
        in.index[i] = (int32_t)(n - 1 - i);
    in.value[0] = pcb_emd_mean_matched(in.a, in.b, n, in.index, NULL);
    const pcb_promise promise = {.exact = 0, .max_gap = 0.01};
    uint64_t state = 7;
    for (int k = 0; k < 4; k++) {
        const double scale = k == 0 ? 1e20 : k == 1 ? 1e22 : k == 2 ? 1e300 : 1e17;
        for (int64_t j = 0; j < 2 * n; j++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            in.price[j] = k == 0 ? scale : scale * (1 + 1e-3 * (double)(state >> 11) / 9007199254740992.0);
        }
        rep = validate(&in, &r, 0);
        CHECK(!rep.ok && rep.bound > 0.01);
        double bound[2];
        CHECK_RC(pcb_emd_bound(&in.task, &r, bound), PCB_OK);
        CHECK(bound[0] > 0.01);
        pcb_judgement j;
        CHECK_RC(pcb_judge(&in.task, &r, &promise, NULL, &j), PCB_OK);
        CHECK(j.verdict == PCB_VERDICT_FAIL);
    }
    instance_free(&in);
}

static void test_invalid_arguments(void)
{
    instance in;
    CHECK_RC(instance_make(&in, "uniform", "uniform", 1, 20, 4), PCB_OK);
    int32_t idx[20];
    pcb_result r = {.index = idx};
    for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
        const pcb_impl *impl = *it;
        if (impl->problem != PCB_EMD)
            continue;
        pcb_task t = in.task;
        t.nq = 19; /* different sizes */
        CHECK_RC(pcb_run(impl, &t, &r, NULL), PCB_EINVAL);
        t = in.task;
        t.n = t.nq = 0;
        CHECK_RC(pcb_run(impl, &t, &r, NULL), PCB_EINVAL);
        t = in.task;
        t.b = NULL;
        CHECK_RC(pcb_run(impl, &t, &r, NULL), PCB_EINVAL);
        t = in.task;
        t.opt.eps = -1;
        CHECK_RC(pcb_run(impl, &t, &r, NULL), PCB_EINVAL);
        in.b[7] = NAN;
        CHECK_RC(pcb_run(impl, &in.task, &r, NULL), PCB_EINVAL);
        in.b[7] = INFINITY;
        CHECK_RC(pcb_run(impl, &in.task, &r, NULL), PCB_EINVAL);
        in.b[7] = 0.5f;
    }
    /* an eps the auctions cannot resolve in double precision */
    in.task.opt.eps = 1e-13;
    CHECK_RC(pcb_run(pcb_find(PCB_EMD, "auction"), &in.task, &r, NULL), PCB_EUNSUPPORTED);
    CHECK_RC(pcb_run(pcb_find(PCB_EMD, "auction_omp"), &in.task, &r, NULL), PCB_EUNSUPPORTED);
    CHECK_RC(pcb_run(&pcb_emd_exact, &in.task, &r, NULL), PCB_OK);
    instance_free(&in);
}

/* The n the seed kernel's scans handle: every n < 1024, then 1024, 2048 and
 * 4096 only. */
static void test_seed_point_counts(void)
{
    for (int64_t n = 1; n < 1024; n++)
        CHECK(pcb_emd_seed_n_ok(n));
    static const int64_t ok[] = {1024, 2048, 4096};
    static const int64_t bad[] = {0, -3, 1025, 1500, 1536, 2047, 2049, 3000, 3072, 4095, 4097, 8192};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        CHECK(pcb_emd_seed_n_ok(ok[i]));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(!pcb_emd_seed_n_ok(bad[i]));
    int accepted = 0;
    for (int64_t n = 1024; n <= 8192; n++)
        accepted += pcb_emd_seed_n_ok(n);
    CHECK(accepted == 3);
}

/* Where the CUDA kernel is built: its limits hold without a device; with
 * one it runs every scan path, batch 1 and 3, and is validated. */
static void test_cuda_auction_match(void)
{
    const pcb_impl *cuda = pcb_find(PCB_EMD, "cuda_auction_match");
    if (!cuda) {
        SKIP_NOT_BUILT("cuda_auction_match: not built");
    }
    instance in;
    pcb_result r;
    CHECK_RC(instance_make(&in, "uniform", "uniform", 1, 4097, 5), PCB_OK);
    CHECK_RC(run(cuda, &in, &r), PCB_EUNSUPPORTED); /* max_n, checked before the device */
    instance_free(&in);
    int available = pcb_impl_available(cuda) == PCB_OK;
    CHECK_RC(instance_make(&in, "uniform", "uniform", 1, 1500, 5), PCB_OK);
    CHECK_RC(run(cuda, &in, &r), available ? PCB_EUNSUPPORTED : PCB_EUNAVAIL);
    instance_free(&in);
    if (!available) {
        SKIP("cuda_auction_match: no CUDA device, runs not run");
    }
    static const int64_t sizes[] = {256, 1000, 1024, 2048, 4096};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        for (int64_t batch = 1; batch <= 3; batch += 2) {
            CHECK_RC(instance_make(&in, "uniform", "uniform", batch, sizes[k], 6), PCB_OK);
            CHECK_RC(run(cuda, &in, &r), PCB_OK);
            CHECK(r.has_price);
            pcb_report rep;
            CHECK_RC(pcb_validate(cuda, &in.task, &r, &rep), PCB_OK); /* it promises no gap */
            printf("cuda_auction_match n=%lld batch %lld: %s\n", (long long)sizes[k],
                   (long long)batch, rep.detail);
            CHECK(rep.ok);
            instance_free(&in);
        }
}

/* Replay every pair of an instance into its index and price, each pair's
 * counts into each[pair]. The pairs are replayed side by side: they are
 * independent, and one pair of 4,800 points takes tens of seconds. */
static void replay_pairs(instance *in, uint64_t shuffle, replay_stats *each)
{
    const int64_t n = in->task.n, batch = in->task.batch;
    int *rc = calloc((size_t)batch, sizeof *rc);
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t p = 0; p < batch; p++)
        rc[p] = replay_pair(in->a + p * n * 3, in->b + p * n * 3, (int32_t)n, &in->task.opt,
                            shuffle, in->index + p * n, in->price + p * n, &each[p]);
    for (int64_t p = 0; p < batch; p++)
        CHECK(rc[p] == 0);
    free(rc);
}

/* Replay every pair of an instance; returns the counts summed over the
 * pairs, the certificate of the last. */
static replay_stats replay_instance(instance *in, uint64_t shuffle, pcb_result *r)
{
    const int64_t n = in->task.n;
    replay_stats *each = calloc((size_t)in->task.batch, sizeof *each), sum = {0};
    replay_pairs(in, shuffle, each);
    for (int64_t p = 0; p < in->task.batch; p++) {
        const replay_stats st = each[p];
        sum.bids += st.bids, sum.rounds += st.rounds, sum.phases += st.phases;
        sum.scans += st.scans, sum.checks += st.checks, sum.cache_wrong += st.cache_wrong;
        sum.ascents += st.ascents, sum.ascent_stops += st.ascent_stops;
        sum.long_steps += st.long_steps;
        sum.finishes += st.finishes, sum.finish_steps += st.finish_steps;
        sum.finish_evals += st.finish_evals;
        sum.restarts += st.restarts, sum.cold_rounds += st.cold_rounds;
        sum.p = st.p, sum.d = st.d, sum.eps = st.eps; /* the last pair's */
    }
    free(each);
    for (int64_t p = 0; p < in->task.batch; p++)
        in->value[p] = pcb_emd_mean_matched(in->a + p * n * 3, in->b + p * n * 3, n,
                                            in->index + p * n, NULL);
    pcb_result fresh = {.index = in->index, .value = in->value, .price = in->price,
                        .has_price = 1};
    *r = fresh;
    return sum;
}

/* A uniform double in [0, 1) from the replay's generator. */
static double unit_random(uint64_t *seed)
{
    return (double)(replay_random(seed) >> 11) * 0x1p-53;
}

/* The cache rule alone: whatever a lane is offered (near-equal values,
 * prices far above the costs, duplicates), it keeps the least float values,
 * and every object it does not keep is, exactly, at or above the bound. */
static void test_cuda_auction_cache_bound(void)
{
    uint64_t seed = 77;
    int64_t kept_total = 0;
    for (int trial = 0; trial < 2000; trial++) {
        const int count = 1 + (int)(replay_random(&seed) % 200);
        const double price_scale = trial % 3 == 0 ? 0 : trial % 3 == 1 ? 1 : 1e4;
        float d2[200], pf[200];
        double exact[200];
        pcb_ca_slots s = pcb_ca_slots_empty();
        for (int j = 0; j < count; j++) {
            const double u = unit_random(&seed);
            const float c = trial % 5 == 0 ? 0.5f : (float)(0.3 + 0.01 * u); /* ties, near-ties */
            const double price = price_scale * unit_random(&seed);
            d2[j] = c * c;
            pf[j] = (float)price;
            exact[j] = (double)sqrtf(d2[j]) + price;
            pcb_ca_slots_offer(&s, d2[j], pf[j], j);
        }
        const double bound = pcb_ca_cache_bound(s.v[PCB_CA_SLOTS - 1]);
        int kept = 0;
        for (int q = 0; q < PCB_CA_SLOTS; q++) {
            CHECK(q == 0 || s.v[q - 1] <= s.v[q]);
            kept += s.j[q] != PCB_CA_NO_SLOT;
        }
        CHECK(kept == (count < PCB_CA_SLOTS ? count : PCB_CA_SLOTS));
        CHECK(count >= PCB_CA_SLOTS || bound == HUGE_VAL);
        for (int j = 0; j < count; j++) {
            int in_cache = 0;
            for (int q = 0; q < PCB_CA_SLOTS; q++)
                in_cache |= s.j[q] == j;
            CHECK(in_cache || exact[j] >= bound);
        }
        kept_total += kept;
        /* four offers at a time leave the same slots as one by one (the
         * GPU's scans; a last partial four padded with infinite prices) */
        pcb_ca_slots four = pcb_ca_slots_empty();
        for (int j0 = 0; j0 < count; j0 += 4) {
            float d2x[4], pfx[4];
            int32_t jx[4];
            for (int u = 0; u < 4; u++) {
                const int in = j0 + u < count;
                d2x[u] = in ? d2[j0 + u] : 0.0f;
                pfx[u] = in ? pf[j0 + u] : INFINITY;
                jx[u] = j0 + u;
            }
            pcb_ca_slots_offer4(&four, d2x, pfx, jx);
        }
        CHECK(!memcmp(four.v, s.v, sizeof s.v) && !memcmp(four.j, s.j, sizeof s.j));
    }
    CHECK(kept_total > 0);
    /* a bound with no margin would be wrong here: a value just below the
     * largest kept one, after float rounding of the price */
    pcb_ca_slots s = pcb_ca_slots_empty();
    for (int j = 0; j < PCB_CA_SLOTS; j++)
        pcb_ca_slots_offer(&s, 0.25f, 1.0f, j);
    CHECK(s.v[PCB_CA_SLOTS - 1] == 1.5f);
    CHECK(pcb_ca_cache_bound(1.5f) < 1.5 - 1e-7);
}

/* cuda_auction's rules on the CPU: on every kind of cloud, sizes 1 to 600,
 * the answer is a bijection whose prices certify the 0.1% promise (and the
 * exact solver confirms the gap); the kernel's own certificate agrees with
 * the validator's; and the order of the bidder lists changes nothing. */
static void test_cuda_auction_rules(void)
{
    /* the finish takes over from 8 bidders at n = 1024 to 2048, 4 elsewhere,
     * and never above PCB_CA_FINISH_MAX_N */
    CHECK(pcb_ca_finish_at(1023) == 4 && pcb_ca_finish_at(1024) == 8);
    CHECK(pcb_ca_finish_at(2048) == 8 && pcb_ca_finish_at(2049) == 4);
    CHECK(pcb_ca_finish_at(PCB_CA_FINISH_MAX_N + 1) == 0);
    static const struct {
        const char *a, *b;
        int64_t n;
    } cases[] = {{"uniform", "uniform", 1},    {"uniform", "sphere", 2},
                 {"uniform", "uniform", 3},    {"sphere", "sphere", 64},
                 {"uniform", "uniform", 300},  {"sphere", "sphere", 600},
                 {"clusters", "clusters", 400}, {"duplicates", "duplicates", 256},
                 {"lattice", "lattice", 200},  {"equal", "uniform", 100},
                 {"equal", "equal", 50},       {"collinear", "uniform", 200},
                 {"offset", "offset", 200},    {"clusters", "uniform", 333}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        instance in, again;
        pcb_result r, r2;
        const int64_t n = cases[k].n;
        CHECK_RC(instance_make(&in, cases[k].a, cases[k].b, 1, n, 40 + k), PCB_OK);
        replay_stats st = replay_instance(&in, 0, &r);
        pcb_report rep;
        CHECK_RC(pcb_emd_validate(&in.task, &r, 0, PCB_CA_MAX_GAP, &rep), PCB_OK);
        printf("cuda_auction rules %s/%s n=%lld: %lld bids, %lld rounds, %lld phases, "
               "%lld scans, %lld cache looks, %lld finished paths in %lld steps: %s\n",
               cases[k].a, cases[k].b, (long long)n, (long long)st.bids, (long long)st.rounds,
               (long long)st.phases, (long long)st.scans, (long long)st.checks,
               (long long)st.finishes, (long long)st.finish_steps, rep.detail);
        CHECK(rep.ok);
        /* every cache answer is a scan's, and caches save scans */
        CHECK(st.cache_wrong == 0);
        CHECK(n < 200 || (st.checks > 0 && st.scans < st.bids + st.phases * n));
        CHECK(rep.unmatched == 0 && rep.bound >= 0 && rep.bound <= PCB_CA_MAX_GAP);
        /* it stopped on its own float-cost certificate (not at the eps
         * floor), whose P is the validator's up to float costs */
        double extent = pcb_emd_cost_bound(in.a, in.b, n);
        CHECK(fabs(st.p / n - in.value[0]) <= 1e-6 * extent);
        CHECK(pcb_ca_proven(st.p, st.d, PCB_CA_TARGET));
        CHECK_RC(instance_make(&again, cases[k].a, cases[k].b, 1, n, 40 + k), PCB_OK);
        replay_instance(&again, 1234 + k, &r2);
        CHECK(memcmp(in.index, again.index, (size_t)n * sizeof *in.index) == 0);
        CHECK(memcmp(in.price, again.price, (size_t)n * sizeof *in.price) == 0);
        instance_free(&in);
        instance_free(&again);
    }
}

/* Loss mode: asked for a certified 1% or 5%, the auction stops as soon as
 * its certificate proves 0.9 of it; the answer is a bijection within the
 * bound, judged by the validator against that promise, found in fewer
 * rounds than at the default 0.1%, and the same whatever the order of the
 * bidders. */
static void test_cuda_auction_rules_loss(void)
{
    static const struct {
        const char *a, *b;
        int64_t batch, n;
    } cases[] = {{"sphere", "sphere", 1, 600}, {"uniform", "uniform", 1, 1000},
                 {"clusters", "uniform", 3, 300}};
    static const double gaps[] = {0.01, 0.05};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        instance tight;
        pcb_result rt;
        const int64_t n = cases[k].n, batch = cases[k].batch;
        CHECK_RC(instance_make(&tight, cases[k].a, cases[k].b, batch, n, 120 + k), PCB_OK);
        replay_stats at_default = replay_instance(&tight, 0, &rt);
        for (int g = 0; g < 2; g++) {
            instance in, again;
            pcb_result r, r2;
            CHECK_RC(instance_make(&in, cases[k].a, cases[k].b, batch, n, 120 + k), PCB_OK);
            in.task.opt.max_gap = gaps[g];
            replay_stats st = replay_instance(&in, 0, &r);
            pcb_report rep;
            const pcb_promise promise = pcb_promise_of(pcb_find(PCB_EMD, "cuda_auction"),
                                                       &in.task);
            CHECK(!pcb_find(PCB_EMD, "cuda_auction") || promise.max_gap == gaps[g]);
            CHECK_RC(pcb_emd_validate(&in.task, &r, 0, gaps[g], &rep), PCB_OK);
            printf("cuda_auction rules, certified %g%%, %s/%s batch %lld n=%lld: %lld rounds "
                   "(%lld at 0.1%%): %s\n", gaps[g] * 100, cases[k].a, cases[k].b,
                   (long long)batch, (long long)n, (long long)st.rounds,
                   (long long)at_default.rounds, rep.detail);
            CHECK(rep.ok && rep.unmatched == 0);
            CHECK(rep.bound >= 0 && rep.bound <= gaps[g]);
            CHECK(rep.gap < 0 || rep.gap <= rep.bound + 1e-9); /* gap: where it was computed */
            CHECK(pcb_ca_proven(st.p, st.d, 0.9 * gaps[g])); /* the last pair's certificate */
            CHECK(st.rounds <= at_default.rounds);
            /* the 0.1% promise is not what was asked: held to it, a loose answer fails */
            pcb_report strict;
            CHECK_RC(pcb_emd_validate(&in.task, &r, 0, 1e-6, &strict), PCB_OK);
            CHECK(!strict.ok || rep.bound <= 1e-6);
            CHECK_RC(instance_make(&again, cases[k].a, cases[k].b, batch, n, 120 + k), PCB_OK);
            again.task.opt.max_gap = gaps[g];
            replay_instance(&again, 99 + k, &r2);
            CHECK(memcmp(in.index, again.index, (size_t)(batch * n) * sizeof *in.index) == 0);
            instance_free(&in);
            instance_free(&again);
        }
        instance_free(&tight);
    }
}

/* A warm start (replay_pair_from: issue 71's first route, priced on the
 * replay by scripts/studies/emd_routes.c): from any prices, at any eps, the answer
 * is still a bijection certified within the target (D needs no
 * feasibility), whether the prices are near-optimal, noisy or another
 * pair's; and from a finished run's own prices it takes fewer rounds. */
static void test_cuda_auction_warm_start(void)
{
    const int64_t n = 300;
    instance cold;
    pcb_result rc;
    CHECK_RC(instance_make(&cold, "sphere", "sphere", 1, n, 131), PCB_OK);
    cold.task.opt.max_gap = 0.01;
    const replay_stats st0 = replay_instance(&cold, 0, &rc);
    double *start = malloc((size_t)n * sizeof *start);
    uint64_t seed = 7;
    for (int variant = 0; variant < 3; variant++) {
        instance warm;
        CHECK_RC(instance_make(&warm, "sphere", "sphere", 1, n, 131), PCB_OK);
        warm.task.opt.max_gap = 0.01;
        for (int64_t j = 0; j < n; j++) /* its own, its own noisy, or random (sphere: costs <= 2) */
            start[j] = variant == 0 ? cold.price[j]
                       : variant == 1 ? cold.price[j] * (1 + 0.2 * (unit_random(&seed) - 0.5))
                                      : 2 * unit_random(&seed);
        replay_stats st;
        CHECK(replay_pair_from(warm.a, warm.b, (int32_t)n, &warm.task.opt, 0, start, st0.eps, 0,
                               warm.index, warm.price, &st) == 0);
        warm.value[0] = pcb_emd_mean_matched(warm.a, warm.b, n, warm.index, NULL);
        pcb_result r = {.index = warm.index, .value = warm.value, .price = warm.price,
                        .has_price = 1};
        pcb_report rep;
        CHECK_RC(pcb_emd_validate(&warm.task, &r, 0, 0.01, &rep), PCB_OK);
        CHECK(rep.ok && rep.unmatched == 0 && rep.bound >= 0 && rep.bound <= 0.01);
        CHECK(pcb_ca_proven(st.p, st.d, 0.009));
        printf("cuda_auction warm start (%s prices), sphere n=%lld, 1%%: %lld rounds (cold %lld): "
               "%s\n", variant == 0 ? "its own" : variant == 1 ? "noisy" : "random",
               (long long)n, (long long)st.rounds, (long long)st0.rounds, rep.detail);
        if (variant == 0)
            CHECK(st.rounds < st0.rounds);
        CHECK(st.cold_rounds == -1 && st.restarts == 0); /* no budget: it ends warm */
        instance_free(&warm);
    }
    /* The budget (the rule for stale prices): random prices given a tenth
     * of the cold run's rounds start again cold and then are the cold run,
     * bit for bit; its own prices within the cold run's rounds end warm. */
    for (int variant = 0; variant < 2; variant++) {
        instance warm;
        CHECK_RC(instance_make(&warm, "sphere", "sphere", 1, n, 131), PCB_OK);
        warm.task.opt.max_gap = 0.01;
        for (int64_t j = 0; j < n; j++)
            start[j] = variant == 0 ? 2 * unit_random(&seed) : cold.price[j];
        const int64_t budget = variant == 0 ? st0.rounds / 10 : st0.rounds;
        replay_stats st;
        CHECK(replay_pair_from(warm.a, warm.b, (int32_t)n, &warm.task.opt, 0, start, st0.eps,
                               budget, warm.index, warm.price, &st) == 0);
        printf("cuda_auction warm start (%s prices) with a budget of %lld rounds: %lld restarts, "
               "%lld rounds, cold solve %lld (cold run %lld)\n",
               variant == 0 ? "random" : "its own", (long long)budget, (long long)st.restarts,
               (long long)st.rounds, (long long)st.cold_rounds, (long long)st0.rounds);
        if (variant == 0) {
            CHECK(st.restarts == 1 && st.cold_rounds == st0.rounds);
            CHECK(st.rounds == budget + st0.rounds);
            CHECK(memcmp(warm.index, cold.index, (size_t)n * sizeof *warm.index) == 0);
            CHECK(memcmp(warm.price, cold.price, (size_t)n * sizeof *warm.price) == 0);
        } else {
            CHECK(st.restarts == 0 && st.cold_rounds == -1);
        }
        instance_free(&warm);
    }
    /* A start that is not usable starts cold: eps 0, a price not finite, a
     * negative price. */
    for (int variant = 0; variant < 3; variant++) {
        instance warm;
        CHECK_RC(instance_make(&warm, "sphere", "sphere", 1, n, 131), PCB_OK);
        warm.task.opt.max_gap = 0.01;
        memcpy(start, cold.price, (size_t)n * sizeof *start);
        start[n / 2] = variant == 0 ? start[n / 2] : variant == 1 ? NAN : -1e-3;
        replay_stats st;
        CHECK(replay_pair_from(warm.a, warm.b, (int32_t)n, &warm.task.opt, 0, start,
                               variant == 0 ? 0.0 : st0.eps, 5, warm.index, warm.price,
                               &st) == 0);
        CHECK(st.restarts == 0 && st.cold_rounds == st0.rounds);
        CHECK(memcmp(warm.price, cold.price, (size_t)n * sizeof *warm.price) == 0);
        instance_free(&warm);
    }
    free(start);
    instance_free(&cold);
}

/* The eps step (pcb_ca_eps_next): 4 as a rule; longer, up to
 * PCB_CA_DIVISOR_MAX, only where a phase at eps / 4 is predicted to miss the
 * target and the longer one to reach it; never below the floor, and always
 * 4 with --eps (target 0), a certificate that proves nothing (d <= 0) or
 * above PCB_CA_SHARED_MAX_N points. On
 * the replay, sphere surfaces at 1% take such a step and end certified. */
static void test_cuda_auction_eps_step(void)
{
    const double target = 0.009, d = 100, quarter = 1.0 / PCB_CA_DIVISOR;
    CHECK(pcb_ca_eps_next(1, 1e-9, d * 1.5, d, target, 1024) == quarter);  /* far: 50% */
    CHECK(pcb_ca_eps_next(1, 1e-9, d * 1.03, d, target, 1024) == quarter); /* /4 reaches it */
    CHECK(pcb_ca_eps_next(1, 1e-9, d * 1.1, d, 0, 1024) == quarter);       /* --eps */
    CHECK(pcb_ca_eps_next(1, 1e-9, 5, -1, target, 1024) == quarter);       /* D <= 0 */
    CHECK(pcb_ca_eps_next(1, 0.2, d * 1.1, d, target, 1024) == 0.2);       /* the floor */
    double last = quarter;
    int longer = 0;
    for (double bound = 0.001; bound < 1; bound *= 1.01) {
        const double e = pcb_ca_eps_next(1, 1e-9, d * (1 + bound), d, target, 1024);
        /* above PCB_CA_SHARED_MAX_N (state in global memory): always 4 */
        CHECK(pcb_ca_eps_next(1, 1e-9, d * (1 + bound), d, target,
                              PCB_CA_SHARED_MAX_N + 1) == quarter);
        CHECK(e <= quarter && e >= 1 / PCB_CA_DIVISOR_MAX);
        if (PCB_CA_REACH > 0 && e < quarter) { /* the least step predicted to reach it */
            CHECK(fabs(e * bound / 2 - PCB_CA_REACH / 2 * target) <= 1e-12);
            CHECK(e <= last);
            longer++;
        }
        last = e < quarter ? e : last;
    }
    CHECK(PCB_CA_REACH <= 0 || longer > 0);
    int64_t steps = 0;
    for (int k = 0; k < 2; k++) {
        instance in;
        pcb_result r;
        pcb_report rep;
        CHECK_RC(instance_make(&in, "sphere", "sphere", 1, 1024, 150 + k), PCB_OK);
        in.task.opt.max_gap = 0.01;
        replay_stats st = replay_instance(&in, 0, &r);
        CHECK_RC(pcb_emd_validate(&in.task, &r, 0, 0.01, &rep), PCB_OK);
        printf("cuda_auction rules, 1%%, sphere n=1024: %lld phases, %lld long eps steps: %s\n",
               (long long)st.phases, (long long)st.long_steps, rep.detail);
        CHECK(rep.ok && rep.bound <= 0.01);
        steps += st.long_steps;
        instance_free(&in);
    }
    CHECK(PCB_CA_REACH <= 0 || steps >= 1);
}

/* The kernel's branch-free least two of four slots (and of eight, four by
 * four) gives what pcb_ca_take gives them one by one, in every order: ties
 * of value (to the lower j), equal least values (the second is the same
 * value), empty slots and infinite costs. */
static void test_cuda_auction_least_of4(void)
{
    uint64_t seed = 5;
    int64_t checked = 0;
    for (int trial = 0; trial < 20000; trial++) {
        double v[8];
        int32_t j[8];
        for (int q = 0; q < 8; q++) {
            const uint64_t r = replay_random(&seed);
            const int kind = (int)(r % 8);
            v[q] = kind == 0 ? HUGE_VAL : kind < 4 ? (double)(r >> 8 & 3) : (double)(r >> 8) * 1e-12;
            j[q] = kind == 0 && r % 16 == 0 ? INT32_MAX : (int32_t)(r >> 40 & 7); /* repeats too */
            if (j[q] == INT32_MAX)
                v[q] = HUGE_VAL; /* an empty slot */
        }
        const pcb_ca_best fast = pcb_ca_least_of4(v, j);
        static const int orders[][4] = {{0, 1, 2, 3}, {3, 2, 1, 0}, {1, 3, 0, 2}, {2, 0, 3, 1}};
        for (int o = 0; o < 4; o++) {
            pcb_ca_best slow = pcb_ca_none();
            for (int q = 0; q < 4; q++)
                if (j[orders[o][q]] != INT32_MAX)
                    pcb_ca_take(&slow, v[orders[o][q]], j[orders[o][q]]);
            CHECK(slow.w1 == fast.w1 && slow.j1 == fast.j1 && slow.w2 == fast.w2);
            checked++;
        }
        const pcb_ca_best fast8 = pcb_ca_least_of(v, j, 8);
        for (int o = 0; o < 2; o++) { /* forward and backward */
            pcb_ca_best slow = pcb_ca_none();
            for (int q = 0; q < 8; q++) {
                const int at = o ? 7 - q : q;
                if (j[at] != INT32_MAX)
                    pcb_ca_take(&slow, v[at], j[at]);
            }
            CHECK(slow.w1 == fast8.w1 && slow.j1 == fast8.j1 && slow.w2 == fast8.w2);
            checked++;
        }
    }
    printf("least of four and eight: %lld orders checked against pcb_ca_take\n", (long long)checked);
}

/* The finish's float offer test (pcb_ca_finish_beyond) turns away only
 * offers that cannot take an object's key: offers built at the threshold
 * (costs a few ulps either side), at scales from 1e-6 to 1e3, with prices
 * and values up to a thousand times the dists, and dists of 0. */
static void test_cuda_auction_finish_beyond(void)
{
    uint64_t seed = 11;
    int64_t turned = 0, kept = 0, near = 0;
    for (int trial = 0; trial < 400000; trial++) {
        const uint64_t r = replay_random(&seed);
        const double scale = pow(10.0, (double)(r % 10) - 6.0), wide = r >> 8 & 1 ? 1.0 : 1000.0;
        const double ds = unit_random(&seed) * scale, pj = unit_random(&seed) * scale * wide,
                     u = unit_random(&seed) * scale * (wide + 1.0);
        const double dist = r >> 9 & 15 ? ds + unit_random(&seed) * scale : 0.0;
        const unsigned long long best = pcb_ca_finish_key(dist, (int32_t)(r >> 16 & 1023) - 1);
        const double db = pcb_ca_finish_dist(best);
        const float thr = pcb_ca_finish_reach(db, pj) +
                          pcb_ca_finish_above(u - ds, fabs(u) + fabs(ds));
        /* a cost at the exact threshold, then moved a few ulps or far */
        const double at = db - pj + u - ds;
        float c = at > 0 ? (float)at : 0.0f;
        const int ulps = (int)(r >> 20 & 63) - 32;
        for (int k = 0; k < (ulps < 0 ? -ulps : ulps); k++)
            c = nextafterf(c, ulps < 0 ? 0.0f : INFINITY);
        if ((r >> 27 & 7) == 0)
            c *= (float)(1.0 + 4.0 * unit_random(&seed));
        float d2 = c * c;
        d2 = (r >> 30 & 1) ? nextafterf(d2, INFINITY) : nextafterf(d2, 0.0f);
        const unsigned long long k = pcb_ca_finish_offer(ds, sqrtf(d2), pj, u, (int32_t)(r >> 32 & 1023));
        if (pcb_ca_finish_beyond(d2, thr)) {
            CHECK(k > best);
            turned++;
            near += ulps != 0 && (r >> 27 & 7) != 0 && fabs(sqrtf(d2) - at) < 1e-5 * (fabs(at) + 1e-30);
        } else {
            kept++;
        }
    }
    printf("finish offer test: %lld offers turned away (%lld within 1e-5 of the threshold), "
           "%lld kept\n", (long long)turned, (long long)near, (long long)kept);
    CHECK(turned > 10000 && kept > 10000 && near > 1000);
}

/* The dual ascent alone, from the prices a coarse auction ends with: the
 * prices it returns certify a tighter bound (the validator's double
 * recomputation), its D' is what they prove, and D' stays below the
 * optimum. And in the auction it stops some pairs a phase early (answers
 * the validator accepts). */
static void test_cuda_auction_ascent(void)
{
    static const char *const kinds[][2] = {
        {"uniform", "uniform"}, {"sphere", "sphere"}, {"clusters", "uniform"}};
    for (int k = 0; k < 3; k++) {
        const int32_t n = 300;
        instance in, ref;
        pcb_result r, rr;
        CHECK_RC(instance_make(&in, kinds[k][0], kinds[k][1], 1, n, 130 + k), PCB_OK);
        CHECK_RC(instance_make(&ref, kinds[k][0], kinds[k][1], 1, n, 130 + k), PCB_OK);
        in.task.opt.eps = pcb_emd_cost_bound(in.a, in.b, n) / 512; /* no ascent with --eps */
        replay_stats st = replay_instance(&in, 0, &r);
        CHECK(st.ascents == 0);
        double before, after;
        CHECK_RC(pcb_emd_bound(&in.task, &r, &before), PCB_OK);
        double *q = malloc(n * sizeof *q), *gap = malloc(n * sizeof *gap),
               *u = malloc(n * sizeof *u);
        int32_t *demanders = malloc(n * sizeof *demanders);
        replay_cache none = {NULL, NULL};
        replay_stats ast = {0};
        const double d = replay_ascent(in.a, in.b, n, in.price, &none, &ast, q, demanders, gap, u);
        pcb_result rq = r;
        rq.price = q;
        CHECK_RC(pcb_emd_bound(&in.task, &rq, &after), PCB_OK);
        CHECK_RC(run(&pcb_emd_exact, &ref, &rr), PCB_OK);
        const double p = ref.value[0] * n;
        printf("dual ascent %s/%s n=%d: bound %.3f%% -> %.3f%%, D' %.9g <= optimum %.9g\n",
               kinds[k][0], kinds[k][1], n, 100 * before, 100 * after, d, p);
        CHECK(after < 0.8 * before);
        CHECK(d <= p * (1 + 1e-6));
        /* D' is what the returned prices prove (float costs against double) */
        const double p_match = in.value[0] * n;
        CHECK(fabs((p_match - d) / d - after) <= 1e-5);
        free(q), free(gap), free(u), free(demanders);
        instance_free(&in);
        instance_free(&ref);
    }
    /* In the auction: tried where a phase's certificate misses narrowly, it
     * stops some of these pairs a phase early (the finish's prices certify
     * the others without it) */
    int64_t stops = 0;
    for (int k = 0; k < 4; k++) {
        instance in;
        pcb_result r;
        pcb_report rep;
        const char *kind = k < 2 ? "uniform" : "sphere";
        const double gap = k < 2 ? 0.01 : 0.001;
        CHECK_RC(instance_make(&in, kind, kind, 1, 700, 140 + k), PCB_OK);
        in.task.opt.max_gap = gap;
        replay_stats st = replay_instance(&in, 0, &r);
        CHECK_RC(pcb_emd_validate(&in.task, &r, 0, gap, &rep), PCB_OK);
        CHECK(rep.ok && rep.bound <= gap);
        printf("cuda_auction rules, %g%%, %s n=700: %lld rounds, %lld phases, %lld ascents, "
               "%s: %s\n", 100 * gap, kind, (long long)st.rounds, (long long)st.phases,
               (long long)st.ascents, st.ascent_stops ? "stopped by one" : "not stopped by one",
               rep.detail);
        stops += st.ascent_stops;
        instance_free(&in);
    }
    CHECK(stops >= 1);
}

/* With --eps the phases run down to that eps: the total is within n eps of
 * the optimum and the certificate proves as much. */
static void test_cuda_auction_rules_eps(void)
{
    for (int k = 0; k < 3; k++) {
        instance in, ref;
        pcb_result r, rr;
        CHECK_RC(instance_make(&in, "sphere", "clusters", 1, 200, 70 + k), PCB_OK);
        CHECK_RC(instance_make(&ref, "sphere", "clusters", 1, 200, 70 + k), PCB_OK);
        double extent = pcb_emd_cost_bound(in.a, in.b, 200);
        in.task.opt.eps = (k == 0 ? 1e-2 : k == 1 ? 1e-4 : 1e-8) * extent;
        replay_stats st = replay_instance(&in, 0, &r);
        CHECK_RC(run(&pcb_emd_exact, &ref, &rr), PCB_OK);
        CHECK(in.value[0] >= ref.value[0] - 1e-12);
        CHECK(in.value[0] - ref.value[0] <= in.task.opt.eps + 1e-6 * extent);
        CHECK((st.p - st.d) / 200 <= in.task.opt.eps + 1e-6 * extent);
        instance_free(&in);
        instance_free(&ref);
    }
}

/* Where it is built: the limits hold without a device; with one, the kernel
 * gives its replay's matching and prices bit for bit, in shared memory and
 * (n above what fits there) in global memory, batch 1 to 4, a block or a
 * team of blocks a pair. */
/* Blocks a pair, as a test's line says it: a number, or the default. */
static const char *team_words(int ctas)
{
    static const char *const words[] = {"as the batch gives", "1", "2", "3", "4", "5", "6", "7", "8"};
    return ctas >= 0 && ctas <= 8 ? words[ctas] : "?";
}

static void test_cuda_auction(void)
{
    const pcb_impl *cuda = pcb_find(PCB_EMD, "cuda_auction");
    if (!cuda) {
        SKIP_NOT_BUILT("cuda_auction: not built");
    }
    instance in;
    CHECK_RC(instance_make(&in, "uniform", "uniform", 1, 100, 5), PCB_OK);
    in.task.opt.eps = 1e-12; /* below 1e-10 of the extent: refused before any device call */
    void *state = NULL;
    CHECK_RC(cuda->prepare(&in.task, &state), PCB_EUNSUPPORTED);
    CHECK(state == NULL);
    instance_free(&in);
    if (pcb_impl_available(cuda) != PCB_OK) {
        SKIP("cuda_auction: no CUDA device, runs not run");
    }
    static const struct {
        const char *a, *b;
        int64_t batch, n;
        double eps, max_gap;
    } cases[] = {{"uniform", "uniform", 1, 1, 0, 0},       {"uniform", "sphere", 3, 3, 0, 0},
                 {"sphere", "sphere", 1, 1000, 0, 0},     {"clusters", "uniform", 3, 700, 0, 0},
                 {"duplicates", "lattice", 1, 512, 0, 0}, {"equal", "uniform", 2, 100, 0, 0},
                 {"sphere", "clusters", 1, 300, 1e-4, 0}, {"uniform", "uniform", 1, 4096, 0, 0},
                 {"uniform", "sphere", 1, 4900, 0, 0},    {"sphere", "sphere", 2, 1024, 0, 0.01},
                 {"uniform", "uniform", 3, 2048, 0, 0.05}, {"uniform", "uniform", 4, 1000, 0, 0.01},
                 {"sphere", "uniform", 32, 1024, 0, 0.01}, {"uniform", "uniform", 2, 4800, 0, 0.01},
                 /* the finish from 8 bidders (n = 1024 to 2048), at the default bound */
                 {"sphere", "uniform", 1, 1500, 0, 0},
                 /* the finish's stage: by chunks of 77; none (offers read their objects) */
                 {"sphere", "sphere", 1, 4680, 0, 0.01},  {"uniform", "sphere", 1, 4757, 0, 0.01}};
    /* Blocks a pair (the team): as the batch gives them (up to 8 here), 3,
     * and one. */
    static const int teams[] = {0, 3, 1};
    enum { CASES = sizeof cases / sizeof cases[0] };
    /* The replays first, side by side (serially they take minutes). */
    instance replayed[CASES];
    replay_stats stats[CASES];
    int made[CASES];
    for (size_t k = 0; k < CASES; k++) {
        made[k] = instance_make(&replayed[k], cases[k].a, cases[k].b, cases[k].batch, cases[k].n,
                                90 + k) == PCB_OK;
        CHECK(made[k]);
        if (made[k])
            replayed[k].task.opt.eps = cases[k].eps, replayed[k].task.opt.max_gap = cases[k].max_gap;
    }
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t k = 0; k < CASES; k++)
        if (made[k]) {
            pcb_result unused;
            stats[k] = replay_instance(&replayed[k], 0, &unused);
        }
    for (size_t k = 0; k < CASES; k++) {
        if (!made[k])
            continue;
        instance cpu = replayed[k];
        const int64_t n = cases[k].n, all = cases[k].batch * n;
        const replay_stats st = stats[k];
        /* the same scans and cache looks: the kernel's caches are the replay's */
        const int64_t evals = st.scans * n + st.checks * pcb_ca_cache_evals(n) + st.finish_evals;
        for (size_t t = 0; t < sizeof teams / sizeof teams[0]; t++) {
            instance gpu;
            CHECK_RC(instance_make(&gpu, cases[k].a, cases[k].b, cases[k].batch, n, 90 + k), PCB_OK);
            gpu.task.opt.eps = cases[k].eps;
            gpu.task.opt.max_gap = cases[k].max_gap;
            pcb_counters counters;
            pcb_result rg = {.index = gpu.index, .value = gpu.value, .price = gpu.price};
            gpu.task.opt.emd_ctas = teams[t];
            CHECK_RC(pcb_run(cuda, &gpu.task, &rg, &counters), PCB_OK);
            pcb_report rep;
            CHECK_RC(pcb_emd_validate(&gpu.task, &rg, 0,
                                      cases[k].max_gap > 0 ? cases[k].max_gap : PCB_CA_MAX_GAP,
                                      &rep),
                     PCB_OK);
            const int same =
                memcmp(gpu.index, cpu.index, (size_t)all * sizeof *gpu.index) == 0 &&
                memcmp(gpu.price, cpu.price, (size_t)all * sizeof *gpu.price) == 0;
            printf("cuda_auction %s/%s batch %lld n=%lld, blocks a pair %s: %s; %s its CPU "
                   "replay; %lld costs evaluated (replay %lld), %lld long eps steps\n",
                   cases[k].a, cases[k].b, (long long)cases[k].batch, (long long)n,
                   team_words(teams[t]), rep.detail,
                   same ? "same as" : "DIFFERS from", (long long)counters.distance_evals,
                   (long long)evals, (long long)st.long_steps);
            CHECK(rep.ok);
            CHECK(same);
            CHECK(counters.distance_evals == evals && counters.bids == st.bids);
            instance_free(&gpu);
        }
        CHECK(st.cache_wrong == 0);
        instance_free(&cpu);
    }
}

/* cuda_auction's warm start (pcb_emd_warm) against its replay, bit for
 * bit: in each batch a pair from its own cold prices (ends warm), one from
 * random prices on a tight budget (drops them and runs cold), one at eps 0
 * (cold), one with a price that is not finite (cold); the outputs (prices,
 * last eps, budget) are the replay's. Other implementations say
 * unsupported; the arguments are checked without a device. */
/* The cold start (pcb_ca_column_price): its prices are the column
 * reduction shifted to a least price of 0 (checked in double against the
 * costs), both starts certify, and on a collapsed prediction (every point
 * of A near one spot, as an untrained decoder's) the column start needs
 * fewer rounds than the zero start; on the GPU, with the zero start
 * (opt.emd_start -1), the kernel is still its replay bit for bit. */
static void test_cuda_auction_column_start(void)
{
    const int64_t n = 600;
    instance in;
    CHECK_RC(instance_make(&in, "uniform", "sphere", 2, n, 71), PCB_OK);
    for (int64_t k = 0; k < 3 * n; k++) /* pair 0: A shrunk to 3% of its extent, off centre */
        in.a[k] = 0.3f + 0.03f * in.a[k];
    in.task.opt.max_gap = 0.01;
    replay_stats st[2][2];
    for (int zero = 0; zero < 2; zero++) {
        in.task.opt.emd_start = zero ? -1 : 0;
        for (int p = 0; p < 2; p++) {
            const float *a = in.a + p * n * 3, *b = in.b + p * n * 3;
            CHECK(replay_pair(a, b, (int32_t)n, &in.task.opt, 0, in.index + p * n,
                              in.price + p * n, &st[zero][p]) == 0);
            in.value[p] = pcb_emd_mean_matched(a, b, n, in.index + p * n, NULL);
        }
        in.task.opt.emd_start = 0;
        pcb_result r = {.index = in.index, .value = in.value, .price = in.price, .has_price = 1};
        pcb_report rep;
        CHECK_RC(pcb_emd_validate(&in.task, &r, 0, 0.01, &rep), PCB_OK);
        CHECK(rep.ok && rep.unmatched == 0);
        printf("cuda_auction %s start, n=%lld, 1%%: collapsed A %lld rounds, sphere %lld: %s\n",
               zero ? "zero" : "column", (long long)n, (long long)st[zero][0].rounds,
               (long long)st[zero][1].rounds, rep.detail);
    }
    CHECK(st[0][0].rounds * 2 < st[1][0].rounds);
    /* the start itself: greatest_j min_i c_ij - min_i c_ij, in double */
    double least[600], greatest = 0, worst = 0, lowest = HUGE_VAL;
    double *start = malloc((size_t)n * sizeof *start);
    for (int64_t j = 0; j < n; j++) {
        least[j] = HUGE_VAL;
        for (int64_t i = 0; i < n; i++) {
            const double dx = (double)in.a[3 * i] - in.b[3 * j],
                         dy = (double)in.a[3 * i + 1] - in.b[3 * j + 1],
                         dz = (double)in.a[3 * i + 2] - in.b[3 * j + 2];
            least[j] = fmin(least[j], sqrt(dx * dx + dy * dy + dz * dz));
        }
        greatest = fmax(greatest, least[j]);
    }
    /* the replay's (the kernel's, bit for bit), against it */
    replay_column_prices(in.a, in.b, (int32_t)n, start);
    for (int64_t j = 0; j < n; j++) {
        worst = fmax(worst, fabs(start[j] - (greatest - least[j])));
        lowest = fmin(lowest, start[j]);
    }
    CHECK(lowest == 0 && worst < 1e-6 * greatest);
    free(start);
    const pcb_impl *cuda = pcb_find(PCB_EMD, "cuda_auction");
    if (!cuda) {
        instance_free(&in);
        SKIP_NOT_BUILT("cuda_auction: not built");
    }
    if (pcb_impl_available(cuda) != PCB_OK) {
        instance_free(&in);
        SKIP("cuda_auction: no CUDA device, the replay's side only");
    }
    /* the zero start on the GPU against its replay (test_cuda_auction
     * covers the column start) */
    static const struct {
        const char *a, *b;
        int64_t batch, n;
    } cases[] = {{"sphere", "sphere", 2, 1000}, {"uniform", "sphere", 2, 4800}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        instance cpu, gpu;
        pcb_result rc, rg;
        CHECK_RC(instance_make(&cpu, cases[k].a, cases[k].b, cases[k].batch, cases[k].n, 61 + k),
                 PCB_OK);
        CHECK_RC(instance_make(&gpu, cases[k].a, cases[k].b, cases[k].batch, cases[k].n, 61 + k),
                 PCB_OK);
        cpu.task.opt.max_gap = gpu.task.opt.max_gap = 0.01;
        cpu.task.opt.emd_start = gpu.task.opt.emd_start = -1;
        replay_instance(&cpu, 0, &rc);
        rg = (pcb_result){.index = gpu.index, .value = gpu.value, .price = gpu.price};
        CHECK_RC(pcb_run(cuda, &gpu.task, &rg, NULL), PCB_OK);
        const size_t all = (size_t)(cases[k].batch * cases[k].n);
        const int same = memcmp(gpu.index, cpu.index, all * sizeof *gpu.index) == 0 &&
                         memcmp(gpu.price, cpu.price, all * sizeof *gpu.price) == 0;
        printf("cuda_auction zero start %s/%s batch %lld n=%lld: %s its CPU replay\n", cases[k].a,
               cases[k].b, (long long)cases[k].batch, (long long)cases[k].n,
               same ? "same as" : "DIFFERS from");
        CHECK(same);
        instance_free(&cpu);
        instance_free(&gpu);
    }
    instance_free(&in);
}

static void test_cuda_auction_warm(void)
{
    instance in;
    CHECK_RC(instance_make(&in, "uniform", "uniform", 1, 50, 3), PCB_OK);
    double price[50] = {0}, eps = 0.01;
    int64_t budget = 0;
    pcb_task t = in.task;
    t.warm.price = price;
    const pcb_impl *cpu = pcb_find(PCB_EMD, "auction");
    pcb_result r = {.index = in.index};
    CHECK_RC(pcb_run(cpu, &t, &r, NULL), PCB_EINVAL); /* eps missing */
    t.warm.eps = &eps;
    CHECK_RC(pcb_run(cpu, &t, &r, NULL), PCB_EUNSUPPORTED);
    int64_t lengths[1] = {50};
    t.lengths_a = lengths;
    CHECK_RC(pcb_task_check(&t), PCB_EUNSUPPORTED);
    t.lengths_a = NULL;
    pcb_task nn = {.problem = PCB_NN, .batch = 1, .n = 50, .nq = 50, .a = in.a, .b = in.b};
    nn.warm.budget = &budget;
    CHECK_RC(pcb_task_check(&nn), PCB_EINVAL);
    instance_free(&in);
    const pcb_impl *cuda = pcb_find(PCB_EMD, "cuda_auction");
    if (!cuda) {
        SKIP_NOT_BUILT("cuda_auction: not built");
    }
    CHECK(pcb_impl_warm(cuda) && !pcb_impl_warm(cpu));
    /* without a device, the replay's side of the first case alone */
    const int device = pcb_impl_available(cuda) == PCB_OK;
    static const struct {
        const char *a, *b;
        int64_t n;
    } cases[] = {{"sphere", "sphere", 1000}, {"uniform", "sphere", 4800}};
    static const int teams[] = {0, 1};
    enum { PAIRS = 4 };
    for (size_t k = 0; k < (device ? sizeof cases / sizeof cases[0] : 1); k++) {
        const int64_t n = cases[k].n, all = PAIRS * n;
        instance cold;
        CHECK_RC(instance_make(&cold, cases[k].a, cases[k].b, PAIRS, n, 40 + k), PCB_OK);
        cold.task.opt.max_gap = 0.01;
        replay_stats cold_st[PAIRS];
        replay_pairs(&cold, 0, cold_st);
        double *start = malloc((size_t)all * sizeof *start), *want = malloc((size_t)all * sizeof *want);
        int32_t *want_match = malloc((size_t)all * sizeof *want_match);
        double start_eps[PAIRS], want_eps[PAIRS];
        int64_t start_budget[PAIRS], want_budget[PAIRS];
        uint64_t seed = 11 + k;
        for (int p = 0; p < PAIRS; p++) {
            const replay_stats st = cold_st[p];
            for (int64_t j = 0; j < n; j++)
                start[p * n + j] = p == 1 ? 2 * unit_random(&seed) : cold.price[p * n + j];
            if (p == 3) /* two prices a warm start cannot take */
                start[p * n + n / 3] = INFINITY, start[p * n + n / 2] = -0.5;
            start_eps[p] = p == 2 ? 0 : st.eps;
            start_budget[p] = p == 1 ? st.rounds / 8 : st.rounds;
        }
        replay_stats from_st[PAIRS];
        int from_rc[PAIRS];
#pragma omp parallel for schedule(dynamic, 1)
        for (int p = 0; p < PAIRS; p++) /* the replay's answers from the starts */
            from_rc[p] = replay_pair_from(cold.a + p * n * 3, cold.b + p * n * 3, (int32_t)n,
                                          &cold.task.opt, 0, start + p * n, start_eps[p],
                                          start_budget[p], want_match + p * n, want + p * n,
                                          &from_st[p]);
        for (int p = 0; p < PAIRS; p++) {
            const replay_stats st = from_st[p];
            CHECK(from_rc[p] == 0);
            want_eps[p] = st.eps;
            want_budget[p] = st.cold_rounds >= 0 ? st.cold_rounds : start_budget[p];
            CHECK(st.restarts == (p == 1));
            CHECK((st.cold_rounds < 0) == (p == 0));
        }
        for (size_t tm = 0; device && tm < sizeof teams / sizeof teams[0]; tm++) {
            instance gpu;
            CHECK_RC(instance_make(&gpu, cases[k].a, cases[k].b, PAIRS, n, 40 + k), PCB_OK);
            gpu.task.opt.max_gap = 0.01;
            double *wp = malloc((size_t)all * sizeof *wp), we[PAIRS];
            int64_t wb[PAIRS];
            memcpy(wp, start, (size_t)all * sizeof *wp);
            memcpy(we, start_eps, sizeof we);
            memcpy(wb, start_budget, sizeof wb);
            gpu.task.warm = (pcb_emd_warm){wp, we, wb};
            pcb_result rg = {.index = gpu.index, .value = gpu.value, .price = gpu.price};
            gpu.task.opt.emd_ctas = teams[tm];
            CHECK_RC(pcb_run(cuda, &gpu.task, &rg, NULL), PCB_OK);
            pcb_report rep;
            CHECK_RC(pcb_emd_validate(&gpu.task, &rg, 0, 0.01, &rep), PCB_OK);
            const int same = memcmp(gpu.index, want_match, (size_t)all * sizeof *gpu.index) == 0 &&
                             memcmp(gpu.price, want, (size_t)all * sizeof *want) == 0 &&
                             memcmp(wp, want, (size_t)all * sizeof *want) == 0 &&
                             memcmp(we, want_eps, sizeof we) == 0 &&
                             memcmp(wb, want_budget, sizeof wb) == 0;
            printf("cuda_auction warm start %s/%s batch %d n=%lld, blocks a pair %s: %s; %s its "
                   "CPU replay (budgets out %lld %lld %lld %lld)\n",
                   cases[k].a, cases[k].b, PAIRS, (long long)n, team_words(teams[tm]),
                   rep.detail, same ? "same as" : "DIFFERS from", (long long)wb[0],
                   (long long)wb[1], (long long)wb[2], (long long)wb[3]);
            CHECK(rep.ok && same);
            free(wp);
            instance_free(&gpu);
        }
        free(start), free(want), free(want_match);
        instance_free(&cold);
    }
    if (!device) {
        SKIP("cuda_auction: no CUDA device, the replay's side only");
    }
}

TEST_MAIN(T(test_exact_matches_brute_force), T(test_cpu_implementations),
          T(test_auctions_within_eps), T(test_certificate_bounds_gap),
          T(test_omp_same_for_every_thread_count), T(test_validator_rejects), T(test_huge_prices_certify_nothing),
          T(test_invalid_arguments), T(test_seed_point_counts), T(test_cuda_auction_match),
          T(test_cuda_auction_rules), T(test_cuda_auction_rules_loss), T(test_cuda_auction_rules_eps),
          T(test_cuda_auction_warm_start), T(test_cuda_auction_warm),
          T(test_cuda_auction_column_start),
          T(test_cuda_auction_eps_step),
          T(test_cuda_auction_ascent), T(test_cuda_auction_least_of4),
          T(test_cuda_auction_finish_beyond),
          T(test_cuda_auction_cache_bound), T(test_cuda_auction))
