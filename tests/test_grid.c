/* test_grid.c - grid sampling: the contract by hand (a point on a boundary,
 * the nearest to the centre with a tie, an origin given), every
 * implementation bit for bit the reference's on ordinary and degenerate
 * clouds under both selections (the judge agreeing), a ragged batch cloud
 * by cloud, the validator rejecting planted wrong answers of each kind, a
 * cloud past the keys' span unsupported, the argument checks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/cloud.h"
#include "impl/grid/grid.h"
#include "impl/pcbench_judge.h"
#include "testlib.h"

static pcb_task grid_task(const float *xyz, int64_t batch, int64_t n, double cell, int select)
{
    pcb_task t = {.problem = PCB_GRID, .batch = batch, .n = n, .a = xyz, .select = select};
    t.cell[0] = t.cell[1] = t.cell[2] = cell;
    return t;
}

/* The contract on six points: 0.1f lies just above 0.1, so its quotient's
 * floor is voxel 1 (the rule is the double quotient's floor, not a
 * tolerance); points 3 and 4 are equally far from their voxel's centre. */
static void test_by_hand(void)
{
    const float pts[] = {0, 0, 0,  0.05f, 0, 0,  0.1f, 0, 0,
                         0.24f, 0.1f, 0,  0.26f, 0.1f, 0,  0.02f, 0, 0};
    int32_t index[12], count[6];
    const double cell[3] = {0.1, 1, 1};
    CHECK_RC(pcb_grid(pts, 1, 6, cell, NULL, PCB_BALL_FIRST, index, count), PCB_OK);
    const int32_t first[6] = {0, 2, 3, -1, -1, -1}, counts[6] = {3, 1, 2, 0, 0, 0};
    const int32_t inverse[6] = {0, 0, 1, 2, 2, 0};
    CHECK(memcmp(index, first, sizeof first) == 0 && memcmp(count, counts, sizeof counts) == 0);
    CHECK(memcmp(index + 6, inverse, sizeof inverse) == 0);
    CHECK_RC(pcb_grid(pts, 1, 6, cell, NULL, PCB_BALL_NEAREST, index, count), PCB_OK);
    /* voxel 0's centre is 0.05: point 1 on it; voxel 2 (0.2..0.3): 0.24 and 0.26
     * in float are not quite equidistant from 0.25, the nearer wins */
    const double d3 = fabs((double)0.24f - 0.25), d4 = fabs((double)0.26f - 0.25);
    CHECK(index[0] == 1 && index[1] == 2 && index[2] == (d4 < d3 ? 4 : 3));
    /* an exact tie: two copies of one point, the lower index */
    const float twin[] = {0.3f, 0.3f, 0.3f, 0.3f, 0.3f, 0.3f};
    const double unit[3] = {1, 1, 1};
    CHECK_RC(pcb_grid(twin, 1, 2, unit, NULL, PCB_BALL_NEAREST, index, count), PCB_OK);
    CHECK(index[0] == 0 && count[0] == 2 && index[1] == -1 && count[1] == 0);
    /* an origin given: 0.3 from -0.7 in voxels of 1 is voxel 1 */
    const double origin[3] = {-0.7, -0.7, -0.7};
    pcb_task t = grid_task(twin, 1, 2, 1.0, PCB_BALL_FIRST);
    t.origin_given = 1;
    memcpy(t.origin, origin, sizeof origin);
    pcb_result r = {.index = index, .count = count};
    CHECK_RC(pcb_run(pcb_find(PCB_GRID, "naive"), &t, &r, NULL), PCB_OK);
    CHECK(index[0] == 0 && count[0] == 2);
    pcb_report rep;
    CHECK_RC(pcb_grid_validate(&t, &r, &rep), PCB_OK);
    CHECK(rep.ok);
    /* random: voxel 0 (points 0, 1, 5) keeps the one of least draw, by seed */
    for (uint64_t seed = 0; seed < 20; seed++) {
        pcb_task rt = grid_task(pts, 1, 6, 0.1, PCB_GRID_RANDOM);
        rt.cell[1] = rt.cell[2] = 1;
        rt.seed = seed;
        pcb_result rr = {.index = index, .count = count};
        CHECK_RC(pcb_run(pcb_find(PCB_GRID, "naive"), &rt, &rr, NULL), PCB_OK);
        const int32_t in0[3] = {0, 1, 5};
        int32_t want = 0;
        for (int k = 1; k < 3; k++)
            if (pcb_grid_draw(seed, in0[k]) < pcb_grid_draw(seed, want))
                want = in0[k];
        CHECK(index[0] == want && count[0] == 3);
    }
}

