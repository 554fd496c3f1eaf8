/* distinct.cuh - the distinct rule (fps.h) on a sampled sequence, a block a
 * cloud: pcb_fps_distinct_tail's work on the GPU. The samplers take the old
 * rule's canonical sequence, whose first repeat is its second index 0; from
 * there the unchosen indices are written in increasing order, found in a
 * bit set of the samples before it (flags: a cloud's (n + 31) / 32 words).
 * A sequence without a repeat (nearly always) costs one read of it. */
enum { DISTINCT_THREADS = 256 };

__global__ void __launch_bounds__(DISTINCT_THREADS)
    fps_distinct_tail(int32_t *out, int n, int m, uint32_t *flags_all, const int32_t *lengths)
{
    using block_scan = cub::BlockScan<int, DISTINCT_THREADS>;
    __shared__ typename block_scan::TempStorage temp;
    __shared__ int zero[2]; /* the positions of the first two 0s */
    int32_t *idx = out + (int64_t)blockIdx.x * m;
    /* A ragged cloud: its padding copies its start point, so the samplers
     * reach it only in the tail, where indices from its length on are -1. */
    const int len = lengths ? lengths[blockIdx.x] : n;
    if (len == 0) {
        for (int j = threadIdx.x; j < m; j += DISTINCT_THREADS)
            idx[j] = -1;
        return;
    }
    const int words_apart = (n + 31) / 32; /* a cloud's flags, at its full size */
    n = len;
    if (threadIdx.x == 0)
        zero[0] = zero[1] = INT_MAX;
    __syncthreads();
    for (int j = threadIdx.x; j < m; j += DISTINCT_THREADS)
        if (idx[j] == 0)
            atomicMin(&zero[0], j);
    __syncthreads();
    for (int j = zero[0] + 1 + threadIdx.x; zero[0] < m && j < m; j += DISTINCT_THREADS)
        if (idx[j] == 0)
            atomicMin(&zero[1], j);
    __syncthreads();
    const int repeat = zero[1];
    if (repeat >= m)
        return; /* the whole block leaves together */
    const int words = (n + 31) / 32;
    uint32_t *flags = flags_all + (int64_t)blockIdx.x * words_apart;
    for (int w = threadIdx.x; w < words; w += DISTINCT_THREADS)
        flags[w] = 0;
    __syncthreads();
    for (int j = threadIdx.x; j < repeat; j += DISTINCT_THREADS)
        atomicOr(&flags[idx[j] >> 5], 1u << (idx[j] & 31));
    __syncthreads();
    int filled = repeat; /* the same in every thread: the scans' totals */
    for (int w0 = 0; filled < m && w0 < words; w0 += DISTINCT_THREADS) {
        const int w = w0 + threadIdx.x;
        uint32_t open = 0;
        if (w < words) {
            open = ~flags[w];
            if (w == words - 1 && (n & 31))
                open &= (1u << (n & 31)) - 1;
        }
        int before, total;
        block_scan(temp).ExclusiveSum(__popc(open), before, total);
        for (int pos = filled + before; open && pos < m; open &= open - 1)
            idx[pos++] = w * 32 + __ffs(open) - 1;
        filled += total;
        __syncthreads(); /* temp again */
    }
    for (int j = filled + threadIdx.x; j < m; j += DISTINCT_THREADS)
        idx[j] = -1; /* a ragged cloud of fewer than m points */
}
