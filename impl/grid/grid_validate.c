/* grid_validate.c - the grid-sampling validator: each cloud's voxels made
 * again in double precision, by the contract alone (grid.h: the double
 * quotient's floor, the kept point's rule) and in its own way: the
 * coordinates themselves are sorted by comparison (no packed keys, no span
 * limit), then every row of the answer is compared with them. The answer is
 * unique, so every entry must match: a voxel row's point and count, -1 and 0
 * past the last voxel, every point's inverse entry; MEAN: the lowest index
 * kept, and each voxel's mean point within its rounding (mean_right).
 * recall: the share of points whose voxel row and inverse entry are right. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impl/pcbench_judge.h"
#include "grid.h"

typedef struct {
    double v[3];
    int32_t i;
} voxel_of;

static int by_voxel_then_index(const void *pa, const void *pb)
{
    const voxel_of *a = pa, *b = pb;
    for (int k = 0; k < 3; k++)
        if (a->v[k] != b->v[k])
            return a->v[k] < b->v[k] ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* The squared distance to the voxel's centre, written out as the contract
 * says it (grid.h), one rounded operation at a time. */
static double centre_d2(const float *p, const double v[3], const double origin[3],
                        const double cell[3])
{
    const double dx = (double)p[0] - (origin[0] + (v[0] + 0.5) * cell[0]);
    const double dy = (double)p[1] - (origin[1] + (v[1] + 0.5) * cell[1]);
    const double dz = (double)p[2] - (origin[2] + (v[2] + 0.5) * cell[2]);
    return dx * dx + dy * dy + dz * dz;
}

/* MEAN: whether got is the voxel's mean point as the contract makes it (the
 * sum in double over the count, rounded to float32), recomputed here by a
 * compensated sum: within a float32 step of the mean, plus the error bound
 * of the contract's own double sum (count x 2^-52 x the largest |p|), so
 * any order of summation passes and a wrong mean does not. */
static int mean_right(const float *xyz, const voxel_of *vs, int64_t count, const float *got,
                      double want[3])
{
    int ok = 1;
    for (int k = 0; k < 3; k++) {
        double sum = 0, lost = 0, most = 0;
        for (int64_t e = 0; e < count; e++) { /* Neumaier's sum */
            const double x = (double)xyz[3 * vs[e].i + k], t = sum + x;
            lost += fabs(sum) >= fabs(x) ? (sum - t) + x : (x - t) + sum;
            sum = t;
            most = fmax(most, fabs(x));
        }
        want[k] = (sum + lost) / (double)count;
        const float near = (float)want[k];
        const double step = (double)nextafterf(fabsf(near), INFINITY) - fabs((double)near);
        const double tol = step + (double)(count + 1) * ldexp(most, -52);
        ok = ok && isfinite(got[k]) && fabs((double)got[k] - want[k]) <= tol;
    }
    return ok;
}

/* Cloud c's first fault in *detail (NULL: none); wrong points counted. */
static int64_t judge_cloud(const pcb_task *t, const pcb_result *r, int64_t c, voxel_of *vs,
                           char *detail, size_t size)
{
    const int64_t n = t->n;
    const float *xyz = t->a + c * n * 3;
    double origin[3];
    for (int k = 0; k < 3; k++) {
        origin[k] = t->origin[k];
        if (!t->origin_given) {
            origin[k] = xyz[k];
            for (int64_t i = 1; i < n; i++)
                origin[k] = fmin(origin[k], (double)xyz[3 * i + k]);
        }
    }
    for (int64_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++)
            vs[i].v[k] = floor(((double)xyz[3 * i + k] - origin[k]) / t->cell[k]);
        vs[i].i = (int32_t)i;
    }
    qsort(vs, (size_t)n, sizeof *vs, by_voxel_then_index);
    const int32_t *rows = r->index + c * n, *inverse = r->index + t->batch * n + c * n;
    const int32_t *count = r->count + c * n;
    const float *mean = t->select == PCB_GRID_MEAN ? r->mean + 3 * c * n : NULL;
    int64_t wrong = 0, v = 0;
    detail[0] = 0;
