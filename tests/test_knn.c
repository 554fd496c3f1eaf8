/* test_knn.c - k nearest neighbours: every implementation against naive
 * (canonical ones element for element), ties, k > n, far-from-origin
 * clouds, the validator accepting every right answer and rejecting planted
 * wrong ones of each kind, argument checks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/cloud.h"
#include "impl/knn/knn.h"
#include "impl/pcbench_judge.h"
#include "testlib.h"

typedef struct {
    pcb_task task;
    float *a, *b;
} set;

/* batch pairs of generated clouds; self: the queries are the reference. */
static set make_set(const char *kind, int64_t n, int64_t nq, int64_t batch, int64_t k, int self)
{
    set s = {.task = {.problem = PCB_KNN, .batch = batch, .n = n, .nq = self ? n : nq, .k = k}};
    s.a = malloc((size_t)(batch * n * 3) * sizeof(float));
    s.b = self ? s.a : malloc((size_t)(batch * nq * 3) * sizeof(float));
    for (int64_t c = 0; c < batch; c++) {
        pcb_cloud x;
        CHECK_RC(pcb_generate(kind, n, 40 + 2 * (uint64_t)c, &x), PCB_OK);
        memcpy(s.a + c * n * 3, x.xyz, (size_t)n * 3 * sizeof(float));
        pcb_cloud_free(&x);
        if (self)
            continue;
        CHECK_RC(pcb_generate(kind, nq, 41 + 2 * (uint64_t)c, &x), PCB_OK);
        memcpy(s.b + c * nq * 3, x.xyz, (size_t)nq * 3 * sizeof(float));
        pcb_cloud_free(&x);
    }
    s.task.a = s.a, s.task.b = s.b;
    return s;
}

static void free_set(set *s)
{
    if (s->b != s->a)
        free(s->b);
    free(s->a);
}

/* impl's rows got, judged j (said where wrong), and, for a canonical
 * implementation, naive's rows want bit for bit, distances included. */
static void expect_right(const pcb_impl *impl, const pcb_task *t, const pcb_judgement *j,
                         const pcb_result *want, const pcb_result *got, const char *where)
{
    if (j->verdict != PCB_VERDICT_PASS)
        fprintf(stderr, "knn %s %s: %s\n", impl->name, where, j->detail);
    CHECK(j->verdict == PCB_VERDICT_PASS);
    const size_t count = (size_t)pcb_answer_count(t);
    if (impl->promise.canonical) {
        CHECK(memcmp(want->index, got->index, count * sizeof *got->index) == 0);
        CHECK(memcmp(want->dist2, got->dist2, count * sizeof *got->dist2) == 0);
    }
}

/* Every implementation that runs here on every set: right by the judge
 * (which compares the canonical ones with naive's rows), and a canonical
 * one naive's rows bit for bit, distances included. */
static void test_every_impl_matches_naive(void)
{
    set sets[] = {make_set("uniform", 700, 500, 3, 8, 0),  make_set("lattice", 729, 0, 2, 26, 1),
                  make_set("duplicates", 600, 0, 1, 16, 1), make_set("offset", 500, 300, 2, 5, 0),
                  make_set("sphere", 300, 200, 2, 64, 0),  make_set("clusters", 5, 40, 2, 8, 0),
                  make_set("lattice", 1000, 0, 1, 1, 1),   make_set("equal", 70, 0, 1, 64, 1)};
    const pcb_impl *naive = pcb_find(PCB_KNN, "naive");
    CHECK(naive && naive->reference && naive->promise.canonical);
    int ran = 0;
    for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
        const pcb_impl *impl = *it;
        if (impl->problem != PCB_KNN || pcb_impl_available(impl) != PCB_OK)
            continue;
        ran++;
        for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
            const pcb_task *t = &sets[s].task;
            pcb_result want, got;
            CHECK_RC(pcb_result_alloc(t, &want), PCB_OK);
            CHECK_RC(pcb_result_alloc(t, &got), PCB_OK);
            CHECK_RC(pcb_run(naive, t, &want, NULL), PCB_OK);
            CHECK_RC(pcb_run(impl, t, &got, NULL), PCB_OK);
            const pcb_promise p = pcb_promise_of(impl, t);
            pcb_judgement j;
            CHECK_RC(pcb_judge(t, &got, &p, want.index, &j), PCB_OK);
            char where[32];
            snprintf(where, sizeof where, "on set %zu", s);
            expect_right(impl, t, &j, &want, &got, where);
            pcb_result_free(&want), pcb_result_free(&got);
        }
    }
    CHECK(ran >= 3); /* naive, omp, kdtree are always built */
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++)
        free_set(&sets[s]);
}

