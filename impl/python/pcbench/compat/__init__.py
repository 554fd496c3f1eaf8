"""Drop-in modules: the functions of the libraries users already call, with
their names, signatures, return types and shapes, computed by pcbench.

    from pcbench.compat.pytorch3d import knn_points, ball_query, ...

Each module's docstring lists where it differs from the original, and why:
pcbench stays exact where the original is not, and pads with entries no
point can be mistaken for. They need PyTorch (tensors in, tensors out)."""
