"""Every public function of diffkit.numpy and diffkit.scipy has NumPy's (SciPy's) signature,
a docstring, and NumPy's keywords: supported ones work, unsupported ones at their defaults are
accepted, other values raise an error naming the keyword.

The tables are driven by the namespaces themselves, so functions added later are checked too.
"""

import inspect

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
import scipy.signal
import scipy.special

import diffkit as dk
import diffkit.numpy as dnp
import diffkit.scipy.integrate as dint
import diffkit.scipy.linalg as dsl
import diffkit.scipy.signal as dsig
import diffkit.scipy.special as dsp
from diffkit.core.primitive import Primitive
from diffkit.core.trace import Tracer
from diffkit.errors import TracerConversionError, UnsupportedKeywordError

NAMESPACES = [(dnp, np), (dnp.linalg, np.linalg), (dnp.fft, np.fft),
              (dsp, scipy.special), (dsl, scipy.linalg), (dsig, scipy.signal),
              (dint, scipy.integrate)]

# The deliberate differences from NumPy's and SciPy's signatures.
DIFFKIT_ONLY = {  # public names with no NumPy counterpart
    ("diffkit.numpy", "getitem"): "x[index] as a function (the indexing primitive)",
    ("diffkit.numpy", "logsumexp"): "scipy.special.logsumexp, also here for convenience",
    ("diffkit.numpy", "stop_gradient"): "dk.stop_gradient, also here",
}
# diffkit's keyword-only additions (diffkit/numpy/_wrap.py EXTRA_KEYWORDS): ``inplace=False``
# returns the updated array, as JAX's; the default writes into a plain array as NumPy does.
EXTRA_KEYWORDS = {("diffkit.numpy", "fill_diagonal"): ("inplace",),
                  ("diffkit.numpy", "put_along_axis"): ("inplace",)}
# SciPy's special functions are ufuncs whose inputs have placeholder names (x1, x2, /);
# diffkit names them as SciPy's documentation does (gammainc(a, x)) and accepts them as
# keywords. Everything after the inputs (out, where, casting ...) is SciPy's.
NAMED_UFUNC_INPUTS = "diffkit.scipy.special"


def _public(module):
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    for name in sorted(names):
        obj = getattr(module, name)
        if callable(obj) and not isinstance(obj, type) and not inspect.ismodule(obj):
            yield name, obj


# NumPy's own objects, passed through (bincount, fromstring ...), are not diffkit's functions.
FUNCTIONS = [(module.__name__, name, obj, getattr(reference, name, None))
             for module, reference in NAMESPACES for name, obj in _public(module)
             if obj is not getattr(reference, name, None)]


def _id(case):
    return f"{case[0].removeprefix('diffkit.')}.{case[1]}"


def _signature(fn):
    return inspect.signature(fn)


@pytest.mark.parametrize("case", FUNCTIONS, ids=_id)
def test_signature_is_numpys(case):
    module, name, obj, reference = case
    assert not isinstance(obj, Primitive), f"{module}.{name} is a bare primitive"
    ours = _signature(obj)  # never fails
    if reference is None:
        assert (module, name) in DIFFKIT_ONLY, f"{module}.{name} has no NumPy counterpart"
        return
    theirs = _signature(reference)
    extra = EXTRA_KEYWORDS.get((module, name), ())
    if extra:
        added = list(ours.parameters.values())[-len(extra):]
        assert [p.name for p in added] == list(extra)
        assert all(p.kind is p.KEYWORD_ONLY for p in added)
        ours = ours.replace(parameters=list(ours.parameters.values())[:-len(extra)])
    if module == NAMED_UFUNC_INPUTS and isinstance(reference, np.ufunc) and ours != theirs:
        inputs = list(ours.parameters.values())[:reference.nin]
        assert all(p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty for p in inputs)
        assert list(ours.parameters.values())[reference.nin:] == \
            list(theirs.parameters.values())[reference.nin:]
        return
    assert ours == theirs, f"{module}.{name}{ours} differs from {reference!r}{theirs}"


