"""One module an operation (a problem of the library): its public function,
its direct and ragged kernels, its PyTorch operator (schema, kernel, fake)
and its check_<problem>. A new problem adds its module here and a line in
the package's __init__."""
