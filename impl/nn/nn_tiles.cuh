/* nn_tiles.cuh - the batched brute force for small clouds: one launch for
 * every pair of a batch and, for chamfer, both directions.
 *
 * A block takes THREADS x Q queries of one pair and one direction (blockIdx
 * x: the query tile, y: the pair, z: the direction), each thread Q of them
 * in registers; the reference cloud goes through shared memory in tiles of
 * TILE points, every thread comparing its Q queries with every point of the
 * tile (one shared load serves Q distances). Distances are spatial.h's
 * sp_d2, rounded one operation at a time like every exact NN here, so the
 * returned squared distance is naive's bit for bit; points are visited in
 * increasing index and replace the best only when strictly nearer, so ties
 * go to the lowest index.
 *
 * Nothing is allocated and nothing copied in: coordinates are read from
 * the caller's arrays, and one that is not finite or beyond +-limit is read
 * as 0 and clears *finite (when given), the contract of the copy-in of the
 * other device runs (pcb_cuda_finite_copy). Q is chosen so that the grid
 * fills the GPU: 4 queries a thread at large batches, 1 at small ones.
 * Included by nn_cuda_tiles.cu and chamfer_cuda_tiles.cu. */
#ifndef PCB_NN_TILES_CUH
#define PCB_NN_TILES_CUH

#include "impl/cuda_util.h"
#include "impl/spatial.h"

enum { TILES_THREADS = 128, TILES_TILE = 512 };

/* One direction: every query of qry against ref, pair by pair; a ragged
 * batch's pair takes its first ref_len[pair] points and qry_len[pair]
 * queries (device arrays; NULL: all), its other rows padding (-1, +inf). */
typedef struct {
    const float *ref, *qry; /* batch * n * 3, batch * nq * 3 */
    int32_t n, nq;
    int32_t *idx; /* batch * nq */
    float *dist2; /* batch * nq, may be NULL */
    const int64_t *ref_len, *qry_len;
    int64_t *idx64; /* batch * nq: the indices as int64 instead of idx (may be NULL) */
} tiles_dir;

static inline tiles_dir tiles_direction(const float *ref, const float *qry, int64_t n, int64_t nq,
                                        int32_t *idx, float *dist2, const int64_t *ref_len,
                                        const int64_t *qry_len)
{
    tiles_dir d = {ref, qry, (int32_t)n, (int32_t)nq, idx, dist2, ref_len, qry_len, NULL};
    return d;
}

/* An answer's index, where the caller wants it: int64 (pcb_result.index64)
 * or int32. */
__device__ __forceinline__ void tiles_put_index(int32_t *idx, int64_t *idx64, size_t at,
                                                int32_t v)
{
    if (idx64)
        idx64[at] = v;
    else
        idx[at] = v;
}

/* A pair's length: full without lengths; one outside 0..full is read as 0
 * and clears *finite (the contract of every device run's bad input). */
__device__ __forceinline__ int32_t tiles_length(const int64_t *len, size_t pair, int32_t full,
                                                int32_t *finite)
{
    if (!len)
        return full;
    const int64_t v = len[pair];
    if (v < 0 || v > full) {
        if (finite)
            *finite = 0;
        return 0;
    }
    return (int32_t)v;
}

typedef struct {
    tiles_dir dir[2];
} tiles_dirs;

__device__ __forceinline__ float tiles_coord(const float *p, float limit, int32_t *finite)
{
    float v = __ldg(p);
    if (!(fabsf(v) <= limit)) { /* NaN fails the test too */
        if (finite)
            *finite = 0;
        v = 0.0f;
    }
    return v;
}

