"""NumPy's (and SciPy's) signatures, docstrings and array-like inputs for the public functions
of diffkit's namespaces.

``wrap_namespace(namespace, reference)`` replaces every public function of a diffkit namespace
that has a counterpart in ``reference`` (``numpy``, ``numpy.linalg``, ``scipy.special`` ...)
by a wrapper that

- has the counterpart's signature (``inspect.signature``, ``help``) and a docstring saying
  what the function computes and its derivative convention;
- converts array-like arguments once, for every function: a (nested) list or tuple holding
  traced values becomes one traced array (``dnp.mean([x, x + 2])``), as ``np.array`` would
  read it; plain lists are passed on as they are;
- reads every other array-like as NumPy does, through ``np.asarray`` (a pandas ``Series``,
  ``DataFrame`` or ``Index``, a ``range``, a ``memoryview``, anything with ``__array__``:
  ``diffkit.ops.indexing.read_array_like``) when a traced value is among the arguments, so
  ``dnp.dot(DataFrame, x)`` is a traced array holding ``x``'s derivative. Without a traced
  value such a call is the reference function's own (``numpy.dot``, ``scipy.special.erf``
  ...): it returns what NumPy returns (an ndarray for ``np.dot(DataFrame, a)``, a
  ``Series`` for ``np.sin(Series)``, a float for ``np.sum(Series)``);
- accepts every keyword of the counterpart: those diffkit implements are passed on, those it
  does not (``casting``, ``order``, ``subok``, a non-None ``out`` ...) are accepted at their
  default values; another value raises ``UnsupportedKeywordError`` naming the keyword. A
  ufunc's ``dtype=`` casts the inputs, as NumPy computes in that dtype.

The diffkit function underneath keeps its own (positional, possibly differently named)
parameters: the wrapper maps NumPy's parameters onto them by name, or by position where the
names differ (NumPy's ``a`` for diffkit's ``x``). A call with only arrays and numbers in the
positions both share, and keywords that need no conversion, calls it directly (the fast
path); the operators of traced values never go through a wrapper. Which arguments take
the fast path is decided by their type (``_FAST_TYPES``: arrays, numbers, traced values and
every type met since that needs no conversion).
"""

import inspect

import numpy as np

from ..core.concrete import holds_tracer
from ..core.primitive import Primitive
from ..core.trace import Tracer, bind
from ..errors import TracerConversionError, UnsupportedKeywordError
from ..ops.creation import as_array_like
from ..ops.elementwise import astype
from ..ops.indexing import read_array_like, read_entries, reads_as_array, traced_items
from ._docs import describe

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_VAR_POSITIONAL, _VAR_KEYWORD = inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD
_NO_VALUE = getattr(np, "_NoValue", object())
_SEQUENCES = (list, tuple)

# Types of arguments that reach a diffkit function as they are (the fast path): arrays,
# numbers, traced values. A type met on the full path joins once it is known to need no
# conversion (``learn_types``); lists, tuples and array-likes NumPy reads through
# ``np.asarray`` (``reads_as_array``) never join.
_FAST_TYPES = {np.ndarray, bool, int, float, complex, str, type(None), np.float64,
               np.float32, np.int64, np.int32, np.bool_, np.complex128, np.intp}


def learn_types(values):
    """Let the types of ``values`` that need no conversion take the fast path from now on."""
    for value in values:
        cls = type(value)
        if cls not in _FAST_TYPES and cls not in _SEQUENCES and cls is not object \
                and not reads_as_array(cls):
            _FAST_TYPES.add(cls)


def reads_directly(values):
    """Whether every one of ``values`` reaches a diffkit function as it is (no list, tuple
    or foreign array-like among them): the test of the fast paths, by type only."""
    for value in values:
        if type(value) not in _FAST_TYPES:
            return False
    return True

