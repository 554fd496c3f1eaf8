/* cuda_util.h - shared helpers for the CUDA implementations (.cu files).
 *
 * Every CUDA call and every launch is checked; a failure becomes PCB_EDEVICE
 * (PCB_ENOMEM for allocation failures) with the CUDA error string. Each
 * implementation owns a stream and a pair of events, so compute() only
 * queues work, sync() waits, and device_ms() reads the event time. */
#ifndef PCB_CUDA_UTIL_H
#define PCB_CUDA_UTIL_H

#include <cuda_runtime.h>

#include "pcbench_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

int pcb_cuda_fail(cudaError_t err, const char *what, const char *file, int line);

/* Return from the calling function on any CUDA error. */
#define PCB_CUDA_TRY(call)                                                    \
    do {                                                                      \
        cudaError_t pcb_err_ = (call);                                        \
        if (pcb_err_ != cudaSuccess)                                          \
            return pcb_cuda_fail(pcb_err_, #call, __FILE__, __LINE__);        \
    } while (0)

/* After a launch: catches bad configurations at once. */
#define PCB_CUDA_LAUNCHED(name) PCB_CUDA_TRY(cudaGetLastError())

/* PCB_OK when a CUDA device can be used, else PCB_EUNAVAIL "no CUDA device". */
int pcb_cuda_available(void);
/* The same, for kernels of thread block clusters (Hopper, sm_90, and later;
 * their files are built for sm_90 alone, Makefile's HOPPER_CU): the current
 * device must be of compute capability 9.0 or newer. */
int pcb_cuda_available_clusters(void);

typedef struct {
    cudaStream_t stream;
    cudaEvent_t start, stop;
    int timed; /* 1 once start/stop were recorded around a compute */
} pcb_cuda_ctx;

int pcb_cuda_ctx_init(pcb_cuda_ctx *c);
void pcb_cuda_ctx_free(pcb_cuda_ctx *c);
int pcb_cuda_begin(pcb_cuda_ctx *c);              /* record start */
int pcb_cuda_end(pcb_cuda_ctx *c);                /* record stop, check launch */
int pcb_cuda_sync(pcb_cuda_ctx *c);               /* wait for the stream */
int pcb_cuda_elapsed_ms(pcb_cuda_ctx *c, double *ms);

/* 1 when stream is capturing a CUDA graph (the capture's id in *id, when
 * given), else 0. While it captures nothing may allocate, wait for the
 * host, or wait for an event recorded outside the capture but as an
 * external dependency (pcb_cuda_wait). */
int pcb_cuda_capturing(cudaStream_t stream, unsigned long long *id);
/* stream waits for event (an external dependency while it captures). */
int pcb_cuda_wait(cudaStream_t stream, cudaEvent_t event);

/* ---- device-resident runs (pcb_impl.run_device) ----------------------
 * An implementation's prepared states are cached between calls, so a
 * training loop allocates nothing after its first step: up to
 * PCB_CUDA_CACHE_SLOTS states, keyed by the implementation, the device and
 * the task's sizes and options. A state last used on one stream and taken
 * on another first makes that stream wait for the earlier use (an event),
 * never the host. A state is held by one caller at a time, from take to
 * give; a caller that finds every matching state held makes another.
 * CUDA graphs: a call captured in a graph takes a state made earlier, for
 * good (the graph replays on its buffers); later captures of the same
 * capture reuse it, other calls never do. So a capture needs a call of the
 * same sizes before it (the warm-up PyTorch asks for anyway), and
 * pcb_device_cache_clear(1) frees graphs' states once the graphs are gone. */
#define PCB_CUDA_CACHE_SLOTS 16

typedef struct {
    const pcb_impl *impl;
    /* Make a state for a device task (no upload, no synchronisation);
     * release frees one (the cache waits for its last use first). */
    int (*make)(const pcb_task *t, void **state);
    void (*release)(void *state);
    /* Queue the run on stream with that state. */
    int (*run)(void *state, const pcb_task *t, pcb_result *out, cudaStream_t stream);
} pcb_cuda_maker;

/* A device-resident run through the cache: a state for t is taken (made
 * when none fits; the task's stream first waits for its last use
 * elsewhere), m->run queues the work, the state is given back. */
int pcb_cuda_run_cached(const pcb_cuda_maker *m, const pcb_task *t, pcb_result *out);

/* The same cache for host runs that keep their device buffers between runs
 * of the same sizes (prepare takes, release gives): a state held by one run
 * at a time and used on its own stream only, so no stream waits. *slot is
 * -1 when every slot is held: the state made is the caller's to free. */
int pcb_cuda_cache_take(const pcb_cuda_maker *m, const pcb_task *t, void **state, int *slot);
/* Give it back once its work is queued on stream (slot -1: nothing). */
int pcb_cuda_cache_give(int slot, cudaStream_t stream);

/* cudaFuncSetAttribute(kernel, MaxDynamicSharedMemorySize, bytes) on the
 * current device, never lowering what an earlier call set: the attribute
 * belongs to the kernel, not to a state, so a state sized for less must not
 * shrink it under a cached state sized for more (its launch would fail). */
int pcb_cuda_smem_at_least(const void *kernel, size_t bytes);

/* dst = src with every coordinate that is not finite or beyond +-limit
 * replaced by 0 (and *finite set to 0 then, when finite is not NULL),
 * queued on stream: device runs compute on clouds that cannot send a kernel
 * astray (their host checks cannot read the data). */
int pcb_cuda_finite_copy(float *dst, const float *src, int64_t count, float limit,
                         int32_t *finite, cudaStream_t stream);
/* The same copy of batch clouds of n slots, ragged: cloud i's first
 * lengths[i] points as they are, every slot after them a copy of its point
 * fill (0 when the cloud is empty), so a kernel for equal sizes finds only
 * points of the cloud there; used[i] = the length read. A length outside
 * 0..n, or one that does not hold point fill, is read as 0 (*finite = 0). */
int pcb_cuda_ragged_copy(float *dst, const float *src, int64_t batch, int64_t n,
                         const int64_t *lengths, int64_t fill, float limit, int32_t *finite,
                         int32_t *used, cudaStream_t stream);
/* Prepare's upload of a ragged host task's lengths, for an implementation
 * that reads them on the device: one allocation (*buffer, cudaFree it) with
 * both arrays, copied on stream, and task's lengths_a / lengths_b pointed
 * there (task: the state's own copy). Nothing without lengths. The copies
 * read the caller's arrays: sync before prepare returns. */
int pcb_cuda_upload_lengths(pcb_task *task, void **buffer, cudaStream_t stream);

#ifdef __cplusplus
}

