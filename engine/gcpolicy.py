"""Python's cyclic garbage collector while a step runs: young collections
rarer, and the caller's settings back exactly as they were afterwards.

CPython collects its youngest generation after every 700 net allocations of
container objects (tuples, dicts, lists, ...; ``gc.get_threshold()[0]``), the
middle one after every 10 of those, and the whole heap when objects promoted
since the last full collection reach a quarter of it. A step of the engine
allocates rows, dicts and batches by the hundred thousand, most of them dead
by the step's end; collected mid-step they are still alive, so each collection
scans them and promotes them, and the promoted ones bring on full collections,
which scan every object of the process: some 58,000 after ``import datalog``
and a compiled program, of which the engine's state after a load is only a
few hundred (its traces are numpy runs, which the collector does not track).
The engine makes almost no reference cycles of its own (a join's compiled
loops and their namespace, once per trace kind: :class:`~engine.operators.join.JoinNode`
keeps them), so those collections find nothing to free.

While a step runs, :func:`quiet` raises the young threshold to
:data:`YOUNG` (never lowers it) and keeps the two older ones: collections
happen 140 times less often, mostly between steps, when the step's
temporaries are gone. Cyclic garbage made during a step (by a user's functor,
say) is still collected once :data:`YOUNG` net container objects pile up, so
it stays bounded. The collector stays on or off as the caller left it, nothing
is frozen, and the thresholds are put back by a C call (no Python frame in
between, so neither the memory watchdog's exception nor Ctrl-C can land
between the step's end and the restore). The thresholds are the process's:
another thread allocating while a step runs sees the raised one too.

>>> import gc
>>> before = gc.get_threshold()
>>> restore = quiet()
>>> gc.get_threshold()[0] >= YOUNG
True
>>> restore(); gc.get_threshold() == before
True
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable

#: Net container allocations between young collections while a step runs
#: (CPython's default: 700). Measured with gc callbacks (time in the
#: collector) over 60 single-fact updates after each benchmark's batch:
#: per update, sg-tree-10 0.58 -> 0.05 ms, negagg-1000-1500 0.69 -> 0.17 ms
#: (what is left runs between steps, in the caller's code); 100,000 and the
#: collector off inside steps gave the same figures. At 100,000 the cyclic
#: garbage a step can hold back stays bounded (about 10-30 MB of small
#: objects) where disabling the collector would not bound it.
YOUNG = 100_000


def quiet() -> Callable[[], None]:
    """Raise the young collection threshold for a step; return the call that
    puts the caller's thresholds back (call it in a ``finally``). Nothing
    changes when the collector is off or its young threshold is 0 or higher.

    >>> import gc
    >>> saved = gc.get_threshold(); gc.set_threshold(0, 10, 10)
    >>> restore = quiet(); gc.get_threshold()
    (0, 10, 10)
    >>> restore(); gc.set_threshold(*saved)
    """
    threshold = gc.get_threshold()
    if not gc.isenabled() or threshold[0] == 0 or threshold[0] >= YOUNG:
        return _nothing
    gc.set_threshold(YOUNG, *threshold[1:])
    return functools.partial(gc.set_threshold, *threshold)


def _nothing() -> None:
    return None
