/* problems.c - the tool's faces of the problems, by PCB_PROBLEM_MAP, the
 * defect catalog gathered from them, and the line reader their own answer
 * readers share. */
#include <errno.h>
#include <stdlib.h>

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

int bench_line_integers(char *line, long long *w, int want, int *header)
{
    return bench_line_numbers(line, w, want, NULL, 0, header);
}

int bench_line_numbers(char *line, long long *w, int want, double *x, int reals, int *header)
{
    for (char *c = line; *c; c++)
        *c = *c == ',' || *c == '\t' ? ' ' : *c == '#' ? (c[1] = 0, ' ') : *c;
    char *p = line, *end;
    int fields = 0;
    *header = 0;
    for (;;) {
        while (*p == ' ' || *p == '\r' || *p == '\n')
            p++;
        if (!*p)
            return fields;
        errno = 0;
        const int real = x && fields >= want;
        const long long i = real ? 0 : strtoll(p, &end, 10);
        const double d = real ? strtod(p, &end) : 0;
        if (end == p || errno || (*end && *end != ' ' && *end != '\r' && *end != '\n')) {
            *header = fields == 0 && (*p < '0' || *p > '9') && *p != '-' && *p != '+';
            return -1;
        }
        if (real && fields - want < reals)
            x[fields - want] = d;
        else if (!real && fields < want)
            w[fields] = i;
        fields++, p = end;
    }
}
