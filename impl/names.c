/* names.c - the names of problems and devices, as the command line, the
 * results files and the bindings spell them. */
#include <string.h>

#include "pcbench_impl.h"

static const char *const problem_names[PCB_NPROBLEMS] = {"fps", "nn", "emd", "chamfer", "knn"};

const char *pcb_problem_name(pcb_problem p)
{
    return (unsigned)p < PCB_NPROBLEMS ? problem_names[p] : "?";
}

int pcb_problem_parse(const char *s, pcb_problem *out)
{
    if (!out)
        return pcb_fail(PCB_EINVAL, "problem parse: nowhere to put the problem");
    for (int i = 0; i < PCB_NPROBLEMS; i++)
        if (s && strcmp(s, problem_names[i]) == 0) {
            *out = (pcb_problem)i;
            return PCB_OK;
        }
    return pcb_fail(PCB_EINVAL, "unknown problem '%s' (fps, nn, emd, chamfer, knn)", s ? s : "");
}

const char *pcb_device_name(pcb_device d)
{
    return d == PCB_CUDA ? "cuda" : "cpu";
}
