/* test_ball.c - ball query: every implementation against naive (canonical
 * ones element for element) under both selections, boundary ties on
 * lattices, empty balls, k larger than any ball, far-from-origin clouds, the
 * validator accepting every right answer and rejecting planted wrong ones
 * of each kind, argument checks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/cloud.h"
#include "impl/ball/ball.h"
#include "impl/pcbench_judge.h"
#include "testlib.h"

typedef struct {
    pcb_task task;
    float *a, *b;
} set;

/* batch clouds of kind; the centres are the first nq points of each (as
 * FPS output is a subset of the cloud), or, with other, a second cloud. */
static set make_set(const char *kind, int64_t n, int64_t nq, int64_t batch, int64_t k,
                    double radius, int select, int other)
{
    set s = {.task = {.problem = PCB_BALL, .batch = batch, .n = n, .nq = nq, .k = k,
                      .radius = radius, .select = select}};
    s.a = malloc((size_t)(batch * n * 3) * sizeof(float));
    s.b = malloc((size_t)(batch * nq * 3) * sizeof(float));
    for (int64_t c = 0; c < batch; c++) {
        pcb_cloud x;
        CHECK_RC(pcb_generate(kind, n, 60 + 2 * (uint64_t)c, &x), PCB_OK);
        memcpy(s.a + c * n * 3, x.xyz, (size_t)n * 3 * sizeof(float));
        pcb_cloud_free(&x);
        if (other) {
            CHECK_RC(pcb_generate(kind, nq, 61 + 2 * (uint64_t)c, &x), PCB_OK);
            memcpy(s.b + c * nq * 3, x.xyz, (size_t)nq * 3 * sizeof(float));
            pcb_cloud_free(&x);
        } else {
            memcpy(s.b + c * nq * 3, s.a + c * n * 3, (size_t)nq * 3 * sizeof(float));
        }
    }
    s.task.a = s.a, s.task.b = s.b;
    return s;
}

/* Every implementation that runs here, on every set under both selections:
 * right by the judge (which compares the canonical ones with naive's rows),
 * and a canonical one naive's rows, distances and counts bit for bit. */
static void test_every_impl_matches_naive(void)
{
    set sets[] = {
        make_set("uniform", 900, 300, 3, 32, 0.15, 0, 0),
        make_set("uniform", 700, 200, 2, 16, 0.45, 0, 1), /* balls overfull */
        make_set("lattice", 729, 729, 1, 8, 1.0, 0, 0),   /* r on the lattice spacing */
        make_set("lattice", 1000, 100, 2, 40, 1.5, 0, 0),
        make_set("duplicates", 600, 100, 1, 20, 0.05, 0, 0),
        make_set("offset", 500, 200, 2, 12, 9.0, 0, 0),   /* 3,000 km away */
        make_set("sphere", 400, 100, 2, 128, 0.3, 0, 0),  /* k beyond any ball */
        make_set("clusters", 300, 40, 2, 8, 1e-3, 0, 1),  /* empty balls */
        make_set("equal", 70, 10, 1, 64, 0.1, 0, 0),
        make_set("lidar", 4000, 256, 1, 32, 0.8, 0, 0),
    };
    const size_t nsets = sizeof sets / sizeof sets[0];
    const pcb_impl *naive = pcb_find(PCB_BALL, "naive");
    CHECK(naive && naive->reference && naive->promise.canonical);
    int ran = 0;
    for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
        const pcb_impl *impl = *it;
        if (impl->problem != PCB_BALL || pcb_impl_available(impl) != PCB_OK)
            continue;
        ran++;
        for (size_t s = 0; s < 2 * nsets; s++) {
            pcb_task t = sets[s % nsets].task;
            t.select = s < nsets ? PCB_BALL_FIRST : PCB_BALL_NEAREST;
            pcb_result want, got;
            CHECK_RC(pcb_result_alloc(&t, &want), PCB_OK);
            CHECK_RC(pcb_result_alloc(&t, &got), PCB_OK);
            CHECK_RC(pcb_run(naive, &t, &want, NULL), PCB_OK);
            CHECK_RC(pcb_run(impl, &t, &got, NULL), PCB_OK);
            const pcb_promise p = pcb_promise_of(impl, &t);
            pcb_judgement j;
            CHECK_RC(pcb_judge(&t, &got, &p, want.index, &j), PCB_OK);
            if (j.verdict != PCB_VERDICT_PASS)
                fprintf(stderr, "ball %s on set %zu: %s\n", impl->name, s, j.detail);
            CHECK(j.verdict == PCB_VERDICT_PASS);
            const size_t count = (size_t)pcb_answer_count(&t), rows = (size_t)(t.batch * t.nq);
            CHECK(memcmp(want.count, got.count, rows * sizeof *got.count) == 0);
            if (impl->promise.canonical) {
                CHECK(memcmp(want.index, got.index, count * sizeof *got.index) == 0);
                CHECK(memcmp(want.dist2, got.dist2, count * sizeof *got.dist2) == 0);
            }
            pcb_result_free(&want), pcb_result_free(&got);
        }
    }
    CHECK(ran >= 2); /* naive and omp are always built */
    for (size_t s = 0; s < nsets; s++)
        free(sets[s].a), free(sets[s].b);
}

