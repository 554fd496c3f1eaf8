/* cloud.c - a cloud's memory: the one allocation every loader and generator
 * makes, and its release. */
#include <stdlib.h>

#include "cloud.h"

int pcb_cloud_alloc(pcb_cloud *c, int64_t n)
{
    if (!c)
        return pcb_fail(PCB_EINVAL, "cloud alloc: no cloud to fill");
    c->xyz = NULL;
    c->dxyz = NULL;
    c->n = 0;
    if (n < 1 || n > PCB_MAX_POINTS)
        return pcb_fail(PCB_EINVAL, "cloud of %lld points (need 1..%d)", (long long)n,
                        PCB_MAX_POINTS);
    if (!(c->xyz = malloc((size_t)n * 3 * sizeof(float))))
        return pcb_fail(PCB_ENOMEM, "no memory for %lld points", (long long)n);
    c->n = n;
    return PCB_OK;
}

void pcb_cloud_free(pcb_cloud *c)
{
    if (c) {
        free(c->xyz);
        free(c->dxyz);
        c->xyz = NULL;
        c->dxyz = NULL;
        c->n = 0;
    }
}
