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
  ``EachArgument(make)``: the rule of argument ``i`` is ``make(i)``.
- ``batch(axis_size, values, batch_axes, **params) -> (value, batch_axis)``: ``vmap``.
  Batched values carry their batch axis at 0; ``batch_axes`` entries are 0 or ``None``
  (not mapped), and the rule answers 0 or ``None`` too.
- or ``nondiff=True`` (argmax, comparisons): the output never carries a derivative, only a
  batching rule is needed.
- ``sparsity(args, out, local, **params)``: the structure of the primitive's Jacobian, for
  sparsity detection (``diffkit.interpreters.sparsity``, which describes the answer). It
  reads the arguments' shapes, and their values only for integer index arrays or, with
  ``local``, to decide a branch. Optional: without it detection takes every output to
  depend on every input entry (a dense block), with a warning.
- ``may_raise=True``: ``impl`` raises for some values of its arguments (``LinAlgError`` at a
  singular or indefinite matrix). Code may call such a primitive only for that test
  (``try: cholesky(a) except LinAlgError: ...``), so a staged program runs it even where
  nothing reads its result.
- ``effectful=True``: calling ``impl`` is the point (a debugging callback): a staged program
  runs it at every replay, in order, and never merges, folds or drops it.

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

from .trace import bind

PRIMITIVES = {}


class EachArgument(tuple):
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

    def __iter__(self):
        i = 0
        while True:
            yield self[i]
            i += 1

    def __repr__(self):
        return f"EachArgument({self._make!r})"


class Primitive:
    """One operation and its rules. Calling it binds it: ``sin_p(x)``."""

    __slots__ = ("name", "impl", "jvp", "vjp", "batch", "nondiff", "multiple_results",
                 "vjp_ignores", "vjp_reads", "sparsity", "may_raise", "effectful")

    def __init__(self, name, impl, jvp=None, vjp=None, batch=None, *, nondiff=False,
                 multiple_results=False, vjp_ignores=(), vjp_reads=None, sparsity=None,
                 may_raise=False, effectful=False, register=True):
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
        self.may_raise = may_raise
        self.effectful = effectful
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
