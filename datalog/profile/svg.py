"""Inline SVG for the profile page: a bar chart, a line chart and the circuit
drawn in layers with its hot nodes. Plain strings, no dependency: the page
must open anywhere, without a network or Graphviz.

>>> svg = bar_chart([("path(x, z) :- path(x, y), edge(y, z).", 0.002, "2 ms")])
>>> svg.startswith("<svg") and "path(x, z)" in svg and svg.count("<rect") == 1
True
"""

from __future__ import annotations

from html import escape

from datalog.profile.report import seconds_text, shorten

NODE_W, NODE_H = 172, 46
COLUMN_W, ROW_H = 214, 58
BAND_GAP = 34
HOT = 5


def _heat(share: float) -> str:
    """A colour from pale (no time) to dark red (the most time).

    >>> _heat(0.0), _heat(1.0)
    ('#fff5eb', '#a50f15')
    """
    low, high = (0xFF, 0xF5, 0xEB), (0xA5, 0x0F, 0x15)
    share = min(max(share, 0.0), 1.0) ** 0.6
    return "#" + "".join(f"{round(a + (b - a) * share):02x}" for a, b in zip(low, high))


def bar_chart(items: list[tuple[str, float, str]], width: int = 820,
              css_class: str = "bars") -> str:
    """Horizontal bars: ``(label, value, value text)`` per bar, longest first."""
    label_w, bar_h, gap = 330, 18, 6
    top = max((value for _, value, _ in items), default=0) or 1.0
    height = len(items) * (bar_h + gap) + gap
    parts = [f'<svg class="{css_class}" xmlns="http://www.w3.org/2000/svg" '
             f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">']
    for k, (label, value, text) in enumerate(items):
        y = gap + k * (bar_h + gap)
        w = max(1.0, (width - label_w - 90) * value / top)
        parts.append(
            f'<g><title>{escape(label)}: {escape(text)}</title>'
            f'<text x="{label_w - 8}" y="{y + 13}" text-anchor="end" class="lbl">'
            f'{escape(shorten(label, 48))}</text>'
            f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h}" '
            f'fill="{_heat(value / top)}" stroke="#a50f15" stroke-width="0.5"/>'
            f'<text x="{label_w + w + 6:.1f}" y="{y + 13}" class="val">{escape(text)}</text>'
            f'</g>')
    parts.append("</svg>")
    return "".join(parts)


