"""Recording a profile of a run: the engine's per-node figures
(:mod:`engine.profile`) told in the program's words (strata, rules, relations),
as one JSON document (``datalog run -p prof.json``).

The document (``"format": "datalog-profile"``, ``"version": 1``):

- ``program``, ``seconds`` (the whole run), ``phases`` (``[name, seconds]``:
  reading the inputs and compiling, evaluating, writing the outputs),
  ``peak_memory_kb`` (the process's peak resident memory), ``relations``
  (name -> rows at the end);
- ``strata``: in evaluation order, each with ``index``, ``relations``,
  ``recursive``, ``seconds`` and, for a recursive one, ``iterations``: one
  record per epoch and iteration with ``seconds``, ``tuples_in`` (rows entering
  its rules), ``tuples_out`` (rows its distinct operators emitted: new tuples),
  ``trace_rows`` (rows appended to its traces) and ``peak_memory_kb``;
- ``rules``: one entry per rule (its source text), and one per relation-level
  operator group (``path: distinct``, ``edge: index by (0,)``: the union,
  deduplication and indexes a relation's rules share), with ``relation``,
  ``stratum``, ``seconds``, ``calls``, ``tuples_in``, ``tuples_out``,
  ``trace_rows`` (rows appended to its traces), ``where`` (file:line) and
  ``iterations`` (``[epoch, iteration, seconds, tuples in, tuples out]``);
- ``nodes``: every evaluated node of the circuit: ``id`` (its global id, as
  ``datalog plan`` prints it), ``kind``, ``what``, ``label``, ``rule`` (the
  entry of ``rules`` it belongs to), ``stratum``, ``seconds``, ``calls``,
  ``tuples_in``, ``tuples_out``, ``trace_rows``, ``inputs`` and ``reads``
  (node ids), ``fused`` (labels of the nodes fused into it).
"""

from __future__ import annotations

import json
import os
import re
from time import perf_counter

from engine.node import ChildNode, Node
from engine.operators.distinct import DistinctNode, DistinctTraceNode
from engine.operators.join import TraceNode
from engine.operators.linear import LinearNode, PlusNode
from engine.profile import Profiler, peak_memory_kb

FORMAT = "datalog-profile"
VERSION = 1

_AGGREGATE_LABEL = re.compile(r"(?:count|sum|min|max|mean) \[(.*)\]", re.S)


class Recording:
    """A profile being recorded: create it before the session, ``attach`` it to
    the session's circuit before the first epoch, ``mark`` the end of each
    phase, then ``document()`` (or ``write(path)``)."""

    def __init__(self, program, path: str | os.PathLike | None = None):
        if path is not None:  # fail before the run, not after it wrote its outputs
            from datalog.errors import DatalogError

            folder = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(folder) or os.path.isdir(path):
                why = "it is a folder" if os.path.isdir(path) else f"no folder {folder}"
                raise DatalogError(f"cannot write the profile {os.fspath(path)}: {why}")
        self.program = program
        self.start = self.last = perf_counter()
        self.phases: list[list] = []
        self.profiler: Profiler | None = None
        self.compiled = None
        self.sizes: dict[str, int] = {}

    def attach(self, compiled) -> None:
        """Profile ``compiled`` (a CompiledProgram) from its next epoch on."""
        self.compiled = compiled
        self.profiler = Profiler(compiled.circuit).attach()
        self.mark("read inputs, compile")

    def mark(self, phase: str) -> None:
        """The phase ``phase`` ended now."""
        now = perf_counter()
        self.phases.append([phase, now - self.last])
        self.last = now

    def finish(self, session) -> None:
        """Note the relations' sizes and take the proxies out of the circuit."""
        self.sizes = {name: session.size(name) for name in self.program.plan.relations}
        if self.profiler is not None:
            self.profiler.detach()

    def write(self, path: str | os.PathLike) -> None:
        from datalog.errors import DatalogError

        try:
            with open(path, "w", encoding="utf-8") as f:
                json.dump(self.document(), f, separators=(",", ":"))
                f.write("\n")
        except OSError as error:
            raise DatalogError(f"cannot write the profile {os.fspath(path)}: "
                               f"{error.strerror}") from None

    # ------------------------------------------------------------ the document

    def document(self) -> dict:
        """The profile (module docstring) of what was recorded so far."""
        built = _Document(self.program.plan, self.profiler)
        nodes = built.nodes()
        rules = built.rules()
        return {
            "format": FORMAT, "version": VERSION, "program": self.program.path,
            "seconds": sum(seconds for _, seconds in self.phases), "phases": self.phases,
            "peak_memory_kb": peak_memory_kb(), "epochs": self.compiled.circuit.epoch,
            "relations": self.sizes, "strata": built.strata(rules), "rules": rules,
            "nodes": nodes,
        }


