"""The profile as one self-contained HTML page (``datalog profile prof.json
--html out.html``): inline CSS, script and SVG, the profile's JSON embedded;
nothing is fetched, so it opens from a file anywhere.

The page shows the run (time by phase, peak memory), the strata, a bar chart
of the time per rule, one chart of tuples and one of time per iteration for
each recursive stratum, the table of every rule (built by the script from the
embedded JSON: sortable, filterable; pointing at a row lights its nodes in
the circuit), and the circuit with its hot nodes.
"""

from __future__ import annotations

import json
import os
from html import escape

from datalog.errors import DatalogError
from datalog.profile.report import memory_text, seconds_text, shorten
from datalog.profile.svg import bar_chart, circuit_svg, line_chart

TOP_BARS = 15
MAX_STRATUM_CHARTS = 8

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0;
       color: #222; background: #fafafa; }
header { background: #2b2d42; color: #fff; padding: 14px 24px; }
header h1 { font-size: 19px; margin: 0 0 4px; font-weight: 600; }
header .sub { opacity: .85; }
main { padding: 8px 24px 40px; }
section { background: #fff; border: 1px solid #e3e3e3; border-radius: 8px;
          padding: 12px 16px; margin: 14px 0; overflow-x: auto; }
h2 { font-size: 16px; margin: 2px 0 10px; }
.cards { display: flex; gap: 12px; flex-wrap: wrap; }
.card { background: #fff; border: 1px solid #e3e3e3; border-radius: 8px;
        padding: 8px 14px; min-width: 130px; }
.card b { display: block; font-size: 20px; }
table { border-collapse: collapse; width: 100%; }
th, td { padding: 3px 8px; border-bottom: 1px solid #eee; text-align: right;
         white-space: nowrap; }
th { background: #f3f3f3; cursor: pointer; user-select: none; position: sticky; top: 0; }
th.sorted::after { content: " \\25BE"; }
th.sorted.up::after { content: " \\25B4"; }
td.text, th.text { text-align: left; }
td.rule { font-family: ui-monospace, Menlo, Consolas, monospace; white-space: normal;
          min-width: 320px; max-width: 640px; }
tr.rule-row:hover, tr.rule-row.pinned { background: #fff1e6; }
tr.relation td.rule { color: #666; }
.share { display: inline-block; height: 9px; background: #d6604d; vertical-align: middle;
         margin-right: 6px; }
input[type=search] { padding: 4px 8px; width: 320px; margin-bottom: 8px; }
.charts { display: flex; flex-wrap: wrap; gap: 18px; }
.charts figure { margin: 0; }
figcaption { font-weight: 600; margin-bottom: 2px; }
svg text { font: 11px system-ui, sans-serif; }
svg .lbl { font-family: ui-monospace, Menlo, Consolas, monospace; }
svg .axis { stroke: #999; }
svg .tick { fill: #555; }
#circuit .edge { fill: none; stroke: #999; stroke-width: 1.1; }
#circuit .edge.back { stroke-dasharray: 4 3; stroke: #6a7fdb; }
#circuit .node rect { stroke: #b0a59a; stroke-width: 1; }
#circuit .node.hot rect { stroke: #67000d; stroke-width: 2.6; }
#circuit .node.lit rect { stroke: #1f78b4; stroke-width: 4; }
#circuit .node .what { font-weight: 600; }
#circuit .node .time { font-size: 10px; }
#circuit .badge { fill: #67000d; }
#circuit .badge-text { fill: #fff; font-weight: 700; font-size: 10px; }
#circuit .cluster rect { fill: #eef3ff; stroke: #6a7fdb; stroke-dasharray: 5 3; }
#circuit .cluster text { fill: #3a4a9f; font-weight: 600; }
.phases { display: flex; height: 18px; border-radius: 4px; overflow: hidden;
          margin: 6px 0 2px; max-width: 760px; }
.phases span { display: block; height: 100%; }
.legend span { margin-right: 14px; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
.note { color: #666; font-size: 12.5px; }
"""

SCRIPT = """
(function () {
  const data = JSON.parse(document.getElementById("profile-data").textContent);
  const rules = data.rules;
  const busy = rules.reduce((s, r) => s + r.seconds, 0) || 1;
  const body = document.getElementById("rules-body");
  const fmt = (s) => s >= 1 ? s.toFixed(2) + " s" : s >= 1e-3 ? (s * 1e3).toFixed(1) + " ms"
                                                   : (s * 1e6).toFixed(1) + " \\u00b5s";
  const num = (n) => n === null || n === undefined ? "" : n.toLocaleString("en");
  const columns = [
    ["rank", (r, k) => k + 1], ["name", (r) => r.name], ["where", (r) => r.where || ""],
    ["stratum", (r) => r.stratum === null ? "" : r.stratum], ["seconds", (r) => r.seconds],
    ["calls", (r) => r.calls], ["tuples_in", (r) => r.tuples_in],
    ["tuples_out", (r) => r.tuples_out], ["trace_rows", (r) => r.trace_rows || 0]];
  let order = rules.map((r, k) => k);
  let sortKey = null, ascending = false;
  function light(ids, on) {
    for (const id of ids) {
      const node = document.getElementById("node-" + id);
      if (node) node.classList.toggle("lit", on);
    }
  }
  function render() {
    const filter = document.getElementById("rule-filter").value.toLowerCase();
    body.textContent = "";
    order.forEach((k, position) => {
      const r = rules[k];
      if (filter && !(r.name + " " + (r.where || "")).toLowerCase().includes(filter)) return;
      const tr = document.createElement("tr");
      tr.className = "rule-row " + r.kind;
      tr.dataset.nodes = r.nodes.join(" ");
      const cells = [position + 1, null, r.where || "", r.stratum === null ? "" : r.stratum,
                     fmt(r.seconds), num(r.calls), num(r.tuples_in), num(r.tuples_out),
                     num(r.trace_rows)];
      cells.forEach((value, c) => {
        const td = document.createElement("td");
        if (c === 1) {
          td.className = "rule text";
          td.textContent = r.name;
        } else if (c === 2) {
          td.className = "text";
          td.textContent = value.replace(/^.*[\\/]/, "").replace(/:(\\d+):\\d+$/, ":$1");
          td.title = value;
        } else if (c === 4) {
          const bar = document.createElement("span");
          bar.className = "share";
          bar.style.width = Math.max(1, Math.round(60 * r.seconds / busy)) + "px";
          td.appendChild(bar);
          td.appendChild(document.createTextNode(value));
          td.title = (100 * r.seconds / busy).toFixed(1) + "% of the rules' time";
        } else {
          td.textContent = value;
        }
        tr.appendChild(td);
      });
      tr.addEventListener("mouseenter", () => light(r.nodes, true));
      tr.addEventListener("mouseleave", () => {
        if (!tr.classList.contains("pinned")) light(r.nodes, false);
      });
      tr.addEventListener("click", () => {
        const pinned = tr.classList.toggle("pinned");
        light(r.nodes, pinned);
        if (pinned) {
          const first = document.getElementById("node-" + r.nodes[0]);
          if (first) first.scrollIntoView({block: "nearest", inline: "center"});
        }
      });
      body.appendChild(tr);
    });
    document.getElementById("rule-count").textContent =
      body.children.length + " of " + rules.length;
  }
  function sortBy(key) {
    ascending = key === sortKey ? !ascending : (key === "name" || key === "where");
    sortKey = key;
    const get = columns.find((c) => c[0] === key)[1];
    order = rules.map((r, k) => k);
    if (key !== "rank") {
      order.sort((a, b) => {
        const x = get(rules[a], a), y = get(rules[b], b);
        const c = typeof x === "string" ? x.localeCompare(y) : x - y;
        return ascending ? c : -c;
      });
    }
    document.querySelectorAll("#rules th").forEach((th) => {
      th.classList.toggle("sorted", th.dataset.key === key);
      th.classList.toggle("up", th.dataset.key === key && ascending);
    });
    render();
  }
  document.querySelectorAll("#rules th").forEach((th) =>
    th.addEventListener("click", () => sortBy(th.dataset.key)));
  document.getElementById("rule-filter").addEventListener("input", render);
  sortBy("seconds");
  document.body.dataset.ready = "yes";
})();
"""

PHASE_COLOURS = ("#8da0cb", "#d6604d", "#66c2a5", "#e5c494", "#b3b3b3")


def render(document: dict) -> str:
    """The page's HTML for a profile document (:mod:`datalog.profile.record`)."""
    program = document.get("program") or "program"
    total = document["seconds"] or 1e-12
    rules = document["rules"]
    strata = document["strata"]
    nodes = document["nodes"]
    phases = "".join(
        f'<span style="width:{100 * s / total:.2f}%;background:{PHASE_COLOURS[k % 5]}" '
        f'title="{escape(name)}: {seconds_text(s)}"></span>'
        for k, (name, s) in enumerate(document["phases"]))
    legend = "".join(f'<span><i style="background:{PHASE_COLOURS[k % 5]}"></i>'
                     f'{escape(name)} {seconds_text(s)}</span>'
                     for k, (name, s) in enumerate(document["phases"]))
    iterations = sum(len(s["iterations"]) for s in strata)
    cards = [("total time", seconds_text(document["seconds"])),
             ("peak memory", memory_text(document.get("peak_memory_kb", 0))),
             ("strata", f"{len(strata)} ({sum(s['recursive'] for s in strata)} recursive)"),
             ("iterations", f"{iterations:,}"),
             ("rules", f"{sum(r['kind'] == 'rule' for r in rules)}"),
             ("circuit nodes", f"{len(nodes)}")]
    out = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>Profile of {escape(os.path.basename(program))}</title>",
           f"<style>{CSS}</style></head><body>",
           f'<header><h1>Profile of {escape(program)}</h1><div class="sub">'
           f"{len(document.get('relations', {}))} relations, "
           f"{sum(document.get('relations', {}).values()):,} tuples at the end, "
           f"{document.get('epochs', 1)} epoch(s)</div></header><main>",
           '<div class="cards">' + "".join(f'<div class="card">{escape(k)}<b>{escape(v)}</b>'
                                           f"</div>" for k, v in cards) + "</div>",
           f'<section id="run"><h2>Where the time went</h2><div class="phases">{phases}</div>'
           f'<div class="legend">{legend}</div></section>']
    top = [r for r in rules if r["seconds"] > 0][:TOP_BARS]
    out.append('<section id="time-per-rule"><h2>Time per rule</h2>'
               + bar_chart([(r["name"], r["seconds"], seconds_text(r["seconds"]))
                            for r in top])
               + '<p class="note">Rules, and the operators a relation\'s rules share '
                 '(union, distinct, indexes), by the time of their circuit nodes.</p>'
                 '</section>')
    out.append(_iteration_charts(strata))
    out.append('<section id="circuit-section"><h2>The circuit, hot nodes numbered</h2>'
               + circuit_svg(nodes)
               + '<p class="note">Colour: time spent in the node (darker is more). Dashed '
                 'blue: feedback, one iteration later. Hover a node for its figures.</p>'
                 '</section>')
    out.append(_strata_table(strata))
    out.append('<section id="rules"><h2>Rules <span class="note" id="rule-count"></span>'
               '</h2><input type="search" id="rule-filter" placeholder="filter rules…">'
               '<table><thead><tr>'
               + "".join(f'<th data-key="{key}" class="{cls}">{label}</th>' for key, label, cls
                         in (("rank", "#", ""), ("name", "rule", "text"),
                             ("where", "where", "text"), ("stratum", "stratum", ""),
                             ("seconds", "time", ""), ("calls", "calls", ""),
                             ("tuples_in", "tuples in", ""), ("tuples_out", "tuples out", ""),
                             ("trace_rows", "trace rows", "")))
               + '</tr></thead><tbody id="rules-body"></tbody></table>'
                 '<p class="note">Point at a rule to light its nodes in the circuit above; '
                 'click to keep them lit. Tuples in and out count rows entering and '
                 'leaving the rule\'s nodes over all iterations.</p></section>')
    data = json.dumps(document, separators=(",", ":")).replace("</", "<\\/")
    out.append(f'</main><script type="application/json" id="profile-data">{data}</script>'
               f"<script>{SCRIPT}</script></body></html>")
    return "\n".join(out)


def _strata_table(strata: list[dict]) -> str:
    rows = []
    for s in strata:
        its = s["iterations"]
        rows.append(
            f"<tr><td>{s['index']}</td><td class=\"text\">"
            f"{escape(shorten(', '.join(s['relations']), 80))}</td>"
            f"<td class=\"text\">{'recursive' if s['recursive'] else ''}</td>"
            f"<td>{s['rules']}</td><td>{seconds_text(s['seconds'])}</td>"
            f"<td>{len(its) if s['recursive'] else ''}</td>"
            f"<td>{sum(i['tuples_out'] for i in its) if its else ''}</td>"
            f"<td>{memory_text(max(i['peak_memory_kb'] for i in its)) if its else ''}</td>"
            f"</tr>")
    return ('<section id="strata"><h2>Strata</h2><table id="strata-table"><thead><tr>'
            '<th>#</th><th class="text">relations</th><th class="text">kind</th>'
            '<th>rules</th><th>time</th><th>iterations</th><th>new tuples</th>'
            '<th>peak memory</th></tr></thead><tbody>' + "".join(rows)
            + "</tbody></table></section>")


def _iteration_charts(strata: list[dict]) -> str:
    recursive = sorted((s for s in strata if s["iterations"]), key=lambda s: -s["seconds"])
    if not recursive:
        return ('<section id="iterations"><h2>Tuples per iteration</h2><p class="note">'
                'No recursive stratum: every stratum ran once.</p></section>')
    figures = []
    for s in recursive[:MAX_STRATUM_CHARTS]:
        its = s["iterations"]
        epochs = {i["epoch"] for i in its}
        xs = [f"{i['iteration']}" if len(epochs) == 1 else f"{i['epoch']}:{i['iteration']}"
              for i in its]
        name = escape(shorten(", ".join(s["relations"]), 60))
        figures.append(
            f"<figure><figcaption>{{{name}}}: tuples</figcaption>"
            + line_chart([("new tuples", "#d6604d", [i["tuples_out"] for i in its]),
                          ("rule input", "#4393c3", [i["tuples_in"] for i in its]),
                          ("trace rows", "#5aae61", [i["trace_rows"] for i in its])], xs,
                         width=520)
            + "</figure>")
        figures.append(
            f"<figure><figcaption>{{{name}}}: time</figcaption>"
            + line_chart([("time", "#762a83", [i["seconds"] for i in its])], xs, unit="s",
                         width=420)
            + "</figure>")
    more = len(recursive) - MAX_STRATUM_CHARTS
    note = (f'<p class="note">{more} more recursive strata: see the JSON.</p>'
            if more > 0 else "")
    return ('<section id="iterations"><h2>Tuples per iteration</h2><div class="charts">'
            + "".join(figures) + "</div>" + note + "</section>")


def write_page(document: dict, path: str | os.PathLike) -> None:
    """Write the page for ``document`` to ``path``."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(render(document))
    except OSError as error:
        raise DatalogError(f"cannot write {os.fspath(path)}: {error.strerror}") from None
