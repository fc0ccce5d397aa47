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
    "StaleLinearMapError",
]



class DiffkitError(Exception):
    """Base class of every diffkit error.

    Examples:
        >>> try:
        ...     dk.grad(lambda x: 2 * x)(np.ones(2))
        ... except dk.errors.DiffkitError as error:
        ...     print(type(error).__name__, isinstance(error, TypeError))
        NonScalarOutputError True
        >>> all(issubclass(getattr(dk.errors, name), (dk.errors.DiffkitError, UserWarning))
        ...     for name in dk.errors.__all__)
        True
    """


class NonScalarOutputError(DiffkitError, TypeError):
    """``grad`` was asked to differentiate a function whose output is not a real scalar.

    Examples:
        >>> dk.grad(lambda x: 2 * x)(np.ones(2))
        Traceback (most recent call last):
            ...
        diffkit.errors.NonScalarOutputError: grad needs a ... shape (2,)... vjp(fun, x)[1](v)...
    """


class ComplexOutputError(DiffkitError, TypeError):
    """``grad`` (without ``holomorphic=True``) of a function with a complex output, or with
    ``holomorphic=True`` of one with a real output.

    Examples:
        >>> dk.grad(lambda x: x * 1j)(1.0)
        Traceback (most recent call last):
            ...
        diffkit.errors.ComplexOutputError: grad needs a real-valued output, ... complex128. ...
        >>> dk.grad(dnp.abs, holomorphic=True)(1j)
        Traceback (most recent call last):
            ...
        diffkit.errors.ComplexOutputError: grad with holomorphic=True requires a complex output, ...
    """


class InputTypeError(DiffkitError, TypeError):
    """An argument cannot be differentiated (integer, boolean, or not an array or pytree).

    Examples:
        >>> dk.grad(lambda x: x ** 2)(np.int64(3))
        Traceback (most recent call last):
            ...
        diffkit.errors.InputTypeError: grad argument has dtype int64; derivatives are defined ...
        >>> dk.grad(lambda x: x ** 2)("three")
        Traceback (most recent call last):
            ...
        diffkit.errors.InputTypeError: grad argument is a str, not an array, a scalar or ...
    """


class ShapeMismatchError(DiffkitError, ValueError):
    """A tangent or cotangent does not match the structure, shape or dtype it stands for.

    Examples:
        >>> out, vjp_fn = dk.vjp(lambda x: 2 * x, np.ones(2))
        >>> vjp_fn(np.ones(3))
        Traceback (most recent call last):
            ...
        diffkit.errors.ShapeMismatchError: cotangent leaf 0 has shape (3,), expected (2,)
        >>> try:
        ...     vjp_fn((np.ones(2), np.ones(2)))
        ... except ValueError as error:    # a ValueError too
        ...     print(type(error).__name__)
        ShapeMismatchError
    """


class ArgnumsError(DiffkitError, ValueError):
    """``argnums`` names an argument the function was not called with.

    Examples:
        >>> dk.grad(lambda x: x ** 2, argnums=1)(2.0)
        Traceback (most recent call last):
            ...
        diffkit.errors.ArgnumsError: grad: argnums=1 names argument 1, but the function was ...
    """


class BatchingError(DiffkitError, ValueError):
    """``vmap`` axes do not match the arguments, or the batch sizes differ.

    Examples:
        >>> dk.vmap(lambda x, y: x + y)(np.ones(2), np.ones(3))
        Traceback (most recent call last):
            ...
        diffkit.errors.BatchingError: vmap got different batch sizes [2, 3]: ...
        >>> dk.vmap(lambda x, y: x + y, in_axes=(0, 0, 0))(np.ones(2), np.ones(2))
        Traceback (most recent call last):
            ...
        diffkit.errors.BatchingError: vmap in_axes=(0, 0, 0) has 3 entries but the function was ...
    """


class OptionError(DiffkitError, ValueError):
    """An option of a transformation (``chunk_size``, ``mode``...) has a value it does not
    accept.

    Examples:
        >>> dk.jacfwd(lambda x: x, chunk_size=0)
        Traceback (most recent call last):
            ...
        diffkit.errors.OptionError: jacfwd: chunk_size must be a positive int or None, got 0
        >>> dk.jacobian(lambda x: x, mode="sideways")
        Traceback (most recent call last):
            ...
        diffkit.errors.OptionError: jacobian: mode must be 'auto', 'fwd' or 'rev', got 'sideways'
    """


class EscapedTracerError(DiffkitError, RuntimeError):
    """A traced value was used outside the transformation that made it.

    Examples:
        >>> kept = []
        >>> def f(x):
        ...     kept.append(x)    # a traced value stored outside
        ...     return x * x
        >>> float(dk.grad(f)(1.0))
        2.0
        >>> kept[0] + 1
        Traceback (most recent call last):
            ...
        diffkit.errors.EscapedTracerError: A traced value of shape () from a reverse-mode ...
    """


class TracerConversionError(DiffkitError, TypeError):
    """A traced value was turned into a plain NumPy value, which would lose its derivative.

    Examples:
        >>> dk.grad(lambda x: float(x) ** 2)(3.0)
        Traceback (most recent call last):
            ...
        diffkit.errors.TracerConversionError: float(x) would drop the derivative of a traced ...
        >>> dk.grad(lambda x: np.asarray(x).sum())(np.ones(2))
        Traceback (most recent call last):
            ...
        diffkit.errors.TracerConversionError: np.asarray(x) would drop the derivative of a ...
    """


