"""Traced values as arrays of the Python array API standard.

Array-API code (SciPy with ``SCIPY_ARRAY_API=1``, scikit-learn with
``array_api_dispatch=True``) asks each input for its namespace, ``x.__array_namespace__()``,
and computes with what it gets. A traced value answers with ``diffkit.numpy`` itself: its
functions take NumPy's and the standard's names (``concat``, ``permute_dims``, ``vecdot``,
``linalg.vector_norm``, ``isdtype``, ``astype``, ``finfo`` ...), plain arrays mix with traced
ones, and the dtypes are NumPy's, so one namespace serves both worlds.

SciPy looks up special functions of a namespace it does not know as ``xp.special.<name>``
(``scipy/special/_support_alternative_backends.py``); ``diffkit.numpy.special`` is
``diffkit.scipy.special``, loaded on first use (it loads much of SciPy).

Array-API code also makes constants with its namespace (``xp.asarray(n)``, ``xp.zeros(...)``)
and mixes them with its inputs; SciPy refuses a NumPy array next to a traced one ("Multiple
namespaces"). So the namespace a traced value answers is a thin view of ``diffkit.numpy``:
every name is ``diffkit.numpy``'s own function, except that the array-creation functions
return their result as a value of the innermost running transformation (a constant to it:
zero derivative), as ``jnp.asarray`` gives a JAX array. ``diffkit.numpy`` called directly is
unchanged. Comparisons of traced values are traced bools (the engines keep every result of
a traced argument traced), so ``xp.where(x > 0, ...)`` stays in the namespace too.

The traced value also gets the standard's attributes: ``device`` (always ``"cpu"``),
``to_device``, and ``mT`` (the transpose of the last two axes).
"""

import importlib

import numpy as np

from ..core.trace import Tracer, lifting_trace

API_VERSION = "2024.12"
_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")
_DEVICE = "cpu"


def install(dnp):
    """Make traced values array-API arrays whose namespace is ``dnp``."""

    def __array_namespace__(self, /, *, api_version=None):
        if api_version is not None and api_version not in _VERSIONS:
            raise ValueError(f"diffkit.numpy implements the array API standard versions "
                             f"{', '.join(_VERSIONS)}; api_version={api_version!r} is not one")
        return view

    view = NamespaceView(dnp)
    Tracer.__array_namespace__ = __array_namespace__
    Tracer.device = property(lambda self: _DEVICE, doc="Always 'cpu': diffkit computes "
                                                        "with NumPy.")
    Tracer.to_device = _to_device
    Tracer.mT = property(lambda self: dnp.matrix_transpose(self),
                         doc="The transpose of the last two axes (the array API's mT).")
    dnp.__array_api_version__ = API_VERSION
    # the standard's inspection object (devices, default and supported dtypes): diffkit
    # computes with NumPy on the CPU, so NumPy's own answers are diffkit's
    dnp.__array_namespace_info__ = np.__array_namespace_info__
    dnp.__getattr__ = _namespace_getattr(getattr(dnp, "__getattr__", None))


# The array API's creation functions (and NumPy's few more that array-API code calls).
CREATION = ("asarray", "zeros", "ones", "full", "empty", "arange", "linspace", "eye",
            "zeros_like", "ones_like", "full_like", "empty_like", "from_dlpack", "tri",
            "identity", "array")


def lifted(value):
    """``value`` as a value of the innermost running transformation (unchanged when none
    runs, when it is traced already, or when that transformation stages code (jit): there a
    plain value is a constant of the staged program)."""
    if isinstance(value, Tracer):
        return value
    trace = lifting_trace()
    if trace is None:
        return value
    try:
        return trace.lift(value)
    except NotImplementedError:
        return value


def _creating(dnp, name):
    def create(*args, **kwargs):
        # looked up on each call: the protocol floor wraps some of them after this view is
        # made (copies that become values of the running transformation, in_place.py)
        return lifted(getattr(dnp, name)(*args, **kwargs))
    fun = getattr(dnp, name)
    create.__name__ = create.__qualname__ = name
    create.__doc__ = fun.__doc__
    return create


class NamespaceView:
    """``diffkit.numpy`` as array-API code sees it: the same functions, looked up on the
    module, with the creation functions' results lifted into the running transformation."""

    def __init__(self, dnp):
        self._module = dnp
        for name in CREATION:
            if hasattr(dnp, name):
                setattr(self, name, _creating(dnp, name))

    def __getattr__(self, name):
        return getattr(self._module, name)

    def __dir__(self):
        return sorted(set(dir(self._module)) | set(CREATION))

    def __repr__(self):
        return "<array-API view of module 'diffkit.numpy'>"


def _to_device(self, device, /, *, stream=None):
    if device != _DEVICE or stream is not None:
        raise ValueError(f"diffkit computes on the CPU only: to_device({device!r}) is not "
                         "possible (use 'cpu', or x.device)")
    return self


def _namespace_getattr(before):
    """The module ``__getattr__`` of ``diffkit.numpy``: ``diffkit.numpy.special``, the array
    API's anticipated ``special`` extension, as SciPy looks it up for a namespace it does
    not know; other names go to the module's own ``__getattr__`` (``before``: NumPy's
    submodules loaded on first access)."""
    def __getattr__(name):
        if name == "special":
            return importlib.import_module("diffkit.scipy.special")
        if before is not None:
            return before(name)
        raise AttributeError(f"module 'diffkit.numpy' has no attribute {name!r}")
    return __getattr__
