"""Unmodified NumPy programs, each written with ``import numpy as np`` (and ``scipy.special``)
only, with no diffkit import: ``tests/test_corpus.py`` differentiates them as they are and
checks the derivatives against the same source run on ``diffkit.numpy`` and against finite
differences.

One program per module; each module's docstring says which function is the program, what
its input is and what it returns.
"""
