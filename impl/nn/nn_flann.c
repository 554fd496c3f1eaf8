/* nn_flann.c - the slides' baseline: FLANN through its C API, serial, for
 * the nearest neighbour (nn flann, nn flann_randomized) and the k nearest
 * (knn flann: the same single tree's knnSearch, exact).
 *
 * flann: FLANN_INDEX_KDTREE_SINGLE, one k-d tree searched exactly (eps 0,
 * unlimited checks). prepare builds one index per cloud of the batch, so a
 * benchmark times the build (prepare) apart from the queries (compute).
 * flann_randomized: FLANN's default FLANN_INDEX_KDTREE, 4 randomized trees,
 * 32 checks: approximate by design (in 3-D it misses neighbours even with
 * unlimited checks), registered as such, and not repeatable (see
 * base_params). The two differ only in their
 * parameters, so they share this file. cores = 1: the baseline is serial.
 * FLANN returns squared Euclidean distances, as this interface does, and
 * kNN rows ascending (its own order among ties: exact, not canonical). It
 * is asked for min(k, n) neighbours, never more: with k > n it returns
 * zeros for the missing ones (a real point 0); the rest of the row is
 * padded here. ball flann: the single tree's radiusSearch (squared radius,
 * the strict d2 < r2 test), one centre a call: for NEAREST its k nearest
 * inside points (KNNRadiusResultSet), for FIRST every inside point; the
 * selection's row of k is made here (ball.h). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <flann/flann.h>

#include "impl/ball/ball.h"
#include "impl/knn/knn.h"
#include "nn.h"

_Static_assert(sizeof(int) == sizeof(int32_t), "FLANN writes int indices into int32_t arrays");

typedef struct {
    pcb_task task;
    const char *name;
    struct FLANNParameters params;
    flann_index_t *index; /* one per cloud of the batch; NULL where not built */
    int64_t row, len;     /* answers a query (1, or kNN's k), of them FLANN's: min(k, n) */
    int32_t *idx;         /* batch * nq * row */
    float *dist2;
    int32_t *short_idx;   /* one cloud's nq * len answers when len < row, else NULL */
    float *short_d2;
    int32_t *count;       /* ball: batch * nq */
    int32_t *found;       /* ball: one centre's inside points, n of them at most */
    float *found_d2;
} flann_state;

static void flann_release(void *state)
{
    flann_state *s = state;
    if (!s)
        return;
    for (int64_t b = 0; s->index && b < s->task.batch; b++)
        if (s->index[b])
            flann_free_index_float(s->index[b], &s->params); /* nothing to do if it fails */
    free(s->index);
    free(s->idx);
    free(s->dist2);
    free(s->short_idx);
    free(s->short_d2);
    free(s->count);
    free(s->found);
    free(s->found_d2);
    free(s);
}

