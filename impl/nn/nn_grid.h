/* nn_grid.h - cuda_grid's cells and nearest-neighbour search, written once
 * for the GPU kernels (nn_grid.cuh) and for a CPU replay that tests them
 * here (tests/test_nn_grid.c), as nn_bvh.h is for cuda_bvh.
 *
 * A cloud's grid: dim[a] cells along each axis from lo[a], cubes of side
 * 1 / inv_h; a point's cell along an axis is floor((x - lo) inv_h) in
 * double, clamped into the grid (so the edge cells reach out to infinity).
 * The points, gathered in cell order (x fastest, then y, then z), are
 * 4 floats each: x, y, z and the bits of the point's index; starts[cell]
 * says where a cell's points begin (starts[cells] where the last ends).
 *
 * The search (grid_walk) visits the cells around the query's (its own
 * clamped into the grid) shell by shell, a shell being the cells at
 * Chebyshev distance s, each row of a shell along x one run of points. A
 * row is skipped when its squared gap to the query says every point in it
 * is surely farther than the bound (the best so far), and the search stops
 * at the first shell whose box faces are that far. "Surely" (grid_beyond):
 * a gap shrunk by a slack for the double rounding of a point's cell, then
 * g2 (1 - 1e-5) > bound + 1e-36 for float32's rounding of the distance
 * (within a few 1e-7 of the exact one) and its underflow. So a skipped
 * point is neither nearer nor a tie, and with ties to the lower index the
 * answer is naive's bit for bit (kNN's rows too). */
#ifndef PCB_NN_GRID_H
#define PCB_NN_GRID_H

#include <limits.h>

#include "impl/spatial.h"

typedef struct {
    double lo[3];
    double inv_h;
    int32_t dim[3];
} grid_cloud;

/* The cell of coordinate x along an axis: clamped, so it is monotone in x. */
SP_FN int32_t grid_cell(double x, double lo, double inv_h, int32_t dim)
{
    double c = floor((x - lo) * inv_h);
    c = c < 0 ? 0 : c;
    c = c > dim - 1 ? dim - 1 : c;
    return (int32_t)c;
}

/* A cloud's budget of cells: a power of two (at least 64) >= n / per_cell
 * (NN and ball query aim at a point a cell, kNN at a few: its search reads
 * the k nearest and their surroundings). */
SP_FN int64_t grid_budget(int64_t n, int64_t per_cell)
{
    int64_t cells = 64;
    while (cells * per_cell < n)
        cells *= 2;
    return cells;
}

/* The grid of a cloud with bounds lo..hi (NaN: a cloud with no point): the
 * widest cell count within the budget cells at a cell no narrower than half
 * the search radius rs (ball query: a ball meets at most 5 cells along y
 * and z; NN passes 0). A cloud with no point, or all its points in one
 * place, gets one cell. */
SP_FN grid_cloud grid_shape_of(const float lo[3], const float hi[3], int64_t cells, double rs)
{
    double ext[3], vol = 1, wide = 0;
    int empty = 0;
    grid_cloud g;
    for (int a = 0; a < 3; a++) {
        ext[a] = (double)hi[a] - lo[a];
        empty = empty || !(ext[a] >= 0); /* bounds never folded in: NaN */
        vol *= ext[a] + rs;
        wide = fmax(wide, ext[a]);
    }
    if (empty) {
        for (int a = 0; a < 3; a++)
            g.lo[a] = 0, g.dim[a] = 1;
        g.inv_h = 1;
        return g;
    }
    double cell = fmax(0.5000001 * rs, fmax(cbrt(vol / (double)cells), wide / (double)cells));
    if (!(cell > 0))
        cell = 1; /* every point in one place: any cell holds them all */
    for (;; cell *= 1.125) {
        double total = 1;
        for (int a = 0; a < 3; a++)
            total *= floor(ext[a] / cell) + 1;
        if (total <= (double)cells)
            break;
    }
    for (int a = 0; a < 3; a++) {
        g.lo[a] = lo[a];
        g.dim[a] = (int32_t)(floor(ext[a] / cell) + 1);
    }
    g.inv_h = 1.0 / cell;
    return g;
}

