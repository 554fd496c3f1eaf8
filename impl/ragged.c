/* ragged.c - ragged host tasks cloud by cloud: each cloud's own task, its
 * answer placed where the equal-size layout puts it, padding around it.
 * One mapping (segments) serves the run (scatter) and the judge (gather),
 * so the two cannot disagree on where a cloud's answer lives. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcbench_judge.h"

int64_t pcb_cloud_size(const pcb_task *t, int which, int64_t i)
{
    const int64_t *lengths = which ? t->lengths_b : t->lengths_a;
    if (t->memory == PCB_MEM_HOST && lengths)
        return lengths[i];
    return which ? t->nq : t->n;
}

int pcb_impl_ragged(const pcb_impl *impl)
{
    return impl && impl->ragged;
}

/* Whether the problem reads cloud b (and so needs it non-empty). */
static int uses_b(pcb_problem p)
{
    return p != PCB_FPS;
}

int pcb_ragged_cloud(const pcb_task *t, int64_t i, pcb_task *cloud)
{
    const int64_t la = pcb_cloud_size(t, 0, i), lb = pcb_cloud_size(t, 1, i);
    *cloud = *t;
    cloud->batch = 1;
    cloud->lengths_a = cloud->lengths_b = NULL;
    cloud->a = t->a + i * t->n * 3;
    cloud->n = la;
    if (uses_b(t->problem)) {
        cloud->b = t->b + i * t->nq * 3;
        cloud->nq = lb;
    }
    if (t->problem == PCB_FPS)
        cloud->m = t->m < la ? t->m : la;
    return la > 0 && (!uses_b(t->problem) || lb > 0);
}

/* Where cloud i's answer lives: up to two runs of answers (whole offset,
 * cloud offset, count) per array; rows is its count array's run. */
typedef struct {
    int64_t whole[2], part[2], count[2];
    int64_t rows_whole, rows_count; /* ball's count */
    int64_t span_whole[2], span[2]; /* every slot of the cloud in the whole (padding included) */
} segments;

static segments segments_of(const pcb_task *t, int64_t i)
{
    const int64_t la = pcb_cloud_size(t, 0, i), lb = pcb_cloud_size(t, 1, i);
    segments s;
    memset(&s, 0, sizeof s);
    switch (t->problem) {
    case PCB_FPS:
        s.whole[0] = s.span_whole[0] = i * t->m;
        s.count[0] = t->m < la ? t->m : la;
        s.span[0] = t->m;
        break;
    case PCB_NN:
        s.whole[0] = s.span_whole[0] = i * t->nq;
        s.count[0] = lb;
        s.span[0] = t->nq;
        break;
    case PCB_KNN:
    case PCB_BALL:
        s.whole[0] = s.span_whole[0] = i * t->nq * t->k;
        s.count[0] = lb * t->k;
        s.span[0] = t->nq * t->k;
        s.rows_whole = i * t->nq;
        s.rows_count = lb;
        break;
    case PCB_CHAMFER:
        s.whole[0] = s.span_whole[0] = i * t->n;
        s.count[0] = la;
        s.span[0] = t->n;
        s.whole[1] = s.span_whole[1] = t->batch * t->n + i * t->nq;
        s.part[1] = la;
        s.count[1] = lb;
        s.span[1] = t->nq;
        break;
    default: /* EMD */
        s.whole[0] = s.span_whole[0] = i * t->n;
        s.count[0] = la;
        s.span[0] = t->n;
        break;
    }
    return s;
}

/* Padding over cloud i's slots in the whole result: index -1, dist2 +inf,
 * price 0, count 0. */
static void pad_cloud(const pcb_task *t, int64_t i, pcb_result *out)
{
    const segments s = segments_of(t, i);
    for (int g = 0; g < 2; g++)
        for (int64_t j = s.span_whole[g]; j < s.span_whole[g] + s.span[g]; j++) {
            out->index[j] = -1;
            if (out->dist2)
                out->dist2[j] = INFINITY;
            if (out->price)
                out->price[j] = 0;
        }
    for (int64_t j = 0; out->count && j < t->nq; j++)
        out->count[s.rows_whole + j] = 0;
}