/* mean: the first point kept, each voxel's mean point in float32, 0 past
 * the last; the judge takes a sum in another order (within the double
 * sum's error) and rejects a mean moved by a step of 10^-4 or a count's
 * mean shifted a voxel. */
static void test_mean(void)
{
    const float pts[] = {0.1f, 0.2f, 0.3f,  0.5f, 0.5f, 0.5f,  2.5f, 0, 0,
                         0.3f, 0.4f, 0.2f,  1e-30f, 0.9f, 0.8f};
    pcb_task t = grid_task(pts, 1, 5, 1.0, PCB_GRID_MEAN);
    t.origin_given = 1; /* origin 0: voxel (0,0,0) holds points 0, 1, 3, 4 */
    pcb_result r;
    CHECK_RC(pcb_result_alloc(&t, &r), PCB_OK);
    CHECK(r.mean != NULL);
    CHECK_RC(pcb_run(pcb_find(PCB_GRID, "naive"), &t, &r, NULL), PCB_OK);
    CHECK(r.index[0] == 0 && r.count[0] == 4 && r.index[1] == 2 && r.count[1] == 1);
    for (int k = 0; k < 3; k++) {
        const double sum = ((double)pts[k] + pts[3 + k] + pts[9 + k]) + pts[12 + k];
        CHECK(r.mean[k] == (float)(sum / 4) && r.mean[3 + k] == pts[6 + k]);
    }
    for (int j = 6; j < 15; j++)
        CHECK(r.mean[j] == 0);
    pcb_report rep;
    CHECK_RC(pcb_grid_validate(&t, &r, &rep), PCB_OK);
    CHECK_MSG(rep.ok, "%s", rep.detail);
    /* the sum in the other order: a different float only where the double
     * sum rounds (here 1e-30 vanishes either way), still accepted */
    const double back = ((double)pts[12] + pts[9]) + pts[3] + pts[0];
    r.mean[0] = (float)(back / 4);
    CHECK_RC(pcb_grid_validate(&t, &r, &rep), PCB_OK);
    CHECK(rep.ok);
    r.mean[0] += 1e-4f; /* a wrong mean */
    CHECK_RC(pcb_grid_validate(&t, &r, &rep), PCB_OK);
    CHECK(!rep.ok && strstr(rep.detail, "mean"));
    r.mean[0] -= 1e-4f, r.mean[7] = 0.5f; /* a mean past the last voxel */
    CHECK_RC(pcb_grid_validate(&t, &r, &rep), PCB_OK);
    CHECK(!rep.ok);
    r.mean[7] = 0;
    pcb_result no_mean = r;
    no_mean.mean = NULL; /* mean asked, none given: said */
    CHECK_RC(pcb_grid_validate(&t, &no_mean, &rep), PCB_EINVAL);
    CHECK_RC(pcb_run(pcb_find(PCB_GRID, "naive"), &t, &no_mean, NULL), PCB_EINVAL);
    /* first's answer is mean's rows: the rows judged alike, the means apart */
    t.select = PCB_BALL_FIRST;
    CHECK_RC(pcb_grid_validate(&t, &r, &rep), PCB_OK);
    CHECK(rep.ok);
    pcb_result_free(&r);
}

/* batch clouds of kind into one array (seeded) */
static float *clouds(const char *kind, int64_t n, int64_t batch, double snap)
{
    float *a = malloc((size_t)(batch * n * 3) * sizeof *a);
    if (a)
        CHECK_RC(pcb_gen_batch(kind, n, batch, strcmp(kind, "lidar") ? 90 : 3, snap, a), PCB_OK);
    return a;
}

