/* cuda_bench.h - what the benchmark harness needs from the CUDA runtime, as
 * plain C (cuda_bench.cu). Without nvcc the harness supplies versions
 * that say PCB_EUNAVAIL. */
#ifndef PCB_CUDA_BENCH_H
#define PCB_CUDA_BENCH_H

#include <stdint.h>

#include "pcbench.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    char name[256];
    int cc_major, cc_minor;  /* compute capability */
    int sms;                 /* streaming multiprocessors */
    int64_t memory_bytes;
    int l2_bytes;
    int driver, runtime;     /* CUDA versions, e.g. 13000 */
    char pci_bus_id[32];     /* "0000:65:00.0": how NVML finds the same device */
} pcb_gpu_info;

/* How many CUDA devices this process sees (CUDA_VISIBLE_DEVICES applied);
 * PCB_EUNAVAIL without CUDA or a driver. */
int pcb_cuda_device_count(int *count);
/* Describe device 0; PCB_EUNAVAIL without a usable device. */
int pcb_cuda_gpu_info(pcb_gpu_info *out);
/* Evict the L2 cache: write a buffer larger than it and wait. */
int pcb_cuda_flush_l2(void);
/* Free the flush buffer (harmless when none was made). */
void pcb_cuda_flush_release(void);

#ifdef __cplusplus
}
#endif
#endif