/* Every point behind a gap g2 is surely farther than best: neither nearer
 * nor a tie of lower index. */
SP_FN int grid_beyond(double g2, float best)
{
    return g2 * (1 - 1e-5) > (double)best + 1e-36;
}

/* The distance along an axis from x to cells c0..c1 (the edge cells reach
 * out to infinity), less the slack. */
SP_FN double grid_axis_gap(double x, double lo, double h, int32_t c0, int32_t c1, int32_t dim,
                           double slack)
{
    const double a = c0 == 0 ? -INFINITY : lo + c0 * h;
    const double b = c1 == dim - 1 ? INFINITY : lo + (c1 + 1) * h;
    const double g = x < a ? a - x : x > b ? x - b : 0;
    return g > slack ? g - slack : 0;
}

/* The points first..last-1 of pts against the query, ties to the lower
 * index (pts holds them in cell order, not index order); evals (the
 * replay's count, NULL in the kernels) counts them. */
SP_FN void grid_scan(const float *pts, uint32_t first, uint32_t last, const float q[3],
                     float *best, int32_t *bi, int64_t *evals)
{
    if (evals)
        *evals += last - first;
    for (uint32_t at = first; at < last; at++) {
#ifdef __CUDA_ARCH__
        const float4 p = *(const float4 *)(pts + 4 * (size_t)at);
        const float px = p.x, py = p.y, pz = p.z, pw = p.w;
#else
        const float *p = pts + 4 * (size_t)at;
        const float px = p[0], py = p[1], pz = p[2], pw = p[3];
#endif
        const float d = sp_d2(SP_SUB(q[0], px), SP_SUB(q[1], py), SP_SUB(q[2], pz));
        const int32_t j = (int32_t)sp_float_bits(pw);
        if (d < *best || (d == *best && j < *bi))
            *best = d, *bi = j;
    }
}

/* A walk over a cloud's grid around a query: the runs of points (a row of
 * cells along x, contiguous in pts) shell by shell, a shell being the cells
 * at Chebyshev distance s from the query's cell (its own clamped into the
 * grid). A row on a shell's side is one run; inside the shell, its two end
 * cells are. grid_walk_next gives the next run not surely beyond the
 * caller's bound (the best so far: NN's nearest, kNN's row's last), which
 * may fall between calls, and ends at the first shell whose box faces are
 * surely beyond it: the searches that use it (NN here, kNN in
 * knn_cuda_grid.cu and the replay of tests/test_nn_grid.c) share one order
 * of visits and one pruning. A limit (set after grid_walk_start) ends the
 * walk before shell limit + 1 and says so (cut): kNN's fine grid hands such
 * a query to its coarse one. */
/* kNN's two grids on large clouds (knn_cuda_grid.cu): a fine one walked
 * to this shell, then, for a query not done by then, a coarse one of this
 * many points a cell; from clouds of this many points. */
enum { GRID_KNN_FINE_SHELLS = 2, GRID_KNN_COARSE_PER_CELL = 64, GRID_KNN_COARSE_FROM = 65536 };

typedef struct {
    double h, slack[3];
    int32_t at[3];
    int32_t s, dz, dy, e; /* the next run: shell s, row (dz, dy), end e */
    int32_t done;
    int32_t limit; /* the last shell to walk (grid_walk_start: all of them) */
    int32_t cut;   /* the walk ended at the limit, not because the rest is beyond */
} grid_walk;

SP_FN void grid_walk_start(grid_walk *w, const grid_cloud *c, const float q[3])
{
    w->h = 1.0 / c->inv_h;
    for (int a = 0; a < 3; a++) {
        w->at[a] = grid_cell(q[a], c->lo[a], c->inv_h, c->dim[a]);
        w->slack[a] = 1e-7 * w->h + 4e-15 * (fabs(c->lo[a]) + c->dim[a] * w->h + fabs((double)q[a]));
    }
    w->s = w->dz = w->dy = w->e = w->done = w->cut = 0;
    w->limit = INT_MAX;
}

