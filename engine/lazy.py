"""Heavy modules imported when first used, not when the runtime is imported.

numpy costs about 0.1 s to import, and a small program never takes a columnar path
(batches stay dicts below the thresholds of :mod:`engine.colbatch`), so the columnar
modules bind ``np = lazy.module("numpy", globals())``: a stand-in whose first
attribute read imports numpy and rebinds every name of the stand-in in that module's
globals to the real module. From then on ``np.…`` in that module is an ordinary global
lookup, with no indirection left on the hot paths. Hence the one rule for such a
module: nothing at its top level reads ``np`` (a dtype is named by its string,
``"int64"``, which numpy accepts wherever it takes a dtype). The import's cost moves
to the first columnar batch: time a batch with numpy imported before the clock.

>>> import sys
>>> namespace = {}
>>> namespace["m"] = module("fractions", namespace)
>>> namespace["m"]
<fractions, imported on first use>
>>> namespace["m"].Fraction(1, 3)
Fraction(1, 3)
>>> namespace["m"] is sys.modules["fractions"]
True
"""
from __future__ import annotations

import sys

__all__ = ["module"]


class _StandIn:
    """The module ``name`` until first used; then the module itself, in ``namespace``."""

    __slots__ = ("_name", "_namespace")

    def __init__(self, name: str, namespace: dict):
        self._name = name
        self._namespace = namespace

    def __getattr__(self, attribute: str):
        __import__(self._name)  # (as an import statement would: `-X importtime` shows it)
        real = sys.modules[self._name]
        for key, value in list(self._namespace.items()):
            if value is self:
                self._namespace[key] = real
        return getattr(real, attribute)

    def __repr__(self) -> str:
        return f"<{self._name}, imported on first use>"


def module(name: str, namespace: dict) -> _StandIn:
    """A stand-in for the module ``name``, bound in ``namespace`` (a module's
    ``globals()``): its first attribute read imports the module and puts it in
    the stand-in's place there."""
    return _StandIn(name, namespace)
