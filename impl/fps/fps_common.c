/* fps_common.c - what several FPS implementations share. */
#include <stdlib.h>

#include "fps.h"

int pcb_fps_distinct_tail(int32_t *idx, int64_t n, int64_t m)
{
    int64_t first = -1, repeat = -1;
    for (int64_t j = 0; j < m && repeat < 0; j++)
        if (idx[j] == 0) {
            if (first < 0)
                first = j;
            else
                repeat = j;
        }
    if (repeat < 0)
        return PCB_OK;
    unsigned char *chosen = calloc((size_t)(n + 7) / 8, 1);
    if (!chosen)
        return pcb_fail(PCB_ENOMEM, "fps: no memory for %lld flags", (long long)n);
    for (int64_t j = 0; j < repeat; j++)
        chosen[idx[j] >> 3] |= (unsigned char)(1u << (idx[j] & 7));
    int64_t next = 0;
    for (int64_t j = repeat; j < m; j++) {
        while (chosen[next >> 3] >> (next & 7) & 1)
            next++;
        idx[j] = (int32_t)next++;
    }
    free(chosen);
    return PCB_OK;
}