template <int Q>
__global__ void __launch_bounds__(TILES_THREADS)
    tiles_nearest(tiles_dirs dirs, float limit, int32_t *finite)
{
    __shared__ float4 tile[TILES_TILE];
    const tiles_dir d = blockIdx.z ? dirs.dir[1] : dirs.dir[0];
    const int32_t first = (int32_t)blockIdx.x * TILES_THREADS * Q;
    if (first >= d.nq) /* the other direction's grid is larger: uniform exit */
        return;
    const size_t pair = blockIdx.y;
    const float *ref = d.ref + pair * d.n * 3, *qry = d.qry + pair * d.nq * 3;
    const int32_t n = tiles_length(d.ref_len, pair, d.n, finite);
    const int32_t nq = tiles_length(d.qry_len, pair, d.nq, finite);
    float qx[Q], qy[Q], qz[Q], best[Q];
    int32_t besti[Q];
#pragma unroll
    for (int k = 0; k < Q; k++) {
        const int32_t i = first + k * TILES_THREADS + (int32_t)threadIdx.x;
        const int32_t c = i < nq ? i : nq - 1; /* spare lanes repeat the last query */
        qx[k] = c >= 0 ? tiles_coord(qry + 3 * (size_t)c, limit, finite) : 0.0f;
        qy[k] = c >= 0 ? tiles_coord(qry + 3 * (size_t)c + 1, limit, finite) : 0.0f;
        qz[k] = c >= 0 ? tiles_coord(qry + 3 * (size_t)c + 2, limit, finite) : 0.0f;
        best[k] = INFINITY;
        besti[k] = 0;
    }
    for (int32_t base = 0; base < n; base += TILES_TILE) {
        __syncthreads(); /* the last tile's readers are done */
        for (int32_t j = (int32_t)threadIdx.x; j < TILES_TILE; j += TILES_THREADS) {
            const int32_t g = base + j;
            float4 p = make_float4(INFINITY, INFINITY, INFINITY, 0.0f); /* never nearer */
            if (g < n)
                p = make_float4(tiles_coord(ref + 3 * (size_t)g, limit, finite),
                                tiles_coord(ref + 3 * (size_t)g + 1, limit, finite),
                                tiles_coord(ref + 3 * (size_t)g + 2, limit, finite), 0.0f);
            tile[j] = p;
        }
        __syncthreads();
#pragma unroll 4
        for (int32_t j = 0; j < TILES_TILE; j++) {
            const float4 p = tile[j];
#pragma unroll
            for (int k = 0; k < Q; k++) {
                const float e = sp_d2(SP_SUB(qx[k], p.x), SP_SUB(qy[k], p.y), SP_SUB(qz[k], p.z));
                if (e < best[k]) {
                    best[k] = e;
                    besti[k] = base + j;
                }
            }
        }
    }
#pragma unroll
    for (int k = 0; k < Q; k++) {
        const int32_t i = first + k * TILES_THREADS + (int32_t)threadIdx.x;
        if (i < d.nq) { /* a ragged pair's padding rows, and rows with no reference: padding */
            const bool answer = i < nq && n > 0;
            tiles_put_index(d.idx, d.idx64, pair * d.nq + i, answer ? besti[k] : -1);
            if (d.dist2)
                d.dist2[pair * d.nq + i] = answer ? best[k] : INFINITY;
        }
    }
}

/* The multiprocessors of the current device, asked once a device. */
static inline int tiles_sms(int *sms)
{
    static int known[64];
    int device = 0;
    PCB_CUDA_TRY(cudaGetDevice(&device));
    if (device >= 0 && device < 64 && known[device])
        return *sms = known[device], PCB_OK;
    PCB_CUDA_TRY(cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, device));
    if (device >= 0 && device < 64)
        known[device] = *sms;
    return PCB_OK;
}

template <int Q>
static inline int tiles_launch_q(const tiles_dirs *dirs, int ndirs, int64_t batch, float limit,
                                 int32_t *finite, cudaStream_t st)
{
    int32_t most = dirs->dir[0].nq;
    if (ndirs > 1 && dirs->dir[1].nq > most)
        most = dirs->dir[1].nq;
    dim3 grid((unsigned)((most + TILES_THREADS * Q - 1) / (TILES_THREADS * Q)), (unsigned)batch,
              (unsigned)ndirs);
    tiles_nearest<Q><<<grid, TILES_THREADS, 0, st>>>(*dirs, limit, finite);
    PCB_CUDA_LAUNCHED("tiles_nearest");
    return PCB_OK;
}

/* Queue the search of ndirs (1 or 2) directions of a batch on st: Q = 4
 * when that still gives every multiprocessor two blocks, else fewer. */
static inline int tiles_launch(const tiles_dirs *dirs, int ndirs, int64_t batch, float limit,
                               int32_t *finite, cudaStream_t st)
{
    int sms = 0, rc = tiles_sms(&sms);
    if (rc != PCB_OK)
        return rc;
    int64_t queries = dirs->dir[0].nq + (ndirs > 1 ? dirs->dir[1].nq : 0);
    int64_t blocks4 = batch * queries / (TILES_THREADS * 4);
    int64_t blocks2 = batch * queries / (TILES_THREADS * 2);
    if (blocks4 >= 2 * (int64_t)sms)
        return tiles_launch_q<4>(dirs, ndirs, batch, limit, finite, st);
    if (blocks2 >= 2 * (int64_t)sms)
        return tiles_launch_q<2>(dirs, ndirs, batch, limit, finite, st);
    return tiles_launch_q<1>(dirs, ndirs, batch, limit, finite, st);
}

#endif
