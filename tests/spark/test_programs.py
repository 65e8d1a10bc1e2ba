"""Every example program of ``programs/`` run by both engines: the files written
are its ``expected/`` files byte for byte, and both engines print the same."""

from __future__ import annotations

import pytest

from tests.programs import example_programs
from tests.spark.engines import ENGINES, read_outputs, run

EXAMPLES = example_programs()
CASES = [(e, engine) for e in EXAMPLES for engine in ENGINES]
IDS = [f"{e.name}-{engine}" for e, engine in CASES]


@pytest.mark.spark
@pytest.mark.parametrize("example,engine", CASES, ids=IDS)
def test_outputs_equal_expected(example, engine, spark, tmp_path):
    files, stdout = run(engine, str(example.path), str(example.facts_dir), str(tmp_path),
                        spark if engine == "spark" else None)
    expected = read_outputs(str(example.expected_dir))
    written = {name: text for name, text in files.items() if name in expected}
    assert written == expected
    assert set(files) <= set(expected) | {f"{name}.csv" for name in example.outputs()}
    if engine == "spark":   # .printsize and IO=stdout text as the local engine prints it
        _, local_stdout = run("local", str(example.path), str(example.facts_dir),
                              str(tmp_path / "local"))
        assert stdout == local_stdout
