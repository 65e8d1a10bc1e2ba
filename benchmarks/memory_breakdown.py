"""Where a session's memory is after the batch of one workload of the table.

    python -m benchmarks.memory_breakdown andersen-200x50
    python -m benchmarks.memory_breakdown tc-chain-1000 --tracemalloc 15

It loads the workload as the table's engine cell does (``program.session()``
and one transaction inserting every fact), then prints, per derived tuple:

- the process's RSS growth over the batch, right after it (``steady``) and
  after a garbage collection and ``malloc_trim`` (``trim``), as the table does;
- what CPython's small-object allocator gained over the batch
  (``sys._debugmallocstats``): its arenas (RSS it keeps), the bytes of live
  objects in them, and the rest (fragmentation: free blocks and pools in arenas
  it cannot give back because some object still lives in them; below zero when
  the batch filled arenas that were free before it);
- the bytes each part of the session reaches (objects and numpy buffers, each
  counted once, for the first part that reaches it, in the order listed): the
  session's input sets, each circuit node's state (traces, schedules), the
  interned symbols; the largest nodes first, with the kind of their trace.

``--tracemalloc N`` runs the batch under :mod:`tracemalloc` instead and prints
the N allocation sites (file:line) holding the most memory after it (slower,
and its own bookkeeping adds to RSS, so no RSS figures then).
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import sys
import tempfile
import types

import numpy as np

from benchmarks.measure import rss_bytes, trimmed_rss_bytes
from benchmarks.profile_engine import find

_OPAQUE = (type, types.FunctionType, types.ModuleType, types.BuiltinFunctionType,
           types.MethodType, types.CodeType)


def reachable_bytes(root, seen: set, stop: set) -> int:
    """Bytes of the objects reachable from ``root`` through containers,
    instance attributes and numpy bases, skipping ids in ``seen`` (then adding
    the visited ones) or ``stop``, and functions, classes and modules (shared
    code, not data). A numpy array counts its header; its buffer is counted
    by the array that owns it.

    >>> row = (1000, 2000)
    >>> reachable_bytes([row, row], set(), set()) == (
    ...     sys.getsizeof([row, row]) + sys.getsizeof(row) + 2 * sys.getsizeof(1000))
    True
    >>> array = np.zeros(1000); seen = set()
    >>> reachable_bytes({"a": array, "b": array[10:]}, seen, set()) > 8000
    True
    >>> reachable_bytes(array, seen, set())   # counted already
    0
    """
    total = 0
    todo = [root]
    while todo:
        obj = todo.pop()
        key = id(obj)
        if key in seen or key in stop or isinstance(obj, _OPAQUE):
            continue
        seen.add(key)
        total += sys.getsizeof(obj)
        if isinstance(obj, np.ndarray):
            if obj.base is not None:
                todo.append(obj.base)
        elif isinstance(obj, dict):
            todo.extend(obj.keys())
            todo.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            todo.extend(obj)
        elif not isinstance(obj, (int, float, str, bytes, bool, type(None))):
            attributes = getattr(obj, "__dict__", None)
            if attributes is not None:
                todo.append(attributes)
            for cls in type(obj).__mro__:
                for name in getattr(cls, "__slots__", ()):
                    if hasattr(obj, name):
                        todo.append(getattr(obj, name))
    return total


def pymalloc_stats() -> dict[str, int]:
    """CPython's small-object allocator now: ``arenas`` (bytes of arenas
    allocated), ``live`` (bytes in allocated blocks)."""
    with tempfile.TemporaryFile(mode="w+") as captured:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(captured.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        captured.seek(0)
        text = captured.read()

    def number(pattern: str) -> int:
        found = re.search(pattern + r"\s*=\s*([\d,]+)", text)
        return int(found.group(1).replace(",", "")) if found else 0

    size = re.search(r"\d+ arenas \* (\d+) bytes/arena", text)
    arena = int(size.group(1)) if size else 1 << 20
    return {"arenas": number(r"# arenas allocated current") * arena,
            "live": number(r"# bytes in allocated blocks")}


def trace_kind(node) -> str:
    """What kind of state a node keeps, for the listing."""
    packed = getattr(node, "packed", None)
    if packed is not None:
        return "packed runs"
    trace = getattr(node, "trace", None)
    if trace is None:
        return ""
    return type(trace).__name__


# A node's attributes that reach other nodes' state: its inputs, the traces it
# reads, its circuit, and a nested join's ``thin`` (the two traces it last
# joined, cached): counted with the nodes that own them, not here.
LINKS = ("inputs", "reads", "circuit", "thin")


def node_parts(session) -> list[tuple[str, object]]:
    """``(label, state)`` of each live node of the session's circuit: the
    node's attributes but its links to other nodes and circuits (``LINKS``)."""
    parts = []
    for node in session._circuit.all_nodes:
        state = {name: value for name, value in vars(node).items()
                 if name not in LINKS}
        gid = ".".join(map(str, node.global_id))
        kind = trace_kind(node)
        label = f"{gid} {type(node).__name__} {node.describe_args()}"
        if kind:
            label += f" [{kind}]"
        parts.append((label, state))
    return parts


