"""The parser: every construct of the dialect, its AST and its spans."""

from __future__ import annotations

import time

import pytest

from datalog.errors import ParseError
from datalog.syntax.ast import (
    Aggregate,
    Atom,
    BinaryOp,
    Comparison,
    Constant,
    Directive,
    Functor,
    Negation,
    Span,
    UnaryOp,
    Variable,
    Wildcard,
)
from datalog.syntax.parser import MAX_ALTERNATIVES, MAX_DEPTH, parse, parse_file


def body(text: str, decls: str = "") -> tuple:
    """The literals of the single alternative of the single rule in ``text``."""
    rule = parse(decls + text).rules[0]
    assert len(rule.body) == 1
    return rule.body[0]


def term(text: str):
    """The right-hand side of ``x = <text>`` in a rule body."""
    (comparison,) = body(f"p(x) :- x = {text}.")
    return comparison.right


# ---------------------------------------------------------------- declarations


def test_relation_declaration_with_all_primitive_types():
    (decl,) = parse(".decl r(a: number, b: unsigned, c: float, d: symbol)").relations
    assert decl.name == "r"
    assert [(a.name, a.type) for a in decl.attributes] == [
        ("a", "number"), ("b", "unsigned"), ("c", "float"), ("d", "symbol")]
    assert decl.span == Span("<string>", 1, 1, 1, 53)
    assert decl.attributes[1].span == Span("<string>", 1, 20, 1, 31)


def test_several_relations_in_one_declaration():
    program = parse(".decl a, b,c(x: number, y: symbol) brie output")
    assert [(d.name, [a.type for a in d.attributes], d.qualifiers) for d in program.relations] \
        == [("a", ["number", "symbol"], ("brie",)), ("b", ["number", "symbol"], ("brie",)),
            ("c", ["number", "symbol"], ("brie",))]
    assert [d.span for d in program.relations] == [
        Span("<string>", 1, 1, 1, 47), Span("<string>", 1, 10, 1, 47),
        Span("<string>", 1, 12, 1, 47)]
    assert [(d.kind, d.relations) for d in program.directives] == [
        ("output", ("a",)), ("output", ("b",)), ("output", ("c",))]
    with pytest.raises(ParseError, match="attribute `x` is declared twice in `a`"):
        parse(".decl a, b(x: number, x: number)")


def test_nullary_relation():
    program = parse(".decl flag()\nflag().\nok() :- flag().")
    assert program.relations[0].arity == 0
    assert program.facts[0].atom.args == ()
    assert program.rules[0].body[0][0] == Atom("flag", (), None)


@pytest.mark.parametrize("qualifiers", [("brie",), ("btree",), ("eqrel",), ("inline",),
                                        ("btree", "no_magic"), ("overridable",)])
def test_qualifiers(qualifiers):
    text = f".decl r(a: number, b: number) {' '.join(qualifiers)}\nr(1, 2)."
    program = parse(text)
    assert program.relations[0].qualifiers == qualifiers
    assert len(program.facts) == 1


def test_legacy_io_qualifiers_become_directives():
    program = parse(".decl r(a: number) input output")
    assert program.relations[0].qualifiers == ()
    assert [(d.kind, d.relations) for d in program.directives] == [
        ("input", ("r",)), ("output", ("r",))]


def test_qualifier_words_can_name_relations():
    program = parse(".decl r(a: number)\ninput(1).\noutput(x) :- input(x).")
    assert program.facts[0].atom.relation == "input"
    assert program.rules[0].heads[0].relation == "output"


def test_type_declarations():
    program = parse(".type Id <: number\n.type Name = symbol\n.type Any = Id | Other\n"
                    ".number_type N\n.symbol_type S")
    kinds = [(t.name, t.kind, t.bases) for t in program.types]
    assert kinds == [("Id", "subtype", ("number",)), ("Name", "equivalent", ("symbol",)),
                     ("Any", "union", ("Id", "Other")), ("N", "subtype", ("number",)),
                     ("S", "subtype", ("symbol",))]


