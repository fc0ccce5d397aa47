"""SciPy's special functions (``scipy.special``) as differentiable primitives, by family.

This module gathers the families' public names (``diffkit.scipy.special`` re-exports them):

- :mod:`.special_helpers`: the building blocks (``special_function``, ``public``,
  ``multiple_outputs``), SciPy's dtype rules, arguments without a derivative, SciPy
  resolved on first call, and the conventions shared by every family;
- :mod:`.special_error`: the error function, the normal distribution, Owen's T, Fresnel;
- :mod:`.special_gamma`: gamma, log-gamma, digamma/polygamma, beta, poch, binom,
  multigammaln;
- :mod:`.special_incomplete`: the incomplete gamma and beta functions and their inverses,
  differentiable in the shape parameters;
- :mod:`.special_logistic`: expit/logit, xlogy and the entropies, Huber losses, softmax and
  logsumexp;
- :mod:`.special_bessel`: Bessel functions of every kind;
- :mod:`.special_polynomials`: orthogonal polynomials (``eval_*``) and ``lpmv``;
- :mod:`.special_distributions`: Kolmogorov, Tukey lambda, Student t, and the CDFs built on
  the incomplete gamma and beta functions;
- :mod:`.special_odes`: Kelvin, parabolic cylinder, Mathieu and Jacobi elliptic functions;
- :mod:`.special_airy`: Airy and Struve functions, integrals of Bessel and Struve functions;
- :mod:`.special_integrals`: exponential, sine/cosine and elliptic integrals, exprel,
  spence, Lambert W, Wright omega, Box-Cox, cosm1, exp10;
- :mod:`.special_series`: hypergeometric functions and zeta (series on jets).

Each family module's docstring lists its conventions at special points.
"""

from . import (
    special_airy,
    special_bessel,
    special_distributions,
    special_error,
    special_gamma,
    special_incomplete,
    special_integrals,
    special_logistic,
    special_odes,
    special_polynomials,
)
from .special_airy import *  # noqa: F403
from .special_bessel import *  # noqa: F403
from .special_distributions import *  # noqa: F403
from .special_error import *  # noqa: F403
from .special_gamma import *  # noqa: F403
from .special_incomplete import *  # noqa: F403
from .special_integrals import *  # noqa: F403
from .special_logistic import *  # noqa: F403
from .special_odes import *  # noqa: F403
from .special_polynomials import *  # noqa: F403

__all__ = [
    *special_error.__all__, *special_gamma.__all__, *special_incomplete.__all__,
    *special_logistic.__all__, *special_bessel.__all__, *special_integrals.__all__,
    *special_airy.__all__, *special_polynomials.__all__, *special_odes.__all__,
    *special_distributions.__all__,
]
