/* cuda_util.cu - error mapping, device check, stream and event helpers. */
#include <dlfcn.h>
#include <stdio.h>

#include "cuda_util.h"

extern "C" int pcb_cuda_fail(cudaError_t err, const char *what, const char *file, int line)
{
    cudaGetLastError(); /* clear a non-sticky error so later calls can proceed */
    int code = err == cudaErrorMemoryAllocation ? PCB_ENOMEM : PCB_EDEVICE;
    return pcb_fail(code, "CUDA error in %s (%s:%d): %s", what, file, line,
                    cudaGetErrorString(err));
}

/* Whether an NVIDIA driver is installed: the runtime says "insufficient"
 * both of an old driver and of none at all. */
static int driver_installed(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (h)
        dlclose(h);
    return h != NULL;
}

extern "C" int pcb_cuda_available(void)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count < 1) {
        cudaGetLastError();
        if (err != cudaSuccess && !driver_installed())
            return pcb_fail(PCB_EUNAVAIL, "no CUDA device: no NVIDIA driver found (libcuda.so.1 "
                                          "is not installed)");
        return pcb_fail(PCB_EUNAVAIL, "no CUDA device%s%s", err != cudaSuccess ? ": " : "",
                        err != cudaSuccess ? cudaGetErrorString(err) : "");
    }
    return PCB_OK;
}

