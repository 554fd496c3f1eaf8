/* chamfer_common.c - conventions, values, and chamfer by an NN
 * implementation run both ways. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chamfer.h"

static const char *const distance_names[] = {"squared", "euclidean"};
static const char *const points_names[] = {"mean", "sum"};
static const char *const directions_names[] = {"sum", "average", "forward"};

static int word(const char *s, size_t len, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (strlen(names[i]) == len && strncmp(s, names[i], len) == 0)
            return i;
    return -1;
}

int pcb_chamfer_convention_parse(const char *name, pcb_chamfer_convention *out)
{
    if (!out)
        return pcb_fail(PCB_EINVAL, "chamfer convention: nowhere to put it");
    const char *s = name ? name : "", *d1 = strchr(s, '-'), *d2 = d1 ? strchr(d1 + 1, '-') : NULL;
    int d = d1 ? word(s, (size_t)(d1 - s), distance_names, 2) : -1;
    int p = d2 ? word(d1 + 1, (size_t)(d2 - d1 - 1), points_names, 2) : -1;
    int r = d2 ? word(d2 + 1, strlen(d2 + 1), directions_names, 3) : -1;
    if (d < 0 || p < 0 || r < 0)
        return pcb_fail(PCB_EINVAL, "chamfer convention '%s': need DISTANCE-POINTS-DIRECTIONS, "
                        "DISTANCE squared or euclidean, POINTS mean or sum, DIRECTIONS sum, "
                        "average or forward (e.g. squared-mean-sum)", s);
    out->distance = (pcb_chamfer_distance)d;
    out->points = (pcb_chamfer_points)p;
    out->directions = (pcb_chamfer_directions)r;
    return PCB_OK;
}

const char *pcb_chamfer_convention_name(const pcb_chamfer_convention *c, char *buf, size_t size)
{
    if (!buf || !size)
        return "";
    if (!c || (unsigned)c->distance > 1 || (unsigned)c->points > 1 || (unsigned)c->directions > 2)
        snprintf(buf, size, "?");
    else
        snprintf(buf, size, "%s-%s-%s", distance_names[c->distance], points_names[c->points],
                 directions_names[c->directions]);
    return buf;
}

static double direction_value(const double *d2, int64_t n, const pcb_chamfer_convention *c)
{
    double sum = 0;
    for (int64_t i = 0; i < n; i++)
        sum += c->distance == PCB_CD_EUCLIDEAN ? sqrt(d2[i]) : d2[i];
    return c->points == PCB_CD_MEAN ? sum / (double)n : sum;
}

double pcb_chamfer_combine(const double *ab, int64_t n, const double *ba, int64_t nq,
                           const pcb_chamfer_convention *c)
{
    const double forward = direction_value(ab, n, c);
    if (c->directions == PCB_CD_FORWARD)
        return forward;
    const double both = forward + direction_value(ba, nq, c);
    return c->directions == PCB_CD_AVERAGE ? both / 2 : both;
}

/* pcb_chamfer_values on a task already checked (a run's fetch: pcb_run did). */
static int values_of(const pcb_task *t, const float *dist2, const pcb_chamfer_convention *c,
                     double *value)
{
    const int64_t per = t->n + t->nq;
    double *d = malloc((size_t)per * sizeof *d);
    if (!d)
        return pcb_fail(PCB_ENOMEM, "chamfer values: out of memory");
    for (int64_t b = 0; b < t->batch; b++) {
        /* pair b's distances: A's among the first batch*n, B's after them
         * (a ragged pair's own points: a mean over an empty cloud is NaN,
         * the distances to one +inf, its padding's) */
        const int64_t la = pcb_cloud_size(t, 0, b), lb = pcb_cloud_size(t, 1, b);
        for (int64_t i = 0; i < la; i++)
            d[i] = dist2[b * t->n + i];
        for (int64_t j = 0; j < lb; j++)
            d[la + j] = dist2[t->batch * t->n + b * t->nq + j];
        value[b] = pcb_chamfer_combine(d, la, d + la, lb, c);
    }
    free(d);
    return PCB_OK;
}

int pcb_chamfer_values(const pcb_task *t, const float *dist2, const pcb_chamfer_convention *c,
                       double *value)
{
    int rc = pcb_task_check(t);
    if (rc != PCB_OK)
        return rc;
    if (t->problem != PCB_CHAMFER || t->memory != PCB_MEM_HOST || !dist2 || !c || !value)
        return pcb_fail(PCB_EINVAL, "chamfer values: need a host chamfer task, its distances, "
                        "a convention and an output");
    return values_of(t, dist2, c, value);
}

#ifdef PCB_HAVE_CUDA
int pcb_chamfer_backward_cuda(const pcb_task *t, const int32_t *idx, const float *grad,
                              float *grad_a, float *grad_b); /* chamfer_cuda_tiles.cu */
int pcb_cuda_available(void);                               /* cuda_util.cu */
#endif

