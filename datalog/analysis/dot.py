"""The precedence graph of a program as Graphviz DOT text (``datalog graph``).

Each relation is a node; an edge ``q -> p`` says a rule for ``p`` reads ``q``.
Strata are clusters, numbered in dependency order and marked when recursive.
Negative edges are dashed and labelled ``!``, aggregate edges dotted and
labelled with the aggregate; an edge that breaks stratification (negation or
aggregation inside a recursive component) is drawn red.

>>> from datalog.syntax.parser import parse
>>> print(precedence_dot(parse('''.decl e(x: number)
... .decl p(x: number)
... p(x) :- e(x), !p(x).''')))
digraph precedence {
  rankdir=LR;
  node [shape=box, fontname="monospace"];
  subgraph cluster_0 {
    label="stratum 0";
    "e";
  }
  subgraph cluster_1 {
    label="stratum 1 (recursive)";
    "p";
  }
  "e" -> "p";
  "p" -> "p" [style=dashed, label="!", color=red, penwidth=2];
}
"""

from __future__ import annotations

from datalog.analysis.stratify import components, dependencies
from datalog.analysis.transforms.eqrel import expand_eqrel
from datalog.syntax.ast import Module


def _quote(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def precedence_dot(program: Module) -> str:
    """The dependency graph of ``program`` (``eqrel`` expanded) as DOT text."""
    graph = dependencies(expand_eqrel(program))
    lines = ["digraph precedence {", "  rankdir=LR;",
             '  node [shape=box, fontname="monospace"];']
    stratum_of: dict[str, int] = {}
    for index, (names, recursive) in enumerate(components(graph)):
        label = f"stratum {index}" + (" (recursive)" if recursive else "")
        lines += [f"  subgraph cluster_{index} {{", f'    label="{label}";']
        for name in names:
            stratum_of[name] = index
            lines.append(f"    {_quote(name)};")
        lines.append("  }")
    for source, target in sorted(graph.edges):
        kind = graph.edges[source, target]["kind"]
        attrs = []
        if kind == "negative":
            attrs += ["style=dashed", 'label="!"']
        elif kind == "aggregate":
            attrs += ["style=dotted", 'label="aggregate"']
        if kind != "positive" and stratum_of[source] == stratum_of[target]:
            attrs += ["color=red", "penwidth=2"]
        suffix = f" [{', '.join(attrs)}]" if attrs else ""
        lines.append(f"  {_quote(source)} -> {_quote(target)}{suffix};")
    lines.append("}")
    return "\n".join(lines)
