"""Records of diffkit.ops.special_series: hyp1f1 and hyp2f1 differentiated in every argument
(parameters included), zeta in its exponent and in q, Riemann's zeta on both sides of 0 (the
reflection formula below it), and the exact-phase derivatives of fresnel at large
arguments. Domains keep b and c away from the poles at the non-positive integers, x of the
Hurwitz zeta above 1 and Riemann's zeta away from its pole at 1."""

import dataclasses

import numpy as np

import diffkit.scipy.special as sp

from ..domains import Domain
from ..op_record import binary, records, unary

PARAMETER = Domain("parameter (0.5, 2.5)", 0.5, 2.5)
ARGUMENT = Domain("argument (-2, 2)", -2.0, 2.0)
Z = Domain("2F1 argument (-2, 0.8)", -2.0, 0.8)
EXPONENT = Domain("zeta exponent (1.5, 4)", 1.5, 4.0)
Q = Domain("zeta q (0.5, 3)", 0.5, 3.0)
RIEMANN = Domain("zeta exponent (-4, 0.8), not 0", -4.0, 0.8, avoid=(0.0,), margin=0.05)

R = []
R += records("hyp1f1_all_arguments", sp.hyp1f1, [((3,), (3,), (3,)), ((2, 1), (), (3,))],
             (PARAMETER, PARAMETER, ARGUMENT))
R += unary("hyp1f1_in_a", lambda a: sp.hyp1f1(a, 1.7, -0.8), PARAMETER, shapes=[((3,),)])
R += records("hyp2f1_all_arguments", sp.hyp2f1,
             [((3,), (3,), (3,), (3,)), ((2, 1), (), (3,), ())],
             (PARAMETER, PARAMETER, PARAMETER, Z))
R += binary("zeta_both", sp.zeta, (EXPONENT, Q), shapes=[((3,), (3,)), ((2, 1), (3,))])
R += unary("zeta_riemann_exponent", sp.zeta, RIEMANN, shapes=[((3,),), ((2, 3),)])
R += unary("zeta_riemann_above_1", sp.zeta, EXPONENT, shapes=[((3,),)])
R += unary("hyp1f1_float32", lambda a: sp.hyp1f1(a, 1.5, 0.5),
           Domain("parameter float32", 0.5, 2.5, dtype=np.float32), shapes=[((3,),)])

RECORDS = [dataclasses.replace(r, name=f"special_series_{r.name}") for r in R]
