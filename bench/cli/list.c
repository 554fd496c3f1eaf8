/* list.c - pcbench list: the implementations and whether they can run here, or the defect catalog. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "bench/verify/defects.h"

int cli_list(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--help") == 0) {
        puts("usage: pcbench list [--defects]\n"
             "One line per implementation: <problem> <name> <device> <exact|approx> <status>;\n"
             "the problems:" PCB_PROBLEM_NAMES ".\n"
             "--defects: the catalog of planted defects instead, one line each:\n"
             "<problem> <name>: <the defect> [from <where it was found>] (accepted: correct\n"
             "under this project's rules, must pass)");
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--defects") == 0) {
        for (const pcb_defect *d = pcb_defects(); d->impl; d++)
            printf("%s %s: %s [from %s]%s\n", pcb_problem_name(d->impl->problem), d->impl->name,
                   d->defect, d->origin, d->accepted ? " (accepted)" : "");
        return 0;
    }
    if (argc > 1)
        return usage_error("unexpected argument '%s'", argv[1]);
    for (int p = 0; p < PCB_NPROBLEMS; p++) {
        for (const pcb_impl *const *it = pcb_registry(); *it; it++) {
            const pcb_impl *impl = *it;
            if ((int)impl->problem != p)
                continue;
            int rc = pcb_impl_available(impl);
            printf("%s %s %s %s %s%s%s\n", pcb_problem_name(impl->problem), impl->name,
                   pcb_device_name(impl->device), impl->promise.exact ? "exact" : "approx",
                   rc == PCB_OK ? "available" : "unavailable", rc == PCB_OK ? "" : ": ",
                   rc == PCB_OK ? "" : pcb_errmsg());
        }
        for (const pcb_missing *m = pcb_not_built(); m->name; m++)
            if (strcmp(m->problem, pcb_problem_name((pcb_problem)p)) == 0)
                printf("%s %s %s - unavailable: not built (%s not found)\n", m->problem, m->name,
                       pcb_device_name(m->device), m->needs);
    }
    return 0;
}