/* The next place: the other end of an inner row, the next row, the next
 * shell. */
SP_FN void grid_walk_step(grid_walk *w)
{
    const int32_t s = w->s;
    const int side = w->dz == -s || w->dz == s || w->dy == -s || w->dy == s;
    if (++w->e < (side ? 1 : 2))
        return;
    w->e = 0;
    if (++w->dy <= s)
        return;
    w->dy = -s;
    if (++w->dz <= s)
        return;
    w->s++;
    w->dz = w->dy = -w->s;
}

/* The next run [*first, *last) of pts (not empty) that may hold a point
 * nearer than bound or as near; 0 when there is none left. */
SP_FN int grid_walk_next(grid_walk *w, const grid_cloud *c, const uint32_t *starts,
                         const float q[3], float bound, uint32_t *first, uint32_t *last)
{
    const double h = w->h;
    for (; !w->done; grid_walk_step(w)) {
        const int32_t s = w->s;
        if (s > 0 && w->dz == -s && w->dy == -s && w->e == 0) {
            /* a new shell: every cell of shells >= s lies beyond a face of
             * the box of those before */
            double face = INFINITY;
            int more = 0;
            for (int a = 0; a < 3; a++) {
                if (w->at[a] - s >= 0)
                    more = 1, face = fmin(face, (double)q[a] -
                                                    (c->lo[a] + (w->at[a] - s + 1) * h) -
                                                    w->slack[a]);
                if (w->at[a] + s <= c->dim[a] - 1)
                    more = 1, face = fmin(face, c->lo[a] + (w->at[a] + s) * h - (double)q[a] -
                                                    w->slack[a]);
            }
            if (!more || (face > 0 && grid_beyond(face * face, bound))) {
                w->done = 1; /* every cell visited, or the rest surely beyond */
                break;
            }
            if (s > w->limit) { /* more to walk, past the caller's limit */
                w->done = w->cut = 1;
                break;
            }
        }
        const int32_t z = w->at[2] + w->dz, y = w->at[1] + w->dy;
        if (z < 0 || z >= c->dim[2] || y < 0 || y >= c->dim[1])
            continue;
        const double gz = grid_axis_gap(q[2], c->lo[2], h, z, z, c->dim[2], w->slack[2]);
        const double gy = grid_axis_gap(q[1], c->lo[1], h, y, y, c->dim[1], w->slack[1]);
        const double gyz = gz * gz + gy * gy;
        if (grid_beyond(gyz, bound))
            continue;
        const int side = w->dz == -s || w->dz == s || w->dy == -s || w->dy == s;
        const int32_t lo = w->e ? w->at[0] + s : w->at[0] - s;
        const int32_t hi = w->e || side ? w->at[0] + s : w->at[0] - s;
        if (hi < 0 || lo > c->dim[0] - 1)
            continue;
        const int32_t x0 = lo < 0 ? 0 : lo, x1 = hi > c->dim[0] - 1 ? c->dim[0] - 1 : hi;
        const double gx = grid_axis_gap(q[0], c->lo[0], h, x0, x1, c->dim[0], w->slack[0]);
        if (grid_beyond(gyz + gx * gx, bound))
            continue;
        const uint32_t *row = starts + ((int64_t)z * c->dim[1] + y) * c->dim[0];
        *first = row[x0], *last = row[x1 + 1];
        if (*first < *last) {
            grid_walk_step(w);
            return 1;
        }
    }
    return 0;
}

/* The nearest point of a cloud with at least one point to q: its squared
 * distance in *best, its index in *bi (evals: as grid_scan's). */
SP_FN void grid_search(const grid_cloud *c, const uint32_t *starts, const float *pts,
                       const float q[3], float *best, int32_t *bi, int64_t *evals)
{
    grid_walk w;
    uint32_t first, last;
    *best = INFINITY, *bi = INT_MAX;
    grid_walk_start(&w, c, q);
    while (grid_walk_next(&w, c, starts, q, *best, &first, &last))
        grid_scan(pts, first, last, q, best, bi, evals);
}

#endif