static int flann_prepare_with(const pcb_task *t, void **state, const char *name,
                              struct FLANNParameters params)
{
    int rc = pcb_nn_coords_fit(t, name);
    if (rc != PCB_OK)
        return rc;
    if (t->n > INT_MAX || t->nq > INT_MAX)
        return pcb_fail(PCB_EUNSUPPORTED, "nn %s: FLANN counts rows in int (%d at most)", name,
                        INT_MAX);
    const int64_t row = t->problem == PCB_NN ? 1 : t->k, len = row < t->n ? row : t->n;
    if (len < 1)
        return pcb_fail(PCB_EINVAL, "%s %s: %lld neighbours of %lld points",
                        pcb_problem_name(t->problem), name, (long long)row, (long long)t->n);
    if (t->nq > INT_MAX / len)
        return pcb_fail(PCB_EUNSUPPORTED, "%s %s: FLANN counts %lld x %lld answers in int",
                        pcb_problem_name(t->problem), name, (long long)t->nq, (long long)len);
    size_t q = (size_t)(t->batch * t->nq * row), one = (size_t)(t->nq * len);
    flann_state *s = calloc(1, sizeof *s);
    if (!s || !(s->index = calloc((size_t)t->batch, sizeof *s->index)) ||
        !(s->idx = malloc(q * sizeof *s->idx)) || !(s->dist2 = malloc(q * sizeof *s->dist2)) ||
        (len < row && (!(s->short_idx = malloc(one * sizeof *s->short_idx)) ||
                       !(s->short_d2 = malloc(one * sizeof *s->short_d2))))) {
        flann_release(s);
        return pcb_fail(PCB_ENOMEM, "%s %s: out of memory", pcb_problem_name(t->problem), name);
    }
    if (t->problem == PCB_BALL &&
        (!(s->count = malloc((size_t)(t->batch * t->nq) * sizeof *s->count)) ||
         !(s->found = malloc((size_t)t->n * sizeof *s->found)) ||
         !(s->found_d2 = malloc((size_t)t->n * sizeof *s->found_d2)))) {
        flann_release(s);
        return pcb_fail(PCB_ENOMEM, "ball %s: out of memory", name);
    }
    s->row = row, s->len = len;
    s->task = *t;
    s->name = name;
    s->params = params;
    /* The C API keeps the metric in a global: make sure it is squared L2. */
    flann_set_distance_type(FLANN_DIST_EUCLIDEAN, 0);
    for (int64_t b = 0; b < t->batch; b++) {
        float speedup = 0;
        /* FLANN takes non-const data but only reads it. */
        s->index[b] = flann_build_index_float((float *)(t->a + b * t->n * 3), (int)t->n, 3,
                                              &speedup, &s->params);
        if (!s->index[b]) {
            flann_release(s);
            return pcb_fail(PCB_EDEVICE, "nn %s: FLANN could not build the index of cloud %lld",
                            name, (long long)b);
        }
    }
    *state = s;
    return PCB_OK;
}

static int flann_compute(void *state)
{
    flann_state *s = state;
    const pcb_task *t = &s->task;
    const int64_t row = s->row, len = s->len;
    for (int64_t b = 0; b < t->batch; b++) {
        int32_t *idx = s->short_idx ? s->short_idx : s->idx + b * t->nq * row;
        float *d2 = s->short_d2 ? s->short_d2 : s->dist2 + b * t->nq * row;
        int rc = flann_find_nearest_neighbors_index_float(
            s->index[b], (float *)(t->b + b * t->nq * 3), (int)t->nq, (int *)idx, d2, (int)len,
            &s->params);
        if (rc != 0)
            return pcb_fail(PCB_EDEVICE, "%s %s: FLANN search failed on cloud %lld (%d)",
                            pcb_problem_name(t->problem), s->name, (long long)b, rc);
        for (int64_t i = 0; s->short_idx && i < t->nq; i++) { /* k > n: pad each row */
            int32_t *to = s->idx + (b * t->nq + i) * row;
            float *dto = s->dist2 + (b * t->nq + i) * row;
            pcb_knn_row_clear(dto, to, row);
            memcpy(to, idx + i * len, (size_t)len * sizeof *to);
            memcpy(dto, d2 + i * len, (size_t)len * sizeof *dto);
        }
    }
    return PCB_OK;
}

static int flann_ball_compute(void *state)
{
    flann_state *s = state;
    const pcb_task *t = &s->task;
    const int nearest = t->select == PCB_BALL_NEAREST;
    /* NEAREST: FLANN keeps the k nearest inside points; FIRST: all of them */
    const int room = (int)(nearest ? s->len : t->n);
    s->params.max_neighbors = -1;
    s->params.sorted = 0;
    for (int64_t i = 0; i < t->batch * t->nq; i++) {
        const int64_t b = i / t->nq;
        const float *q = t->b + 3 * i;
        const int found = flann_radius_search_float(s->index[b], (float *)q, (int *)s->found,
                                                    s->found_d2, room, pcb_ball_r2(t->radius),
                                                    &s->params);
        if (found < 0)
            return pcb_fail(PCB_EDEVICE, "ball %s: FLANN radius search failed at centre %lld",
                            s->name, (long long)i);
        const int64_t len = found < room ? found : room;
        for (int64_t j = 0; j < len; j++) /* the project's float form, as everywhere */
            s->found_d2[j] = pcb_nn_d2(t->a + (b * t->n + s->found[j]) * 3, q);
        s->count[i] = pcb_ball_row_from(t, s->found_d2, s->found, len, s->idx + i * t->k,
                                        s->dist2 + i * t->k);
    }
    return PCB_OK;
}

