// pointnet2_ops.cpp - pointnet2_ops' furthest_point_sample (the original of
// the documents' classic kernel), three_nn and ball_query bound on their own,
// from its sampling, interpolate and ball_query sources.
#include <torch/extension.h>

#include <vector>

at::Tensor furthest_point_sampling(at::Tensor points, const int nsamples);
std::vector<at::Tensor> three_nn(at::Tensor unknowns, at::Tensor knows);
at::Tensor ball_query(at::Tensor new_xyz, at::Tensor xyz, const float radius, const int nsample);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
    // points (B, N, 3) float32 CUDA -> (B, nsamples) int32, starting at index 0
    m.def("furthest_point_sampling", &furthest_point_sampling, "pointnet2_ops FPS (CUDA)");
    // unknowns (B, n, 3), knows (B, m, 3) float32 CUDA -> {dist2 (B, n, 3), idx (B, n, 3) int32}
    m.def("three_nn", &three_nn, "pointnet2_ops three_nn (CUDA)");
    // new_xyz (B, m, 3) centres, xyz (B, n, 3) -> (B, m, nsample) int32, first hit repeated
    m.def("ball_query", &ball_query, "pointnet2_ops ball_query (CUDA)");
}
