"""No input, however malformed, makes the front end fail with anything but a
:class:`DatalogError`: random text, random sequences of the dialect's tokens, and
random (often wrong) programs built from its constructs."""

from __future__ import annotations

import os
from itertools import pairwise

import networkx as nx
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from datalog.analysis.check import check
from datalog.analysis.frontend import load
from datalog.analysis.stratify import dependency_graph, stratify
from datalog.errors import DatalogError
from datalog.syntax.parser import parse

# DATALOG_FUZZ=long: a longer campaign (see tests/datalog/test_fuzz_io.py)
FUZZ = settings(max_examples=int(os.environ.get(
                    "DATALOG_FUZZ_EXAMPLES",
                    "5000" if os.environ.get("DATALOG_FUZZ") == "long" else "150")),
                deadline=None, suppress_health_check=[HealthCheck.too_slow])

TOKENS = [
    ".decl", ".type", ".input", ".output", ".printsize", ".pragma", ".plan", ".functor",
    ".number_type", "(", ")", "{", "}", ",", ".", ":", ":-", ";", "!", "_", "=", "!=", "<",
    "<=", ">", ">=", "<:", "|", "+", "-", "*", "/", "%", "^", "@", "band", "bor", "bxor",
    "bshl", "bshr", "bshru", "land", "lor", "lxor", "bnot", "lnot", "count", "sum", "min",
    "max", "mean", "cat", "strlen", "substr", "contains", "match", "range", "to_number",
    "number", "unsigned", "float", "symbol", "brie", "btree", "eqrel", "input", "output",
    "IO", "file", "filename", "x", "y", "z", "_x", "r", "s", "edge", "path", "T", "0", "1",
    "42", "-7", "0x1F", "0b10", "3u", "1.5", "2e3", '"a"', '"b\\n"', '"', "'", "//c\n",
    "/*", "*/", "/* c */", "\n", " ", "\t", "#include \"nope.dl\"\n", "#define N 3\n",
    "#define F(a) (a+1)\n", "#ifdef N\n", "#endif\n", "#else\n", "N", "F(", "[", "]", "&",
    "$", "é",
]


def pipeline(text: str) -> None:
    """Parse, check and stratify ``text``; only DatalogError may escape."""
    try:
        program = parse(text, "fuzz.dl")
    except DatalogError as e:
        assert str(e).startswith("fuzz.dl") or "fuzz.dl" in str(e) or e.path is None
        return
    diagnostics = check(program)
    for d in diagnostics:
        d.format(dict(program.sources))
    try:
        stratify(program)
    except DatalogError:
        pass
    try:
        load(text, "fuzz.dl")
    except DatalogError:
        pass


@FUZZ
@given(st.text(max_size=200))
@example("p(x) :- " + "(" * 2000)
@example("p(x) :- q(x), x = " + "bnot " * 2000 + "1.")
@example('#define A A B\n#define B A\np(A).')
@example("#define F(x) F(x)\np(F(1)).")
@example("a(1). /* unterminated")
def test_random_text(text):
    pipeline(text)


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=60))
@example([".decl", "r", "(", "x", ":", "number", ")", "r", "(", "1", ")", "."])
@example(["r", "(", "count", ":", "{", "r", "(", "x", ")", "}", ")", ":-", "r", "(", "x",
          ")", "."])
def test_random_token_sequences(tokens):
    pipeline(" ".join(tokens))


# ---------------------------------------------------------------- random programs

NAMES = ["a", "b", "c", "d"]
TYPES = ["number", "symbol", "float", "unsigned", "Id", "Name"]
VARS = ["x", "y", "z", "_", "_w"]


@st.composite
def terms(draw, depth=0):
    options = ["var", "num", "str"] + (["op", "functor", "agg"] if depth < 2 else [])
    kind = draw(st.sampled_from(options))
    if kind == "var":
        return draw(st.sampled_from(VARS))
    if kind == "num":
        return str(draw(st.integers(-5, 5)))
    if kind == "str":
        return '"s"'
    if kind == "op":
        op = draw(st.sampled_from(["+", "-", "*", "band", "^", "%"]))
        return f"({draw(terms(depth + 1))} {op} {draw(terms(depth + 1))})"
    if kind == "functor":
        name = draw(st.sampled_from(["cat", "strlen", "min", "to_string", "range", "nope"]))
        args = draw(st.lists(terms(depth + 1), min_size=1, max_size=3))
        return f"{name}({', '.join(args)})"
    agg = draw(st.sampled_from(["count :", "sum x :", "min y :", "max x :", "mean x :"]))
    return f"{agg} {{ {draw(atoms(depth + 1))} }}"


@st.composite
def atoms(draw, depth=0):
    name = draw(st.sampled_from(NAMES))
    args = draw(st.lists(terms(depth + 1) if depth < 2 else st.sampled_from(VARS),
                         min_size=0, max_size=3))
    return f"{name}({', '.join(args)})"


@st.composite
def literals(draw):
    kind = draw(st.sampled_from(["atom", "atom", "neg", "cmp", "disj"]))
    if kind == "atom":
        return draw(atoms())
    if kind == "neg":
        return "!" + draw(atoms())
    if kind == "cmp":
        op = draw(st.sampled_from(["=", "!=", "<", ">=", "contains", "match"]))
        left, right = draw(terms()), draw(terms())
        return f"{op}({left}, {right})" if op.isalpha() else f"{left} {op} {right}"
    return f"({draw(atoms())} ; {draw(atoms())})"


