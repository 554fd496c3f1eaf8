/* test_chamfer.c - chamfer distance: every implementation against naive,
 * the values of each convention on a cloud worked by hand, the validator
 * rejecting wrong answers of each kind, argument checks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/cloud.h"
#include "impl/chamfer/chamfer.h"
#include "impl/pcbench_judge.h"
#include "testlib.h"

typedef struct {
    pcb_task task;
    float *a, *b;
} pair;

static pair make_pair(const char *kind_a, const char *kind_b, int64_t n, int64_t nq,
                      int64_t batch, int same_seed)
{
    pair p = {.task = {.problem = PCB_CHAMFER, .batch = batch, .n = n, .nq = nq}};
    p.a = malloc((size_t)(batch * n * 3) * sizeof(float));
    p.b = malloc((size_t)(batch * nq * 3) * sizeof(float));
    for (int64_t k = 0; k < batch; k++) {
        pcb_cloud c;
        CHECK_RC(pcb_generate(kind_a, n, 20 + 2 * (uint64_t)k, &c), PCB_OK);
        memcpy(p.a + k * n * 3, c.xyz, (size_t)n * 3 * sizeof(float));
        pcb_cloud_free(&c);
        CHECK_RC(pcb_generate(kind_b, nq, 20 + 2 * (uint64_t)k + !same_seed, &c), PCB_OK);
        memcpy(p.b + k * nq * 3, c.xyz, (size_t)nq * 3 * sizeof(float));
        pcb_cloud_free(&c);
    }
    p.task.a = p.a, p.task.b = p.b;
    return p;
}

static void free_pair(pair *p)
{
    free(p->a), free(p->b);
}

static int available(const pcb_impl *impl)
{
    return pcb_impl_available(impl) == PCB_OK;
}

/* Every implementation: right by the validator, and the same distances as
 * naive's bit for bit (all compute (p - q)^2 with the same rounding). */
static void test_every_impl_matches_naive(void)
{
    pair sets[] = {make_pair("uniform", "sphere", 700, 500, 3, 0),
                   make_pair("duplicates", "duplicates", 800, 800, 1, 1),
                   make_pair("offset", "offset", 600, 400, 2, 0),
                   make_pair("uniform", "uniform", 1, 9, 2, 0),
                   make_pair("sphere", "uniform", 5000, 4000, 2, 0)};
    const pcb_impl *naive = pcb_find(PCB_CHAMFER, "naive");
    CHECK(naive && naive->reference);
    int ran = 0;
    for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
        const pcb_impl *impl = *it;
        if (impl->problem != PCB_CHAMFER || !available(impl))
            continue;
        ran++;
        for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
            const pcb_task *t = &sets[s].task;
            pcb_result want, got;
            CHECK_RC(pcb_result_alloc(t, &want), PCB_OK);
            CHECK_RC(pcb_result_alloc(t, &got), PCB_OK);
            CHECK_RC(pcb_run(naive, t, &want, NULL), PCB_OK);
            pcb_counters c;
            CHECK_RC(pcb_run(impl, t, &got, &c), PCB_OK);
            const size_t count = (size_t)pcb_answer_count(t);
            CHECK(memcmp(want.dist2, got.dist2, count * sizeof *got.dist2) == 0);
            for (int64_t b = 0; b < t->batch; b++)
                CHECK(fabs(want.value[b] - got.value[b]) <= 1e-12 * want.value[b]);
            CHECK(c.distance_evals > 0 || !impl->counters); /* the grid counts none */
            pcb_report rep;
            CHECK_RC(pcb_validate(impl, t, &got, &rep), PCB_OK);
            if (!rep.ok)
                fprintf(stderr, "%s on set %zu: %s\n", impl->name, s, rep.detail);
            CHECK(rep.ok);
            pcb_result_free(&want), pcb_result_free(&got);
        }
    }
    CHECK(ran >= 3); /* naive, omp, kdtree are always built */
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++)
        free_pair(&sets[s]);
}

/* A = {(0,0,0), (2,0,0)}, B = {(0,0,1)}: A's squared distances 1 and 5, B's
 * 1. Euclidean: 1, sqrt 5; 1. */
