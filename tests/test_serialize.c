/* test_serialize.c - serialization: the curves (Morton's bits by hand, the
 * Hilbert transform equal to the curve's recursive definition on whole
 * cubes and at depth 21, each step of the curve one voxel to a neighbour,
 * encode and decode round trips), the contract by hand (ties by index, the
 * batch in the high bits, the least depth), every implementation bit for
 * bit the reference's on ordinary and degenerate clouds under both curves
 * (the judge agreeing), a ragged batch read whole, the validator rejecting
 * planted wrong answers of each kind, the argument checks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/cloud.h"
#include "impl/pcbench_judge.h"
#include "impl/serialize/serialize.h"
#include "testlib.h"

static pcb_task ser_task(const float *xyz, int64_t batch, int64_t n, double cell, int curve,
                         int depth)
{
    pcb_task t = {.problem = PCB_SERIALIZE, .batch = batch, .n = n, .a = xyz, .curve = curve,
                  .depth = depth};
    t.cell[0] = t.cell[1] = t.cell[2] = cell;
    return t;
}

/* The validator's codes, through a one-point cloud at each voxel: the
 * answer with the implementations' code, judged. */
static int validator_agrees(int curve, int depth, uint32_t x, uint32_t y, uint32_t z)
{
    const float p[3] = {(float)x, (float)y, (float)z};
    pcb_task t = ser_task(p, 1, 1, 1.0, curve, depth);
    t.origin_given = 1; /* from 0: the voxel is the point */
    int32_t index[2] = {0, 0};
    int64_t code = (int64_t)pcb_curve_index(curve, depth, x, y, z);
    pcb_result r = {.index = index, .code = &code};
    pcb_report rep;
    return pcb_serialize_validate(&t, &r, &rep) == PCB_OK && rep.ok;
}

