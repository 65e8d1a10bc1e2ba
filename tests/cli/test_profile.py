"""Profiling through the installed command: ``datalog run -p``, ``datalog
profile`` (the table and the HTML page, the page checked in a real headless
Chromium), and ``run``'s ``-j`` and ``--show``."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from tests.cli.test_run import datalog, write

ROOT = Path(__file__).resolve().parents[2]
TC = ROOT / "programs" / "transitive_closure"
BOM = ROOT / "programs" / "bill_of_materials"


def profiled(tmp_path: Path, example: Path, name: str) -> dict:
    """Run ``example`` with ``-p`` and without, check the outputs agree, and
    return the profile."""
    program = example / f"{example.name}.dl"
    plain = datalog("run", str(program), "-F", str(example / "facts"), "-D", "plain",
                    cwd=tmp_path)
    result = datalog("run", "-p", name, str(program), "-F", str(example / "facts"),
                     "-D", "out", cwd=tmp_path)
    assert plain.returncode == 0 and result.returncode == 0, result.stderr
    assert result.stdout == plain.stdout
    for path in (tmp_path / "plain").iterdir():
        assert (tmp_path / "out" / path.name).read_text() == path.read_text()
    return json.loads((tmp_path / name).read_text())


def test_run_p_records_strata_rules_and_iterations(tmp_path):
    profile = profiled(tmp_path, TC, "prof.json")
    assert profile["format"] == "datalog-profile" and profile["version"] == 1
    assert [p[0] for p in profile["phases"]] == ["read inputs, compile", "evaluate",
                                                "write outputs"]
    assert profile["peak_memory_kb"] > 1000
    assert profile["relations"] == {"edge": 6, "path": 15, "on_cycle": 3}
    path, on_cycle = profile["strata"]
    assert path["relations"] == ["path"] and path["recursive"]
    assert not on_cycle["recursive"] and on_cycle["iterations"] == []
    iterations = path["iterations"]
    # the edges form a chain of 4 plus a cycle: paths of length 1 to 4, then nothing new
    assert [i["iteration"] for i in iterations] == [0, 1, 2, 3]
    assert sum(i["tuples_out"] for i in iterations) == 15   # every path once
    assert iterations[0]["tuples_out"] == 6 and iterations[-1]["tuples_out"] == 0
    assert all(i["seconds"] > 0 and i["peak_memory_kb"] > 0 for i in iterations)
    rules = {r["name"]: r for r in profile["rules"]}
    recursive = rules["path(x, z) :- path(x, y), edge(y, z)."]
    assert recursive["kind"] == "rule" and recursive["stratum"] == 0
    assert recursive["where"].endswith("transitive_closure.dl:54:1")
    assert [it[1] for it in recursive["iterations"]] == [0, 1, 2, 3]
    # the join's output at iteration i is what the distinct sees new at i + 1
    assert [it[4] for it in recursive["iterations"]][:3] == [0, 5, 4]
    assert rules["on_cycle(x) :- path(x, x)."]["tuples_out"] == 3
    assert rules["path: index by (1,)"]["trace_rows"] == 15
    assert profile["rules"] == sorted(profile["rules"], key=lambda r: -r["seconds"])
    ids = {n["id"] for n in profile["nodes"]}
    assert all(set(n["inputs"] + n["reads"]) <= ids for n in profile["nodes"])
    assert {n["rule"] for n in profile["nodes"]} >= set(rules)


def test_profile_prints_the_top_rules(tmp_path):
    profiled(tmp_path, BOM, "prof.json")
    result = datalog("profile", "prof.json", "--top", "5", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(str(BOM / "bill_of_materials.dl") + ": ")
    assert "peak memory" in lines[0]
    assert "    3" in result.stdout and "uses" in result.stdout   # the recursive stratum
    top = lines[lines.index(next(x for x in lines if x.startswith("top 5 of "))) + 2:]
    assert len(top) == 5
    assert any("bill_of_materials.dl:" in line for line in top)


@pytest.mark.parametrize("content, message", [
    ("not json", "not a profile (not JSON"),
    ('{"format": "something else"}', "not a profile written by `datalog run -p`"),
    ('{"format": "datalog-profile", "version": 99}', "of version 99"),
    ('{"format": "datalog-profile", "version": 1, "rules": []}', "damaged profile"),
])
def test_profile_of_something_else_is_a_clear_error(tmp_path, content, message):
    write(tmp_path / "p.json", content)
    result = datalog("profile", "p.json", cwd=tmp_path)
    assert result.returncode == 1 and message in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1


def test_profile_usage_errors(tmp_path):
    assert datalog("profile", "missing.json", cwd=tmp_path).returncode == 2
    program = str(TC / "transitive_closure.dl")
    result = datalog("run", "-p", "p.json", "--engine", "spark", program, cwd=tmp_path)
    assert result.returncode == 2 and "local engine" in result.stderr
    result = datalog("run", "-p", "no/such/p.json", program, "-F", str(TC / "facts"),
                     "-D", "out", cwd=tmp_path)
    assert result.returncode == 1 and "cannot write the profile" in result.stderr
    assert not (tmp_path / "out").exists()     # failed before writing anything


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    assert found, "the profile page is tested in Chromium: apt-get install chromium"
    return found


def browse(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", "--virtual-time-budget=5000", *args],
                          capture_output=True, text=True, timeout=120, check=False)


def png_pixels(path: Path) -> tuple[int, int, bytes, int]:
    """Width, height, the pixels (filters undone) and bytes per pixel of an 8-bit
    RGB or RGBA PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, k = {}, 8
    while k < len(data):
        (length,), kind = struct.unpack(">I", data[k:k + 4]), data[k + 4:k + 8]
        chunks.setdefault(kind, []).append(data[k + 8:k + 8 + length])
        k += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][0][:10])
    assert depth == 8 and colour in (2, 6)
    step = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks[b"IDAT"]))
    stride, previous, out = width * step, bytearray(width * step), bytearray()
    for y in range(height):
        kind, row = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:
                                                        (y + 1) * (stride + 1)])
        for x in range(stride):
            a = row[x - step] if x >= step else 0
            b, c = previous[x], previous[x - step] if x >= step else 0
            if kind == 1:
                row[x] = (row[x] + a) & 255
            elif kind == 2:
                row[x] = (row[x] + b) & 255
            elif kind == 3:
                row[x] = (row[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[x] = (row[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) \
                    & 255
        out += row
        previous = row
    return width, height, bytes(out), step


def test_profile_page_in_a_real_browser(tmp_path):
    profile = profiled(tmp_path, BOM, "prof.json")
    result = datalog("profile", "prof.json", "--html", "page.html", cwd=tmp_path)
    assert result.returncode == 0 and "wrote page.html" in result.stderr
    page = (tmp_path / "page.html").read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)   # nothing fetched
    dom = browse("--dump-dom", (tmp_path / "page.html").as_uri())
    assert dom.returncode == 0, dom.stderr
    html = dom.stdout
    assert 'data-ready="yes"' in html   # the script ran to its end
    rows = re.findall(r'<tr class="rule-row (rule|relation)" data-nodes="([^"]*)">'
                      r'<td>(\d+)</td><td class="rule text">([^<]*)</td>', html)
    assert len(rows) == len(profile["rules"]) > 20
    # built by the script from the embedded JSON, sorted by time, longest first
    by_time = [r["name"] for r in sorted(profile["rules"], key=lambda r: -r["seconds"])]
    unescape = {"&lt;": "<", "&gt;": ">", "&quot;": '"', "&amp;": "&"}
    names = [re.sub("&[a-z]+;", lambda m: unescape[m.group()], r[3]) for r in rows]
    assert names == by_time and [int(r[2]) for r in rows] == list(range(1, len(rows) + 1))
    assert f"{len(rows)} of {len(rows)}" in html
    circuit = re.search(r'<svg id="circuit".*?</svg>', html, re.S).group()
    drawn = re.findall(r'<g class="node( hot)?" id="node-([\d.]+)"', circuit)
    assert len(drawn) > 50 and sum(1 for hot, _ in drawn if hot) == 5
    drawn_ids = {node_id for _, node_id in drawn}
    assert all(set(r[1].split()) & drawn_ids for r in rows if r[0] == "rule")
    assert circuit.count('class="cluster"') == 1   # the one recursive stratum, {uses}
    assert "recursive stratum {uses}" in circuit
    assert html.count('<svg class="bars"') == 1 and html.count('<svg class="lines"') == 2
    assert 'id="strata-table"' in html and html.count("<polyline") == 4

    shot = tmp_path / "page.png"
    result = browse("--window-size=1024,768", f"--screenshot={shot}",
                    (tmp_path / "page.html").as_uri())
    assert result.returncode == 0 and shot.exists(), result.stderr
    width, height, pixels, step = png_pixels(shot)
    assert (width, height) == (1024, 768)
    colours = {pixels[k:k + 3] for k in range(0, len(pixels), step * 7)}
    assert len(colours) > 50            # text, charts and colours, not a blank page
    header = pixels[40 * width * step:40 * width * step + 3]
    assert header == bytes((0x2B, 0x2D, 0x42))   # the page's dark header was painted


def test_jobs_is_accepted_and_checked(tmp_path):
    program, facts = str(TC / "transitive_closure.dl"), str(TC / "facts")
    plain = datalog("run", program, "-F", facts, "-D", "-", cwd=tmp_path)
    for value in ("4", "auto"):
        result = datalog("run", "-j", value, program, "-F", facts, "-D", "-", cwd=tmp_path)
        assert result.returncode == 0 and result.stdout == plain.stdout
    for value in ("0", "many"):
        result = datalog("run", "-j", value, program, cwd=tmp_path)
        assert result.returncode == 2 and "positive number or `auto`" in result.stderr
    result = datalog("run", "-j", "2", "--engine", "spark", "--master", "local[1]", program,
                     cwd=tmp_path)
    assert result.returncode == 2 and "with --master" in result.stderr
    assert "-j, --jobs" in datalog("run", "--help").stdout


def test_show_prints_the_program_as_the_engine_sees_it(tmp_path):
    write(tmp_path / "p.dl", """.decl same(a: symbol, b: symbol) eqrel
.input same
.decl odd(x: number)
.output odd
odd(1).
odd(x + 2) :- odd(x), x < 5 ; odd(x), x = 100.
""")
    result = datalog("run", "--show=transformed-datalog", "p.dl", "-D", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        ".decl same(a: symbol, b: symbol)", ".decl odd(x: number)", ".input same",
        ".output odd", "", "odd(1).", "",
        "// stratum 0: odd (recursive)",
        "odd((x + 2)) :- odd(x), x < 5.", "odd((x + 2)) :- odd(x), x = 100.", "",
        "// stratum 1: same (recursive)",
        "same(x, x) :- same(x, _).", "same(y, x) :- same(x, y).",
        "same(x, z) :- same(x, y), same(y, z)."]
    assert not (tmp_path / "out").exists()     # shown, not run
    plan = datalog("plan", "p.dl", cwd=tmp_path).stdout
    result = datalog("run", "--show", "plan", "--show", "circuit", "p.dl", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == plan + "\n" + plan.split("circuit:\n")[1]
    result = datalog("run", "--show=ram", "p.dl", cwd=tmp_path)
    assert result.returncode == 2 and "transformed-datalog" in result.stderr


@pytest.mark.spark
def test_jobs_sets_the_cores_of_the_local_spark(tmp_path):
    # a JVM of its own: slower than `datalog()` allows on a busy machine
    result = subprocess.run(["datalog", "run", "--engine", "spark", "-j", "2", "-v",
                             str(TC / "transitive_closure.dl"), "-F", str(TC / "facts"),
                             "-D", "out"], capture_output=True, text=True, cwd=tmp_path,
                            check=False, timeout=900)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0] == "spark: master local[2]"
    for expected in (TC / "expected").iterdir():
        assert (tmp_path / "out" / expected.name).read_text() == expected.read_text()