@pytest.mark.parametrize("case", FUNCTIONS, ids=_id)
def test_docstring_says_what_it_computes(case):
    module, name, obj, reference = case
    doc = inspect.getdoc(obj) or ""
    assert len(doc) > 20, f"{module}.{name} has no docstring"
    assert "One operation and its rules" not in doc   # the primitive class's text
    if getattr(obj, "__module__", "").startswith("diffkit") and reference is not None:
        assert "Signature:" in doc or not hasattr(obj, "diffkit_function")


UFUNCS = sorted({name for name, obj in _public(dnp)
                 if isinstance(getattr(np, name, None), np.ufunc) and obj is not getattr(np, name)})
# ufuncs on integers or booleans only
INTEGER_UFUNCS = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "invert",
                  "bitwise_invert", "bitwise_count", "left_shift", "right_shift",
                  "bitwise_left_shift", "bitwise_right_shift", "gcd", "lcm"}


GUFUNC_INPUTS = {"matmul": [(2, 2), (2, 2)], "matvec": [(2, 2), (2,)],
                 "vecmat": [(2,), (2, 2)], "vecdot": [(2,), (2,)]}


def _float_inputs(name, nin):
    if name in GUFUNC_INPUTS:
        return [np.linspace(0.2, 0.9, int(np.prod(s))).reshape(s) for s in GUFUNC_INPUTS[name]]
    if name == "ldexp":
        return [np.array([0.3, 1.7]), np.array([2, -1])]
    values = [np.array([0.3, 0.6]), np.array([0.45, 0.2]), np.array([0.7, 0.1])]
    if name in ("arccosh", "acosh"):   # real from 1 up: below, NaN (and NumPy's warning)
        return [v + 1.0 for v in values[:nin]]
    return values[:nin]


@pytest.mark.parametrize("name", UFUNCS)
def test_every_ufunc_accepts_numpys_default_keywords(name):
    fn, reference = getattr(dnp, name), getattr(np, name)
    defaults = {k: p.default for k, p in _signature(reference).parameters.items()
                if p.kind is p.KEYWORD_ONLY or k == "out"}
    assert set(defaults) >= {"out", "casting", "order", "dtype", "subok"}
    if name in INTEGER_UFUNCS:
        args = [np.array([6, 9]), np.array([4, 3])][:reference.nin]
    else:
        args = _float_inputs(name, reference.nin)
    expected = reference(*args)
    got = fn(*args, **defaults)
    for g, e in zip(got if isinstance(got, tuple) else (got,),
                    expected if isinstance(expected, tuple) else (expected,)):
        np.testing.assert_array_equal(g, e)
    if name in INTEGER_UFUNCS or isinstance(getattr(fn, "diffkit_function", None), Primitive) \
            and fn.diffkit_function.nondiff:
        return
    # traced, in both engines: the keywords at their defaults change nothing
    first, rest = args[0], args[1:]

    def f(x):
        out = fn(x, *rest, **defaults)
        return dnp.sum(out[0] if isinstance(out, tuple) else out)

    def g(x):
        out = fn(x, *rest)
        return dnp.sum(out[0] if isinstance(out, tuple) else out)

    np.testing.assert_array_equal(dk.grad(f)(first), dk.grad(g)(first))
    np.testing.assert_array_equal(dk.jacfwd(f)(first), dk.jacfwd(g)(first))


@pytest.mark.parametrize("keyword, value", [
    ("casting", "unsafe"), ("order", "F"), ("subok", False), ("where", np.array([True])),
    ("signature", "d->d")])
