/* nn_nanoflann.cc - nanoflann, the header-only k-d tree people pick for 3-D
 * in C++ (Debian libnanoflann-dev), behind the C interface: the CPU baseline
 * beside FLANN and our kdtree.
 *
 * One KDTreeSingleIndexAdaptor per reference cloud of the batch, built in
 * prepare (leaf size 10, as FLANN's single tree here), exact search (eps 0,
 * one neighbour), OpenMP over the queries like kdtree's. Its metric is
 * L2_Simple: (q - p)^2 summed directly in float, the same form as
 * pcb_nn_d2, never |q|^2 + |p|^2 - 2qp. C++ only because nanoflann is a C++
 * template library; nothing escapes this file but the entries: nn
 * nanoflann (one neighbour), knn nanoflann (its KNNResultSet of min(k, n),
 * ascending, ties in nanoflann's order: exact, not canonical; the rest of a
 * row padded here) and ball nanoflann (its radiusSearch with r2, the same
 * strict d2 < r2 test, every inside point, then the selection's row of k
 * made here). */
#include <omp.h>

#include <cstdint> /* before nanoflann.hpp, which uses uint32_t without it (1.4.3, gcc 13) */
#include <cstdlib>
#include <cstring>
#include <new>

#include <nanoflann.hpp>

extern "C" {
#include "impl/ball/ball.h"
#include "impl/knn/knn.h"
#include "nn.h"
}

#include <vector>

namespace {

/* nanoflann reads points through this adaptor: one cloud, n x 3 floats. */
struct cloud_view {
    const float *xyz;
    size_t n;
    size_t kdtree_get_point_count() const { return n; }
    float kdtree_get_pt(size_t i, size_t dim) const { return xyz[3 * i + dim]; }
    template <class BBox> bool kdtree_get_bbox(BBox &) const { return false; }
};

typedef nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<float, cloud_view>,
                                            cloud_view, 3, uint32_t>
    tree;

struct state {
    pcb_task task;
    cloud_view *views; /* one per cloud of the batch */
    tree **trees;
    int64_t row; /* answers a query: 1, or kNN's k */
    int32_t *idx;
    float *dist2;
    int32_t *count; /* ball: batch * nq */
};

void release(void *p)
{
    state *s = static_cast<state *>(p);
    if (!s)
        return;
    for (int64_t b = 0; s->trees && b < s->task.batch; b++)
        delete s->trees[b];
    std::free(s->trees);
    std::free(s->views);
    std::free(s->idx);
    std::free(s->dist2);
    std::free(s->count);
    std::free(s);
}

int prepare(const pcb_task *t, void **out)
{
    int rc = pcb_nn_coords_fit(t, "nanoflann");
    if (rc != PCB_OK)
        return rc;
    const int64_t row = t->problem == PCB_NN ? 1 : t->k;
    const size_t q = static_cast<size_t>(t->batch * t->nq * row);
    state *s = static_cast<state *>(std::calloc(1, sizeof(state)));
    if (!s)
        return pcb_fail(PCB_ENOMEM, "nn nanoflann: out of memory");
    s->task = *t;
    s->row = row;
    s->views = static_cast<cloud_view *>(std::calloc(t->batch, sizeof(cloud_view)));
    s->trees = static_cast<tree **>(std::calloc(t->batch, sizeof(tree *)));
    s->idx = static_cast<int32_t *>(std::malloc(q * sizeof(int32_t)));
    s->dist2 = static_cast<float *>(std::malloc(q * sizeof(float)));
    if (t->problem == PCB_BALL)
        s->count = static_cast<int32_t *>(std::malloc(t->batch * t->nq * sizeof(int32_t)));
    if (!s->views || !s->trees || !s->idx || !s->dist2 || (t->problem == PCB_BALL && !s->count)) {
        release(s);
        return pcb_fail(PCB_ENOMEM, "nn nanoflann: out of memory");
    }
    for (int64_t b = 0; b < t->batch; b++) {
        s->views[b].xyz = t->a + b * t->n * 3;
        s->views[b].n = static_cast<size_t>(t->n);
        /* nanoflann throws on allocation failure: keep it inside this file */
        try {
            s->trees[b] = new tree(3, s->views[b], nanoflann::KDTreeSingleIndexAdaptorParams(10));
            s->trees[b]->buildIndex();
        } catch (const std::bad_alloc &) {
            release(s);
            return pcb_fail(PCB_ENOMEM, "nn nanoflann: out of memory building cloud %lld's index",
                            static_cast<long long>(b));
        } catch (...) {
            release(s);
            return pcb_fail(PCB_EDEVICE, "nn nanoflann: the index of cloud %lld could not be built",
                            static_cast<long long>(b));
        }
    }
    *out = s;
    return PCB_OK;
}

/* kNN: each query's KNNResultSet of min(k, n), kept sorted by nanoflann. */
int compute_rows(state *s)
{
    const pcb_task *t = &s->task;
    const int threads = t->opt.threads > 0 ? t->opt.threads : omp_get_max_threads();
    const int64_t k = t->k, len = k < t->n ? k : t->n, total = t->batch * t->nq;
    const nanoflann::SearchParams exact(32, 0.0f, true);
    int failed = 0;
#pragma omp parallel num_threads(threads)
    {
        uint32_t *near = static_cast<uint32_t *>(std::malloc(len * sizeof(uint32_t)));
        float *dist = static_cast<float *>(std::malloc(len * sizeof(float)));
#pragma omp for schedule(dynamic, 64)
        for (int64_t i = 0; i < total; i++) {
            if (!near || !dist) {
#pragma omp atomic write
                failed = 1;
                continue;
            }
            const int64_t b = i / t->nq;
            const float *q = t->b + 3 * i;
            nanoflann::KNNResultSet<float, uint32_t> result(static_cast<uint32_t>(len));
            result.init(near, dist);
            s->trees[b]->findNeighbors(result, q, exact);
            int32_t *id = s->idx + i * k;
            float *d2 = s->dist2 + i * k;
            pcb_knn_row_clear(d2, id, k);
            for (int64_t j = 0; j < len; j++) {
                id[j] = static_cast<int32_t>(near[j]);
                d2[j] = pcb_nn_d2(t->a + (b * t->n + near[j]) * 3, q);
            }
        }
        std::free(near);
        std::free(dist);
    }
    return failed ? pcb_fail(PCB_ENOMEM, "knn nanoflann: no memory for a row of %lld",
                             static_cast<long long>(len))
                  : PCB_OK;
}

/* Ball: every inside point of a centre from radiusSearch (unsorted), then
 * the selection's row of k. */
int compute_balls(state *s)
{
    const pcb_task *t = &s->task;
    const int threads = t->opt.threads > 0 ? t->opt.threads : omp_get_max_threads();
    const int64_t total = t->batch * t->nq;
    const float r2 = pcb_ball_r2(t->radius);
    const nanoflann::SearchParams exact(32, 0.0f, false);
    int failed = 0;
#pragma omp parallel num_threads(threads)
    {
        std::vector<std::pair<uint32_t, float>> found;
        std::vector<float> d2;
        std::vector<int32_t> id;
#pragma omp for schedule(dynamic, 64)
        for (int64_t i = 0; i < total; i++) {
            const int64_t b = i / t->nq;
            const float *q = t->b + 3 * i;
            try {
                s->trees[b]->radiusSearch(q, r2, found, exact);
                d2.resize(found.size());
                id.resize(found.size());
            } catch (...) {
#pragma omp atomic write
                failed = 1;
                continue;
            }
            for (size_t j = 0; j < found.size(); j++) {
                id[j] = static_cast<int32_t>(found[j].first);
                d2[j] = pcb_nn_d2(t->a + (b * t->n + found[j].first) * 3, q);
            }
            s->count[i] = pcb_ball_row_from(t, d2.data(), id.data(),
                                            static_cast<int64_t>(found.size()),
                                            s->idx + i * t->k, s->dist2 + i * t->k);
        }
    }
    return failed ? pcb_fail(PCB_ENOMEM, "ball nanoflann: no memory for a ball's points")
                  : PCB_OK;
}

int compute(void *p)
{
    state *s = static_cast<state *>(p);
    const pcb_task *t = &s->task;
    const int threads = t->opt.threads > 0 ? t->opt.threads : omp_get_max_threads();
    const nanoflann::SearchParams exact(32, 0.0f, false); /* eps 0: exact; unsorted: k = 1 */
    if (t->problem == PCB_KNN)
        return compute_rows(s);
    if (t->problem == PCB_BALL)
        return compute_balls(s);
    for (int64_t b = 0; b < t->batch; b++) {
        const tree *index = s->trees[b];
        const float *queries = t->b + b * t->nq * 3;
        int32_t *idx = s->idx + b * t->nq;
        float *d2 = s->dist2 + b * t->nq;
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t i = 0; i < t->nq; i++) {
            uint32_t best = 0;
            float dist = 0;
            nanoflann::KNNResultSet<float, uint32_t> result(1);
            result.init(&best, &dist);
            index->findNeighbors(result, queries + 3 * i, exact);
            idx[i] = static_cast<int32_t>(best);
            /* the project's own float form, so ties read the same everywhere */
            d2[i] = pcb_nn_d2(t->a + (b * t->n + best) * 3, queries + 3 * i);
        }
    }
    return PCB_OK;
}