/* By hand, points on a line from the centre at 0: index 0 at 2, 1 at 0.5,
 * 2 at 1 (on the radius), 3 at 0.25, 4 at 0.75; r = 1, so 2 is outside
 * (the strict test). FIRST k = 2: {1, 3}; NEAREST k = 2: {3, 1}; k = 4:
 * three inside and one padding; an empty ball: all padding, count 0. */
static void test_selections_by_hand(void)
{
    const float ref[] = {2, 0, 0, 0.5f, 0, 0, 1, 0, 0, 0.25f, 0, 0, 0.75f, 0, 0};
    const float c[] = {0, 0, 0, 10, 10, 10};
    int32_t idx[8], count[2];
    float d2[8];
    CHECK_RC(pcb_ball(ref, c, 1, 5, 1, 2, 1.0, PCB_BALL_FIRST, idx, d2, count), PCB_OK);
    CHECK(idx[0] == 1 && idx[1] == 3 && count[0] == 2 && d2[0] == 0.25f);
    CHECK_RC(pcb_ball(ref, c, 1, 5, 1, 2, 1.0, PCB_BALL_NEAREST, idx, d2, count), PCB_OK);
    CHECK(idx[0] == 3 && idx[1] == 1 && count[0] == 2 && d2[0] == 0.0625f);
    CHECK_RC(pcb_ball(ref, c, 1, 5, 2, 4, 1.0, PCB_BALL_FIRST, idx, d2, count), PCB_OK);
    CHECK(idx[0] == 1 && idx[1] == 3 && idx[2] == 4 && idx[3] == PCB_KNN_PAD && isinf(d2[3]));
    CHECK(count[0] == 3 && count[1] == 0);
    for (int s = 4; s < 8; s++)
        CHECK(idx[s] == PCB_KNN_PAD && isinf(d2[s])); /* the empty ball: never point 0 */
    CHECK_RC(pcb_ball(ref, c, 1, 5, 1, 4, 1.0, PCB_BALL_NEAREST, idx, NULL, NULL), PCB_OK);
    CHECK(idx[0] == 3 && idx[1] == 1 && idx[2] == 4 && idx[3] == PCB_KNN_PAD);
}

/* The centre at 0 and points at squared distances (index: d2) 0: 0.81,
 * 1: 0.04, 2: 0.36, 3: 0.36, 4: 1.0 (on the radius: in or out), 5: 4 (out),
 * r = 1. Each planted fault is caught, and the alternatives are accepted. */
