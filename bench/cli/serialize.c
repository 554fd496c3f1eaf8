/* serialize.c - pcbench serialize: a cloud's points in space-filling-curve
 * order, a line a point. */
#include <inttypes.h>
#include <stdlib.h>

#include "cli.h"
#include "impl/serialize/serialize.h"

const char cli_serialize_synopsis[] = "serialize -i CLOUD --size S --curve C";

static const char serialize_help[] =
    "usage: pcbench serialize -i CLOUD --size S|SX,SY,SZ --curve morton|hilbert\n"
    "                         [--depth D] [--origin X,Y,Z] [--impl NAME] [--threads T]\n"
    "                         [-o OUT] [--shift X,Y,Z | --no-shift]\n"
    "Serialization: each point's voxel is grid sampling's, (ix, iy, iz) =\n"
    "floor((p - origin) / S) per axis in double precision, the origin the cloud's\n"
    "minimum unless --origin gives it (at or below every point). Its code is the\n"
    "voxel's index on the curve at depth D bits an axis (1 to 21; by default the\n"
    "least that holds the cloud):\n"
    "  morton   z-order: bit i of ix, iy, iz at bits 3i+2, 3i+1, 3i (x the highest)\n"
    "  hilbert  John Skilling's Hilbert curve with axes x, y, z in that order (x the\n"
    "           highest bit of each level), from voxel (0,0,0) to (2^D-1,0,0), as\n"
    "           Pointcept's 'hilbert' order\n"
    "One line per point in serialized order: '<index> <code>', codes ascending,\n"
    "equal codes (points of one voxel) by increasing index. Without --impl the\n"
    "fastest available exact implementation runs. --shift and --no-shift work as\n"
    "in pcbench nn (a shift is subtracted from --origin too).\n";

int cli_serialize(int argc, char **argv)
{
    run_args a = {0};
    int rc = cli_parse_run_args(argc, argv, "i:o:t:S:Nh", "IiotZOUDSNh", serialize_help, &a);
    if (rc >= 0)
        return rc;
    if (!a.in_a || !a.have_cell || !a.have_curve)
        return usage_error("serialize needs -i CLOUD, --size S and --curve morton|hilbert");
    pcb_outfile o;
    if ((rc = cli_open_output(&a, &o)))
        return rc;
    pcb_cloud c = {0};
    const pcb_impl *impl = NULL;
    pcb_result r = {0};
    double shift[3];
    if ((rc = cli_load(a.in_a, &c)) || (rc = cli_apply_shift_to(&a, &c, NULL, shift)))
        goto done;
    pcb_task t = {.problem = PCB_SERIALIZE, .batch = 1, .n = c.n, .a = c.xyz, .curve = a.curve,
                  .depth = a.depth, .origin_given = a.have_origin, .opt = a.opt};
    for (int k = 0; k < 3; k++)
        t.cell[k] = a.cell[k], t.origin[k] = a.have_origin ? a.origin[k] - shift[k] : 0;
    if ((rc = cli_check_and_choose(a.impl, &t, &impl)))
        goto done;
    if (pcb_result_alloc(&t, &r) != PCB_OK) {
        rc = cli_report(PCB_ENOMEM, "serialize");
        goto done;
    }
    if ((rc = cli_run_task(impl, &t, &r)))
        goto done;
    for (int64_t j = 0; j < t.n; j++)
        fprintf(o.f, "%" PRId32 " %" PRId64 "\n", r.index[j], r.code[r.index[j]]);
    rc = pcb_out_commit(&o);
    rc = rc == PCB_OK ? 0 : cli_report(rc, "serialize");
done:
    pcb_out_abort(&o);
    pcb_result_free(&r);
    pcb_cloud_free(&c);
    return rc;
}