def test_unsupported_ufunc_keyword_is_named(keyword, value):
    with pytest.raises(UnsupportedKeywordError, match=rf"sin\(\) does not support the keyword "
                                                      rf"{keyword}="):
        dk.grad(lambda x: dnp.sin(x, **{keyword: value}))(1.0)
    # the same through NumPy's protocol, from plain NumPy code
    with pytest.raises(UnsupportedKeywordError, match=f"keyword {keyword}="):
        dk.grad(lambda x: np.sin(x, **{keyword: value}))(1.0)
    # and on plain arrays (nothing traced): the same error, never a silent difference
    with pytest.raises(UnsupportedKeywordError, match=f"keyword {keyword}="):
        dnp.sin(np.array([1.0]), **{keyword: value})


def test_the_reported_casting_case_names_the_keyword():
    with pytest.raises(TypeError, match="casting='unsafe'"):
        dk.grad(lambda x: dnp.sin(x, casting="unsafe"))(1.0)


def test_out_buffer_is_refused_by_name():
    buffer = np.zeros(3)
    with pytest.raises(TracerConversionError, match=r"out="):
        dk.grad(lambda x: dnp.sum(dnp.sin(x, out=buffer)))(np.ones(3))
    with pytest.raises(UnsupportedKeywordError, match=r"exp\(\) does not support out="):
        dnp.exp(np.ones(3), out=np.zeros(3))
    for reduction in (dnp.mean, dnp.sum, dnp.prod, dnp.max, dnp.min, dnp.std, dnp.var):
        with pytest.raises(UnsupportedKeywordError, match=r"does not support out="):
            reduction(np.ones(3), out=np.zeros(()))   # the same error type as a ufunc's
    with pytest.raises(TracerConversionError, match=r"out="):  # positional out
        dk.grad(lambda x: dnp.sum(dnp.exp(x, buffer)))(np.ones(3))


def test_wrong_arguments_name_the_function():
    with pytest.raises(TypeError, match=r"diffkit.numpy.sum\(\): .*unexpected keyword.*'bogus'"):
        dnp.sum(np.ones(3), bogus=1)
    with pytest.raises(TypeError, match=r"diffkit.numpy.add\(\): missing"):
        dnp.add(np.ones(3), x=2)


def test_ufunc_dtype_computes_in_that_dtype():
    x = np.array([0.3, 1.2])
    out = dnp.sin(x, dtype=np.float32)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.sin(x, dtype=np.float32))
    grad = dk.grad(lambda x: dnp.sum(dnp.sin(x, dtype=np.float32)))(x)
    assert grad.dtype == np.float64           # the input's dtype
    np.testing.assert_allclose(grad, np.cos(x), rtol=1e-6)  # computed in float32


def test_keywords_of_ordinary_functions_pass_through_by_numpy_name():
    x = np.arange(6.0).reshape(2, 3) + 1.0
    # NumPy calls the array `a`; diffkit's function calls it `x` underneath
    np.testing.assert_allclose(dk.grad(lambda x: dnp.mean(a=x ** 2))(x), 2 * x / 6, rtol=1e-12)
    np.testing.assert_allclose(dnp.mean(x, 0, None, None, True), np.mean(x, 0, keepdims=True))
    np.testing.assert_allclose(dk.grad(lambda x: dnp.linalg.norm(x=x, ord="fro"))(x),
                               x / np.linalg.norm(x), rtol=1e-12)
    np.testing.assert_allclose(dsp.gammainc(a=2.0, x=1.0), scipy.special.gammainc(2.0, 1.0))


def test_help_shows_numpys_signature_and_the_derivative():
    text = dnp.sin.__doc__
    assert "Sine" in text and "Derivative: cos(x)" in text
    assert str(inspect.signature(dnp.sin)).startswith("(x, /, out=None, *, where=True")
    assert "Derivative" in dnp.maximum.__doc__ and "half to each" in dnp.maximum.__doc__
    assert "No derivative" in dnp.isnan.__doc__


def test_tracer_operators_call_primitives_directly():
    # the wrapper is for the public names; x * y and x.sum() stay on the fast path
    assert isinstance(Tracer.__mul__, Primitive)
    assert isinstance(Tracer.__add__, Primitive)
    assert Tracer.__mul__ is dnp.multiply.diffkit_function