def test_io_directives_with_parameters():
    program = parse('.decl r(a: number)\n.input r(IO=file, filename="r.tsv", '
                    'delimiter="\\t", headers=true, rfc4180=false)\n.output r, s(IO=stdout)\n'
                    '.printsize r')
    inp, out_r, out_s, size = program.directives
    assert inp == Directive("input", ("r",), (("IO", "file"), ("filename", "r.tsv"),
                                              ("delimiter", "\t"), ("headers", "true"),
                                              ("rfc4180", "false")), None)
    assert inp.param("filename") == "r.tsv" and inp.param("missing", "x") == "x"
    assert (out_r.relations, out_r.params) == (("r",), ())
    assert (out_s.relations, out_s.params) == (("s",), (("IO", "stdout"),))
    assert size.kind == "printsize"
    assert parse(".decl r(a: number)\n.output r").relations_with("output") == ["r"]


def test_pragma_and_plan():
    program = parse('.pragma "legacy" "on"\n.pragma "flag"\n.decl e(x: number)\n'
                    "p(x) :- e(x), e(x).\n.plan 0:(1,2), 1:(2,1)")
    assert [(p.key, p.value) for p in program.pragmas] == [("legacy", "on"), ("flag", "")]
    (plan,) = program.plans
    assert plan.orders == ((0, (1, 2)), (1, (2, 1)))
    assert plan.span.line == 5


# ---------------------------------------------------------------- facts and rules


def test_facts_and_literals():
    program = parse('r(1, -2, 0x1F, 0b101, 7u, 1.5, -2.5e3, "a\\"b\\n").')
    values = [(a.value, a.type) for a in program.facts[0].atom.args]
    assert values == [(1, "number"), (-2, "number"), (31, "number"), (5, "number"),
                      (7, "unsigned"), (1.5, "float"), (-2500.0, "float"), ('a"b\n', "symbol")]


def test_unknown_escape_is_kept():
    (fact,) = parse(r'r("a\.b").').facts
    assert fact.atom.args[0].value == r"a\.b"


def test_rule_with_several_heads():
    rule = parse("a(x), b(x) :- c(x).").rules[0]
    assert [h.relation for h in rule.heads] == ["a", "b"]
    assert len(list(rule.clauses())) == 2


def test_negation_wildcard_and_comparisons():
    literals = body("p(x) :- e(x, _), !f(x), x = 1, x != 2, x < 3, x <= 4, x > 5, x >= 6.")
    assert isinstance(literals[0].args[1], Wildcard)
    assert literals[1] == Negation(Atom("f", (Variable("x", None),), None), None)
    assert [c.op for c in literals[2:]] == ["=", "!=", "<", "<=", ">", ">="]
    assert literals[1].span == Span("<string>", 1, 18, 1, 23)


def test_disjunction_is_put_in_normal_form():
    rule = parse("p(x) :- a(x), (b(x) ; c(x)), (d(x) ; e(x)).").rules[0]
    assert [[lit.relation for lit in alt] for alt in rule.body] == [
        ["a", "b", "d"], ["a", "b", "e"], ["a", "c", "d"], ["a", "c", "e"]]
    rule = parse("p(x) :- a(x) ; b(x), c(x) ; (d(x)).").rules[0]
    assert [[lit.relation for lit in alt] for alt in rule.body] == [["a"], ["b", "c"], ["d"]]


def test_disjunction_size_is_limited():
    text = "p(x) :- " + ", ".join(f"(a{i}(x) ; b{i}(x))" for i in range(11)) + "."
    assert 2 ** 11 > MAX_ALTERNATIVES
    with pytest.raises(ParseError, match="alternatives"):
        parse(text)


def test_constraints_and_negated_comparisons():
    literals = body('p(s) :- e(s), contains("a", s), !match("b.*", s), !(s = "c"), '
                    "!contains(s, s).")
    assert [(c.op, c.left.value) for c in literals[1:3]] == [("contains", "a"),
                                                              ("not_match", "b.*")]
    assert literals[3].op == "!="
    assert literals[4].op == "not_contains"


