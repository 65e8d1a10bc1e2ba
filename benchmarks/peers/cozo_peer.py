"""CozoDB: an embedded Datalog database written in Rust (``cozo-embedded``).

The batch is a fresh in-memory database: each input relation is a stored
relation with columns ``c0, c1, ...`` (all keys), filled with one ``:put`` of
all its rows, then the program runs as one chained query (``{...} {...}``),
each block storing a derived relation with ``:replace`` so that the next
block, and the counts, can read it. CozoDB evaluates recursive rules
semi-naively and stratifies negation and aggregation. It keeps no derived
state between queries, so an update is a from-scratch batch on the changed
input, as with DuckDB.
"""

from __future__ import annotations

from benchmarks.peers import Peer

PROGRAMS = {
    "tc": """
{ path[x, y] := *edge{c0: x, c1: y}
  path[x, z] := path[x, y], *edge{c0: y, c1: z}
  ?[x, y] := path[x, y]
  :replace path {x, y} }
""",
    "sg": """
{ sg[x, y] := *par{c0: x, c1: p}, *par{c0: y, c1: p}, x != y
  sg[x, y] := *par{c0: x, c1: a}, sg[a, b], *par{c0: y, c1: b}
  ?[x, y] := sg[x, y]
  :replace sg {x, y} }
""",
    "andersen": """
{ pt[p, a] := *addr_of{c0: p, c1: a}
  pt[p, a] := *assign{c0: p, c1: q}, pt[q, a]
  pt[p, a] := *load_from{c0: p, c1: q}, pt[q, r], pt[r, a]
  pt[r, a] := *store_to{c0: p, c1: q}, pt[p, r], pt[q, a]
  ?[p, a] := pt[p, a]
  :replace points_to {p, a} }
""",
    "negagg": """
{ reach[x, y] := *edge{c0: x, c1: y}
  reach[x, z] := reach[x, y], *edge{c0: y, c1: z}
  ?[x, y] := reach[x, y]
  :replace reach {x, y} }
{ ?[x] := *reach{x, y: x}
  :replace cyclic {x} }
{ ?[x] := *node{c0: x}, not *cyclic{x}
  :replace acyclic {x} }
{ counted[x, count(y)] := *reach{x, y}
  ?[x, c] := counted[x, c]
  :replace reach_count {x, c} }
""",
}


class CozoPeer(Peer):
    name = "cozo"
    label = "CozoDB (embedded)"
    families = tuple(PROGRAMS)

    def prepare(self, workload):
        from pycozo.client import Client

        self.client = Client

    def batch(self, workload, facts):
        db = self.client("mem", "", dataframe=False)
        for name, rows in facts.items():
            arity = len(rows[0]) if rows else 2
            columns = [f"c{i}" for i in range(arity)]
            db.run(f":create {name} {{{', '.join(f'{c}: Int' for c in columns)}}}")
            if rows:
                names = ", ".join(columns)
                db.run(f"?[{names}] <- $rows :put {name} {{{names}}}",
                       {"rows": [list(row) for row in rows]})
        db.run(PROGRAMS[workload.family])
        return db

    def counts(self, state, workload):
        counts = {}
        for name in workload.outputs:
            first = state.run(f"::columns {name}")["rows"][0][0]
            counts[name] = state.run(f"?[count({first})] := *{name}{{{first}}}")["rows"][0][0]
        return counts
