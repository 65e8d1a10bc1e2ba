"""The rows a small batch probed keep their past entries (``OverlaidTrace.known``);
when an epoch's runs join the past at commit, what they hold for a known row
is added to it: afterwards each known row's entries are what a probe of the
past runs finds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import colbatch
from engine.operators.columns import key_run
from engine.operators.packedsmall import OverlaidTrace, probe

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
       st.sets(st.integers(0, 11), max_size=8))
def test_known_rows_hold_the_past_entries_after_a_commit(scan, past, epoch, known):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(colbatch, "SEARCH_KNOWN", scan)
        check_commit(past, epoch, known)


def check_commit(past, epoch, known):
    trace = OverlaidTrace()
    trace.past = [run for run in (run_of(p) for p in past if p) if run is not None]
    found = probe(trace.past, sorted(known))
    trace.known = {key: tuple(found.get(key, ())) for key in known}
    trace.cur = [run for run in (run_of(p) for p in epoch if p) if run is not None]
    trace.commit()
    after = probe(trace.past, sorted(known))
    for key in known:
        assert totals(trace.known[key]) == totals(after.get(key, ())), key
