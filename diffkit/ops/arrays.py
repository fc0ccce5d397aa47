"""Building, cutting and rearranging arrays, by family.

This module gathers the families' public names (``diffkit.numpy`` re-exports them):

- :mod:`.array_helpers`: traced or static arguments, axes, and the static gather shared by
  the families;
- :mod:`.array_joining`: ``split`` and its variants, the ``*stack`` family, ``block``,
  ``atleast_*d``, ``meshgrid``, ``broadcast_arrays``, ``copy``;
- :mod:`.array_padding`: ``tile``, ``repeat``, ``pad``;
- :mod:`.array_reordering`: ``roll``, ``flip``, ``fliplr``, ``flipud``, ``rot90``,
  ``rollaxis``;
- :mod:`.array_diagonals`: ``diagonal``, ``diag``, ``diagflat``, ``trace``, ``tril``,
  ``triu``;
- :mod:`.array_taking`: ``take``, ``take_along_axis``, ``compress``, ``select``,
  ``append``, ``delete``, ``insert``;
- :mod:`.array_sorting`: ``sort``, ``argsort``, ``partition``, ``argpartition``,
  ``searchsorted``, ``interp`` (and their conventions at ties and knots);
- :mod:`.array_products`: ``convolve``, ``correlate``, ``cross``, ``kron``, ``polyval``.
"""

from . import (
    array_diagonals,
    array_joining,
    array_padding,
    array_products,
    array_reordering,
    array_sorting,
    array_taking,
)
from .array_diagonals import *  # noqa: F403
from .array_joining import *  # noqa: F403
from .array_padding import *  # noqa: F403
from .array_products import *  # noqa: F403
from .array_reordering import *  # noqa: F403
from .array_sorting import *  # noqa: F403
from .array_taking import *  # noqa: F403

__all__ = [
    *array_joining.__all__, *array_padding.__all__, *array_reordering.__all__,
    *array_diagonals.__all__, *array_taking.__all__, *array_sorting.__all__,
    *array_products.__all__,
]
