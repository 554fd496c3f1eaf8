/* grid_omp.c - the clouds of a batch on OpenMP threads, each sorted by a
 * radix sort of its keys (a byte a pass, the bytes every key shares
 * skipped); a batch of fewer clouds than threads takes its clouds one at a
 * time, each on every thread (its bounds, keys and radix sort). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "grid.h"

typedef struct {
    pcb_grid_rows rows;
    int threads;
} omp_state;

static int omp_prepare(const pcb_task *t, void **state)
{
    omp_state *s = calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "grid omp: out of memory");
    int rc = pcb_grid_rows_init(&s->rows, t, "omp");
    if (rc != PCB_OK) {
        free(s);
        return rc;
    }
    s->threads = t->opt.threads > 0 ? t->opt.threads : omp_get_max_threads();
    *state = s;
    return PCB_OK;
}

static int omp_compute(void *state)
{
    omp_state *s = state;
    const pcb_task *t = &s->rows.task;
    int rc = PCB_OK;
    int64_t first = t->batch; /* the lowest cloud that failed: its message, whatever the order */
    char message[256] = "";   /* a thread's error message, told again by this thread */
    if (t->batch < s->threads) { /* fewer clouds than threads: each cloud on every thread */
        uint64_t *scratch = malloc((size_t)t->n * 4 * sizeof *scratch);
        for (int64_t c = 0; scratch && c < t->batch && rc == PCB_OK; c++)
            rc = pcb_grid_cloud(t, c, s->threads, scratch, &s->rows);
        free(scratch);
        return scratch ? rc : pcb_fail(PCB_ENOMEM, "grid omp: no memory for %lld points",
                                       (long long)t->n);
    }
#pragma omp parallel num_threads(s->threads) /* a cloud a thread */
    {
        uint64_t *scratch = malloc((size_t)t->n * 4 * sizeof *scratch);
#pragma omp for schedule(dynamic, 1)
        for (int64_t c = 0; c < t->batch; c++) {
            int own = scratch ? pcb_grid_cloud(t, c, 1, scratch, &s->rows)
                              : pcb_fail(PCB_ENOMEM, "grid omp: no memory for %lld points",
                                         (long long)t->n);
            if (own != PCB_OK) {
#pragma omp critical(grid_omp_rc)
                if (c < first)
                    first = c, rc = own, snprintf(message, sizeof message, "%s", pcb_errmsg());
            }
        }
        free(scratch);
    }
    return rc == PCB_OK ? rc : pcb_fail(rc, "%s", message);
}

static void omp_release(void *state)
{
    omp_state *s = state;
    if (s)
        pcb_grid_rows_free(&s->rows);
    free(s);
}

const pcb_impl pcb_grid_omp = {
    .name = "omp",
    .problem = PCB_GRID,
    .device = PCB_CPU,
    .promise = {.exact = 1},
    .cost = PCB_COST_INDEXED,
    .summary = "a cloud a thread, each a radix sort of its voxel keys",
    .prepare = omp_prepare,
    .compute = omp_compute,
    .fetch = pcb_grid_rows_fetch,
    .release = omp_release,
};
