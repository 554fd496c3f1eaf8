/* optional.c - what the harness falls back on when an optional part was not
 * built: CUDA (no nvcc) or Google Benchmark (no libbenchmark-dev). */
#include "impl/pcbench_impl.h"
#include "cuda_bench.h"
#include "gbench.h"

#ifndef PCB_HAVE_CUDA
int pcb_cuda_device_count(int *count)
{
    *count = 0;
    return pcb_fail(PCB_EUNAVAIL, "built without CUDA (nvcc was not found)");
}

int pcb_cuda_gpu_info(pcb_gpu_info *out)
{
    (void)out;
    return pcb_fail(PCB_EUNAVAIL, "built without CUDA (nvcc was not found)");
}

int pcb_cuda_flush_l2(void)
{
    return pcb_fail(PCB_EUNAVAIL, "built without CUDA (nvcc was not found)");
}

void pcb_cuda_flush_release(void)
{
}
#endif

#ifndef PCB_HAVE_GBENCH
int pcb_gb_available(void)
{
    return pcb_fail(PCB_EUNAVAIL, "built without Google Benchmark (install libbenchmark-dev: "
                                  "make deps, then rebuild)");
}

int pcb_gb_run(const pcb_gb_bench *list, int count, pcb_gb_sink sink, void *ctx, char **json)
{
    (void)list, (void)count, (void)sink, (void)ctx;
    *json = NULL;
    return pcb_gb_available();
}

void pcb_gb_shutdown(void)
{
}

int pcb_gb_keep_running(pcb_gb_state *st)
{
    (void)st;
    return 0;
}

void pcb_gb_pause(pcb_gb_state *st)
{
    (void)st;
}

void pcb_gb_resume(pcb_gb_state *st)
{
    (void)st;
}

void pcb_gb_set_iteration_time(pcb_gb_state *st, double seconds)
{
    (void)st, (void)seconds;
}

void pcb_gb_counter(pcb_gb_state *st, const char *name, double value, int per_second)
{
    (void)st, (void)name, (void)value, (void)per_second;
}

void pcb_gb_error(pcb_gb_state *st, const char *message)
{
    (void)st, (void)message;
}
#endif