static int flann_fetch(void *state, pcb_result *out)
{
    flann_state *s = state;
    size_t q = (size_t)(s->task.batch * s->task.nq * s->row);
    memcpy(out->index, s->idx, q * sizeof *s->idx);
    if (out->dist2)
        memcpy(out->dist2, s->dist2, q * sizeof *s->dist2);
    if (s->count && out->count)
        memcpy(out->count, s->count, (size_t)(s->task.batch * s->task.nq) * sizeof *s->count);
    return PCB_OK;
}

/* Fields set explicitly, the rest from DEFAULT_FLANN_PARAMETERS. */
static struct FLANNParameters base_params(void)
{
    struct FLANNParameters p = DEFAULT_FLANN_PARAMETERS;
    p.eps = 0;
    p.cores = 1;
    p.log_level = FLANN_LOG_NONE;
    /* Seeds FLANN's rand() choices; Debian's FLANN 1.9.2 also shuffles the
     * randomized trees' points from std::random_device, so flann_randomized
     * still differs from run to run. */
    p.random_seed = 1;
    return p;
}

static int single_prepare(const pcb_task *t, void **state)
{
    struct FLANNParameters p = base_params();
    p.algorithm = FLANN_INDEX_KDTREE_SINGLE;
    p.checks = FLANN_CHECKS_UNLIMITED;
    p.trees = 1;
    p.leaf_max_size = 10;
    return flann_prepare_with(t, state, "flann", p);
}

static int randomized_prepare(const pcb_task *t, void **state)
{
    struct FLANNParameters p = base_params();
    p.algorithm = FLANN_INDEX_KDTREE;
    p.checks = 32;
    p.trees = 4;
    return flann_prepare_with(t, state, "flann_randomized", p);
}

const pcb_impl pcb_nn_flann = {
    .name = "flann",
    .cost = PCB_COST_INDEXED,
    .problem = PCB_NN,
    .device = PCB_CPU,
    .promise = {.exact = 1},
    .limits = {.max_n = INT_MAX},
    .summary = "FLANN single k-d tree, exact search, one core (the slides' baseline)",
    .prepare = single_prepare,
    .compute = flann_compute,
    .fetch = flann_fetch,
    .release = flann_release,
};

const pcb_impl pcb_nn_flann_randomized = {
    .name = "flann_randomized",
    .cost = PCB_COST_ALL_PAIRS,
    .problem = PCB_NN,
    .device = PCB_CPU,
    .promise = {.exact = 0},
    .limits = {.max_n = INT_MAX},
    .summary = "FLANN 4 randomized k-d trees, 32 checks, one core (approximate)",
    .prepare = randomized_prepare,
    .compute = flann_compute,
    .fetch = flann_fetch,
    .release = flann_release,
};

const pcb_impl pcb_knn_flann = {
    .name = "flann",
    .cost = PCB_COST_INDEXED,
    .problem = PCB_KNN,
    .device = PCB_CPU,
    .promise = {.exact = 1},
    .limits = {.max_n = INT_MAX},
    .summary = "FLANN single k-d tree, exact knnSearch, one core (ties in FLANN's order)",
    .prepare = single_prepare,
    .compute = flann_compute,
    .fetch = flann_fetch,
    .release = flann_release,
};

const pcb_impl pcb_ball_flann = {
    .name = "flann",
    .cost = PCB_COST_INDEXED,
    .problem = PCB_BALL,
    .device = PCB_CPU,
    .promise = {.exact = 1},
    .limits = {.max_n = INT_MAX},
    .summary = "FLANN single k-d tree, radiusSearch a centre, one core (nearest: its k nearest "
               "inside; first: every inside point)",
    .prepare = single_prepare,
    .compute = flann_ball_compute,
    .fetch = flann_fetch,
    .release = flann_release,
};