def test_a_call_before_less_or_equal_is_a_comparison():
    # `<=` after a call once lexed as the `<=` of a subsumption head.
    literals = body("p(x) :- e(x, y), min(x, y) <= x, 0 + to_number(\"1\") <= x, "
                    "max(x, y) >= x.")
    assert [c.op for c in literals[1:]] == ["<=", "<=", ">="]
    assert isinstance(literals[1].left, Functor) and literals[1].left.name == "min"


def test_parenthesized_comparison_in_body():
    (lit,) = body("p(x) :- (x = 1).")
    assert isinstance(lit, Comparison) and lit.op == "="


# ---------------------------------------------------------------- terms


def test_arithmetic_precedence():
    t = term("-2 ^ 2 * 3 + 4 band 5 lor 1")
    # ((((-(2^2)) * 3) + 4) band 5) lor 1
    assert t.op == "lor"
    band = t.left
    assert band.op == "band"
    plus = band.left
    assert plus.op == "+" and plus.right.value == 4
    times = plus.left
    assert times.op == "*" and times.right.value == 3
    neg = times.left
    assert isinstance(neg, UnaryOp) and neg.op == "-" and neg.operand.op == "^"


def test_power_is_right_associative_and_binds_unary_operand():
    t = term("2 ^ 3 ^ 2")
    assert t.op == "^" and t.right.op == "^"
    t = term("2 ^ -1")
    assert t.op == "^" and t.right == Constant(-1, "number", None)


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "%", "^", "band", "bor", "bxor", "bshl",
                                "bshr", "bshru", "land", "lor", "lxor"])
def test_every_binary_operator(op):
    t = term(f"y {op} 2")
    assert isinstance(t, BinaryOp) and t.op == op


@pytest.mark.parametrize("op", ["-", "bnot", "lnot"])
def test_every_unary_operator(op):
    t = term(f"{op} y")
    assert isinstance(t, UnaryOp) and t.op == op


def test_left_associativity_and_parentheses():
    t = term("10 - 2 - 3")
    assert t.op == "-" and t.left.op == "-"
    t = term("10 - (2 - 3)")
    assert t.op == "-" and t.right.op == "-"


@pytest.mark.parametrize("name,arity", [("cat", 3), ("strlen", 1), ("substr", 3),
                                        ("ord", 1), ("to_number", 1), ("to_string", 1),
                                        ("to_float", 1), ("to_unsigned", 1), ("min", 2),
                                        ("max", 2), ("range", 2)])
def test_functors(name, arity):
    args = ", ".join(f"a{i}" for i in range(arity))
    t = term(f"{name}({args})")
    assert isinstance(t, Functor) and t.name == name and len(t.args) == arity


def test_user_functor():
    t = term("@f(1, y)")
    assert t.name == "@f" and len(t.args) == 2


@pytest.mark.parametrize("kind", ["sum", "min", "max", "mean"])
def test_aggregates_with_target(kind):
    t = term(f"{kind} y : {{ e(y, z), z > 1 }}")
    assert isinstance(t, Aggregate) and t.kind == kind
    assert t.target == Variable("y", None)
    assert [type(lit).__name__ for lit in t.body] == ["Atom", "Comparison"]


def test_count_and_single_atom_forms():
    t = term("count : { e(_, _) }")
    assert t.kind == "count" and t.target is None and len(t.body) == 1
    t = term("count : e(y, _)")
    assert t.body == (Atom("e", (Variable("y", None), Wildcard(None)), None),)
    t = term("sum y + 1 : e(y)")
    assert t.target.op == "+"
    assert t.span == Span("<string>", 1, 13, 1, 29)


def test_min_max_as_functor_or_aggregate():
    assert isinstance(term("min(1, 2)"), Functor)
    assert isinstance(term("min y : e(y)"), Aggregate)


def test_comments_are_ignored():
    program = parse("// line\n/* block\n comment */ .decl r(a: number) // after\nr(1). /**/")
    assert program.relations[0].span.line == 3
    assert len(program.facts) == 1


