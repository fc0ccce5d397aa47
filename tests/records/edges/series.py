"""Edge samples of the series-based special functions (hyp1f1 and hyp2f1 in their parameters,
the Hurwitz zeta in its exponent) and of polynomial roots: the series' first term alone (x = 0,
z = 0), the zeta's fast decay to 1 for large exponents, and a root at 0."""

import scipy.special

from ..edge_sample import edge

E = []
# at x = 0 (z = 0) the series is its first term 1: the parameter derivatives vanish exactly
E += edge("special_series_hyp1f1_all_arguments", [1.0, -0.5, 2.0], [1.5, 2.0, 0.5],
          [0.0, -0.0, 0.0], label="x=0", ref=scipy.special.hyp1f1)
E += edge("special_series_hyp2f1_all_arguments", [1.0, -0.5], [0.5, 2.0], [1.5, 3.0], [0.0, -0.0],
          label="z=0", ref=scipy.special.hyp2f1)
# zeta(x, q) -> q**-x: for q = 1 the derivative in x underflows towards 0 without NaN
E += edge("special_series_zeta_both", [2.0, 40.0, 300.0], [1.0, 1.0, 2.0], label="large_exponent",
          ref=scipy.special.zeta)
# a root at 0 and roots of both signs
E += edge("numpy_extra_roots_real", [0.0, 1.0, -2.0], label="root_at_0", ref=None)
EDGES = E