int pcb_chamfer_backward(const pcb_task *t, const int32_t *index, const float *grad,
                         float *grad_a, float *grad_b)
{
    int rc = pcb_task_check(t);
    if (rc != PCB_OK)
        return rc;
    if (t->problem != PCB_CHAMFER || t->memory != PCB_MEM_DEVICE)
        return pcb_fail(PCB_EINVAL, "chamfer backward: needs a device-resident chamfer task");
    if (!index || !grad || !grad_a || !grad_b)
        return pcb_fail(PCB_EINVAL, "chamfer backward: missing index, gradient or output");
    if (t->lengths_a || t->lengths_b)
        return pcb_fail(PCB_EUNSUPPORTED, "chamfer backward: no ragged batches (the Python "
                        "loss differentiates a ragged pair through PyTorch)");
#ifdef PCB_HAVE_CUDA
    if ((rc = pcb_cuda_available()) != PCB_OK)
        return rc;
    return pcb_chamfer_backward_cuda(t, index, grad, grad_a, grad_b);
#else
    return pcb_fail(PCB_EUNAVAIL, "chamfer backward: built without CUDA");
#endif
}

pcb_task pcb_chamfer_direction(const pcb_task *t, int backward)
{
    pcb_task d = *t;
    d.problem = PCB_NN;
    if (!backward) { /* A's points queried against B */
        d.a = t->b, d.b = t->a;
        d.n = t->nq, d.nq = t->n;
    }
    return d;
}

/* ---- chamfer by an NN implementation ------------------------------------------- */
typedef struct {
    const pcb_impl *nn;
    pcb_task task, dir[2];
    void *state[2];
} by_nn;

void pcb_chamfer_by_nn_release(void *state)
{
    by_nn *s = state;
    if (!s)
        return;
    for (int k = 0; k < 2; k++)
        if (s->nn->release)
            s->nn->release(s->state[k]);
    free(s);
}

int pcb_chamfer_by_nn_prepare(const pcb_impl *nn, const pcb_task *t, void **state)
{
    by_nn *s = calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "chamfer %s: out of memory", nn->name);
    s->nn = nn;
    s->task = *t;
    int rc = PCB_OK;
    for (int k = 0; k < 2 && rc == PCB_OK; k++) {
        s->dir[k] = pcb_chamfer_direction(t, k);
        if ((rc = pcb_task_fits(nn, &s->dir[k])) == PCB_OK)
            rc = nn->prepare(&s->dir[k], &s->state[k]);
    }
    if (rc != PCB_OK) {
        pcb_chamfer_by_nn_release(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

int pcb_chamfer_by_nn_compute(void *state)
{
    by_nn *s = state;
    int rc = PCB_OK;
    for (int k = 0; k < 2 && rc == PCB_OK; k++)
        rc = s->nn->compute(s->state[k]);
    return rc;
}

int pcb_chamfer_by_nn_sync(void *state)
{
    by_nn *s = state;
    int rc = PCB_OK;
    for (int k = 0; k < 2 && rc == PCB_OK && s->nn->sync; k++)
        rc = s->nn->sync(s->state[k]);
    return rc;
}

int pcb_chamfer_by_nn_fetch(void *state, pcb_result *out)
{
    by_nn *s = state;
    const pcb_task *t = &s->task;
    if (!out->dist2)
        return pcb_fail(PCB_EINVAL, "chamfer %s: the answer needs its dist2 array", s->nn->name);
    const int64_t first = t->batch * t->n;
    int rc = PCB_OK;
    for (int k = 0; k < 2 && rc == PCB_OK; k++) {
        pcb_result r = {.index = out->index + (k ? first : 0), .dist2 = out->dist2 + (k ? first : 0)};
        rc = s->nn->fetch(s->state[k], &r);
    }
    const pcb_chamfer_convention standard = {PCB_CD_SQUARED, PCB_CD_MEAN, PCB_CD_BOTH};
    return rc == PCB_OK && out->value ? values_of(t, out->dist2, &standard, out->value) : rc;
}

int pcb_chamfer_by_nn_counters(void *state, pcb_counters *c)
{
    by_nn *s = state;
    c->distance_evals = 0;
    for (int k = 0; k < 2; k++) {
        pcb_counters one = {-1, -1, -1};
        int rc = s->nn->counters ? s->nn->counters(s->state[k], &one) : PCB_OK;
        if (rc != PCB_OK)
            return rc;
        c->distance_evals = one.distance_evals < 0 || c->distance_evals < 0
                                ? -1
                                : c->distance_evals + one.distance_evals;
    }
    return PCB_OK;
}

int pcb_chamfer_by_nn_device_ms(void *state, double *ms)
{
    by_nn *s = state;
    *ms = 0;
    for (int k = 0; k < 2; k++) {
        double one = 0;
        int rc = s->nn->device_ms ? s->nn->device_ms(s->state[k], &one) : PCB_EUNSUPPORTED;
        if (rc != PCB_OK)
            return rc;
        *ms += one;
    }
    return PCB_OK;
}
