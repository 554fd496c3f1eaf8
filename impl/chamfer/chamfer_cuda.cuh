/* chamfer_cuda.cuh - what the CUDA chamfer implementations share: the
 * value of each pair from the answer's distances, on the device, and the
 * gradient of that value. Included by chamfer_cuda_*.cu only. */
#ifndef PCB_CHAMFER_CUDA_CUH
#define PCB_CHAMFER_CUDA_CUH

#include "../cuda_util.h"
#include "chamfer.h"

enum { VALUE_THREADS = 256 };

/* A ragged pair's length (a device array, or NULL: full); one outside
 * 0..full reads as 0, as the search that flagged it read it. */
static __device__ __forceinline__ int32_t chamfer_length(const int64_t *len, int64_t b,
                                                         int32_t full)
{
    return !len ? full : len[b] < 0 || len[b] > full ? 0 : (int32_t)len[b];
}

/* One block a pair: the mean of A's squared distances plus the mean of
 * B's, summed in double (dist2: batch * n of A's, then batch * nq of B's);
 * a ragged pair over its own points (a mean over none: NaN). */
static __global__ void __launch_bounds__(VALUE_THREADS)
    chamfer_value_kernel(const float *dist2, int64_t batch, int32_t n_all, int32_t nq_all,
                         const int64_t *len_a, const int64_t *len_b, double *value)
{
    __shared__ double part[2][VALUE_THREADS];
    const int64_t b = blockIdx.x;
    const float *ab = dist2 + b * n_all, *ba = dist2 + batch * n_all + b * nq_all;
    const int32_t n = chamfer_length(len_a, b, n_all), nq = chamfer_length(len_b, b, nq_all);
    double sa = 0, sb = 0;
    for (int32_t i = (int32_t)threadIdx.x; i < n; i += VALUE_THREADS)
        sa += ab[i];
    for (int32_t j = (int32_t)threadIdx.x; j < nq; j += VALUE_THREADS)
        sb += ba[j];
    part[0][threadIdx.x] = sa, part[1][threadIdx.x] = sb;
    __syncthreads();
    for (int w = VALUE_THREADS / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w)
            for (int k = 0; k < 2; k++)
                part[k][threadIdx.x] += part[k][threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        value[b] = part[0][0] / (double)n + part[1][0] / (double)nq;
}

static inline int chamfer_value_launch(const pcb_task *t, const float *dist2, double *value,
                                       cudaStream_t st)
{
    /* t's lengths are device arrays: a device task's, or a host task's as
     * prepare uploaded them into the state's copy */
    chamfer_value_kernel<<<(unsigned)t->batch, VALUE_THREADS, 0, st>>>(
        dist2, t->batch, (int32_t)t->n, (int32_t)t->nq, t->lengths_a, t->lengths_b, value);
    PCB_CUDA_LAUNCHED("chamfer_value_kernel");
    return PCB_OK;
}

#endif
