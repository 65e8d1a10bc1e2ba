"""Traces: histories, compaction, rollback and ordered access."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.columnar import ColumnarTrace, narrow
from engine.time import Timestamp, leq, lub
from engine.trace import (
    MAX_PACKED,
    Trace,
    ZSetTrace,
    encode,
    history_add,
    history_items,
    history_total,
    merge_histories,
)

rows = st.tuples(st.integers(0, 4), st.integers(0, 3))
batches = st.dictionaries(rows, st.integers(-2, 2).filter(bool), max_size=5)
epochs = st.lists(st.lists(st.tuples(st.integers(0, 3), batches), max_size=3), max_size=6)


@settings(max_examples=150, deadline=None)
@given(epochs, st.booleans())
def test_nested_trace_keeps_every_weight_by_iteration_and_compacts(history, fail_last):
    trace = Trace(nested=True, index=("cols", (0,)))
    expected: dict = {}  # (key, row, iteration) -> weight over committed epochs
    list(trace.keys())   # build the sorted index early: commits must keep it
    for number, epoch in enumerate(history):
        pending = dict(expected)
        for iteration, batch in epoch:
            trace.append_rows(batch, iteration)
            for row, w in batch.items():
                k = ((row[0],), row, iteration)
                pending[k] = pending.get(k, 0) + w
        if fail_last and number == len(history) - 1:
            trace.rollback()
        else:
            expected = {k: w for k, w in pending.items() if w}
        trace.commit()
        got = {(key, value, time[1]): w for key, value, time, w in trace.entries()}
        assert got == expected
        assert list(trace.keys()) == sorted({k for k, _, _ in expected})
        assert trace.size() == len(expected)


@settings(max_examples=100, deadline=None)
@given(st.lists(batches, max_size=6))
def test_root_trace_is_the_consolidated_past(history):
    trace = Trace(nested=False, index=("cols", (1,)))
    total: dict = {}
    for batch in history:
        trace.append_rows(batch)
        for row, w in batch.items():
            total[row] = total.get(row, 0) + w
        trace.commit()
        total = {r: w for r, w in total.items() if w}
        assert {value: w for _, value, _, w in trace.entries()} == total
        for key in {(r[1],) for r in total}:
            assert trace.collection(key) == {r: w for r, w in total.items() if (r[1],) == key}


def test_zset_trace_rollback_and_commit():
    trace = ZSetTrace(nested=True)
    trace.append({(1,): 1}, iteration=2)
    trace.commit()
    trace.append({(1,): -1}, iteration=2)
    trace.rollback()
    trace.commit()
    assert history_items(trace.past[(1,)]) == [(2, 1)]
    trace.append({(1,): -1}, iteration=2)
    trace.commit()
    assert trace.past == {} and trace.size() == 0


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(-3, 3).filter(bool)), max_size=8))
def test_histories_add_up_per_iteration(additions):
    history = None
    expected: dict = {}
    for iteration, weight in additions:
        history = history_add(history, iteration, weight)
        expected[iteration] = expected.get(iteration, 0) + weight
        expected = {i: w for i, w in expected.items() if w}
        if history is None:
            assert expected == {}
        else:
            assert history_items(history) == sorted(expected.items())
            assert history_total(history) == sum(expected.values())


def canonical(history) -> bool:
    """An int for one packable time, else a dict of nonzero weights."""
    if type(history) is int:
        return history >> 20 != 0
    return all(history.values()) and (
        len(history) > 1 or (len(history) == 1 and max(history) > MAX_PACKED))


times = st.lists(st.tuples(st.sampled_from([0, 1, 2, 5, MAX_PACKED + 1]),
                           st.integers(-2, 2).filter(bool)), max_size=4)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.integers(0, 5), times), st.dictionaries(st.integers(0, 5), times))
def test_merged_histories_sum_per_iteration_in_canonical_form(past, epoch):
    """merge_histories (a commit) against sums per (value, iteration): every
    combination of int and dict histories, times cancelling, wide iterations."""
    def build(additions):
        out: dict = {}
        for value, pairs in additions.items():
            history = None
            for iteration, weight in pairs:
                history = history_add(history, iteration, weight) if history is not None \
                    else encode(iteration, weight)
            if history is not None:
                out[value] = history
        return out

    expected: dict = {}
    for additions in (past, epoch):
        for value, pairs in additions.items():
            for iteration, weight in pairs:
                expected[(value, iteration)] = expected.get((value, iteration), 0) + weight
    target = build(past)
    merge_histories(target, build(epoch))
    got = {(value, j): w for value, history in target.items() for j, w in history_items(history)}
    assert got == {k: w for k, w in expected.items() if w}
    assert all(canonical(history) for history in target.values())


def test_encoded_histories_hold_negative_and_large_weights():
    for iteration, weight in ((0, -1), (7, -(2 ** 40)), (1_000_000, 3 ** 50)):
        assert history_items(encode(iteration, weight)) == [(iteration, weight)]


def test_product_order():
    assert leq((0, 1), (1, 1)) and not leq((0, 2), (1, 1)) and not leq((1, 1), (0, 2))
    assert lub((0, 2), (1, 1)) == (1, 2)
    assert Timestamp((2, 5)).epoch == 2 and Timestamp((2, 5)).iteration == 5


def naive_parts(entries: dict, epoch: int):
    """{part: {key: {value: {iteration: weight}}}} of a trace at ``epoch`` from its
    committed entries ``{(key, value, epoch, iteration): weight}``."""
    parts: dict = {"past": {}, "epoch": {}}
    for (key, value, at, iteration), weight in entries.items():
        part = parts["past" if at < epoch else "epoch"]
        history = part.setdefault(key, {}).setdefault(value, {})
        history[iteration] = history.get(iteration, 0) + weight
    return parts


@pytest.mark.parametrize("kind", [Trace, ColumnarTrace])
@settings(max_examples=150, deadline=None)
@given(epochs, st.integers(0, 4))
def test_cursors_answer_the_operators_questions(kind, history, i):
    """Every cursor question (seek, seek_many, values, times, weight, weight
    until, split, entries) against the entries recomputed from what was
    appended, for each trace implementation."""
    trace = kind(nested=True, index=("cols", (0,)))
    rows = ZSetTrace(nested=True)
    entries: dict = {}
    for number, epoch in enumerate(history):
        for iteration, batch in epoch:
            trace.append_rows(batch, iteration)
            rows.append(batch, iteration)
            for row, w in batch.items():
                at = ((row[0],), row, number, iteration)
                entries[at] = entries.get(at, 0) + w
        entries = {at: w for at, w in entries.items() if w}
        if number < len(history) - 1:  # the last epoch stays open: its appends are `epoch`
            trace.commit()
            rows.commit()
    now = trace.epoch
    parts = naive_parts(entries, now)
    for name, cursor, row_cursor in (("past", trace.past_cursor(), rows.past_cursor()),
                                     ("epoch", trace.epoch_cursor(), rows.epoch_cursor())):
        part = {k: {v: {j: w for j, w in h.items() if w} for v, h in g.items()}
                for k, g in parts[name].items()}
        part = {k: {v: h for v, h in g.items() if h} for k, g in part.items()}
        part = {k: g for k, g in part.items() if g}
        reported = now - 1 if name == "past" else now
        assert bool(part) == bool(row_cursor)
        assert bool(cursor) or not part  # a columnar part may hold entries that cancel
        assert sorted(cursor.keys()) == sorted(part)
        wanted = [(0,), (9,), (2,), (0,)]
        assert list(cursor.seek_many(wanted)) == sorted({k for k in wanted if k in part})
        assert sorted((k, v, t, w) for k, v, t, w in cursor.entries()) == sorted(
            (k, v, (reported, j), w) for k, g in part.items() for v, h in g.items()
            for j, w in h.items())
        for key in {(k,) for k in range(5)}:
            assert cursor.seek(key) == (key in part)
            group = part.get(key, {})
            if key in part:
                assert sorted(cursor.values()) == sorted(group)
            for value, h in group.items():
                assert cursor.times(value) == [((reported, j), w) for j, w in sorted(h.items())]
                assert cursor.weight(value) == sum(h.values())
                assert cursor.weight(value, until=i) == sum(w for j, w in h.items() if j <= i)
                later = [j for j, w in h.items() if j > i]
                assert cursor.split(value, i) == (
                    sum(w for j, w in h.items() if j < i), h.get(i, 0),
                    min(later) if later else None)
                # the row trace holds the same histories, without the key level
                assert row_cursor.times(value) == cursor.times(value)
                assert row_cursor.split(value, i) == cursor.split(value, i)
                assert row_cursor.weight(value, until=i) == cursor.weight(value, until=i)
            assert cursor.weights() == {v: sum(h.values()) for v, h in group.items()
                                        if sum(h.values())}
        assert sorted(row_cursor.rows()) == sorted(v for g in part.values() for v in g)
        everything = sorted(v for g in part.values() for v in g) + [(9, 9)]
        assert row_cursor.weights_of(everything) == [
            sum(part.get((v[0],), {}).get(v, {}).values()) for v in everything]


big_weights = st.dictionaries(rows, st.sampled_from([1, -1, 100, -100, 30_000, 1 << 40]),
                              max_size=5)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from([0, 3, 200, 40_000]), big_weights),
                         max_size=4), max_size=5))
@example([[(40_000, {(3, 0): -100}), (0, {(3, 1): 1})],     # the only entry at 40,000
          [(40_000, {(3, 0): 100}), (0, {(3, 1): 1})],      # cancels: int8 iterations
          [(0, {(3, 0): 100})]])
def test_columnar_runs_in_narrow_types_sum_past_them_exactly(history):
    """Runs keep iterations and weights in int8/16/32 when they fit; merging
    runs whose weights add up past the type's range (100 + 100 in int8) stays exact."""
    from engine.colbatch import columns_from

    with columns_from(0):
        trace = ColumnarTrace(nested=True, index=("cols", (0,)))
        expected: dict = {}
        for epoch in history:
            for iteration, batch in epoch:
                trace.append_rows(batch, iteration)
                for row, w in batch.items():
                    k = ((row[0],), row, iteration)
                    expected[k] = expected.get(k, 0) + w
            expected = {k: w for k, w in expected.items() if w}
            trace.commit()
            got = {(key, value, time[1]): w for key, value, time, w in trace.entries()}
            assert got == expected
    for run in trace.past:  # each in the narrowest type of its values
        for values in (run.iterations, run.weights):
            assert values.dtype == narrow(values.astype("int64")).dtype