/* Copy cloud i's answer between the whole result and the cloud's own
 * (to_whole 1: into the whole). */
static void move_cloud(const pcb_task *t, int64_t i, pcb_result *whole, pcb_result *part,
                       int to_whole)
{
    const segments s = segments_of(t, i);
#define MOVE(field, w, p, c)                                                                   \
    do {                                                                                       \
        if (whole->field && part->field && (c) > 0) {                                          \
            if (to_whole)                                                                      \
                memcpy(whole->field + (w), part->field + (p), (size_t)(c) * sizeof *whole->field); \
            else                                                                               \
                memcpy(part->field + (p), whole->field + (w), (size_t)(c) * sizeof *whole->field); \
        }                                                                                      \
    } while (0)
    for (int g = 0; g < 2; g++) {
        MOVE(index, s.whole[g], s.part[g], s.count[g]);
        MOVE(dist2, s.whole[g], s.part[g], s.count[g]);
        if (t->problem == PCB_EMD)
            MOVE(price, s.whole[g], s.part[g], s.count[g]);
    }
    MOVE(count, s.rows_whole, 0, s.rows_count);
    MOVE(value, i, 0, 1);
    MOVE(bound, i, 0, 1);
#undef MOVE
    if (to_whole && part->has_price)
        whole->has_price = 1;
}

/* A result for one cloud's own task with the arrays like has (the
 * implementation or validator sees what the caller gave). */
static int cloud_result(const pcb_task *cloud, const pcb_result *like, pcb_result *part)
{
    int rc = pcb_result_alloc(cloud, part);
    if (rc != PCB_OK)
        return rc;
    if (!like->dist2)
        free(part->dist2), part->dist2 = NULL;
    if (!like->value)
        free(part->value), part->value = NULL;
    if (!like->price)
        free(part->price), part->price = NULL;
    if (!like->count)
        free(part->count), part->count = NULL;
    return PCB_OK;
}

/* The value of a pair with an empty cloud (the default chamfer convention;
 * EMD's mean matched distance): a mean of no terms. */
static void empty_values(const pcb_task *t, int64_t i, pcb_result *out)
{
    if (out->value)
        out->value[i] = NAN;
    if (out->bound && t->problem == PCB_EMD)
        out->bound[i] = 0; /* the empty matching is optimal */
}

int pcb_ragged_run(const pcb_impl *impl, const pcb_task *t, pcb_result *out,
                   pcb_counters *counters)
{
    pcb_counters sum = {0, 0, 0};
    int rc = PCB_OK, counted = 0;
    for (int64_t i = 0; i < t->batch && rc == PCB_OK; i++) {
        pcb_task cloud;
        pad_cloud(t, i, out);
        if (!pcb_ragged_cloud(t, i, &cloud)) {
            if (t->problem == PCB_CHAMFER || t->problem == PCB_EMD)
                empty_values(t, i, out);
            continue;
        }
        pcb_result part;
        pcb_counters c;
        if ((rc = cloud_result(&cloud, out, &part)) != PCB_OK)
            break;
        double bound = out->bound ? out->bound[i] : NAN;
        part.bound = out->bound ? &bound : NULL;
        rc = pcb_run(impl, &cloud, &part, counters ? &c : NULL);
        if (rc == PCB_OK) {
            move_cloud(t, i, out, &part, 1);
            if (counters && c.distance_evals >= 0) {
                sum.distance_evals += c.distance_evals, sum.bids += c.bids;
                sum.iterations += c.iterations, counted = 1;
            }
        }
        part.bound = NULL;
        pcb_result_free(&part);
    }
    if (counters) {
        *counters = sum;
        if (!counted)
            counters->distance_evals = counters->bids = counters->iterations = -1;
    }
    return rc;
}

