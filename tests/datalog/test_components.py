"""Components (``.comp``, ``.init``, ``.override``), as Soufflé's documentation
describes them: what each documented construct evaluates to (expected rows written
by hand from the documentation), and instances kept incrementally: random programs
wrapped in a component and instantiated twice behave, transaction by transaction,
exactly as the plain program does on each instance's inputs, and as a from-scratch
run."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import datalog
from datalog.syntax.parser import parse
from tests.datalog.differential import programs, transactions

# (program, {relation: rows}) written from souffle-lang.github.io/components.
DOCUMENTED = {
    "instances_and_qualified_facts": ("""
        .comp Answer {
            .type small = number
            .decl value(x: small)
            value(42).
        }
        .init first = Answer
        .init second = Answer
        second.value(33).
        .decl all(x: number)
        all(x) :- first.value(x).
        all(x) :- second.value(x).
        """, {"all": {(33,), (42,)}, "first.value": {(42,)}, "second.value": {(33,), (42,)}}),
    "unqualified_names_resolve_outside": ("""
        .decl out(x: number)
        .comp A {
            .decl r(x: number)
            .comp Counter {
                r(1).
                r(x + 1) :- r(x), x < 5.
            }
            .init counter = Counter
            out(x) :- r(x).
        }
        .init a = A
        """, {"out": {(1,), (2,), (3,), (4,), (5,)}, "a.r": {(1,), (2,), (3,), (4,), (5,)}}),
    "component_parameter_selects_a_component": ("""
        .decl chosen(x: number)
        .comp Case<Selector> {
            .comp One { chosen(1). }
            .comp Two { chosen(2). }
            .init selection = Selector
        }
        .init c = Case<Two>
        """, {"chosen": {(2,)}}),
    "type_parameters": ("""
        .comp Holder<T> {
            .decl item(x: T)
            item(42).
        }
        .init ints = Holder<number>
        .init reals = Holder<float>
        .init naturals = Holder<unsigned>
        """, {"ints.item": {(42,)}, "reals.item": {(42.0,)}, "naturals.item": {(42,)}}),
    "inheritance_passes_types_relations_and_rules": ("""
        .comp Base {
            .type amount = number
            .decl answer(x: amount)
            answer(42).
        }
        .comp Sub : Base {
            .decl asked(n: amount)
            asked(n + 1) :- answer(n).
        }
        .init s = Sub
        """, {"s.answer": {(42,)}, "s.asked": {(43,)}}),
    "override_drops_the_base_clauses": ("""
        .comp Base {
            .decl r(x: number) overridable
            r(1).
            r(x + 1) :- r(x), x < 5.
        }
        .comp Sub : Base {
            .override r
            r(2).
            r(x + 1) :- r(x), x < 4.
        }
        .init plain = Base
        .init sub = Sub
        """, {"plain.r": {(1,), (2,), (3,), (4,), (5,)}, "sub.r": {(2,), (3,), (4,)}}),
    "override_through_an_intermediate_base": ("""
        .comp Base {
            .decl r(x: number) overridable
            r(1).
        }
        .comp Middle : Base {
            .decl s(x: number)
            s(x) :- r(x).
        }
        .comp Top : Middle {
            .override r
            r(7).
        }
        .init m = Middle
        .init t = Top
        """, {"m.r": {(1,)}, "m.s": {(1,)}, "t.r": {(7,)}, "t.s": {(7,)}}),
    "several_bases_and_parameters_passed_on": ("""
        .comp Nodes<N> {
            .decl node(x: N)
        }
        .comp Edges<N> {
            .decl edge(x: N, y: N)
        }
        .comp Graph<K> : Nodes<K>, Edges<K> {
            node(x) :- edge(x, _) ; edge(_, x).
        }
        .init g = Graph<symbol>
        g.edge("a", "b").
        """, {"g.node": {("a",), ("b",)}, "g.edge": {("a", "b")}}),
    "a_parameter_as_the_base": ("""
        .comp Ones { .decl one(x: number) one(1). }
        .comp Wrapper<T> : T { .decl two(x: number) two(x + 1) :- one(x). }
        .init w = Wrapper<Ones>
        """, {"w.one": {(1,)}, "w.two": {(2,)}}),
    "nested_instances_and_dotted_names": ("""
        .comp Inner {
            .decl r(x: number)
            r(1).
        }
        .comp Outer<T> {
            .init in = Inner
            .decl s(x: T)
            s(x + 1) :- in.r(x).
        }
        .init a = Outer<number>
        .decl t(x: number)
        t(x) :- a.in.r(x) ; a.s(x).
        """, {"a.in.r": {(1,)}, "a.s": {(2,)}, "t": {(1,), (2,)}}),
    "outer_type_parameter_inside_a_nested_component": ("""
        .comp Typed<T> {
            .comp Box { .decl item(x: T) }
            .init box = Box
        }
        .init text = Typed<symbol>
        text.box.item("x").
        """, {"text.box.item": {("x",)}}),
    "a_relation_filled_by_the_consumer": ("""
        .comp Reachability {
            .decl edge(u: number, v: number)
            .decl reach(u: number, v: number)
            reach(u, v) :- edge(u, v).
            reach(u, w) :- reach(u, v), edge(v, w).
        }
        .decl road(a: number, b: number)
        road(1, 2). road(2, 3).
        .init net = Reachability
        net.edge(a, b) :- road(a, b).
        """, {"net.reach": {(1, 2), (2, 3), (1, 3)}}),
    "an_instance_type_named_outside": ("""
        .comp Ids {
            .type id <: number
            .decl known(x: id)
            known(7).
        }
        .init ids = Ids
        .decl copy(x: ids.id)
        copy(x) :- ids.known(x).
        """, {"copy": {(7,)}}),
    "component_rules_extend_an_outer_relation": ("""
        .decl seen(x: symbol)
        .comp Source<V> {
            .decl value(x: V)
            value("v").
            seen(x) :- value(x).
        }
        .init one = Source<symbol>
        .init two = Source<symbol>
        one.value("only one").
        """, {"seen": {("v",), ("only one",)}}),
}


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_documented_semantics(name):
    text, expected = DOCUMENTED[name]
    session = datalog.Program(text).session()
    for relation, rows in expected.items():
        assert session.query(relation) == rows, relation


def test_declarations_and_directives_are_renamed():
    module = parse("""
        .comp C<T> {
            .type id <: T
            .type either = id | symbol
            .decl r(x: id, y: either)
            .input r(filename="r.tsv")
            .output r
            .printsize other
        }
        .init c = C<number>
        .decl other(x: number)
    """)
    assert [(t.name, t.bases) for t in module.types] == \
        [("c.id", ("number",)), ("c.either", ("c.id", "symbol"))]
    decl = module.relation("c.r")
    assert [a.type for a in decl.attributes] == ["c.id", "c.either"]
    assert [(d.kind, d.relations, d.params) for d in module.directives] == [
        ("input", ("c.r",), (("filename", "r.tsv"),)), ("output", ("c.r",), ()),
        ("printsize", ("other",), ())]
    assert list(datalog.Program(".comp C { .decl r(x: number) }\n.init c = C").relations) == ["c.r"]


def test_errors_point_into_the_component():
    with pytest.raises(datalog.DatalogError) as error:
        datalog.Program(".comp C<T> {\n  .decl r(x: T)\n  r(\"a\").\n}\n.init c = C<number>\n")
    text = str(error.value)
    assert text.startswith("<string>:3:5: error:") and "`c.r`" in text


def test_an_uninstantiated_component_contributes_nothing():
    program = datalog.Program(".comp C { .decl r(x: number) r(1). r(x) :- nothing(x). }")
    assert list(program.relations) == []


def test_the_api_names_instance_relations_with_dots():
    program = datalog.Program("""
        .comp Graph {
            .decl edge(x: number, y: number)
            .decl reach(x: number, y: number)
            reach(x, y) :- edge(x, y).
            reach(x, z) :- reach(x, y), edge(y, z).
        }
        .init g = Graph
    """)
    session = program.session()
    seen = []
    handle = session.subscribe("g.reach", seen.append)
    delta = session.insert("g.edge", (1, 2), (2, 3))
    assert delta.inserted["g.reach"] == {(1, 2), (2, 3), (1, 3)}
    assert session.query("g.reach(1, x)") == {(1, 2), (1, 3)}
    assert seen and seen[0].inserted["g.reach"] == {(1, 2), (2, 3), (1, 3)}
    handle.close()
    with pytest.raises(datalog.DatalogError, match=r"did you mean `g\.reach`"):
        session.query("g.rech(1, x)")
    with pytest.raises(datalog.DatalogError, match="did you mean `g.edge`"):
        session.insert("g.edg", (1, 2))
    with pytest.raises(datalog.DatalogError):
        session.query("g.reach(\"a\", x)")
    assert session.query("g.reach") == {(1, 2), (2, 3), (1, 3)}   # failures changed nothing


# ---------------------------------------------------------------- incremental


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), transactions(max_transactions=8), st.randoms(use_true_random=False))
def test_two_instances_equal_the_plain_program_and_a_run_from_scratch(text, txs, random):
    """Each instance of a component holding ``text`` answers as ``text`` itself
    does on that instance's inputs, after every transaction (rows and deltas),
    and equals a session built from scratch on the current inputs."""
    wrapped = ".comp P {\n" + text + "}\n.init a = P\n.init b = P\n"
    program = datalog.Program(wrapped)
    session = program.session()
    plain = {name: datalog.Program(text).session() for name in "ab"}
    inputs: dict[str, set] = {}
    for tx in txs:
        routed = [(random.choice("ab"), op, relation, row) for op, relation, row in tx]
        with session.transaction() as t:
            for instance, op, relation, row in routed:
                getattr(t, op)(f"{instance}.{relation}", row)
        for instance in "ab":
            with plain[instance].transaction() as p:
                for where, op, relation, row in routed:
                    if where == instance:
                        getattr(p, op)(relation, row)
                        rows = inputs.setdefault(f"{instance}.{relation}", set())
                        (rows.add if op == "insert" else rows.discard)(row)
            for name in plain[instance].program.relations:
                qualified = f"{instance}.{name}"
                assert session.query(qualified) == plain[instance].query(name), (qualified, text)
                assert t.delta.inserted[qualified] == p.delta.inserted[name], (qualified, text)
                assert t.delta.retracted[qualified] == p.delta.retracted[name], (qualified, text)
    scratch = program.session()
    with scratch.transaction() as s:
        for relation, rows in inputs.items():
            for row in rows:
                s.insert(relation, row)
    for name in program.relations:
        assert scratch.query(name) == session.query(name), (name, wrapped)


def test_each_syntax_error_in_a_component_is_reported_once():
    """The parser resumes after a broken clause; a fact read on its own line
    before the next error must not shift where it resumes (it reported the `}`
    twice)."""
    text = (".comp A {\n  .decl r(x: number)\n  r(x) :- .\n  r(1).\n}\n.init a = A\n"
            ".decl q(x: number)\nq(x) :- a.r(x)\n")
    with pytest.raises(datalog.DatalogError) as error:
        parse(text, "p.dl")
    places = [(d.span.line, d.span.column) for d in error.value.diagnostics]
    assert places == [(3, 11), (5, 1), (8, 15)]


def test_an_error_met_by_several_instances_is_reported_once():
    text = ".comp A {\n  .init inner = Nope\n}\n.init a = A\n.init b = A\n"
    with pytest.raises(datalog.DatalogError) as error:
        parse(text, "p.dl")
    assert [(d.span.line, d.message) for d in error.value.diagnostics] == \
        [(2, "unknown component `Nope`")]


@pytest.mark.parametrize("text, message", [
    (".comp A { " * 3000 + "}" * 3000, "components nest more than 100 levels deep"),
    (".comp C0 { .decl r(x: number) }\n" + "".join(
        f".comp C{i} : C{i - 1} {{ }}\n" for i in range(1, 300)) + ".init a = C299\n",
     "instances and bases nest more than 100 deep"),
    (".comp C0 { .decl r(x: number) }\n" + "".join(
        f".comp C{i} {{ .init i = C{i - 1} }}\n" for i in range(1, 300)) + ".init a = C299\n",
     "instances and bases nest more than 100 deep"),
], ids=["declarations", "bases", "instances"])
def test_deep_nesting_is_a_located_error(text, message):
    with pytest.raises(datalog.DatalogError) as error:
        parse(text, "p.dl")
    assert [d.message for d in error.value.diagnostics] == [message]
    assert error.value.diagnostics[0].span.line >= 1


def test_facts_read_on_their_own_lines_stay_in_their_component(monkeypatch):
    """Facts on lines of their own skip the LALR parser, also directly inside a
    top-level component; they must end up where the grammar puts them."""
    text = ('.comp A {\n.decl r(x: number)\nr(1).\nr(2).\n.comp B {\n r(3).\n r(4).\n}\n'
            '.init b = B\nr(5).\n}\n.init a = A\na.r(6).\n.comp C { .decl s(x: symbol) }\n'
            '.init c = C\nc.s("x").\n')
    fast = parse(text)
    from datalog.syntax import parser
    monkeypatch.setattr(parser, "split_facts", lambda text, path, columns: (text, []))
    slow = parse(text)
    assert fast == slow
    assert [(f.atom.relation, f.span) for f in fast.facts] == \
        [(f.atom.relation, f.span) for f in slow.facts]
    assert sorted(f.atom.args[0].value for f in fast.facts if f.atom.relation == "a.r") == \
        [1, 2, 3, 4, 5, 6]


def test_an_include_inside_a_component_belongs_to_it(tmp_path):
    """``#include`` is textual in Soufflé: the included clauses are the
    component's own (Doop-style programs assemble components this way)."""
    (tmp_path / "body.dl").write_text(
        ".decl edge(x: number, y: number)\nedge(1, 2).\n.decl reach(x: number, y: number)\n"
        "reach(x, y) :- edge(x, y).\nreach(x, z) :- reach(x, y), edge(y, z).\n")
    (tmp_path / "main.dl").write_text(
        '.comp Graph {\n  .comp Inner {\n#include "body.dl"\n  }\n  .init in = Inner\n}\n'
        ".init g = Graph\n.init h = Graph\nh.in.edge(2, 3).\n")
    session = datalog.Program.from_file(tmp_path / "main.dl").session()
    assert session.query("g.in.reach") == {(1, 2)}
    assert session.query("h.in.reach") == {(1, 2), (2, 3), (1, 3)}
    (tmp_path / "body.dl").write_text('.decl r(x: number)\nr("a").\n')
    with pytest.raises(datalog.DatalogError) as error:
        datalog.Program.from_file(tmp_path / "main.dl")
    assert str(error.value).startswith(f"{tmp_path / 'body.dl'}:2:3: error:")