def line_chart(series: list[tuple[str, str, list[float]]], xs: list[str],
               unit: str = "", width: int = 560, height: int = 220) -> str:
    """Lines over the iterations ``xs`` (labels): ``(name, colour, values)`` per
    line, on one axis from 0 to the largest value."""
    left, right, top_pad, bottom = 62, 16, 26, 34
    inner_w, inner_h = width - left - right, height - top_pad - bottom
    peak = max((max(values, default=0) for _, _, values in series), default=0) or 1
    n = max(len(xs), 1)

    def x(k: int) -> float:
        return left + (inner_w * k / (n - 1) if n > 1 else inner_w / 2)

    def y(v: float) -> float:
        return top_pad + inner_h - inner_h * v / peak

    parts = [f'<svg class="lines" xmlns="http://www.w3.org/2000/svg" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}" role="img">',
             f'<line x1="{left}" y1="{top_pad + inner_h}" x2="{left + inner_w}" '
             f'y2="{top_pad + inner_h}" class="axis"/>',
             f'<line x1="{left}" y1="{top_pad}" x2="{left}" y2="{top_pad + inner_h}" '
             f'class="axis"/>']
    for fraction in (0, 0.5, 1):
        value = peak * fraction
        text = seconds_text(value) if unit == "s" else f"{value:,.0f}"
        parts.append(f'<text x="{left - 6}" y="{y(value) + 4:.1f}" text-anchor="end" '
                     f'class="tick">{text}</text>')
    step = max(1, n // 8)
    for k in range(0, n, step):
        parts.append(f'<text x="{x(k):.1f}" y="{height - bottom + 16}" text-anchor="middle" '
                     f'class="tick">{escape(xs[k])}</text>')
    parts.append(f'<text x="{left + inner_w / 2}" y="{height - 4}" text-anchor="middle" '
                 f'class="tick">iteration</text>')
    for k, (name, colour, values) in enumerate(series):
        points = " ".join(f"{x(j):.1f},{y(v):.1f}" for j, v in enumerate(values))
        parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" '
                     f'stroke-width="2"><title>{escape(name)}</title></polyline>')
        if len(values) <= 60:
            parts += [f'<circle cx="{x(j):.1f}" cy="{y(v):.1f}" r="2.5" fill="{colour}">'
                      f'<title>{escape(name)} at {escape(xs[j])}: {v:,.6g}</title></circle>'
                      for j, v in enumerate(values)]
        parts.append(f'<rect x="{left + 8 + k * 130}" y="6" width="12" height="12" '
                     f'fill="{colour}"/><text x="{left + 24 + k * 130}" y="16" '
                     f'class="tick">{escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _layers(nodes: dict[str, dict], edges: list[tuple[str, str]]) -> dict[str, int]:
    """Each node's column: the longest path to it over ``edges`` (a DAG; a node
    left on a cycle goes after the rest)."""
    incoming = {n: [] for n in nodes}
    outgoing = {n: [] for n in nodes}
    for a, b in edges:
        incoming[b].append(a)
        outgoing[a].append(b)
    waiting = {n: len(incoming[n]) for n in nodes}
    ready = [n for n in nodes if not waiting[n]]
    layer = {}
    while ready:
        node = ready.pop()
        layer[node] = max((layer[a] + 1 for a in incoming[node]), default=0)
        for b in outgoing[node]:
            waiting[b] -= 1
            if not waiting[b]:
                ready.append(b)
    last = max(layer.values(), default=-1) + 1
    for node in nodes:
        layer.setdefault(node, last)
    for node in nodes:  # a node nothing feeds sits just before its first reader
        if not incoming[node] and outgoing[node]:
            layer[node] = max(0, min(layer[b] for b in outgoing[node]) - 1)
    return layer


def _order(columns: dict[int, list[str]], edges: list[tuple[str, str]]) -> None:
    """Sort each column (left to right) by the mean row of the nodes feeding
    its nodes, which uncrosses most edges (one barycenter sweep)."""
    feeders: dict[str, list[str]] = {}
    for a, b in edges:
        feeders.setdefault(b, []).append(a)
    row: dict[str, int] = {}

    def centre(node: str, start: int) -> float:
        known = [row[a] for a in feeders.get(node, []) if a in row]
        return sum(known) / len(known) if known else start

    for column in sorted(columns):
        ids = columns[column]
        ids[:] = [n for _, n in sorted((centre(n, k), n) for k, n in enumerate(ids))]
        row.update((node, k) for k, node in enumerate(ids))


def circuit_svg(records: list[dict]) -> str:
    """The circuit: sources on the left, one band for the root circuit and one
    per recursive stratum (a framed cluster), each node coloured by its time;
    the hottest are outlined and numbered. Each node is a ``<g class="node">``
    with ``id="node-<global id>"`` and ``data-rule`` (the rule it serves)."""
    used = {i for r in records for i in r["inputs"] + r["reads"]}
    nodes = {r["id"]: r for r in records
             if r["kind"] not in ("sink", "child")
             and not (r["kind"] == "source" and r["id"] not in used)}
    edges, back = [], []
    for r in nodes.values():
        for other in r["inputs"]:
            if other in nodes:
                edges.append((other, r["id"]))
        for other in r["reads"]:
            if other in nodes:
                (back if r["kind"] == "feedback" else edges).append((other, r["id"]))
    layer = _layers(nodes, edges)
    bands: dict[str, list[str]] = {}
    for node_id in nodes:
        bands.setdefault(node_id.split(".")[0] if "." in node_id else "", []).append(node_id)
    children = {r["id"]: r for r in records if r["kind"] == "child"}
    position, clusters = {}, []
    y0 = 10
    for band in sorted(bands, key=lambda b: (b != "", int(b) if b else 0)):
        columns: dict[int, list[str]] = {}
        for node_id in sorted(bands[band], key=_sort_key):
            columns.setdefault(layer[node_id], []).append(node_id)
        _order(columns, edges)
        rows = max(len(c) for c in columns.values())
        top = y0 + (24 if band else 0)
        for column, ids in columns.items():
            for k, node_id in enumerate(ids):
                position[node_id] = (20 + column * COLUMN_W, top + k * ROW_H)
        if band:
            xs = [position[n][0] for n in bands[band]]
            child = children.get(band, {})
            clusters.append((min(xs) - 10, y0, max(xs) - min(xs) + NODE_W + 20,
                             rows * ROW_H + 30, child))
        y0 = top + rows * ROW_H + BAND_GAP
    width = 40 + (max(layer.values(), default=0) + 1) * COLUMN_W
    height = y0
    top_seconds = max((r["seconds"] for r in nodes.values()), default=0) or 1.0
    hot = [r["id"] for r in sorted(nodes.values(), key=lambda r: -r["seconds"])
           if r["seconds"] > 0][:HOT]

    parts = [f'<svg id="circuit" xmlns="http://www.w3.org/2000/svg" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}" role="img">',
             '<defs><marker id="arrow" viewBox="0 0 8 8" refX="8" refY="4" '
             'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
             '<path d="M0,0 L8,4 L0,8 z" fill="#777"/></marker></defs>']
    for x, y, w, h, child in clusters:
        title = (f"recursive stratum {{{child.get('child', '')}}}: "
                 f"{seconds_text(child.get('seconds', 0))}")
        parts.append(f'<g class="cluster"><rect x="{x}" y="{y}" width="{w}" height="{h}" '
                     f'rx="8"/><text x="{x + 10}" y="{y + 16}">{escape(title)}</text></g>')
    for a, b in edges:
        (x1, y1), (x2, y2) = position[a], position[b]
        x1, y1, y2 = x1 + NODE_W, y1 + NODE_H / 2, y2 + NODE_H / 2
        mid = (x1 + x2) / 2 if x2 > x1 else x1 + 40
        parts.append(f'<path class="edge" d="M{x1},{y1} C{mid},{y1} {mid if x2 > x1 else x2 - 40},'
                     f'{y2} {x2},{y2}" marker-end="url(#arrow)"/>')
    for a, b in back:  # feedback: one iteration later, drawn under the band
        (x1, y1), (x2, y2) = position[a], position[b]
        bottom = max(y1, y2) + NODE_H + 14
        parts.append(f'<path class="edge back" d="M{x1 + NODE_W / 2},{y1 + NODE_H} '
                     f'C{x1 + NODE_W / 2},{bottom} {x2 + NODE_W / 2},{bottom} '
                     f'{x2 + NODE_W / 2},{y2 + NODE_H}" marker-end="url(#arrow)"/>')
    for node_id, r in nodes.items():
        x, y = position[node_id]
        share = r["seconds"] / top_seconds
        fill = _heat(share)
        ink = "#fff" if share ** 0.6 > 0.55 else "#222"
        rank = hot.index(node_id) + 1 if node_id in hot else 0
        title = [f"{node_id} {r['kind']} {r['what']}", r["label"] or "",
                 f"rule: {r['rule']}", f"time {seconds_text(r['seconds'])}, "
                 f"{r['calls']} calls, {r['tuples_in']:,} in, {r['tuples_out']:,} out"
                 + (f", trace {r['trace_rows']:,} rows" if r.get("trace_rows") else "")]
        title += [f"fused: {f}" for f in r.get("fused", [])]
        name = r["label"] or r["rule"]
        parts.append(
            f'<g class="node{" hot" if rank else ""}" id="node-{escape(node_id)}" '
            f'data-rule="{escape(r["rule"])}">'
            f'<title>{escape(chr(10).join(t for t in title if t))}</title>'
            f'<rect x="{x}" y="{y}" width="{NODE_W}" height="{NODE_H}" rx="5" fill="{fill}"/>'
            f'<text x="{x + 8}" y="{y + 15}" fill="{ink}" class="what">'
            f'{escape(shorten(r["what"], 24))}</text>'
            f'<text x="{x + 8}" y="{y + 29}" fill="{ink}">{escape(shorten(name, 27))}</text>'
            f'<text x="{x + 8}" y="{y + 41}" fill="{ink}" class="time">'
            f'{seconds_text(r["seconds"])}</text>')
        if rank:
            parts.append(f'<circle cx="{x + NODE_W - 4}" cy="{y + 4}" r="9" class="badge"/>'
                         f'<text x="{x + NODE_W - 4}" y="{y + 8}" text-anchor="middle" '
                         f'class="badge-text">{rank}</text>')
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def _sort_key(node_id: str) -> tuple[int, ...]:
    return tuple(int(p) for p in node_id.split("."))