def breakdown(session) -> list[tuple[str, int]]:
    """``(part, bytes)`` of the session's state (the module docstring's
    order): ``inputs``, ``symbols``, then each node's label."""
    from engine import colbatch

    circuit = session._circuit
    stop = {id(n) for n in circuit.all_nodes} | {id(c) for c in circuit._circuits()}
    stop |= {id(session), id(circuit)}
    seen: set = set()
    parts = [("session inputs", reachable_bytes(session._inputs, seen, stop))]
    parts += [(label, reachable_bytes(state, seen, stop))
              for label, state in node_parts(session)]
    parts.append(("interned symbols", reachable_bytes(colbatch.SYMBOLS, seen, stop)))
    return parts


def print_breakdown(parts: list[tuple[str, int]], derived: int, show: int) -> None:
    total = sum(size for _, size in parts)
    nodes = [(size, label) for label, size in parts
             if label not in ("session inputs", "interned symbols")]
    print(f"reachable state            {total / derived:7.1f} B/tuple  "
          f"({total / 2**20:.1f} MiB)")
    print(f"  session inputs           {dict(parts)['session inputs'] / derived:7.1f}")
    print(f"  interned symbols         {dict(parts)['interned symbols'] / derived:7.1f}")
    print(f"  circuit nodes            {sum(s for s, _ in nodes) / derived:7.1f}")
    for size, label in sorted(nodes, reverse=True)[:show]:
        if size:
            print(f"    {size / derived:7.1f}  {label[:90]}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory_breakdown",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("workload")
    parser.add_argument("--nodes", type=int, default=12, help="largest nodes to list")
    parser.add_argument("--tracemalloc", type=int, default=0, metavar="N",
                        help="list the N allocation sites holding most after the batch")
    args = parser.parse_args(argv)
    from benchmarks.peers.engine_peer import EnginePeer

    workload = find(args.workload)
    peer = EnginePeer()
    peer.prepare(workload)
    if args.tracemalloc:
        import tracemalloc

        tracemalloc.start()
        session = peer.batch(workload, workload.facts)
        gc.collect()
        snapshot = tracemalloc.take_snapshot()
        tracemalloc.stop()
        derived = sum(peer.counts(session, workload).values())
        stats = snapshot.statistics("lineno")
        total = sum(stat.size for stat in stats)
        print(f"{workload.name}: {derived:,} derived tuples; traced after the batch "
              f"{total / derived:.1f} B/tuple ({total / 2**20:.1f} MiB)")
        for stat in stats[:args.tracemalloc]:
            frame = stat.traceback[0]
            print(f"  {stat.size / derived:7.1f} B/tuple {stat.count:>9,} blocks  "
                  f"{'/'.join(frame.filename.split('/')[-2:])}:{frame.lineno}")
        return
    base = trimmed_rss_bytes()
    before = pymalloc_stats()
    session = peer.batch(workload, workload.facts)
    steady = rss_bytes()
    trimmed = trimmed_rss_bytes()
    after = pymalloc_stats()
    # the state as the batch left it, before anything reads it (counting an
    # output's rows may move a packed trace back to dicts)
    parts = breakdown(session)
    derived = sum(peer.counts(session, workload).values())
    arenas, live = after["arenas"] - before["arenas"], after["live"] - before["live"]
    print(f"{workload.name}: {derived:,} derived tuples; RSS growth per derived tuple: "
          f"steady {(steady - base) / derived:.1f} B, trim {(trimmed - base) / derived:.1f} B")
    print(f"pymalloc arenas            {arenas / derived:7.1f} B/tuple  "
          f"(live objects {live / derived:.1f}, free in arenas {(arenas - live) / derived:.1f})")
    print_breakdown(parts, derived, args.nodes)

if __name__ == "__main__":
    main()