def test_spans_point_at_source():
    program = parse("\n  p(x) :-\n    q(x, 10).", "f.dl")
    rule = program.rules[0]
    assert rule.span == Span("f.dl", 2, 3, 3, 14)
    atom = rule.body[0][0]
    assert atom.span == Span("f.dl", 3, 5, 3, 13)
    assert atom.args[1].span == Span("f.dl", 3, 10, 3, 12)


# ---------------------------------------------------------------- preprocessor


def test_define_object_and_function_like_macros():
    program = parse("#define N 10\n#define SQ(a) ((a) * (a))\n#define LONG 1 + \\\n  2\n"
                    "p(x) :- x = SQ(N), x = LONG.\n")
    first, second = program.rules[0].body[0]
    assert first.right.op == "*" and first.right.left.value == 10
    assert second.right.op == "+"
    assert program.rules[0].span.line == 5
    assert first.right.span == Span("<string>", 5, 13, 5, 18)  # the macro call


def test_macros_are_not_expanded_in_strings_or_comments():
    program = parse('#define N 10\nr("N"). // N\nr(N). /* N */')
    assert [f.atom.args[0].value for f in program.facts] == ["N", 10]


def test_macro_is_not_expanded_inside_itself():
    program = parse("#define x x + 1\np(y) :- q(y), y = x.")
    comparison = program.rules[0].body[0][1]
    assert comparison.right.op == "+" and comparison.right.left.name == "x"


def test_conditionals_and_undef():
    text = ("#define A\n#ifdef A\nr(1).\n#else\nr(2).\n#endif\n#undef A\n"
            "#ifndef A\nr(3).\n#endif\n")
    assert [f.atom.args[0].value for f in parse(text).facts] == [1, 3]


def test_include_relative_to_including_file(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "decls.dl").write_text(
        '#define ROOT 7\n.decl e(x: number)\n#include "facts.dl"\n')
    (tmp_path / "lib" / "facts.dl").write_text("e(ROOT).\n")
    main = tmp_path / "main.dl"
    main.write_text('e(1).\n#include "lib/decls.dl"\ne(ROOT).\n')
    program = parse_file(main)
    facts = [(f.atom.args[0].value, f.span.path, f.span.line) for f in program.facts]
    assert facts == [(1, str(main), 1), (7, str(tmp_path / "lib" / "facts.dl"), 1),
                     (7, str(main), 3)]
    assert [path for path, _ in program.sources] == [
        str(main), str(tmp_path / "lib" / "decls.dl"), str(tmp_path / "lib" / "facts.dl")]


def test_include_guard_allows_repeated_include(tmp_path):
    (tmp_path / "d.dl").write_text("#ifndef D\n#define D\n.decl e(x: number)\n#endif\n")
    main = tmp_path / "m.dl"
    main.write_text('#include "d.dl"\n#include "d.dl"\n')
    assert len(parse_file(main).relations) == 1


def test_parse_file_errors(tmp_path):
    with pytest.raises(ParseError, match="cannot read"):
        parse_file(tmp_path / "missing.dl")
    bad = tmp_path / "bad.dl"
    bad.write_bytes(b"r(\xff).")
    with pytest.raises(ParseError, match="cannot read"):
        parse_file(bad)


# ---------------------------------------------------------------- limits


def test_deep_nesting_is_an_error_not_a_crash():
    with pytest.raises(ParseError, match="nested too deeply"):
        parse("p(x) :- q(x), x = " + "-" * 5000 + "x.")
    with pytest.raises(ParseError, match="nested too deeply"):
        parse("p(x) :- q(" + "f(" * (MAX_DEPTH + 5) + "x" + ")" * (MAX_DEPTH + 5) + ").")
    # Redundant parentheses do not nest.
    assert parse("p(x) :- " + "(" * 3000 + "q(x)" + ")" * 3000 + ".").rules


def test_error_carries_place():
    with pytest.raises(ParseError) as info:
        parse("p(x) :-\n  q(x", "f.dl")
    assert (info.value.path, info.value.line) == ("f.dl", 2)


