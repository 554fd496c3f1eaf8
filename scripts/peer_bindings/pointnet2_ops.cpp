// pointnet2_ops.cpp - pointnet2_ops' furthest_point_sample (the original of
// the documents' classic kernel) bound on its own, from its sampling.cpp and
// sampling_gpu.cu.
#include <torch/extension.h>

at::Tensor furthest_point_sampling(at::Tensor points, const int nsamples);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
    // points (B, N, 3) float32 CUDA -> (B, nsamples) int32, starting at index 0
    m.def("furthest_point_sampling", &furthest_point_sampling, "pointnet2_ops FPS (CUDA)");
}
