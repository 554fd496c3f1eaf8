/* serialize_validate.c - the serialization validator: every point's code
 * made again from the definitions alone and in its own way, then the order
 * and inverse checked against them.
 *
 * - Voxels: the contract's floor of the double quotient (grid.h), each
 *   cloud's origin found again; the depth found again from the largest
 *   voxel coordinate of the batch.
 * - Morton: a bit at a time, bit i of x, y, z to bits 3i+2, 3i+1, 3i.
 * - Hilbert: from the curve's recursive definition, not Skilling's bit
 *   transform: a cube's octants are visited in the order of RANK below,
 *   and octant k holds the curve of the next depth under the symmetry
 *   SYMMETRY[k] (an axis permutation and reflections); a voxel's index is
 *   the octants' ranks from the top level down, each level's coordinates
 *   mapped into the next one's frame by the inverse symmetry. The table is
 *   the curve's generator (John Skilling's curve, Pointcept's "hilbert");
 *   tests/test_serialize.c holds the two ways equal on whole cubes and at
 *   depth 21, and the curve a Hilbert curve (each step one voxel to a
 *   neighbour).
 *
 * An answer is right when every point's code is the one made here, the
 * order is a permutation of the cloud's points ascending by (code, index),
 * the inverse is the order's inverse, and every slot past a ragged cloud's
 * length holds -1. recall: the share of points whose code, place and
 * inverse entry are right. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impl/pcbench_judge.h"
#include "serialize.h"

/* The octant (x y z bits, x the highest) visited k-th: a Gray code. */
static const int OCTANT[8] = {0, 1, 3, 2, 6, 7, 5, 4};
/* In octant k, the next depth's curve u appears at w[a] = u[perm[a]],
 * reflected (M - u[perm[a]]) where flip's bit a (x: 4, y: 2, z: 1). */
static const struct {
    int perm[3], flip;
} SYMMETRY[8] = {
    {{1, 2, 0}, 0}, {{1, 0, 2}, 0}, {{0, 1, 2}, 0}, {{2, 1, 0}, 5},
    {{2, 1, 0}, 0}, {{0, 1, 2}, 0}, {{1, 0, 2}, 6}, {{1, 2, 0}, 5},
};

static uint64_t hilbert_by_definition(const uint64_t v[3], int depth)
{
    int rank[8];
    for (int k = 0; k < 8; k++)
        rank[OCTANT[k]] = k;
    uint64_t u[3] = {v[0], v[1], v[2]}, code = 0;
    for (int level = depth; level >= 1; level--) {
        const uint64_t half = (uint64_t)1 << (level - 1), m = half - 1;
        const int octant = (int)((u[0] >> (level - 1) & 1) << 2 | (u[1] >> (level - 1) & 1) << 1 |
                                 (u[2] >> (level - 1) & 1));
        const int k = rank[octant];
        code = code << 3 | (uint64_t)k;
        uint64_t next[3];
        for (int a = 0; a < 3; a++) { /* undo the octant's symmetry */
            const uint64_t local = u[a] & m;
            next[SYMMETRY[k].perm[a]] = (SYMMETRY[k].flip >> (2 - a) & 1) ? m - local : local;
        }
        memcpy(u, next, sizeof u);
    }
    return code;
}

static uint64_t morton_by_definition(const uint64_t v[3], int depth)
{
    uint64_t code = 0;
    for (int i = 0; i < depth; i++)
        code |= (v[0] >> i & 1) << (3 * i + 2) | (v[1] >> i & 1) << (3 * i + 1) |
                (v[2] >> i & 1) << (3 * i);
    return code;
}

typedef struct {
    int64_t code;
    int32_t i;
} coded;