# Parameters that are never array-likes, so a tuple holding traced values is passed on as it
# is (shapes, axes, orders, sizes, options); and parameters that take a sequence of arrays,
# whose entries are each converted.
STATIC = frozenset({
    "axis", "axes", "axis1", "axis2", "axisa", "axisb", "axisc", "source", "destination",
    "start", "keepdims", "dtype", "shape", "newshape", "new_shape", "order", "kind", "stable",
    "mode", "side", "k", "offset", "ord", "ddof", "correction", "N", "increasing",
    "indexing", "sparse", "copy", "endpoint", "num", "retstep", "reps", "repeats",
    "pad_width", "indices_or_sections", "kth", "n", "s", "norm", "subscripts", "optimize",
    "full_matrices", "compute_uv", "hermitian", "UPLO", "lower", "overwrite_a",
    "overwrite_b", "check_finite", "trans", "unit_diagonal", "sym_pos", "assume_a",
    "return_sign", "return_index", "equal_nan", "casting", "subok", "signature", "where",
    "device", "like", "method", "weights_as_mask", "interpolation", "bins", "range",
    "rowvar", "bias", "fweights", "aweights", "deg", "rcond", "full", "initial",
    "descending", "funclist", "func1d", "func", "pyfunc",
    "otypes", "excluded", "cache", "c_and_lower", "lu_and_piv", "cb_and_lower",
})
SEQUENCE_OF_ARRAYS = frozenset({"arrays", "tup", "condlist", "choicelist", "choices",
                                "xi", "arys", "operands"})
# (function name, parameter) pairs that differ from the rule above
# (the extra arguments of apply_along_axis go to the user's function as they are)
RAW = frozenset({("block", "arrays"), ("piecewise", "condlist"), ("apply_along_axis", "args")})

# Keywords diffkit adds to NumPy's signature (keyword-only, after NumPy's own), as JAX does:
# a traced array cannot be written in place, so these return the updated array instead.
EXTRA_KEYWORDS = {"fill_diagonal": ("inplace",), "put_along_axis": ("inplace",)}

# NumPy keywords whose default never changes a result, beyond each function's own default
_HARMLESS = {"out": None, "where": True, "casting": "same_kind", "order": "K",
             "subok": True, "dtype": None, "signature": None, "like": None, "device": None}


def reference_signature(reference):
    """``inspect.signature`` of a NumPy/SciPy function or ufunc, or None."""
    try:
        return inspect.signature(reference)
    except (TypeError, ValueError):
        pass
    if isinstance(reference, np.ufunc):   # NumPy 1.x ufuncs have no signature
        inputs = ["x"] if reference.nin == 1 else [f"x{i + 1}" for i in range(reference.nin)]
        P = inspect.Parameter
        params = [P(n, P.POSITIONAL_ONLY) for n in inputs]
        params += [P("out", P.POSITIONAL_OR_KEYWORD, default=None)]
        params += [P(n, P.KEYWORD_ONLY, default=d) for n, d in (
            ("where", True), ("casting", "same_kind"), ("order", "K"), ("dtype", None),
            ("subok", True), ("signature", None))]
        return inspect.Signature(params)
    return None


def direct_primitive(fn):
    """The primitive ``fn`` binds as it is (``fn`` itself, or an elementwise function that
    only binds its primitive), or None."""
    if isinstance(fn, Primitive):
        return fn
    prim = getattr(fn, "primitive", None)
    return prim if isinstance(prim, Primitive) else None


