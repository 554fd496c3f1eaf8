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

void bench_config_ragged(bench_config *c, int64_t shortest)
{
    c->shortest = shortest;
    size_t len = strlen(c->id);
    snprintf(c->id + len, sizeof c->id - len, "/ragged");
}
