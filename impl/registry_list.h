/* registry_list.h - every implementation, one line each, fastest first
 * within a problem (pcb_best takes the first available exact one, among
 * those whose limits.best_max_n prefers them for the task's size first).
 * IMPL: always built; CUDA_IMPL: built when nvcc is found; FLANN_IMPL: built
 * when libflann is found; NANOFLANN_IMPL: when nanoflann.hpp is found.
 * Included by registry.c only. */

/* FPS */
CUDA_IMPL(fps, cuda_pruned)
CUDA_IMPL(fps, cuda_unrolled)
IMPL(fps, pruned)
IMPL(fps, omp)
IMPL(fps, dp)
IMPL(fps, naive)

/* NN */
CUDA_IMPL(nn, cuda_tiles)
CUDA_IMPL(nn, cuda_grid)
CUDA_IMPL(nn, cuda_bvh)
IMPL(nn, kdtree)
NANOFLANN_IMPL(nn, nanoflann)
FLANN_IMPL(nn, flann)
FLANN_IMPL(nn, flann_randomized)
CUDA_IMPL(nn, cuda_attempt3)
CUDA_IMPL(nn, cuda_attempt2)
IMPL(nn, omp)
CUDA_IMPL(nn, cuda_attempt1)
IMPL(nn, naive)

/* EMD */
CUDA_IMPL(emd, cuda_auction)
CUDA_IMPL(emd, cuda_auction_match)
IMPL(emd, auction_omp)
IMPL(emd, auction)
IMPL(emd, exact)

/* CHAMFER */
CUDA_IMPL(chamfer, cuda_tiles)
CUDA_IMPL(chamfer, cuda_grid)
CUDA_IMPL(chamfer, cuda_bvh)
IMPL(chamfer, kdtree)
IMPL(chamfer, omp)
IMPL(chamfer, naive)

/* KNN (the grid first: faster than the tiles' brute force on every
 * configuration of the knn suite, from 32 x 1,024 at k = 3 on, H200;
 * cuda_brute after the k-d trees: slower than them on lidar sweeps) */
CUDA_IMPL(knn, cuda_grid)
CUDA_IMPL(knn, cuda_tiles)
IMPL(knn, kdtree)
NANOFLANN_IMPL(knn, nanoflann)
FLANN_IMPL(knn, flann)
CUDA_IMPL(knn, cuda_brute)
IMPL(knn, omp)
IMPL(knn, naive)

/* BALL (the grid first: it visits the cells that meet a ball; nanoflann
 * before the classic scan on large clouds; FLANN, one core and every
 * inside point for first, after omp: H100 host figures, impl/ball/README.md) */
CUDA_IMPL(ball, cuda_grid)
NANOFLANN_IMPL(ball, nanoflann)
CUDA_IMPL(ball, cuda_classic)
IMPL(ball, omp)
FLANN_IMPL(ball, flann)
IMPL(ball, naive)

/* GRID (the sort on the GPU, then the hash table with its one wait; on the
 * CPU a radix sort a cloud a thread, then the reference's qsort) */
CUDA_IMPL(grid, cuda_sort)
CUDA_IMPL(grid, cuda_hash)
IMPL(grid, omp)
IMPL(grid, naive)

/* SERIALIZE (the sort on the GPU; on the CPU a radix sort a cloud a thread,
 * then the reference's qsort) */
CUDA_IMPL(serialize, cuda_sort)
IMPL(serialize, omp)
IMPL(serialize, naive)
