/* outfile.h - results files written to a temporary file and renamed, so a
 * failed or interrupted run never leaves a half-written file behind. */
#ifndef PCB_OUTFILE_H
#define PCB_OUTFILE_H

#include <stdio.h>

typedef struct {
    FILE *f;
    char *path; /* final path, NULL for stdout */
    char *tmp;
} pcb_outfile;

/* path NULL or "-" means stdout. */
int pcb_out_open(pcb_outfile *o, const char *path);
/* Flush, fsync and rename into place; on any error remove the temporary. */
int pcb_out_commit(pcb_outfile *o);
/* Drop the temporary without touching path. */
void pcb_out_abort(pcb_outfile *o);

#endif