def named_inputs(signature, fn, reference):
    """``signature`` with a ufunc's placeholder input names (``x1, x2, /``) replaced by the
    names ``fn`` gives them (``a, x``), which also become keywords: SciPy's special
    functions are documented with those names."""
    if not isinstance(reference, np.ufunc) or direct_primitive(fn) is not None:
        return signature
    own = [q for q in inspect.signature(fn).parameters.values() if q.kind in _POSITIONAL]
    params = list(signature.parameters.values())
    if len(own) != reference.nin or [q.name for q in own] == [p.name for p in params[:len(own)]]:
        return signature
    inputs = [inspect.Parameter(q.name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for q in own]
    return signature.replace(parameters=inputs + params[reference.nin:])


def _own_parameters(fn, reference):
    """The parameters of the diffkit function ``fn``; a primitive takes the reference's
    array inputs positionally (nothing else)."""
    if direct_primitive(fn) is not None:
        count = reference.nin if isinstance(reference, np.ufunc) else 1
        P = inspect.Parameter
        return [P(f"_{i}", P.POSITIONAL_ONLY) for i in range(count)]
    return list(inspect.signature(fn).parameters.values())


class _Plan:
    """How a call with the reference's parameters becomes a call of ``fn``."""

    def __init__(self, name, fn, reference, signature, where):
        self.name, self.fn, self.reference = name, fn, reference
        self.prim = direct_primitive(fn)   # bound directly on the fast path
        self.signature, self.where = signature, where
        self.ufunc = isinstance(reference, np.ufunc)
        self.params = list(signature.parameters.values())
        self.own = _own_parameters(fn, reference)
        # fn(*args, **kwargs): takes NumPy's arguments as they are (a wrapper of NumPy's own)
        self.opaque = {q.kind for q in self.own} <= {_VAR_POSITIONAL, _VAR_KEYWORD} \
            and len(self.own) == 2
        self.target = self._map_names()
        self.fast_count = self._fast_count()
        own_keywords = {p.name for p in self.own if p.kind is not inspect.Parameter.POSITIONAL_ONLY
                        and p.kind not in (_VAR_POSITIONAL, _VAR_KEYWORD)}
        self.direct_keywords = frozenset(
            n for n, target in self.target.items()
            if n == target and n in own_keywords and self.kind(n) == "static")
        self.takes_any_keyword = any(p.kind is _VAR_KEYWORD for p in self.own)
        self.extra = frozenset(EXTRA_KEYWORDS.get(name, ()))

    def refused(self):
        """The reference's keywords ``fn`` does not take (accepted at their defaults)."""
        casts = self.ufunc and not (self.prim is not None and self.prim.nondiff)
        return [p.name for p in self.params if p.name not in self.target
                and p.kind not in (_VAR_POSITIONAL, _VAR_KEYWORD)
                and not (self.takes_any_keyword and p.kind not in _POSITIONAL)
                and not (casts and p.name == "dtype")]

    def kind(self, name):
        """``'static'``, ``'each'`` (a sequence of array-likes) or ``'array'``."""
        if (self.name, name) in RAW or name in STATIC:
            return "static"
        param = self.signature.parameters.get(name)
        if name in SEQUENCE_OF_ARRAYS or (param is not None and param.kind is _VAR_POSITIONAL):
            return "each"
        return "array"

    def _map_names(self):
        """reference parameter name -> ``fn``'s parameter name, for those ``fn`` takes."""
        own_names = {p.name: p for p in self.own}
        ref_names = {p.name for p in self.params}
        target = {}
        taken = set()
        for p in self.params:
            if p.name in own_names and own_names[p.name].kind is not _VAR_KEYWORD:
                target[p.name] = p.name
                taken.add(p.name)
        for i, p in enumerate(self.params):   # renamed positional parameters (``a`` -> ``x``)
            if p.name in target or i >= len(self.own):
                continue
            q = self.own[i]
            if (p.kind in _POSITIONAL and q.kind in _POSITIONAL and q.name not in ref_names
                    and q.name not in taken) or (p.kind is q.kind is _VAR_POSITIONAL):
                target[p.name] = q.name
                taken.add(q.name)
        return target

    def _fast_count(self):
        """How many leading positional arguments reach ``fn`` in the same positions."""
        if self.opaque or self._spreads_var_positional():
            return 1 << 30
        count = 0
        for p, q in zip(self.params, self.own):
            if p.kind is _VAR_POSITIONAL and q.kind is _VAR_POSITIONAL:
                return 1 << 30
            if p.kind not in _POSITIONAL or q.kind not in _POSITIONAL \
                    or self.target.get(p.name) != q.name:
                break
            count += 1
        return count

    def _spreads_var_positional(self):
        """Whether the reference takes only ``*args`` positionally (``einsum(*operands)``)
        and ``fn`` takes them as positional parameters then ``*args``
        (``einsum(subscripts, *operands)``)."""
        if not self.params or self.params[0].kind is not _VAR_POSITIONAL:
            return False
        for q in self.own:
            if q.kind is _VAR_POSITIONAL:
                return self.target.get(self.params[0].name) == q.name
            if q.kind not in _POSITIONAL:
                return False
        return False

    # --- the full path ---------------------------------------------------------------------

    def call(self, args, kwargs):
        learn_types(args)
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"{self.where}(): {error}") from None
        if self._is_numpys_own(bound.arguments):
            return self.reference(*args, **{k: v for k, v in kwargs.items()
                                            if k not in self.extra})
        if self.opaque:
            for name, value in bound.arguments.items():
                bound.arguments[name] = self._convert(name, value)
            return self.fn(*bound.args, **bound.kwargs)
        # np._NoValue means "not given": fn uses its own default
        arguments = {k: v for k, v in bound.arguments.items() if v is not _NO_VALUE}
        for name, param in self.signature.parameters.items():
            if param.kind is _VAR_KEYWORD and name in arguments:   # spread **kwargs
                arguments.update(arguments.pop(name))
        unsupported = {name: value for name, value in arguments.items()
                       if name not in self.target and not self._passes_through(name)
                       and not self._harmless(name, value)}
        if unsupported:
            dtype = unsupported.pop("dtype", None) if self.ufunc else None
            if unsupported or not self._cast_inputs(arguments, dtype):
                self._unsupported(args, kwargs, unsupported or {"dtype": dtype})
        given = {}
        for name, value in arguments.items():
            if name in self.target:
                given[self.target[name]] = self._convert(name, value)
            elif self._passes_through(name):
                given[name] = value
        return self._call_own(given)

    def _is_numpys_own(self, arguments):
        """Whether the call holds a foreign array-like (a pandas object, a ``range`` ...)
        and no traced value: then it is the reference's own call, which returns what NumPy
        returns for that object (a ``Series`` for ``np.sin(Series)``). Not with a keyword
        diffkit adds to the reference's signature away from its default, which is NumPy's
        behaviour (``inplace=False`` returns a new array; NumPy writes in place)."""
        for name in self.extra.intersection(arguments):
            if arguments[name] is not self.signature.parameters[name].default:
                return False
        foreign = []
        for name, value in arguments.items():
            kind = self.kind(name)
            if kind == "static":
                continue
            if reads_as_array(type(value)):
                foreign.append(value)
            elif kind == "each" and isinstance(value, _SEQUENCES):
                foreign.extend(v for v in value if reads_as_array(type(v)))
        # a sequence such as a deque holding traced values reads as the list of them
        return bool(foreign) and not holds_tracer(*arguments.values()) \
            and all(traced_items(v) is None for v in foreign)

    def _passes_through(self, name):
        """Whether ``fn`` takes the keyword ``name`` through its ``**kwargs``."""
        param = self.signature.parameters.get(name)
        return self.takes_any_keyword and (
            param is None or param.kind not in (*_POSITIONAL, _VAR_POSITIONAL))

    def _convert(self, name, value):
        kind = self.kind(name)
        if kind == "array":
            return _array_argument(value)
        if kind == "each":
            value = read_array_like(value)
            if isinstance(value, _SEQUENCES):
                return type(value)(_array_argument(v) for v in value)
        return value

    def _harmless(self, name, value):
        if value is _NO_VALUE:
            return True
        param = self.signature.parameters.get(name)
        default = inspect.Parameter.empty if param is None else param.default
        if value is default or (name in _HARMLESS and value is _HARMLESS[name]):
            return True
        simple = (bool, int, float, str, type(None))
        for expected in (default, _HARMLESS.get(name, _NO_VALUE)):
            if isinstance(value, simple) and type(value) is type(expected) and value == expected:
                return True
        return name == "out" and isinstance(value, tuple) and all(v is None for v in value)

    def _cast_inputs(self, arguments, dtype):
        """A ufunc's ``dtype=``: compute in that dtype (cast the inputs), as NumPy does;
        False for a ufunc without derivative (its ``dtype`` is its result's)."""
        if dtype is None:
            return True
        if self.prim is not None and self.prim.nondiff:
            return False
        for p in self.params:
            if p.kind is inspect.Parameter.POSITIONAL_ONLY and p.name in arguments:
                value = _array_argument(arguments[p.name])
                arguments[p.name] = astype(value, np.dtype(dtype))
        return True

    def _unsupported(self, args, kwargs, unsupported):
        """The error for a keyword ``fn`` does not implement, at a value that matters."""
        name, value = next(iter(unsupported.items()))
        traced = holds_tracer(list(args)) or holds_tracer(list(kwargs.values()))
        if name == "out" and traced:
            raise TracerConversionError(
                f"{self.where}(..., out=...) would write a traced result into an array in "
                f"place, which cannot hold its derivative. Use the returned value instead: "
                f"y = {self.where}(...) without out=.")
        if name == "out":
            raise UnsupportedKeywordError(
                f"{self.where}() does not support out=: diffkit's functions return new "
                f"arrays. Use the returned value instead: y = {self.where}(...) without out=.")
        param = self.signature.parameters.get(name)
        default = inspect.Parameter.empty if param is None else param.default
        shown = "" if default is inspect.Parameter.empty or default is _NO_VALUE \
            else f" (only its default {name}={default!r} is)"
        raise UnsupportedKeywordError(
            f"{self.where}() does not support the keyword {name}={value!r}{shown}. Drop the "
            "keyword (convert the result afterwards, e.g. with .astype), or call NumPy's own "
            "function on plain arrays (on dk.stop_gradient(x) if no derivative is wanted).")

    def _call_own(self, given):
        positional, keywords = [], {}
        own = self.own
        if self._spreads_var_positional():
            spread = [q for q in own if q.kind in _POSITIONAL]
            rest = list(given.pop(self.target[self.params[0].name], ()))
            given.update(zip([q.name for q in spread], rest))
            given[own[len(spread)].name] = tuple(rest[len(spread):])
        # everything up to the last given positional-only parameter (or a filled *args)
        # goes by position, with fn's defaults for the ones skipped
        last = -1
        for i, q in enumerate(own):
            if q.name in given and (q.kind is inspect.Parameter.POSITIONAL_ONLY
                                    or q.kind is _VAR_POSITIONAL):
                last = i
        for i, q in enumerate(own):
            if i <= last and q.kind in _POSITIONAL:
                if q.name in given:
                    positional.append(given.pop(q.name))
                elif q.default is not inspect.Parameter.empty:
                    positional.append(q.default)
                else:
                    raise TypeError(f"{self.where}(): missing a required argument")
            elif i <= last and q.kind is _VAR_POSITIONAL:
                positional.extend(given.pop(q.name, ()))
        keywords.update(given)
        return self.fn(*positional, **keywords)