def test_a_columnar_trace_back_in_dicts_keeps_one_object_per_number_and_history():
    trace = ColumnarTrace(nested=True, index=("cols", (0,)))
    trace.append_rows({(1000, 5000 + i % 3): 1 for i in range(3)} | {(2000, 5000): 1},
                      iteration=7)
    trace.commit()
    dicts = trace.to_trace()
    rows = [(key, row, history) for key, group in dicts.past.items()
            for row, history in group.items()]
    assert sorted((key, row) for key, row, _ in rows) == [
        ((1000,), (1000, 5000)), ((1000,), (1000, 5001)), ((1000,), (1000, 5002)),
        ((2000,), (2000, 5000))]
    assert len({id(history) for _, _, history in rows}) == 1      # weight 1 at iteration 7
    fives = [row[1] for _, row, _ in rows if row[1] == 5000]
    assert fives[0] is fives[1]
    thousands = [number for key, row, _ in rows for number in (key[0], row[0])
                 if number == 1000]
    assert len(thousands) == 6 and len({id(n) for n in thousands}) == 1


def _gathered(cursor, keys, nested: bool) -> dict:
    """key -> value -> iteration -> weight (zeros left out) of a gather."""
    out: dict = {}
    for key, entries in cursor.gather(keys).items():
        for value, part in entries:
            j, w = part if nested else (0, part)
            history = out.setdefault(key, {}).setdefault(value, {})
            history[j] = history.get(j, 0) + w
    return {k: g for k, g in ((k, {v: h for v, h in ((v, {j: w for j, w in h.items() if w})
                                                      for v, h in g.items()) if h})
                              for k, g in out.items()) if g}


