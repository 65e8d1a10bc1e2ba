"""Components through the installed ``datalog`` command: an instance's I/O files
are named after the qualified relation (``g.edge.facts``, ``g.reach.csv``), as
Soufflé names them; errors in components are located; the REPL names instance
relations ``c.r``."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.cli.test_run import datalog, write

GRAPH = """.comp Graph<N> {
    .decl edge(x: N, y: N)
    .input edge
    .decl reach(x: N, y: N)
    .output reach
    reach(x, y) :- edge(x, y).
    reach(x, z) :- reach(x, y), edge(y, z).
    .decl named(x: symbol)
    .input named(filename="names.tsv")
    .printsize named
}
.init g = Graph<symbol>
.init h = Graph<number>
.decl both(x: symbol)
.output both(IO=stdout)
both(x) :- g.reach(x, _), g.named(x).
"""


def test_run_reads_and_writes_qualified_files(tmp_path):
    write(tmp_path / "p.dl", GRAPH)
    facts = tmp_path / "facts"
    facts.mkdir()
    write(facts / "g.edge.facts", "a\tb\nb\tc\n")
    write(facts / "h.edge.facts", "1\t2\n")
    write(facts / "names.tsv", "a\nz\n")
    result = datalog("run", "p.dl", "-F", "facts", "-D", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "g.reach.csv").read_text() == "a\tb\na\tc\nb\tc\n"
    assert (tmp_path / "out" / "h.reach.csv").read_text() == "1\t2\n"
    # both instances read names.tsv (a file name given in the component is kept)
    assert result.stdout == ("---------------\nboth\n===============\na\n===============\n"
                             "g.named\t2\nh.named\t2\n")


def test_a_missing_instance_file_is_named(tmp_path):
    write(tmp_path / "p.dl", ".comp C { .decl r(x: number) .input r }\n.init c = C\n")
    result = datalog("run", "p.dl", cwd=tmp_path)
    assert result.returncode == 1
    assert "c.r.facts" in result.stderr and "Traceback" not in result.stderr


def test_check_locates_component_errors(tmp_path):
    write(tmp_path / "p.dl", ".comp Base { .decl r(x: number) }\n"
                             ".comp Sub : Base {\n  .override r\n}\n.init s = Sub\n")
    result = datalog("check", "p.dl", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.startswith("p.dl:3:3: error: relation `r` is not `overridable`\n"
                                    "      .override r\n      ^~~~~~~~~~~\n")


def test_repl_inserts_and_queries_through_an_instance(tmp_path):
    write(tmp_path / "p.dl", GRAPH.replace(".input edge", "").replace(
        '    .input named(filename="names.tsv")\n', ""))
    session = "g.edge(\"a\", \"b\").\nh.edge(1, 2).\n?- g.reach(x, y).\n-g.edge(\"a\", \"b\").\n" \
              "?- g.rech(x, y).\n"
    result = subprocess.run(["datalog", "repl", "p.dl"], input=session, capture_output=True,
                            text=True, cwd=tmp_path, timeout=120, check=False)
    out = result.stdout + result.stderr
    assert '+g.reach("a", "b")' in out and "+h.reach(1, 2)" in out
    assert 'g.reach("a", "b")\n1 row' in out
    assert '-g.reach("a", "b")' in out
    assert "undefined relation `g.rech`" in out and "did you mean `g.reach`?" in out
    assert "Traceback" not in out


def test_example_program_files(tmp_path):
    example = Path(__file__).parents[2] / "programs" / "components"
    result = datalog("run", str(example / "components.dl"), "-F", str(example / "facts"),
                     "-D", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "friends.reach.csv", "roads.reach.csv", "roads.stats.hub.csv", "round_trip.csv"]
