/* emd.c - pcbench emd: earth mover's distance between two clouds of one size. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "impl/emd/emd.h"

const char cli_emd_synopsis[] = "emd -a A -b B";

static const char emd_help[] =
    "usage: pcbench emd -a FILE_A -b FILE_B [--impl NAME] [--eps E] [--max-gap G]\n"
    "                   [--threads T] [-o OUT] [--shift X,Y,Z | --no-shift]\n"
    "Earth mover's distance between two clouds of equal size: prints 'emd <mean matched\n"
    "Euclidean distance>'. OUT (stdout after the emd line when there is no -o) gets one\n"
    "line per point of A: the index in B it is matched to (-1 if left unmatched).\n"
    "Geo-referenced clouds (a coordinate beyond 1e5) are shifted by the first cloud's\n"
    "rounded bounding-box minimum, in double, before rounding to float: --shift X,Y,Z\n"
    "sets the shift, --no-shift keeps the coordinates as they are. --max-gap G (loss\n"
    "mode): cuda_auction stops as soon as its prices certify the value within G of\n"
    "the optimum (e.g. 0.01; default 0.001); other implementations keep their own.\n";

int cli_emd(int argc, char **argv)
{
    run_args a = {0};
    int rc = cli_parse_run_args(argc, argv, "a:b:o:t:e:S:Nh", "IaboteGSNh", emd_help, &a);
    if (rc >= 0)
        return rc;
    if (!a.in_a || !a.in_b)
        return usage_error("emd needs -a FILE_A and -b FILE_B");
    /* Opened first: an -o that cannot be written fails before the value is printed. */
    pcb_outfile o;
    if ((rc = cli_open_output(&a, &o)))
        return rc;
    pcb_cloud ca = {0}, cb = {0};
    const pcb_impl *impl = NULL;
    int32_t *match = NULL;
    double value = 0;
    if ((rc = cli_load(a.in_a, &ca)) || (rc = cli_load(a.in_b, &cb)) || (rc = cli_apply_shift(&a, &ca, &cb)))
        goto done;
    pcb_task t = {.problem = PCB_EMD, .batch = 1, .n = ca.n, .nq = cb.n, .a = ca.xyz,
                  .b = cb.xyz, .opt = a.opt};
    t.opt.max_gap = a.max_gap;
    if ((rc = cli_check_and_choose(a.impl, &t, &impl)))
        goto done;
    if (!(match = malloc((size_t)ca.n * sizeof *match))) {
        rc = cli_report(pcb_fail(PCB_ENOMEM, "no memory for %lld results", (long long)ca.n), "emd");
        goto done;
    }
    pcb_result r = {.index = match, .value = &value};
    if ((rc = cli_run_task(impl, &t, &r)))
        goto done;
    int64_t unmatched = 0;
    for (int64_t i = 0; i < t.n; i++)
        unmatched += match[i] < 0;
    if (unmatched)
        fprintf(stderr, "pcbench: emd %s: %lld points left unmatched\n", impl->name,
                (long long)unmatched);
    printf("emd %.9g\n", value);
    fflush(stdout);
    for (int64_t i = 0; i < t.n; i++)
        fprintf(o.f, "%" PRId32 "\n", match[i]);
    rc = pcb_out_commit(&o);
    rc = rc == PCB_OK ? 0 : cli_report(rc, "emd");
done:
    pcb_out_abort(&o);
    free(match);
    pcb_cloud_free(&ca);
    pcb_cloud_free(&cb);
    return rc;
}