static void test_curves(void)
{
    /* Morton: x the most significant of each triple */
    CHECK(pcb_morton3(1, 0, 0) == 4 && pcb_morton3(0, 1, 0) == 2 && pcb_morton3(0, 0, 1) == 1);
    CHECK(pcb_morton3(2, 0, 0) == 32 && pcb_morton3(3, 3, 3) == 63);
    CHECK(pcb_morton3(0x1fffff, 0x1fffff, 0x1fffff) == 0x7fffffffffffffffull);
    /* Hilbert: on whole cubes a bijection onto 0..8^D-1 whose steps are one
     * voxel to a neighbour, from (0,0,0) to (2^D-1,0,0), the same as the
     * validator's recursion, decoded back */
    for (int depth = 1; depth <= 4; depth++) {
        const int64_t side = 1 << depth, count = side * side * side;
        int64_t *at = malloc((size_t)count * 3 * sizeof *at);
        char *hit = calloc((size_t)count, 1);
        int agree = 1, round = 1;
        for (int64_t i = 0; at && hit && i < count; i++) {
            const uint32_t v[3] = {(uint32_t)(i / (side * side)), (uint32_t)(i / side % side),
                                   (uint32_t)(i % side)};
            const uint64_t h = pcb_hilbert3(v[0], v[1], v[2], depth);
            if (h >= (uint64_t)count || hit[h]++)
                agree = 0;
            else
                at[3 * h] = v[0], at[3 * h + 1] = v[1], at[3 * h + 2] = v[2];
            uint32_t back[3];
            pcb_hilbert3_decode(h, depth, back);
            round &= memcmp(back, v, sizeof v) == 0;
            if (depth <= 3 || i % 7 == 0)
                agree &= validator_agrees(PCB_CURVE_HILBERT, depth, v[0], v[1], v[2]) &&
                         validator_agrees(PCB_CURVE_MORTON, depth, v[0], v[1], v[2]);
        }
        int steps = 1;
        for (int64_t h = 1; agree && h < count; h++)
            steps &= llabs(at[3 * h] - at[3 * h - 3]) + llabs(at[3 * h + 1] - at[3 * h - 2]) +
                         llabs(at[3 * h + 2] - at[3 * h - 1]) == 1;
        CHECK_MSG(agree && round && steps, "depth %d: bijective and the validator's %d, "
                  "round trips %d, neighbour steps %d", depth, agree, round, steps);
        CHECK(agree && at[0] == 0 && at[1] == 0 && at[2] == 0);
        CHECK(agree && at[3 * (count - 1)] == side - 1 && at[3 * (count - 1) + 1] == 0 &&
              at[3 * (count - 1) + 2] == 0);
        free(at), free(hit);
    }
    /* depth 21: random voxels, both ways and back */
    uint64_t s = 12345;
    int agree = 1, round = 1;
    for (int i = 0; i < 3000; i++) {
        uint32_t v[3], back[3];
        for (int k = 0; k < 3; k++)
            s = s * 6364136223846793005ull + 1442695040888963407ull, v[k] = (uint32_t)(s >> 43);
        const int depth = 1 + i % PCB_CURVE_MAX_DEPTH;
        for (int k = 0; k < 3; k++)
            v[k] &= (1u << depth) - 1;
        pcb_hilbert3_decode(pcb_hilbert3(v[0], v[1], v[2], depth), depth, back);
        round &= memcmp(back, v, sizeof v) == 0;
        agree &= validator_agrees(PCB_CURVE_HILBERT, depth, v[0], v[1], v[2]) &&
                 validator_agrees(PCB_CURVE_MORTON, depth, v[0], v[1], v[2]);
    }
    CHECK(agree && round);
    /* the spatial indexes' 10-bit, 32-bit twin of the transform agrees */
    int twins = 1;
    for (int i = 0; i < 3000; i++) {
        uint32_t v[3];
        for (int k = 0; k < 3; k++)
            s = s * 6364136223846793005ull + 1442695040888963407ull, v[k] = (uint32_t)(s >> 43);
        const int depth = 1 + i % 10;
        for (int k = 0; k < 3; k++)
            v[k] &= (1u << depth) - 1;
        twins &= pcb_hilbert3(v[0], v[1], v[2], depth) ==
                 (uint64_t)sp_hilbert_cells(v[0], v[1], v[2], depth);
    }
    CHECK(twins);
    /* the public entry points: round trips, and codes outside the cube refused */
    int64_t xyz[6] = {5, 0, 7, 1048575, 2097151, 3}, code[2], back[6];
    for (int curve = 0; curve < 2; curve++) {
        CHECK_RC(pcb_curve_encode(curve, 21, xyz, 2, code), PCB_OK);
        CHECK_RC(pcb_curve_decode(curve, 21, code, 2, back), PCB_OK);
        CHECK(memcmp(back, xyz, sizeof xyz) == 0);
        CHECK_RC(pcb_curve_encode(curve, 3, xyz, 1, code), PCB_OK);
        CHECK_RC(pcb_curve_encode(curve, 2, xyz, 1, code), PCB_EINVAL); /* 5 and 7 need 3 bits */
        const int64_t big = 512;
        CHECK_RC(pcb_curve_decode(curve, 3, &big, 1, back), PCB_EINVAL);
    }
    CHECK_RC(pcb_curve_encode(2, 3, xyz, 1, code), PCB_EINVAL);
    CHECK_RC(pcb_curve_encode(0, 22, xyz, 1, code), PCB_EINVAL);
    CHECK_RC(pcb_curve_encode(0, 0, xyz, 1, code), PCB_EINVAL);
}

/* The contract on five points of voxels of 1: two share a voxel (by index),
 * the least depth, a second cloud's number above the codes. */
