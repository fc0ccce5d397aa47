"""``quad`` and ``quad_vec``: SciPy's adaptive integrals, differentiable in their limits and in
the parameters passed through ``args`` or closed over by the integrand.

The integral ``I(a, b, p) = int_a^b f(x, p) dx`` is computed by SciPy. Its derivatives:

- in the limits, the Leibniz rule: ``dI = f(b, p) db - f(a, p) da``; an infinite limit has
  a zero derivative (it cannot move);
- in ``p``, under the integral sign: the tangent ``int_a^b J_p f(x, p) p_dot dx`` and the
  cotangent ``int_a^b J_p f(x, p)^T g dx`` are integrals again, computed by ``quad`` (forward
  mode, the same kind of integral as the value) and by ``quad_vec`` (reverse mode, one
  vector integral of all the parameters' cotangents) on diffkit's JVP or VJP of the
  integrand, with the tolerances of the original call. These integrals are differentiable
  calls in turn, so second derivatives work.

The derivative is exact up to the integration tolerances (``epsabs``, ``epsrel``): tighten
them for more accurate derivatives. It requires ``f`` differentiable in ``p`` with its
derivative integrable (no moving singularity); a weight function (``weight=``) is not
differentiated.
"""

import numpy as np
import scipy.integrate as _si

from ... import numpy as dnp
from ...api_checks import check_callable
from ...core.trace import Tracer, current_level
from ...core.zeros import dtype_of, instantiate, is_zero, shape_of
from ...errors import NoRuleError
from ...interpreters.forward import jvp_flat
from ...interpreters.reverse import vjp_flat
from ..solver_call import Closure, SolverCall, TracedArgs, call, check_plain, plain

__all__ = ["quad", "quad_vec"]


def quad(func, a, b, args=(), full_output=0, epsabs=1.49e-8, epsrel=1.49e-8, limit=50,
         points=None, weight=None, wvar=None, wopts=None, maxp1=50, limlst=50,
         complex_func=False):
    """``scipy.integrate.quad`` of ``func(x, *args)`` from ``a`` to ``b``, differentiable in
    ``a``, ``b`` and the float arrays in ``args`` (traced values of any transformation:
    ``grad``, ``jvp``, ``vmap``, ``hessian``, ``jit``).

    Same arguments and return values as SciPy's: ``(y, abserr)``, with ``full_output`` also
    ``infodict`` (and a message when SciPy gives one). ``y`` carries the derivative;
    ``abserr`` and the rest are SciPy's, for the value. Traced values that ``func`` closes
    over are differentiated too (closure conversion: ``func`` is recorded once and replayed
    with them as parameters), unless ``func`` branches on ``x`` in Python, which is an error
    asking to pass them through ``args``. ``func`` is called with plain floats by
    SciPy and with traced values by the derivative rules, so write it with NumPy or
    ``diffkit.numpy`` functions. Derivatives are integrals of the integrand's derivatives
    computed to the same ``epsabs``/``epsrel``; see the module docstring and the guide.
    """
    check_callable(func, "quad")
    args = args if isinstance(args, tuple) else (args,)
    options = dict(full_output=full_output, epsabs=epsabs, epsrel=epsrel, limit=limit,
                   points=points, weight=weight, wvar=wvar, wopts=wopts, maxp1=maxp1,
                   limlst=limlst, complex_func=complex_func)
    return _integrate("quad", func, a, b, args, options)


def quad_vec(f, a, b, epsabs=1e-200, epsrel=1e-8, norm="2", cache_size=100e6, limit=10000,
             workers=1, points=None, quadrature=None, full_output=False, *, args=()):
    """``scipy.integrate.quad_vec`` of the array-valued ``f(x, *args)`` from ``a`` to ``b``,
    differentiable in ``a``, ``b`` and the float arrays in ``args``, as ``quad``.

    Returns ``(res, err)`` or, with ``full_output``, ``(res, err, info)`` as SciPy; ``res``
    carries the derivative. Tangents are ``quad_vec`` integrals of ``f``'s JVP, cotangents
    one ``quad_vec`` integral of its VJP, at the same tolerances.
    """
    check_callable(f, "quad_vec")
    args = args if isinstance(args, tuple) else (args,)
    options = dict(epsabs=epsabs, epsrel=epsrel, norm=norm, cache_size=cache_size,
                   limit=limit, workers=workers, points=points, quadrature=quadrature,
                   full_output=full_output)
    return _integrate("quad_vec", f, a, b, args, options)


