"""Fixed NaN masks for the nan-reductions' records and edge samples.

The records put NaN at the same entries in every example (``where`` with NaN at a fixed
mask), so that the nan-reductions see NaN in the same places whatever Hypothesis draws, and
the edge samples reproduce exactly those inputs. There is one mask per example shape: under
``vmap`` the function sees one example's shape.
"""

import numpy as np

import diffkit.numpy as dnp

_MASK_4 = np.array([False, True, False, False])
_MASK_23 = np.array([[True, False, False], [False, False, True]])
_MASK_234 = np.zeros((2, 3, 4), bool)   # with an all-NaN row along axis 2
_MASK_234[0, 1, 2] = _MASK_234[1, 0, 0] = _MASK_234[1, 2, 1] = _MASK_234[1, 2, 3] = True

NAN_MASKS = {(4,): _MASK_4, (2, 3): _MASK_23, (2, 3, 4): _MASK_234}
"""The NaN mask for an example of shape (4,), (2, 3) or (2, 3, 4)."""


def with_nan(x):
    """``x`` with NaN at the mask for its (example) shape; ``x`` may be traced."""
    return dnp.where(NAN_MASKS[x.shape], np.nan, x)
