"""``import diffkit.numpy as np`` is a drop-in for NumPy's namespace, and traced values are
array-API arrays whose namespace is diffkit.numpy."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import NoRuleError
from diffkit.numpy import _numpy_names

X = np.array([3.0, 1.0, 2.0, 1.0, 0.5])


def numerical_gradient(f, x, step=1e-6):
    return np.array([(f(x + step * e) - f(x - step * e)) / (2 * step) for e in np.eye(x.size)])


def test_every_public_numpy_name_exists():
    public = {name for name in dir(np) if not name.startswith("_")}
    missing = sorted(public - set(dir(dnp)) - _numpy_names.ABSENT)
    assert missing == []
    assert _numpy_names.ABSENT == frozenset()   # docs/numpy.md would list any


def test_numpys_own_objects_pass_through():
    assert dnp.uint8 is np.uint8 and dnp.dtype is np.dtype and dnp.bool is np.bool
    assert dnp.random is np.random and dnp.testing is np.testing
    assert dnp.errstate is np.errstate and dnp.euler_gamma == np.euler_gamma
    with dnp.errstate(divide="ignore"):
        assert dnp.log(np.array(0.0)) == -np.inf


@pytest.mark.parametrize("transform", [dk.grad, dk.jacfwd, lambda f: dk.vmap(dk.grad(f))])
def test_dtype_functions_see_through_traced_values(transform):
    def f(x):
        assert dnp.result_type(x, 1.0) == np.float64
        assert dnp.result_type(x, np.float32) == np.float64
        assert dnp.can_cast(x, np.float64) and not dnp.can_cast(x, np.int32)
        assert dnp.finfo(x).eps == np.finfo(np.float64).eps
        assert dnp.common_type(x) is np.float64
        assert not dnp.isfortran(x)
        return dnp.sum(x * x)

    args = X if transform in (dk.grad, dk.jacfwd) else np.stack([X, X + 1])
    assert_allclose(transform(f)(args), 2 * args, rtol=1e-15)


def test_info_functions_take_dtypes_arrays_and_scalars():
    assert dnp.finfo(np.float32).eps == np.finfo(np.float32).eps
    assert dnp.finfo(np.ones(2, np.float32)).eps == np.finfo(np.float32).eps
    assert dnp.iinfo(np.int8).max == 127 and dnp.iinfo(np.arange(3, dtype=np.int16)).min == -32768


def test_indices_from_read_the_shape_of_a_traced_value():
    def f(a):
        rows, cols = dnp.tril_indices_from(a, k=-1)
        upper = dnp.triu_indices_from(a)
        diagonal = dnp.diag_indices_from(a)
        return dnp.sum(a[rows, cols] ** 2) + dnp.sum(a[upper]) + dnp.sum(a[diagonal])

    a = np.arange(9.0).reshape(3, 3)
    expected = 2 * np.tril(a, -1) + np.triu(np.ones((3, 3))) + np.eye(3)
    assert_allclose(dk.grad(f)(a), expected, rtol=1e-15)
    with pytest.raises(ValueError, match="2-d"):
        dk.grad(lambda v: dnp.sum(v[dnp.tril_indices_from(v)]))(np.ones(3))


@pytest.mark.parametrize("name", ["unique_values", "unique_counts", "unique_inverse",
                                  "unique_all"])
def test_unique_functions_match_numpy_and_differentiate(name):
    fn, reference = getattr(dnp, name), getattr(np, name)
    got, expected = fn(X), reference(X)
    if name == "unique_values":
        assert_array_equal(got, expected)
    else:
        assert type(got) is type(expected)
        for a, b in zip(got, expected):
            assert_array_equal(a, b)

    def f(x):
        result = fn(x)
        values = result if name == "unique_values" else result.values
        return dnp.sum(values * np.arange(1.0, values.shape[0] + 1))

    def plain(x):
        return np.sum(np.unique_values(x) * np.arange(1.0, 5.0))

    assert_allclose(dk.grad(f)(X[[0, 1, 2, 4]]), numerical_gradient(plain, X[[0, 1, 2, 4]]),
                    rtol=1e-7)
    assert_array_equal(dk.jacfwd(f)(X), dk.jacrev(f)(X))


def test_sort_complex_and_conversions_differentiate():
    assert_array_equal(dnp.sort_complex(X), np.sort_complex(X))

    def f(x):
        return dnp.sum(dnp.real(dnp.sort_complex(x)) * np.arange(5.0))

    y = np.array([3.0, 1.0, 2.0, 4.0, 0.5])
    assert_allclose(dk.grad(f)(y), numerical_gradient(
        lambda v: np.sum(np.real(np.sort_complex(v)) * np.arange(5.0)), y), rtol=1e-7)
    for convert in (dnp.ascontiguousarray, dnp.asfortranarray, dnp.require,
                    dnp.asarray_chkfinite):
        assert_allclose(dk.grad(lambda x, c=convert: dnp.sum(c(x) ** 2))(X), 2 * X, rtol=1e-15)
    with pytest.raises(ValueError, match="infs or NaNs"):
        dk.grad(lambda x: dnp.sum(dnp.asarray_chkfinite(x / 0.0)))(X)


def test_functions_without_a_derivative_refuse_a_traced_value_by_name():
    with pytest.raises(NoRuleError, match="np.digitize has no diffkit rule"):
        dk.grad(lambda x: dnp.sum(x) + dnp.digitize(x, [1.5]).sum())(X)
    with pytest.raises(NoRuleError, match="np.isnat"):   # a passed-through ufunc: no loop
        dk.grad(lambda x: dnp.sum(x) + np.isnat(x).sum())(X)
    assert_array_equal(dnp.digitize(X, [1.5]), np.digitize(X, [1.5]))   # plain arrays


# --- the array API: a traced value's namespace ------------------------------------------------


def test_traced_values_are_array_api_arrays():
    seen = {}

    def f(x):
        xp = x.__array_namespace__()
        seen.update(xp=xp, device=x.device, mT=x.mT.shape, moved=x.to_device("cpu") is x)
        return xp.sum(xp.linalg.vector_norm(xp.permute_dims(x, (1, 0)), axis=0) ** 2)

    x = np.arange(6.0).reshape(2, 3)
    assert_allclose(dk.grad(f)(x), 2 * x, rtol=1e-15)
    # the namespace is diffkit.numpy seen through the array-API view: the same functions,
    # its creation functions making values of the running transformation
    xp = seen.pop("xp")
    assert xp.sum is dnp.sum and xp.linalg is dnp.linalg and xp.__name__ == "diffkit.numpy"
    assert seen == {"device": "cpu", "mT": (3, 2), "moved": True}
    assert dnp.__array_api_version__ == "2024.12"


def test_array_api_version_and_device_errors_say_what_is_supported():
    def f(x, **kwargs):
        x.__array_namespace__(**kwargs)
        return dnp.sum(x)

    dk.grad(lambda x: f(x, api_version="2023.12"))(X)
    with pytest.raises(ValueError, match="2024.12"):
        dk.grad(lambda x: f(x, api_version="2030.12"))(X)
    with pytest.raises(ValueError, match="CPU only"):
        dk.grad(lambda x: dnp.sum(x.to_device("cuda")))(X)
    with pytest.raises(ValueError, match="CPU only"):
        dk.grad(lambda x: dnp.sum(dnp.asarray(x, device="gpu")))(X)


def test_asarray_takes_the_array_api_keywords():
    assert_allclose(dk.grad(lambda x: dnp.sum(dnp.asarray(x, copy=True) ** 2))(X), 2 * X)
    assert_allclose(dk.grad(lambda x: dnp.sum(dnp.asarray(x, device="cpu", copy=False)))(X),
                    np.ones(5))
    with pytest.raises(ValueError, match="copy=False"):
        dk.grad(lambda x: dnp.sum(dnp.asarray(x, dtype=np.float32, copy=False)))(X)
    plain = np.ones(3)
    assert dnp.asarray(plain, copy=False) is plain and dnp.asarray(plain, copy=True) is not plain


def test_the_namespace_has_scipys_special_extension():
    import diffkit.scipy.special as dsp
    assert dnp.special is dsp
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        dnp.not_a_name   # noqa: B018
