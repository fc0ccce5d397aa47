"""Sparse Jacobians and Hessians: colourings of sparsity patterns (``coloring.py``) and
compressed evaluation (``derivatives.py``)."""

from .coloring import column_coloring, row_coloring, star_coloring
from .derivatives import Coloring, sparse_hessian, sparse_jacobian

__all__ = ["column_coloring", "row_coloring", "star_coloring", "sparse_jacobian",
           "sparse_hessian", "Coloring"]
