/* serialize.h - serialization: the curves, the answer's contract and what
 * the implementations share.
 *
 * A point's voxel is grid sampling's (impl/grid/grid.h): (ix, iy, iz) =
 * floor(((double)p - origin) / cell) per axis in double, the origin the
 * task's or the cloud's minimum per axis. Its code at depth D is its
 * cloud's number shifted left by 3D bits, or'ed with its voxel's index on
 * the curve, a 3D-bit integer:
 *
 * - Morton (z-order): bit i of ix, iy, iz at bits 3i+2, 3i+1, 3i of the
 *   index (x the most significant of each triple; Pointcept's "z");
 * - Hilbert: John Skilling's curve ("Programming the Hilbert curve", 2004)
 *   with axes X[0] = x, X[1] = y, X[2] = z: the voxel's coordinates turned
 *   into the transposed index, then interleaved as Morton interleaves (X[0]
 *   the most significant); Pointcept's "hilbert" (numpy-hilbert-curve). It
 *   starts at voxel (0, 0, 0) and ends at (2^D - 1, 0, 0); its octants of a
 *   cube are visited in the Gray code order of (x y z) bits 000, 001, 011,
 *   010, 110, 111, 101, 100.
 *
 * The order is the cloud's points by ascending code, equal codes (points
 * of one voxel) by increasing index: unique, every implementation returns
 * it bit for bit. D is the task's, or the least (at least 1) whose cube
 * holds every voxel coordinate of every cloud of the batch; a coordinate
 * outside 0 .. 2^D - 1 (an origin given above a point, a depth too small)
 * is PCB_EINVAL on the host, and lowers a device run's finite flag. */
#ifndef PCB_SERIALIZE_H
#define PCB_SERIALIZE_H

#include "impl/grid/grid.h"
#include "impl/spatial.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every third bit of v (bit 3i to bit i): sp_spread's inverse (spatial.h). */
PCB_GRID_FN uint32_t pcb_curve_compact(uint64_t v)
{
    v &= 0x1249249249249249ull;
    v = (v | v >> 2) & 0x10c30c30c30c30c3ull;
    v = (v | v >> 4) & 0x100f00f00f00f00full;
    v = (v | v >> 8) & 0x1f0000ff0000ffull;
    v = (v | v >> 16) & 0x1f00000000ffffull;
    v = (v | v >> 32) & 0x1fffff;
    return (uint32_t)v;
}

PCB_GRID_FN uint64_t pcb_morton3(uint32_t x, uint32_t y, uint32_t z)
{
    return sp_spread(x) << 2 | sp_spread(y) << 1 | sp_spread(z);
}

/* Skilling's transform, axes to the transposed index, then interleaved: 21
 * bits an axis in 64-bit codes. spatial.h's sp_hilbert_cells is the same
 * transform at 10 bits in 32-bit arithmetic, kept apart for the spatial
 * indexes' kernels (tests/test_serialize.c holds the two equal). */
PCB_GRID_FN uint64_t pcb_hilbert3(uint32_t x, uint32_t y, uint32_t z, int depth)
{
    uint32_t X[3] = {x, y, z};
    const uint32_t top = 1u << (depth - 1);
    for (uint32_t q = top; q > 1; q >>= 1) { /* undo the excess work, from the top */
        const uint32_t p = q - 1;
        for (int i = 0; i < 3; i++) {
            if (X[i] & q) {
                X[0] ^= p; /* invert */
            } else {
                const uint32_t t = (X[0] ^ X[i]) & p; /* exchange */
                X[0] ^= t, X[i] ^= t;
            }
        }
    }
    X[1] ^= X[0], X[2] ^= X[1]; /* Gray encode */
    uint32_t t = 0;
    for (uint32_t q = top; q > 1; q >>= 1)
        if (X[2] & q)
            t ^= q - 1;
    X[0] ^= t, X[1] ^= t, X[2] ^= t;
    return pcb_morton3(X[0], X[1], X[2]);
}

/* The transposed index back to the axes (Skilling's inverse). */
PCB_GRID_FN void pcb_hilbert3_decode(uint64_t h, int depth, uint32_t out[3])
{
    uint32_t X[3] = {pcb_curve_compact(h >> 2), pcb_curve_compact(h >> 1), pcb_curve_compact(h)};
    uint32_t t = X[2] >> 1; /* Gray decode */
    X[2] ^= X[1], X[1] ^= X[0];
    X[0] ^= t;
    const uint32_t end = 2u << (depth - 1);
    for (uint32_t q = 2; q != end; q <<= 1) { /* redo the work, from the bottom */
        const uint32_t p = q - 1;
        for (int i = 2; i >= 0; i--) {
            if (X[i] & q) {
                X[0] ^= p;
            } else {
                t = (X[0] ^ X[i]) & p;
                X[0] ^= t, X[i] ^= t;
            }
        }
    }
    out[0] = X[0], out[1] = X[1], out[2] = X[2];
}

/* A voxel's index on curve (a pcb_curve) at depth. */
PCB_GRID_FN uint64_t pcb_curve_index(int curve, int depth, uint32_t x, uint32_t y, uint32_t z)
{
    return curve == PCB_CURVE_HILBERT ? pcb_hilbert3(x, y, z, depth) : pcb_morton3(x, y, z);
}

/* The bits of v (0 for 0). */
PCB_GRID_FN int pcb_curve_bits(uint64_t v)
{
    int b = 0;
    while (v >> b)
        b++;
    return b;
}

/* The batch's frame on the host: each cloud's origin (origin[3c..3c+2])
 * and the depth (the task's, or the least that holds the batch), checked
 * (PCB_EINVAL: a voxel coordinate outside the depth's cube, or codes past
 * 63 bits). threads > 1: the clouds' bounds on that many OpenMP threads. */
int pcb_serialize_frame(const pcb_task *t, int threads, double *origin, int *depth);

/* The rows of a CPU implementation: index (batch * 2n), code (batch * n),
 * and each cloud's origin; every CPU state starts with one. */
typedef struct {
    pcb_task task;
    int32_t *index;
    int64_t *code;
    double *origin;
} pcb_serialize_rows;

int pcb_serialize_rows_init(pcb_serialize_rows *r, const pcb_task *t, const char *impl);
void pcb_serialize_rows_free(pcb_serialize_rows *r);
int pcb_serialize_rows_fetch(void *state, pcb_result *out);

/* Cloud c of the task in its rows at depth (its origin resolved): codes,
 * a stable sort (threads 0: the C library's qsort of (code, index) pairs;
 * 1: a radix sort; more: codes and radix sort on that many OpenMP
 * threads), order and inverse; padding past a ragged cloud's length.
 * scratch holds 4n 64-bit words. */
void pcb_serialize_cloud(const pcb_task *t, int64_t c, int depth, const double origin[3],
                         int threads, uint64_t *scratch, int32_t *index, int64_t *code);

#ifdef __cplusplus
}
#endif
#endif
