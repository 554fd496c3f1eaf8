/* test_ragged.c - ragged batches (pcb_task.lengths_a/b): every
 * implementation of every problem against the call on each cloud alone (a
 * problem read whole, serialize: against its reference on the whole batch),
 * padding around every cloud's answer, the defined answers of empty clouds,
 * the judge catching planted wrong ones, argument checks, and the CPU replay
 * of how a GPU sampler made for equal sizes takes a ragged cloud (padding
 * that copies the start point). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/cloud.h"
#include "impl/pcbench_judge.h"
#include "impl/problem.h"
#include "impl/ragged.h"
#include "testlib.h"

enum { BATCH = 5, N = 48, NQ = 40, K = 6, M = 20 };
/* full, empty, one point, fewer than M samples, most */
static const int64_t LEN_A[BATCH] = {N, 0, 1, 7, 45};
static const int64_t LEN_B[BATCH] = {NQ, 9, 0, 5, 33};

typedef struct {
    pcb_task task;
    float *a, *b;
    int64_t la[BATCH], lb[BATCH];
} set;

/* Padding slots hold NaN: a run that reads them is caught by its answer.
 * (In place: the task points at the set's lengths.) */
static void make_set(set *out, pcb_problem p)
{
    set s;
    memset(&s, 0, sizeof s);
    const int emd = p == PCB_EMD;
    const int64_t nq = emd ? N : NQ;
    s.a = malloc((size_t)(BATCH * N * 3) * sizeof(float));
    s.b = malloc((size_t)(BATCH * nq * 3) * sizeof(float));
    for (int64_t c = 0; c < BATCH; c++) {
        s.la[c] = LEN_A[c];
        s.lb[c] = emd ? LEN_A[c] : LEN_B[c];
        pcb_cloud x, y;
        CHECK_RC(pcb_generate("uniform", N, 70 + (uint64_t)c, &x), PCB_OK);
        CHECK_RC(pcb_generate("sphere", nq, 90 + (uint64_t)c, &y), PCB_OK);
        for (int64_t i = 0; i < N * 3; i++)
            s.a[c * N * 3 + i] = i < s.la[c] * 3 ? x.xyz[i] : NAN;
        for (int64_t i = 0; i < nq * 3; i++)
            s.b[c * nq * 3 + i] = i < s.lb[c] * 3 ? y.xyz[i] : NAN;
        pcb_cloud_free(&x), pcb_cloud_free(&y);
    }
    *out = s;
    /* the problem's own arguments as its sample task sets them (a problem
     * added later needs nothing here), then this test's sizes */
    const float small[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    pcb_task own;
    CHECK_RC(pcb_sample_task(p, small, small, 4, &own), PCB_OK);
    const int reads_b = own.nq > 0;
    own.batch = BATCH, own.n = N, own.nq = reads_b ? nq : 0, own.a = s.a;
    own.b = reads_b ? s.b : NULL, own.lengths_a = out->la, own.lengths_b = reads_b ? out->lb : NULL;
    out->task = own;
    if (p == PCB_FPS)
        out->task.m = M, out->task.start = 0;
    if (p == PCB_KNN || p == PCB_BALL)
        out->task.k = K;
    if (p == PCB_BALL)
        out->task.radius = 0.6, out->task.select = PCB_BALL_NEAREST;
}

static void free_set(set *s)
{
    free(s->a), free(s->b);
}

/* Cloud c's answer in a ragged result equals the cloud's own run, every
 * array its problem's answer has (index, dist2, value, price, count): the
 * cloud's part gathered by the library's own mapping (ragged.c), so no
 * problem's layout is spelled here. */
static int same_as_alone(const pcb_impl *impl, const set *s, const pcb_result *r, int64_t c)
{
    if (pcb_face(s->task.problem)->whole_ragged) { /* read whole: the reference's, bit for bit */
        pcb_result want;
        if (pcb_result_alloc(&s->task, &want) != PCB_OK)
            return 0;
        const int same = pcb_run(pcb_reference(s->task.problem), &s->task, &want, NULL) ==
                             PCB_OK && pcb_result_equal(&s->task, &want, r);
        pcb_result_free(&want);
        return same;
    }
    pcb_task one;
    if (!pcb_ragged_cloud(&s->task, c, &one))
        return 1; /* an empty cloud: checked by the judge (padding, NaN) */
    pcb_result alone, part;
    if (pcb_result_alloc(&one, &alone) != PCB_OK)
        return 0;
    if (pcb_ragged_part(&one, r, &part) != PCB_OK) {
        pcb_result_free(&alone);
        return 0;
    }
    int same = pcb_run(impl, &one, &alone, NULL) == PCB_OK;
    pcb_ragged_move(&s->task, c, (pcb_result *)r, &part, 0);
    part.has_price = r->has_price;
    same = same && pcb_result_equal(&one, &part, &alone);
    pcb_result_free(&alone), pcb_result_free(&part);
    return same;
}

/* Every available implementation of every problem takes the ragged batch
 * (host tasks go cloud by cloud), its answer is each cloud's own, and the
 * judge passes it. */
static void test_every_impl_each_cloud_alone(void)
{
    int ran = 0;
    for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
        const pcb_impl *impl = *it;
        if (pcb_impl_available(impl) != PCB_OK)
            continue;
        set s;
        make_set(&s, impl->problem);
        pcb_result r;
        CHECK_RC(pcb_result_alloc(&s.task, &r), PCB_OK);
        const int rc = pcb_run(impl, &s.task, &r, NULL);
        if (rc == PCB_EUNSUPPORTED) { /* its limits (e.g. EMD sizes a GPU kernel needs) */
            pcb_result_free(&r), free_set(&s);
            continue;
        }
        CHECK_RC(rc, PCB_OK);
        for (int64_t c = 0; rc == PCB_OK && c < BATCH; c++)
            if (!same_as_alone(impl, &s, &r, c)) {
                fprintf(stderr, "  %s %s: cloud %lld differs from its own call\n",
                        pcb_problem_name(impl->problem), impl->name, (long long)c);
                CHECK(0);
            }
        pcb_judgement j;
        const pcb_promise p = pcb_promise_of(impl, &s.task);
        CHECK_RC(pcb_judge_full(&s.task, &r, &p, &j), PCB_OK);
        if (rc == PCB_OK && j.verdict == PCB_VERDICT_FAIL) {
            fprintf(stderr, "  %s %s: %s\n", pcb_problem_name(impl->problem), impl->name,
                    j.detail);
            CHECK(0);
        }
        /* the defined empty answers: cloud 1 of A is empty, cloud 2 of B */
        if (impl->problem == PCB_FPS)
            CHECK(r.index[1 * M] == -1 && r.index[1 * M + M - 1] == -1 &&
                  r.index[2 * M] >= 0 && r.index[2 * M + 1] == -1 && r.index[3 * M + 6] >= 0 &&
                  r.index[3 * M + 7] == -1);
        if (impl->problem == PCB_NN)
            CHECK(r.index[1 * NQ] == -1 && r.dist2[1 * NQ] == INFINITY);
        if (impl->problem == PCB_CHAMFER)
            CHECK(isnan(r.value[1]) && isnan(r.value[2]) && isfinite(r.value[0]));
        if (impl->problem == PCB_EMD) /* pair 2 holds one point a side */
            CHECK(isnan(r.value[1]) && isfinite(r.value[2]) && isfinite(r.value[0]));
        if (impl->problem == PCB_BALL)
            CHECK(r.count[1 * NQ] == 0 && r.index[1 * NQ * K] == -1);
        ran++;
        pcb_result_free(&r), free_set(&s);
    }
    CHECK(ran >= 15);
}

