"""The answers to a conjunctive query (:meth:`datalog.Session.ask`): named,
sorted, and convertible to a DataFrame or an Arrow table.

Takes the query's variables, their types and the rows found; gives
:class:`Answers`.
"""

from __future__ import annotations

from collections.abc import Iterator

from datalog.plan.ir import RelationPlan


class Answers:
    """The answers to a conjunctive query (:meth:`Session.ask`): ``variables``
    (their names), ``types`` (their primitive types) and ``rows`` (one value
    per variable, sorted). Iterating yields one dict per answer; ``len`` counts
    them; a query without variables has one answer (an empty dict) when it
    holds and none when it does not, so ``bool(answers)`` says whether it holds.

    >>> a = Answers(("x", "y"), ("number", "symbol"), [(1, "a"), (2, "b")])
    >>> list(a), len(a), a.rows[0]
    ([{'x': 1, 'y': 'a'}, {'x': 2, 'y': 'b'}], 2, (1, 'a'))
    >>> a.frame().dtypes.astype(str).to_dict()
    {'x': 'int64', 'y': 'string'}
    """

    def __init__(self, variables: tuple[str, ...], types: tuple[str, ...],
                 rows: list[tuple]):
        self.variables = tuple(variables)
        self.types = tuple(types)
        self.rows = list(rows)

    def __iter__(self) -> Iterator[dict]:
        names = self.variables
        return (dict(zip(names, row)) for row in self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __bool__(self) -> bool:
        return bool(self.rows)

    def __eq__(self, other) -> bool:
        return isinstance(other, Answers) and (self.variables, self.rows) == \
            (other.variables, other.rows)

    def __repr__(self) -> str:
        count = len(self.rows)
        return (f"Answers({', '.join(self.variables) or 'no variables'}: {count} "
                f"answer{'s' if count != 1 else ''})")

    def _relation(self) -> RelationPlan:
        return RelationPlan("answers", self.variables, self.types)

    def frame(self):
        """The answers as a pandas DataFrame, a column per variable (typed as
        :meth:`Session.frame` types a relation's)."""
        from datalog.frames import to_pandas

        return to_pandas(self.rows, self._relation())

    def to_arrow(self):
        """The answers as an Arrow table."""
        from datalog.frames import to_arrow

        return to_arrow(self.rows, self._relation())
