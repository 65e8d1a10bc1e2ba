"""Hand-built circuits and from-scratch twins shared by the engine tests."""

from __future__ import annotations

from engine import Circuit


def transitive_closure(max_iterations: int = 100_000) -> Circuit:
    """path(x, y) :- edge(x, y).  path(x, z) :- path(x, y), edge(y, z)."""
    circuit = Circuit(max_iterations=max_iterations)
    edge = circuit.source("edge", arity=2)
    with circuit.child("path") as child:
        e = child.import_(edge)
        fb = child.feedback("path", arity=2)
        step = fb.stream.index_by((1,)).join(e.index_by((0,)),
                                             lambda k, p, ed: (p[0], ed[1]))
        new = e.plus(step).distinct()
        fb.connect(new)
        path = child.export(new)
    circuit.output("path", path, keep=True)
    return circuit


def closure(edges) -> set:
    """Transitive closure from scratch (semi-naive)."""
    by_src: dict = {}
    for x, y in edges:
        by_src.setdefault(x, set()).add(y)
    paths = set(edges)
    delta = set(edges)
    while delta:
        new = set()
        for x, y in delta:
            for z in by_src.get(y, ()):
                if (x, z) not in paths:
                    new.add((x, z))
        paths |= new
        delta = new
    return paths


def same_generation(max_iterations: int = 100_000) -> Circuit:
    """sg(x, y) :- parent(x, p), parent(y, p), x != y.
    sg(x, y) :- parent(x, a), sg(a, b), parent(y, b)."""
    circuit = Circuit(max_iterations=max_iterations)
    parent = circuit.source("parent", arity=2)
    with circuit.child("sg") as child:
        par = child.import_(parent)
        fb = child.feedback("sg", arity=2)
        by_parent = par.index_by((1,))
        base = by_parent.join(by_parent, lambda k, a, b: (a[0], b[0])).filter(
            lambda r: r[0] != r[1])
        # parent(x, a), sg(a, b) -> (x, b) keyed by b; then parent(y, b)
        step1 = par.index_by((1,)).join(fb.stream.index_by((0,)),
                                        lambda k, pa, s: (pa[0], s[1]))
        step = step1.index_by((1,)).join(by_parent, lambda k, xb, pb: (xb[0], pb[0]))
        new = base.plus(step).distinct()
        fb.connect(new)
        sg = child.export(new)
    circuit.output("sg", sg, keep=True)
    return circuit


def same_generation_scratch(parents) -> set:
    by_parent: dict = {}
    for x, p in parents:
        by_parent.setdefault(p, set()).add(x)
    sg = {(a, b) for kids in by_parent.values() for a in kids for b in kids if a != b}
    children_of = {}
    for x, p in parents:
        children_of.setdefault(p, set()).add(x)
    while True:
        new = {(x, y) for (a, b) in sg for x in children_of.get(a, ())
               for y in children_of.get(b, ())} - sg
        if not new:
            return sg
        sg |= new
