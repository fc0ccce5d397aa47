"""``autograd.numpy``: NumPy's namespace, differentiable, as ``diffkit.numpy``.

Every public name of ``diffkit.numpy`` is here (NumPy's names and signatures; functions
without a derivative pass through), with autograd's submodules (``linalg``, ``fft``,
``random``, ``numpy_boxes`` with ``ArrayBox``, ``numpy_vjps`` with ``unbroadcast_f``...) and
its few extra helpers (``make_diagonal``, ``metadata``...).
"""

from .... import numpy as _source
from .. import _namespaces

_namespaces.copy_public(_source, globals(), skip=("linalg", "fft", "random", "where"))

from . import (  # noqa: E402, F401 (after the copy: these submodules replace NumPy's)
    fft,
    linalg,
    numpy_boxes,
    numpy_jvps,
    numpy_vjps,
    numpy_vspaces,
    numpy_wrapper,
    random,
)
from .numpy_wrapper import (  # noqa: E402, F401
    array_from_args,
    concatenate_args,
    make_diagonal,
    metadata,
    parse_einsum_input,
    where,
)

__version__ = _namespaces.numpy_version()

