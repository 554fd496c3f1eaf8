/* ball_cuda.cuh - what the CUDA ball-query implementations share: the host
 * life cycle on nn_cuda.cuh's buffers (a row of k a centre, and the counts)
 * and the launch for a row's capacity.
 *
 * Each .cu file gives its launch: one queued run answering every centre of
 * the batch from device clouds into device arrays, with scratch from its
 * make (NULL where it needs none). A host run uploads and launches on its
 * own buffers; a device run launches on the caller's. Coordinates are read
 * through tiles_coord: one not finite or beyond +-PCB_NN_MAX_COORD reads
 * as 0 and clears out->finite. Kernels are templates on the row's capacity
 * K, launched for the smallest of 8, 16, 32, 64, 128 that holds k. */
#ifndef PCB_BALL_CUDA_CUH
#define PCB_BALL_CUDA_CUH

#include "impl/nn/nn_cuda.cuh"
#include "impl/nn/nn_tiles.cuh"
#include "ball.h"

enum { BALL_CUDA_MAX_K = 128 };

typedef int (*ball_launch_fn)(void *scratch, const pcb_task *t, pcb_result *out,
                              cudaStream_t st);
typedef int (*ball_make_fn)(const pcb_task *t, void **scratch);
typedef void (*ball_free_fn)(void *scratch);

typedef struct {
    nn_cuda_base base; /* first: nn_cuda_sync, device_ms read it */
    int32_t *count;    /* device, batch * nq */
    void *scratch;
    ball_launch_fn launch;
    ball_free_fn scratch_free;
} ball_cuda_state;

static inline void ball_cuda_release(void *state)
{
    ball_cuda_state *s = (ball_cuda_state *)state;
    if (!s)
        return;
    pcb_cuda_ctx_free(&s->base.ctx); /* waits for queued work first */
    if (s->scratch_free)
        s->scratch_free(s->scratch);
    cudaFree(s->count);
    nn_cuda_base_free(&s->base);
    free(s);
}

static inline int ball_cuda_prepare(const pcb_task *t, void **state, const char *name,
                                    ball_launch_fn launch, ball_make_fn make, ball_free_fn free_fn)
{
    ball_cuda_state *s = (ball_cuda_state *)calloc(1, sizeof *s);
    if (!s)
        return pcb_fail(PCB_ENOMEM, "ball %s: out of memory", name);
    s->launch = launch;
    int rc = nn_cuda_base_init(&s->base, t, name, 1);
    cudaError_t e = cudaSuccess;
    if (rc == PCB_OK &&
        (e = cudaMalloc((void **)&s->count, (size_t)(t->batch * t->nq) * sizeof(int32_t))) !=
            cudaSuccess)
        rc = pcb_cuda_fail(e, "cudaMalloc", __FILE__, __LINE__);
    if (rc == PCB_OK && make && (rc = make(t, &s->scratch)) == PCB_OK)
        s->scratch_free = free_fn;
    if (rc != PCB_OK) {
        ball_cuda_release(s);
        return rc;
    }
    *state = s;
    return PCB_OK;
}

static inline int ball_cuda_compute(void *state)
{
    ball_cuda_state *s = (ball_cuda_state *)state;
    pcb_task t = s->base.task;
    t.a = s->base.ref, t.b = s->base.qry, t.memory = PCB_MEM_DEVICE;
    t.stream = s->base.ctx.stream;
    pcb_result out = {};
    out.index = s->base.idx, out.dist2 = s->base.dist2, out.count = s->count;
    int rc = pcb_cuda_begin(&s->base.ctx);
    if (rc == PCB_OK)
        rc = s->launch(s->scratch, &t, &out, s->base.ctx.stream);
    return rc == PCB_OK ? pcb_cuda_end(&s->base.ctx) : rc;
}

static inline int ball_cuda_fetch(void *state, pcb_result *out)
{
    ball_cuda_state *s = (ball_cuda_state *)state;
    const pcb_task *t = &s->base.task;
    if (out->count)
        PCB_CUDA_TRY(cudaMemcpyAsync(out->count, s->count,
                                     (size_t)(t->batch * t->nq) * sizeof(int32_t),
                                     cudaMemcpyDeviceToHost, s->base.ctx.stream));
    return nn_cuda_base_fetch(&s->base, out); /* waits for both */
}

/* The launch of kernel template F<K> for the smallest K in 8..128 that
 * holds k. */
#define BALL_DISPATCH_K(k, CALL)                                                            \
    ((k) <= 8 ? CALL(8) : (k) <= 16 ? CALL(16) : (k) <= 32 ? CALL(32) : (k) <= 64 ? CALL(64) \
                                                                                  : CALL(128))

#endif
