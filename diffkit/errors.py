"""The exception types diffkit raises.

Every error subclasses :class:`DiffkitError` and also the built-in exception a NumPy user
would expect (``TypeError`` for wrong kinds of values, ``ValueError`` for wrong shapes), so
``except ValueError`` keeps working.
"""

__all__ = [
    "DiffkitError",
    "NonScalarOutputError",
    "ComplexOutputError",
    "InputTypeError",
    "ShapeMismatchError",
    "ArgnumsError",
    "BatchingError",
    "OptionError",
    "EscapedTracerError",
    "TracerConversionError",
    "NoRuleError",
    "UnsupportedKeywordError",
    "PerformanceWarning",
    "DensePatternWarning",
    "ChunkError",
    "MissingDependencyError",
]



class DiffkitError(Exception):
    """Base class of every diffkit error."""


class NonScalarOutputError(DiffkitError, TypeError):
    """``grad`` was asked to differentiate a function whose output is not a real scalar."""


class ComplexOutputError(DiffkitError, TypeError):
    """``grad`` (without ``holomorphic=True``) of a function with a complex output, or with
    ``holomorphic=True`` of one with a real output."""


class InputTypeError(DiffkitError, TypeError):
    """An argument cannot be differentiated (integer, boolean, or not an array or pytree)."""


class ShapeMismatchError(DiffkitError, ValueError):
    """A tangent or cotangent does not match the structure, shape or dtype it stands for."""


class ArgnumsError(DiffkitError, ValueError):
    """``argnums`` names an argument the function was not called with."""


class BatchingError(DiffkitError, ValueError):
    """``vmap`` axes do not match the arguments, or the batch sizes differ."""


class OptionError(DiffkitError, ValueError):
    """An option of a transformation (``chunk_size``, ``mode``...) has a value it does not
    accept."""


class EscapedTracerError(DiffkitError, RuntimeError):
    """A traced value was used outside the transformation that made it."""


class TracerConversionError(DiffkitError, TypeError):
    """A traced value was turned into a plain NumPy value, which would lose its derivative."""


class NoRuleError(DiffkitError, NotImplementedError):
    """A primitive lacks the rule a transformation needs."""


class UnsupportedKeywordError(NoRuleError, TypeError):
    """A NumPy or SciPy keyword that diffkit's function accepts only at its default value
    (``casting``, ``order``, ``subok``, ``out`` ...) was given another value."""


class PerformanceWarning(UserWarning):
    """Something works but takes a slow path (for example a batching loop)."""


class DensePatternWarning(UserWarning):
    """Sparsity detection met a primitive without a structural rule and took each of its
    outputs to depend on every entry of its inputs (a correct but dense pattern)."""


class ChunkError(DiffkitError, RuntimeError):
    """Chunked work came back incomplete: an executor lost a chunk, returned one twice, or
    returned one with the wrong number of rows. Nothing is assembled from it."""


class MissingDependencyError(DiffkitError, ImportError):
    """An optional dependency a feature needs is not installed (the message says which, and
    the ``pip install`` that brings it)."""
