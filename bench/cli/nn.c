/* nn.c - pcbench nn: the nearest reference point of every query point. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char cli_nn_synopsis[] = "nn -r REF -q QUERY";

static const char nn_help[] =
    "usage: pcbench nn -r REF -q QUERY [--impl NAME] [--threads T] [--partitions P] [-o OUT]\n"
    "                  [--shift X,Y,Z | --no-shift]\n"
    "Nearest neighbour: one line per query point, '<index> <squared distance>' of its\n"
    "nearest point in REF. Without --impl the fastest available exact implementation runs.\n"
    "Geo-referenced clouds (a coordinate beyond 1e5) are shifted by the first cloud's\n"
    "rounded bounding-box minimum, in double, before rounding to float: --shift X,Y,Z\n"
    "sets the shift, --no-shift keeps the coordinates as they are.\n"
    "--threads T: the threads of the CPU implementations that take them (omp, kdtree,\n"
    "nanoflann);\n"
    "--partitions P: the azimuth partitions of cuda_attempt3 (the slides' third\n"
    "attempt); every other implementation ignores it.\n";

int cli_nn(int argc, char **argv)
{
    run_args a = {0};
    int rc = cli_parse_run_args(argc, argv, "r:q:o:t:P:S:Nh", "IrqotPSNh", nn_help, &a);
    if (rc >= 0)
        return rc;
    if (!a.in_a || !a.in_b)
        return usage_error("nn needs -r REF and -q QUERY");
    pcb_outfile o;
    if ((rc = cli_open_output(&a, &o)))
        return rc;
    pcb_cloud ref = {0}, qry = {0};
    const pcb_impl *impl = NULL;
    int32_t *idx = NULL;
    float *d2 = NULL;
    if ((rc = cli_load(a.in_a, &ref)) || (rc = cli_load(a.in_b, &qry)) ||
        (rc = cli_apply_shift(&a, &ref, &qry)))
        goto done;
    pcb_task t = {.problem = PCB_NN, .batch = 1, .n = ref.n, .nq = qry.n, .a = ref.xyz,
                  .b = qry.xyz, .opt = a.opt};
    if ((rc = cli_check_and_choose(a.impl, &t, &impl)))
        goto done;
    idx = malloc((size_t)qry.n * sizeof *idx);
    d2 = malloc((size_t)qry.n * sizeof *d2);
    if (!idx || !d2) {
        rc = cli_report(pcb_fail(PCB_ENOMEM, "no memory for %lld results", (long long)qry.n), "nn");
        goto done;
    }
    pcb_result r = {.index = idx, .dist2 = d2};
    if ((rc = cli_run_task(impl, &t, &r)))
        goto done;
    for (int64_t i = 0; i < t.nq; i++)
        fprintf(o.f, "%" PRId32 " %.9g\n", idx[i], (double)d2[i]);
    rc = pcb_out_commit(&o);
    rc = rc == PCB_OK ? 0 : cli_report(rc, "nn");
done:
    pcb_out_abort(&o);
    free(idx);
    free(d2);
    pcb_cloud_free(&ref);
    pcb_cloud_free(&qry);
    return rc;
}