def test_parsing_time_grows_linearly_with_the_program():
    """Ten times the lines cost about ten times the CPU time (a quadratic step
    would make it a hundred); CPU time of one process, so a loaded machine
    slows both sizes alike."""
    def cpu_seconds(n: int) -> float:
        lines = [".decl edge(x: number, y: number)", ".decl path(x: number, y: number)"]
        for i in range(n):
            lines.append(f"edge({i}, {i + 1}).")
            lines.append(f"path(x, z) :- path(x, y), edge(y, z), x != {i}.")
        text = "\n".join(lines)
        start = time.process_time()
        program = parse(text)
        elapsed = time.process_time() - start
        assert len(program.facts) == n and len(program.rules) == n
        return elapsed

    cpu_seconds(50)   # warm: the grammar is loaded once
    small, large = min(cpu_seconds(500) for _ in range(3)), cpu_seconds(5000)
    assert large < 30 * small, (small, large)


def test_include_errors_name_the_include(tmp_path):
    (tmp_path / "bin.dl").write_bytes(b"\xff\xfe")
    (tmp_path / "dir.dl").mkdir()
    for target, reason in (("bin.dl", "codec can't decode"), ("dir.dl", "directory"),
                           ("nope.dl", "No such file")):
        main = tmp_path / "main.dl"
        main.write_text(f'.decl a(x: number)\n#include "{target}"\n')
        with pytest.raises(ParseError, match=reason) as info:
            parse_file(main)
        assert (info.value.path, info.value.line, info.value.column) == (str(main), 2, 10)


def test_include_depth_is_limited(tmp_path):
    for i in range(70):
        (tmp_path / f"f{i}.dl").write_text(f'#include "f{i + 1}.dl"\n')
    (tmp_path / "f70.dl").write_text("a(1).\n")
    with pytest.raises(ParseError, match="nests more than 64 files deep"):
        parse_file(tmp_path / "f0.dl")
    assert parse_file(tmp_path / "f20.dl").facts[0].span.path == str(tmp_path / "f70.dl")


def test_every_syntax_error_is_reported_once():
    text = "a(1) a(2).\nb(x) :- c(x.\nd(1).\ne(1) :- .\n"
    with pytest.raises(ParseError) as info:
        parse(text, "f.dl")
    assert [(d.span.line, d.span.column) for d in info.value.diagnostics] == [
        (1, 6), (2, 12), (4, 9)]


def test_syntax_errors_are_capped():
    from datalog.syntax.parser import MAX_SYNTAX_ERRORS
    with pytest.raises(ParseError) as info:
        parse("a(1) b.\n" * 100)
    assert len(info.value.diagnostics) == MAX_SYNTAX_ERRORS


# ---------------------------------------------------------------- #if, -M, -I


def _values(text: str, **options) -> list:
    return [f.atom.args[0].value for f in parse(text, **options).facts]


@pytest.mark.parametrize("expression, expected", [
    ("1 + 2 * 3 == 7", True), ("(1 + 2) * 3 == 7", False), ("0x10 == 16", True),
    ("-7 / 2 == -3 && -7 % 2 == -1", True), ("~0 == -1 && !5 == 0 && +3 == 3", True),
    ("1 << 4 == 16 && 256 >> 4 == 16", True), ("3 & 5 ^ 1 | 8", True),
    ("2 < 3 && 3 <= 3 && 4 > 3 && 3 >= 4", False), ("1 != 1 || 0", False),
    ("0 && 1 / 0", False), ("1 || 1 % 0", True), ("1 ? 0 : 1 / 0", False),
    ("0 ? 1 : 2 ? 3 : 0", True), ("UNKNOWN", False), ("UNKNOWN + 1", True),
    ("defined(N) && defined N && !defined(M)", True), ("N * 2 == 8", True),
    ("SQ(N) == 16", True), ("SQ(1 + 1) == 4 /* c */ // d", True),
    ("9223372036854775807 + 1 < 0", True),  # 64-bit arithmetic, as intmax_t
])
def test_if_expressions(expression, expected):
    text = f"#define N 4\n#define SQ(a) ((a) * (a))\n#if {expression}\nr(1).\n#endif\n"
    assert _values(text) == ([1] if expected else [])


