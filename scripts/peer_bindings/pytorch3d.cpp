// pytorch3d.cpp - the PyTorch3D operations pcbench times (farthest point
// sampling, k nearest neighbours, ball query), bound without the rest of its
// library: the headers declare PyTorch3D's own dispatchers (CUDA or CPU),
// compiled from its knn, ball_query and sample_farthest_points sources.
#include <torch/extension.h>

#include "ball_query/ball_query.h"
#include "knn/knn.h"
#include "sample_farthest_points/sample_farthest_points.h"

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
    // points (B, N, 3), lengths (B,), K (B,), start_idxs (B,) -> (B, max K) int64
    m.def("sample_farthest_points", &FarthestPointSampling, "PyTorch3D farthest point sampling",
          py::arg("points"), py::arg("lengths"), py::arg("K"), py::arg("start_idxs"),
          py::arg("max_K_known") = -1);
    // p1 (B, P1, D), p2 (B, P2, D), lengths, norm 2, K -> (idx (B, P1, K), dists)
    m.def("knn_points_idx", &KNearestNeighborIdx, "PyTorch3D k nearest neighbours");
    // p1 (B, P1, 3) centres, p2 (B, P2, 3), lengths1, lengths2, K, radius, skip_points_outside_cube
    // -> (idx (B, P1, K) int64, -1 padding; dists)
    m.def("ball_query", &BallQuery, "PyTorch3D ball query");
}
