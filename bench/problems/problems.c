/* problems.c - the tool's faces of the problems, by PCB_PROBLEM_MAP. */
#include "problems.h"

const bench_problem_face *bench_face(pcb_problem p)
{
    static const bench_problem_face *const faces[PCB_NPROBLEMS] = {
#define FACE(ID, name, title) &bench_##name##_face,
        PCB_PROBLEM_MAP(FACE)
#undef FACE
    };
    return (unsigned)p < PCB_NPROBLEMS ? faces[p] : NULL;
}
