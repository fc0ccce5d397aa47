"""Staging of the functions the optimizers evaluate: each is a ``diffkit.jit`` function,
recorded at the first point and replayed at the next ones; a function that draws random
numbers cannot be staged and is then evaluated eagerly."""

from ...jit.jitted import jit
from ...jit.randomness import RandomDrawError


class Stager:
    """Runs ``make()(*values)``, through a jitted ``make()`` kept under a name when
    ``stage`` is on. One random draw turns staging off for every function of this stager
    (they all run the user's code)."""

    def __init__(self, stage):
        self.stage = bool(stage)
        self.staged = {}

    def run(self, name, make, *values):
        if self.stage:
            staged = self.staged.get(name)
            if staged is None:
                staged = self.staged[name] = jit(make())
            try:
                return staged(*values)
            except RandomDrawError:
                self.stage = False   # a random draw: evaluate eagerly from now on
        return make()(*values)