/* The judge of ragged answers rejects each planted wrong one: an entry in
 * a cloud's padding, a wrong entry inside a cloud, a 0 for an empty pair's
 * value (PyTorch3D's chamfer of an empty cloud). */
static void test_judge_rejects_wrong_answers(void)
{
    for (int p = 0; p < PCB_NPROBLEMS; p++) {
        set s;
        make_set(&s, (pcb_problem)p);
        const pcb_impl *ref = pcb_reference((pcb_problem)p);
        pcb_result r;
        CHECK_RC(pcb_result_alloc(&s.task, &r), PCB_OK);
        CHECK_RC(pcb_run(ref, &s.task, &r, NULL), PCB_OK);
        const pcb_promise promise = pcb_promise_of(ref, &s.task);
        pcb_judgement j;
        CHECK_RC(pcb_judge_full(&s.task, &r, &promise, &j), PCB_OK);
        CHECK(j.verdict == PCB_VERDICT_PASS);
        /* the first group's slots of a cloud, from the problem's face: cloud
         * 3 (7 points, 5 queries) ends in padding, cloud 4 (45, 33) starts
         * with answers */
        const pcb_problem_face *f = pcb_face((pcb_problem)p);
        const int64_t slots = pcb_face_span(&s.task, f->rows[0]) * pcb_face_width(&s.task);
        const int64_t pad = 3 * slots + slots - 1;
        const int32_t kept = r.index[pad];
        r.index[pad] = 0; /* a real point's index where padding belongs */
        CHECK_RC(pcb_judge_full(&s.task, &r, &promise, &j), PCB_OK);
        CHECK(j.verdict == PCB_VERDICT_FAIL && strstr(j.detail, "not padding"));
        r.index[pad] = kept;
        const int64_t inside = 4 * slots + 1;
        r.index[inside] = r.index[inside] == 0 ? 1 : 0;
        CHECK_RC(pcb_judge_full(&s.task, &r, &promise, &j), PCB_OK);
        if (j.verdict != PCB_VERDICT_FAIL)
            fprintf(stderr, "  %s: a wrong entry passed: %s\n", pcb_problem_name(p), j.detail);
        CHECK(j.verdict == PCB_VERDICT_FAIL && strstr(j.detail, "cloud 4"));
        if (p == PCB_CHAMFER || p == PCB_EMD) {
            CHECK_RC(pcb_run(ref, &s.task, &r, NULL), PCB_OK);
            r.value[1] = 0;
            CHECK_RC(pcb_judge_full(&s.task, &r, &promise, &j), PCB_OK);
            CHECK(j.verdict == PCB_VERDICT_FAIL && strstr(j.detail, "not NaN"));
        }
        pcb_result_free(&r), free_set(&s);
    }
}

