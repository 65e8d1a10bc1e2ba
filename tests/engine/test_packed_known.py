"""The rows a small batch probed keep their past entries (``OverlaidTrace.known``):
afterwards each kept row's entries must be what a probe of the past runs
finds, whatever joins the past: an epoch's runs at commit (the kept entries
are then forgotten) or the ``older`` overlay at a flush (its entries added
to them)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.operators.columns import key_run
from engine.operators.packedsmall import OverlaidTrace, probe
from engine.trace import encode

entries = st.lists(st.tuples(st.integers(0, 9), st.integers(0, 4), st.sampled_from([-1, 1, 2])),
                   max_size=20)
overlay = st.dictionaries(st.integers(0, 11),
                          st.tuples(st.integers(0, 4), st.sampled_from([-1, 1])), max_size=6)


def run_of(found: list):
    keys, iterations, weights = (np.array(c, dtype="int64") for c in zip(*found))
    return key_run(keys, iterations, weights)


def totals(pairs) -> dict:
    out: dict = {}
    for j, w in pairs:
        out[j] = out.get(j, 0) + w
    return {j: w for j, w in out.items() if w}


def check_known(trace: OverlaidTrace) -> None:
    """Each kept row's entries are its entries in the past runs."""
    found = probe(trace.past, sorted(trace.known))
    for key, kept in trace.known.items():
        assert totals(kept) == totals(found.get(key, ())), key


@settings(max_examples=300, deadline=None)
@given(st.lists(entries, max_size=3), st.lists(entries, max_size=3),
       st.sets(st.integers(0, 11), max_size=8), overlay)
def test_known_rows_hold_the_past_entries_after_a_commit_and_a_flush(past, epoch, known, older):
    trace = OverlaidTrace()
    trace.past = [run for run in (run_of(p) for p in past if p) if run is not None]
    found = probe(trace.past, sorted(known))
    trace.known = {key: tuple(found.get(key, ())) for key in known}
    trace.older = {key: encode(j, w) for key, (j, w) in older.items()}
    trace.cur = [run for run in (run_of(p) for p in epoch if p) if run is not None]
    wrote = bool(trace.cur)
    trace.commit()
    check_known(trace)
    if not wrote:  # (nothing joined the past runs: every kept row stays)
        assert set(trace.known) == known
    trace.flush()  # the older overlay into the past runs
    assert not trace.older
    check_known(trace)