static void test_conventions_by_hand(void)
{
    const float a[] = {0, 0, 0, 2, 0, 0}, b[] = {0, 0, 1};
    pcb_task t = {.problem = PCB_CHAMFER, .batch = 1, .n = 2, .nq = 1, .a = a, .b = b};
    int32_t idx[3];
    float d2[3];
    double value = 0;
    CHECK_RC(pcb_chamfer(a, b, 1, 2, 1, idx, d2, &value), PCB_OK);
    CHECK(idx[0] == 0 && idx[1] == 0 && idx[2] == 0);
    CHECK(d2[0] == 1 && d2[1] == 5 && d2[2] == 1);
    CHECK(value == 4); /* (1 + 5) / 2 + 1 */
    const double r5 = sqrt(5.0);
    const struct {
        const char *name;
        double want;
    } cases[] = {{"squared-mean-sum", 4},         {"squared-sum-sum", 7},
                 {"squared-mean-average", 2},     {"squared-mean-forward", 3},
                 {"squared-sum-forward", 6},      {"euclidean-mean-sum", (1 + r5) / 2 + 1},
                 {"euclidean-mean-average", ((1 + r5) / 2 + 1) / 2},
                 {"euclidean-sum-forward", 1 + r5}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pcb_chamfer_convention c;
        char back[32];
        CHECK_RC(pcb_chamfer_convention_parse(cases[i].name, &c), PCB_OK);
        CHECK(strcmp(pcb_chamfer_convention_name(&c, back, sizeof back), cases[i].name) == 0);
        CHECK_RC(pcb_chamfer_values(&t, d2, &c, &value), PCB_OK);
        CHECK(fabs(value - cases[i].want) < 1e-12);
        double truth = 0;
        int ok = 0;
        CHECK_RC(pcb_chamfer_check_value(&t, cases[i].want, &c, &truth, &ok), PCB_OK);
        CHECK(ok && fabs(truth - cases[i].want) < 1e-12);
        CHECK_RC(pcb_chamfer_check_value(&t, cases[i].want * 1.001, &c, &truth, &ok), PCB_OK);
        CHECK(!ok);
    }
    static const char *const bad[] = {"", "squared", "squared-mean", "cubed-mean-sum",
                                      "squared-mean-sum-x", "squared-median-sum",
                                      "squared-mean-both", "Squared-mean-sum"};
    pcb_chamfer_convention c;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_RC(pcb_chamfer_convention_parse(bad[i], &c), PCB_EINVAL);
    CHECK_RC(pcb_chamfer_convention_parse(NULL, &c), PCB_EINVAL);
}

/* Planted wrong answers of each kind, in either direction: an index out of
 * range, a point not nearest, a distance that is not the point's, a wrong
 * value; and a tie (any nearest point) accepted. */
static void test_validator_rejects_wrong_answers(void)
{
    pair p = make_pair("uniform", "clusters", 500, 300, 2, 0);
    const pcb_task *t = &p.task;
    const pcb_impl *naive = pcb_find(PCB_CHAMFER, "naive");
    pcb_result good, bad;
    CHECK_RC(pcb_result_alloc(t, &good), PCB_OK);
    CHECK_RC(pcb_result_alloc(t, &bad), PCB_OK);
    CHECK_RC(pcb_run(naive, t, &good, NULL), PCB_OK);
    const size_t count = (size_t)pcb_answer_count(t);
    pcb_report rep;
    CHECK_RC(pcb_chamfer_validate(t, &good, &rep), PCB_OK);
    CHECK(rep.ok);
    const int64_t at[] = {7, t->batch * t->n + 5}; /* one of A's points, one of B's */
    for (int k = 0; k < 2; k++) {
        const int64_t other = k ? t->n : t->nq;
        for (int kind = 0; kind < 4; kind++) {
            memcpy(bad.index, good.index, count * sizeof *bad.index);
            memcpy(bad.dist2, good.dist2, count * sizeof *bad.dist2);
            memcpy(bad.value, good.value, (size_t)t->batch * sizeof *bad.value);
            if (kind == 0)
                bad.index[at[k]] = (int32_t)other;
            else if (kind == 1) /* another point, its own distance: not nearest */
                bad.index[at[k]] = (bad.index[at[k]] + 1) % (int32_t)other;
            else if (kind == 2)
                bad.dist2[at[k]] *= 1.01f;
            else
                bad.value[1] *= 1.001;
            if (kind == 1) { /* the distance of the point given, so only nearness is wrong */
                const float *x = k ? t->b + 3 * (at[k] - t->batch * t->n) : t->a + 3 * at[k];
                const float *y = (k ? t->a : t->b) + 3 * bad.index[at[k]];
                const float dx = x[0] - y[0], dy = x[1] - y[1], dz = x[2] - y[2];
                bad.dist2[at[k]] = dx * dx + dy * dy + dz * dz;
            }
            CHECK_RC(pcb_chamfer_validate(t, &bad, &rep), PCB_OK);
            if (rep.ok)
                fprintf(stderr, "direction %d, wrong answer %d accepted\n", k, kind);
            CHECK(!rep.ok);
        }
    }
    pcb_result_free(&good), pcb_result_free(&bad);
    free_pair(&p);
    /* ties: B's one point twice; A's point may take either */
    const float a[] = {0, 0, 0}, b[] = {1, 0, 0, 1, 0, 0};
    pcb_task tie = {.problem = PCB_CHAMFER, .batch = 1, .n = 1, .nq = 2, .a = a, .b = b};
    for (int32_t pick = 0; pick < 2; pick++) {
        int32_t idx[3] = {pick, 0, 0};
        float d2[3] = {1, 1, 1};
        double value = 2;
        pcb_result r = {.index = idx, .dist2 = d2, .value = &value};
        CHECK_RC(pcb_chamfer_validate(&tie, &r, &rep), PCB_OK);
        CHECK(rep.ok);
    }
}

