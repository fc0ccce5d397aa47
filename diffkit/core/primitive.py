"""The primitive record: an operation together with every rule the engines need.

A primitive holds, in one place:

- ``impl(*arrays, **params)``: plain NumPy/SciPy; never sees a tracer.
- ``jvp(primals, tangents, **params) -> (out, tangent_out)``: forward mode. Tangents may be
  symbolic ``Zero``s, but never all of them (the engine skips that case).
- ``vjp``: reverse mode, a tuple with one rule per argument,
  ``rule_i(cotangent, out, *primals, **params)`` giving the cotangent of argument ``i``
  (``None`` for zero; a ``None`` rule, or no entry at the end of the tuple, for an argument
  with no derivative), so the engine computes only the cotangents of the arguments being
  differentiated. A primitive of any number of arguments (``concatenate``) has
  ``EachArgument(make)``: the rule of argument ``i`` is ``make(i)``. A primitive whose
  cotangents share one expensive computation (an adjoint solve serving the initial state
  and every parameter) has ``JointVjp(rule)`` instead: one rule
  ``rule(cotangent, out, *primals, wanted=..., **params)`` returning a tuple with one
  cotangent per argument, ``wanted[i]`` telling whether argument ``i``'s is needed
  (``None`` where it is not, or is zero). The reverse engine calls it once per
  application, so nothing needs to be remembered between rules.
- ``batch(axis_size, values, batch_axes, **params) -> (value, batch_axis)``: ``vmap``.
  Batched values carry their batch axis at 0; ``batch_axes`` entries are 0 or ``None``
  (not mapped), and the rule answers 0 or ``None`` too.
- ``jet(primals, series, **params) -> (out, series_out)``: Taylor mode (optional).
  ``series[i]`` is the tuple of the K Taylor coefficients of argument ``i`` after its value
  (``x(t) = primals[i] + series[i][0] t + ... + series[i][K-1] t^K``: coefficients, not
  derivatives), each an array or a symbolic ``Zero``; ``series_out`` the K coefficients of
  the output. Without one, ``diffkit.interpreters.taylor`` derives the coefficients from
  the ``jvp`` rule (its documented fallback), so a jet rule is a speed-up, never a need;
  a rule may also return ``NotImplemented`` at a point it does not handle (a zero
  divisor), where the fallback then answers as the JVP rule would.
- or ``nondiff=True`` (argmax, comparisons): the output never carries a derivative, only a
  batching rule is needed.
- ``sparsity(args, out, local, **params)``: the structure of the primitive's Jacobian, for
  sparsity detection (``diffkit.interpreters.sparsity``, which describes the answer). It
  reads the arguments' shapes, and their values only for integer index arrays or, with
  ``local``, to decide a branch. Optional: without it detection takes every output to
  depend on every input entry (a dense block), with a warning.

``traits`` (a ``Traits``) says what the engines and passes may assume about the operation
beyond its rules: whether it is elementwise, how it curves (Hessian sparsity), whether it
only moves entries, which Python operator it is, whether it may raise or has an effect.
Every reader (Hessian pattern detection, jit's passes and code generation, the staging
guards) asks the traits, never the primitive's name, so a primitive made by a builder
(``ops.families.elementwise``) gets every fast route with no edit elsewhere.

``vjp_ignores`` names the values the VJP rule reads only for their shape and dtype: argument
indices (``"args"`` for all of them), and ``"out"`` for the output. The reverse engine then
keeps a ``Placeholder`` in their place on its tape instead of the array, so intermediate
arrays are freed during the forward pass (``sum`` needs only its input's shape; ``exp``
needs its output, not its input). ``vjp_reads`` goes further for a tuple of per-argument
rules: for each rule, the set of values it reads, so a one-shot sweep can free each saved
value as soon as no remaining rule reads it.

For several outputs (``multiple_results=True``) ``impl`` returns a tuple, ``jvp`` returns
tuples, ``vjp`` receives a tuple of cotangents and ``batch`` a tuple of values and axes.

Rules are written with diffkit's own operations, so they can be differentiated and batched
again (Hessians, ``vmap`` of a backward pass).
"""