class NoRuleError(DiffkitError, NotImplementedError):
    """A primitive lacks the rule a transformation needs.

    Examples:
        >>> dk.custom_jvp(lambda x: 2 * x)(1.0)    # no rule defined yet
        Traceback (most recent call last):
            ...
        diffkit.errors.NoRuleError: custom_jvp function '<lambda>' has no JVP rule yet: ...
        >>> issubclass(dk.errors.NoRuleError, NotImplementedError)
        True
    """


class UnsupportedKeywordError(NoRuleError, TypeError):
    """A NumPy or SciPy keyword that diffkit's function accepts only at its default value
    (``casting``, ``order``, ``subok``, ``out`` ...) was given another value.

    Examples:
        >>> dnp.add(np.ones(2), np.ones(2), casting="unsafe")
        Traceback (most recent call last):
            ...
        diffkit.errors.UnsupportedKeywordError: ... does not support the keyword casting='unsafe'...
        >>> dnp.add(np.ones(2), np.ones(2), out=np.empty(2))
        Traceback (most recent call last):
            ...
        diffkit.errors.UnsupportedKeywordError: diffkit.numpy.add() does not support out=: ...
    """


class PerformanceWarning(UserWarning):
    """Something works but takes a slow path (for example a batching loop).

    Examples:
        ``jit`` keeps ``MAX_SPECIALISATIONS`` (8) graphs per argument shapes; a function
        whose guards keep failing then runs without jit, with this warning:

        >>> import warnings
        >>> @dk.jit
        ... def scaled(x):
        ...     return x * int(x[0])    # a guard on the value of x[0]
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     results = [float(scaled(np.array([float(i)]))[0]) for i in range(10)]
        >>> results[-1], scaled.cache_info().eager_calls
        (81.0, 2)
        >>> print(caught[0].category.__name__, caught[0].message)
        PerformanceWarning jit(scaled): 8 graphs ... have a guard that fails... without jit...
    """


class DensePatternWarning(UserWarning):
    """Sparsity detection met a primitive without a structural rule and took each of its
    outputs to depend on every entry of its inputs (a correct but dense pattern).

    Examples:
        >>> import warnings
        >>> from diffkit.scipy.signal import convolve
        >>> def blur(x):    # a 2-D convolution has no structural rule yet
        ...     return convolve(x.reshape(2, 2), np.ones((2, 2)), mode="same").ravel()
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     pattern = dk.jacobian_sparsity(blur)(np.arange(4.0))
        >>> bool(pattern.toarray().all()), caught[0].category.__name__
        (True, 'DensePatternWarning')
        >>> print(caught[0].message)
        primitive 'convolve_nd' has no sparsity rule: each of its output entries is taken ...
    """


class ChunkError(DiffkitError, RuntimeError):
    """Chunked work came back incomplete: an executor lost a chunk, returned one twice, or
    returned one with the wrong number of rows. Nothing is assembled from it.

    Examples:
        >>> def lossy(fn, items):    # a map-like executor that loses the last chunk
        ...     return list(map(fn, items))[:-1]
        >>> dk.jacfwd(lambda x: 2 * x, chunk_size=1, executor=lossy)(np.ones(3))
        Traceback (most recent call last):
            ...
        diffkit.errors.ChunkError: jacfwd: the executor returned no result for chunk(s) [2] of 3...
    """


class StaleLinearMapError(DiffkitError, RuntimeError):
    """A function from ``linearize`` met a tangent its recording does not fit (a rule's
    0 x inf check reads it differently), so the JVP had to be computed by running the
    function again, and the function no longer gives the values it gave at the call (an
    array it closes over was written since). Nothing is returned from the changed function.

    Examples:
        >>> w = np.array([1.0, 2.0])
        >>> def f(x):
        ...     return dnp.sqrt(x) * w          # an infinite derivative at x = 0
        >>> with np.errstate(all="ignore"):
        ...     _, jvp_fn = dk.linearize(f, np.array([0.0, 4.0]))
        ...     w[:] = 5.0                      # the recording kept its own copy of w
        ...     jvp_fn(np.array([0.0, 1.0]))   # a zero meets the infinite derivative
        Traceback (most recent call last):
            ...
        diffkit.errors.StaleLinearMapError: ...no longer computes...
    """


class MissingDependencyError(DiffkitError, ImportError):
    """An optional dependency a feature needs is not installed (the message says which, and
    the ``pip install`` that brings it).

    Examples:
        An executor in other processes needs cloudpickle; here it is made unimportable:

        >>> import sys
        >>> saved = sys.modules.pop("cloudpickle", None)
        >>> sys.modules["cloudpickle"] = None    # as if it were not installed
        >>> def workers(fn, items):    # a map-like executor
        ...     return list(map(fn, items))
        >>> try:
        ...     dk.jacfwd(lambda x: 2 * x, chunk_size=1, executor=workers)(np.ones(3))
        ... except ImportError as error:    # an ImportError too
        ...     print(type(error).__name__, str(error).split(": ", 1)[1][:60])
        ... finally:
        ...     del sys.modules["cloudpickle"]
        ...     if saved is not None:
        ...         sys.modules["cloudpickle"] = saved
        MissingDependencyError executor= sends the function to other processes with cloudpi
    """
