/* sort.h - the stable radix sort the CPU implementations share (grid
 * sampling, serialization), private to the library. */
#ifndef PCB_SORT_H
#define PCB_SORT_H

#include <stdint.h>

/* n 64-bit keys sorted with their 32-bit values, stably (equal keys keep
 * their order): an LSD radix sort, a byte a pass, the bytes every key
 * shares skipped, on threads OpenMP threads (1 or less: serial). The
 * sorted arrays end in key and value; key_tmp and value_tmp hold n each. */
void pcb_sort_pairs(uint64_t *key, int32_t *value, int64_t n, uint64_t *key_tmp,
                    int32_t *value_tmp, int threads);

#endif