int fetch(void *p, pcb_result *out)
{
    state *s = static_cast<state *>(p);
    const size_t q = static_cast<size_t>(s->task.batch * s->task.nq * s->row);
    std::memcpy(out->index, s->idx, q * sizeof(int32_t));
    if (out->dist2)
        std::memcpy(out->dist2, s->dist2, q * sizeof(float));
    if (s->count && out->count)
        std::memcpy(out->count, s->count, s->task.batch * s->task.nq * sizeof(int32_t));
    return PCB_OK;
}

pcb_impl make_entry(pcb_problem problem)
{
    pcb_impl e = {};
    e.name = "nanoflann";
    e.problem = problem;
    e.device = PCB_CPU;
    e.promise.exact = 1;
    e.limits.max_n = INT32_MAX;
    e.cost = PCB_COST_INDEXED;
    e.summary = problem == PCB_KNN    ? "nanoflann single k-d tree (leaf 10), exact k nearest, "
                                        "OpenMP over queries (ties in nanoflann's order)"
                : problem == PCB_BALL ? "nanoflann single k-d tree (leaf 10), radiusSearch, the "
                                        "row of k made from every inside point"
                                      : "nanoflann single k-d tree (leaf 10), exact search, OpenMP "
                                        "over queries";
    e.prepare = prepare;
    e.compute = compute;
    e.fetch = fetch;
    e.release = release;
    return e;
}

} // namespace

extern "C" const pcb_impl pcb_nn_nanoflann = make_entry(PCB_NN);
extern "C" const pcb_impl pcb_knn_nanoflann = make_entry(PCB_KNN);
extern "C" const pcb_impl pcb_ball_nanoflann = make_entry(PCB_BALL);