def _integrate(kind, func, a, b, args, options):
    traced = TracedArgs(args)
    name = kind
    closure = None
    if current_level() > 0:   # a transformation runs: func may close over its values
        closure = Closure(lambda x, *q: func(x, *traced.rebuild(list(q))),
                          [_inside(a, b), *traced.params], name)
        closure = closure if closure.found else None
    params = traced.params + (closure.values if closure else [])
    limits = [x for x in (a, b) if isinstance(x, Tracer)]
    if options.get("weight") is not None and (limits or params):
        raise NoRuleError(f"{name}: an integral with a weight function (weight="
                          f"{options['weight']!r}) is not differentiated; integrate "
                          "f(x) * w(x) without weight= to differentiate it")
    if options.get("complex_func") and (limits or params):
        raise NoRuleError(f"{name}: complex_func=True is not differentiated; integrate the "
                          "real and imaginary parts separately")
    state = []

    k = len(traced.params)

    def integrand(x, params):
        if closure is not None:
            return closure([x, *params[:k]], params[k:])
        return func(x, *traced.rebuild(params))

    integral = _Integral(kind, integrand, options, state, a_traced=isinstance(a, Tracer),
                         b_traced=isinstance(b, Tracer))
    primals = limits + params
    if not primals:   # nothing to differentiate: SciPy's own result
        return integral.scipy(a, b, [])
    integral.a, integral.b = a, b
    (value,) = call(integral.solver(), primals)
    integral.keep = False   # the rules' and jit's later solves need no record
    result = state[-1]
    return (value, *result[1:])


