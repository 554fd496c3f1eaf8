/* outfile.h - results files written whole or not at all: a new file
 * renamed over the name at commit, so a failed or interrupted run never
 * leaves a half-written file behind; FIFOs and character devices are
 * written through, never replaced (outfile.c says what happens to what). */
#ifndef PCB_OUTFILE_H
#define PCB_OUTFILE_H

#include <stdio.h>

typedef struct {
    FILE *f;
    char *path;  /* final path, NULL for stdout */
    char *tmp;   /* the temporary name ("" while the file has none) */
    int fd;      /* the unnamed (O_TMPFILE) file's descriptor, or -1 */
    int through; /* written through (FIFO, character device): no rename */
} pcb_outfile;

/* path NULL or "-" means stdout. PCB_EINVAL for a name that must not be
 * replaced (a folder, block device, socket, or a link to nothing). */
int pcb_out_open(pcb_outfile *o, const char *path);
/* Flush, fsync and rename into place; on any error remove the temporary. */
int pcb_out_commit(pcb_outfile *o);
/* Drop the temporary without touching path. */
void pcb_out_abort(pcb_outfile *o);
/* Remove every named temporary still pending; async-signal-safe, for a
 * program's handler of SIGINT or SIGTERM. */
void pcb_out_signal_cleanup(void);
/* 1 when out names the same file as in (an output that would destroy an
 * input), following links; 0 otherwise or when either does not exist. */
int pcb_out_same_file(const char *out, const char *in);

#endif