def _array_argument(value):
    """An argument NumPy reads as an array, as diffkit's function takes it: a foreign
    array-like through ``np.asarray`` (``read_array_like``), also as an entry of a list
    holding traced values, and a list or tuple holding traced values stacked into one
    traced array (``as_array_like``)."""
    if isinstance(value, _SEQUENCES):
        return as_array_like(read_entries(value) if holds_tracer(value) else value)
    return as_array_like(read_array_like(value))


_MISSING = object()


def _make_unary(prim, slow):
    """The wrapper of a one-input primitive: binds it directly (no ``Primitive.__call__``
    indirection), so ``dnp.sin(x)`` costs what ``sin_p(x)`` did."""
    def wrapper(x=_MISSING, /, *args, **kwargs):
        if not args and not kwargs and type(x) in _FAST_TYPES:
            return bind(prim, x)
        return slow(args if x is _MISSING else (x, *args), kwargs)
    return wrapper


def _make_binary(prim, slow):
    """The wrapper of a two-input primitive (``add``, ``multiply`` ...), as ``_make_unary``."""
    def wrapper(x1=_MISSING, x2=_MISSING, /, *args, **kwargs):
        if not args and not kwargs and type(x1) in _FAST_TYPES and type(x2) in _FAST_TYPES:
            return bind(prim, x1, x2)
        given = tuple(v for v in (x1, x2) if v is not _MISSING)
        return slow((*given, *args), kwargs)
    return wrapper