static void test_invalid_arguments(void)
{
    const float pts[] = {0, 0, 0, 1, 1, 1}, nan_pt[] = {0, NAN, 0};
    int32_t idx[4];
    float d2[4];
    double value;
    CHECK_RC(pcb_chamfer(pts, pts, 1, 0, 2, idx, d2, &value), PCB_EINVAL); /* empty A */
    CHECK_RC(pcb_chamfer(pts, pts, 1, 2, 0, idx, d2, &value), PCB_EINVAL); /* empty B */
    CHECK_RC(pcb_chamfer(pts, nan_pt, 1, 2, 1, idx, d2, &value), PCB_EINVAL);
    CHECK_RC(pcb_chamfer(pts, pts, 1, 2, 2, idx, NULL, &value), PCB_EINVAL); /* no dist2 */
    CHECK_RC(pcb_chamfer(pts, NULL, 1, 2, 2, idx, d2, &value), PCB_EINVAL);
    CHECK_RC(pcb_chamfer(pts, pts, 0, 2, 2, idx, d2, &value), PCB_EINVAL); /* batch 0 */
    CHECK_RC(pcb_chamfer(pts, pts, 1, 2, 2, idx, d2, NULL), PCB_OK);       /* value optional */
    pcb_task t = {.problem = PCB_CHAMFER, .batch = 1, .n = 2, .nq = 2, .a = pts, .b = pts};
    CHECK(pcb_answer_count(&t) == 4);
    float grad[3] = {0};
    /* the gradient entry takes device tasks only */
    CHECK_RC(pcb_chamfer_backward(&t, idx, grad, grad, grad), PCB_EINVAL);
    t.memory = PCB_MEM_DEVICE;
    CHECK_RC(pcb_chamfer_backward(&t, NULL, grad, grad, grad), PCB_EINVAL);
    pcb_chamfer_convention c = {PCB_CD_SQUARED, PCB_CD_MEAN, PCB_CD_BOTH};
    CHECK_RC(pcb_chamfer_values(&t, d2, &c, &value), PCB_EINVAL); /* not host arrays */
    t.memory = PCB_MEM_HOST;
    CHECK_RC(pcb_chamfer_values(&t, NULL, &c, &value), PCB_EINVAL);
    CHECK(strcmp(pcb_problem_name(PCB_CHAMFER), "chamfer") == 0);
    pcb_problem p;
    CHECK_RC(pcb_problem_parse("chamfer", &p), PCB_OK);
    CHECK(p == PCB_CHAMFER);
}

TEST_MAIN(T(test_every_impl_matches_naive), T(test_conventions_by_hand),
          T(test_validator_rejects_wrong_answers), T(test_invalid_arguments))