@st.composite
def programs(draw):
    lines = [".type Id <: number", ".type Name = symbol"]
    for name in NAMES:
        arity = draw(st.integers(0, 3))
        types = [draw(st.sampled_from(TYPES)) for _ in range(arity)]
        quals = draw(st.sampled_from(["", " brie", " eqrel"]))
        lines.append(f".decl {name}({', '.join(f'c{i}: {t}' for i, t in enumerate(types))})"
                     + quals)
    lines.append(f".input {draw(st.sampled_from(NAMES))}")
    for _ in range(draw(st.integers(1, 5))):
        head = draw(atoms(depth=2))
        body = draw(st.lists(literals(), min_size=1, max_size=4))
        lines.append(f"{head} :- {', '.join(body)}.")
    for _ in range(draw(st.integers(0, 2))):
        lines.append(draw(atoms(depth=1)) + ".")
    return "\n".join(lines)


@FUZZ
@given(programs())
def test_random_programs(text):
    pipeline(text)
    try:
        checked = load(text, "fuzz.dl")
    except DatalogError:
        return
    # A loaded program's strata are in dependency order and hold every clause once.
    position = {name: i for i, s in enumerate(checked.strata) for name in s.relations}
    graph = dependency_graph(checked.program)
    for source, target in graph.edges:
        assert position[source] <= position[target]
        if graph.edges[source, target]["kind"] != "positive":
            assert position[source] < position[target]
    clauses = [c for s in checked.strata for c in s.clauses]
    assert len(clauses) == sum(len(list(r.clauses())) for r in checked.program.rules)
    for stratum in checked.strata:
        for head, _ in stratum.clauses:
            assert head.relation in stratum.relations
        assert stratum.recursive == (len(stratum.relations) > 1 or any(
            graph.has_edge(n, n) for n in stratum.relations))
    assert nx.is_directed_acyclic_graph(nx.condensation(graph))


@FUZZ
@given(st.lists(st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=False,
                allow_infinity=False, width=32).map(lambda f: round(f, 3)),
                st.text(alphabet='ab"\\n .', max_size=5)), min_size=1, max_size=4))
def test_fast_fact_path_equals_grammar(values):
    """A fact on its own line (read by the fast path) and the same fact after a
    declaration (read by the grammar) give the same AST and columns."""
    def literal(v):
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
        return repr(v)
    line = f"r({', '.join(literal(v) for v in values)})."
    fast = parse(line).facts[0]
    slow = parse(".decl r()\n" + line).facts[0]
    assert fast == slow
    assert [(a.value, a.type) for a in fast.atom.args] == [(v, "symbol") if isinstance(v, str)
                                                         else (v, type(v).__name__.replace(
                                                             "int", "number"))
                                                         for v in values]
    pairs = zip(fast.atom.args + (fast.atom, fast), slow.atom.args + (slow.atom, slow))
    for a, b in pairs:
        assert (a.span.column, a.span.end_column) == (b.span.column, b.span.end_column)
        assert (a.span.line, b.span.line) == (1, 2)


@st.composite
def valid_programs(draw):
    """Programs that pass every check except, perhaps, stratification: binary
    number relations, rules whose variables are all bound by construction."""
    names = [f"r{i}" for i in range(5)]
    lines = [f".decl {n}(a: number, b: number)" for n in names] + [".input r0"]
    for _ in range(draw(st.integers(1, 7))):
        atoms_ = draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from("xyz"),
                                         st.sampled_from("xyz")), min_size=1, max_size=3))
        bound = sorted({v for _, a, b in atoms_ for v in (a, b)})
        body = [f"{r}({a}, {b})" for r, a, b in atoms_]
        extra = draw(st.sampled_from(["", "neg", "cmp", "agg"]))
        if extra == "neg":
            body.append(f"!{draw(st.sampled_from(names))}({draw(st.sampled_from(bound))}, _)")
        elif extra == "cmp":
            body.append(f"{draw(st.sampled_from(bound))} < {draw(st.sampled_from(bound))} + 1")
        elif extra == "agg":
            body.append(f"n = count : {{ {draw(st.sampled_from(names))}"
                        f"({draw(st.sampled_from(bound))}, _) }}")
            bound.append("n")
        head = f"{draw(st.sampled_from(names[1:]))}({draw(st.sampled_from(bound))}, " \
               f"{draw(st.sampled_from(bound))})"
        lines.append(f"{head} :- {', '.join(body)}.")
    return "\n".join(lines)


@FUZZ
@given(valid_programs())
def test_valid_programs_stratify_or_name_a_real_cycle(text):
    program = parse(text, "fuzz.dl")
    assert [d for d in check(program) if d.severity == "error"] == []
    graph = dependency_graph(program)
    try:
        strata = stratify(program)
    except DatalogError as e:
        for d in e.diagnostics:
            cycle = d.message.split(": ", 1)[1].split(" -> ")
            names = [step.replace("!", "").replace("aggregate over ", "") for step in cycle]
            for dependent, dependency in pairwise(names):
                assert graph.has_edge(dependency, dependent)
            assert any(step != name for step, name in zip(cycle, names))
            assert names[0] == names[-1]
        return
    position = {name: i for i, s in enumerate(strata) for name in s.relations}
    for source, target, kind in graph.edges(data="kind"):
        assert position[source] < position[target] or (
            position[source] == position[target] and kind == "positive")
