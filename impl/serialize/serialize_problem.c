/* serialize_problem.c - serialization's face in the library: its arguments
 * (a voxel size an axis, an origin, a curve, a depth), its answer (the
 * order, its inverse, a code a point), its judge, a sample, pcb_serialize,
 * and the curves' own entry points. */
#include <math.h>
#include <stdlib.h>

#include "impl/problem.h"
#include "serialize.h"

static int check(const pcb_task *t)
{
    int rc = pcb_grid_check_frame(t, "serialize");
    if (rc != PCB_OK)
        return rc;
    if (t->curve != PCB_CURVE_MORTON && t->curve != PCB_CURVE_HILBERT)
        return pcb_fail(PCB_EINVAL, "serialize: unknown curve %d (morton %d, hilbert %d)",
                        (int)t->curve, PCB_CURVE_MORTON, PCB_CURVE_HILBERT);
    if (t->depth < 0 || t->depth > PCB_CURVE_MAX_DEPTH)
        return pcb_fail(PCB_EINVAL, "serialize: depth %d: need 1 to %d bits an axis, or 0 "
                        "(the least that holds the batch)", (int)t->depth, PCB_CURVE_MAX_DEPTH);
    const int cloud_bits = pcb_curve_bits((uint64_t)(t->batch - 1));
    if (3 * t->depth + cloud_bits > 63)
        return pcb_fail(PCB_EINVAL, "serialize: %d bits a code (3 x depth %d) and %d for %lld "
                        "clouds do not fit 63 bits", 3 * t->depth, (int)t->depth, cloud_bits,
                        (long long)t->batch);
    if (t->memory == PCB_MEM_DEVICE) /* the coordinates are not read on the host */
        return PCB_OK;
    double *origin = malloc((size_t)t->batch * 3 * sizeof *origin);
    int depth;
    if (!origin)
        return pcb_fail(PCB_ENOMEM, "serialize: no memory for %lld origins", (long long)t->batch);
    rc = pcb_serialize_frame(t, 1, origin, &depth);
    free(origin);
    return rc;
}

/* voxels of 0.15, Hilbert at the least depth */
static void sample(pcb_task *t)
{
    t->cell[0] = t->cell[1] = t->cell[2] = 0.15;
    t->curve = PCB_CURVE_HILBERT;
}

const pcb_problem_face pcb_serialize_problem = {
    .check = check,
    .validate = pcb_serialize_validate,
    .groups = 2,
    .rows = {PCB_ROWS_A, PCB_ROWS_A},
    .codes = 1,
    .whole_ragged = 1,
    .sample = sample,
};

int pcb_serialize(const float *xyz, int64_t batch, int64_t n, const double cell[3],
                  const double *origin, int curve, int depth, int64_t *code, int32_t *index)
{
    pcb_task t = {.problem = PCB_SERIALIZE, .batch = batch, .n = n, .a = xyz, .curve = curve,
                  .depth = depth, .origin_given = origin != NULL};
    for (int k = 0; k < 3; k++) {
        t.cell[k] = cell ? cell[k] : 0;
        t.origin[k] = origin ? origin[k] : 0;
    }
    pcb_result r = {.index = index, .code = code};
    return pcb_run_best(&t, &r);
}

static int curve_args(int curve, int depth, const void *in, int64_t count, const void *out)
{
    if (curve != PCB_CURVE_MORTON && curve != PCB_CURVE_HILBERT)
        return pcb_fail(PCB_EINVAL, "curve: unknown curve %d (morton %d, hilbert %d)", curve,
                        PCB_CURVE_MORTON, PCB_CURVE_HILBERT);
    if (depth < 1 || depth > PCB_CURVE_MAX_DEPTH)
        return pcb_fail(PCB_EINVAL, "curve: depth %d: need 1 to %d bits an axis", depth,
                        PCB_CURVE_MAX_DEPTH);
    if (count < 0 || (count > 0 && (!in || !out)))
        return pcb_fail(PCB_EINVAL, "curve: %lld entries, input %p, output %p",
                        (long long)count, in, out);
    return PCB_OK;
}

int pcb_curve_encode(int curve, int depth, const int64_t *xyz, int64_t count, int64_t *code)
{
    int rc = curve_args(curve, depth, xyz, count, code);
    const int64_t side = (int64_t)1 << depth;
    for (int64_t i = 0; rc == PCB_OK && i < count; i++)
        for (int k = 0; k < 3; k++)
            if (xyz[3 * i + k] < 0 || xyz[3 * i + k] >= side)
                return pcb_fail(PCB_EINVAL, "curve encode: voxel %lld's %c %lld outside 0..%lld "
                                "(depth %d)", (long long)i, "xyz"[k], (long long)xyz[3 * i + k],
                                (long long)(side - 1), depth);
    for (int64_t i = 0; rc == PCB_OK && i < count; i++)
        code[i] = (int64_t)pcb_curve_index(curve, depth, (uint32_t)xyz[3 * i],
                                           (uint32_t)xyz[3 * i + 1], (uint32_t)xyz[3 * i + 2]);
    return rc;
}

int pcb_curve_decode(int curve, int depth, const int64_t *code, int64_t count, int64_t *xyz)
{
    int rc = curve_args(curve, depth, code, count, xyz);
    const uint64_t top = ((uint64_t)1 << (3 * depth)) - 1; /* 2^63 - 1 at depth 21 */
    for (int64_t i = 0; rc == PCB_OK && i < count; i++) {
        if (code[i] < 0 || (uint64_t)code[i] > top)
            return pcb_fail(PCB_EINVAL, "curve decode: code %lld of entry %lld outside 0..%llu "
                            "(depth %d)", (long long)code[i], (long long)i,
                            (unsigned long long)top, depth);
        uint32_t v[3];
        if (curve == PCB_CURVE_HILBERT)
            pcb_hilbert3_decode((uint64_t)code[i], depth, v);
        else
            v[0] = pcb_curve_compact((uint64_t)code[i] >> 2),
            v[1] = pcb_curve_compact((uint64_t)code[i] >> 1),
            v[2] = pcb_curve_compact((uint64_t)code[i]);
        for (int k = 0; k < 3; k++)
            xyz[3 * i + k] = v[k];
    }
    return rc;
}
