"""The rows a small batch probed keep their past runs' entries, added up into a
history (``OverlaidTrace.known``); when an epoch's runs join the past at
commit, or the ``older`` overlay (the ``recent`` one added to it at commit)
becomes a run of the past, what they hold for a known row is added to it:
afterwards each known row's history is what a probe of the past runs finds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import colbatch
from engine.operators.columns import key_run
from engine.operators.packedsmall import OverlaidTrace, probe, with_entries
from engine.trace import history_items

entries = st.lists(st.tuples(st.integers(0, 9), st.integers(0, 4), st.sampled_from([-1, 1, 2])),
                   max_size=20)


def run_of(found: list):
    keys, iterations, weights = (np.array(c, dtype="int64") for c in zip(*found))
    return key_run(keys, iterations, weights)


def totals(pairs) -> dict:
    out: dict = {}
    for j, w in pairs:
        out[j] = out.get(j, 0) + w
    return {j: w for j, w in out.items() if w}


@pytest.mark.parametrize("scan", [0, 1 << 20])  # runs searched; runs read entry by entry
@settings(max_examples=300, deadline=None)
@given(st.lists(entries, max_size=3), st.lists(entries, min_size=1, max_size=3),
       entries, entries, st.sets(st.integers(0, 11), max_size=8))
def test_known_rows_hold_the_past_entries_after_a_commit(scan, past, epoch, older, recent,
                                                         known):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(colbatch, "SEARCH_KNOWN", scan)
        check_commit(past, epoch, older, recent, known)


def overlay(found: list) -> dict:
    """packed row -> history of ``(row, iteration, weight)`` entries."""
    out: dict = {}
    for key, j, w in found:
        history = with_entries(out.pop(key, None), [(j, w)])
        if history is not None:
            out[key] = history
    return out


def past_of(trace: OverlaidTrace, key: int) -> dict:
    """iteration -> weight of ``key`` in the past runs."""
    return totals(probe(trace.past, [key]).get(key, []))


def check_commit(past, epoch, older, recent, known):
    trace = OverlaidTrace()
    trace.past = [run for run in (run_of(p) for p in past if p) if run is not None]
    trace.older = overlay(older)
    found = probe(trace.past, sorted(known))
    trace.known = {key: with_entries(None, found.get(key, ())) for key in known}
    trace.cur = [run for run in (run_of(p) for p in epoch if p) if run is not None]
    trace.recent = overlay(recent)
    trace.commit()
    check_known(trace, known)
    trace.flush()  # the ``older`` overlay into a run of the past
    check_known(trace, known)


def check_known(trace: OverlaidTrace, known: set) -> None:
    assert set(trace.known) == known
    for key in known:
        history = trace.known[key]
        assert (totals(history_items(history)) if history is not None else {}) \
            == past_of(trace, key), key
