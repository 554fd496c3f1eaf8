/* fps.c - pcbench fps: farthest point sampling of a cloud file. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char cli_fps_synopsis[] = "fps -i FILE -m M";

static const char fps_help[] =
    "usage: pcbench fps -i FILE -m M [--impl NAME] [--start S] [--threads T] [-o OUT]\n"
    "                   [--shift X,Y,Z | --no-shift]\n"
    "Farthest point sampling: M lines, each a 0-based index into FILE's points, in\n"
    "selection order. Without --impl the fastest available exact implementation runs.\n"
    "Geo-referenced clouds (a coordinate beyond 1e5) are shifted by the first cloud's\n"
    "rounded bounding-box minimum, in double, before rounding to float: --shift X,Y,Z\n"
    "sets the shift, --no-shift keeps the coordinates as they are.\n";

int cli_fps(int argc, char **argv)
{
    run_args a = {0};
    int rc = cli_parse_run_args(argc, argv, "i:m:o:s:t:S:Nh", "IiomstSNh", fps_help, &a);
    if (rc >= 0)
        return rc;
    if (!a.in_a || !a.have_m)
        return usage_error("fps needs -i FILE and -m M");
    pcb_outfile o;
    if ((rc = cli_open_output(&a, &o)))
        return rc;
    pcb_cloud cloud = {0};
    pcb_task t = {.problem = PCB_FPS, .batch = 1, .m = a.m, .start = a.start, .opt = a.opt};
    const pcb_impl *impl = NULL;
    int32_t *idx = NULL;
    if ((rc = cli_load(a.in_a, &cloud)) || (rc = cli_apply_shift(&a, &cloud, NULL)))
        goto done;
    t.n = cloud.n;
    t.a = cloud.xyz;
    if ((rc = cli_check_and_choose(a.impl, &t, &impl)))
        goto done;
    if (!(idx = malloc((size_t)t.m * sizeof *idx))) {
        rc = cli_report(pcb_fail(PCB_ENOMEM, "no memory for %lld indices", (long long)t.m), "fps");
        goto done;
    }
    pcb_result r = {.index = idx};
    if ((rc = cli_run_task(impl, &t, &r)))
        goto done;
    for (int64_t i = 0; i < t.m; i++)
        fprintf(o.f, "%" PRId32 "\n", idx[i]);
    rc = pcb_out_commit(&o);
    rc = rc == PCB_OK ? 0 : cli_report(rc, "fps");
done:
    pcb_out_abort(&o);
    free(idx);
    pcb_cloud_free(&cloud);
    return rc;
}