class _Document:
    """The engine's per-node figures in the program's words: which rule (or
    relation) each node works for, and the sums per rule and per stratum."""

    def __init__(self, plan, profiler: Profiler):
        self.plan, self.profiler, self.stats = plan, profiler, profiler.stats
        self.rule_plans = {rule.label: rule for rule in plan.rules()}
        self.consumers: dict[Node, list[Node]] = {n: [] for n in self.stats}
        readers: dict[Node, list[Node]] = {n: [] for n in self.stats}
        for node in self.stats:
            for other in node.inputs:
                if other in self.consumers:
                    self.consumers[other].append(node)
            for other in node.inputs + node.reads:
                if other in readers:
                    readers[other].append(node)
        self.owner, self.relation = self._attribute(readers)

    def _attribute(self, readers) -> tuple[dict, dict]:
        """Each node's owner (a rule's text, or ``relation: what`` for the work a
        relation's rules share) and relation."""
        stats, rules = self.stats, self.rule_plans
        rule_of: dict[Node, str | None] = {}
        for node in stats:
            labels = _labels(node, stats)
            if isinstance(node, TraceNode):  # the index of a rule's intermediate rows
                labels += _labels(node.inputs[0], stats)
            rule_of[node] = next((r for r in map(_rule_of_label, labels) if r in rules), None)
        owner: dict[Node, str] = {}
        relation: dict[Node, str | None] = {}
        for node in stats:
            rule = rule_of[node]
            relation[node] = _relation_of(node, self.plan.relations)
            if rule is None and (relation[node] is None or not node.label) \
                    and not isinstance(node, (PlusNode, TraceNode)) and node.kind == "operator":
                # unlabelled helpers (an aggregate's seeds and table, a map dropping
                # join keys) work for the one rule downstream of them
                rule = _downstream_rule(node, readers, rule_of)
            if rule is not None:
                owner[node], relation[node] = rule, rules[rule].relation
            else:
                owner[node] = f"{relation[node] or 'program'}: {_what(node)}"
        return owner, relation

    def stratum(self, node: Node) -> int | None:
        """The index of the stratum a node works for (``None``: the inputs)."""
        if node.circuit.nested:
            return next((k for k, s in enumerate(self.plan.strata)
                         if ", ".join(s.relations) == node.circuit.label), None)
        return next((k for k, s in enumerate(self.plan.strata)
                     if self.relation[node] in s.relations), None)

    def nodes(self) -> list[dict]:
        records = []
        for node, entry in self.stats.items():
            totals = entry.totals()
            seconds, tuples_in, tuples_out, calls, appended = totals
            record = {
                "id": _gid(node), "kind": node.kind, "what": _what(node),
                "label": node.label, "rule": self.owner[node], "stratum": self.stratum(node),
                "seconds": seconds, "calls": calls, "tuples_in": tuples_in,
                "tuples_out": tuples_out, "appended": appended,
                "trace_rows": _trace_rows(node, totals),
                "inputs": [_gid(n) for n in node.inputs if n in self.stats],
                "reads": [_gid(n) for n in node.reads if n in self.stats],
                "fused": [n.label or _what(n) for n in entry.absorbed],
            }
            if isinstance(node, ChildNode):
                record["child"] = node.child.label
            records.append(record)
        return records

    def rules(self) -> list[dict]:
        """One entry per owner, by time, longest first. A rule's tuples in are
        those entering its first nodes (fed by no node of the rule), its tuples
        out those leaving its last (read by no node of the rule)."""
        groups: dict[str, dict] = {}
        for node, entry in self.stats.items():
            if isinstance(node, ChildNode) or node.kind in ("source", "sink"):
                continue  # a child's time is its nodes'; sources and sinks do nothing
            name = self.owner[node]
            group = groups.get(name)
            if group is None:
                rule = self.rule_plans.get(name)
                group = groups[name] = {
                    "name": name, "kind": "rule" if rule else "relation",
                    "relation": self.relation[node], "stratum": self.stratum(node),
                    "where": str(rule.span) if rule is not None and rule.span else None,
                    "seconds": 0.0, "calls": 0, "tuples_in": 0, "tuples_out": 0,
                    "trace_rows": 0, "nodes": [], "by_time": {}}
            totals = entry.totals()
            group["seconds"] += totals[0]
            group["calls"] += totals[3]
            group["trace_rows"] += _trace_rows(node, totals) or 0
            group["nodes"].append(_gid(node))
            first = not any(self.owner.get(n) == name for n in node.inputs)
            last = not self.consumers[node] or any(
                self.owner.get(n) != name for n in self.consumers[node])
            for time, (seconds, tuples_in, tuples_out, _, _) in entry.by_time.items():
                cell = group["by_time"].setdefault(time, [0.0, 0, 0])
                cell[0] += seconds
                cell[1] += tuples_in if first else 0
                cell[2] += tuples_out if last else 0
            group["tuples_in"] += totals[1] if first else 0
            group["tuples_out"] += totals[2] if last else 0
        for group in groups.values():
            by_time = group.pop("by_time")
            group["iterations"] = [[e, i, *cell] for (e, i), cell in sorted(by_time.items())]
        return sorted(groups.values(), key=lambda g: -g["seconds"])

    def strata(self, rules: list[dict]) -> list[dict]:
        """Per stratum: its time (a recursive one's child circuit's, iterations
        included; else its rules'), and a recursive one's iterations."""
        children = {n.child.label: n for n in self.stats if isinstance(n, ChildNode)}
        records = []
        for k, s in enumerate(self.plan.strata):
            record = {"index": k, "relations": list(s.relations), "recursive": s.recursive,
                      "rules": len(s.rules), "seconds": 0.0, "iterations": []}
            node = children.get(", ".join(s.relations)) if s.recursive else None
            if node is not None:
                record["seconds"] = self.stats[node].totals()[0]
                record["iterations"] = _iterations(node.child, self.stats, self.profiler,
                                                   self.owner, self.rule_plans)
            else:
                record["seconds"] = sum(g["seconds"] for g in rules if g["stratum"] == k)
            records.append(record)
        return records


