"""The RFC 4180 reader: its one-line fast path agrees with the careful reader on
random texts, and every row the writer quotes reads back as itself."""

from __future__ import annotations

import random

import pytest

from datalog.dialect.formats import _record, quote_rfc4180, split_rfc4180

PIECES = ["a", '"', ",", "\n", "\r", " ", "x", '""', ";;", "\t", "é"]


def careful(text: str, sep: str):
    records, line, i = [], 1, 0
    while i < len(text):
        start = line
        fields, quoted, i, line = _record(text, i, line, sep)
        if not quoted and len(fields) == 1 and not fields[0].strip(" \t\v\f\r"):
            continue
        records.append((start, fields))
    return records


def outcome(read, text, sep):
    try:
        return read(text, sep)
    except ValueError as exc:
        return exc.args


@pytest.mark.parametrize("seed", range(4))
def test_the_fast_path_agrees_with_the_careful_reader(seed):
    rnd = random.Random(seed)
    for _ in range(5000):
        sep = rnd.choice([",", ";;", "\t"])
        text = "".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 14)))
        assert outcome(split_rfc4180, text, sep) == outcome(careful, text, sep), (text, sep)


@pytest.mark.parametrize("seed", range(4))
def test_quoted_rows_read_back(seed):
    rnd = random.Random(seed)
    for _ in range(2000):
        sep = rnd.choice([",", ";;", "\t"])
        rows = [["".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 6)))
                 for _ in range(rnd.randint(1, 3))] for _ in range(rnd.randint(1, 4))]
        text = "".join(sep.join(quote_rfc4180(v) for v in row) + "\n" for row in rows)
        assert [fields for _, fields in split_rfc4180(text, sep)] == rows, text
