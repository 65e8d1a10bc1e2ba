"""``session.explain``, ``session.why_not`` and ``delta.explain`` against an
independent derivation search: the reference evaluator's clause solver
(:mod:`tests.reference`) computes every tuple's least height from scratch, and
checks that each rule instance of an explanation derives its head."""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace

import pytest
from hypothesis import HealthCheck, given, settings

import datalog
from datalog.syntax.parser import parse
from tests.datalog.differential import NUMBERS, SYMBOLS, programs, transactions
from tests.reference import Clause, column_types

EXPLAINED_PER_STATE = 12


class Oracle:
    """The reference's view of one state of a program: the least height of
    every tuple (0: inputs and facts; else 1 + the highest positive body
    tuple of the best rule instance), found level by level with the
    reference's own clause solver. Atoms under negation or in an aggregate
    read the whole relation (a lower stratum's): they are renamed to
    ``name~whole`` for the solver."""

    def __init__(self, text: str, session):
        self.program = parse(text)
        self.columns = column_types(self.program)
        self.columns.update({f"{name}~whole": types for name, types in list(self.columns.items())})
        self.state = {name: set(session.query(name)) for name in session.program.relations}
        self.clauses = [Clause(head, tuple(_whole(literal) for literal in body), self.columns,
                               self.program)
                        for rule in self.program.rules for head, body in rule.clauses()]
        self.height: dict[tuple[str, tuple], int] = {}
        for name, rows in session._inputs.items():
            for row in rows:
                self.height[(name, row)] = 0
        for name, rows in session.program.plan.facts.items():
            for row in rows:
                self.height[(name, row)] = 0
        level = 0
        while True:
            level += 1
            found = []
            for clause in self.clauses:
                for head in clause.derive(self._db(clause)):
                    key = (clause.head.relation, head)
                    if key not in self.height:
                        found.append(key)
            if not found:
                break
            for key in found:
                self.height.setdefault(key, level)

    def _db(self, clause: Clause, premises=None) -> dict:
        clause.indexes.clear()          # its index cache outlives one database
        db = {}
        for name in self.columns:
            if name.endswith("~whole"):
                db[name] = self.state[name[:-len("~whole")]]
            elif premises is not None:
                db[name] = premises.get(name, set())
            else:
                db[name] = {row for row in self.state[name] if (name, row) in self.height}
        return db

    def derives(self, derivation) -> bool:
        """Whether one clause at the derivation's place derives its tuple from
        exactly its premises (and the whole of what it negates)."""
        premises: dict[str, set] = {}
        for p in derivation.premises:
            premises.setdefault(p.relation, set()).add(p.row)
        for clause in self.clauses:
            span = clause.head.span
            if derivation.location.endswith(f":{span.line}:{span.column}") and \
                    clause.head.relation == derivation.relation and \
                    derivation.row in set(clause.derive(self._db(clause, premises))):
                return True
        return False


def _whole(node, inside: bool = False):
    """``node`` (a literal or term) with the atoms under a negation or inside an
    aggregate renamed to ``name~whole``."""
    from datalog.syntax import ast

    if isinstance(node, ast.Atom):
        return replace(node, relation=f"{node.relation}~whole") if inside else node
    if isinstance(node, ast.Negation):
        return replace(node, atom=_whole(node.atom, True))
    if isinstance(node, ast.Aggregate):
        return replace(node, body=tuple(_whole(literal, True) for literal in node.body))
    if is_dataclass(node):
        changes = {}
        for f in fields(node):
            value = getattr(node, f.name)
            if is_dataclass(value):
                changes[f.name] = _whole(value, inside)
            elif isinstance(value, tuple):
                changes[f.name] = tuple(_whole(v, inside) if is_dataclass(v) else v
                                        for v in value)
        return replace(node, **changes)
    return node


def check_explanation(oracle: Oracle, derivation) -> None:
    todo = [derivation]
    while todo:
        node = todo.pop()
        assert node.row in oracle.state[node.relation]
        assert node.height == oracle.height[(node.relation, node.row)], node.fact
        if node.kind == "rule":
            assert node.height == 1 + max((p.height for p in node.premises), default=0)
            assert oracle.derives(node), f"{node.fact} by {node.rule}"
            for name, values in node.absent:
                assert not any(all(v is None or v == x for v, x in zip(values, row))
                               for row in oracle.state[name])
        else:
            assert node.height == 0 and not node.premises
        todo.extend(node.premises)


def _fact(relation: str, row: tuple) -> str:
    from datalog.syntax.render import format_fact

    return format_fact(relation, row)


