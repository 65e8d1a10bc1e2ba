"""One iteration of a child circuit after the first, as one generated function.

A loop that adds a row per iteration spends most of an iteration's time in the
scheduler, not in the operators: walking the node list, asking each node
whether it has something to do, calling the structural nodes. So the child
circuit compiles its later iterations (``i > 0``) into straight-line code, the
way fused linear chains and join loops are compiled (:mod:`engine.codegen`).
For a child of a counter ``c(n + 1) :- c(n), bound(b), n < b.``::

    def iteration(i):
        n0.out = n0.held              # Feedback c: what its source gave at i - 1
        e2(i)                         # the join (it may hold work: always evaluated)
        n2.out = n1.out or EMPTY      # plus: its other input, an Import, is empty
        e5(i)                         # distinct_trace
        n0.held = n3.out or EMPTY     # the iteration is over: the Feedback keeps it
        if n0.out: s1(1, i)           # the trace of c appends the batch
        if n3.out: x0()               # the Export adds it to the epoch difference
        return n0.held                # whether a Feedback carries data

What it leaves out is what the generic loop would skip: Imports (empty after
iteration 0), ``quiet`` nodes whose inputs are all empty (no code at all when
every input is an Import), their ``clock_stop(1, i)`` likewise; a plus
(``sum_of_inputs``) with one input that is not an Import is that input. Nodes that may
hold work for a later iteration are always evaluated; the circuit asks them
for it (``pending()``) between iterations, only when no Feedback carries data.
A failing ``evaluate`` is found from the line of the traceback
(:func:`failed_node`), so the straight line pays nothing for naming it.
"""

from __future__ import annotations

from engine.codegen import build_function
from engine.node import Feedback
from engine.zset import EMPTY


def quiet_inputs(node) -> tuple | None:
    """The inputs whose all being empty lets the circuit skip ``node`` (a
    ``quiet`` node with inputs that holds no work for later), else ``None``."""
    if (getattr(node, "quiet", False) and getattr(node, "inputs", None)
            and not node.may_hold_work):
        return tuple(node.inputs)
    return None


class Iteration:
    """The generated ``iteration(i)`` of a child circuit, and which node each
    line evaluates (for :func:`failed_node`).

    ``evaluated`` and ``stoppers`` are the circuit's lists (nodes or a
    profiler's proxies), ``feedbacks`` the pairs ``(Feedback, source)`` the
    loop moves itself, ``exports`` the pairs ``(Export, inner node)``,
    ``check`` the memory budget's check (``None``: no budget).
    """

    def __init__(self, evaluated, stoppers, feedbacks, exports, imports, check=None):
        env: dict = {"EMPTY": EMPTY}
        names: dict[int, str] = {}

        def name(node) -> str:
            found = names.get(id(node))
            if found is None:
                found = names[id(node)] = f"n{len(names)}"
                env[found] = node
            return found

        empty = {id(node) for node in imports}  # empty in every later iteration
        moved = {id(node) for node, _ in feedbacks}
        self.feedbacks, self.moved = feedbacks, moved
        lines = ["def iteration(i):"]
        lines += [f"    {name(node)}.out = {name(node)}.held" for node, _ in feedbacks]
        self.lines: dict[int, object] = {}  # line number -> the node it evaluates
        for k, node in enumerate(evaluated):
            if id(node) in empty or id(node) in moved:
                continue
            env[f"e{k}"] = node.evaluate
            call = [f"e{k}(i)"] + (["check()"] if check is not None else [])
            inputs = quiet_inputs(node)
            if inputs is None:
                for text in call:
                    self.lines[len(lines) + 1] = node
                    lines.append(f"    {text}")
                continue
            live = [source for source in inputs if id(source) not in empty]
            if not live:
                lines.append(f"    {name(node)}.out = EMPTY")
                continue
            if len(live) == 1 and getattr(node, "sum_of_inputs", False):
                # a plus whose other inputs are Imports: its one live input
                lines.append(f"    {name(node)}.out = {name(live[0])}.out or EMPTY")
                continue
            lines.append("    if " + " or ".join(f"{name(s)}.out" for s in live) + ":")
            for text in call:
                self.lines[len(lines) + 1] = node
                lines.append(f"        {text}")
            lines += ["    else:", f"        {name(node)}.out = EMPTY"]
        lines += [f"    {name(node)}.held = {name(source)}.out or EMPTY"
                  for node, source in feedbacks]
        for k, node in enumerate(stoppers):
            if id(node) in moved:
                continue
            env[f"s{k}"] = node.clock_stop
            inputs = quiet_inputs(node)
            if inputs is None:
                lines.append(f"    s{k}(1, i)")
                continue
            live = [source for source in inputs if id(source) not in empty]
            if live:
                lines.append("    if " + " or ".join(f"{name(s)}.out" for s in live)
                             + f": s{k}(1, i)")
        for k, (export, inner) in enumerate(exports):
            env[f"x{k}"] = export.accumulate
            lines.append(f"    if {name(inner)}.out: x{k}()")
        if feedbacks:
            lines.append("    return " + " or ".join(f"{name(node)}.held"
                                                    for node, _ in feedbacks))
        else:
            lines.append("    return False")
        if check is not None:
            env["check"] = check
        self.source = "\n".join(lines)
        self.run = build_function("iteration", lines, env)

    def failed_node(self, error: BaseException):
        """The node whose ``evaluate`` raised ``error`` in ``run``, or ``None``
        (it came from a ``clock_stop`` or an Export, which the circuit does not
        wrap)."""
        code = self.run.__code__
        tb = error.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code is code:
                return self.lines.get(tb.tb_lineno)
            tb = tb.tb_next
        return None


def moved_feedbacks(stoppers) -> list:
    """The Feedbacks among ``stoppers`` (not a profiler's proxies), with their
    sources: the loop moves their batches without calling them."""
    return [(node, node.reads[0]) for node in stoppers if type(node) is Feedback]
