/* chamfer.c - pcbench chamfer: the chamfer distance between two clouds. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char cli_chamfer_synopsis[] = "chamfer -a A -b B";

static const char chamfer_help[] =
    "usage: pcbench chamfer -a FILE_A -b FILE_B [--convention C] [--impl NAME]\n"
    "                       [--threads T] [-o OUT] [--shift X,Y,Z | --no-shift]\n"
    "Chamfer distance: prints 'chamfer <value>', by default the mean over A of the\n"
    "squared distance to the nearest point of B plus the same from B to A (PyTorch3D's\n"
    "chamfer_distance). --convention DISTANCE-POINTS-DIRECTIONS gives the others:\n"
    "DISTANCE squared or euclidean, POINTS mean or sum, DIRECTIONS sum, average or\n"
    "forward (A to B only); e.g. euclidean-mean-average is PoinTr's L1 variant,\n"
    "squared-sum-forward chamferdist's default. -o OUT gets one line a point, A's then\n"
    "B's: '<index> <squared distance>' of its nearest point in the other cloud.\n"
    "Without --impl the fastest available exact\n"
    "implementation runs. --shift and --no-shift work as in pcbench fps --help.\n";

int cli_chamfer(int argc, char **argv)
{
    run_args a = {0};
    int rc = cli_parse_run_args(argc, argv, "a:b:o:t:S:Nh", "IabotCSNh", chamfer_help, &a);
    if (rc >= 0)
        return rc;
    if (!a.in_a || !a.in_b)
        return usage_error("chamfer needs -a FILE_A and -b FILE_B");
    pcb_outfile o = {0};
    if (a.out && (rc = cli_open_output(&a, &o)))
        return rc;
    pcb_cloud ca = {0}, cb = {0};
    const pcb_impl *impl = NULL;
    int32_t *idx = NULL;
    float *d2 = NULL;
    double value = 0;
    if ((rc = cli_load(a.in_a, &ca)) || (rc = cli_load(a.in_b, &cb)) ||
        (rc = cli_apply_shift(&a, &ca, &cb)))
        goto done;
    pcb_task t = {.problem = PCB_CHAMFER, .batch = 1, .n = ca.n, .nq = cb.n, .a = ca.xyz,
                  .b = cb.xyz, .opt = a.opt};
    if ((rc = cli_check_and_choose(a.impl, &t, &impl)))
        goto done;
    const int64_t count = pcb_answer_count(&t);
    if (!(idx = malloc((size_t)count * sizeof *idx)) || !(d2 = malloc((size_t)count * sizeof *d2))) {
        rc = cli_report(pcb_fail(PCB_ENOMEM, "no memory for %lld results", (long long)count),
                        "chamfer");
        goto done;
    }
    pcb_result r = {.index = idx, .dist2 = d2};
    if ((rc = cli_run_task(impl, &t, &r)))
        goto done;
    if ((rc = pcb_chamfer_values(&t, d2, &a.convention, &value)) != PCB_OK) {
        rc = cli_report(rc, "chamfer");
        goto done;
    }
    printf("chamfer %.9g\n", value);
    fflush(stdout);
    for (int64_t i = 0; a.out && i < count; i++)
        fprintf(o.f, "%" PRId32 " %.9g\n", idx[i], (double)d2[i]);
    rc = a.out ? pcb_out_commit(&o) : PCB_OK;
    rc = rc == PCB_OK ? 0 : cli_report(rc, "chamfer");
done:
    if (a.out)
        pcb_out_abort(&o);
    free(idx);
    free(d2);
    pcb_cloud_free(&ca);
    pcb_cloud_free(&cb);
    return rc;
}