@settings(max_examples=150, deadline=None)
@given(epochs, st.booleans(), st.integers(1, 6), st.integers(1, 8), st.data())
def test_a_columnar_trace_with_overlays_reads_as_one_without(history, nested, small, flush,
                                                             data):
    """Small appends wait in dict overlays (``recent``, ``older``) until the
    overlay grows past OVERLAY_ROWS or a reader of runs asks for ``past`` or
    ``cur``: every read (gather of few keys and of many, gather_columns,
    entries, collection) equals that of a trace whose appends all became runs,
    after commits, rollbacks and reads that sort the overlays in."""
    import numpy as np

    from engine import colbatch, columnar

    plain = ColumnarTrace(nested=nested, index=("cols", (0,)))
    overlaid = ColumnarTrace(nested=nested, index=("cols", (0,)))
    saved = colbatch.OVERLAY_APPEND, columnar.OVERLAY_ROWS
    try:
        columnar.OVERLAY_ROWS = flush
        for epoch in history:
            for iteration, batch in epoch:
                iteration = iteration if nested else 0
                colbatch.OVERLAY_APPEND = 0
                plain.append_rows(batch, iteration)
                colbatch.OVERLAY_APPEND = small
                overlaid.append_rows(batch, iteration)
                if data.draw(st.integers(0, 5)) == 0:
                    _ = overlaid.cur if data.draw(st.booleans()) else overlaid.past
            if data.draw(st.integers(0, 4)) == 0:
                plain.rollback()
                overlaid.rollback()
            else:
                plain.commit()
                overlaid.commit()
            keys = [(k,) for k in range(-1, 6)]
            for name in ("past_cursor", "epoch_cursor"):
                want = _gathered(getattr(plain, name)(), keys, nested)
                assert _gathered(getattr(overlaid, name)(), keys, nested) == want
                assert _gathered(getattr(overlaid, name)(), keys[2:4], nested) == {
                    k: g for k, g in want.items() if k in keys[2:4]}
                columns, weights = getattr(overlaid, name)().gather_columns(
                    np.array([0, 2, 3], dtype="int64"))
                got: dict = {}
                for row, w in zip(zip(*(c.tolist() for c in columns)), weights.tolist()):
                    got[row] = got.get(row, 0) + w
                assert {r: w for r, w in got.items() if w} == {
                    v: sum(h.values()) for k, g in want.items() if k[0] in (0, 2, 3)
                    for v, h in g.items() if sum(h.values())}
            assert list(overlaid.entries()) == list(plain.entries())
            assert overlaid.collection((1,)) == plain.collection((1,))
            assert overlaid.past_entries() >= 0
        assert overlaid.to_trace().collection((2,)) == plain.collection((2,))
    finally:
        colbatch.OVERLAY_APPEND, columnar.OVERLAY_ROWS = saved
