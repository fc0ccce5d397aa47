"""``diffkit.scipy.special``: SciPy's special functions, differentiable. (being written)"""

from ..ops.special import *  # noqa: F403
