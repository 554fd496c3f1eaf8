/* sort.c - the stable radix sort of (key, value) pairs the CPU
 * implementations share (sort.h). */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "sort.h"

/* A stable LSD radix sort of n keys with their indices, a byte a pass,
 * skipping the bytes every key shares (a cloud's keys use few of them). */
static void radix_sort(uint64_t *key, int32_t *order, int64_t n, uint64_t *key_tmp,
                       int32_t *order_tmp)
{
    for (int shift = 0; shift < 64; shift += 8) {
        int64_t hist[257] = {0};
        for (int64_t i = 0; i < n; i++)
            hist[((key[i] >> shift) & 0xff) + 1]++;
        int used = 0;
        for (int b = 1; b <= 256; b++)
            used += hist[b] > 0;
        if (used < 2)
            continue;
        for (int b = 1; b <= 256; b++)
            hist[b] += hist[b - 1];
        for (int64_t i = 0; i < n; i++) {
            const int64_t at = hist[(key[i] >> shift) & 0xff]++;
            key_tmp[at] = key[i], order_tmp[at] = order[i];
        }
        memcpy(key, key_tmp, (size_t)n * sizeof *key);
        memcpy(order, order_tmp, (size_t)n * sizeof *order);
    }
}

/* The stable radix sort on threads threads: each pass, every thread counts
 * its own slice's digits, one thread turns the counts into each slice's
 * offsets (slices in order: stable), every thread scatters its slice. The
 * sorted arrays end in key and order. */
static void radix_sort_threads(uint64_t *key, int32_t *order, int64_t n, uint64_t *key_tmp,
                               int32_t *order_tmp, int threads)
{
    int64_t(*hist)[256] = malloc((size_t)threads * sizeof *hist);
    if (!hist) { /* no room for the counts: one thread */
        radix_sort(key, order, n, key_tmp, order_tmp);
        return;
    }
    uint64_t *from_k = key, *to_k = key_tmp;
    int32_t *from_o = order, *to_o = order_tmp;
    for (int shift = 0; shift < 64; shift += 8) {
        int skip = 0;
#pragma omp parallel num_threads(threads)
        {
            const int me = omp_get_thread_num(), all = omp_get_num_threads();
            const int64_t lo = n * me / all, hi = n * (me + 1) / all;
            int64_t *mine = hist[me];
            memset(mine, 0, sizeof hist[0]);
            for (int64_t i = lo; i < hi; i++)
                mine[(from_k[i] >> shift) & 0xff]++;
#pragma omp barrier
#pragma omp single
            {
                int64_t at = 0;
                int used = 0;
                for (int d = 0; d < 256; d++) {
                    int64_t total = 0;
                    for (int w = 0; w < all; w++) {
                        const int64_t c = hist[w][d];
                        hist[w][d] = at + total;
                        total += c;
                    }
                    at += total;
                    used += total > 0;
                }
                skip = used < 2; /* every key shares this byte */
            }
            if (!skip)
                for (int64_t i = lo; i < hi; i++) {
                    const int64_t to = mine[(from_k[i] >> shift) & 0xff]++;
                    to_k[to] = from_k[i], to_o[to] = from_o[i];
                }
        }
        if (!skip) {
            uint64_t *k = from_k;
            int32_t *o = from_o;
            from_k = to_k, from_o = to_o, to_k = k, to_o = o;
        }
    }
    if (from_k != key) {
        memcpy(key, from_k, (size_t)n * sizeof *key);
        memcpy(order, from_o, (size_t)n * sizeof *order);
    }
    free(hist);
}

void pcb_sort_pairs(uint64_t *key, int32_t *value, int64_t n, uint64_t *key_tmp,
                    int32_t *value_tmp, int threads)
{
    if (threads > 1)
        radix_sort_threads(key, value, n, key_tmp, value_tmp, threads);
    else
        radix_sort(key, value, n, key_tmp, value_tmp);
}
