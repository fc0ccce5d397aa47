"""The ten commonest mistakes, each with the message it gets and the traceback it shows.

Every message names what was wrong in the user's terms (the argument by its Python name and
position where there is one) and says what to do; the traceback shows the user's frames and
hides diffkit's own (``dk.config.traceback_filtering = "off"`` shows them)."""

import traceback

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp
from diffkit import errors


def grad_of_vector():
    def loss(x):
        return x * 2.0
    dk.grad(loss)(np.ones(3))


def wrong_argnums():
    def loss(weights, data):
        return dnp.sum(weights * data)
    dk.grad(loss, argnums=2)(np.ones(3), np.ones(3))


def float_of_traced():
    def loss(x):
        return float(x[0]) * dnp.sum(x)
    dk.grad(loss)(np.ones(3))


def vmap_sizes():
    def f(points, shifts):
        return points + shifts
    dk.vmap(f)(np.ones((3, 2)), np.ones((4, 2)))


def vmap_axis_out_of_range():
    def f(points, scale):
        return points * scale
    dk.vmap(f, in_axes=(0, 1))(np.ones((3, 2)), np.ones(3))


def side_effect_in_jit():
    kept = []

    @dk.jit
    def f(x):
        kept.append(x)
        return x * 2.0
    f(np.ones(2))
    return kept[0] + 1.0


def np_array_of_traced():
    def loss(t):
        return dnp.sum(np.array([t[0], t[1] ** 2]))
    dk.grad(loss)(np.ones(2))


def missing_has_aux():
    def loss(x):
        return dnp.sum(x ** 2), {"norm": dnp.sum(x)}
    dk.grad(loss)(np.ones(2))


def complex_output():
    def f(z):
        return z ** 2
    dk.grad(f)(np.array(1.0 + 2.0j))


def integer_input():
    def loss(counts):
        return dnp.sum(counts * 2.0)
    dk.grad(loss)(np.arange(3))


def index_from_batched_value():
    def f(x):
        return x[int(x[0])]
    dk.vmap(f)(np.zeros((2, 3)))


def in_axes_structure():
    def f(params, x):
        return params["w"] * x
    dk.vmap(f, in_axes=({"w": 0, "b": 0}, 0))({"w": np.ones(3)}, np.ones(3))


MISTAKES = [
    (grad_of_vector, errors.NonScalarOutputError, ["shape (3,)", "jacobian", "vjp"]),
    (wrong_argnums, errors.ArgnumsError, ["argnums=2", "`weights` (position 0)",
                                          "`data` (position 1)"]),
    (float_of_traced, errors.TracerConversionError, ["float(x[0])", "stop_gradient"]),
    (vmap_sizes, errors.BatchingError, ["`points` (position 0) has 3",
                                        "`shifts` (position 1) has 4", "in_axes None"]),
    (vmap_axis_out_of_range, errors.BatchingError, ["`scale` (position 1)", "axis 1"]),
    (side_effect_in_jit, errors.EscapedTracerError, ["Return it from the jitted function"]),
    (np_array_of_traced, errors.TracerConversionError, ["np.stack"]),
    (missing_has_aux, errors.NonScalarOutputError, ["has_aux=True"]),
    (complex_output, errors.ComplexOutputError, ["holomorphic=True", "complex128"]),
    (integer_input, errors.InputTypeError, ["int", "float"]),
    (index_from_batched_value, errors.TracerConversionError, ["int(x[0])"]),
    (in_axes_structure, errors.BatchingError, ["in_axes[0]", "`params` (position 0)",
                                               "keys ['b', 'w']"]),
]


def _raise(mistake):
    try:
        mistake()
    except Exception as error:   # noqa: BLE001 (the table says which)
        return error
    raise AssertionError(f"{mistake.__name__} raised nothing")


def _frames(error):
    return [frame for frame in traceback.extract_tb(error.__traceback__)]


def _internal(frame):
    return "/diffkit/" in frame.filename.replace("\\", "/") and "/tests/" not in \
        frame.filename.replace("\\", "/")


@pytest.mark.parametrize("mistake, kind, phrases", MISTAKES,
                         ids=[m[0].__name__ for m in MISTAKES])
def test_each_mistake_gets_a_message_in_the_users_terms(mistake, kind, phrases):
    error = _raise(mistake)
    assert isinstance(error, kind), f"{type(error).__name__}: {error}"
    for phrase in phrases:
        assert phrase in str(error)


@pytest.mark.parametrize("mistake, kind, phrases", [m for m in MISTAKES
                                                    if m[0] is not side_effect_in_jit],
                         ids=[m[0].__name__ for m in MISTAKES if m[0] is not side_effect_in_jit])
def test_the_traceback_shows_the_users_frames_only(mistake, kind, phrases):
    frames = _frames(_raise(mistake))
    assert not [f for f in frames if _internal(f)], [f"{f.filename}:{f.lineno}" for f in frames]
    assert frames[-1].name in (mistake.__name__, "loss", "f")   # where the mistake is made


def test_the_full_traceback_is_one_setting_away():
    dk.config.traceback_filtering = "off"
    try:
        frames = _frames(_raise(float_of_traced))
    finally:
        dk.config.traceback_filtering = "on"
    assert any(_internal(f) for f in frames)
    with pytest.raises(ValueError, match="'on' or 'off'"):
        dk.config.traceback_filtering = "sometimes"


def test_a_bug_inside_diffkit_keeps_every_frame(monkeypatch):
    # a builtin in place of a check: the TypeError starts in diffkit's own frame
    monkeypatch.setattr(dk.api, "check_scalar", divmod)
    error = _raise(lambda: dk.grad(lambda x: dnp.sum(x))(np.ones(2)))
    assert isinstance(error, TypeError) and not isinstance(error, errors.DiffkitError)
    assert _internal(_frames(error)[-1])


def test_an_error_of_the_users_own_code_shows_the_users_frames():
    def loss(x):
        raise KeyError("missing")

    error = _raise(lambda: dk.jacfwd(loss)(np.ones(2)))
    frames = _frames(error)
    assert isinstance(error, KeyError) and frames[-1].name == "loss"
    assert not [f for f in frames if _internal(f)]