def _make(plan):
    fn, count, direct, slow = plan.fn, plan.fast_count, plan.direct_keywords, plan.call
    if plan.prim is not None and count == 1:
        return _make_unary(plan.prim, slow)
    if plan.prim is not None and count == 2:
        return _make_binary(plan.prim, slow)

    def wrapper(*args, **kwargs):
        if len(args) <= count:
            for a in args:
                if type(a) not in _FAST_TYPES:
                    return slow(args, kwargs)
            if not kwargs:
                return fn(*args)
            if direct.issuperset(kwargs):
                return fn(*args, **kwargs)
        return slow(args, kwargs)

    return wrapper


def wrap(name, fn, reference, module, name_inputs=False, reference_module="numpy"):
    """A function computing ``fn`` with ``reference``'s signature (see the module docstring);
    ``fn`` itself when ``reference`` has no readable signature. ``name_inputs``: a ufunc's
    inputs take ``fn``'s parameter names (``named_inputs``)."""
    signature = reference_signature(reference)
    if signature is None:
        return fn
    if name_inputs:
        signature = named_inputs(signature, fn, reference)
    if name in EXTRA_KEYWORDS:
        signature = _with_extra_keywords(signature, fn, EXTRA_KEYWORDS[name])
    where = f"{module}.{name}"
    plan = _Plan(name, fn, reference, signature, where)
    wrapper = _make(plan)
    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__module__ = module
    wrapper.__doc__ = describe(name, fn, f"{reference_module}.{name}", plan.refused(),
                               isinstance(reference, np.ufunc))
    wrapper.__signature__ = signature
    # the function underneath: the primitive of a ufunc (operators bind it directly)
    wrapper.diffkit_function = plan.prim or fn
    return wrapper


