/* defects.h - the catalog of planted defects (defects.c). */
#ifndef PCB_DEFECTS_H
#define PCB_DEFECTS_H

#include "impl/pcbench_judge.h"

typedef struct {
    const pcb_impl *impl; /* the planted variant: its name, problem and life cycle */
    const char *defect;   /* the defect, in one line */
    const char *origin;   /* where it was found */
    int accepted;         /* 1: correct under this project's rules, so it must pass */
    int by_recall;        /* NN, approximate by design: caught where its recall is < 1 */
} pcb_defect;

/* Every planted defect; the list ends with impl == NULL. */
const pcb_defect *pcb_defects(void);

/* Whether the judge caught the variant's answer: a failing verdict, or, for
 * one approximate by design (by_recall), any miss of an exact neighbour. */
int pcb_defect_caught(const pcb_defect *d, const pcb_judgement *j);

#endif