static void test_by_hand(void)
{
    const float pts[] = {3.5f, 0, 0, 0, 0, 0, 1.2f, 2.9f, 0, 0.3f, 0.9f, 0.1f, 1, 0, 0,
                         /* cloud 1 */ 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    int64_t code[10];
    int32_t index[20];
    const double cell[3] = {1, 1, 1};
    CHECK_RC(pcb_serialize(pts, 2, 5, cell, NULL, PCB_CURVE_MORTON, 0, code, index), PCB_OK);
    /* voxels (3,0,0) (0,0,0) (1,2,0) (0,0,0) (1,0,0): depth 2, Morton 36 0 20 0 4 */
    const int64_t want[5] = {36, 0, 20, 0, 4};
    CHECK(memcmp(code, want, sizeof want) == 0);
    const int32_t order[5] = {1, 3, 4, 2, 0}, inverse[5] = {4, 0, 3, 1, 2};
    CHECK(memcmp(index, order, sizeof order) == 0 && memcmp(index + 10, inverse, sizeof inverse) == 0);
    /* cloud 1: its number at bit 3 x 2; (0,0,0) x 4 and (0,0,1) */
    CHECK(code[5] == 64 && code[6] == 65 && code[7] == 64 && code[8] == 64 && code[9] == 64);
    const int32_t order1[5] = {0, 2, 3, 4, 1};
    CHECK(memcmp(index + 5, order1, sizeof order1) == 0);
    /* Hilbert at depth 2 of the same: 0 is (0,0,0), and the validator agrees */
    CHECK_RC(pcb_serialize(pts, 2, 5, cell, NULL, PCB_CURVE_HILBERT, 0, code, index), PCB_OK);
    CHECK(code[1] == 0 && code[3] == 0 && code[5] == 64);
    pcb_task t = ser_task(pts, 2, 5, 1, PCB_CURVE_HILBERT, 0);
    pcb_result r = {.index = index, .code = code};
    pcb_report rep;
    CHECK_RC(pcb_serialize_validate(&t, &r, &rep), PCB_OK);
    CHECK_MSG(rep.ok, "%s", rep.detail);
    /* a depth given: codes at it (Morton's do not change, the cloud's bits move) */
    CHECK_RC(pcb_serialize(pts, 2, 5, cell, NULL, PCB_CURVE_MORTON, 5, code, index), PCB_OK);
    CHECK(code[0] == 36 && code[5] == (int64_t)1 << 15);
}

/* batch clouds of kind into one array (seeded) */
static float *clouds(const char *kind, int64_t n, int64_t batch, double snap)
{
    float *a = malloc((size_t)(batch * n * 3) * sizeof *a);
    if (a)
        CHECK_RC(pcb_gen_batch(kind, n, batch, strcmp(kind, "lidar") ? 90 : 3, snap, a), PCB_OK);
    return a;
}

/* Every implementation's answer on t, judged and compared with want's. */
static void every_impl(const pcb_task *t, const char *what)
{
    const pcb_impl *naive = pcb_find(PCB_SERIALIZE, "naive");
    pcb_result want, got;
    CHECK_RC(pcb_result_alloc(t, &want), PCB_OK);
    CHECK_RC(pcb_run(naive, t, &want, NULL), PCB_OK);
    pcb_judgement j;
    const pcb_promise exact = {.exact = 1};
    CHECK_RC(pcb_judge(t, &want, &exact, NULL, &j), PCB_OK);
    CHECK_MSG(j.verdict == PCB_VERDICT_PASS, "%s naive: %s", what, j.detail);
    for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
        if ((*it)->problem != PCB_SERIALIZE || *it == naive || pcb_impl_available(*it) != PCB_OK)
            continue;
        for (int threads = 1; threads <= 3; threads += 2) {
            pcb_task tt = *t;
            tt.opt.threads = threads;
            CHECK_RC(pcb_result_alloc(&tt, &got), PCB_OK);
            CHECK_RC(pcb_run(*it, &tt, &got, NULL), PCB_OK);
            CHECK_MSG(pcb_result_equal(&tt, &want, &got), "%s %s (%d threads): not naive's",
                      (*it)->name, what, threads);
            pcb_result_free(&got);
        }
    }
    pcb_result_free(&want);
}

static void test_every_impl_matches_naive(void)
{
    static const struct {
        const char *kind;
        int64_t n, batch;
        double cell, snap;
        int depth, origin;
    } sets[] = {
        {"lidar", 20000, 1, 0.1, 0, 0, 0},    {"lidar", 20000, 1, 0.05, 0.05, 16, 0},
        {"lidar", 8000, 1, 0.2, 0, 0, 1},     {"uniform", 3000, 3, 0.05, 0, 0, 0},
        {"duplicates", 1600, 2, 0.01, 0, 0, 0}, {"equal", 300, 1, 0.5, 0, 0, 0},
        {"offset", 2000, 1, 1.0, 0, 0, 0},    {"lattice", 1000, 1, 1.0, 0, 12, 1},
        {"uniform", 700, 1, 1e-5, 0, 0, 0},   {"clusters", 2000, 5, 0.02, 0, 21 - 1, 0},
    };
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        const int64_t n = sets[s].n, batch = sets[s].batch;
        float *a = clouds(sets[s].kind, n, batch, sets[s].snap);
        for (int curve = PCB_CURVE_MORTON; a && curve <= PCB_CURVE_HILBERT; curve++) {
            pcb_task t = ser_task(a, batch, n, sets[s].cell, curve, sets[s].depth);
            if (sets[s].origin) {
                t.origin_given = 1;
                t.origin[0] = -293.37, t.origin[1] = -202.5, t.origin[2] = -80.05;
            }
            char what[96];
            snprintf(what, sizeof what, "%s cell %g %s depth %d", sets[s].kind, sets[s].cell,
                     pcb_curve_name(curve), sets[s].depth);
            every_impl(&t, what);
        }
        free(a);
    }
}

/* A ragged batch: read whole (the batch's depth, each cloud's number),
 * -1 past each cloud's length; each cloud's order is its own alone. */
