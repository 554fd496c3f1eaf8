// torch_cluster.cpp - torch_cluster's fps, nearest, knn, radius and grid CUDA
// functions bound on their own (its extensions.h and the five .cu files),
// without the package's operator registration.
#include <torch/extension.h>

#include "cuda/fps_cuda.h"
#include "cuda/grid_cuda.h"
#include "cuda/knn_cuda.h"
#include "cuda/nearest_cuda.h"
#include "cuda/radius_cuda.h"

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
    // src (N, 3) of all clouds, ptr (B + 1) offsets, ratio (B,) -> global indices
    m.def("fps", &fps_cuda, "torch_cluster fps (CUDA)");
    // x (Nx, 3), y (Ny, 3), ptr_x, ptr_y -> for each x, the global index of its nearest y
    m.def("nearest", &nearest_cuda, "torch_cluster nearest (CUDA)");
    // x, y, ptr_x, ptr_y, k, cosine -> (2, k Ny) pairs (y index, x index)
    m.def("knn", &knn_cuda, "torch_cluster knn (CUDA)");
    // x (Nx, 3), y (Ny, 3), ptr_x, ptr_y, r, max_num_neighbors -> (2, E) (y index, x index)
    m.def("radius", &radius_cuda, "torch_cluster radius (CUDA)");
    // pos (N, D), size (D), start, end (optional) -> each point's voxel, x fastest
    m.def("grid", &grid_cuda, "torch_cluster grid_cluster (CUDA)");
}