from types import MethodType

import numpy as np

from .trace import bind

PRIMITIVES = {}


class _RulePerIndex(tuple):
    """VJP rules given by index, however many arguments there are: iteration yields rule
    0, 1, 2 ... without end (iterate it alongside the arguments)."""

    def __iter__(self):
        i = 0
        while True:
            yield self[i]
            i += 1


class EachArgument(_RulePerIndex):
    """The VJP rules of a primitive taking any number of arguments: the rule of argument
    ``i`` is ``make(i)``, made when first asked for. Indexing and iteration give one rule
    per argument, however many there are (iterate it alongside the arguments)."""

    def __new__(cls, make):
        rules = super().__new__(cls)
        rules._make = make
        rules._made = {}
        return rules

    def __getitem__(self, i):
        rule = self._made.get(i)
        if rule is None:
            rule = self._made.setdefault(i, self._make(i))
        return rule

    def __repr__(self):
        return f"EachArgument({self._make!r})"


class JointVjp(_RulePerIndex):
    """One VJP rule giving the cotangents of every argument at once:
    ``rule(cotangent, out, *primals, wanted, **params)`` returns a tuple with one entry per
    argument (``None`` for an argument not ``wanted`` or with a zero cotangent);
    ``wanted`` is a tuple of booleans, one per argument. The reverse engine calls it once
    per application (``joint(...)``). For code that reads per-argument rules, indexing
    and iteration give them as ``EachArgument`` does: rule ``i`` runs the joint rule for
    argument ``i`` alone."""

    def __new__(cls, rule):
        rules = super().__new__(cls)
        rules.rule = rule
        return rules

    def __call__(self, cotangent, out, *primals, wanted, **params):
        return self.rule(cotangent, out, *primals, wanted=wanted, **params)

    def __getitem__(self, i):
        def rule_i(cotangent, out, *primals, **params):
            wanted = tuple(j == i for j in range(len(primals)))
            return self.rule(cotangent, out, *primals, wanted=wanted, **params)[i]
        return rule_i

    def __repr__(self):
        return f"JointVjp({self.rule!r})"


#: The curvatures a primitive may declare (``Traits.curvature``), for Hessian sparsity:
#: how the dependence rows of its arguments meet at an output entry in its second
#: derivative. ``"linear"``: never (linear in all its arguments together); ``"unary"``:
#: one argument, each entry with itself (``sin``); ``"bilinear"``: two arguments, one with
#: the other and neither with itself (``x * y``); ``"quotient"``: ``x / y`` (``x`` with
#: ``y``, ``y`` with itself, never ``x`` with ``x``); ``"elementwise"``: every argument's
#: entry with every other's and itself (any elementwise function).
CURVATURES = ("linear", "unary", "bilinear", "quotient", "elementwise")


