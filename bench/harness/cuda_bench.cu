/* cuda_bench.cu - device description and L2 flush for the harness. */
#include <stdio.h>

#include "cuda_bench.h"
#include "cuda_util.h"

static void *flush_buf;
static size_t flush_bytes;
static unsigned char flush_value;

extern "C" int pcb_cuda_device_count(int *count)
{
    int rc = pcb_cuda_available();
    *count = 0;
    if (rc != PCB_OK)
        return rc;
    PCB_CUDA_TRY(cudaGetDeviceCount(count));
    return PCB_OK;
}

extern "C" int pcb_cuda_gpu_info(pcb_gpu_info *out)
{
    int rc = pcb_cuda_available();
    if (rc != PCB_OK)
        return rc;
    cudaDeviceProp p;
    PCB_CUDA_TRY(cudaGetDeviceProperties(&p, 0));
    snprintf(out->name, sizeof out->name, "%s", p.name);
    out->cc_major = p.major;
    out->cc_minor = p.minor;
    out->sms = p.multiProcessorCount;
    out->memory_bytes = (int64_t)p.totalGlobalMem;
    out->l2_bytes = p.l2CacheSize;
    PCB_CUDA_TRY(cudaDriverGetVersion(&out->driver));
    PCB_CUDA_TRY(cudaRuntimeGetVersion(&out->runtime));
    PCB_CUDA_TRY(cudaDeviceGetPCIBusId(out->pci_bus_id, (int)sizeof out->pci_bus_id, 0));
    return PCB_OK;
}

extern "C" int pcb_cuda_flush_l2(void)
{
    int rc = pcb_cuda_available();
    if (rc != PCB_OK)
        return rc;
    if (!flush_buf) {
        int dev = 0, l2 = 0;
        PCB_CUDA_TRY(cudaGetDevice(&dev));
        PCB_CUDA_TRY(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
        /* Twice the L2, at least 64 MiB: the whole cache is overwritten. */
        flush_bytes = (size_t)l2 * 2 > ((size_t)64 << 20) ? (size_t)l2 * 2 : (size_t)64 << 20;
        PCB_CUDA_TRY(cudaMalloc(&flush_buf, flush_bytes));
    }
    flush_value++;
    PCB_CUDA_TRY(cudaMemset(flush_buf, flush_value, flush_bytes));
    PCB_CUDA_TRY(cudaDeviceSynchronize());
    return PCB_OK;
}

extern "C" void pcb_cuda_flush_release(void)
{
    if (flush_buf)
        cudaFree(flush_buf);
    flush_buf = NULL;
    flush_bytes = 0;
}
