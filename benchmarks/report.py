"""The table: per-workload blocks, a summary, ratios, and disagreements.

Ratios are computed from cells of the same run: ``×python`` is a cell's batch
time over the plain Python loop's, ``×fastest`` over the fastest other peer's
(the fastest among all peers but the engine, so the engine's row reads as
"how far from the best tool here"). An update's *speedup* is the fastest other
peer's median time for the same update (from scratch, unless the peer is
incremental) over the engine's median.

>>> seconds(0.000123), seconds(1.5), seconds(None)
('0.123 ms', '1.5 s', '—')
>>> milliseconds(0.0004), ratio(3.0, 1.5), ratio(None, 1)
('0.40', '2×', '—')
"""

from __future__ import annotations

from benchmarks.runner import Cell

DASH = "—"


def seconds(value: float | None) -> str:
    if value is None:
        return DASH
    if value < 1:
        return f"{value * 1000:.3g} ms"
    return f"{value:.3g} s" if value < 100 else f"{value:.0f} s"


def milliseconds(value: float | None) -> str:
    if value is None:
        return DASH
    ms = value * 1000
    return f"{ms:.2f}" if ms < 10 else f"{ms:.3g}" if ms < 1000 else f"{ms:,.0f}"


def ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return DASH
    value = a / b
    return f"{value:.2g}×" if value < 10 else f"{value:,.0f}×"


def mib(value: int | None) -> str:
    return DASH if value is None else f"{value / 2**20:,.0f}"


def per_tuple(cell: Cell | None) -> str:
    """Bytes of RSS per derived tuple: at the peak, held right after the batch
    (steady), and after an allocator trim."""
    if cell is None or cell.bytes_per_tuple is None:
        return DASH
    values = [cell.per_tuple(rss) for rss in ("peak_rss", "steady_rss", "trimmed_rss")]
    return " / ".join(DASH if v is None else f"{v:,.0f}" for v in values)


def reference_counts(cells: list[Cell]) -> dict | None:
    """The relation sizes every peer must reproduce: the Python loop's, else
    the engine's."""
    for name in ("python", "engine"):
        for cell in cells:
            if cell.peer == name and cell.counts:
                return cell.counts
    return None


def disagreements(cells: list[Cell]) -> list[str]:
    """Every way a finished cell disagrees with the reference counts: after the
    batch, after each verified update (against the Python loop's sizes after
    the same update), and, for incremental peers, at the end."""
    problems = []
    reference = reference_counts(cells)
    loop = next((c for c in cells if c.peer == "python" and c.update_counts), None)
    for cell in cells:
        if cell.counts is None:
            continue
        if reference is not None and cell.counts != reference:
            problems.append(f"{cell.workload}/{cell.peer}: batch {cell.counts} != {reference}")
        if cell.final_counts is not None and cell.final_counts != cell.counts:
            problems.append(f"{cell.workload}/{cell.peer}: after all updates "
                            f"{cell.final_counts} != batch {cell.counts}")
        if loop is not None and cell is not loop:
            for i, (mine, theirs) in enumerate(zip(cell.update_counts, loop.update_counts)):
                if mine != theirs:
                    problems.append(f"{cell.workload}/{cell.peer}: update {i} {mine} != "
                                    f"{theirs}")
    return problems


def _fastest(cells: list[Cell], key) -> Cell | None:
    finished = [c for c in cells if c.peer != "engine" and key(c) is not None]
    return min(finished, key=key, default=None)


def _status(cell: Cell) -> str:
    if cell.status == "ok":
        notes = []
        if cell.prepare is not None and cell.peer == "engine":
            notes.append(f"compile {seconds(cell.prepare)}")
        if cell.changed:
            changed = sorted(cell.changed)
            notes.append(f"Δ median {changed[len(changed) // 2]:,} tuples")
        if cell.note:
            notes.append(cell.note)
        return "; ".join(notes)
    return f"{cell.status}: {cell.note}" if cell.note else cell.status


def workload_rows(cells: list[Cell]) -> list[list[str]]:
    """One row per peer: batch, ratios, memory, update percentiles, notes."""
    loop = next((c for c in cells if c.peer == "python"), None)
    fastest = _fastest(cells, lambda c: c.batch)
    rows = []
    for cell in cells:
        updates = len(cell.retract)
        how = "incr." if cell.incremental else "scratch"
        rows.append([
            cell.peer,
            seconds(cell.batch),
            ratio(cell.batch, loop.batch if loop else None),
            ratio(cell.batch, fastest.batch if fastest else None),
            mib(cell.peak_rss),
            per_tuple(cell),
            f"{milliseconds(cell.median('retract'))} / {milliseconds(cell.p95('retract'))}",
            f"{milliseconds(cell.median('insert'))} / {milliseconds(cell.p95('insert'))}",
            f"{updates} {how}" if updates else DASH,
            _status(cell),
        ])
    return rows


HEADER = ["peer", "batch", "×python", "×fastest", "peak MiB", "B/tuple peak / steady / trim",
          "retract ms med / p95", "insert ms med / p95", "updates", "notes"]


