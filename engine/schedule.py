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
        if n0.out: a1(n0.out, i)      # the trace of c appends the batch (append_at)
        if n3.out: x0()               # the Export adds it to the epoch difference
        return n0.held                # whether a Feedback carries data

What it leaves out is what the generic loop would skip: Imports (empty after
iteration 0), ``quiet`` nodes whose inputs are all empty (no code at all when
every input is an Import), their ``clock_stop(1, i)`` likewise (a Trace
node's is its ``append_at``, called with the batch); a plus
(``sum_of_inputs``) with one input that is not an Import is that input. Nodes that may
hold work for a later iteration are always evaluated; the circuit asks them
for it (``pending()``) between iterations, only when no Feedback carries data.
A failing ``evaluate`` is found from the line of the traceback
(:func:`failed_node`), so the straight line pays nothing for naming it.

While a Feedback carries data the circuit asks nothing between iterations,
so ``Iteration.loop`` runs them all in one call: the body above in a
``while``, the join's and the Distinct Trace's few-row paths written inline
(their ``loop_lines``: ``evaluate`` only when those do not apply; the
join asks an unchanging right trace's cursors once, not every iteration).
The lines ``a1(...)`` and ``x0()`` above are written out too (in both
functions) for a one-row batch going to a log's typed arrays: a key-less
trace's (``TraceNode.append_lines``) and an Export's
(``Export.accumulate_lines``).
A counter went from ~41 calls an iteration to ~32 with that, the Distinct
Trace's ``ready`` step and the direct ``append_at`` (cProfile of
counter-100000's batch: 4.09 -> 3.25 M calls, builtins counted). Holding the
trace appends and the Exports' additions in lists, made in bulk, took ~10
calls more an iteration off but under 3% of counter-1000000's batch CPU
(``python -m benchmarks.profile_engine counter-1000000 --cpu``, alternated,
medians: 3.11 s with the lists, 3.19 s without): not worth their code. Python
calls are cheap in 3.11; a call from C is not (``None in map(pack, rows)``
was slower than a method looping over them), and an Export's log appended to
inline did not measure faster than its ``accumulate`` call.

Nor did two more inlines: the Distinct Trace's ``few_rows`` body (its step
function called from the loop, the sealed trace's ``fits`` as ``pack`` on
each row: four calls an iteration to two) and a Trace node's append of a
one-row batch to a log trace's arrays (``append_at`` and ``append_rows``
to none). Both paths were taken (``append_at`` called for 20,025 of
counter-100000's 100,001 iterations, ``few_rows`` for 1,571), yet
counter-1000000's batch CPU, six rounds alternated with the loop without
them: 2,361-2,425 ms (median 2,388) against 2,322-2,444 (median 2,380).
What an iteration costs is the work on the state, not the calls to it:
with the Distinct's step made ``dict(batch)`` (wrong answers, no trace
kept) counter-300000's batch took 375-400 ms instead of 650-730, with the
step only appending the row to the trace's dict 620-660 ms (a noisy
machine: that split is rough); with the trace node's ``append_at`` made a
no-op (no log kept) an iteration went from 1.86 to 1.45 us. What did pay
is less work inside the Distinct's step for one row: its cursors' names
bound once an epoch and part, no output dict built for the step and read
back (``DistinctTraceNode.loop_lines``, ``one_row_lines``: 2.47 -> 2.08 s).
Likewise the join's thin path as a closure made once a loop call over the
unchanging right trace's cursors (``NestedJoinNode.loop_lines``,
``left_thin``: 2.06 -> 1.98 s, five rounds alternated, medians), and then
the one-row append to a log trace's arrays with their ``append`` bound once
a log (``TraceNode.append_lines``: 1.97 -> 1.92 s, ten rounds, lower in
each), and the same for an Export's log (``Export.accumulate_lines``: 1.92
-> 1.82 s, five rounds, lower in each): less work per row, where the
inlined ``append_at`` above was only fewer calls.
"""

from __future__ import annotations

from engine.codegen import build_function
from engine.node import Export, Feedback, Node
from engine.zset import EMPTY


def quiet_inputs(node) -> tuple | None:
    """The inputs whose all being empty lets the circuit skip ``node`` (a
    ``quiet`` node with inputs that holds no work for later), else ``None``."""
    if (getattr(node, "quiet", False) and getattr(node, "inputs", None)
            and not node.may_hold_work):
        return tuple(node.inputs)
    return None


class Iteration:
    """The generated ``iteration(i)`` of a child circuit, its ``loop`` (or
    ``None``), and which node each line evaluates (for :func:`failed_node`).

    ``evaluated`` and ``stoppers`` are the circuit's lists (nodes or a
    profiler's proxies), ``feedbacks`` the pairs ``(Feedback, source)`` the
    loop moves itself, ``exports`` the pairs ``(Export, inner node)``,
    ``check`` the memory budget's check (``None``: no budget).

    ``loop(i, limit)`` runs the iterations ``i + 1, i + 2, ...`` in one
    call while a Feedback carries data (the loop of
    :meth:`~engine.circuit.ChildCircuit.run_epoch` then asks no node
    anything), up to ``limit`` (``None``: none); it returns the last iteration
    run and whether a Feedback still carries data (it stopped at ``limit``).
    Made only without a memory budget and without a profiler's proxies.
    """

    def __init__(self, evaluated, stoppers, feedbacks, exports, imports, check=None):
        self.env: dict = {"EMPTY": EMPTY}
        self.names: dict[int, str] = {}
        self.empty = {id(node) for node in imports}  # empty in every later iteration
        self.moved = {id(node) for node, _ in feedbacks}
        self.feedbacks = feedbacks
        record: dict = {}
        setup: list[str] = []
        body = self._body(evaluated, stoppers, exports, check, "    ", record, setup)
        lines = ["def iteration(i):"] + [f"    {text}" for text in setup]
        self.lines = {index + len(lines) + 1: node for index, node in record.items()}
        lines += body
        lines.append("    return " + self._data())
        self.source = "\n".join(lines)
        if check is not None:
            self.env["check"] = check
        self.run = build_function("iteration", lines, self.env)
        self.loop = None
        self.loop_lines: dict[int, object] = {}
        if (check is None and feedbacks
                and all(isinstance(node, Node) for node in (*evaluated, *stoppers))):
            self.loop = self._loop(evaluated, stoppers, exports)

    def name(self, node) -> str:
        found = self.names.get(id(node))
        if found is None:
            found = self.names[id(node)] = f"n{len(self.names)}"
            self.env[found] = node
        return found

    def _data(self) -> str:
        """Whether a Feedback carries data to the next iteration."""
        return " or ".join(f"{self.name(node)}.held" for node, _ in self.feedbacks) or "False"

    def _body(self, evaluated, stoppers, exports, check, ind: str, record: dict,
              setup: list[str]) -> list[str]:
        """One iteration's lines. A node with a fast path (``loop_lines``)
        takes it when it can. ``record``: index of a line in the body -> the
        node it evaluates; ``setup``: the statements to run before (names the
        fast paths bind once a call), each once."""
        name, env, empty, moved = self.name, self.env, self.empty, self.moved
        lines = [f"{ind}{name(node)}.out = {name(node)}.held" for node, _ in self.feedbacks]

        def call(k: int, node, at: str) -> list[str]:
            return [f"{at}e{k}(i)"] + ([f"{at}check()"] if check is not None else [])

        def add(block: list[str], node) -> None:
            for text in block:
                record[len(lines)] = node
                lines.append(text)

        for k, node in enumerate(evaluated):
            if id(node) in empty or id(node) in moved:
                continue
            env[f"e{k}"] = node.evaluate
            fast = getattr(node, "loop_lines", None)
            if fast is not None:
                wanted: list[str] = []
                found = fast(name, env, self.empty, ind, call(k, node, ind + "    "), wanted)
                setup += [text for text in wanted if text not in setup]
                if found is not None:
                    add(found, node)
                    continue
            inputs = quiet_inputs(node)
            if inputs is None:
                add(call(k, node, ind), node)
                continue
            live = [source for source in inputs if id(source) not in empty]
            if not live:
                lines.append(f"{ind}{name(node)}.out = EMPTY")
                continue
            if len(live) == 1 and getattr(node, "sum_of_inputs", False):
                # a plus whose other inputs are Imports: its one live input
                lines.append(f"{ind}{name(node)}.out = {name(live[0])}.out or EMPTY")
                continue
            add([f"{ind}if " + " or ".join(f"{name(s)}.out" for s in live) + ":",
                 *call(k, node, ind + "    "),
                 f"{ind}else:", f"{ind}    {name(node)}.out = EMPTY"], node)
        lines += [f"{ind}{name(node)}.held = {name(source)}.out or EMPTY"
                  for node, source in self.feedbacks]
        for k, node in enumerate(stoppers):
            if id(node) in moved:
                continue
            inputs = quiet_inputs(node)
            live = None if inputs is None else [s for s in inputs if id(s) not in empty]
            if live == []:
                continue
            append = getattr(node, "append_at", None) if isinstance(node, Node) else None
            if append is not None:  # (its clock_stop(1, i) without that call)
                env[f"a{k}"] = append
                stop = [f"a{k}({name(node.inputs[0])}.out, i)"]
                one = getattr(node, "append_lines", None)
                if one is not None:
                    stop = one(name, env, f"a{k}", setup) or stop
            else:
                env[f"s{k}"] = node.clock_stop
                stop = [f"s{k}(1, i)"]
            if live is None:
                lines += [f"{ind}{text}" for text in stop]
            else:
                lines.append(f"{ind}if " + " or ".join(f"{name(s)}.out" for s in live) + ":")
                lines += [f"{ind}    {text}" for text in stop]
        for k, (export, inner) in enumerate(exports):
            env[f"x{k}"] = export.accumulate
            if type(export) is not Export:  # (a profiler's proxy)
                lines.append(f"{ind}if {name(inner)}.out: x{k}()")
                continue
            env[f"xn{k}"] = export
            lines.append(f"{ind}if {name(inner)}.out:")
            lines += [f"{ind}    {text}" for text in
                      export.accumulate_lines(f"xn{k}", name(inner), f"x{k}", setup)]
        return lines

    def _loop(self, evaluated, stoppers, exports):
        """The generated ``loop`` (class docstring)."""
        record: dict = {}
        setup: list[str] = []
        body = self._body(evaluated, stoppers, exports, None, "        ", record, setup)
        lines = ["def loop(i, limit):", "    stop = -1 if limit is None else limit"]
        lines += [f"    {text}" for text in setup]
        lines += ["    while True:", "        i += 1",
                  "        if i == stop:", "            return i - 1, True"]
        self.loop_lines = {index + len(lines) + 1: node for index, node in record.items()}
        lines += body
        lines += [f"        if not ({self._data()}):", "            return i, False"]
        self.loop_source = "\n".join(lines)
        return build_function("loop", lines, self.env)

    def failed_node(self, error: BaseException):
        """The node whose ``evaluate`` raised ``error`` in ``run`` or ``loop``,
        or ``None`` (it came from a ``clock_stop`` or an Export, which the
        circuit does not wrap)."""
        codes = {self.run.__code__: self.lines}
        if self.loop is not None:
            codes[self.loop.__code__] = self.loop_lines
        tb = error.__traceback__
        while tb is not None:
            found = codes.get(tb.tb_frame.f_code)
            if found is not None:
                return found.get(tb.tb_lineno)
            tb = tb.tb_next
        return None


def moved_feedbacks(stoppers) -> list:
    """The Feedbacks among ``stoppers`` (not a profiler's proxies), with their
    sources: the loop moves their batches without calling them."""
    return [(node, node.reads[0]) for node in stoppers if type(node) is Feedback]