/* Chamfer conventions over empty clouds: a mean of no terms is NaN, a
 * distance to no point +inf; a sum of no terms is 0. */
static void test_chamfer_empty_conventions(void)
{
    set s;
        make_set(&s, PCB_CHAMFER);
    pcb_result r;
    CHECK_RC(pcb_result_alloc(&s.task, &r), PCB_OK);
    CHECK_RC(pcb_run(pcb_reference(PCB_CHAMFER), &s.task, &r, NULL), PCB_OK);
    pcb_chamfer_convention c;
    double v[BATCH];
    CHECK_RC(pcb_chamfer_convention_parse("squared-sum-sum", &c), PCB_OK);
    CHECK_RC(pcb_chamfer_values(&s.task, r.dist2, &c, v), PCB_OK);
    CHECK(v[1] == INFINITY && v[2] == INFINITY && isfinite(v[0])); /* one side empty each */
    CHECK_RC(pcb_chamfer_convention_parse("squared-mean-sum", &c), PCB_OK);
    CHECK_RC(pcb_chamfer_values(&s.task, r.dist2, &c, v), PCB_OK);
    CHECK(isnan(v[1]) && isnan(v[2]) && v[0] == r.value[0]);
    pcb_result_free(&r), free_set(&s);
}

/* Lengths outside 0..n, a start beyond a cloud, EMD pairs of unequal
 * sizes, a non-finite coordinate inside a cloud: EINVAL; the same in the
 * padding: never read. Device tasks: only implementations that read
 * lengths (no GPU needed to say so). */