/* The lattice's tie rule by hand: a query at a lattice point has 6
 * neighbours at 1; k = 4 takes the 4 of lowest index, ascending; the
 * validator takes any 4 of the 6 in any order, and rejects 3 of them with a
 * point at sqrt 2. */
static void test_ties_by_hand(void)
{
    /* index: 0 (0,0,1), 1 (1,0,0), 2 (0,-1,0), 3 (1,1,0), 4 (-1,0,0), 5 (0,0,-1), 6 (0,1,0) */
    const float ref[] = {0, 0, 1, 1, 0, 0, 0, -1, 0, 1, 1, 0, -1, 0, 0, 0, 0, -1, 0, 1, 0};
    const float q[] = {0, 0, 0};
    int32_t idx[4];
    float d2[4];
    CHECK_RC(pcb_knn(ref, q, 1, 7, 1, 4, idx, d2), PCB_OK);
    CHECK(idx[0] == 0 && idx[1] == 1 && idx[2] == 2 && idx[3] == 4);
    CHECK(d2[0] == 1 && d2[3] == 1);
    pcb_task t = {.problem = PCB_KNN, .batch = 1, .n = 7, .nq = 1, .k = 4, .a = ref, .b = q};
    pcb_report rep;
    int32_t other[4] = {6, 5, 2, 1};
    float ones[4] = {1, 1, 1, 1};
    pcb_result r = {.index = other, .dist2 = ones};
    CHECK_RC(pcb_knn_validate(&t, &r, &rep), PCB_OK);
    CHECK(rep.ok);
    int32_t diag[4] = {0, 1, 2, 3}; /* point 3 is at sqrt 2 */
    float dd[4] = {1, 1, 1, 2};
    r = (pcb_result){.index = diag, .dist2 = dd};
    CHECK_RC(pcb_knn_validate(&t, &r, &rep), PCB_OK);
    CHECK(!rep.ok && strstr(rep.detail, "beyond"));
    /* k = 8 > n = 7: seven neighbours, then (-1, +inf) */
    int32_t all[8];
    float all_d[8];
    CHECK_RC(pcb_knn(ref, q, 1, 7, 1, 8, all, all_d), PCB_OK);
    CHECK(all[6] == 3 && all_d[6] == 2 && all[7] == PCB_KNN_PAD && isinf(all_d[7]));
}

/* Reference on a line at squared distances 1, 4, 9, 9, 16 from the query
 * (index 0..4); k = 3: {0, 1, 2 or 3}. Each planted fault is caught, and
 * the tie alternative is accepted. */
