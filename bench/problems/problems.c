/* problems.c - the tool's faces of the problems, by PCB_PROBLEM_MAP, and
 * the defect catalog gathered from them. */
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

/* The catalog: each problem's planted defects, in the list's order. */
const pcb_defect *pcb_defects(void)
{
    static pcb_defect catalog[PCB_MAX_DEFECTS + 1];
    static int made;
    if (!made) {
        int k = 0;
        for (int p = 0; p < PCB_NPROBLEMS; p++)
            for (const pcb_defect *d = bench_face((pcb_problem)p)->defects; d && d->impl; d++)
                if (k < PCB_MAX_DEFECTS)
                    catalog[k++] = *d;
        made = 1;
    }
    return catalog;
}
