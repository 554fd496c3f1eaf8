/* serialize_omp.c - the clouds of a batch on OpenMP threads, each sorted by
 * a radix sort of its codes (a byte a pass, the bytes every code shares
 * skipped); a batch of fewer clouds than threads takes its clouds one at a
 * time, each on every thread (its codes and radix sort). */
#include <omp.h>
#include <stdlib.h>

#include "serialize.h"

typedef struct {
    pcb_serialize_rows rows;
    int threads;
} omp_state;

static int omp_prepare(const pcb_task *t, void **state)
{
    omp_state *s = calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "serialize omp: out of memory");
    int rc = pcb_serialize_rows_init(&s->rows, t, "omp");
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
    int depth, failed = 0;
    int rc = pcb_serialize_frame(t, s->threads, s->rows.origin, &depth);
    if (rc != PCB_OK)
        return rc;
    if (t->batch < s->threads) { /* fewer clouds than threads: each cloud on every thread */
        uint64_t *scratch = malloc((size_t)t->n * 4 * sizeof *scratch);
        for (int64_t c = 0; scratch && c < t->batch; c++)
            pcb_serialize_cloud(t, c, depth, s->rows.origin + 3 * c, s->threads, scratch,
                                s->rows.index, s->rows.code);
        free(scratch);
        failed = !scratch;
    } else {
#pragma omp parallel num_threads(s->threads) reduction(| : failed) /* a cloud a thread */
        {
            uint64_t *scratch = malloc((size_t)t->n * 4 * sizeof *scratch);
            failed = !scratch;
#pragma omp for schedule(dynamic, 1)
            for (int64_t c = 0; c < t->batch; c++)
                if (scratch)
                    pcb_serialize_cloud(t, c, depth, s->rows.origin + 3 * c, 1, scratch,
                                        s->rows.index, s->rows.code);
            free(scratch);
        }
    }
    return failed ? pcb_fail(PCB_ENOMEM, "serialize omp: no memory for %lld points",
                             (long long)t->n)
                  : PCB_OK;
}

static void omp_release(void *state)
{
    omp_state *s = state;
    if (s)
        pcb_serialize_rows_free(&s->rows);
    free(s);
}

const pcb_impl pcb_serialize_omp = {
    .name = "omp",
    .problem = PCB_SERIALIZE,
    .device = PCB_CPU,
    .promise = {.exact = 1},
    .cost = PCB_COST_INDEXED,
    .summary = "a cloud a thread, each a radix sort of its codes",
    .prepare = omp_prepare,
    .compute = omp_compute,
    .fetch = pcb_serialize_rows_fetch,
    .release = omp_release,
    .ragged = 1,
};
