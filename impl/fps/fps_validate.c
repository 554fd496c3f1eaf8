/* fps_validate.c - checks an FPS answer in double precision, accepting every
 * correct sequence (any choice among tied points).
 *
 * Distances are recomputed in double from the float32 coordinates the
 * implementation was given, so the rounding of the coordinates themselves is
 * shared and needs no slack. What differs is the implementation's float32
 * arithmetic on them: each squared distance carries a relative error of a
 * few float32 units in the last place (about 3e-7 with or without FMA, every
 * term being >= 0), and so does its running minimum. Step j is accepted when
 *     d(chosen) >= dmax * (1 - FPS_REL_TOL) - FPS_ABS_TOL
 * with d = a point's minimum squared distance to the previous samples and
 * dmax its maximum over all points. FPS_REL_TOL = 1e-5 leaves a margin of
 * ~30x; FPS_ABS_TOL = 1e-36 covers float32 underflow of tiny distances. dmax
 * is taken over the points not chosen yet: samples are distinct (m <= n), so
 * when dmax = 0 (every remaining point duplicates a chosen one) any unchosen
 * index passes, and a repeated index fails. An answer whose only fault is
 * such repeats reports them in rep->unmatched (the classic kernel's known
 * defect, PyTorch3D #1486); a repeat while a point at a positive distance
 * remains is simply wrong.
 * O(n * m) time, O(n) doubles and bytes of memory per cloud; the clouds of
 * a batch are checked side by side (OpenMP). A step's scan is not: at 4,096
 * steps the threads' start and join cost more than they save (measured on a
 * 16-core host: 3.5 s against 0.6 s for 50,000 points). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impl/pcbench_judge.h"
#include "fps.h"

#define FPS_REL_TOL 1e-5
#define FPS_ABS_TOL 1e-36

static double d2_double(const float *p, const float *q)
{
    double dx = (double)p[0] - q[0], dy = (double)p[1] - q[1], dz = (double)p[2] - q[2];
    return dx * dx + dy * dy + dz * dz;
}

/* Checks one cloud; on failure writes the reason to rep and returns 0. A
 * repeat at distance 0 is counted in *repeats (its first one described in
 * rep) and checking goes on. *margin gets the smallest (d(chosen) - dmax) /
 * dmax seen (0 = exact max). */
static int check_cloud(const pcb_task *t, int64_t b, const int32_t *idx, double *mind,
                       unsigned char *taken, pcb_report *rep, double *margin, int64_t *repeats)
{
    const float *xyz = t->a + b * t->n * 3;
    const int64_t n = t->n;
    for (int64_t j = 0; j < t->m; j++)
        if (idx[j] < 0 || idx[j] >= n) {
            snprintf(rep->detail, sizeof rep->detail,
                     "cloud %lld step %lld: index %ld out of range 0..%lld", (long long)b,
                     (long long)j, (long)idx[j], (long long)n - 1);
            return 0;
        }
    if (idx[0] != t->start) {
        snprintf(rep->detail, sizeof rep->detail, "cloud %lld: first index %ld, start is %lld",
                 (long long)b, (long)idx[0], (long long)t->start);
        return 0;
    }
    for (int64_t k = 0; k < n; k++) {
        mind[k] = INFINITY;
        taken[k] = 0;
    }
    for (int64_t j = 1; j < t->m; j++) {
        const float *q = xyz + 3 * (int64_t)idx[j - 1];
        taken[idx[j - 1]] = 1;
        double dmax = -1;
        int64_t kmax = 0;
        for (int64_t k = 0; k < n; k++) {
            double d = d2_double(xyz + 3 * k, q);
            if (d < mind[k])
                mind[k] = d;
            if (!taken[k] && mind[k] > dmax) {
                dmax = mind[k];
                kmax = k;
            }
        }
        if (taken[idx[j]]) {
            if (dmax > 0) {
                snprintf(rep->detail, sizeof rep->detail,
                         "cloud %lld step %lld: chose %ld again but %lld has d2=%.9g",
                         (long long)b, (long long)j, (long)idx[j], (long long)kmax, dmax);
                return 0;
            }
            if (!*repeats)
                snprintf(rep->detail, sizeof rep->detail,
                         "cloud %lld step %lld: index %ld repeated (samples must be distinct; "
                         "%lld is not chosen yet)", (long long)b, (long long)j, (long)idx[j],
                         (long long)kmax);
            ++*repeats;
            continue;
        }
        double chosen = mind[idx[j]];
        if (!(chosen >= dmax * (1 - FPS_REL_TOL) - FPS_ABS_TOL)) {
            snprintf(rep->detail, sizeof rep->detail,
                     "cloud %lld step %lld: chose %ld (d2=%.9g) but %lld has d2=%.9g",
                     (long long)b, (long long)j, (long)idx[j], chosen, (long long)kmax, dmax);
            return 0;
        }
        if (dmax > 0 && (chosen - dmax) / dmax < *margin)
            *margin = (chosen - dmax) / dmax;
    }
    return 1;
}

