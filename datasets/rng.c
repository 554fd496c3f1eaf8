/* rng.c - deterministic random numbers: xoshiro256** seeded by splitmix64,
 * the same sequence on every machine, so generated clouds are reproducible. */
#include <math.h>

#include "cloud.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void pcb_rng_seed(pcb_rng *r, uint64_t seed)
{
    if (!r)
        return;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t pcb_rng_next(pcb_rng *r)
{
    if (!r)
        return 0;
    uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

double pcb_rng_uniform(pcb_rng *r)
{
    return !r ? 0 : (double)(pcb_rng_next(r) >> 11) * 0x1.0p-53;
}

double pcb_rng_normal(pcb_rng *r)
{
    if (!r)
        return 0;
    double u = pcb_rng_uniform(r), v = pcb_rng_uniform(r);
    return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}
