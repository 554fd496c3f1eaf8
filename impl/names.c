/* names.c - the names of problems and devices, as the command line, the
 * results files and the bindings spell them. */
#include <string.h>

#include "pcbench_impl.h"

static const char *const problem_names[PCB_NPROBLEMS] = {
#define PCB_PROBLEM_STRING(ID, name, title) #name,
    PCB_PROBLEM_MAP(PCB_PROBLEM_STRING)
#undef PCB_PROBLEM_STRING
};

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
    return pcb_fail(PCB_EINVAL, "unknown problem '%s' (the problems:" PCB_PROBLEM_NAMES ")",
                    s ? s : "");
}

const char *pcb_device_name(pcb_device d)
{
    return d == PCB_CUDA ? "cuda" : "cpu";
}

static const char *const ball_selections[] = {"first", "nearest", "random", "mean"};

const char *pcb_ball_select_name(int select)
{
    return select >= PCB_BALL_FIRST && select <= PCB_GRID_MEAN ? ball_selections[select] : "?";
}

int pcb_ball_select_parse(const char *s, int32_t *out)
{
    if (!out)
        return pcb_fail(PCB_EINVAL, "ball selection parse: nowhere to put it");
    for (int i = 0; i < 2; i++)
        if (s && strcmp(s, ball_selections[i]) == 0) {
            *out = i;
            return PCB_OK;
        }
    return pcb_fail(PCB_EINVAL, "unknown ball selection '%s' (first, nearest)", s ? s : "");
}

static const char *const curves[] = {"morton", "hilbert"};

const char *pcb_curve_name(int curve)
{
    return curve == PCB_CURVE_MORTON || curve == PCB_CURVE_HILBERT ? curves[curve] : "?";
}

int pcb_curve_parse(const char *s, int32_t *out)
{
    if (!out)
        return pcb_fail(PCB_EINVAL, "curve parse: nowhere to put it");
    for (int i = 0; i < 2; i++)
        if (s && strcmp(s, curves[i]) == 0) {
            *out = i;
            return PCB_OK;
        }
    return pcb_fail(PCB_EINVAL, "unknown curve '%s' (morton, hilbert)", s ? s : "");
}