static void test_validator_rejects_wrong_answers(void)
{
    const float ref[] = {1, 0, 0, 2, 0, 0, 3, 0, 0, -3, 0, 0, 4, 0, 0};
    const float q[] = {0, 0, 0};
    pcb_task t = {.problem = PCB_KNN, .batch = 1, .n = 5, .nq = 1, .k = 3, .a = ref, .b = q};
    const struct {
        int32_t idx[3];
        float d2[3];
        int ok;
        const char *says;
    } cases[] = {
        {{0, 1, 2}, {1, 4, 9}, 1, "exact"},
        {{0, 1, 3}, {1, 4, 9}, 1, "exact"},         /* the other tie */
        {{0, 1, 5}, {1, 4, 9}, 0, "is index 5"},     /* index n */
        {{0, 1, -1}, {1, 4, 9}, 0, "padding"},       /* padding where a point is due */
        {{0, 1, 1}, {1, 4, 4}, 0, "twice"},          /* a duplicate */
        {{0, 1, 2}, {1, 4, 8}, 0, "dist2"},          /* a distance not its point's */
        {{1, 0, 2}, {4, 1, 9}, 0, "ascending"},      /* out of order */
        {{0, 1, 4}, {1, 4, 16}, 0, "beyond"},        /* a farther point */
        {{1, 2, 3}, {4, 9, 9}, 0, "missing"},        /* the nearest left out */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int32_t idx[3];
        float d2[3];
        memcpy(idx, cases[i].idx, sizeof idx);
        memcpy(d2, cases[i].d2, sizeof d2);
        pcb_result r = {.index = idx, .dist2 = d2};
        pcb_report rep;
        CHECK_RC(pcb_knn_validate(&t, &r, &rep), PCB_OK);
        if (rep.ok != cases[i].ok || !strstr(rep.detail, cases[i].says))
            fprintf(stderr, "case %zu: ok %d, '%s'\n", i, rep.ok, rep.detail);
        CHECK(rep.ok == cases[i].ok && strstr(rep.detail, cases[i].says));
        r.dist2 = NULL; /* indices alone: the same verdicts where the fault is in them */
        CHECK_RC(pcb_knn_validate(&t, &r, &rep), PCB_OK);
        CHECK(rep.ok == (cases[i].ok || i == 5));
    }
    /* padding: k = 6 > n = 5, the last entry must be (-1, +inf), not a real point 0 at 0 */
    t.k = 6;
    int32_t idx[6] = {0, 1, 2, 3, 4, PCB_KNN_PAD};
    float d2[6] = {1, 4, 9, 9, 16, INFINITY};
    pcb_result r = {.index = idx, .dist2 = d2};
    pcb_report rep;
    CHECK_RC(pcb_knn_validate(&t, &r, &rep), PCB_OK);
    CHECK(rep.ok);
    idx[5] = 0, d2[5] = 0;
    CHECK_RC(pcb_knn_validate(&t, &r, &rep), PCB_OK);
    CHECK(!rep.ok && strstr(rep.detail, "padding"));
    /* a canonical promise: the tie alternative is right, but not naive's row */
    t.k = 3;
    int32_t alt[3] = {0, 1, 3}, want[3] = {0, 1, 2};
    float alt_d[3] = {1, 4, 9};
    r = (pcb_result){.index = alt, .dist2 = alt_d};
    const pcb_promise canonical = {.exact = 1, .canonical = 1};
    pcb_judgement j;
    CHECK_RC(pcb_judge(&t, &r, &canonical, want, &j), PCB_OK);
    CHECK(j.verdict == PCB_VERDICT_FAIL && strstr(j.detail, "not canonical"));
    const pcb_promise exact = {.exact = 1};
    CHECK_RC(pcb_judge(&t, &r, &exact, NULL, &j), PCB_OK);
    CHECK(j.verdict == PCB_VERDICT_PASS);
}

/* A self task (pcb_task_self: b is a, one lengths array for both), ragged:
 * every implementation's rows are naive's on the same task given as two
 * arrays (cuda_grid builds one grid for both sides of the first). */