static void test_every_impl_matches_naive(void)
{
    static const struct {
        const char *kind;
        int64_t n, batch;
        double cell, snap;
        int origin;
    } sets[] = {
        {"lidar", 20000, 1, 0.1, 0, 0},    {"lidar", 20000, 1, 0.05, 0.05, 0},
        {"lidar", 8000, 1, 0.2, 0, 1},     {"uniform", 3000, 3, 0.05, 0, 0},
        {"duplicates", 1600, 2, 0.01, 0, 0}, {"equal", 300, 1, 0.5, 0, 0},
        {"offset", 2000, 1, 1.0, 0, 0},    {"lattice", 1000, 1, 1.0, 0, 1},
        {"uniform", 700, 1, 1e-5, 0, 0},
    };
    const pcb_impl *naive = pcb_find(PCB_GRID, "naive");
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        const int64_t n = sets[s].n, batch = sets[s].batch;
        float *a = clouds(sets[s].kind, n, batch, sets[s].snap);
        for (int select = PCB_BALL_FIRST; a && select <= PCB_GRID_MEAN; select++) {
            pcb_task t = grid_task(a, batch, n, sets[s].cell, select);
            t.seed = 1000 + s;
            if (sets[s].origin) {
                t.origin_given = 1;
                t.origin[0] = -13.37, t.origin[1] = 2.5, t.origin[2] = -0.05;
            }
            pcb_result want, got;
            CHECK_RC(pcb_result_alloc(&t, &want), PCB_OK);
            CHECK_RC(pcb_run(naive, &t, &want, NULL), PCB_OK);
            pcb_judgement j;
            const pcb_promise exact = {.exact = 1};
            CHECK_RC(pcb_judge(&t, &want, &exact, NULL, &j), PCB_OK);
            CHECK_MSG(j.verdict == PCB_VERDICT_PASS, "%s naive: %s", sets[s].kind, j.detail);
            for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
                if ((*it)->problem != PCB_GRID || *it == naive ||
                    pcb_impl_available(*it) != PCB_OK)
                    continue;
                CHECK_RC(pcb_result_alloc(&t, &got), PCB_OK);
                const int rc = pcb_run(*it, &t, &got, NULL);
                /* the table sums in no set order: it refuses mean, and says so */
                if (select == PCB_GRID_MEAN && !strcmp((*it)->name, "cuda_hash"))
                    CHECK_RC(rc, PCB_EUNSUPPORTED);
                else
                    CHECK_RC(rc, PCB_OK);
                CHECK_MSG(rc != PCB_OK || pcb_result_equal(&t, &want, &got),
                          "%s %s cell %g %s: not naive's", (*it)->name, sets[s].kind,
                          sets[s].cell, pcb_ball_select_name(select));
                pcb_result_free(&got);
            }
            pcb_result_free(&want);
        }
        free(a);
    }
}

/* A ragged batch: each cloud's answer is its own, padding (-1, 0, a mean
 * of 0) after; nearest, and mean (whose rows carry their mean points). */