def _absent_candidates(session, relation: str) -> list[tuple]:
    types = session._relations[relation].types
    domains = [NUMBERS if t == "number" else SYMBOLS if t == "symbol" else (0.5,)
               for t in types]
    rows = [()]
    for domain in domains:
        rows = [r + (v,) for r in rows for v in list(domain)[:3]]
    present = session.query(relation)
    return [r for r in rows if r not in present][:4]


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), transactions())
def test_explanations_are_least_height_derivations(text, txs):
    """After every transaction of a random sequence: each tuple's explanation is
    made of rule instances that derive their heads, down to inputs and facts,
    every node at its least height; each change of the delta is explained in
    the state it lives in; why_not answers for absent tuples, one reason per
    rule."""
    program = datalog.Program(text)
    session = program.session()
    for tx in [[]] + txs:
        before = Oracle(text, session)
        with session.transaction() as t:
            for op, relation, row in tx:
                getattr(t, op)(relation, row)
        after = Oracle(text, session)
        explained = 0
        for name in program.relations:
            for row in sorted(session.query(name), key=repr):
                if explained == EXPLAINED_PER_STATE:
                    break
                check_explanation(after, session.explain(_fact(name, row)))
                explained += 1
            rules = [r for s in program.plan.strata for r in s.rules if r.relation == name]
            for row in _absent_candidates(session, name):
                answer = session.why_not(_fact(name, row))
                assert len(answer.reasons) == max(1, len(rules))
                assert all("out of date" not in reason for reason in answer.reasons)
        for relation, row, sign in t.delta:
            change = t.delta.explain(_fact(relation, row))
            assert change.sign == sign
            check_explanation(after if sign > 0 else before, change.derivation)


NEGATION = """
.decl link(a: symbol, b: symbol)
.decl firewall(h: symbol)
.decl infected(h: symbol)
.decl at_risk(h: symbol)
at_risk(h) :- infected(h).
at_risk(b) :- at_risk(a), link(a, b), !firewall(b).
"""


def test_retraction_through_recursion_keeps_the_surviving_derivation():
    session = datalog.Program(NEGATION).session()
    session.insert("link", ("a", "b"), ("b", "c"), ("a", "c"), ("c", "d"))
    session.insert("infected", ("a",))
    assert [p.fact for p in session.explain('at_risk("d")').premises] == \
        ['at_risk("c")', 'link("c", "d")']
    shortest = session.explain('at_risk("c")')
    assert shortest.height == 2 and 'link("a", "c")' in [p.fact for p in shortest.premises]
    delta = session.retract("link", ("a", "c"))
    assert not delta.retracted["at_risk"]   # at_risk("c") survives through b
    again = session.explain('at_risk("c")')
    assert again.height == 3
    assert [p.fact for p in again.premises] == ['at_risk("b")', 'link("b", "c")']
    delta = session.retract("link", ("b", "c"))
    change = delta.explain('at_risk("d")')
    assert str(change).splitlines()[:2] == ['at_risk("d") disappeared: -link("b", "c")',
                                            "derivation lost:"]
    assert 'link("b", "c")  input' in str(change)


def test_why_not_names_the_failing_step_and_negation():
    session = datalog.Program(NEGATION).session()
    session.insert("link", ("a", "b"), ("b", "c"))
    session.insert("infected", ("a",))
    session.insert("firewall", ("c",))
    assert str(session.why_not('at_risk("c")')).splitlines() == [
        'at_risk("c") does not hold:',
        ('  at_risk(h) :- infected(h).  <string>:6:1: no tuple matches infected("c") '
         "(step 1)"),
        ('  at_risk(b) :- at_risk(a), link(a, b), !firewall(b).  <string>:7:1: the negated '
         'atom fails: firewall("c") holds (step 3)')]
    assert str(session.why_not('at_risk("z")')).splitlines()[2].endswith(
        'no tuple matches link(_, "z") (step 2)')
    assert str(session.why_not('link("z", "a")')).splitlines()[1] == (
        "  no rule derives `link` and it is not among the inputs")
    change = session.retract("firewall", ("c",)).explain('at_risk("c")')
    assert str(change).splitlines()[0] == 'at_risk("c") appeared: -firewall("c")'


def test_explain_errors_are_clear():
    session = datalog.Program(NEGATION).session()
    session.insert("infected", ("a",))
    with pytest.raises(datalog.DataError, match=r'at_risk\("b"\) does not hold; '
                                                r"session.why_not"):
        session.explain('at_risk("b")')
    with pytest.raises(datalog.DataError, match=r'at_risk\("a"\) holds; session.explain'):
        session.why_not('at_risk("a")')
    with pytest.raises(datalog.DataError, match="not a fact: every argument"):
        session.explain("at_risk(x)")
    with pytest.raises(datalog.DatalogError, match="undefined relation `at_rsk`"):
        session.explain('at_rsk("a")')
    delta = session.insert("infected", ("b",))
    with pytest.raises(datalog.DataError, match=r'at_risk\("a"\) did not change'):
        delta.explain('at_risk("a")')
    session.insert("infected", ("c",))
    with pytest.raises(datalog.DataError, match="the session has moved on"):
        delta.explain('at_risk("b")')
    with pytest.raises(datalog.DataError, match="comes from no transaction"):
        datalog.Delta().explain('at_risk("b")')