extern "C" int pcb_cuda_available_clusters(void)
{
    int rc = pcb_cuda_available(), device = 0, major = 0, minor = 0;
    if (rc != PCB_OK)
        return rc;
    PCB_CUDA_TRY(cudaGetDevice(&device));
    PCB_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    if (major >= 9)
        return PCB_OK;
    PCB_CUDA_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    return pcb_fail(PCB_EUNAVAIL, "needs a GPU of compute capability 9.0 or newer (thread block "
                    "clusters); device %d is %d.%d", device, major, minor);
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

/* ---- the cache of device-resident runs ------------------------------------ */
#include <pthread.h>
#include <string.h>

extern "C" int pcb_cuda_capturing(cudaStream_t stream, unsigned long long *id)
{
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    unsigned long long got = 0;
    if (cudaStreamGetCaptureInfo(stream, &status, &got) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    if (id)
        *id = got;
    return status != cudaStreamCaptureStatusNone;
}

extern "C" int pcb_cuda_wait(cudaStream_t stream, cudaEvent_t event)
{
    const unsigned flags = pcb_cuda_capturing(stream, NULL) ? cudaEventWaitExternal : 0;
    PCB_CUDA_TRY(cudaStreamWaitEvent(stream, event, flags));
    return PCB_OK;
}

typedef struct {
    const pcb_impl *impl;
    void (*release)(void *);
    int device;
    pcb_task shape; /* the task with its pointers and stream cleared */
    void *state;
    cudaEvent_t last_use; /* recorded after the last call's work */
    cudaStream_t last_stream;
    int held;
    unsigned long long used;  /* for least recently used */
    unsigned long long graph; /* the capture that took it (its graph keeps the buffers,
                                 so no other call takes it again), or 0 */
} cache_slot;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static cache_slot cache[PCB_CUDA_CACHE_SLOTS];
static unsigned long long cache_clock;

static pcb_task shape_of(const pcb_task *t)
{
    pcb_task s;
    memset(&s, 0, sizeof s); /* padding too: shapes compare with memcmp */
    s.problem = t->problem;
    s.batch = t->batch;
    s.n = t->n;
    s.nq = t->nq;
    s.m = t->m;
    s.opt = t->opt;
    s.memory = t->memory;
    return s;
}

/* Empty a slot (the lock held): wait for its last use, free everything. A
 * graph's slot: its last use was recorded in the capture, so the device is
 * waited for instead (its graphs must be gone by then). */
static void cache_drop(cache_slot *c)
{
    if (c->graph) {
        cudaDeviceSynchronize();
        (void)cudaGetLastError();
    } else if (c->last_use) {
        cudaEventSynchronize(c->last_use);
    }
    if (c->last_use)
        cudaEventDestroy(c->last_use);
    if (c->state)
        c->release(c->state);
    memset(c, 0, sizeof *c);
}

/* A state for t, its slot (for give) in *slot; the task's stream waits for
 * its last use elsewhere. While the stream captures a CUDA graph nothing is
 * made (an allocation there would end the capture): a free state of the
 * same shape is taken for the graph for good, or one the same capture took
 * before; none is PCB_EUNSUPPORTED, with the capture intact. */
extern "C" int pcb_cuda_cache_take(const pcb_cuda_maker *m, const pcb_task *t, void **state,
                                   int *slot)
{
    int device = 0;
    PCB_CUDA_TRY(cudaGetDevice(&device));
    const pcb_task shape = shape_of(t);
    cudaStream_t stream = (cudaStream_t)t->stream;
    unsigned long long graph = 0;
    if (t->memory != PCB_MEM_DEVICE || !pcb_cuda_capturing(stream, &graph))
        graph = 0;
    pthread_mutex_lock(&cache_lock);
    int found = -1, empty = -1, oldest = -1;
    for (int i = 0; i < PCB_CUDA_CACHE_SLOTS; i++) {
        cache_slot *c = &cache[i];
        if (!c->state) {
            empty = empty < 0 ? i : empty;
        } else if (!c->held && c->impl == m->impl && c->device == device &&
                   !memcmp(&c->shape, &shape, sizeof shape) &&
                   (c->graph == graph || (graph && !c->graph))) {
            if (c->graph == graph) { /* the same capture's state first */
                found = i;
                break;
            }
            found = found < 0 ? i : found;
        } else if (!c->held && !c->graph && (oldest < 0 || c->used < cache[oldest].used)) {
            oldest = i;
        }
    }
    int rc = PCB_OK;
    if (found < 0 && graph) {
        pthread_mutex_unlock(&cache_lock);
        return pcb_fail(PCB_EUNSUPPORTED,
                        "%s: no state for these sizes to capture in a CUDA graph (nothing may be "
                        "allocated while a stream captures): run the call once, uncaptured, "
                        "before the capture (each capture keeps the state it takes)",
                        m->impl->name);
    }
    if (found >= 0 && graph && !cache[found].graph) {
        /* the graph takes it for good; its first use waits for the last
         * uncaptured one, as an external dependency of the capture */
        cache[found].graph = graph;
        rc = pcb_cuda_wait(stream, cache[found].last_use);
        cache[found].last_stream = stream;
    }
    if (found < 0) {
        found = empty >= 0 ? empty : oldest;
        if (found < 0) {
            pthread_mutex_unlock(&cache_lock);
            if (t->memory == PCB_MEM_HOST) { /* not kept: the caller frees it */
                *slot = -1;
                return m->make(t, state);
            }
            return pcb_fail(PCB_EUNSUPPORTED, "%s: more than %d device runs at once",
                            m->impl->name, PCB_CUDA_CACHE_SLOTS);
        }
        cache_slot *c = &cache[found];
        if (c->state)
            cache_drop(c); /* the least recently used: waits for its work */
        void *made = NULL;
        cudaError_t e;
        if ((rc = m->make(t, &made)) == PCB_OK &&
            (e = cudaEventCreateWithFlags(&c->last_use, cudaEventDisableTiming)) != cudaSuccess) {
            rc = pcb_cuda_fail(e, "cudaEventCreate", __FILE__, __LINE__);
            m->release(made);
        } else if (rc == PCB_OK) {
            c->impl = m->impl;
            c->release = m->release;
            c->device = device;
            c->shape = shape;
            c->state = made;
            c->last_stream = stream;
        }
    } else if (t->memory == PCB_MEM_DEVICE && cache[found].last_stream != stream) {
        /* the earlier use was on another stream: this one waits for it (in the
         * same capture, if any: a plain wait on an event recorded there) */
        cudaError_t e = cudaStreamWaitEvent(stream, cache[found].last_use, 0);
        rc = e == cudaSuccess ? PCB_OK : pcb_cuda_fail(e, "cudaStreamWaitEvent", __FILE__, __LINE__);
    }
    if (rc == PCB_OK) {
        cache[found].held = 1;
        cache[found].used = ++cache_clock;
        *state = cache[found].state;
        *slot = found;
    }
    pthread_mutex_unlock(&cache_lock);
    return rc;
}

/* Give it back once the call's work is queued on stream. */
extern "C" int pcb_cuda_cache_give(int slot, cudaStream_t stream)
{
    if (slot < 0)
        return PCB_OK;
    pthread_mutex_lock(&cache_lock);
    cache_slot *c = &cache[slot];
    c->held = 0;
    c->last_stream = stream;
    cudaError_t e = cudaEventRecord(c->last_use, stream);
    pthread_mutex_unlock(&cache_lock);
    return e == cudaSuccess ? PCB_OK : pcb_cuda_fail(e, "cudaEventRecord", __FILE__, __LINE__);
}

extern "C" int pcb_cuda_run_cached(const pcb_cuda_maker *m, const pcb_task *t, pcb_result *out)
{
    void *state = NULL;
    int slot = 0, rc = pcb_cuda_cache_take(m, t, &state, &slot);
    if (rc != PCB_OK)
        return rc;
    cudaStream_t stream = (cudaStream_t)t->stream;
    rc = m->run(state, t, out, stream);
    const int given = pcb_cuda_cache_give(slot, stream);
    return rc != PCB_OK ? rc : given;
}

extern "C" void pcb_device_cache_clear(int graphs)
{
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < PCB_CUDA_CACHE_SLOTS; i++)
        if (cache[i].state && !cache[i].held && (graphs || !cache[i].graph))
            cache_drop(&cache[i]);
    pthread_mutex_unlock(&cache_lock);
}

__global__ void finite_copy_kernel(float *dst, const float *src, int64_t count, float limit,
                                   int32_t *finite)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count;
         i += (int64_t)gridDim.x * blockDim.x) {
        const float v = src[i];
        const bool keep = fabsf(v) <= limit; /* NaN fails the test too */
        dst[i] = keep ? v : 0.0f;
        if (!keep && finite)
            *finite = 0;
    }
}