class Traits:
    """What may be assumed about a primitive, beyond its rules (immutable).

    - ``elementwise``: each output entry is computed from the entries of the (broadcast)
      arguments at the same position, by the same computation whatever the arrays' length
      (so a blocked evaluation equals the whole one, bit for bit); ``impl(*arrays,
      **params)`` returns an array of the broadcast shape.
    - ``out_argument``: ``impl`` also accepts ``out=`` (writing its result there) and
      otherwise always returns a new array: a NumPy ufunc with one output. Filled in from
      ``impl`` when not given.
    - ``curvature``: one of ``CURVATURES``, a function ``curvature(params)`` returning one
      (or None), or None when unknown (Hessian sparsity then takes the general route).
    - ``shape_only``: the output's entries are the input's, rearranged (reshape,
      transpose, broadcast_to); with ``compose(outer_params, inner_params)``, the
      parameters of one application equal to two in a row (None: not composable), and
      ``is_identity(params, shape)``, whether the application to an array of ``shape``
      returns its input unchanged.
    - ``nan_propagating``: real elementwise arithmetic whose output entry is NaN wherever
      an argument's entry is (``+``, ``-``, ``*``, ``/``, negation).
    - ``operator``: the Python operator that computes ``impl`` on NumPy arrays and scalars
      (``"+"``, ``"-"``, ``"*"``, ``"/"``, ``"@"``; ``"neg"`` for unary minus), or None.
    - ``may_raise``: ``impl`` raises for some values of its arguments (``LinAlgError``
      at a singular or indefinite matrix): code may call it only for that test, so a
      staged program runs it even where nothing reads its result.
    - ``effectful``: calling ``impl`` is the point (a debugging callback): a staged program
      runs it at every replay, in order, and never merges, folds or drops it.
    - ``draws_randomness``: ``impl`` draws random numbers, so its result differs between
      calls with the same arguments: never merged, folded or replayed as a constant.

    What an application computes, for the passes that rewrite or inline it: each is None
    (no such claim) or a function of the application's parameters, whose answer holds for
    ``impl(*arrays, **params)``.

    - ``reshapes_to(params)``: the shape the single argument is reshaped to, its entries
      in the same (C) order: ``np.reshape(x, shape)``. Also ``shape_only``.
    - ``reads_index(params)``: a basic NumPy index (a tuple of integers, slices, ``None``
      and ``Ellipsis``; no index array), the result being ``x[index]`` of the single
      argument; None for parameters that make another read (index arrays).
    - ``writes_index(params)``: a basic index as above, the result being a new array of
      zeros of the result's shape and dtype with the single argument written at
      ``index`` (``out[index] = values``: a basic index never repeats an entry, so adding
      into zeros is writing); None for parameters that make another write.
    - ``joins_along(params)``: the axis along which the arguments are joined end to end,
      ``np.concatenate(arrays, axis)``.
    - ``packs_scalars(params)``: the dtype of the new vector made of the arguments, values
      of no dimension, in order: ``np.array(arrays, dtype)``.
    - ``matrix_products(params)``: ``"left"`` when the results are ``matrix @ v`` for each
      argument ``v`` after the first, ``matrix`` (``matrix.ndim == 2``), ``"right"`` when
      they are ``v @ matrix``.
    - ``user_function(params)``: the user's function with rules of its own
      (``custom_jvp``, ``custom_vjp``, ``checkpoint``: a ``CustomCall``, with its
      ``name``) that ``impl`` runs. Under a transformation the application is bound
      anew through ``bind_custom``, so that the transformation uses those rules (binding
      the primitive would not); and, its code being the user's, it is not ``pure``.

    Derived: ``pure`` (neither effectful nor drawing nor the user's code: equal arguments
    give an equal result and nothing else happens, so a pass may merge, fold or drop it)
    and ``must_run`` (a staged program runs it even where nothing reads its result: it
    may raise, has an effect or draws).
    """

    __slots__ = ("elementwise", "out_argument", "curvature", "shape_only", "compose",
                 "is_identity", "nan_propagating", "operator", "may_raise", "effectful",
                 "draws_randomness", "reshapes_to", "reads_index", "writes_index",
                 "joins_along", "packs_scalars", "matrix_products", "user_function",
                 "pure", "must_run")

    def __init__(self, *, elementwise=False, out_argument=None, curvature=None,
                 shape_only=False, compose=None, is_identity=None, nan_propagating=False,
                 operator=None, may_raise=False, effectful=False, draws_randomness=False,
                 reshapes_to=None, reads_index=None, writes_index=None, joins_along=None,
                 packs_scalars=None, matrix_products=None, user_function=None):
        if isinstance(curvature, str) and curvature not in CURVATURES:
            raise ValueError(f"curvature {curvature!r} is not one of {CURVATURES}")
        if reshapes_to is not None and not shape_only:
            raise ValueError("a primitive that reshapes (reshapes_to) only moves entries: "
                             "give shape_only=True too")
        values = dict(elementwise=elementwise, out_argument=out_argument,
                      curvature=curvature, shape_only=shape_only, compose=compose,
                      is_identity=is_identity, nan_propagating=nan_propagating,
                      operator=operator, may_raise=may_raise, effectful=effectful,
                      draws_randomness=draws_randomness, reshapes_to=reshapes_to,
                      reads_index=reads_index, writes_index=writes_index,
                      joins_along=joins_along, packs_scalars=packs_scalars,
                      matrix_products=matrix_products, user_function=user_function)
        for name, value in values.items():
            object.__setattr__(self, name, value)
        # derived, kept as attributes: staging reads them for every equation
        object.__setattr__(self, "pure", not (effectful or draws_randomness
                                              or user_function is not None))
        object.__setattr__(self, "must_run", may_raise or effectful or draws_randomness)

    def __setattr__(self, name, value):
        raise AttributeError("a primitive's traits are immutable: make new ones with "
                             "traits.replace(...)")

    def replace(self, **changes):
        """These traits with ``changes``."""
        values = {name: getattr(self, name) for name in self.__slots__
                  if name not in ("pure", "must_run")}
        values.update(changes)
        return Traits(**values)

    def curvature_of(self, params):
        """The curvature at these parameters (None: unknown)."""
        curvature = self.curvature
        return curvature(params) if callable(curvature) else curvature

    def read_index(self, params):
        """The basic index an application at these parameters reads (``reads_index``),
        or None."""
        return None if self.reads_index is None else self.reads_index(params)

    def written_index(self, params):
        """The basic index an application at these parameters writes into zeros
        (``writes_index``), or None."""
        return None if self.writes_index is None else self.writes_index(params)

    def __repr__(self):
        set_ = [f"{name}={getattr(self, name)!r}" for name in self.__slots__
                if getattr(self, name) not in (False, None)
                and name not in ("pure", "must_run")]
        return f"Traits({', '.join(set_)})"


