/* bench_config.c - a suite's configurations as they are made: what the
 * problems' faces (bench/problems/) call to add theirs. Calls nothing of the
 * harness above it. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

bench_config *bench_config_add(bench_config_list *l, pcb_problem p, const char *dataset,
                               int64_t batch, int64_t n, int64_t nq, int64_t m)
{
    if (l->count == l->cap) {
        int cap = l->cap ? 2 * l->cap : 32;
        bench_config *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v) {
            pcb_fail(PCB_ENOMEM, "out of memory for the suite");
            return NULL;
        }
        l->v = v;
        l->cap = cap;
    }
    bench_config *c = &l->v[l->count++];
    memset(c, 0, sizeof *c);
    c->problem = p;
    c->dataset = dataset;
    c->batch = batch;
    c->n = n;
    c->nq = nq;
    c->m = m;
    return c;
}

bench_config *bench_config_pair(bench_config_list *l, pcb_problem p, const char *dataset,
                                int64_t batch, int64_t n, int64_t nq)
{
    bench_config *c = bench_config_add(l, p, dataset, batch, n, nq, 0);
    if (c)
        snprintf(c->id, sizeof c->id, "%s/%s/b%lld/n%lld/q%lld", pcb_problem_name(p), dataset,
                 (long long)batch, (long long)n, (long long)nq);
    return c;
}

void bench_config_ragged(bench_config *c, int64_t shortest)
{
    c->shortest = shortest;
    size_t len = strlen(c->id);
    snprintf(c->id + len, sizeof c->id - len, "/ragged");
}

int bench_config_training(bench_config_list *l, bench_config_pair_fn add)
{
    static const int64_t tb[] = {8, 16, 32}, tn[] = {1024, 2048, 4096, 8192, 16384};
    static const char *const kinds[] = {"uniform", "sphere"};
    int ok = 1;
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 3 && ok; j++)
                ok = add(l, kinds[k], tb[j], tn[i], tn[i]) != NULL;
        for (int i = 0; i < 5 && ok; i += 4)
            ok = add(l, kinds[k], 1, tn[i], tn[i]) != NULL;
    }
    return ok ? PCB_OK : PCB_ENOMEM;
}