static void test_invalid_lengths(void)
{
    set s;
        make_set(&s, PCB_NN);
    CHECK_RC(pcb_task_check(&s.task), PCB_OK); /* NaN in the padding only */
    s.la[3] = N + 1;
    CHECK_RC(pcb_task_check(&s.task), PCB_EINVAL);
    CHECK(strstr(pcb_errmsg(), "cloud 3") != NULL);
    s.la[3] = -1;
    CHECK_RC(pcb_task_check(&s.task), PCB_EINVAL);
    s.la[3] = 7;
    s.a[3 * N * 3 + 2] = INFINITY; /* point 0 of cloud 3 */
    CHECK_RC(pcb_task_check(&s.task), PCB_EINVAL);
    CHECK(strstr(pcb_errmsg(), "cloud 3 point 0") != NULL);
    free_set(&s);
    make_set(&s, PCB_FPS);
    s.task.start = 3; /* cloud 2 has one point */
    CHECK_RC(pcb_task_check(&s.task), PCB_EINVAL);
    CHECK(strstr(pcb_errmsg(), "cloud 2") != NULL);
    free_set(&s);
    make_set(&s, PCB_EMD);
    s.lb[4] = 44;
    CHECK_RC(pcb_task_check(&s.task), PCB_EINVAL);
    CHECK(strstr(pcb_errmsg(), "pair 4") != NULL);
    free_set(&s);
    const float *nowhere = (const float *)(uintptr_t)0x10;
    const int64_t *lengths = (const int64_t *)(uintptr_t)0x20;
    for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
        const pcb_impl *impl = *it;
        if (!impl->run_device)
            continue;
        pcb_task t = {.problem = impl->problem, .batch = 2, .n = 64, .nq = 64, .m = 8,
                      .k = 4, .radius = 0.1, .a = nowhere, .b = nowhere,
                      .memory = PCB_MEM_DEVICE, .lengths_a = lengths};
        CHECK_RC(pcb_task_fits(impl, &t), impl->ragged ? PCB_OK : PCB_EUNSUPPORTED);
    }
    const pcb_impl *pruned = pcb_find(PCB_FPS, "cuda_pruned");
    CHECK(!pruned || pcb_impl_ragged(pruned));
}

/* The GPU sampler's way with a ragged cloud, replayed with dp: the cloud's
 * padding made copies of its start point, the equal-size answer's indices
 * from the length on read as -1, is the cloud's own answer. */
static void test_padding_replay(void)
{
    set s;
        make_set(&s, PCB_FPS);
    const pcb_impl *dp = pcb_find(PCB_FPS, "dp");
    pcb_result r;
    CHECK_RC(pcb_result_alloc(&s.task, &r), PCB_OK);
    CHECK_RC(pcb_run(dp, &s.task, &r, NULL), PCB_OK);
    for (int64_t c = 0; c < BATCH; c++) {
        if (s.la[c] == 0)
            continue;
        float *x = s.a + c * N * 3;
        for (int64_t i = s.la[c]; i < N; i++)
            memcpy(x + i * 3, x + s.task.start * 3, 3 * sizeof(float));
        pcb_task whole = {.problem = PCB_FPS, .batch = 1, .n = N, .m = M, .a = x};
        int32_t idx[M];
        pcb_result one = {.index = idx};
        CHECK_RC(pcb_run(dp, &whole, &one, NULL), PCB_OK);
        for (int j = 0; j < M; j++)
            CHECK((idx[j] < s.la[c] ? idx[j] : -1) == r.index[c * M + j]);
    }
    pcb_result_free(&r), free_set(&s);
}

TEST_MAIN(T(test_every_impl_each_cloud_alone), T(test_judge_rejects_wrong_answers),
          T(test_chamfer_empty_conventions), T(test_invalid_lengths), T(test_padding_replay))
