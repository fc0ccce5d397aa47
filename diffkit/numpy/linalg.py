"""``diffkit.numpy.linalg``: NumPy's linear algebra, differentiable. (being written)"""

from ..ops.decompositions import *  # noqa: F403
