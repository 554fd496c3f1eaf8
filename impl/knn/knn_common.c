/* knn_common.c - the rows every CPU kNN implementation fills, and the brute
 * force that naive and omp share. */
#include <stdlib.h>
#include <string.h>

#include "knn.h"

int pcb_knn_rows_init(pcb_knn_rows *r, const pcb_task *t, const char *impl)
{
    memset(r, 0, sizeof *r);
    int rc = pcb_nn_coords_fit(t, impl);
    if (rc != PCB_OK)
        return rc;
    const size_t count = (size_t)pcb_answer_count(t);
    r->task = *t;
    r->idx = malloc(count * sizeof *r->idx);
    r->dist2 = malloc(count * sizeof *r->dist2);
    if (!r->idx || !r->dist2) {
        pcb_knn_rows_free(r);
        return pcb_fail(PCB_ENOMEM, "knn %s: no memory for %zu neighbours", impl, count);
    }
    return PCB_OK;
}

void pcb_knn_rows_free(pcb_knn_rows *r)
{
    free(r->idx);
    free(r->dist2);
    r->idx = NULL;
    r->dist2 = NULL;
}

int pcb_knn_rows_fetch(void *state, pcb_result *out)
{
    const pcb_knn_rows *r = state;
    const size_t count = (size_t)pcb_answer_count(&r->task);
    memcpy(out->index, r->idx, count * sizeof *r->idx);
    if (out->dist2)
        memcpy(out->dist2, r->dist2, count * sizeof *r->dist2);
    return PCB_OK;
}

void pcb_knn_scan(const pcb_task *t, int64_t first, int64_t last, int32_t *idx, float *dist2)
{
    const int64_t k = t->k, len = k < t->n ? k : t->n;
    for (int64_t q = first; q < last; q++) {
        const float *ref = t->a + q / t->nq * t->n * 3, *p = t->b + 3 * q;
        float *d = dist2 + q * k;
        int32_t *id = idx + q * k;
        pcb_knn_row_clear(d, id, k);
        for (int64_t j = 0; j < t->n; j++) {
            const float e = pcb_nn_d2(ref + 3 * j, p);
            if (e < d[len - 1]) /* increasing index: an equal distance comes after */
                pcb_knn_offer(d, id, len, e, (int32_t)j);
        }
    }
}
