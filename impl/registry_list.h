/* registry_list.h - every implementation, one line each, fastest first
 * within a problem (pcb_best takes the first available exact one).
 * IMPL: always built; CUDA_IMPL: built when nvcc is found; FLANN_IMPL: built
 * when libflann is found. Included by registry.c only. */

/* FPS */
CUDA_IMPL(fps, cuda_unrolled)
IMPL(fps, omp)
IMPL(fps, dp)
IMPL(fps, naive)

/* NN */
IMPL(nn, naive)

/* EMD */
