/* knn.c - pcbench knn: the k nearest reference points of every query. */
#include <inttypes.h>
#include <stdlib.h>

#include "cli.h"

const char cli_knn_synopsis[] = "knn -r REF -q QUERY -k K";

static const char knn_help[] =
    "usage: pcbench knn -r REF -q QUERY -k K [--impl NAME] [--threads T] [-o OUT]\n"
    "                   [--shift X,Y,Z | --no-shift]\n"
    "k nearest neighbours: one line per query point, '<index> <squared distance>' pairs\n"
    "of its min(K, n) nearest points in REF, nearest first, equal distances by\n"
    "increasing index (with a canonical implementation; FLANN and nanoflann order ties\n"
    "their own way). -q may name REF itself: every point is then its own nearest.\n"
    "Without --impl the fastest available exact implementation runs. --shift and\n"
    "--no-shift work as in pcbench nn (see pcbench nn --help).\n";

int cli_knn(int argc, char **argv)
{
    run_args a = {0};
    int rc = cli_parse_run_args(argc, argv, "r:q:k:o:t:S:Nh", "IrqkotSNh", knn_help, &a);
    if (rc >= 0)
        return rc;
    if (!a.in_a || !a.in_b || !a.have_k)
        return usage_error("knn needs -r REF, -q QUERY and -k K");
    pcb_outfile o;
    if ((rc = cli_open_output(&a, &o)))
        return rc;
    pcb_cloud ref = {0}, qry = {0};
    const pcb_impl *impl = NULL;
    pcb_result r = {0};
    if ((rc = cli_load(a.in_a, &ref)) || (rc = cli_load(a.in_b, &qry)) ||
        (rc = cli_apply_shift(&a, &ref, &qry)))
        goto done;
    pcb_task t = {.problem = PCB_KNN, .batch = 1, .n = ref.n, .nq = qry.n, .k = a.k,
                  .a = ref.xyz, .b = qry.xyz, .opt = a.opt};
    if ((rc = cli_check_and_choose(a.impl, &t, &impl)))
        goto done;
    if (pcb_result_alloc(&t, &r) != PCB_OK) {
        rc = cli_report(PCB_ENOMEM, "knn");
        goto done;
    }
    if ((rc = cli_run_task(impl, &t, &r)))
        goto done;
    const int64_t len = t.k < t.n ? t.k : t.n;
    for (int64_t i = 0; i < t.nq; i++)
        for (int64_t s = 0; s < len; s++)
            fprintf(o.f, "%" PRId32 " %.9g%c", r.index[i * t.k + s], (double)r.dist2[i * t.k + s],
                    s + 1 < len ? ' ' : '\n');
    rc = pcb_out_commit(&o);
    rc = rc == PCB_OK ? 0 : cli_report(rc, "knn");
done:
    pcb_out_abort(&o);
    pcb_result_free(&r);
    pcb_cloud_free(&ref);
    pcb_cloud_free(&qry);
    return rc;
}
