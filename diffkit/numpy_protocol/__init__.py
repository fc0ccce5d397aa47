"""The NumPy-protocol layer: traced values behave as NumPy arrays.

It sits above the namespaces because it maps NumPy's names onto them: ``np.sin(t)`` and
``ndarray * t`` reach ``diffkit.numpy.sin`` and ``multiply`` through ``__array_ufunc__``,
``np.linalg.solve(t, b)`` reaches ``diffkit.numpy.linalg.solve`` through
``__array_function__``, ``t.sum()`` and ``t @ a`` are the namespace's functions, and
conversions that would silently drop a derivative (``np.asarray(t)``, ``float(t)``,
``y[i] = t`` into an ndarray, ``out=`` buffers, SciPy functions that coerce with
``asarray``) raise ``TracerConversionError`` naming the user's line and the fix.

``Tracer`` (in ``diffkit.core``) knows none of this: importing this package installs the
methods on it, and ``import diffkit`` imports this package.

- ``methods.py``: operators, array methods, ``.at``, and ``install``;
- ``dispatch.py``: ``__array_ufunc__`` and ``__array_function__``, NumPy's keywords checked;
- ``ufunc_methods.py``: ``np.add.reduce``, ``np.multiply.accumulate``, ``np.subtract.outer``;
- ``conversions.py``: the conversion guards (``__array__``, ``__float__``, ``__bool__`` ...);
- ``escapes.py``: where a traced value escaped, and what to write instead;
- ``in_place.py``: ``y[idx] = v`` and ``y += v`` on a traced ``y`` (the object takes over
  ``y.at[idx].set(v)``), and the views that make such a write ambiguous;
- ``array_api.py``: ``__array_namespace__`` (the namespace is ``diffkit.numpy``), ``device``,
  ``to_device``, ``mT``, and ``diffkit.numpy.special`` for SciPy's array-API code.
"""

from .. import numpy as _dnp
from . import array_api, in_place
from .methods import install

install(_dnp)
array_api.install(_dnp)
in_place.install(_dnp)   # last: it follows the views the methods above make
