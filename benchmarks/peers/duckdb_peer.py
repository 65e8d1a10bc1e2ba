"""DuckDB: recursive common table expressions, materialized as tables.

Linear recursion is the textbook ``WITH RECURSIVE r AS (base UNION step)``:
``UNION`` (not ``UNION ALL``) removes duplicates, so each iteration joins only
the previous iteration's new rows (the working table) — semi-naive evaluation.

Andersen's analysis has two non-linear rules, and a plain recursive CTE cannot
express them: inside the step, the CTE's name means only the working table, so
``points_to ⋈ points_to`` would join new rows with new rows and miss every
derivation that needs an old one. DuckDB (1.3 and later) offers
``WITH RECURSIVE ... USING KEY``, whose step can also read the whole table so
far as ``recurring.points_to``; the step is then the semi-naive rule
``Δ ⋈ all ∪ all ⋈ Δ``, minus what is already known.

Inputs are loaded column-wise (``unnest`` of two list parameters); the batch
is a fresh in-memory database, its inputs, and the ``CREATE TABLE ... AS``
statements. DuckDB runs with its default thread count (one per core). An update
is a from-scratch batch on the changed input.
"""

from __future__ import annotations

from benchmarks.peers import Peer

TC = """
CREATE TABLE path AS
WITH RECURSIVE path(x, y) AS (
    SELECT c0, c1 FROM edge
    UNION
    SELECT p.x, e.c1 FROM path p JOIN edge e ON p.y = e.c0
) SELECT * FROM path
"""

SG = """
CREATE TABLE sg AS
WITH RECURSIVE sg(x, y) AS (
    SELECT a.c0, b.c0 FROM par a JOIN par b ON a.c1 = b.c1 WHERE a.c0 <> b.c0
    UNION
    SELECT a.c0, b.c0 FROM sg s JOIN par a ON a.c1 = s.x JOIN par b ON b.c1 = s.y
) SELECT * FROM sg
"""

ANDERSEN = """
CREATE TABLE points_to AS
WITH RECURSIVE points_to(p, a) USING KEY (p, a) AS (
    SELECT c0, c1 FROM addr_of
    UNION
    SELECT * FROM (
        SELECT s.c0 AS p, d.a FROM assign s JOIN points_to d ON d.p = s.c1
        UNION
        SELECT l.c0, f.a FROM load_from l JOIN points_to d ON d.p = l.c1
                                         JOIN recurring.points_to f ON f.p = d.a
        UNION
        SELECT l.c0, d.a FROM load_from l JOIN recurring.points_to f ON f.p = l.c1
                                         JOIN points_to d ON d.p = f.a
        UNION
        SELECT d.a, f.a FROM store_to s JOIN points_to d ON d.p = s.c0
                                        JOIN recurring.points_to f ON f.p = s.c1
        UNION
        SELECT f.a, d.a FROM store_to s JOIN recurring.points_to f ON f.p = s.c0
                                        JOIN points_to d ON d.p = s.c1
    ) AS fresh
    WHERE NOT EXISTS (SELECT 1 FROM recurring.points_to old
                      WHERE old.p = fresh.p AND old.a = fresh.a)
) SELECT * FROM points_to
"""

NEGAGG = [
    """
CREATE TABLE reach AS
WITH RECURSIVE reach(x, y) AS (
    SELECT c0, c1 FROM edge
    UNION
    SELECT r.x, e.c1 FROM reach r JOIN edge e ON r.y = e.c0
) SELECT * FROM reach
""",
    "CREATE TABLE cyclic AS SELECT DISTINCT x FROM reach WHERE x = y",
    """CREATE TABLE acyclic AS SELECT c0 AS x FROM node
       WHERE NOT EXISTS (SELECT 1 FROM cyclic WHERE cyclic.x = node.c0)""",
    "CREATE TABLE reach_count AS SELECT x, count(*) AS c FROM reach GROUP BY x",
]

STATEMENTS = {"tc": [TC], "sg": [SG], "andersen": [ANDERSEN], "negagg": NEGAGG}


def load_table(connection, name: str, rows: list[tuple]) -> None:
    """Create table ``name`` with BIGINT columns c0, c1, ... holding ``rows``."""
    arity = len(rows[0]) if rows else 2
    columns = ", ".join(f"c{i} BIGINT" for i in range(arity))
    connection.execute(f"CREATE TABLE {name} ({columns})")
    if rows:
        unnests = ", ".join(f"unnest(${i + 1}::BIGINT[])" for i in range(arity))
        connection.execute(f"INSERT INTO {name} SELECT {unnests}",
                           [list(column) for column in zip(*rows)])


class DuckDBPeer(Peer):
    name = "duckdb"
    label = "DuckDB recursive CTE"
    families = tuple(STATEMENTS)

    def prepare(self, workload):
        import duckdb

        self.duckdb = duckdb

    def batch(self, workload, facts):
        connection = self.duckdb.connect()
        for name, rows in facts.items():
            load_table(connection, name, rows)
        for statement in STATEMENTS[workload.family]:
            connection.execute(statement)
        return connection

    def counts(self, state, workload):
        return {name: state.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
                for name in workload.outputs}