extern "C" int pcb_cuda_smem_at_least(const void *kernel, size_t bytes)
{
    enum { KERNELS = 64 };
    static struct {
        const void *kernel;
        int device;
        size_t bytes;
    } set[KERNELS];
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    int device = 0;
    PCB_CUDA_TRY(cudaGetDevice(&device));
    pthread_mutex_lock(&lock);
    int at = -1;
    for (int i = 0; i < KERNELS && at < 0; i++)
        if (!set[i].kernel || (set[i].kernel == kernel && set[i].device == device))
            at = i;
    cudaError_t e = cudaSuccess;
    if (at < 0 || !set[at].kernel || bytes > set[at].bytes) {
        e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
        if (e == cudaSuccess && at >= 0) {
            set[at].kernel = kernel, set[at].device = device;
            set[at].bytes = bytes;
        }
    }
    pthread_mutex_unlock(&lock);
    return e == cudaSuccess ? PCB_OK
                            : pcb_cuda_fail(e, "cudaFuncSetAttribute", __FILE__, __LINE__);
}

__device__ static inline float finite_or_0(float v, float limit, int32_t *finite)
{
    const bool keep = fabsf(v) <= limit;
    if (!keep && finite)
        *finite = 0;
    return keep ? v : 0.0f;
}

__global__ void ragged_copy_kernel(float *dst, const float *src, int64_t batch, int64_t n,
                                   const int64_t *lengths, int64_t fill, float limit,
                                   int32_t *finite, int32_t *used)
{
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < batch * n;
         p += (int64_t)gridDim.x * blockDim.x) {
        const int64_t cloud = p / n, i = p % n;
        int64_t len = lengths[cloud];
        if (len < 0 || len > n || (len > 0 && fill >= len)) {
            len = 0;
            if (finite)
                *finite = 0;
        }
        if (i == 0 && used)
            used[cloud] = (int32_t)len;
        const int64_t from = i < len ? p : cloud * n + fill;
        for (int c = 0; c < 3; c++)
            dst[p * 3 + c] = len > 0 ? finite_or_0(src[from * 3 + c], limit, finite) : 0.0f;
    }
}

extern "C" int pcb_cuda_ragged_copy(float *dst, const float *src, int64_t batch, int64_t n,
                                    const int64_t *lengths, int64_t fill, float limit,
                                    int32_t *finite, int32_t *used, cudaStream_t stream)
{
    const int64_t blocks = (batch * n + 255) / 256;
    if (blocks <= 0)
        return PCB_OK;
    ragged_copy_kernel<<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>(
        dst, src, batch, n, lengths, fill, limit, finite, used);
    PCB_CUDA_LAUNCHED("ragged_copy_kernel");
    return PCB_OK;
}

extern "C" int pcb_cuda_upload_lengths(pcb_task *t, void **buffer, cudaStream_t stream)
{
    *buffer = NULL;
    if (!t->lengths_a && !t->lengths_b)
        return PCB_OK;
    const size_t bytes = (size_t)t->batch * sizeof(int64_t);
    int64_t *dev = NULL;
    PCB_CUDA_TRY(cudaMalloc((void **)&dev, 2 * bytes));
    *buffer = dev;
    const int64_t *host[2] = {t->lengths_a, t->lengths_b};
    const int64_t **field[2] = {&t->lengths_a, &t->lengths_b};
    for (int i = 0; i < 2; i++)
        if (i == 1 && host[1] == host[0]) /* a self task's: one array, kept one */
            t->lengths_b = t->lengths_a;
        else if (host[i]) {
            PCB_CUDA_TRY(cudaMemcpyAsync(dev + i * t->batch, host[i], bytes,
                                         cudaMemcpyHostToDevice, stream));
            *field[i] = dev + i * t->batch;
        }
    return PCB_OK;
}

extern "C" int pcb_cuda_finite_copy(float *dst, const float *src, int64_t count, float limit,
                                    int32_t *finite, cudaStream_t stream)
{
    if (count <= 0)
        return PCB_OK;
    const int64_t blocks = (count + 255) / 256;
    finite_copy_kernel<<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>(dst, src,
                                                                                     count, limit,
                                                                                     finite);
    PCB_CUDA_LAUNCHED("finite_copy_kernel");
    return PCB_OK;
}
