"""The cache of ``jit``: its key (structure, shapes, dtypes, static values), its counters,
four threads sharing one jitted function, and the errors for bad static arguments."""

import threading

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import ArgnumsError, InputTypeError


def counted(fun):
    calls = []

    def wrapper(*args, **kwargs):
        calls.append(1)
        return fun(*args, **kwargs)

    return wrapper, calls


def test_same_shapes_replay_without_running_python():
    f, calls = counted(lambda x, y: dnp.tanh(x) @ y)
    jitted = dk.jit(f)
    rng = np.random.default_rng(0)
    for _ in range(4):
        x, y = rng.normal(size=(3, 4)), rng.normal(size=4)
        np.testing.assert_allclose(jitted(x, y), np.tanh(x) @ y, rtol=1e-12)
    assert len(calls) == 1
    assert jitted.cache_info() == (1, 3, 0, 0)


def test_new_shape_dtype_structure_or_static_value_retraces():
    f, calls = counted(lambda x, power: x ** power)
    jitted = dk.jit(f, static_argnums=1)
    jitted(np.ones(3), 2)
    jitted(np.ones(3), 2)
    assert len(calls) == 1
    out = jitted(np.ones(4), 2)                                  # new shape
    assert out.shape == (4,) and len(calls) == 2
    out = jitted(np.ones(3, dtype=np.float32), 2)                # new dtype
    assert out.dtype == np.float32 and len(calls) == 3
    np.testing.assert_array_equal(jitted(np.full(3, 2.0), 3), [8.0, 8.0, 8.0])   # new static
    assert len(calls) == 4
    assert jitted.cache_info().traces == 4


def test_pytree_structure_is_part_of_the_key():
    jitted = dk.jit(lambda d: dnp.sum(d["a"]) + sum(dnp.sum(v) for v in d["b"]))
    assert jitted({"a": np.ones(2), "b": [np.ones(3)]}) == 5.0
    assert jitted({"a": np.ones(2), "b": [np.ones(3), np.ones(1)]}) == 6.0
    assert jitted.cache_info().traces == 2


def test_static_argnames_and_keyword_arguments():
    f, calls = counted(lambda x, *, mode="sum", scale=1.0: (dnp.sum(x) if mode == "sum"
                                                           else dnp.max(x)) * scale)
    jitted = dk.jit(f, static_argnames="mode")
    assert jitted(np.arange(3.0), mode="sum", scale=2.0) == 6.0
    assert jitted(np.arange(3.0), mode="sum", scale=3.0) == 9.0    # scale is traced
    assert jitted(np.arange(3.0), mode="max", scale=3.0) == 6.0
    assert len(calls) == 2


def test_static_argnum_given_by_keyword():
    jitted = dk.jit(lambda x, n: x * n, static_argnums=1)
    np.testing.assert_array_equal(jitted(np.ones(2), n=3), [3.0, 3.0])


def test_clear_cache_traces_again():
    f, calls = counted(lambda x: x + 1)
    jitted = dk.jit(f)
    jitted(np.ones(2))
    jitted.clear_cache()
    assert jitted.cache_info() == (0, 0, 0, 0)
    jitted(np.ones(2))
    assert len(calls) == 2


def test_four_threads_agree_with_eager():
    def f(x, y):
        if dnp.sum(x) > 0:
            return dnp.sum(dnp.sin(x) * y)
        return dnp.sum(dnp.cos(x) * y)

    jitted = dk.jit(dk.value_and_grad(f))
    eager = dk.value_and_grad(f)
    rng = np.random.default_rng(1)
    cases = [(rng.normal(size=5), rng.normal(size=5)) for _ in range(40)]
    results = [None] * len(cases)

    def work(offset):
        for k in range(offset, len(cases), 4):
            results[k] = jitted(*cases[k])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (x, y), (value, grad) in zip(cases, results):
        expected_value, expected_grad = eager(x, y)
        np.testing.assert_allclose(value, expected_value, rtol=1e-12)
        np.testing.assert_allclose(grad, expected_grad, rtol=1e-12)
    info = jitted.cache_info()
    assert info.traces + info.hits + info.eager_calls == len(cases)
    assert info.eager_calls == 0 and info.traces <= 8


# --- errors ---------------------------------------------------------------------------------


def test_unhashable_static_argument_names_it():
    jitted = dk.jit(lambda x, opts: x * len(opts), static_argnums=1)
    with pytest.raises(InputTypeError, match=r"static argument 1 is a list.*tuple instead"):
        jitted(np.ones(2), [1, 2])
    jitted = dk.jit(lambda x, opts=None: x, static_argnames="opts")
    with pytest.raises(InputTypeError, match=r"static argument 'opts' is a dict"):
        jitted(np.ones(2), opts={"a": 1})


def test_static_argnums_out_of_range():
    with pytest.raises(ArgnumsError, match=r"contains 2.*0 to 1"):
        dk.jit(lambda x, y: x, static_argnums=2)
    jitted = dk.jit(lambda *args: args[0], static_argnums=3)
    with pytest.raises(ArgnumsError, match=r"contains 3.*called with 1 positional"):
        jitted(np.ones(2))


def test_bad_argument_types():
    with pytest.raises(TypeError, match="callable"):
        dk.jit(3)
    with pytest.raises(TypeError, match="static_argnums must hold ints"):
        dk.jit(lambda x: x, static_argnums="x")
    with pytest.raises(InputTypeError, match="argument leaf 1 is a str.*static"):
        dk.jit(lambda x, how: x)(np.ones(2), "fast")
