"""Sparse Jacobians and Hessians: detect the sparsity pattern (``detection.py``), colour
it (``coloring.py``) and compute the whole derivative in as many batched passes as there
are colours (``derivatives.py``)."""

from .coloring import column_coloring, row_coloring, star_coloring
from .derivatives import Coloring, sparse_hessian, sparse_jacobian
from .detection import hessian_sparsity, jacobian_sparsity

__all__ = ["jacobian_sparsity", "hessian_sparsity", "sparse_jacobian", "sparse_hessian",
           "column_coloring", "row_coloring", "star_coloring", "Coloring"]