def test_type_parameters_reach_record_fields_adt_branches_and_casts():
    program = datalog.Program("""
.comp Box<T> {
  .type Pair = [a: T, b: T]
  .decl in(x: T, y: T)
  .decl p(r: Pair)
  .decl back(x: T)
  .decl cast(x: T)
  p([x, y]) :- in(x, y).
  back(y) :- p([_, y]).
  cast(as(x, T)) :- in(x, _).
}
.comp Shapes<T> {
  .type Shape = Circle {r: T} | Square {s: T}
  .decl in(x: T)
  .decl sh(s: Shape)
  sh($Square(x)) :- in(x).
}
.init nb = Box<number>
.init sb = Box<symbol>
.init shapes = Shapes<symbol>
""")
    session = program.session()
    session.insert("nb.in", (1, 2), (3, 4))
    session.insert("sb.in", ("a", "b"))
    session.insert("shapes.in", ("a",))
    assert session.query("nb.back(x)") == {(2,), (4,)}
    assert session.query("sb.back(x)") == {("b",)}
    assert session.query("shapes.sh(x)") == {(("Square", "a"),)}
    assert session.query("nb.cast(x)") == {(1,), (3,)}
    session.retract("nb.in", (1, 2))
    assert session.query("nb.p(x)") == {((3, 4),)}


def test_an_adt_in_a_component_instantiated_twice_names_its_branches_twice():
    """Branch names are global (as in Soufflé): two instances of a component
    declaring an ADT declare each branch twice, a located error."""
    with pytest.raises(datalog.CheckError, match="branch `Circle` is also a branch of"):
        datalog.Program(".comp S<T> {\n  .type Shape = Circle {r: T}\n}\n"
                        ".init a = S<number>\n.init b = S<symbol>\n")
