"""Primitives by family. Importing this package registers all of them."""

from . import control, elementwise, families, indexing, reductions, shape  # noqa: F401