static void test_ragged_batch(void)
{
    const int64_t n = 500, batch = 3, lengths[3] = {500, 0, 123};
    float *a = clouds("uniform", n, batch, 0);
    pcb_task t = ser_task(a, batch, n, 0.1, PCB_CURVE_HILBERT, 0);
    t.lengths_a = lengths;
    every_impl(&t, "ragged");
    pcb_result r;
    CHECK_RC(pcb_result_alloc(&t, &r), PCB_OK);
    CHECK_RC(pcb_run(pcb_find(PCB_SERIALIZE, "naive"), &t, &r, NULL), PCB_OK);
    int depth = 1; /* cloud 2's number sits above the codes' 3 x depth bits */
    while (depth < PCB_CURVE_MAX_DEPTH && r.code[2 * n] >> (3 * depth) != 2)
        depth++;
    for (int64_t c = 0; c < batch; c++) {
        for (int64_t i = lengths[c]; i < n; i++)
            CHECK(r.index[c * n + i] == -1 && r.index[batch * n + c * n + i] == -1 &&
                  r.code[c * n + i] == -1);
        if (!lengths[c])
            continue;
        /* alone, at the batch's depth, its order is the same */
        pcb_task one = ser_task(a + c * n * 3, 1, lengths[c], 0.1, PCB_CURVE_HILBERT, depth);
        pcb_result alone;
        CHECK_RC(pcb_result_alloc(&one, &alone), PCB_OK);
        CHECK_RC(pcb_run(pcb_find(PCB_SERIALIZE, "naive"), &one, &alone, NULL), PCB_OK);
        CHECK(memcmp(alone.index, r.index + c * n, (size_t)lengths[c] * sizeof *r.index) == 0);
        CHECK(r.code[c * n] >> (3 * depth) == c &&
              (r.code[c * n] & (((int64_t)1 << (3 * depth)) - 1)) == alone.code[0]);
        pcb_result_free(&alone);
    }
    pcb_result_free(&r);
    free(a);
}

/* Each kind of wrong answer, planted in naive's: caught, and said. */
static void test_validator_rejects_wrong_answers(void)
{
    float *a = clouds("duplicates", 4000, 2, 0);
    const int64_t lengths[2] = {4000, 3000};
    pcb_task t = ser_task(a, 2, 4000, 0.05, PCB_CURVE_HILBERT, 0);
    t.lengths_a = lengths;
    pcb_result r;
    CHECK_RC(pcb_result_alloc(&t, &r), PCB_OK);
    CHECK_RC(pcb_run(pcb_find(PCB_SERIALIZE, "naive"), &t, &r, NULL), PCB_OK);
    int64_t tie = -1; /* a place whose next holds an equal code */
    for (int64_t j = 0; tie < 0 && j + 1 < t.n; j++)
        if (r.code[r.index[j]] == r.code[r.index[j + 1]])
            tie = j;
    CHECK(tie >= 0);
    static const char *const planted[] = {
        "a tie in decreasing index", "two places swapped", "a code off by one",
        "an inverse entry moved", "every code's low bit flipped",
        "the cloud's number dropped", "a slot past the length not -1", "a point placed twice"};
    for (int p = 0; p < 8 && tie >= 0; p++) {
        pcb_result w;
        CHECK_RC(pcb_result_alloc(&t, &w), PCB_OK);
        pcb_result_copy(&t, &w, &r);
        const int64_t n = t.n, c1 = n; /* cloud 1's first slot */
        switch (p) {
        case 0: {
            const int32_t i = w.index[tie];
            w.index[tie] = w.index[tie + 1], w.index[tie + 1] = i;
            w.index[2 * n + w.index[tie]] = (int32_t)tie;
            w.index[2 * n + w.index[tie + 1]] = (int32_t)(tie + 1);
            break;
        }
        case 1: {
            const int32_t i = w.index[10];
            w.index[10] = w.index[500], w.index[500] = i;
            break;
        }
        case 2: w.code[17]++; break;
        case 3: w.index[2 * n + 5] = (int32_t)(w.index[2 * n + 5] + 1) % 4000; break;
        case 4:
            for (int64_t i = 0; i < n; i++)
                w.code[i] ^= 1;
            break;
        case 5: /* the top bit of a code of cloud 1 is its number */
            w.code[c1 + 3] ^= (int64_t)1 << (pcb_curve_bits((uint64_t)w.code[c1 + 3]) - 1);
            break;
        case 6: w.index[c1 + 3500] = 0; break;
        case 7: w.index[3] = w.index[4]; break;
        }
        pcb_report rep;
        CHECK_RC(pcb_serialize_validate(&t, &w, &rep), PCB_OK);
        CHECK_MSG(!rep.ok && rep.recall < 1, "%s passed: %s", planted[p], rep.detail);
        pcb_result_free(&w);
    }
    /* the curve matters: Hilbert's answer is not Morton's */
    t.curve = PCB_CURVE_MORTON;
    pcb_report rep;
    CHECK_RC(pcb_serialize_validate(&t, &r, &rep), PCB_OK);
    CHECK(!rep.ok);
    pcb_result_free(&r);
    free(a);
}