static void test_validator_rejects_wrong_answers(void)
{
    const float ref[] = {0.9f, 0, 0, 0.2f, 0, 0, 0.6f, 0, 0, -0.6f, 0, 0, 1, 0, 0, 2, 0, 0};
    const float q[] = {0, 0, 0};
    const struct {
        int select;
        int32_t idx[3];
        int32_t count;
        int ok;
        const char *says;
    } cases[] = {
        {PCB_BALL_FIRST, {0, 1, 2}, 3, 1, "right"},
        {PCB_BALL_NEAREST, {1, 2, 3}, 3, 1, "right"},
        {PCB_BALL_NEAREST, {1, 3, 2}, 3, 1, "right"},           /* the other tie order */
        {PCB_BALL_FIRST, {0, 1, 3}, 3, 0, "missing"},           /* 2 before 3 left out */
        {PCB_BALL_FIRST, {1, 0, 2}, 3, 0, "order"},
        {PCB_BALL_NEAREST, {1, 2, 0}, 3, 0, "missing"},         /* first-K sold as nearest */
        {PCB_BALL_NEAREST, {2, 1, 3}, 3, 0, "order"},
        {PCB_BALL_FIRST, {0, 1, 5}, 3, 0, "outside"},
        {PCB_BALL_FIRST, {0, 1, 6}, 3, 0, "range"},
        {PCB_BALL_FIRST, {0, 1, 1}, 3, 0, "twice"},
        {PCB_BALL_NEAREST, {1, 2, 2}, 3, 0, "twice"},
        {PCB_BALL_FIRST, {0, 1, -1}, 2, 0, "missing"},          /* stopped short */
        {PCB_BALL_FIRST, {0, 1, 2}, 2, 0, "padding"},           /* the count disagrees */
        {PCB_BALL_FIRST, {0, 1, 2}, 4, 0, "count"},
        {PCB_BALL_FIRST, {0, -1, 1}, 1, 0, "padding"},          /* a hole in the row */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pcb_task t = {.problem = PCB_BALL, .batch = 1, .n = 6, .nq = 1, .k = 3, .radius = 1.0,
                      .select = cases[i].select, .a = ref, .b = q};
        int32_t idx[3], count = cases[i].count;
        memcpy(idx, cases[i].idx, sizeof idx);
        pcb_result r = {.index = idx, .count = &count};
        pcb_report rep;
        CHECK_RC(pcb_ball_validate(&t, &r, &rep), PCB_OK);
        if (rep.ok != cases[i].ok || !strstr(rep.detail, cases[i].says))
            fprintf(stderr, "case %zu: ok %d, '%s'\n", i, rep.ok, rep.detail);
        CHECK(rep.ok == cases[i].ok && strstr(rep.detail, cases[i].says));
    }
    /* k = 6: every inside point, the boundary point 4 in or out, then padding */
    pcb_task t = {.problem = PCB_BALL, .batch = 1, .n = 6, .nq = 1, .k = 6, .radius = 1.0,
                  .select = PCB_BALL_FIRST, .a = ref, .b = q};
    int32_t with[6] = {0, 1, 2, 3, 4, -1}, without[6] = {0, 1, 2, 3, -1, -1};
    int32_t shortrow[6] = {0, 1, 2, -1, -1, -1}, zero[6] = {0, 1, 2, 3, 0, -1};
    float d2[6] = {0.81f, 0.04f, 0.36f, 0.36f, INFINITY, INFINITY};
    pcb_report rep;
    pcb_result r = {.index = without, .dist2 = d2};
    CHECK_RC(pcb_ball_validate(&t, &r, &rep), PCB_OK);
    CHECK(rep.ok);
    d2[4] = 1;
    r.index = with;
    CHECK_RC(pcb_ball_validate(&t, &r, &rep), PCB_OK);
    CHECK(rep.ok);
    r.index = shortrow, r.dist2 = NULL;
    CHECK_RC(pcb_ball_validate(&t, &r, &rep), PCB_OK);
    CHECK(!rep.ok && strstr(rep.detail, "missing"));
    r.index = zero; /* point 0 as padding (pointnet2_ops' empty ball) */
    CHECK_RC(pcb_ball_validate(&t, &r, &rep), PCB_OK);
    CHECK(!rep.ok);
    d2[0] = 0.5f; /* a distance not its point's */
    r.index = without, r.dist2 = d2, d2[4] = INFINITY;
    CHECK_RC(pcb_ball_validate(&t, &r, &rep), PCB_OK);
    CHECK(!rep.ok && strstr(rep.detail, "distance"));
    /* a canonical promise: the other tie order is right, but not naive's row */
    t.k = 3, t.select = PCB_BALL_NEAREST;
    int32_t alt[3] = {1, 3, 2}, want[3] = {1, 2, 3};
    r = (pcb_result){.index = alt};
    const pcb_promise canonical = {.exact = 1, .canonical = 1};
    pcb_judgement j;
    CHECK_RC(pcb_judge(&t, &r, &canonical, want, &j), PCB_OK);
    CHECK(j.verdict == PCB_VERDICT_FAIL && strstr(j.detail, "not canonical"));
}

