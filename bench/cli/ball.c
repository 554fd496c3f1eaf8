/* ball.c - pcbench ball: the ball query of every centre. */
#include <inttypes.h>
#include <stdlib.h>

#include "cli.h"

const char cli_ball_synopsis[] = "ball -r REF -q CENTRES --radius R -k K";

static const char ball_help[] =
    "usage: pcbench ball -r REF -q CENTRES --radius R -k K [--select first|nearest]\n"
    "                    [--pad none|first] [--impl NAME] [--threads T] [-o OUT]\n"
    "                    [--shift X,Y,Z | --no-shift]\n"
    "Ball query: one line per centre, the indices of at most K points of REF inside its\n"
    "ball of radius R (float32 squared distance below R * R, the strict test of\n"
    "PointNet++ and PyTorch3D). --select first (the default, the PointNet++ contract):\n"
    "the K inside points of lowest index, in increasing index; --select nearest: the K\n"
    "nearest inside points, nearest first, equal distances by increasing index. An\n"
    "empty ball is an empty line. --pad first writes K entries a line, the first hit\n"
    "repeated (pointnet2_ops' layout for drop-in use; an empty ball stays empty, never\n"
    "point 0). Without --impl the fastest available exact implementation runs.\n"
    "--shift and --no-shift work as in pcbench nn (see pcbench nn --help).\n";

int cli_ball(int argc, char **argv)
{
    run_args a = {0};
    int rc = cli_parse_run_args(argc, argv, "r:q:k:o:t:S:Nh", "IrqkotRLFSNh", ball_help, &a);
    if (rc >= 0)
        return rc;
    if (!a.in_a || !a.in_b || !a.have_k || !a.have_radius)
        return usage_error("ball needs -r REF, -q CENTRES, --radius R and -k K");
    pcb_outfile o;
    if ((rc = cli_open_output(&a, &o)))
        return rc;
    pcb_cloud ref = {0}, ctr = {0};
    const pcb_impl *impl = NULL;
    pcb_result r = {0};
    if ((rc = cli_load(a.in_a, &ref)) || (rc = cli_load(a.in_b, &ctr)) ||
        (rc = cli_apply_shift(&a, &ref, &ctr)))
        goto done;
    pcb_task t = {.problem = PCB_BALL, .batch = 1, .n = ref.n, .nq = ctr.n, .k = a.k,
                  .radius = a.radius, .select = a.select, .a = ref.xyz, .b = ctr.xyz,
                  .opt = a.opt};
    if ((rc = cli_check_and_choose(a.impl, &t, &impl)))
        goto done;
    if (pcb_result_alloc(&t, &r) != PCB_OK) {
        rc = cli_report(PCB_ENOMEM, "ball");
        goto done;
    }
    if ((rc = cli_run_task(impl, &t, &r)))
        goto done;
    for (int64_t i = 0; i < t.nq; i++) {
        const int32_t *row = r.index + i * t.k, count = r.count[i];
        const int64_t len = a.pad_first && count ? t.k : count;
        for (int64_t s = 0; s < len; s++)
            fprintf(o.f, "%s%" PRId32, s ? " " : "", s < count ? row[s] : row[0]);
        fputc('\n', o.f);
    }
    rc = pcb_out_commit(&o);
    rc = rc == PCB_OK ? 0 : cli_report(rc, "ball");
done:
    pcb_out_abort(&o);
    pcb_result_free(&r);
    pcb_cloud_free(&ref);
    pcb_cloud_free(&ctr);
    return rc;
}