def _iterations(child, stats, profiler, owner, rules) -> list[dict]:
    """One record per (epoch, iteration) of a child circuit."""
    records = {}
    for epoch, i, seconds, peak in profiler.iterations.get(child, []):
        records[(epoch, i)] = {"epoch": epoch, "iteration": i, "seconds": seconds,
                               "tuples_in": 0, "tuples_out": 0, "trace_rows": 0,
                               "peak_memory_kb": peak}
    for node in child.nodes:
        entry = stats.get(node)
        if entry is None:
            continue
        rule_input = owner[node] in rules and not any(
            owner.get(n) == owner[node] for n in node.inputs)
        for (epoch, i), (_, t_in, t_out, _, appended) in entry.by_time.items():
            record = records.get((epoch, i))
            if record is None:
                continue
            if rule_input:
                record["tuples_in"] += t_in
            if isinstance(node, DistinctTraceNode):
                record["tuples_out"] += t_out
            record["trace_rows"] += appended
    return [records[k] for k in sorted(records)]


def _downstream_rule(node: Node, readers, rule_of) -> str | None:
    """The one rule the nodes reading ``node`` (transitively) serve, if one."""
    found, seen, todo = set(), {node}, list(readers[node])
    while todo and len(seen) < 64:
        other = todo.pop()
        if other in seen:
            continue
        seen.add(other)
        if rule_of.get(other) is not None:
            found.add(rule_of[other])
        elif other.kind == "operator":
            todo += readers.get(other, [])
    return found.pop() if len(found) == 1 else None


def _rule_of_label(label: str) -> str:
    """The rule text a compiler label names: ``<rule>  [what]`` or ``<kind> [<rule>]``."""
    found = _AGGREGATE_LABEL.fullmatch(label)
    if found:
        return found.group(1)
    return label.rsplit("  [", 1)[0]


def _labels(node: Node, stats) -> list[str]:
    entry = stats.get(node)
    return [node.label] + ([n.label for n in entry.absorbed] if entry else [])


def _relation_of(node: Node, relations, depth: int = 0) -> str | None:
    """The relation a node that serves no one rule works for: its own label, or
    that of the node it reads."""
    name = getattr(node, "name", None) or node.label.split(" where ")[0]
    if name in relations:
        return name
    upstream = node.inputs[:1] or node.reads[:1]
    if upstream and depth < 8:
        return _relation_of(upstream[0], relations, depth + 1)
    return None


def _what(node: Node) -> str:
    """A node's operation in a few words."""
    if node.kind != "operator":
        return node.kind
    if isinstance(node, TraceNode):
        args = node.describe_args()
        return "index by " + (args.removeprefix("trace index_by")
                              if "index_by" in args else "a computed key")
    if isinstance(node, (DistinctNode, DistinctTraceNode)):
        return "distinct"
    if isinstance(node, PlusNode):
        return "union"
    if isinstance(node, LinearNode):
        stages = [kind for kind, _ in node.stages]
        return " + ".join(dict.fromkeys(stages)) + (" + index" if node.index else "")
    return node.describe_args() or type(node).__name__.removesuffix("Node").lower()


def _trace_rows(node: Node, totals: list) -> int | None:
    """Rows appended to the node's trace (before compaction), if it keeps one:
    a join index counts them itself; a distinct appends its input (in a child,
    as it evaluates; in the root, when the epoch ends)."""
    if isinstance(node, TraceNode):
        return node.appended
    if isinstance(node, DistinctTraceNode):
        return totals[1]
    if isinstance(node, DistinctNode):
        return totals[4]
    return None


def _gid(node: Node) -> str:
    return ".".join(map(str, node.global_id))
