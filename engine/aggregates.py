"""Built-in aggregate functions for ``IndexedStream.aggregate``.

>>> count([((1,), 1), ((2,), 1)]), sum_of(0)([((1,), 1), ((2,), 1)])
(2, 3)
"""

from engine.operators.aggregate import count, max_of, mean_of, min_of, sum_of

__all__ = ["count", "max_of", "mean_of", "min_of", "sum_of"]