static void test_ragged_batch(void)
{
    const int64_t n = 500, batch = 3, lengths[3] = {500, 0, 123};
    float *a = clouds("uniform", n, batch, 0);
    for (int select = PCB_BALL_NEAREST; a && select <= PCB_GRID_MEAN; select += 2) {
        pcb_task t = grid_task(a, batch, n, 0.1, select);
        t.lengths_a = lengths;
        for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
            if ((*it)->problem != PCB_GRID || pcb_impl_available(*it) != PCB_OK ||
                (select == PCB_GRID_MEAN && !strcmp((*it)->name, "cuda_hash")))
                continue;
            pcb_result r;
            CHECK_RC(pcb_result_alloc(&t, &r), PCB_OK);
            CHECK_RC(pcb_run(*it, &t, &r, NULL), PCB_OK);
            for (int64_t c = 0; c < batch; c++) {
                pcb_task one = grid_task(a + c * n * 3, 1, lengths[c] ? lengths[c] : 1, 0.1,
                                         select);
                pcb_result alone;
                CHECK_RC(pcb_result_alloc(&one, &alone), PCB_OK);
                if (lengths[c])
                    CHECK_RC(pcb_run(*it, &one, &alone, NULL), PCB_OK);
                for (int64_t i = 0; i < n; i++) {
                    const int in = i < lengths[c];
                    const int32_t row = r.index[c * n + i], inv = r.index[batch * n + c * n + i];
                    CHECK(row == (in ? alone.index[i] : -1) && r.count[c * n + i] ==
                          (in ? alone.count[i] : 0) && inv == (in ? alone.index[one.n + i] : -1));
                    for (int k = 0; r.mean && k < 3; k++)
                        CHECK(r.mean[3 * (c * n + i) + k] == (in ? alone.mean[3 * i + k] : 0));
                }
                pcb_result_free(&alone);
            }
            pcb_judgement j;
            const pcb_promise exact = {.exact = 1};
            CHECK_RC(pcb_judge(&t, &r, &exact, NULL, &j), PCB_OK);
            CHECK_MSG(j.verdict == PCB_VERDICT_PASS, "%s ragged %s: %s", (*it)->name,
                      pcb_ball_select_name(select), j.detail);
            pcb_result_free(&r);
        }
    }
    free(a);
}

/* Each kind of wrong answer, planted in naive's: caught, and said. */
static void test_validator_rejects_wrong_answers(void)
{
    float *a = clouds("lidar", 5000, 1, 0);
    pcb_task t = grid_task(a, 1, 5000, 0.2, PCB_BALL_NEAREST);
    pcb_result r;
    CHECK_RC(pcb_result_alloc(&t, &r), PCB_OK);
    CHECK_RC(pcb_run(pcb_find(PCB_GRID, "naive"), &t, &r, NULL), PCB_OK);
    int64_t voxels = 0, big = -1;
    while (voxels < t.n && r.count[voxels] > 0) {
        if (big < 0 && r.count[voxels] > 1)
            big = voxels;
        voxels++;
    }
    CHECK(voxels > 10 && big >= 0);
    static const char *const planted[] = {"another point kept", "a count off by one",
                                          "an inverse entry moved", "two voxels swapped",
                                          "a row past the last", "the last voxel dropped"};
    for (int p = 0; p < 6 && big >= 0; p++) {
        pcb_result w;
        CHECK_RC(pcb_result_alloc(&t, &w), PCB_OK);
        pcb_result_copy(&t, &w, &r);
        const int32_t kept = w.index[big];
        switch (p) {
        case 0: /* another point of the same voxel */
            for (int64_t i = 0; i < t.n; i++)
                if (w.index[t.n + i] == big && i != kept) {
                    w.index[big] = (int32_t)i;
                    break;
                }
            break;
        case 1: w.count[big]++; break;
        case 2: w.index[t.n + kept] = (int32_t)(big + 1); break;
        case 3: {
            const int32_t i0 = w.index[0], c0 = w.count[0];
            w.index[0] = w.index[1], w.count[0] = w.count[1];
            w.index[1] = i0, w.count[1] = c0;
            break;
        }
        case 4: w.index[voxels] = 0, w.count[voxels] = 1; break;
        case 5: w.index[voxels - 1] = -1, w.count[voxels - 1] = 0; break;
        }
        pcb_report rep;
        CHECK_RC(pcb_grid_validate(&t, &w, &rep), PCB_OK);
        CHECK_MSG(!rep.ok && rep.recall < 1, "%s passed: %s", planted[p], rep.detail);
        pcb_result_free(&w);
    }
    /* the selection matters: nearest's answer is not first's, nor random's,
     * and random's depends on its seed */
    t.select = PCB_BALL_FIRST;
    pcb_report rep;
    CHECK_RC(pcb_grid_validate(&t, &r, &rep), PCB_OK);
    CHECK(!rep.ok);
    t.select = PCB_GRID_RANDOM, t.seed = 3;
    CHECK_RC(pcb_grid_validate(&t, &r, &rep), PCB_OK);
    CHECK(!rep.ok);
    CHECK_RC(pcb_run(pcb_find(PCB_GRID, "naive"), &t, &r, NULL), PCB_OK);
    CHECK_RC(pcb_grid_validate(&t, &r, &rep), PCB_OK);
    CHECK(rep.ok);
    t.seed = 4;
    CHECK_RC(pcb_grid_validate(&t, &r, &rep), PCB_OK);
    CHECK(!rep.ok);
    pcb_result_free(&r);
    free(a);
}

