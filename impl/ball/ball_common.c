/* ball_common.c - the rows every CPU ball-query implementation fills, the
 * brute force that naive and omp share, and the row the trees build from
 * their unordered candidates. */
#include <stdlib.h>
#include <string.h>

#include "ball.h"

int pcb_ball_rows_init(pcb_ball_rows *r, const pcb_task *t, const char *impl)
{
    memset(r, 0, sizeof *r);
    int rc = pcb_nn_coords_fit(t, impl);
    if (rc != PCB_OK)
        return rc;
    const size_t count = (size_t)pcb_answer_count(t), rows = (size_t)(t->batch * t->nq);
    r->task = *t;
    r->idx = malloc(count * sizeof *r->idx);
    r->dist2 = malloc(count * sizeof *r->dist2);
    r->count = malloc(rows * sizeof *r->count);
    if (!r->idx || !r->dist2 || !r->count) {
        pcb_ball_rows_free(r);
        return pcb_fail(PCB_ENOMEM, "ball %s: no memory for %zu neighbours", impl, count);
    }
    return PCB_OK;
}

void pcb_ball_rows_free(pcb_ball_rows *r)
{
    free(r->idx);
    free(r->dist2);
    free(r->count);
    r->idx = NULL, r->dist2 = NULL, r->count = NULL;
}

int pcb_ball_rows_fetch(void *state, pcb_result *out)
{
    const pcb_ball_rows *r = state;
    const size_t count = (size_t)pcb_answer_count(&r->task);
    memcpy(out->index, r->idx, count * sizeof *r->idx);
    if (out->dist2)
        memcpy(out->dist2, r->dist2, count * sizeof *r->dist2);
    if (out->count)
        memcpy(out->count, r->count, (size_t)(r->task.batch * r->task.nq) * sizeof *r->count);
    return PCB_OK;
}

void pcb_ball_scan(const pcb_task *t, int64_t first, int64_t last, int32_t *idx, float *dist2,
                   int32_t *count)
{
    const float r2 = pcb_ball_r2(t->radius);
    const int64_t k = t->k;
    const int by_index = t->select == PCB_BALL_FIRST;
    for (int64_t q = first; q < last; q++) {
        const float *ref = t->a + q / t->nq * t->n * 3, *p = t->b + 3 * q;
        float *d = dist2 + q * k;
        int32_t *id = idx + q * k;
        int64_t c = 0;
        pcb_knn_row_clear(d, id, k);
        for (int64_t j = 0; j < t->n; j++) {
            const float e = pcb_nn_d2(ref + 3 * j, p);
            if (!(e < r2))
                continue;
            if (by_index) { /* increasing index: the row is the first k */
                d[c] = e, id[c] = (int32_t)j;
                if (++c == k)
                    break;
            } else {
                c += c < k;
                pcb_knn_offer(d, id, c, e, (int32_t)j);
            }
        }
        count[q] = (int32_t)c;
    }
}

int32_t pcb_ball_row_from(const pcb_task *t, const float *cand_d2, const int32_t *cand_id, int64_t len,
                          int32_t *idx, float *dist2)
{
    const int64_t k = t->k;
    pcb_knn_row_clear(dist2, idx, k);
    if (t->select == PCB_BALL_FIRST) {
        int64_t c = 0;
        for (int64_t i = 0; i < len; i++) {
            /* a row sorted by index (padding's -1 read unsigned is last) */
            c += c < k;
            if ((uint32_t)cand_id[i] > (uint32_t)idx[c - 1])
                continue;
            int64_t p = c - 1;
            for (; p > 0 && (uint32_t)idx[p - 1] > (uint32_t)cand_id[i]; p--)
                idx[p] = idx[p - 1], dist2[p] = dist2[p - 1];
            idx[p] = cand_id[i], dist2[p] = cand_d2[i];
        }
        return (int32_t)c;
    }
    int64_t c = 0;
    for (int64_t i = 0; i < len; i++) {
        c += c < k;
        pcb_knn_offer(dist2, idx, c, cand_d2[i], cand_id[i]);
    }
    return (int32_t)c;
}
