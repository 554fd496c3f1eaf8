/* chamfer_cuda.cuh - what the CUDA chamfer implementations share: the
 * value of each pair from the answer's distances, on the device, and the
 * gradient of that value. Included by chamfer_cuda_*.cu only. */
#ifndef PCB_CHAMFER_CUDA_CUH
#define PCB_CHAMFER_CUDA_CUH

#include "../cuda_util.h"
#include "chamfer.h"

enum { VALUE_THREADS = 256 };

/* One block a pair: the mean of A's squared distances plus the mean of
 * B's, summed in double (dist2: batch * n of A's, then batch * nq of B's). */
static __global__ void __launch_bounds__(VALUE_THREADS)
    chamfer_value_kernel(const float *dist2, int64_t batch, int32_t n, int32_t nq, double *value)
{
    __shared__ double part[2][VALUE_THREADS];
    const int64_t b = blockIdx.x;
    const float *ab = dist2 + b * n, *ba = dist2 + batch * n + b * nq;
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
        value[b] = part[0][0] / n + part[1][0] / nq;
}

static inline int chamfer_value_launch(const pcb_task *t, const float *dist2, double *value,
                                       cudaStream_t st)
{
    chamfer_value_kernel<<<(unsigned)t->batch, VALUE_THREADS, 0, st>>>(
        dist2, t->batch, (int32_t)t->n, (int32_t)t->nq, value);
    PCB_CUDA_LAUNCHED("chamfer_value_kernel");
    return PCB_OK;
}

#endif
