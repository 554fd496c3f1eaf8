/* ragged.h - the layout of ragged tasks' answers (ragged.c), private to
 * the library: what run.c's cloud-by-cloud run and judge.c's cloud-by-cloud
 * judge share. */
#ifndef PCB_RAGGED_H
#define PCB_RAGGED_H

#include "pcbench_impl.h"

/* Cloud i of a ragged host task as a task of its own (batch 1, no lengths);
 * 0 when a cloud it needs is empty (then it has no task of its own). */
int pcb_ragged_cloud(const pcb_task *t, int64_t i, pcb_task *cloud);
/* Padding over cloud i's slots in out: index -1, dist2 +inf, price 0, count 0. */
void pcb_ragged_pad(const pcb_task *t, int64_t i, pcb_result *out);
/* Copy cloud i's answer between the whole result and the cloud's own
 * (to_whole 1: into the whole). */
void pcb_ragged_move(const pcb_task *t, int64_t i, pcb_result *whole, pcb_result *part,
                     int to_whole);
/* A result for a cloud's own task with the arrays like has. */
int pcb_ragged_part(const pcb_task *cloud, const pcb_result *like, pcb_result *part);
/* The values of a pair with an empty cloud: NaN (a mean of no terms). */
void pcb_ragged_empty(const pcb_task *t, int64_t i, pcb_result *out);
/* The first slot of cloud i outside its answer that is not padding, or -1. */
int64_t pcb_ragged_not_padding(const pcb_task *t, int64_t i, const pcb_result *r);

#endif
