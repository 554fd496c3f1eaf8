// pointnet2_ops.cpp - pointnet2_ops' furthest_point_sample (the original of
// the documents' classic kernel), three_nn, ball_query, and the grouping and
// interpolation kernels (with their gradients) a whole PointNet++ step runs,
// bound on their own from its sampling, interpolate, ball_query and
// group_points sources.
#include <torch/extension.h>

#include <vector>

at::Tensor furthest_point_sampling(at::Tensor points, const int nsamples);
at::Tensor gather_points(at::Tensor points, at::Tensor idx);
at::Tensor gather_points_grad(at::Tensor grad_out, at::Tensor idx, const int n);
std::vector<at::Tensor> three_nn(at::Tensor unknowns, at::Tensor knows);
at::Tensor three_interpolate(at::Tensor points, at::Tensor idx, at::Tensor weight);
at::Tensor three_interpolate_grad(at::Tensor grad_out, at::Tensor idx, at::Tensor weight,
                                  const int m);
at::Tensor ball_query(at::Tensor new_xyz, at::Tensor xyz, const float radius, const int nsample);
at::Tensor group_points(at::Tensor points, at::Tensor idx);
at::Tensor group_points_grad(at::Tensor grad_out, at::Tensor idx, const int n);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
    // points (B, N, 3) float32 CUDA -> (B, nsamples) int32, starting at index 0
    m.def("furthest_point_sampling", &furthest_point_sampling, "pointnet2_ops FPS (CUDA)");
    // points (B, C, N), idx (B, M) int32 -> (B, C, M); the gradient back to (B, C, n)
    m.def("gather_points", &gather_points, "pointnet2_ops gather_points (CUDA)");
    m.def("gather_points_grad", &gather_points_grad, "its gradient");
    // unknowns (B, n, 3), knows (B, m, 3) float32 CUDA -> {dist2 (B, n, 3), idx (B, n, 3) int32}
    m.def("three_nn", &three_nn, "pointnet2_ops three_nn (CUDA)");
    // points (B, C, m), idx and weight (B, n, 3) -> (B, C, n); the gradient back to (B, C, m)
    m.def("three_interpolate", &three_interpolate, "pointnet2_ops three_interpolate (CUDA)");
    m.def("three_interpolate_grad", &three_interpolate_grad, "its gradient");
    // new_xyz (B, m, 3) centres, xyz (B, n, 3) -> (B, m, nsample) int32, first hit repeated
    m.def("ball_query", &ball_query, "pointnet2_ops ball_query (CUDA)");
    // points (B, C, N), idx (B, M, k) int32 -> (B, C, M, k); the gradient back to (B, C, n)
    m.def("group_points", &group_points, "pointnet2_ops group_points (CUDA)");
    m.def("group_points_grad", &group_points_grad, "its gradient");
}