class _Integral:
    """One integral as a ``SolverCall``: its primals are the traced limits (``a_traced``,
    ``b_traced``) and then the parameters; ``a`` and ``b`` hold the limits otherwise."""

    def __init__(self, kind, f, options, state, a_traced, b_traced):
        self.kind, self.f, self.options, self.state = kind, f, options, state
        self.a_traced, self.b_traced = a_traced, b_traced
        self.a = self.b = None
        self.keep = True   # record SciPy's results in state

    def limits(self, primals):
        primals = list(primals)
        a = primals.pop(0) if self.a_traced else self.a
        b = primals.pop(0) if self.b_traced else self.b
        return a, b, primals

    def scipy(self, a, b, params):
        """SciPy's integral at plain limits and parameters (its whole result)."""
        level = current_level()
        if self.kind == "quad":
            def plain_f(x):
                return float(np.asarray(check_plain(self.f(x, params), "quad", level)))
            return _si.quad(plain_f, float(a), float(b), **self.options)

        def plain_f(x):
            return np.asarray(check_plain(self.f(x, params), "quad_vec", level), np.float64)
        options = dict(self.options)
        options["full_output"] = True   # the info is kept for the user
        res, err, info = _si.quad_vec(plain_f, float(a), float(b), **options)
        return (res, err, info) if self.options.get("full_output") else (res, err)

    def solver(self):
        def fun(*primals):
            a, b, params = self.limits(primals)
            result = self.scipy(a, b, params)
            if self.keep:
                self.state.append(result)
            return (np.asarray(result[0], np.float64),)
        return SolverCall(fun, self.rule, self.back, self.kind, self.state)

    def _sub_integral(self, kind, f, a, b, params):
        """The differentiable integral of ``f(x, params)`` (a rule's own integral) with this
        integral's tolerances."""
        if kind == "quad_vec" and self.kind == "quad":
            keep = {k: self.options[k] for k in ("epsabs", "epsrel", "points")}
            keep["limit"] = max(self.options["limit"], 10000)
            options = keep
        else:
            options = dict(self.options, full_output=0 if kind == "quad" else False)
        sub = _Integral(kind, f, options, [], isinstance(a, Tracer), isinstance(b, Tracer))
        sub.a, sub.b, sub.keep = a, b, False
        primals = [x for x in (a, b) if isinstance(x, Tracer)] + list(params)
        if not any(isinstance(p, Tracer) for p in primals):
            a_, b_ = (plain(a), plain(b))
            return np.asarray(sub.scipy(a_, b_, list(params))[0], np.float64)
        return call(sub.solver(), primals)[0]

    def rule(self, primals, tangents):
        (value,) = call(self.solver(), primals)
        a, b, params = self.limits(primals)
        tangents = list(tangents)
        ta = tangents.pop(0) if self.a_traced else None
        tb = tangents.pop(0) if self.b_traced else None
        out = dnp.zeros(shape_of(value), np.float64)
        if tb is not None and _finite(b, "b", self.kind):
            out = out + self.f(b, params) * tb
        if ta is not None and _finite(a, "a", self.kind):
            out = out - self.f(a, params) * ta
        if params:
            out = out + self._tangent_integral(a, b, params, tangents, shape_of(value))
        return (value,), (out,)

    def _tangent_integral(self, a, b, params, tangents, shape):
        """``int_a^b J_p f(x, p) p_dot dx``: the integral (of this kind) of ``f``'s JVP."""
        k, f = len(params), self.f

        def jvp_integrand(x, both):
            _, (t,) = jvp_flat(lambda *q: [dnp.asarray(f(x, list(q)), np.float64)],
                               both[:k], both[k:])
            return dnp.zeros(shape) if is_zero(t) else t

        return self._sub_integral(self.kind, jvp_integrand, a, b, [*params, *tangents])

    def back(self, saved, primals, cotangents):
        (ct,) = cotangents
        a, b, params = self.limits(primals)
        cts = []
        if self.a_traced:
            cts.append(-dnp.sum(self.f(a, params) * ct) if _finite(a, "a", self.kind)
                       else dnp.zeros(shape_of(a)))
        if self.b_traced:
            cts.append(dnp.sum(self.f(b, params) * ct) if _finite(b, "b", self.kind)
                       else dnp.zeros(shape_of(b)))
        if len(params) == 1 and int(np.prod(shape_of(params[0]))) == 1:
            # one scalar parameter: its cotangent is <g, int df/dp dx>, and the integral of
            # a JVP is cheaper than a vector integral of VJPs
            p = params[0]
            slope = self._tangent_integral(a, b, params, [dnp.ones(shape_of(p))],
                                           shape_of(ct))
            cts.append(dnp.reshape(dnp.sum(ct * slope), shape_of(p)))
        elif params:
            k = len(params)
            f = self.f
            shapes = [shape_of(p) for p in params]

            def vjp_integrand(x, both):
                _, pull = vjp_flat(lambda *q: [dnp.asarray(f(x, list(q)), np.float64)],
                                   both[:k], retain=False)
                pulled = pull([both[k]])
                return dnp.concatenate([dnp.ravel(dnp.zeros(s) if is_zero(c) else c)
                                        for c, s in zip(pulled, shapes)])

            flat = self._sub_integral("quad_vec", vjp_integrand, a, b, [*params, ct])
            start = 0
            for p in params:
                size = int(np.prod(shape_of(p)))
                piece = dnp.reshape(flat[start:start + size], shape_of(p))
                cts.append(dnp.astype(piece, dtype_of(p)) if dtype_of(p).kind == "f"
                           else piece)
                start += size
        return [instantiate(c) for c in cts]


def _inside(a, b):
    """A point of the interval from ``a`` to ``b`` (plain or traced limits) at which to
    record the integrand."""
    lo, hi = (float(np.ravel(plain(x))[0]) for x in (a, b))
    if np.isfinite(lo) and np.isfinite(hi):
        return np.float64(0.5 * (lo + hi))
    if np.isfinite(lo) or np.isfinite(hi):
        return np.float64(lo + 1.0 if np.isfinite(lo) else hi - 1.0)
    return np.float64(0.0)


def _finite(limit, which, name):
    """Whether the limit is finite (its Leibniz term counts); an infinite limit has a zero
    derivative. A batch of limits mixing both is refused."""
    infinite = np.isinf(plain(limit))
    if infinite.all():
        return False
    if infinite.any():
        raise NoRuleError(f"{name}: a batch of limits {which} mixes finite and infinite "
                          "values; differentiate them in separate batches")
    return True