static void test_invalid_arguments(void)
{
    const float pts[] = {0, 0, 0, 1, 1, 1}, nan_pt[] = {0, NAN, 0};
    int32_t index[4], count[2];
    const double good[3] = {0.5, 0.5, 0.5}, zero[3] = {0.5, 0, 0.5}, bad[3] = {NAN, 1, 1};
    const double inf_origin[3] = {0, INFINITY, 0};
    CHECK_RC(pcb_grid(pts, 1, 2, zero, NULL, 0, index, count), PCB_EINVAL);
    CHECK_RC(pcb_grid(pts, 1, 2, bad, NULL, 0, index, count), PCB_EINVAL);
    CHECK_RC(pcb_grid(pts, 1, 2, good, inf_origin, 0, index, count), PCB_EINVAL);
    CHECK_RC(pcb_grid(pts, 1, 2, good, NULL, 4, index, count), PCB_EINVAL); /* select */
    /* mean without its array (the one-call function has none) */
    CHECK_RC(pcb_grid(pts, 1, 2, good, NULL, PCB_GRID_MEAN, index, count), PCB_EINVAL);
    CHECK_RC(pcb_grid(nan_pt, 1, 1, good, NULL, 0, index, count), PCB_EINVAL);
    CHECK_RC(pcb_grid(NULL, 1, 2, good, NULL, 0, index, count), PCB_EINVAL);
    CHECK_RC(pcb_grid(pts, 1, 2, NULL, NULL, 0, index, count), PCB_EINVAL);
    CHECK_RC(pcb_grid(pts, 1, 0, good, NULL, 0, index, count), PCB_EINVAL); /* no points */
    CHECK_RC(pcb_grid(pts, 0, 2, good, NULL, 0, index, count), PCB_EINVAL); /* no clouds */
    const int64_t past[1] = {3}; /* a ragged length past n */
    pcb_task r = {.problem = PCB_GRID, .batch = 1, .n = 2, .a = pts, .lengths_a = past,
                  .cell = {1, 1, 1}};
    CHECK_RC(pcb_task_check(&r), PCB_EINVAL);
    CHECK_RC(pcb_grid(pts, 1, 2, good, NULL, 0, index, count), PCB_OK);
    CHECK(index[0] == 0 && index[1] == 1 && count[0] == 1 && index[2] == 0 && index[3] == 1);
    /* a cloud past the keys' span: unsupported, never a wrong answer */
    const double tiny[3] = {1e-7, 1, 1};
    for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
        if ((*it)->problem != PCB_GRID || pcb_impl_available(*it) != PCB_OK)
            continue;
        pcb_task t = grid_task(pts, 1, 2, 1, 0);
        memcpy(t.cell, tiny, sizeof tiny);
        pcb_result r = {.index = index, .count = count};
        CHECK_RC(pcb_run(*it, &t, &r, NULL), PCB_EUNSUPPORTED);
        CHECK(strstr(pcb_errmsg(), "spans") != NULL);
        r.count = NULL; /* the answer needs its counts */
        t.cell[0] = 1;
        CHECK(pcb_run(*it, &t, &r, NULL) != PCB_OK);
    }
    pcb_task t = grid_task(pts, 1, 2, 1, 0);
    t.origin_given = 2;
    CHECK_RC(pcb_task_check(&t), PCB_EINVAL);
    CHECK(strcmp(pcb_problem_name(PCB_GRID), "grid") == 0);
}

TEST_MAIN(T(test_by_hand), T(test_mean), T(test_every_impl_matches_naive), T(test_ragged_batch),
          T(test_validator_rejects_wrong_answers), T(test_invalid_arguments))