#: The traits of a primitive that raises for some values of its arguments (a
#: decomposition of a singular or indefinite matrix) and is otherwise plain.
RAISES = Traits(may_raise=True)


def _ufunc_with_out(impl):
    """Whether ``impl`` is a NumPy ufunc with one output (not a generalised one such as
    ``matmul``): it accepts ``out=`` and otherwise returns a new array."""
    return isinstance(impl, np.ufunc) and impl.signature is None and impl.nout == 1


class Primitive:
    """One operation and its rules. Calling it binds it: ``sin_p(x)``."""

    __slots__ = ("name", "impl", "jvp", "vjp", "batch", "nondiff", "multiple_results",
                 "vjp_ignores", "vjp_reads", "sparsity", "traits", "jet")

    def __init__(self, name, impl, jvp=None, vjp=None, batch=None, *, nondiff=False,
                 multiple_results=False, vjp_ignores=(), vjp_reads=None, sparsity=None,
                 traits=None, jet=None, register=True):
        if register and name in PRIMITIVES:
            raise ValueError(f"a primitive named {name!r} is already registered")
        self.name = name
        self.impl = impl
        self.jvp = jvp
        self.vjp = vjp
        self.batch = batch
        self.nondiff = nondiff
        self.multiple_results = multiple_results
        self.vjp_ignores = frozenset(vjp_ignores)
        self.vjp_reads = vjp_reads
        self.sparsity = sparsity
        self.jet = jet
        traits = Traits() if traits is None else traits
        if traits.out_argument is None:
            traits = traits.replace(out_argument=_ufunc_with_out(impl))
        self.traits = traits
        if register:
            PRIMITIVES[name] = self

    __call__ = bind

    def __get__(self, instance, owner=None):
        # A primitive stored on a class (Tracer.__mul__ = multiply) binds like a method.
        return self if instance is None else MethodType(self, instance)

    def missing_rules(self):
        """Names of the rules this primitive lacks (empty when complete)."""
        needed = ("batch",) if self.nondiff else ("jvp", "vjp", "batch")
        return [rule for rule in needed if getattr(self, rule) is None]

    def __repr__(self):
        return f"<primitive {self.name}>"
