"""Compatibility layers: other libraries' public APIs running on diffkit.

``diffkit.compat.autograd`` is HIPS autograd's API (``grad``, ``elementwise_grad``,
``autograd.numpy``, ``autograd.extend.primitive`` ...) computed by diffkit's engines, so
code written for autograd moves to diffkit by changing one import (or, for code that
cannot be edited, by ``diffkit.compat.autograd.install()``). See docs/guide/autograd.md.
"""