def test_if_elif_else_take_the_first_true_branch():
    text = "#if X == 1\nr(1).\n#elif X == 2\nr(2).\n#elif X >= 2\nr(3).\n#else\nr(4).\n#endif\n"
    assert [_values(f"#define X {x}\n" + text) for x in (1, 2, 3, 0)] == [[1], [2], [3], [4]]


def test_conditionals_nest_and_a_false_branch_is_not_read():
    text = ("#if 1\n#ifdef A\nr(1).\n#elif 1\nr(2).\n#endif\n#else\n"
            "#if 1 / 0\nr(3).\n#elif @\n#endif\n#endif\n")
    assert _values(text) == [2]
    assert _values("#define A\n" + text) == [1]


def test_if_keeps_line_numbers():
    program = parse("#if 0\nr(1).\n#else\nr(2).\n#endif\nr(3).\n")
    assert [f.span.line for f in program.facts] == [4, 6]


@pytest.mark.parametrize("text, message, column", [
    ("#if 1 +\n#endif", "the expression ends early", 8),
    ("#if 2 / (1 - 1)\n#endif", "division by zero", 7),
    ("#define Z 0\n#if 4 % Z\n#endif", "division by zero", 7),
    ("#if (1\n#endif", "expected `)`", 7),
    ("#if 1 2\n#endif", "unexpected `2`", 7),
    ("#if 1 ? 2\n#endif", "expected `:`", 10),
    ("#if 1 @ 2\n#endif", "unexpected character `@`", 7),
    ("#if defined(\n#endif", "`defined` needs a macro name", 5),
    ("#if\n#endif", "`#if` needs an expression", 1),
    ("#if 1 << 64\n#endif", "shift by 64", 7),
    ("#if 1\n#else\n#elif 1\n#endif", "`#elif` after `#else`", 1),
    ("#if 1\n#else\n#else\n#endif", "`#else` after `#else`", 1),
    ("#elif 1\n", "`#elif` without `#if`", 1),
    ("#if 0\n", "`#if` without `#endif`", 1),
])
def test_if_errors_are_located(text, message, column):
    with pytest.raises(ParseError) as info:
        parse(text, "p.dl")
    [d] = info.value.diagnostics
    assert message in d.message and d.span.column == column, str(info.value)


def test_macros_from_outside():
    text = "#if defined(DEBUG) && LEVEL > 1\nr(LEVEL).\n#endif\nr(NAME).\n"
    assert _values(text, macros={"DEBUG": True, "LEVEL": 3, "NAME": '"x"'}) == [3, "x"]
    assert _values(text, macros={"LEVEL": "2", "NAME": "7"}) == [7]
    with pytest.raises(ParseError, match="bad macro name"):
        parse(text, macros={"1X": 1})
    with pytest.raises(ParseError, match="one-line string or an integer"):
        parse(text, macros={"X": [1]})


def test_include_dirs_are_searched_after_the_including_folder(tmp_path):
    for folder, value in (("here", 1), ("one", 2), ("two", 3)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "lib.dl").write_text(f"r({value}).\n")
    (tmp_path / "two" / "only.dl").write_text("r(4).\n")
    main = tmp_path / "here" / "main.dl"
    main.write_text('#include "lib.dl"\n#include <lib.dl>\n#include "only.dl"\n')
    dirs = [tmp_path / "one", str(tmp_path / "two")]
    assert [f.atom.args[0].value for f in parse_file(main, include_dirs=dirs).facts] == \
        [1, 2, 4]
    main.write_text('#include "only.dl"\n')
    with pytest.raises(ParseError, match="cannot read included file `only.dl`"):
        parse_file(main)
    main.write_text("#include <lib.dl>\n")
    with pytest.raises(ParseError, match="cannot read included file `lib.dl`"):
        parse_file(main)
