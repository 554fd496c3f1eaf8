/* grid_naive.c - the reference: each cloud's keys sorted with the C
 * library's qsort as (key, index) pairs, then its voxels, serial. */
#include <stdlib.h>

#include "grid.h"

typedef struct {
    pcb_grid_rows rows;
    uint64_t *scratch;
} naive_state;

static int naive_prepare(const pcb_task *t, void **state)
{
    naive_state *s = calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "grid naive: out of memory");
    int rc = pcb_grid_rows_init(&s->rows, t, "naive");
    if (rc == PCB_OK && !(s->scratch = malloc((size_t)t->n * 4 * sizeof *s->scratch)))
        rc = pcb_fail(PCB_ENOMEM, "grid naive: no memory for %lld points", (long long)t->n);
    if (rc != PCB_OK) {
        pcb_grid_rows_free(&s->rows);
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
    for (int64_t c = 0; c < t->batch; c++) {
        int rc = pcb_grid_cloud(t, c, 0, s->scratch, &s->rows);
        if (rc != PCB_OK)
            return rc;
    }
    return PCB_OK;
}

static void naive_release(void *state)
{
    naive_state *s = state;
    if (s) {
        pcb_grid_rows_free(&s->rows);
        free(s->scratch);
    }
    free(s);
}

const pcb_impl pcb_grid_naive = {
    .name = "naive",
    .problem = PCB_GRID,
    .device = PCB_CPU,
    .promise = {.exact = 1},
    .cost = PCB_COST_INDEXED,
    .reference = 1,
    .summary = "serial: a cloud's voxel keys sorted by qsort, then its voxels (the reference)",
    .prepare = naive_prepare,
    .compute = naive_compute,
    .fetch = pcb_grid_rows_fetch,
    .release = naive_release,
};