static void test_invalid_arguments(void)
{
    const float pts[] = {0, 0, 0, 1, 1, 1}, nan_pt[] = {0, NAN, 0};
    int32_t index[4];
    int64_t code[2];
    const double good[3] = {0.5, 0.5, 0.5}, zero[3] = {0.5, 0, 0.5};
    const double above[3] = {0.5, 0, 0}; /* above point 0's y */
    CHECK_RC(pcb_serialize(pts, 1, 2, zero, NULL, 0, 0, code, index), PCB_EINVAL);
    CHECK_RC(pcb_serialize(pts, 1, 2, good, NULL, 2, 0, code, index), PCB_EINVAL); /* curve */
    CHECK_RC(pcb_serialize(pts, 1, 2, good, NULL, 0, 22, code, index), PCB_EINVAL);
    CHECK_RC(pcb_serialize(pts, 1, 2, good, NULL, 0, -1, code, index), PCB_EINVAL);
    CHECK_RC(pcb_serialize(nan_pt, 1, 1, good, NULL, 0, 0, code, index), PCB_EINVAL);
    CHECK_RC(pcb_serialize(NULL, 1, 2, good, NULL, 0, 0, code, index), PCB_EINVAL);
    CHECK_RC(pcb_serialize(pts, 1, 0, good, NULL, 0, 0, code, index), PCB_EINVAL);
    CHECK_RC(pcb_serialize(pts, 0, 2, good, NULL, 0, 0, code, index), PCB_EINVAL);
    CHECK_RC(pcb_serialize(pts, 1, 2, good, above, 0, 0, code, index), PCB_EINVAL);
    CHECK(strstr(pcb_errmsg(), "below the origin") != NULL);
    /* 1 apart at 0.01: coordinate 100 needs 7 bits */
    const double fine[3] = {0.01, 0.01, 0.01};
    CHECK_RC(pcb_serialize(pts, 1, 2, fine, NULL, 0, 6, code, index), PCB_EINVAL);
    CHECK(strstr(pcb_errmsg(), "bits an axis") != NULL);
    CHECK_RC(pcb_serialize(pts, 1, 2, fine, NULL, 0, 7, code, index), PCB_OK);
    const int64_t past[1] = {3}; /* a ragged length past n */
    pcb_task lt = ser_task(pts, 1, 2, 0.5, 0, 0);
    lt.lengths_a = past;
    CHECK_RC(pcb_task_check(&lt), PCB_EINVAL);
    const double tiny[3] = {1e-7, 1, 1}; /* 10^7 needs 24 bits */
    CHECK_RC(pcb_serialize(pts, 1, 2, tiny, NULL, 0, 0, code, index), PCB_EINVAL);
    /* the batch's bits: 3 x 21 leaves none for a second cloud */
    const float two[] = {0, 0, 0, 0, 0, 0};
    CHECK_RC(pcb_serialize(two, 2, 1, good, NULL, 0, 21, code, index), PCB_EINVAL);
    CHECK_RC(pcb_serialize(two, 2, 1, good, NULL, 0, 20, code, index), PCB_OK);
    pcb_task t = ser_task(pts, 1, 2, 1, 0, 0);
    pcb_result r = {.index = index}; /* the answer needs its codes */
    for (const pcb_impl *const *it = pcb_registry(); *it; it++)
        if ((*it)->problem == PCB_SERIALIZE && pcb_impl_available(*it) == PCB_OK)
            CHECK(pcb_run(*it, &t, &r, NULL) != PCB_OK);
    CHECK(strcmp(pcb_problem_name(PCB_SERIALIZE), "serialize") == 0);
    int32_t curve = -1;
    CHECK_RC(pcb_curve_parse("hilbert", &curve), PCB_OK);
    CHECK(curve == PCB_CURVE_HILBERT && strcmp(pcb_curve_name(curve), "hilbert") == 0);
    CHECK_RC(pcb_curve_parse("peano", &curve), PCB_EINVAL);
}

TEST_MAIN(T(test_curves), T(test_by_hand), T(test_every_impl_matches_naive),
          T(test_ragged_batch), T(test_validator_rejects_wrong_answers),
          T(test_invalid_arguments))
