"""Runs (engine.columnar): a run whose keys do not repeat is probed with one
``searchsorted``; its answers equal the general two-sided probe's, and a merge
of two such runs knows whether the result is one too."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.columnar import Run, make_run, merge_runs
from engine.operators.columns import probe

keys = st.lists(st.integers(-3, 12), max_size=12)


def run_of(values: list, iteration: int | None = None, unique=None) -> Run | None:
    """A run of the keys (weights -1, 2, -1, ...; at ``iteration``, or at
    iterations 0, 1, 0, ... so that a key may repeat)."""
    n = len(values)
    at = np.full(n, iteration) if iteration is not None else np.arange(n) % 2
    found = make_run([np.array(values, dtype="int64")], at,
                     np.where(np.arange(n) % 2, 2, -1), 0)
    if found is not None and unique is not None:
        found.unique = unique
    return found


def pairs(found) -> list:
    return [] if found is None else sorted(zip(found[0].tolist(), found[1].tolist()))


@settings(max_examples=200, deadline=None)
@given(keys, keys, st.booleans())
def test_a_probe_of_unique_keys_finds_what_the_general_probe_finds(values, sought, distinct):
    if distinct:
        values = sorted(set(values))
    run = run_of(values)
    if run is None:
        return
    general = run_of(values, unique=False)
    wanted = np.array(sorted(sought), dtype="int64")
    assert run.is_unique() == (len(set(run.keys.tolist())) == len(run.keys))
    assert pairs(probe(wanted, run)) == pairs(probe(wanted, general))
    assert run.weight_sums(wanted).tolist() == general.weight_sums(wanted).tolist()
    assert run.weight_sums(wanted).tolist() == [
        int(run.weights[run.keys == k].sum()) for k in wanted.tolist()]


@settings(max_examples=200, deadline=None)
@given(keys, keys)
def test_a_merge_of_unique_runs_knows_whether_it_is_unique(first, second):
    a, b = run_of(sorted(set(first)), 0), run_of(sorted(set(second)), 1)
    if a is None or b is None:
        return
    assert a.is_unique() and b.is_unique()
    merged = merge_runs([a, b], 0)  # (the second's iterations later: interleaved)
    assert merged.unique is not None
    keys_of = merged.keys.tolist()
    assert merged.unique == (len(set(keys_of)) == len(keys_of))
    assert keys_of == sorted(keys_of)