def summary_rows(blocks: list[tuple[object, list[Cell]]]) -> list[list[str]]:
    """One row per workload: where the engine stands against the loop and
    against the fastest peer, in batch time, update time and memory."""
    rows = []
    for workload, cells in blocks:
        engine = next((c for c in cells if c.peer == "engine"), None)
        loop = next((c for c in cells if c.peer == "python"), None)
        fastest = _fastest(cells, lambda c: c.batch)
        reference = reference_counts(cells)
        speedups = []
        for op in ("retract", "insert"):
            peer = _fastest(cells, lambda c, op=op: c.median(op))
            engine_median = engine.median(op) if engine else None
            speedups.append(ratio(peer.median(op) if peer else None, engine_median)
                            + (f" ({peer.peer})" if peer and engine_median else ""))
        rows.append([
            workload.name,
            f"{sum(reference.values()):,}" if reference else DASH,
            seconds(engine.batch) if engine else DASH,
            ratio(engine.batch if engine else None, loop.batch if loop else None),
            (f"{fastest.peer} {seconds(fastest.batch)}" if fastest else DASH),
            ratio(engine.batch if engine else None, fastest.batch if fastest else None),
            (f"{milliseconds(engine.median('retract'))} / {milliseconds(engine.median('insert'))}"
             if engine else DASH),
            speedups[0],
            speedups[1],
            per_tuple(engine),
        ])
    return rows


SUMMARY_HEADER = ["workload", "derived tuples", "engine batch", "engine ÷ python",
                  "fastest peer (batch)", "engine ÷ fastest", "engine retract / insert ms",
                  "retract speedup vs fastest", "insert speedup vs fastest",
                  "engine B/tuple peak / steady / trim"]


def aims(blocks) -> list[str]:
    """Where the engine stands against the goals of the columnar runtime,
    workload by workload, from this run's cells (met or not, never adjusted)."""
    loop_ratio, duckdb_ratio, update, big, memory = [], [], [], [], []
    for workload, cells in blocks:
        engine = next((c for c in cells if c.peer == "engine" and c.batch is not None), None)
        if engine is None:
            continue
        loop = next((c for c in cells if c.peer == "python" and c.batch is not None), None)
        duckdb = next((c for c in cells if c.peer == "duckdb" and c.batch is not None), None)
        if loop is not None:
            loop_ratio.append(f"{workload.name} {ratio(engine.batch, loop.batch)}")
        if duckdb is not None and workload.family in ("tc", "sg"):
            duckdb_ratio.append(f"{workload.name} {ratio(engine.batch, duckdb.batch)}")
        if engine.retract:
            changed = sorted(engine.changed)
            median = changed[len(changed) // 2] if changed else None
            worst = max(engine.median("retract"), engine.median("insert"))
            if median is not None and median > engine.derived // 10 and duckdb is not None \
                    and duckdb.retract:
                slowest = max(duckdb.median("retract"), duckdb.median("insert"))
                big.append(f"{workload.name} {ratio(worst, slowest)}")
            else:
                update.append(f"{workload.name} {milliseconds(worst)} ms")
        trimmed = engine.per_tuple("trimmed_rss")
        if trimmed is not None:
            memory.append(f"{workload.name} {trimmed:,.0f}")
    return [f"batch faster than the Python loop (engine ÷ loop below 1×): {', '.join(loop_ratio)}",
            (f"batch within 2× of DuckDB on closure and same generation (engine ÷ DuckDB): "
             f"{', '.join(duckdb_ratio)}"),
            (f"single-fact updates (engine median, the slower of retract and insert; 10 ms "
             f"or less on the random-graph closure): {', '.join(update)}"),
            (f"updates that change more than a tenth of the result no slower than DuckDB "
             f"recomputing (engine ÷ DuckDB, medians): {', '.join(big)}"),
            (f"80 bytes of RSS or less per derived tuple (held after the batch, after an "
             f"allocator trim): {', '.join(memory)}")]


def text_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip()
             for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |"
              for row in rows]
    return "\n".join(lines)


def block_title(workload, cells: list[Cell]) -> str:
    reference = reference_counts(cells)
    sizes = (", ".join(f"{name} {count:,}" for name, count in reference.items())
             if reference else "no peer finished")
    return (f"{workload.name}: {workload.description}; {workload.input_size():,} input facts; "
            f"derived: {sizes}")


def render(blocks, markdown: bool) -> str:
    """The whole table: the summary, then one block per workload, then any
    disagreement between peers (which must never happen)."""
    table = markdown_table if markdown else text_table
    parts = ["## Summary" if markdown else "SUMMARY", "",
             table(SUMMARY_HEADER, summary_rows(blocks)), "",
             "## Against the aims" if markdown else "AGAINST THE AIMS", "",
             *(f"- {line}" for line in aims(blocks)), ""]
    problems = []
    for workload, cells in blocks:
        title = block_title(workload, cells)
        parts += [f"### {title}" if markdown else title, "",
                  table(HEADER, workload_rows(cells)), ""]
        problems += disagreements(cells)
    if problems:
        parts += ["DISAGREEMENTS (a bug in a peer or in the engine):", "",
                  *(f"- {p}" for p in problems), ""]
    return "\n".join(parts)
