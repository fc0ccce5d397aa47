"""Statistics and cumulative reductions with NumPy's signatures, differentiable: the public
names of their families, re-exported.

Where each family lives (each module states its conventions at nondifferentiable points,
identical in forward and reverse mode):

- ``cumulative.py``: ``cumsum``, ``cumprod``, ``nancumsum``, ``nancumprod``,
  ``cumulative_sum``, ``cumulative_prod`` (the primitives are in ``reductions.py``);
- ``moments.py``: ``var``, ``std``, ``nanvar``, ``nanstd``, ``average``, ``ptp``;
- ``nan_reductions.py``: ``nansum``, ``nanprod``, ``nanmean``, ``nanmax``, ``nanmin``,
  ``nanargmax``, ``nanargmin``;
- ``quantiles.py``: ``median``, ``quantile``, ``percentile`` and their nan-variants (the
  ``order_statistics`` primitive);
- ``differences.py``: ``diff``, ``ediff1d``, ``gradient``, ``trapezoid``;
- ``covariance.py``: ``cov``, ``corrcoef``;
- ``statistics_helpers.py``: the shared helpers (arguments, counts, NaN masks).

Except for the order statistics, these are compositions of existing primitives (``sum``,
``max``, ``where``, slicing, ``concatenate``, ``matmul``) and need no rules of their own.
"""

from .covariance import *  # noqa: F403
from .covariance import __all__ as _covariance
from .cumulative import *  # noqa: F403
from .cumulative import __all__ as _cumulative
from .differences import *  # noqa: F403
from .differences import __all__ as _differences
from .moments import *  # noqa: F403
from .moments import __all__ as _moments
from .nan_reductions import *  # noqa: F403
from .nan_reductions import __all__ as _nan_reductions
from .quantiles import *  # noqa: F403
from .quantiles import __all__ as _quantiles

__all__ = [*_cumulative, *_moments, *_nan_reductions, *_quantiles, *_differences,
           *_covariance]