static void test_invalid_arguments(void)
{
    const float pts[] = {0, 0, 0, 1, 1, 1}, nan_pt[] = {0, NAN, 0};
    int32_t idx[8], count[2];
    float d2[8];
    CHECK_RC(pcb_ball(pts, pts, 1, 2, 2, 0, 1.0, 0, idx, d2, count), PCB_EINVAL); /* k = 0 */
    CHECK_RC(pcb_ball(pts, pts, 1, 2, 2, 2, 0.0, 0, idx, d2, count), PCB_EINVAL); /* r = 0 */
    CHECK_RC(pcb_ball(pts, pts, 1, 2, 2, 2, -1.0, 0, idx, d2, count), PCB_EINVAL);
    CHECK_RC(pcb_ball(pts, pts, 1, 2, 2, 2, NAN, 0, idx, d2, count), PCB_EINVAL);
    CHECK_RC(pcb_ball(pts, pts, 1, 2, 2, 2, 1e30, 0, idx, d2, count), PCB_EINVAL); /* r2 inf */
    CHECK_RC(pcb_ball(pts, pts, 1, 2, 2, 2, 1.0, 2, idx, d2, count), PCB_EINVAL);  /* select */
    CHECK_RC(pcb_ball(pts, nan_pt, 1, 2, 1, 2, 1.0, 0, idx, d2, count), PCB_EINVAL);
    CHECK_RC(pcb_ball(pts, NULL, 1, 2, 2, 2, 1.0, 0, idx, d2, count), PCB_EINVAL);
    CHECK_RC(pcb_ball(pts, pts, 1, 2, 2, 4, 2.0, 0, idx, NULL, NULL), PCB_OK);
    CHECK(idx[0] == 0 && idx[1] == 1 && idx[2] == PCB_KNN_PAD);
    /* the GPU kernels keep rows of at most 128: beyond, unsupported */
    pcb_task t = {.problem = PCB_BALL, .batch = 1, .n = 2, .nq = 2, .k = 129, .radius = 1,
                  .a = pts, .b = pts};
    for (const pcb_impl *const *it = pcb_registry(); *it; it++)
        if ((*it)->problem == PCB_BALL && (*it)->device == PCB_CUDA)
            CHECK_RC(pcb_task_fits(*it, &t), PCB_EUNSUPPORTED);
    CHECK(strcmp(pcb_problem_name(PCB_BALL), "ball") == 0);
    int32_t sel = -1;
    CHECK_RC(pcb_ball_select_parse("nearest", &sel), PCB_OK);
    CHECK(sel == PCB_BALL_NEAREST && strcmp(pcb_ball_select_name(sel), "nearest") == 0);
    CHECK_RC(pcb_ball_select_parse("random", &sel), PCB_EINVAL);
}

TEST_MAIN(T(test_every_impl_matches_naive), T(test_selections_by_hand),
          T(test_validator_rejects_wrong_answers), T(test_invalid_arguments))