/* The first slot of cloud i outside its answer that is not padding, or -1. */
static int64_t not_padding(const pcb_task *t, int64_t i, const pcb_result *r)
{
    const segments s = segments_of(t, i);
    for (int g = 0; g < 2; g++)
        for (int64_t j = s.span_whole[g] + s.count[g]; j < s.span_whole[g] + s.span[g]; j++)
            if (r->index[j] != -1 || (r->dist2 && r->dist2[j] != INFINITY))
                return j;
    for (int64_t j = s.rows_count; r->count && j < t->nq; j++)
        if (r->count[s.rows_whole + j] != 0)
            return s.rows_whole + j;
    return -1;
}

int pcb_ragged_judge(const pcb_task *t, const pcb_result *answer, const pcb_promise *p,
                     const int32_t *reference, pcb_judgement *j)
{
    memset(j, 0, sizeof *j);
    j->verdict = PCB_VERDICT_PASS;
    j->rep.recall = j->rep.worst_ratio = j->rep.gap = j->rep.bound = -1;
    j->rep.ok = 1;
    int64_t clouds = 0;
    for (int64_t i = 0; i < t->batch; i++) {
        pcb_task cloud;
        const int has = pcb_ragged_cloud(t, i, &cloud);
        const int64_t slot = not_padding(t, i, answer);
        if (slot >= 0) {
            j->verdict = PCB_VERDICT_FAIL, j->rep.ok = 0;
            snprintf(j->detail, sizeof j->detail,
                     "cloud %lld: answer slot %lld beyond its %lld / %lld points is not padding",
                     (long long)i, (long long)slot, (long long)cloud.n, (long long)cloud.nq);
            return PCB_OK;
        }
        if (!has) {
            const int valued = t->problem == PCB_CHAMFER || t->problem == PCB_EMD;
            if (valued && answer->value && !isnan(answer->value[i])) {
                j->verdict = PCB_VERDICT_FAIL, j->rep.ok = 0;
                snprintf(j->detail, sizeof j->detail,
                         "cloud %lld: a pair with an empty cloud has value %g, not NaN",
                         (long long)i, answer->value[i]);
                return PCB_OK;
            }
            continue;
        }
        pcb_result part, want = {0};
        int rc = cloud_result(&cloud, answer, &part);
        if (rc == PCB_OK && reference && !(want.index = malloc(
                                              (size_t)pcb_answer_count(&cloud) * sizeof(int32_t))))
            rc = pcb_fail(PCB_ENOMEM, "judge: out of memory");
        if (rc != PCB_OK) {
            pcb_result_free(&part);
            return rc;
        }
        pcb_result whole = *answer;
        double bound = answer->bound ? answer->bound[i] : 0;
        part.bound = answer->bound ? &bound : NULL;
        part.has_price = answer->has_price;
        move_cloud(t, i, &whole, &part, 0);
        if (reference) {
            pcb_result ref_whole = {.index = (int32_t *)reference}, ref_part = {.index = want.index};
            move_cloud(t, i, &ref_whole, &ref_part, 0);
        }
        pcb_judgement one;
        rc = pcb_judge(&cloud, &part, p, want.index, &one);
        part.bound = NULL;
        pcb_result_free(&part);
        free(want.index);
        if (rc != PCB_OK)
            return rc;
        clouds++;
        if (one.verdict == PCB_VERDICT_FAIL || (one.verdict == PCB_VERDICT_KNOWN &&
                                                j->verdict == PCB_VERDICT_PASS)) {
            const pcb_verdict v = one.verdict;
            *j = one;
            snprintf(j->detail, sizeof j->detail, "cloud %lld: %.280s", (long long)i, one.detail);
            if (v == PCB_VERDICT_FAIL)
                return PCB_OK;
        } else if (j->verdict == PCB_VERDICT_PASS) {
            j->compared = one.compared;
            j->rep.gap = one.rep.gap > j->rep.gap ? one.rep.gap : j->rep.gap;
            j->rep.bound = one.rep.bound > j->rep.bound ? one.rep.bound : j->rep.bound;
        }
    }
    if (j->verdict == PCB_VERDICT_PASS)
        snprintf(j->detail, sizeof j->detail, "%lld of %lld clouds judged one by one, padding "
                 "checked", (long long)clouds, (long long)t->batch);
    return PCB_OK;
}