def _with_extra_keywords(signature, fn, names):
    """``signature`` with ``fn``'s parameters ``names`` appended as keyword-only."""
    own = inspect.signature(fn).parameters
    extra = [own[n].replace(kind=inspect.Parameter.KEYWORD_ONLY) for n in names]
    return signature.replace(parameters=[*signature.parameters.values(), *extra])


def _is_wrappable(fn, reference):
    if reference is None or fn is reference or isinstance(fn, (type, Tracer)):
        return False
    if not callable(fn) or not callable(reference):
        return False   # (a class reference, np.vectorize, lends its constructor's signature)
    if hasattr(fn, "diffkit_function"):
        return False                      # already wrapped
    module = getattr(fn, "__module__", None) or ""
    return direct_primitive(fn) is not None or module.startswith("diffkit")


def wrap_namespace(namespace, reference, module, names, name_inputs=False):
    """Replace each of ``names`` in the dict ``namespace`` (a module's globals) that has a
    counterpart in ``reference`` by its wrapper; returns the names wrapped."""
    wrapped, made = [], {}
    for name in names:
        fn, ref = namespace.get(name), getattr(reference, name, None)
        if not _is_wrappable(fn, ref):
            continue
        key = (id(fn), id(ref))   # aliases NumPy defines as one object stay one object
        if key not in made:
            ref_name = getattr(ref, "__name__", name)
            made[key] = wrap(ref_name if ref_name.isidentifier() else name, fn, ref, module,
                             name_inputs, reference.__name__)
        namespace[name] = made[key]
        wrapped.append(name)
    return wrapped
