"""Primitives by family. Importing this package registers all of them."""

from . import (  # noqa: F401
    arrays,
    complex,
    control,
    creation,
    debugging,
    decompositions,
    elementwise,
    families,
    fft,
    indexing,
    linalg,
    operators,
    reductions,
    shape,
    special,
    statistics,
    ufuncs,
)
