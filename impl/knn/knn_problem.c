/* knn_problem.c - the k nearest neighbours' face in the library: its
 * arguments, its answer (k indices and squared distances a query, nearest
 * first, ties by index), its judge, and pcb_knn. */
#include "impl/problem.h"

static int check(const pcb_task *t)
{
    return pcb_check_k_rows(t, "query cloud");
}

/* four neighbours of each query */
static void sample(pcb_task *t)
{
    t->k = 4;
}

const pcb_problem_face pcb_knn_problem = {
    .check = check,
    .validate = pcb_knn_validate,
    .groups = 1,
    .rows = {PCB_ROWS_B},
    .row_is_k = 1,
    .reads_b = 1,
    .distances = 1,
    .canonical = "not canonical: query %lld neighbour %lld is %ld, %s has %ld",
    .sample = sample,
};

int pcb_knn(const float *ref, const float *query, int64_t batch, int64_t n, int64_t nq, int64_t k,
            int32_t *idx, float *dist2)
{
    pcb_task t = {.problem = PCB_KNN, .batch = batch, .n = n, .nq = nq, .k = k, .a = ref,
                  .b = query};
    pcb_result r = {.index = idx, .dist2 = dist2};
    return pcb_run_best(&t, &r);
}
