"""The memory watchdog's error can land where Python cannot raise it (a ``__del__``,
a garbage collector callback); it is then dropped silently, and the budget's next
check between node evaluations raises it."""

from __future__ import annotations

import gc
import sys

import pytest

from engine.errors import MemoryLimitError
from engine.memory import MemoryBudget, _AsyncMemoryLimit


class RaisesInFinaliser:
    def __init__(self, error):
        self.error = error

    def __del__(self):
        raise self.error()


@pytest.fixture
def reported(monkeypatch) -> list:
    """What reaches the unraisable hook in force before the budget's."""
    seen: list = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: seen.append(unraisable))
    return seen


def test_a_limit_error_in_a_finaliser_is_dropped_and_the_next_check_raises(reported):
    budget = MemoryBudget(1, interval=600.0)    # the watchdog's first look is far off
    MemoryLimitError.pending = (2, 1)
    with pytest.raises(MemoryLimitError):
        with budget.watching():                 # installs the hook
            budget.bound = 1                    # past it, whatever this process holds
            RaisesInFinaliser(_AsyncMemoryLimit)
            gc.collect()
            assert reported == []               # dropped, not printed
            budget.check()                      # raises here


def test_other_unraisable_errors_are_still_reported(reported):
    with MemoryBudget(2**50).watching():
        RaisesInFinaliser(ValueError)
        gc.collect()
    assert [type(u.exc_value) for u in reported] == [ValueError]
