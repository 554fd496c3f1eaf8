/* nn_bvh.h - the index and search of cuda_bvh, written once for the GPU
 * kernels and for a CPU replay that tests them here (tests/test_bvh.c).
 *
 * The index of a reference cloud of n points:
 *   - points sorted by the Morton code of their position (21 bits an axis,
 *     one scale for the three axes, so cells are cubes in space);
 *   - cut into leaves of BVH_LEAF (8) consecutive points; leaf k holds slots
 *     BVH_LEAF*k..., each slot (x, y, z, 0); slots past n are +inf points,
 *     whose distance is +inf, never nearer;
 *   - a complete binary tree over P (a power of two >= the leaves) leaves,
 *     in heap order: node 1 the root, node v's children 2v and 2v+1, leaf k
 *     node P + k; every node holds the bounding box of its points (leaves
 *     past the last are empty boxes, +inf away). Consecutive Morton-sorted
 *     points are near each other, so the boxes are tight; leaves hold equal
 *     counts, so dense regions (near a lidar) get small leaves.
 *
 * A search first scans the query's home leaf: where the query's own Morton
 * code falls among the sorted reference codes (a binary search). Its
 * nearest point bounds the search from the start (on 120k-point clouds it
 * cut the points scanned 3.4x on lidar sweeps, 4.8x on uniform clouds).
 * Then it climbs to the root: the sibling of each ancestor of the home leaf,
 * nearest first, is searched (nearer child first, the farther kept on a
 * stack) unless its box's distance is >= the best found; boxes are skipped
 * again when popped if the best has shrunk. Exact: distances and box
 * distances are rounded alike (../spatial.h says why that is enough). */
#ifndef PCB_NN_BVH_H
#define PCB_NN_BVH_H

#include "impl/spatial.h"

#define BVH_FN SP_FN

#ifndef PCB_BVH_LEAF
#define PCB_BVH_LEAF 8 /* 8, 16 and 32 were timed on the GPU: 8 was fastest */
#endif

enum {
    BVH_LEAF = PCB_BVH_LEAF, /* points a leaf */
    BVH_STACK = 32,     /* deeper than any tree: P <= 2^26 */
    BVH_QUERY_BITS = 10, /* for the queries: 30-bit keys */
    BVH_MAX_LOG_P = 26  /* so n < 2^31 */
};

/* The tree of one cloud, in device memory for the kernels (host memory for
 * the replay). */
typedef struct {
    const float *pts; /* slots x 4 */
    const float *box; /* (2P) x 8: node v's (lo x, y, z, 0, hi x, y, z, 0) at 8v */
    int32_t log_p;    /* P = 2^log_p leaves */
} bvh_tree;

/* The distance from q to node v's box (one 32-byte record: two 16-byte
 * loads of one sector on the GPU). */
BVH_FN float bvh_node_d2(const bvh_tree *t, int32_t v, float qx, float qy, float qz)
{
#ifdef __CUDA_ARCH__
    const float4 *b = (const float4 *)t->box + 2 * (int64_t)v;
    float4 l = b[0], h = b[1];
    float lo[3] = {l.x, l.y, l.z}, hi[3] = {h.x, h.y, h.z};
    return sp_box_d2(lo, hi, qx, qy, qz);
#else
    return sp_box_d2(t->box + 8 * (int64_t)v, t->box + 8 * (int64_t)v + 4, qx, qy, qz);
#endif
}

/* Scan leaf k's slots for anything nearer than *best. */
BVH_FN void bvh_scan(const bvh_tree *t, int32_t k, float qx, float qy, float qz, float *best,
                     int32_t *slot, int64_t *evals)
{
    int32_t first = k * BVH_LEAF;
#ifdef __CUDA_ARCH__
    const float4 *pt = (const float4 *)t->pts + first;
    for (int j = 0; j < BVH_LEAF; j++) {
        float4 v = pt[j];
        float d = sp_d2(SP_SUB(v.x, qx), SP_SUB(v.y, qy), SP_SUB(v.z, qz));
#else
    const float *pt = t->pts + 4 * (int64_t)first;
    for (int j = 0; j < BVH_LEAF; j++) {
        const float *v = pt + 4 * j;
        float d = sp_d2(SP_SUB(v[0], qx), SP_SUB(v[1], qy), SP_SUB(v[2], qz));
#endif
        if (d < *best) {
            *best = d;
            *slot = first + j;
        }
    }
    *evals += BVH_LEAF;
}

/* The leaf where a point with Morton code `code` falls in the sorted order
 * (codes: the n sorted reference codes): its neighbours along the curve. */
BVH_FN int32_t bvh_home_leaf(const uint64_t *codes, int32_t n, uint64_t code)
{
    int32_t lo = 0, hi = n; /* first position whose code is >= code */
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (codes[mid] < code)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < n ? lo : n - 1) / BVH_LEAF;
}

/* Depth first below node `at`, nearer child first, the farther one kept
 * on a stack; boxes whose distance is >= the best are skipped, also when
 * popped (the best may have shrunk since). */
BVH_FN void bvh_descend(const bvh_tree *t, int32_t at, float qx, float qy, float qz, float *best,
                        int32_t *slot, int64_t *evals)
{
    struct {
        int32_t node;
        float d2;
    } stack[BVH_STACK];
    const int32_t p = 1 << t->log_p;
    int top = 0;
    int32_t node = at;
    for (;;) {
        if (node >= p) { /* a leaf: scan its slots */
            bvh_scan(t, node - p, qx, qy, qz, best, slot, evals);
        } else {
            int32_t c = 2 * node;
            float d0 = bvh_node_d2(t, c, qx, qy, qz), d1 = bvh_node_d2(t, c + 1, qx, qy, qz);
            int near = d1 < d0;
            float dn = near ? d1 : d0, df = near ? d0 : d1;
            if (dn < *best) {
                if (df < *best) {
                    stack[top].node = c + !near;
                    stack[top++].d2 = df;
                }
                node = c + near;
                continue;
            }
        }
        while (top > 0 && stack[top - 1].d2 >= *best) /* boxes the best now excludes */
            top--;
        if (top == 0)
            return;
        node = stack[--top].node;
    }
}

/* The nearest slot to q (-1 only for an empty tree) and its distance;
 * *evals grows by the slots scanned. home: a leaf to start from (the
 * query's place on the Morton curve), or -1 to search from the root.
 * From a home leaf the search climbs: the sibling of each ancestor, nearest
 * subtrees first, is searched only if its box is nearer than the best. */
BVH_FN void bvh_search(const bvh_tree *t, int32_t home, float qx, float qy, float qz,
                       float *best_out, int32_t *slot_out, int64_t *evals)
{
    float best = INFINITY;
    int32_t slot = -1;
    if (home < 0) {
        bvh_descend(t, 1, qx, qy, qz, &best, &slot, evals);
    } else {
        bvh_scan(t, home, qx, qy, qz, &best, &slot, evals);
        for (int32_t v = (1 << t->log_p) + home; v > 1; v >>= 1)
            if (bvh_node_d2(t, v ^ 1, qx, qy, qz) < best)
                bvh_descend(t, v ^ 1, qx, qy, qz, &best, &slot, evals);
    }
    *best_out = best;
    *slot_out = slot;
}

#endif
