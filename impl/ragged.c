/* ragged.c - where each cloud of a ragged task has its answer: its own
 * task, the slots of its answer in the equal-size layout, the padding
 * around it. One mapping (segments) serves the run (run.c: scatter) and
 * the judge (judge.c: gather), so the two cannot disagree; it calls
 * neither. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "problem.h"
#include "ragged.h"

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

int pcb_ragged_cloud(const pcb_task *t, int64_t i, pcb_task *cloud)
{
    const pcb_problem_face *f = pcb_face(t->problem);
    const int64_t la = pcb_cloud_size(t, 0, i), lb = pcb_cloud_size(t, 1, i);
    *cloud = *t;
    cloud->batch = 1;
    cloud->lengths_a = cloud->lengths_b = NULL;
    cloud->a = t->a + i * t->n * 3;
    cloud->n = la;
    if (f->reads_b) {
        cloud->b = t->b + i * t->nq * 3;
        cloud->nq = lb;
    }
    if (f->rows[0] == PCB_ROWS_SAMPLES)
        cloud->m = t->m < la ? t->m : la;
    return la > 0 && (!f->reads_b || lb > 0);
}

/* Where cloud i's answer lives: up to two runs of answers (whole offset,
 * cloud offset, count) per array; rows is its count array's run. */
typedef struct {
    int64_t whole[2], part[2], count[2];
    int64_t rows_whole, rows_count; /* ball's count */
    int64_t span_whole[2], span[2]; /* every slot of the cloud in the whole (padding included) */
} segments;

/* From the face's layout: group g's rows of cloud i follow the batch's
 * earlier clouds, after every cloud's rows of the groups before it. */
static segments segments_of(const pcb_task *t, int64_t i)
{
    const pcb_problem_face *f = pcb_face(t->problem);
    const int64_t la = pcb_cloud_size(t, 0, i), lb = pcb_cloud_size(t, 1, i);
    const int64_t width = pcb_face_width(t);
    segments s;
    memset(&s, 0, sizeof s);
    int64_t base = 0, part = 0;
    for (int g = 0; g < f->groups; g++) {
        const int64_t span = pcb_face_span(t, f->rows[g]);
        const int64_t rows = f->rows[g] == PCB_ROWS_SAMPLES ? (t->m < la ? t->m : la)
                             : f->rows[g] == PCB_ROWS_A     ? la
                                                            : lb;
        s.whole[g] = s.span_whole[g] = base + i * span * width;
        s.part[g] = part;
        s.count[g] = rows * width;
        s.span[g] = span * width;
        if (g == 0 && f->counts) {
            s.rows_whole = i * span;
            s.rows_count = rows;
        }
        base += t->batch * span * width;
        part += s.count[g];
    }
    return s;
}

/* Padding over cloud i's slots in the whole result: index -1, dist2 +inf,
 * price 0, count 0. */
void pcb_ragged_pad(const pcb_task *t, int64_t i, pcb_result *out)
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
    const pcb_problem_face *f = pcb_face(t->problem);
    for (int64_t j = 0; out->count && j < pcb_face_span(t, f->rows[0]); j++)
        out->count[s.rows_whole + j] = 0;
    for (int64_t j = 0; f->codes && out->code && j < t->n; j++)
        out->code[i * t->n + j] = -1;
    const int64_t means = pcb_face_means(t);
    for (int64_t j = 0; out->mean && j < means; j++)
        out->mean[i * means + j] = 0;
}

/* Copy cloud i's answer between the whole result and the cloud's own
 * (to_whole 1: into the whole). */
void pcb_ragged_move(const pcb_task *t, int64_t i, pcb_result *whole, pcb_result *part,
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
        if (pcb_face(t->problem)->priced)
            MOVE(price, s.whole[g], s.part[g], s.count[g]);
    }
    MOVE(count, s.rows_whole, 0, s.rows_count);
    if (pcb_face_means(t))
        MOVE(mean, 3 * s.rows_whole, 0, 3 * s.rows_count);
    if (pcb_face(t->problem)->codes)
        MOVE(code, i * t->n, 0, pcb_cloud_size(t, 0, i));
    MOVE(value, i, 0, 1);
    MOVE(bound, i, 0, 1);
#undef MOVE
    if (to_whole && part->has_price)
        whole->has_price = 1;
}

/* A result for one cloud's own task with the arrays like has (the
 * implementation or validator sees what the caller gave). */
int pcb_ragged_part(const pcb_task *cloud, const pcb_result *like, pcb_result *part)
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
    if (!like->code)
        free(part->code), part->code = NULL;
    if (!like->mean)
        free(part->mean), part->mean = NULL;
    return PCB_OK;
}

/* The value of a pair with an empty cloud (the default chamfer convention;
 * EMD's mean matched distance): a mean of no terms. */
void pcb_ragged_empty(const pcb_task *t, int64_t i, pcb_result *out)
{
    if (out->value)
        out->value[i] = NAN;
    if (out->bound && pcb_face(t->problem)->priced)
        out->bound[i] = 0; /* the empty matching is optimal */
}

/* The first slot of cloud i outside its answer that is not padding, or -1.
 * Distances only where the answer has them (its face's distances: an
 * implementation need not write a dist2 array it was given otherwise). */
int64_t pcb_ragged_not_padding(const pcb_task *t, int64_t i, const pcb_result *r)
{
    const segments s = segments_of(t, i);
    const int distances = r->dist2 && pcb_face(t->problem)->distances;
    for (int g = 0; g < 2; g++)
        for (int64_t j = s.span_whole[g] + s.count[g]; j < s.span_whole[g] + s.span[g]; j++)
            if (r->index[j] != -1 || (distances && r->dist2[j] != INFINITY))
                return j;
    for (int64_t j = s.rows_count; r->count && j < t->nq; j++)
        if (r->count[s.rows_whole + j] != 0)
            return s.rows_whole + j;
    return -1;
}