static int by_code_then_index(const void *pa, const void *pb)
{
    const coded *a = pa, *b = pb;
    if (a->code != b->code)
        return a->code < b->code ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* Each cloud's origin, then the batch's depth (0 with *why when a voxel
 * coordinate is outside what a depth can hold). */
static int depth_of(const pcb_task *t, double *origin, char *why, size_t size)
{
    double top = 0;
    for (int64_t c = 0; c < t->batch; c++) {
        const int64_t n = pcb_cloud_size(t, 0, c);
        const float *xyz = t->a + c * t->n * 3;
        for (int k = 0; k < 3; k++) {
            double lo = n > 0 ? xyz[k] : 0;
            for (int64_t i = 1; i < n; i++)
                lo = fmin(lo, (double)xyz[3 * i + k]);
            origin[3 * c + k] = t->origin_given ? t->origin[k] : lo;
            for (int64_t i = 0; i < n; i++) {
                const double v = floor(((double)xyz[3 * i + k] - origin[3 * c + k]) / t->cell[k]);
                if (v < 0) {
                    snprintf(why, size, "cloud %lld point %lld: voxel coordinate %.17g below 0",
                             (long long)c, (long long)i, v);
                    return 0;
                }
                top = fmax(top, v);
            }
        }
    }
    int depth = t->depth ? t->depth : 1;
    while (!t->depth && depth < PCB_CURVE_MAX_DEPTH && ldexp(1, depth) <= top)
        depth++;
    if (ldexp(1, depth) <= top) {
        snprintf(why, size, "voxel coordinate %.17g outside depth %d", top, depth);
        return 0;
    }
    return depth;
}

/* Cloud c's first fault in detail (empty: none); its wrong points. */
static int64_t judge_cloud(const pcb_task *t, const pcb_result *r, int64_t c, int depth,
                           const double origin[3], coded *want, char *seen, char *detail,
                           size_t size)
{
    const int64_t n = pcb_cloud_size(t, 0, c), span = t->n;
    const float *xyz = t->a + c * span * 3;
    const int32_t *order = r->index + c * span, *inverse = r->index + t->batch * span + c * span;
    const int64_t *code = r->code + c * span;
    int64_t wrong = 0;
    detail[0] = 0;
#define FAULT(...)                                                                            \
    do {                                                                                      \
        if (!detail[0])                                                                       \
            snprintf(detail, size, __VA_ARGS__);                                              \
    } while (0)
    for (int64_t i = 0; i < n; i++) {
        uint64_t v[3];
        for (int k = 0; k < 3; k++)
            v[k] = (uint64_t)floor(((double)xyz[3 * i + k] - origin[k]) / t->cell[k]);
        const uint64_t h = t->curve == PCB_CURVE_HILBERT ? hilbert_by_definition(v, depth)
                                                         : morton_by_definition(v, depth);
        want[i] = (coded){(int64_t)((uint64_t)c << (3 * depth) | h), (int32_t)i};
    }
    qsort(want, (size_t)n, sizeof *want, by_code_then_index);
    memset(seen, 0, (size_t)(n > 0 ? n : 0));
    for (int64_t j = 0; j < n; j++) {
        const int32_t i = want[j].i;
        const int code_right = code[i] == want[j].code;
        const int place_right = order[j] == i && inverse[i] == j;
        if (!code_right)
            FAULT("cloud %lld point %d: code %lld, want %lld (%s, depth %d)", (long long)c,
                  (int)i, (long long)code[i], (long long)want[j].code, pcb_curve_name(t->curve),
                  depth);
        if (order[j] != i)
            FAULT("cloud %lld place %lld: point %d, want %d (code %lld)", (long long)c,
                  (long long)j, (int)order[j], (int)i, (long long)want[j].code);
        if (inverse[i] != j)
            FAULT("cloud %lld point %d: inverse %d, want %lld", (long long)c, (int)i,
                  (int)inverse[i], (long long)j);
        if (order[j] >= 0 && order[j] < n && seen[order[j]]++)
            FAULT("cloud %lld: point %d placed twice", (long long)c, (int)order[j]);
        wrong += !code_right || !place_right;
    }
    for (int64_t j = n; j < span; j++)
        if (order[j] != -1 || inverse[j] != -1 || code[j] != -1) {
            FAULT("cloud %lld slot %lld past its %lld points is not padding: order %d, inverse "
                  "%d, code %lld, want -1", (long long)c, (long long)j, (long long)n,
                  (int)order[j], (int)inverse[j], (long long)code[j]);
            wrong++;
        }
#undef FAULT
    return wrong;
}

int pcb_serialize_validate(const pcb_task *t, const pcb_result *r, pcb_report *rep)
{
    if (!rep || !r || !r->index)
        return pcb_fail(PCB_EINVAL, "serialize validate: missing result or report");
    memset(rep, 0, sizeof *rep);
    rep->recall = rep->worst_ratio = rep->gap = rep->bound = -1;
    int rc = pcb_task_check(t);
    if (rc != PCB_OK)
        return rc;
    if (t->problem != PCB_SERIALIZE)
        return pcb_fail(PCB_EINVAL, "serialize validate: task is %s",
                        pcb_problem_name(t->problem));
    if (!r->code)
        return pcb_fail(PCB_EINVAL, "serialize validate: the answer has no codes");
    double *origin = malloc((size_t)t->batch * 3 * sizeof *origin);
    coded *want = malloc((size_t)t->n * sizeof *want);
    char *seen = malloc((size_t)t->n);
    if (!origin || !want || !seen) {
        free(origin), free(want), free(seen);
        return pcb_fail(PCB_ENOMEM, "serialize validate: no memory for %lld points",
                        (long long)t->n);
    }
    char detail[sizeof rep->detail], first[sizeof rep->detail] = "";
    int64_t wrong = 0, points = 0;
    const int depth = depth_of(t, origin, first, sizeof first);
    for (int64_t c = 0; depth && c < t->batch; c++) {
        wrong += judge_cloud(t, r, c, depth, origin + 3 * c, want, seen, detail, sizeof detail);
        if (detail[0] && !first[0])
            memcpy(first, detail, sizeof first);
        points += pcb_cloud_size(t, 0, c);
    }
    free(origin), free(want), free(seen);
    rep->recall = !depth ? 0 : points ? 1.0 - (double)(wrong < points ? wrong : points) / (double)points : 1;
    rep->ok = depth && wrong == 0 && !first[0];
    if (rep->ok)
        snprintf(rep->detail, sizeof rep->detail, "%lld points' %s codes (depth %d), order and "
                 "inverse right", (long long)points, pcb_curve_name(t->curve), depth);
    else
        snprintf(rep->detail, sizeof rep->detail, "%lld of %lld points wrong; %s",
                 (long long)(wrong < points ? wrong : points), (long long)points, first);
    return PCB_OK;
}
