"""``autograd.scipy.signal.convolve``: autograd's tensor convolution.

``convolve(A, B, axes=None, dot_axes=[(), ()], mode="full")`` convolves ``A`` and ``B``
along the axis pairs ``axes = [A_axes, B_axes]`` (by default every axis of ``A`` with the
same axis of ``B``), sums the products over the axis pairs ``dot_axes``, and takes the
outer product over the remaining axes. The output's axes are ``A``'s remaining axes, then
``B``'s, then the convolved ones, whose lengths are ``n + m - 1`` (``"full"``),
``|n - m| + 1`` (``"valid"``) or ``A``'s length (``"same"``, centred as NumPy's).

This is not SciPy's signature (``diffkit.scipy.signal.convolve`` is SciPy's). Written
with diffkit operations (a padded gather of ``A``'s windows and one ``einsum``), so it is
differentiable in both arrays to any order.
"""

import string

import numpy as np

from .... import numpy as dnp

__all__ = ["convolve"]


def _conv_size(n, m, mode):
    if mode == "full":
        return n + m - 1
    if mode == "same":
        return n
    return abs(n - m) + 1


def _start_in_full(n, m, mode):
    """Where the ``mode`` result starts in the full convolution."""
    if mode == "full":
        return 0
    if mode == "same":
        return (m - 1) // 2
    return min(n, m) - 1


def convolve(A, B, axes=None, dot_axes=((), ()), mode="full"):
    """The convolution of ``A`` and ``B`` described in the module docstring."""
    if mode not in ("valid", "full", "same"):
        raise ValueError(f"Mode {mode} undefined, it can be one of 'valid', 'full', and "
                         "'same'")
    ndim_a, ndim_b = dnp.ndim(A), dnp.ndim(B)
    if axes is None:
        axes = [list(range(ndim_a)), list(range(ndim_a))]
    conv_a, conv_b = (list(a) for a in axes)
    dot_a, dot_b = (list(d) for d in dot_axes)
    if len(conv_a) != len(conv_b) or len(dot_a) != len(dot_b):
        raise ValueError(f"convolve: axes {axes} and dot_axes {dot_axes} must pair the "
                         "axes of A with as many axes of B")
    shape_a, shape_b = dnp.shape(A), dnp.shape(B)
    if mode == "valid":
        larger_a = [shape_a[i] >= shape_b[j] for i, j in zip(conv_a, conv_b)]
        if not (all(larger_a) or not any(larger_a) or
                all(shape_a[i] == shape_b[j] for i, j in zip(conv_a, conv_b))):
            raise ValueError("One array must be larger than the other along all convolved "
                             "dimensions")
    windows = A
    for done, (i, j) in enumerate(zip(conv_a, conv_b)):
        # each axis gathered before splits in two, shifting the axes after it by one
        position = i + sum(1 for k in conv_a[:done] if k < i)
        windows = _gather_windows(windows, position, shape_a[i], shape_b[j], mode)
    return _contract(windows, B, conv_a, conv_b, dot_a, dot_b, ndim_a, ndim_b)


def _gather_windows(x, axis, n, m, mode):
    """Replace ``axis`` (length ``n``) of ``x`` with two axes ``(out, k)``: entry
    ``[o, k]`` is the ``A`` value that multiplies filter entry ``k`` at output ``o``
    (zero outside ``A``)."""
    size = _conv_size(n, m, mode)
    start = _start_in_full(n, m, mode)
    pad = [(0, 0)] * dnp.ndim(x)
    pad[axis] = (m - 1, m - 1)
    padded = dnp.pad(x, pad)
    # full output o' uses A[o' - k], which is padded[o' - k + m - 1]
    full_out = np.arange(size)[:, None] + start
    index = full_out - np.arange(m)[None, :] + (m - 1)
    return dnp.take(padded, index, axis=axis)


def _contract(windows, B, conv_a, conv_b, dot_a, dot_b, ndim_a, ndim_b):
    """The einsum of the windows of ``A`` with ``B``: filter axes with ``B``'s convolved
    axes, dot axes pairwise; the output ordered ``A`` rest, ``B`` rest, convolved."""
    letters = iter(string.ascii_letters)
    # labels of A's original axes, expanded where an axis became (out, k)
    a_labels = {i: next(letters) for i in range(ndim_a)}
    b_labels = {j: next(letters) for j in range(ndim_b)}
    out_labels = {}
    for i, j in zip(conv_a, conv_b):
        out_labels[i] = next(letters)
        a_labels[i] = out_labels[i] + b_labels[j]     # (out, k) with k shared with B
    for i, j in zip(dot_a, dot_b):
        b_labels[j] = a_labels[i]
    a_spec = "".join(a_labels[i] for i in range(ndim_a))
    b_spec = "".join(b_labels[j] for j in range(ndim_b))
    rest_a = "".join(a_labels[i] for i in range(ndim_a) if i not in conv_a and i not in dot_a)
    rest_b = "".join(b_labels[j] for j in range(ndim_b) if j not in conv_b and j not in dot_b)
    conv = "".join(out_labels[i] for i in conv_a)
    return dnp.einsum(f"{a_spec},{b_spec}->{rest_a}{rest_b}{conv}", windows, B)