#define FAULT(...)                                                                            \
    do {                                                                                      \
        if (!detail[0])                                                                       \
            snprintf(detail, size, __VA_ARGS__);                                              \
    } while (0)
    for (int64_t j = 0; j < n; v++) {
        int64_t end = j + 1;
        while (end < n && memcmp(vs[end].v, vs[j].v, sizeof vs[j].v) == 0)
            end++;
        int32_t keep = vs[j].i; /* FIRST: the lowest index; NEAREST: ties to it */
        if (t->select == PCB_BALL_NEAREST) {
            double best = centre_d2(xyz + 3 * keep, vs[j].v, origin, t->cell);
            for (int64_t e = j + 1; e < end; e++) {
                const double d2 = centre_d2(xyz + 3 * vs[e].i, vs[j].v, origin, t->cell);
                if (d2 < best)
                    best = d2, keep = vs[e].i;
            }
        } else if (t->select == PCB_GRID_RANDOM) { /* the least draw, written out again */
            uint64_t least = UINT64_MAX;
            for (int64_t e = j; e < end; e++) {
                uint64_t z = t->seed + (uint64_t)(vs[e].i + 1) * 0x9e3779b97f4a7c15ull;
                z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
                z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
                z ^= z >> 31;
                if (z < least)
                    least = z, keep = vs[e].i;
            }
        }
        double want[3];
        const int mean_ok = !mean || mean_right(xyz, vs + j, end - j, mean + 3 * v, want);
        if (!mean_ok)
            FAULT("cloud %lld voxel %lld (%.17g, %.17g, %.17g): mean (%.9g, %.9g, %.9g), want "
                  "(%.9g, %.9g, %.9g)", (long long)c, (long long)v, vs[j].v[0], vs[j].v[1],
                  vs[j].v[2], mean[3 * v], mean[3 * v + 1], mean[3 * v + 2], want[0], want[1],
                  want[2]);
        const int row_right = rows[v] == keep && count[v] == end - j && mean_ok;
        if (!row_right)
            FAULT("cloud %lld voxel %lld (%.17g, %.17g, %.17g): point %d count %d, want point %d "
                  "count %lld", (long long)c, (long long)v, vs[j].v[0], vs[j].v[1], vs[j].v[2],
                  (int)rows[v], (int)count[v], (int)keep, (long long)(end - j));
        for (; j < end; j++) {
            const int inverse_right = inverse[vs[j].i] == v;
            if (!inverse_right)
                FAULT("cloud %lld point %d: inverse %d, want voxel %lld", (long long)c,
                      (int)vs[j].i, (int)inverse[vs[j].i], (long long)v);
            wrong += !row_right || !inverse_right;
        }
    }
    for (int64_t e = v; e < n; e++)
        if (rows[e] != -1 || count[e] != 0 ||
            (mean && (mean[3 * e] != 0 || mean[3 * e + 1] != 0 || mean[3 * e + 2] != 0))) {
            FAULT("cloud %lld row %lld past its %lld voxels: point %d count %d, want -1 and 0 "
                  "(and a mean of 0)",
                  (long long)c, (long long)e, (long long)v, (int)rows[e], (int)count[e]);
            wrong++;
        }
#undef FAULT
    return wrong;
}

int pcb_grid_validate(const pcb_task *t, const pcb_result *r, pcb_report *rep)
{
    if (!rep || !r || !r->index)
        return pcb_fail(PCB_EINVAL, "grid validate: missing result or report");
    memset(rep, 0, sizeof *rep);
    rep->recall = rep->worst_ratio = rep->gap = rep->bound = -1;
    int rc = pcb_task_check(t);
    if (rc != PCB_OK)
        return rc;
    if (t->problem != PCB_GRID)
        return pcb_fail(PCB_EINVAL, "grid validate: task is %s", pcb_problem_name(t->problem));
    if (!r->count)
        return pcb_fail(PCB_EINVAL, "grid validate: the answer has no counts");
    if (t->select == PCB_GRID_MEAN && !r->mean)
        return pcb_fail(PCB_EINVAL, "grid validate: select mean: the answer has no mean points");
    voxel_of *vs = malloc((size_t)t->n * sizeof *vs);
    if (!vs)
        return pcb_fail(PCB_ENOMEM, "grid validate: no memory for %lld points", (long long)t->n);
    int64_t wrong = 0, voxels = 0;
    char detail[sizeof rep->detail], first[sizeof rep->detail] = "";
    for (int64_t c = 0; c < t->batch; c++) {
        wrong += judge_cloud(t, r, c, vs, detail, sizeof detail);
        if (detail[0] && !first[0])
            memcpy(first, detail, sizeof first);
        for (int64_t e = 0; e < t->n && r->count[c * t->n + e] > 0; e++)
            voxels++;
    }
    free(vs);
    const int64_t points = t->batch * t->n;
    rep->recall = points ? 1.0 - (double)(wrong < points ? wrong : points) / (double)points : 1;
    rep->ok = wrong == 0 && !first[0];
    if (rep->ok)
        snprintf(rep->detail, sizeof rep->detail, "%lld points in %lld voxels right (%s, %.1f "
                 "points a voxel)", (long long)points, (long long)voxels,
                 pcb_ball_select_name(t->select), voxels ? (double)points / (double)voxels : 0.0);
    else
        snprintf(rep->detail, sizeof rep->detail, "%lld of %lld points wrong; %s",
                 (long long)(wrong < points ? wrong : points), (long long)points, first);
    return PCB_OK;
}
