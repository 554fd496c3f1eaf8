/* grid.c - pcbench grid: grid sampling of a cloud, a line a voxel. */
#include <inttypes.h>
#include <stdlib.h>

#include "cli.h"
#include "impl/grid/grid.h"

const char cli_grid_synopsis[] = "grid -i CLOUD --size S";

static const char grid_help[] =
    "usage: pcbench grid -i CLOUD --size S|SX,SY,SZ [--origin X,Y,Z]\n"
    "                    [--select first|nearest|random|mean [--seed S]] [--inverse FILE]\n"
    "                    [--impl NAME]\n"
    "                    [--threads T] [-o OUT] [--shift X,Y,Z | --no-shift]\n"
    "Grid sampling (voxel downsampling): a point's voxel is (ix, iy, iz) =\n"
    "floor((p - origin) / S) per axis, computed in double precision (a point on a\n"
    "boundary goes to the voxel above it); the origin is the cloud's minimum per axis\n"
    "unless --origin gives it. One line per occupied voxel, sorted by ix, then iy,\n"
    "then iz: '<ix> <iy> <iz> <count> <index>', index the point the voxel keeps:\n"
    "--select first (the default) its lowest index, --select nearest the nearest to\n"
    "the voxel's centre origin + (i + 0.5) S (ties to the lowest index), --select\n"
    "random the point of least SplitMix64 draw of (seed, index) (impl/grid/grid.h:\n"
    "the same choice everywhere; --seed S, 0 by default); --select mean keeps the\n"
    "lowest index and adds the voxel's mean point, '... <index> <mx> <my> <mz>' (its\n"
    "points summed in double in increasing index, over the count, rounded to\n"
    "float32). --inverse FILE writes each point's voxel, its line number from 0, one\n"
    "a line. A cloud may\n"
    "span at most 524,288 voxels an axis. Without --impl the fastest available exact\n"
    "implementation runs. --shift and --no-shift work as in pcbench nn (a shift is\n"
    "subtracted from --origin too).\n";

/* The answer's lines to o, the inverse map to inv (NULL: none); a mean
 * point back in the file's frame (shift: what the load subtracted), exact:
 * a float's 9 digits where nothing was, 17 digits of the double sum where a
 * shift was. */
static void write_voxels(FILE *o, FILE *inv, const pcb_task *t, const pcb_result *r,
                         const double shift[3])
{
    const int64_t n = t->n;
    double origin[3];
    pcb_grid_origin(t, t->a, n, origin);
    for (int64_t v = 0; v < n && r->count[v] > 0; v++) {
        const float *p = t->a + 3 * (int64_t)r->index[v];
        for (int k = 0; k < 3; k++) /* the kept point's voxel is its voxel's */
            fprintf(o, "%.0f ", pcb_grid_coord(p[k], origin[k], t->cell[k]));
        fprintf(o, "%" PRId32 " %" PRId32, r->count[v], r->index[v]);
        for (int k = 0; r->mean && k < 3; k++) {
            const double m = (double)r->mean[3 * v + k] + shift[k];
            fprintf(o, shift[k] != 0 ? " %.17g" : " %.9g", m);
        }
        fputc('\n', o);
    }
    for (int64_t i = 0; inv && i < n; i++)
        fprintf(inv, "%" PRId32 "\n", r->index[n + i]);
}

int cli_grid(int argc, char **argv)
{
    run_args a = {0};
    int rc = cli_parse_run_args(argc, argv, "i:o:t:S:Nh", "IiotZOLYJSNh", grid_help, &a);
    if (rc >= 0)
        return rc;
    if (!a.in_a || !a.have_cell)
        return usage_error("grid needs -i CLOUD and --size S");
    pcb_outfile o, inv = {0};
    if (a.inverse && pcb_out_same_file(a.inverse, a.in_a))
        return cli_report(pcb_fail(PCB_EINVAL, "--inverse %s is the input: writing it would "
                                   "destroy it", a.inverse), "grid");
    if ((rc = cli_open_output(&a, &o)))
        return rc;
    if (a.inverse && (rc = pcb_out_open(&inv, a.inverse)) != PCB_OK) {
        pcb_out_abort(&o);
        return cli_report(rc, "--inverse");
    }
    pcb_cloud c = {0};
    const pcb_impl *impl = NULL;
    pcb_result r = {0};
    double shift[3];
    if ((rc = cli_load(a.in_a, &c)) || (rc = cli_apply_shift_to(&a, &c, NULL, shift)))
        goto done;
    pcb_task t = {.problem = PCB_GRID, .batch = 1, .n = c.n, .a = c.xyz, .select = a.select,
                  .origin_given = a.have_origin, .opt = a.opt, .seed = a.seed};
    for (int k = 0; k < 3; k++)
        t.cell[k] = a.cell[k], t.origin[k] = a.have_origin ? a.origin[k] - shift[k] : 0;
    if ((rc = cli_check_and_choose(a.impl, &t, &impl)))
        goto done;
    if (pcb_result_alloc(&t, &r) != PCB_OK) {
        rc = cli_report(PCB_ENOMEM, "grid");
        goto done;
    }
    if ((rc = cli_run_task(impl, &t, &r)))
        goto done;
    write_voxels(o.f, inv.f, &t, &r, shift);
    rc = pcb_out_commit(&o);
    if (rc == PCB_OK && inv.f)
        rc = pcb_out_commit(&inv);
    rc = rc == PCB_OK ? 0 : cli_report(rc, "grid");
done:
    pcb_out_abort(&o);
    if (inv.f)
        pcb_out_abort(&inv);
    pcb_result_free(&r);
    pcb_cloud_free(&c);
    return rc;
}