static void test_self_ragged(void)
{
    enum { B = 3, N = 900, K = 12 };
    int64_t lengths[B] = {N, 0, 317}, copy_lengths[B] = {N, 0, 317};
    set s = make_set("sphere", N, 0, B, K, 1);
    float *copy = malloc((size_t)(B * N * 3) * sizeof(float));
    memcpy(copy, s.a, (size_t)(B * N * 3) * sizeof(float));
    pcb_task self = s.task, two = s.task;
    self.lengths_a = self.lengths_b = lengths;
    two.b = copy, two.lengths_a = lengths, two.lengths_b = copy_lengths;
    CHECK(pcb_task_self(&self) && !pcb_task_self(&two));
    const pcb_impl *naive = pcb_find(PCB_KNN, "naive");
    pcb_result want;
    CHECK_RC(pcb_result_alloc(&two, &want), PCB_OK);
    CHECK_RC(pcb_run(naive, &two, &want, NULL), PCB_OK);
    for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
        const pcb_impl *impl = *it;
        if (impl->problem != PCB_KNN || pcb_impl_available(impl) != PCB_OK || !impl->ragged)
            continue;
        pcb_result got;
        CHECK_RC(pcb_result_alloc(&self, &got), PCB_OK);
        CHECK_RC(pcb_run(impl, &self, &got, NULL), PCB_OK);
        const pcb_promise p = pcb_promise_of(impl, &self);
        pcb_judgement j;
        CHECK_RC(pcb_judge_full(&self, &got, &p, &j), PCB_OK);
        expect_right(impl, &two, &j, &want, &got, "self and ragged");
        pcb_result_free(&got);
    }
    pcb_result_free(&want);
    free(copy);
    free_set(&s);
}

static void test_invalid_arguments(void)
{
    const float pts[] = {0, 0, 0, 1, 1, 1}, nan_pt[] = {0, NAN, 0};
    int32_t idx[8];
    float d2[8];
    CHECK_RC(pcb_knn(pts, pts, 1, 2, 2, 0, idx, d2), PCB_EINVAL);   /* k = 0 */
    CHECK_RC(pcb_knn(pts, pts, 1, 2, 2, -3, idx, d2), PCB_EINVAL);  /* k < 0 */
    CHECK_RC(pcb_knn(pts, pts, 1, 0, 2, 1, idx, d2), PCB_EINVAL);   /* no reference */
    CHECK_RC(pcb_knn(pts, nan_pt, 1, 2, 1, 1, idx, d2), PCB_EINVAL);
    CHECK_RC(pcb_knn(pts, NULL, 1, 2, 2, 1, idx, d2), PCB_EINVAL);
    CHECK_RC(pcb_knn(pts, pts, 1, 2, 2, 4, idx, NULL), PCB_OK);     /* dist2 optional */
    CHECK(idx[0] == 0 && idx[1] == 1 && idx[2] == PCB_KNN_PAD && idx[3] == PCB_KNN_PAD);
    pcb_task t = {.problem = PCB_KNN, .batch = 2, .n = 2, .nq = 3, .k = 5, .a = pts, .b = pts};
    CHECK(pcb_answer_count(&t) == 30);
    t.batch = 1, t.nq = 2, t.k = INT64_MAX / 2; /* rows that overflow sizes */
    CHECK_RC(pcb_task_check(&t), PCB_EINVAL);
    /* the GPU kernels keep rows of at most 64: beyond, unsupported (no GPU needed to say so) */
    t.k = 65;
    for (const pcb_impl *const *it = pcb_registry(); *it; it++)
        if ((*it)->problem == PCB_KNN && (*it)->device == PCB_CUDA)
            CHECK_RC(pcb_task_fits(*it, &t), PCB_EUNSUPPORTED);
    CHECK(strcmp(pcb_problem_name(PCB_KNN), "knn") == 0);
    pcb_problem p;
    CHECK_RC(pcb_problem_parse("knn", &p), PCB_OK);
    CHECK(p == PCB_KNN);
}

TEST_MAIN(T(test_every_impl_matches_naive), T(test_ties_by_hand), T(test_self_ragged),
          T(test_validator_rejects_wrong_answers), T(test_invalid_arguments))
