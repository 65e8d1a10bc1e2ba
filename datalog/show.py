"""The program as the engine sees it (``datalog run --show=WHAT``, after
Soufflé's ``--show``): the transformed Datalog, the relational plan, the
circuit.

>>> from datalog.api import Program
>>> program = Program('.decl e(a: number, b: number) eqrel\\n.input e\\n'
...                   '.decl p(x: number)\\n.output p\\np(x) :- e(x, 1).\\n')
>>> print(show(program, "transformed-datalog"))
.decl e(a: number, b: number)
.decl p(x: number)
.input e
.output p
<BLANKLINE>
// stratum 0: e (recursive)
e(x, x) :- e(x, _).
e(y, x) :- e(x, y).
e(x, z) :- e(x, y), e(y, z).
<BLANKLINE>
// stratum 1: p
p(x) :- e(x, 1).
"""

from __future__ import annotations

from datalog.backends.circuit.compile import compile_plan
from datalog.dialect.io import format_value
from datalog.plan.choice import choice_text

WHATS = ("transformed-datalog", "plan", "circuit")


def show(program, what: str) -> str:
    """``program`` (a :class:`~datalog.api.Program`) as ``what`` (one of
    :data:`WHATS`)."""
    if what == "transformed-datalog":
        return transformed_datalog(program.plan)
    if what == "plan":
        return program.describe()
    if what == "circuit":
        return compile_plan(program.plan).circuit.describe()
    raise ValueError(f"unknown view `{what}` (expected one of {', '.join(WHATS)})")


def transformed_datalog(plan) -> str:
    """The program after the front end's transformations (``eqrel`` rules,
    disjunctions split, constants folded), as Datalog: declarations (with the
    primitive types the user types resolve to), I/O, facts, then the rules stratum by
    stratum, in evaluation order."""
    lines = []
    for rel in plan.relations.values():
        columns = ", ".join(f"{a}: {t}" for a, t in zip(rel.attributes, rel.types))
        choice = plan.choices.get(rel.name)
        lines.append(f".decl {rel.name}({columns})" +
                     (f" {choice_text(rel.attributes, choice)}" if choice else ""))
    for kind, directives in (("input", plan.inputs), ("output", plan.outputs),
                             ("printsize", plan.printsize)):
        lines += [f".{kind} {io.relation}" for io in directives]
    for name, rows in plan.facts.items():
        if rows:
            lines.append("")
            lines += [f"{name}({', '.join(_constant(v) for v in row)})."
                      for row in sorted(rows, key=repr)]
    for k, stratum in enumerate(plan.strata):
        kind = " (recursive)" if stratum.recursive else ""
        lines += ["", f"// stratum {k}: {', '.join(stratum.relations)}{kind}"]
        lines += [rule.label for rule in stratum.rules]
        lines += [plan.rule.label for plan in stratum.subsumptions]
    return "\n".join(lines)


def _constant(value) -> str:
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return f'"{escaped}"'
    return format_value(value)