int pcb_fps_validate(const pcb_task *t, const pcb_result *r, pcb_report *rep)
{
    if (!t || !r || !r->index || !rep)
        return pcb_fail(PCB_EINVAL, "fps validate: missing task, result or report");
    int rc = pcb_task_check(t);
    if (rc != PCB_OK)
        return rc;
    if (t->problem != PCB_FPS)
        return pcb_fail(PCB_EINVAL, "fps validate: not an FPS task");
    /* Clouds side by side, each with its own verdict, then taken in order:
     * the first that fails is the verdict, as one after the other would
     * find it (pcb_task_check: batch >= 1). */
    const int64_t batch = t->batch;
    struct {
        pcb_report rep;
        double margin;
        int64_t repeats;
        int ok; /* 1, 0, or -1: no memory */
    } *cloud = calloc((size_t)batch, sizeof *cloud);
    if (!cloud)
        return pcb_fail(PCB_ENOMEM, "fps validate: no memory for %lld verdicts", (long long)batch);
#pragma omp parallel for schedule(dynamic, 1) if (batch > 1)
    for (int64_t b = 0; b < batch; b++) {
        double *mind = malloc((size_t)t->n * sizeof *mind);
        unsigned char *taken = malloc((size_t)t->n);
        cloud[b].ok = mind && taken ? check_cloud(t, b, r->index + b * t->m, mind, taken,
                                                  &cloud[b].rep, &cloud[b].margin,
                                                  &cloud[b].repeats)
                                    : -1;
        free(mind);
        free(taken);
    }
    for (int64_t b = 0; b < batch; b++)
        if (cloud[b].ok < 0) {
            free(cloud);
            return pcb_fail(PCB_ENOMEM, "fps validate: no memory for %lld distances",
                            (long long)t->n);
        }
    double margin = 0;
    int64_t repeats = 0;
    rep->ok = 1;
    rep->unmatched = 0;
    for (int64_t b = 0; b < batch && rep->ok; b++) {
        if (cloud[b].repeats && !repeats) /* the first repeat's description */
            memcpy(rep->detail, cloud[b].rep.detail, sizeof rep->detail);
        repeats += cloud[b].repeats;
        margin = cloud[b].margin < margin ? cloud[b].margin : margin;
        if (!cloud[b].ok) {
            rep->ok = 0;
            memcpy(rep->detail, cloud[b].rep.detail, sizeof rep->detail);
        }
    }
    free(cloud);
    if (rep->ok && repeats) { /* wrong through the repeats alone */
        rep->ok = 0;
        rep->unmatched = repeats;
        const size_t len = strlen(rep->detail);
        snprintf(rep->detail + len, sizeof rep->detail - len, "; %lld repeated sample%s",
                 (long long)repeats, repeats == 1 ? "" : "s");
    }
    if (rep->ok)
        snprintf(rep->detail, sizeof rep->detail,
                 "%lld x %lld steps ok, worst relative shortfall %.2g (tolerance %.0e)",
                 (long long)t->batch, (long long)t->m, margin < 0 ? -margin : 0.0, FPS_REL_TOL);
    return PCB_OK;
}
