"""``autograd.scipy.misc``: ``logsumexp``, where old SciPy and autograd kept it."""

from .special import logsumexp

__all__ = ["logsumexp"]