/* The launch of groups x ctas blocks of `threads`, as clusters of ctas
 * blocks when ctas > 1 (cluster: the attribute that says so, which the
 * config points to; the caller may add attributes after it). */
static inline cudaLaunchConfig_t pcb_cuda_cluster_launch(unsigned groups, int ctas,
                                                         unsigned threads, size_t smem,
                                                         cudaStream_t stream,
                                                         cudaLaunchAttribute *cluster)
{
    cluster->id = cudaLaunchAttributeClusterDimension;
    cluster->val.clusterDim.x = (unsigned)ctas;
    cluster->val.clusterDim.y = cluster->val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(groups * (unsigned)ctas);
    cfg.blockDim = dim3(threads);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cfg.attrs = cluster;
    cfg.numAttrs = ctas > 1;
    return cfg;
}

/* How many of cfg's clusters the GPU holds at once for kernel; 0 where it
 * cannot run them at all (the error is cleared). */
template <typename K>
static inline int pcb_cuda_clusters_fit(K *kernel, const cudaLaunchConfig_t *cfg)
{
    int fit = 0;
    if (cudaOccupancyMaxActiveClusters(&fit, kernel, cfg) != cudaSuccess) {
        (void)cudaGetLastError();
        fit = 0;
    }
    return fit;
}
#endif
#endif
