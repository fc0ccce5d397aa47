"""Sparse Jacobians and Hessians: colourings of sparsity patterns (``coloring.py``)."""

from .coloring import column_coloring, row_coloring, star_coloring

__all__ = ["column_coloring", "row_coloring", "star_coloring"]
