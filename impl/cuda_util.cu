/* cuda_util.cu - error mapping, device check, stream and event helpers. */
#include <stdio.h>

#include "cuda_util.h"

extern "C" int pcb_cuda_fail(cudaError_t err, const char *what, const char *file, int line)
{
    cudaGetLastError(); /* clear a non-sticky error so later calls can proceed */
    int code = err == cudaErrorMemoryAllocation ? PCB_ENOMEM : PCB_EDEVICE;
    return pcb_fail(code, "CUDA error in %s (%s:%d): %s", what, file, line,
                    cudaGetErrorString(err));
}

extern "C" int pcb_cuda_available(void)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count < 1) {
        cudaGetLastError();
        return pcb_fail(PCB_EUNAVAIL, "no CUDA device%s%s", err != cudaSuccess ? ": " : "",
                        err != cudaSuccess ? cudaGetErrorString(err) : "");
    }
    return PCB_OK;
}

extern "C" int pcb_cuda_ctx_init(pcb_cuda_ctx *c)
{
    c->stream = NULL;
    c->start = c->stop = NULL;
    c->timed = 0;
    PCB_CUDA_TRY(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    PCB_CUDA_TRY(cudaEventCreate(&c->start));
    PCB_CUDA_TRY(cudaEventCreate(&c->stop));
    return PCB_OK;
}

extern "C" void pcb_cuda_ctx_free(pcb_cuda_ctx *c)
{
    if (c->stream)
        cudaStreamSynchronize(c->stream);
    if (c->start)
        cudaEventDestroy(c->start);
    if (c->stop)
        cudaEventDestroy(c->stop);
    if (c->stream)
        cudaStreamDestroy(c->stream);
    c->stream = NULL;
    c->start = c->stop = NULL;
}

extern "C" int pcb_cuda_begin(pcb_cuda_ctx *c)
{
    c->timed = 0;
    PCB_CUDA_TRY(cudaEventRecord(c->start, c->stream));
    return PCB_OK;
}

extern "C" int pcb_cuda_end(pcb_cuda_ctx *c)
{
    PCB_CUDA_TRY(cudaGetLastError());
    PCB_CUDA_TRY(cudaEventRecord(c->stop, c->stream));
    c->timed = 1;
    return PCB_OK;
}

extern "C" int pcb_cuda_sync(pcb_cuda_ctx *c)
{
    PCB_CUDA_TRY(cudaStreamSynchronize(c->stream));
    return PCB_OK;
}

extern "C" int pcb_cuda_elapsed_ms(pcb_cuda_ctx *c, double *ms)
{
    float f = 0;
    if (!c->timed)
        return pcb_fail(PCB_EINVAL, "no timed compute to read");
    PCB_CUDA_TRY(cudaEventSynchronize(c->stop));
    PCB_CUDA_TRY(cudaEventElapsedTime(&f, c->start, c->stop));
    *ms = f;
    return PCB_OK;
}
