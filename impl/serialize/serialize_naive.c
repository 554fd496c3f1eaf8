/* serialize_naive.c - the reference: each cloud's codes sorted with the C
 * library's qsort as (code, index) pairs, serial. */
#include <stdlib.h>

#include "serialize.h"

typedef struct {
    pcb_serialize_rows rows;
    uint64_t *scratch;
} naive_state;

static int naive_prepare(const pcb_task *t, void **state)
{
    naive_state *s = calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "serialize naive: out of memory");
    int rc = pcb_serialize_rows_init(&s->rows, t, "naive");
    if (rc == PCB_OK && !(s->scratch = malloc((size_t)t->n * 4 * sizeof *s->scratch)))
        rc = pcb_fail(PCB_ENOMEM, "serialize naive: no memory for %lld points", (long long)t->n);
    if (rc != PCB_OK) {
        pcb_serialize_rows_free(&s->rows);
        free(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static int naive_compute(void *state)
{
    naive_state *s = state;
    const pcb_task *t = &s->rows.task;
    int depth;
    int rc = pcb_serialize_frame(t, 1, s->rows.origin, &depth);
    for (int64_t c = 0; rc == PCB_OK && c < t->batch; c++)
        pcb_serialize_cloud(t, c, depth, s->rows.origin + 3 * c, 0, s->scratch, s->rows.index,
                            s->rows.code);
    return rc;
}

static void naive_release(void *state)
{
    naive_state *s = state;
    if (s) {
        pcb_serialize_rows_free(&s->rows);
        free(s->scratch);
    }
    free(s);
}

const pcb_impl pcb_serialize_naive = {
    .name = "naive",
    .problem = PCB_SERIALIZE,
    .device = PCB_CPU,
    .promise = {.exact = 1},
    .cost = PCB_COST_INDEXED,
    .reference = 1,
    .summary = "serial: a cloud's codes sorted by qsort with their indices (the reference)",
    .prepare = naive_prepare,
    .compute = naive_compute,
    .fetch = pcb_serialize_rows_fetch,
    .release = naive_release,
    .ragged = 1,
};
