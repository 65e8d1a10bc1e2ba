"""What a ``choice-domain`` relation holds: the engine's deterministic choice.

Soufflé keeps, for each value of a choice domain, the first tuple its evaluation
happens to derive, and says the choice is non-deterministic. An incremental engine
must give, after any sequence of inserts and retractions, what a run from scratch
gives, so the choice here is a fixed rule, one of the outcomes Soufflé allows:

* **The candidates** of a relation are the tuples its facts, its input rows and
  its rules give (a set, as for any relation).
* **One domain** (``choice-domain x``, or a tuple ``(x, y)``): the relation holds,
  for each value of the domain, the **least** candidate with that value, in the
  engine's order of rows (column by column; numbers by value, symbols by their
  text, code point by code point; records and ADT values field by field).
* **Several domains** (``choice-domain x, y``): the candidates are taken in that
  order, least first, and a candidate is kept when no kept tuple shares a value
  of any domain with it (a greedy matching). Every domain holds, and no candidate
  could be added without breaking one.
* **In recursion** (a relation that depends on itself; one domain only), tuples
  are derived in rounds, as semi-naive evaluation does: round 0 applies the
  facts, inputs and rules that read no relation of the recursion, round ``i`` the
  rules to the relations after round ``i - 1``. A domain value takes the least
  candidate of the first round that gives it any candidate, and keeps it: a
  candidate of a later round never replaces it. A spanning tree
  ``st(u, v) :- st(_, u), edge(u, v).`` with ``choice-domain v`` is then a
  breadth-first tree, each node's parent the least of the nodes one step nearer
  the root.
* **Retraction**: retracting the chosen tuple (or whatever derived it) makes the
  next candidate by the same rule the chosen one, if there is one; retracting a
  candidate that was not chosen changes nothing. Inserting a candidate less than
  the chosen one replaces it. Either way the relation equals a run from scratch
  on the facts as they now are, and what depends on it follows.

:func:`choice_text` writes a relation's domains back as Datalog. The circuit
computes the choice in ``datalog/backends/circuit/choice.py`` (several domains
with ``engine/operators/matching.py``), Spark in ``datalog/backends/spark/choice.py``.

>>> choice_text(("x", "y", "z"), ((0,), (1, 2)))
'choice-domain x, (y, z)'
"""

from __future__ import annotations


def choice_text(attributes: tuple[str, ...], domains: tuple[tuple[int, ...], ...]) -> str:
    """The ``choice-domain`` clause of a declaration, as Datalog."""
    parts = [", ".join(attributes[c] for c in d) for d in domains]
    return "choice-domain " + ", ".join(p if len(d) == 1 else f"({p})"
                                        for p, d in zip(parts, domains))
