"""Columnar batches: a Z-set as typed numpy columns and a weight array.

A :class:`ColBatch` holds the same thing as a dict batch (row -> nonzero
weight) as one array per column and an ``int64`` array of weights, one entry
per row, **consolidated** (each row once, no zero weight). A column has a
**kind**: ``"i"`` (``int64``: Soufflé's ``number``), ``"u"`` (``uint64``: ints
past ``int64``), ``"f"`` (``float64``) or ``"s"`` (symbols, interned to dense
``int64`` ids by :data:`SYMBOLS`, which keeps the reverse table).

It *is* a read-only mapping row -> weight, so every operator that reads a batch
as a dict reads a columnar one unchanged: the rows are made (once, lazily) when
something asks for them. The operators of a recursive stratum that work on
columns (:mod:`engine.operators.columns`) take the columns instead and never
make rows.

Consolidation sorts (never ``np.unique`` without counts, which measured 20–70×
slower than a sort on large ``int64`` arrays in numpy 2.x; DESIGN.md §10): the
columns are packed into one ``int64`` sort key when their ranges allow, else
sorted with ``np.lexsort``.

>>> b = ColBatch.from_rows({(1, "a"): 1, (2, "b"): -2})
>>> b.kinds, len(b), b[(2, "b")]
(('i', 's'), 2, -2)
>>> s = concat([b, b.negate(), ColBatch.from_rows({(3, "a"): 1})]); dict(s)
{(3, 'a'): 1}
>>> ColBatch.from_rows({(1, 2.5): 1}).kinds, ColBatch.from_rows({(1 << 63,): 1}).kinds
(('i', 'f'), ('u',))
>>> ColBatch.from_rows({(1, "a"): 1, ("b", 2): 1}) is None   # a column of two types
True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from itertools import chain

from engine import lazy
from engine.zset import ZSet

np = lazy.module("numpy", globals())
INT64 = "int64"
# Where the columnar path starts to win, per operator: batches smaller than
# these stay dicts (numpy calls cost microseconds each even on a few rows).
# Measured with `python -m benchmarks.columnar_crossover` (state 50,000 rows,
# 2-core AMD EPYC, loaded; µs per call, rows path / columns path):
#   join on a dict trace:  64 rows 48/69, 256 rows 178/134, 1,024 rows 1,096/389
#   join on runs:          16 rows 84/76 (the row path reads runs slowly)
#   distinct:              256 rows 124/203, 1,024 rows 585/419, 4,096 2,742/1,365
#   plus:                  64 rows 24/40, 256 rows 81/81, 1,024 rows 329/275
# `columns_from(0)` forces the columnar path on every batch (tests).

#: A join's delta of at least this many rows is joined on columns (its traces
#: then go into runs); a trace append of a columnar batch this large too. Far
#: above the join's own crossover (256), for the whole loop: until Distinct Trace
#: is columnar too the loop converts batches between rows and columns (a
#: 400-node chain ran 1.7x slower at 256), and state left in runs makes the
#: small updates that follow pay numpy's per-call costs (same generation on a
#: depth-6 tree, 5,334 tuples, at 1,024: batch 8 -> 22 ms, single-fact updates
#: 1 -> 5-7 ms). At 8,192 the workloads of `python -m benchmarks --quick` stay
#: on rows (as fast as before) and the large ones go columnar (closure of the
#: 1,000-node random graph: batch 2.6 -> 1.2 s, same generation on the depth-10
#: tree 3.4 -> 2.1 s, their single-fact updates unchanged). A linear chain
#: with a columnar form takes a batch of rows this large on columns too (a
#: bulk load's input, put in columns first: the row loop made a row of each,
#: freed with the epoch; Andersen's head `points_to(p, a) :- addr_of(p, a).`,
#: 9,859 rows: free space pinned in pymalloc's arenas after the batch 6.9 ->
#: 1.3 B a tuple, batch CPU unchanged).
THRESHOLD = 8192
#: A join whose traces are runs already takes the columnar path from this size
#: from iteration LONG_LOOP on (before it, from LOOP_ROWS: an update's short
#: loop reads the small appends' overlays, which a columnar join would sort
#: into runs each time; Andersen's updates, mean CPU 4.0 -> 3.4 ms);
#: so does one whose other trace is a small dict (under SMALL_STATE) from
#: iteration LONG_LOOP on, moving that trace to runs (it goes back at commit):
#: a chain's update loop (a 1,000-node chain's retraction of the edge (121,
#: 122), ~120 rows over ~880 iterations, made rows of every delta to probe the
#: edges' dict: 1,998 row joins took 1.7 of the 7.4 s profiled).
JOIN_ON_RUNS = 16
#: Distinct Trace moves its trace into packed runs at a batch this large (and
#: then stays there while it holds SMALL_STATE entries or more; its batches
#: under SMALL_ROWS are taken row by row there). Its own crossover is
#: 1,024; set with THRESHOLD for the same reasons.
DISTINCT_ROWS = 8192
#: Plus adds on columns from this many rows (when one input is columnar).
PLUS_ROWS = 256
#: A dict of at most this many rows added to a batch of int columns is added
#: row by row (engine.operators.columns.add_few: ~4 numpy calls a row, no
#: sort) instead of made columns and consolidated with it (~25 calls): a
#: chain's update adds one row due from the edge's change to the join's output
#: at each of ~1,000 iterations.
PLUS_FEW = 4
#: A Distinct Trace whose state is packed takes a batch (with the rows due at
#: the iteration) of fewer rows than this row by row on the packed state, as
#: cheap as on dicts (engine.operators.packedsmall: Andersen's analysis on
#: ~60,000 packed rows, ~3 µs a row that way, ~150 µs the vectorised step;
#: twice as many when its past has no box directory:
#: engine.operators.packedsmall.UNBOXED_FACTOR).
SMALL_ROWS = 64
#: A join's delta under 1,024 rows (engine.operators.columns.DISTINCT_PROBE)
#: is sorted by its key before probing a part of the other trace only when a
#: run of it holds more entries than this: its searches then walk the run
#: forward where unsorted ones would miss the cache; a smaller run stays in
#: cache and the sort (four numpy calls) bought nothing: a 1,000-node chain's
#: update loop (~120-300 rows an iteration against its 1,000 edges) ran as
#: fast without it (242-265 vs 245-257 ms CPU an update, within the noise),
#: with four calls fewer an iteration.
SORTED_PROBE_RUN = 1 << 16
#: An Aggregate of a built-in (engine.aggregates.Reduce) computes its changed
#: groups on columns (engine.operators.aggcols) from a columnar batch this
#: large, and from a batch of rows in a dict AGGREGATE_DICT_ROWS large (it is
#: converted first). `python -m benchmarks.aggregate_crossover` (weighted
#: count and sum, 8 values a key, µs per call rows/columns): columnar batch,
#: past 50,000 rows in dicts: 16 rows 26/96, 256 221/195 (sum 250/171), 1,024
#: 919/410; bulk load (no past): 64 45/75, 256 165/100, 1,024 662/167. Dict
#: batch, past in dicts: 256 272/243 (sum 244/252), 1,024 918/748, 16,384
#: 17,411/13,088; bulk load: 256 179/218, 1,024 682/458. (Past in runs,
#: Circuit(columnar_threshold=...): 64 198/106, 1,024 2,668/261.)
AGGREGATE_ROWS = 256
AGGREGATE_DICT_ROWS = 1024
#: In a loop whose state is large, a join's delta or a Distinct Trace's batch
#: of at least this many rows goes columnar (below THRESHOLD): the join's
#: traces holding SMALL_STATE rows; a Distinct Trace in dicts once this
#: epoch has brought it SMALL_STATE entries (a chain's long epoch, not a small
#: update: its packed state would stay and make the small updates after it pay
#: numpy's per-call costs, Andersen's analysis 1.5 -> 2.7 ms an update).
#: A dict probe costs ~1 µs a row whatever the state, a columnar step a fixed
#: 50-150 µs plus little per row; with the state large the loop stays
#: columnar from there on (no rows made per iteration, the state in runs).
#: Closure of a 1,000-node chain (~500 rows an iteration over 1,000
#: iterations, 500,000 paths): see README "Columnar runtime". Only from
#: iteration LONG_LOOP on.
LOOP_ROWS = 256
#: ... or once a node's batches were of LOOP_ROWS rows or more and within
#: STEADY_RATIO of each other for STEADY_SPAN iterations in a row (a chain's
#: closure: 999, 998, 997, ... rows; a random graph's or a tree's grow and
#: shrink by factors): the loop is a long one before LONG_LOOP (see steady).
#: tc-chain-1000's batch (/tmp/wt/batchcpu.py-style process_time around the
#: batch, three runs alternated with 6f5be79 on a loaded machine): CPU
#: 0.29/0.36/0.29 -> 0.21/0.25/0.21 s with the other changes of branch chains2
#: (its iterations 1-63 on rows 55-68 -> 36-40 ms, the dict state's move to
#: runs at iteration ~20 instead of 64 smaller); tc-chain-400 0.089/0.091 ->
#: 0.073/0.074 s. Taken before LONG_LOOP by no other workload of the full and
#: quick suites, batch or updates (counted: tc-random, sg, andersen, negagg).
#: 8 in a row, not 16, and a steady loop's join and Distinct Trace go
#: columnar whatever the size of their state (SMALL_STATE applies from
#: LONG_LOOP on): tc-chain-1000's first ~20 iterations (20,000 rows) ran on
#: dicts before; batch CPU (``python -m benchmarks.profile_engine
#: tc-chain-1000 --cpu --updates 4``, five runs alternated, min/median)
#: 144/150 -> 131/134 ms, single-fact updates 213/221 -> 209/214 ms;
#: tc-chain-2000 354/389 -> 353/364 ms. Counted in the full and quick
#: suites' batches and 3 updates each: steady before LONG_LOOP, chains only.
#: At 4 in a row, tc-random-200-400 (iteration 8) and negagg-200-300 (9-11)
#: were steady too, their batches' states then left in runs: updates
#: 3.0/3.2 -> 3.3/3.5 and 2.2/2.3 -> 2.6/2.9 ms.
STEADY_SPAN = 8
STEADY_RATIO = 1.25
#: Under THRESHOLD, dict traces (a join's larger than its delta, a Distinct
#: Trace's) move into runs only from this iteration on: a loop that ran this long is a long one (a
#: chain's), where the move pays; a short loop's tail does not repay it, and
#: its state left in runs makes the updates after it slower (closure of a
#: 200-node random graph, 21 iterations, moved at iteration 9-10: batch 108 ->
#: 78 ms CPU, single-fact updates 4.6 -> 1.8 ms median with it kept in dicts;
#: same generation on a depth-10 tree: single-fact updates 9 -> 13-21 ms when a
#: small dict trace moved to runs and back at commit).
LONG_LOOP = 64
#: At the end of an epoch, a Distinct Trace or join trace in runs holding fewer
#: entries than this goes back to dicts, where the small deltas of the next
#: updates are cheaper (same generation on a depth-6 tree: single-fact updates
#: 5-7 ms with its state left in runs, 1 ms in dicts); the move costs about a
#: microsecond per entry, so larger states stay in runs. A join goes columnar
#: only when one of its traces holds this many rows with the time's delta
#: counted in (which the append then takes to runs): negagg-1000-1500's
#: iteration 6 brought a columnar delta of 8,660 rows to a trace of 18,174,
#: and without the delta counted it went through the row loop (33 ms; 10 ms on
#: columns). A join trace a bulk epoch (COMMIT_ROWS rows or more) took to
#: runs stays there through that commit (the load's memory) and goes back at
#: the commit of the first smaller epoch: andersen-200x50's two traces of
#: ~18,000 entries read by its small joins, per-update CPU medians (150
#: updates, six alternated runs) retract 0.93 -> 0.76 ms, insert 0.68 -> 0.62
#: (negagg-1000-1500 3.64 / 2.92 -> 3.52 / 2.85, tc-random-1000-2000 and
#: sg-tree-10 unchanged); it costs the first update ~20 ms and ~6 MiB of RSS
#: after it (35 B a derived tuple; the batch's unchanged).
SMALL_STATE = 20_000
#: In a child circuit, a join given a delta already in columns (a Distinct
#: Trace's output on packed state) of this many rows joins it on columns even
#: against a small dict trace of a lower stratum's relation (not appended to
#: after iteration 0: a loop's own trace would need a new copy every
#: iteration; Andersen's bulk load 0.41 -> 0.56 s), through a copy of it in
#: runs kept beside it
#: (engine.operators.join.TraceNode.columns_view): the row loop would make
#: the delta's rows, and the next Distinct its columns again. Closure of the
#: 1,000-node random graph, single-fact updates (CPU ms, median retract /
#: insert, mean; 60 pairs, loaded machine): row loop 14.6 / 13.3, 18.0; from
#: 256 rows 14.2 / 12.2, 15.6; 128: 13.2 / 12.8, 15.0; 64: 13.4 / 12.4, 14.6;
#: 32: 12.2 / 11.0, 14.2 (a second run: 13.8 / 13.4, 15.5 at 32, 12.6 /
#: 11.8, 14.2 at 64).
VIEW_ROWS = 64
#: ... against a dict trace of fewer than this many entries (a closure's
#: edges): a copy of a larger one, made again when an epoch that did not read
#: it changed it, cost more than the row loop saved (Andersen's analysis,
#: traces of 18,000 rows: single-fact updates 3.5 -> 5.5 ms).
VIEW_STATE = 4096
#: A new copy is made only for a delta of at least a VIEW_COPY th of the
#: trace's entries (a copy costs ~0.5 µs an entry, the row loop ~1.5 µs a
#: delta row); one read in every epoch is kept, carried over at commit (a
#: closure's edges: copied once, in the bulk load).
VIEW_COPY = 4
#: ...unless an epoch appended this many rows or more to the join trace (a
#: bulk load, a large update): then it is in runs at the end of that epoch and
#: stays there while it holds this many entries. Andersen's analysis (200
#: variables x 50): its three traces of 10,000-18,500 rows, under
#: SMALL_STATE, stayed in dicts at ~160-300 bytes an entry: reachable state
#: 111.5 -> 75 B per derived tuple; its single-fact updates, their small
#: appends in overlays (OVERLAY_APPEND) and probes by gather_few
#: (GATHER_FEW), 1.85/1.55 -> 1.50/1.17 ms median retract/insert CPU (base
#: with dict traces, same run). (The RSS after a trim did not fall, 129 B:
#: the pymalloc arenas the dicts had filled stay pinned by a few live
#: objects.) So one append of this many rows to a dict trace a join on
#: columns reads, in the root or at a child's iteration 0 (a bulk load's
#: input; a loop's own trace keeps the loop's rules: moved at a later
#: iteration's delta of 4,662 rows, negagg-1000-1500's batch held 57 -> 79 B a
#: tuple of RSS before a trim), moves it to runs first and the dicts
#: are never built (engine.operators.join.TraceNode.bulk_to_runs): Andersen's
#: ``assign``, 9,902 rows at iteration 0, made 2.5 MiB of small objects
#: freed at iteration 2, and its iteration 1 joined 9,891 rows by the row
#: loop (traces under SMALL_STATE); `python -m benchmarks.memory_breakdown
#: andersen-200x50`: free space pinned in pymalloc's arenas 29.2 -> 6.9 B a
#: tuple, RSS after the batch 144 / 102 -> 124 / 82 B a tuple (steady /
#: trimmed), batch CPU and single-fact updates unchanged.
COMMIT_ROWS = 4096
#: A join trace in runs (engine.columnar) takes an append of fewer rows than
#: this into a dict overlay, read with its runs and sorted into them when a
#: columnar operator reads the runs or the overlay lists
#: engine.columnar.OVERLAY_ROWS entries: two appends, two reads and a commit
#: on 25,000 entries in runs, µs runs/overlay: 1 row 251/6, 4 rows 322/9,
#: 16 rows 366/18, 32 rows 334/29, 64 rows 389/135.
OVERLAY_APPEND = 32
#: A row join's probe of a columnar trace for this few keys times runs or
#: fewer seeks each key in each run by itself (engine.columnar.gather_few:
#: ``Run.span``, a binary search of the keys' memoryview or a directory, no
#: numpy call) instead of the vectorised gather: µs a probe scalar/vectorised
#: (both on the same random runs and keys, loaded machine), by keys times
#: runs: runs of 152,000, 30,000, 5,500 and 166 entries (19 a key): 4
#: 7.7/103, 8 30/110, 16 68/139, 32 144/201, 64 288/262; runs of 15,000 and
#: 3,400 (1.5 a key): 8 10/73, 16 49/104, 32 98/125, 64 158/136. (16 when
#: each key was a scalar ``searchsorted``: runs of 20,000 and 5,000, 16 keys
#: 126/128, 32 keys 148/259.)
GATHER_FEW = 32
#: (A past's memo of the keys gathered is kept from one epoch to the next
#: while it lists at most engine.columnar.MEMO_KEPT, 8,192, entries: an
#: insert seeks again what the retraction before it sought; Andersen's
#: single-fact insert CPU median ~8% lower (0.94-1.30 -> 0.77-1.08 ms, four
#: rounds alternated with the memo never kept, loaded machine), its
#: retraction 0-6% higher, the pair ~5% lower. Rows due from a vectorised
#: step are unpacked in bulk past engine.operators.packedsmall.UNPACK_FEW, 8:
#: no difference measurable in the medians.)
#: A long thin loop (from iteration LONG_LOOP, a few rows an iteration): a
#: child's key-less join trace (engine.logtrace) goes into a log of typed arrays
#: once the epoch appended LOG_FROM rows (moved in bulk, ~0.3 µs an entry; an
#: append then costs ~0.5 µs a row instead of ~1), and a Distinct Trace in
#: dicts seals its epoch's rows into packed runs every SEAL_ROWS rows
#: (engine.operators.sealed; ~0.2 µs a row, checked every 64 iterations). The
#: counter to 1,000,000 (`python -m benchmarks.memory_breakdown counter-1000000`):
#: join trace 146 -> 13 B a row, Distinct's 70 -> 13, RSS 229 -> 40 B a tuple;
#: batch CPU 5.35 -> 5.08 s with the Export's log below (`python -m
#: benchmarks.profile_engine counter-1000000 --cpu`, alternated with main).
#: Both go back to dicts at commit under SMALL_STATE
#: entries, as the packed states do, so they start only at SMALL_STATE rows:
#: from 4,096, a counter to 10,000 moved its state to arrays and back at the
#: commit (sealed.to_dicts, LogTrace.to_trace, compiles: ~10 ms CPU of a 57 ms
#: batch; five batches a process, batch CPU, min: 10,000 57.7 -> 48.5 ms,
#: 30,000 146.7 -> 149.7, 1,000,000 4,864/4,871 -> 4,967/4,900 ms).
LOG_FROM = SMALL_STATE
SEAL_ROWS = SMALL_STATE
#: ... and only while the epoch's dict grew by at most THIN_ROWS rows an
#: iteration since the last seal: a loop of more rows an iteration (a closure's
#: update, ~100 rows) would search the runs for most of its rows (a row of a
#: counter's, growing, is past every run and never searched; one of a closure's
#: is within their bounds, a scalar searchsorted per run, ~1 µs each).
THIN_ROWS = 4
#: An Export (a child's epoch difference seen from the parent) whose sum holds
#: EXPORT_LOG_FROM rows logs its batches of fewer than EXPORT_LOG_BATCH rows
#: into typed arrays (engine.logtrace.RowLog), one columnar batch at the end:
#: the counter to 1,000,000's difference took ~130 B a row in a dict, ~16
#: logged (`python -m benchmarks --only engine --only counter-1000000`, B a
#: tuple peak / steady / trim: 354 / 229 / 229 before this and the log traces
#: above, 225 / 40 / 38 with those, 130 / 46 / 29 with this too).
EXPORT_LOG_FROM = SMALL_STATE
EXPORT_LOG_BATCH = 16
#: A run (engine.columnar) of this many entries or more keeps its iterations
#: and weights in the narrowest int type that holds them; shorter ones stay
#: int64: they hold little, and finding the range (two passes) cost single-fact
#: updates more than it saved (their appends make many small runs, which merge
#: into larger ones later).
NARROW_ROWS = 1024
# (datalog.inputs's FOLD, 8,192, is the session's: its input rows go to arrays
# from that many rows, as batches go columnar from THRESHOLD.)
#: A Distinct Trace's vectorised step takes ``w3`` (the epoch's weight of
#: each row so far) from a table indexed by the row's cells
#: (engine.operators.densesums) from a batch of DENSE_ROWS rows on, when the
#: box of the rows' columns holds at most DENSE_CELLS cells per row of the
#: epoch (an int32 table: 10 bytes a row at most, dropped at commit) and at
#: most DENSE_MAX cells; its runs are then merged once, not at every
#: iteration. Closure of the 1,000-node random graph (a million cells, the
#: table from iteration 8 of 23): the Distinct's CPU in the batch 152 -> 73 ms
#: (three runs alternated with 6171db1, loaded machine; process_time around
#: DistinctTraceNode.evaluate in the benchmark's batch; the merge at the end
#: 17-30 ms of it). Same generation on the depth-10 tree
#: (4.2 million cells, 1.4 million rows) is left out: at 8 cells a row (and at
#: 3) it made the table at its last large iteration only, for no gain in user
#: time and more page faults (the Distinct's system time 9-22 -> 41-146 ms).
DENSE_ROWS = 8192
DENSE_CELLS = 2.5
DENSE_MAX = 1 << 24
#: A Distinct Trace's past run of BOX_ROWS entries or more whose rows'
#: columns span at most BOX_CELLS cells an entry is indexed by cell
#: (engine.operators.densesums.BoxDirectory, an int32 a cell: at most 8
#: bytes an entry), made at the first vectorised step that reads it: a
#: probe is two gathers, not a binary search of the run. Closure of the
#: 1,000-node random graph (its Distinct's past: 1.1 million entries, a
#: million cells, 4 MB of directory): single-fact updates, mean CPU, 40
#: pairs, loaded machine, three runs alternated: 11.0-12.4 -> 9.7-10.7 ms.
BOX_ROWS = 1 << 16
BOX_CELLS = 2
#: ... and from iteration TABLE_FROM of a long loop on, for a batch of any
#: size, when the box holds at most TABLE_SPARSITY cells an entry of the
#: whole state (past, epoch and batch; the past's box included: the rows due
#: come from it): a chain's update writes a few hundred rows an iteration for
#: ~1,000 iterations over a past of 500,000 paths (1,000,000 cells). A table
#: refused as too sparse is asked for again at twice the entries. CPU
#: alternating with 1a68735 (/tmp/wt/updprof.py, batchcpu.py; with
#: TABLE_SMALL_ROWS, PAST_FACTOR, PLUS_FEW): tc-chain-1000 single-fact update
#: 225-240 -> 171-172 ms, batch 0.39-0.46 -> 0.29-0.31 s (the first epoch's
#: table at ~125,000 entries, iteration ~130); tc-chain-2000 update 832-900 ->
#: 552-600 ms; batch peak 166 -> 176 B/tuple (the int32 table, 4 MB, and the
#: epoch's runs unmerged; steady 49 -> 53).
#: Not before iteration 64: a short epoch's few steps saved less than the
#: pages its scattered rows touch cost (tc-random-1000-2000, ~11 vectorised
#: steps an update: 14.5-15.6 -> 16.2-16.9 ms CPU a single-fact update with a
#: table from iteration 0; measured on branch chains' int64 epoch table).
#: 32 cells an entry, not 8: a chain's first epoch then makes its table at
#: iteration ~64 (2,000 nodes: 4 million cells, 128,000 entries) rather than
#: ~256 (its searches and geometric merges of the epoch's runs cost ~1.4 ms
#: an iteration before): batch CPU, ``python -m benchmarks.profile_engine
#: tc-chain-2000 --cpu``, four runs alternated, min/median, 417/466 ->
#: 355/357 ms; tc-chain-1000 154/156 -> 146/147 ms (128 cells an entry:
#: 355/373 and 145/148, no better). The table lives for the epoch only
#: (int32: 16 MB for the 2,000-node chain's box).
TABLE_FROM = LONG_LOOP
TABLE_SPARSITY = 32
#: With a table, a Distinct Trace's batch is taken row by row
#: (engine.operators.packedsmall, reading and adding to the table) only under
#: this many rows, not SMALL_ROWS: the vectorised step then costs ~45 µs
#: whatever the batch (no runs searched, none merged). tc-chain-1000's
#: single-fact update, CPU with 64 / 16 / 4: 195-201 / 184-189 / 189-195 ms
#: (the small batches of the tail of its loop; branch chains' table: on this
#: one, two rounds on a loaded machine, 200-275 ms for each, no ranking).
#: So is a batch of a long loop's step that would make a table
#: (engine.operators.densesums.table_due): a retraction near a chain's end
#: keeps ~120 rows an iteration for ~900 iterations, under small_rows' 128,
#: and never made one; row by row cost ~2 µs a row (~250 µs an iteration),
#: the vectorised step ~50 µs, and the commit merged a 120,000-row overlay
#: (85 ms). ``profile_engine tc-chain-1000 --cpu --updates 4``, alternated
#: with 72b8623: 212, 211 -> 108, 110 ms a step.
TABLE_SMALL_ROWS = 16
# Thresholds of the runtime kept beside what they govern: engine.memory's
# TRIM_AFTER and TRIM_GROWTH (malloc_trim after a long step) and
# engine.gcpolicy's YOUNG (young collections every 100,000 net container
# allocations while a step runs, not 700: time in the collector per single-fact
# update 0.7 -> 0.05-0.14 ms on sg-tree-10, tc-random-1000-2000 and
# negagg-1000-1500, 10 -> 2 ms on tc-chain-1000; gc callbacks, 60 updates),
# engine.columnar's PAST_FACTOR and PAST_LARGE (an epoch's large run merges
# into the past only under twice its size: a chain's update), FACTOR and
# MERGE_CHUNK (a long loop's tail of small runs packed for its sort a chunk of
# up to 65,536 entries at a time: tc-chain-1000's commit of 936 runs, the
# join trace's merge 64 -> 44 ms under cProfile, 681,000 -> 416,000 function
# calls in the batch with the other changes of branch chains2).
#: Times each columnar operator ran (``join``, ``distinct``, ``plus``, a linear
#: chain wholly on columns: ``linear``), rows of columnar batches that went
#: through linear stages per row (``row_stages``: stages with no columnar form,
#: or a batch the vectorised form could not compute exactly) and such batches
#: (``row_batches``), Distinct Trace's tables of an epoch's weights made
#: (``dense_tables``, engine.operators.densesums), iterations of child circuits
#: run by their generated loop (``loop_iterations``, engine.schedule): for tests and profiles,
#: which check that a path was (or was not) taken.
COUNTS: dict[str, int] = {"join": 0, "distinct": 0, "plus": 0, "linear": 0,
                          "row_stages": 0, "row_batches": 0, "dense_tables": 0,
                          "loop_iterations": 0}


@contextlib.contextmanager
def columns_from(rows: int | None, state: int | None = None):
    """Every threshold above set to ``rows`` for the block (``None``: the
    defaults), :data:`SMALL_STATE` to ``state`` (by default ``rows`` too);
    ``columns_from(0)``: every batch columnar, state kept in runs, epoch
    tables at any density and iteration (:data:`TABLE_SPARSITY`, :data:`TABLE_FROM`).

    >>> from engine import colbatch
    >>> with columns_from(0): print(colbatch.THRESHOLD, colbatch.DISTINCT_ROWS)
    0 0
    >>> colbatch.THRESHOLD == THRESHOLD
    True
    """
    names = ("THRESHOLD", "JOIN_ON_RUNS", "DISTINCT_ROWS", "PLUS_ROWS", "NARROW_ROWS",
             "LOOP_ROWS", "SMALL_ROWS", "AGGREGATE_ROWS", "AGGREGATE_DICT_ROWS",
             "COMMIT_ROWS", "OVERLAY_APPEND", "DENSE_ROWS", "BOX_ROWS")
    saved = {name: globals()[name]
             for name in (*names, "SMALL_STATE", "TABLE_SPARSITY", "TABLE_FROM")}
    if rows is not None:
        globals().update(dict.fromkeys(names, rows))
        globals()["SMALL_STATE"] = rows
    if rows == 0:
        globals().update(TABLE_SPARSITY=DENSE_MAX, TABLE_FROM=0)
    if state is not None:
        globals()["SMALL_STATE"] = state
    try:
        yield
    finally:
        globals().update(saved)


class Interner:
    """Symbols <-> dense ``int64`` ids (the ids say nothing about order).

    >>> t = Interner(); t.ids(["x", "y", "x"]).tolist(), t.symbols(np.array([1, 0]))
    ([0, 1, 0], ['y', 'x'])
    """

    def __init__(self):
        self.table: dict[str, int] = {}
        self.names: list[str] = []

    def ids(self, symbols) -> np.ndarray:
        table, names = self.table, self.names
        out = []
        for symbol in symbols:
            found = table.get(symbol)
            if found is None:
                found = table[symbol] = len(names)
                names.append(symbol)
            out.append(found)
        return np.array(out, dtype=INT64)

    def symbols(self, ids: np.ndarray) -> list[str]:
        names = self.names
        return [names[k] for k in ids.tolist()]


SYMBOLS = Interner()


def _column(values: list):
    """``(kind, array)`` of one column of Python values; ``None`` when the
    column mixes types or holds a value no kind can."""
    types = set(map(type, values))   # one C-level pass (a generator: 3x slower)
    if types <= {int, bool}:
        try:
            return "i", np.array(values, dtype=INT64)
        except OverflowError:
            try:
                return "u", np.array(values, dtype=np.uint64)
            except OverflowError:
                return None
    if types == {float}:
        return "f", np.array(values, dtype=np.float64)
    if types == {str}:
        return "s", SYMBOLS.ids(values)
    return None


class ColBatch(Mapping):
    """A consolidated Z-set in columns (module docstring)."""

    __slots__ = ("bounds", "columns", "kinds", "packed", "weights", "_rows")

    def __init__(self, columns: list, kinds: tuple, weights: np.ndarray, bounds=None):
        self.columns = columns
        self.kinds = kinds
        self.weights = weights
        self._rows: dict | None = None
        # (low, high) of each int64 column, when known (its values lie within:
        # a consolidation found them), so that a packing checks no range again
        self.bounds: list | None = bounds
        # the rows packed as a Distinct packs them (:func:`pack_rows`), in
        # order and distinct, when a consolidation sorted by them: the
        # Distinct reading the batch then neither packs nor checks the order
        self.packed: np.ndarray | None = None

    # -- conversion ---------------------------------------------------------

    @classmethod
    def from_rows(cls, batch: Mapping) -> ColBatch | None:
        """The batch (row -> weight) in columns; ``None`` when its rows do not
        fit (no columns, rows of several arities, a column of mixed types)."""
        if isinstance(batch, ColBatch):
            return batch
        n = len(batch)
        if not n:
            return None
        rows = list(batch)
        arity = len(rows[0])
        if not arity:
            return None
        weights = np.fromiter(batch.values(), dtype=INT64, count=n)
        table = None
        if set(map(type, chain.from_iterable(rows))) <= {int, bool}:
            try:  # ints of int64 in rows of one arity: 3x faster than np.array(rows)
                table = np.fromiter(chain.from_iterable(rows), dtype=INT64,
                                    count=n * arity).reshape(n, arity)
            except (OverflowError, ValueError):
                table = None
        if table is not None:  # (bools equal their ints as dict keys)
            return cls([np.ascontiguousarray(table[:, c]) for c in range(arity)],
                       ("i",) * arity, weights)
        if set(map(len, rows)) != {arity}:
            return None
        columns, kinds = [], []
        for values in zip(*rows):
            found = _column(list(values))
            if found is None:
                return None
            kinds.append(found[0])
            columns.append(found[1])
        out = cls(columns, tuple(kinds), weights)
        out._rows = batch if type(batch) is dict else None
        return out

    def column_values(self, c: int) -> list:
        """Column ``c`` as Python values (symbols decoded). A long column of
        few distinct numbers shares one Python object per number (as rows made
        from the same input would), not one per cell."""
        column = self.columns[c]
        if self.kinds[c] == "s":
            return SYMBOLS.symbols(column)
        if len(column) < 4096 or self.kinds[c] == "f":
            return column.tolist()
        ordered = np.sort(column)
        starts = np.concatenate(([True], ordered[1:] != ordered[:-1]))
        if int(starts.sum()) * 4 > len(column):
            return column.tolist()
        distinct = ordered[starts]
        return list(map(distinct.tolist().__getitem__,
                        distinct.searchsorted(column).tolist()))

    def rows(self) -> dict:
        """The batch as a :class:`~engine.zset.ZSet` row -> weight (made once,
        then kept)."""
        if self._rows is None:
            values = [self.column_values(c) for c in range(len(self.columns))]
            rows = zip(*values) if values else [()] * len(self.weights)
            self._rows = ZSet(zip(rows, self.weights.tolist()))
        return self._rows

    @property
    def int_only(self) -> bool:
        """Whether every column is ``int64`` (what columnar traces hold)."""
        return self.kinds.count("i") == len(self.kinds)

    # -- the mapping, over the rows -------------------------------------------

    def __len__(self) -> int:
        return len(self.weights)

    def __bool__(self) -> bool:
        return len(self.weights) > 0

    def __getitem__(self, row):
        return self.rows()[row]

    def __iter__(self) -> Iterator:
        return iter(self.rows())

    def __contains__(self, row) -> bool:
        return row in self.rows()

    def get(self, row, default=None):
        return self.rows().get(row, default)

    def keys(self):
        return self.rows().keys()

    def items(self):
        return self.rows().items()

    def values(self):
        return self.rows().values()

    def __eq__(self, other) -> bool:
        return isinstance(other, Mapping) and self.rows() == dict(other)

    __hash__ = None

    def __repr__(self) -> str:
        return f"ColBatch({self.rows()!r})"

    # -- operations ---------------------------------------------------------

    def negate(self) -> ColBatch:
        return ColBatch(self.columns, self.kinds, -self.weights)

    def project(self, columns) -> ColBatch:
        """``tuple(row[c] for c in columns)`` of each row, consolidated."""
        return consolidate([self.columns[c] for c in columns],
                           tuple(self.kinds[c] for c in columns), self.weights)


def steady(state: list, size: int, i: int) -> bool:
    """Whether a node's batch of ``size`` rows at iteration ``i`` makes
    :data:`STEADY_SPAN` in a row (one an iteration) of :data:`LOOP_ROWS`
    rows or more, all within :data:`STEADY_RATIO` of each other; ``state``
    (``[count, least, greatest, iteration]``, the node's) is updated.

    >>> state = [0, 0, 0, -1]
    >>> [steady(state, 1000 - i, i) for i in range(STEADY_SPAN)][-2:]
    [False, True]
    >>> steady(state, 2000, STEADY_SPAN), state == [1, 2000, 2000, STEADY_SPAN]
    (False, True)
    >>> steady(state, 2000, STEADY_SPAN + 2), state[0]   # an iteration missed
    (False, 1)
    """
    count, low, high, last = state
    state[3] = i
    if size < LOOP_ROWS:
        state[0] = 0
        return False
    if count and last == i - 1 and size <= low * STEADY_RATIO and high <= size * STEADY_RATIO:
        state[0], state[1], state[2] = count + 1, min(low, size), max(high, size)
    else:
        state[0], state[1], state[2] = 1, size, size
    return state[0] >= STEADY_SPAN


def bounds_of(columns: list) -> list | None:
    """``[(low, high), ...]`` of ``int64`` columns (``None`` for another dtype
    or no entries)."""
    if not len(columns[0]) or any(c.dtype != INT64 for c in columns):
        return None
    return [(int(c.min()), int(c.max())) for c in columns]


def sort_key(columns: list, bounds: list | None = None) -> np.ndarray | None:
    """One ``int64`` per entry ordering the entries as ``np.lexsort`` of the
    columns (the first column most significant) would, for equal entries
    equal; ``None`` when the columns' ranges do not fit 63 bits together.
    Each column is shifted by its own minimum (the key is for this sort
    only); ``bounds`` (``[(low, high), ...]``, e.g. of runs being merged)
    saves finding them.

    >>> sort_key([np.array([2, 1, 2]), np.array([-5, 7, 0])]).tolist()
    [16, 12, 21]
    """
    if len(columns) == 1 and columns[0].dtype == INT64:
        return columns[0]
    if not len(columns[0]):
        return np.zeros(0, dtype=INT64)
    packed = packed_key(columns, bounds)
    return None if packed is None else packed[0]


#: From this many entries, a packed key of at most :data:`RADIX_BITS` bits is
#: sorted by radix (:func:`order_packed`): passes of numpy's counting sort on
#: 16-bit digits, 2-3x faster than ``argsort(kind="stable")`` (a merge sort of
#: int64) on unsorted keys of 20-32 bits (1.4 million keys of 22 bits: 56 vs
#: 131 ms CPU; 640,000 of 24: 20 vs 60; 60,000 of 20: 1.4 vs 7.9). Below it
#: the few calls cost more than they save. Two runs of fewer entries than this
#: merge by one stable sort of their keys (engine.columnar.interleave), not by
#: scatters: 976 + 122 entries 17 vs 24 µs, 3,500 + 500 32 vs 40, 7,000 +
#: 1,000 55 vs 63, but 15,000 + 1,000 253 vs 98.
RADIX_ROWS = 4096
#: Keys wider than this take argsort: each 16-bit pass costs a gather of all
#: the keys, and four passes measured no faster than argsort.
RADIX_BITS = 48
#: A key with fewer descents than this is a few sorted stretches (runs being
#: merged, batches appended in order): argsort's merge sort (a timsort) joins
#: them faster than the radix passes (1.4 million keys of 22 bits in k sorted
#: stretches, ms CPU timsort/radix: k=2 8/57, 16 27/47, 64 44/51, 256 57/56,
#: 1,024 69/57).
FEW_DESCENTS = 128


def packed_key(columns: list, bounds: list | None = None):
    """``(key, widths)``: the entries' ``int64`` columns packed into one
    non-negative ``int64`` each (the first column most significant, each
    shifted by its minimum and given ``widths[c]`` bits), ordering them as
    ``np.lexsort`` would; ``None`` when the columns are not all ``int64``
    or need more than 63 bits. :func:`unpack_key` inverts it.

    >>> key, widths = packed_key([np.array([2, 1, 2]), np.array([-5, 7, 0])])
    >>> key.tolist(), widths
    ([16, 12, 21], [1, 4])
    >>> [c.tolist() for c in unpack_key(key, [(1, 2), (-5, 7)], widths)]
    [[2, 1, 2], [-5, 7, 0]]
    """
    if bounds is None:
        bounds = bounds_of(columns)
        if bounds is None:
            return None
    elif any(c.dtype != INT64 for c in columns):
        return None
    widths = [(high - low).bit_length() for low, high in bounds]
    if sum(widths) > 63:
        return None
    return pack_into(np.empty(len(columns[0]), dtype=INT64), columns, bounds, widths), widths


def pack_into(key: np.ndarray, columns: list, bounds: list, widths: list, scratch=None):
    """``key`` (``int64``, returned) filled with the columns packed as
    :func:`packed_key` does for ``bounds`` and ``widths``, in place (a large
    batch's temporaries are page faults): ``scratch``, an ``int64`` buffer of
    ``len(key)`` entries at least, is made when a column needs shifting to
    its minimum. The columns may be of narrower int types."""
    n = len(key)
    first = True
    for column, (low, _), width in zip(columns, bounds, widths):
        if not width:
            continue
        if first:
            np.subtract(column, low, out=key, dtype=INT64)
            first = False
            continue
        key <<= width
        if low:
            if scratch is None:
                scratch = np.empty(n, dtype=INT64)
            value = scratch[:n]
            np.subtract(column, low, out=value, dtype=INT64)
            key |= value
        else:
            key |= column
    if first:  # every entry the same
        key[:] = 0
    return key


def pack_rows(columns: list, bounds: list) -> np.ndarray | None:
    """Rows of ``a >= 2`` ``int64`` columns whose values lie within ``bounds``
    (each column's ``(low, high)``) as one ``int64`` each, the layout of
    :class:`~engine.operators.columns.Packing`: ``63 // a`` bits a column,
    biased by half their range, the first column most significant (so
    ordering the rows as ``np.lexsort`` would); ``None`` when a value is out
    of that range.

    Each biased column is below ``2**bits``, so shifting and adding the
    columns as they are and adding every bias at the end, as one constant,
    makes the same key as biasing each first (:func:`pack_into`), with no
    temporaries (each partial sum is the partial key less its biases: within
    ``int64``): two columns take three numpy calls, not six (a long loop's
    join packs its output each iteration).

    >>> pack_rows([np.array([-1, 3]), np.array([7, 0])], [(-1, 3), (0, 7)]).tolist()
    [2305843008139952135, 2305843016729886720]
    >>> pack_rows([np.array([1 << 40]), np.array([0])], [(1 << 40, 1 << 40), (0, 0)]) is None
    True
    """
    arity = len(columns)
    bits = 63 // arity
    bias = 1 << (bits - 1)
    if any(low < -bias or high >= bias for low, high in bounds):
        return None
    key = columns[0] << bits
    offset = bias
    for column in columns[1:-1]:
        key += column
        key <<= bits
        offset = (offset << bits) | bias
    key += columns[-1]
    key += (offset << bits) | bias
    return key


def unpack_key(key: np.ndarray, bounds: list, widths: list) -> list:
    """The columns of keys packed by :func:`packed_key` (same ``bounds``)."""
    out = []
    shift = sum(widths)
    for (low, _), width in zip(bounds, widths):
        shift -= width
        if not width:
            out.append(np.full(len(key), low, dtype=INT64))
            continue
        column = key >> shift if shift else key & ((1 << width) - 1)
        if shift and shift + width < 63:
            column &= (1 << width) - 1
        if low:
            column += low
        out.append(column)
    return out


def order_packed(key: np.ndarray, bits: int) -> np.ndarray:
    """The stable order sorting ``key`` (non-negative, below ``2**bits``):
    argsort's merge sort for short or nearly sorted keys or wide ones, else
    least-significant-digit radix in passes of 16 bits (the last narrower).

    >>> order_packed(np.array([5, 3, 5, 0] * 1500), 3)[:4].tolist()
    [3, 7, 11, 15]
    >>> key = np.arange(6000)[::-1] * 7919 % 100003
    >>> bool((key[order_packed(key, 17)] == np.sort(key)).all())
    True
    """
    n = len(key)
    if not bits:  # every key 0
        return np.arange(n)
    if (n < RADIX_ROWS or bits > RADIX_BITS
            or np.count_nonzero(key[1:] < key[:-1]) < FEW_DESCENTS):
        return np.argsort(key, kind="stable")
    order = None
    shift = 0
    while shift < bits:
        width = min(16, bits - shift)
        mask = (1 << width) - 1
        if order is None:  # the first pass (shift 0): ``key`` is the caller's
            part = key & mask
        else:  # a gather: ours to shift and mask in place
            part = key[order]
            part >>= shift
            part &= mask
        digit = part.astype("uint8" if width <= 8 else "uint16")
        step = np.argsort(digit, kind="stable")  # numpy: a counting sort on 8/16 bits
        order = step if order is None else order[step]
        shift += width
    return order


def sort_order(columns: list) -> np.ndarray:
    """The stable order sorting the entries by the columns (first most
    significant)."""
    key = sort_key(columns)
    if key is not None:
        return np.argsort(key, kind="stable")
    return np.lexsort([c.view(INT64) if c.dtype.kind == "f" else c
                       for c in reversed(columns)])


def consolidate(columns: list, kinds: tuple, weights: np.ndarray,
                known: list | None = None) -> ColBatch:
    """Entries (any order, repeats allowed) summed per row, zeros dropped.
    ``known``: each column's ``(low, high)``, when known (ints; the values
    lie within): under :data:`RADIX_ROWS` entries the ranges are not found
    again (a join's output, from its delta's and its run's; four numpy
    calls an iteration of a long loop).

    Floats are compared by value (``-0.0`` is ``0.0``; a NaN equals only a
    NaN of the same bits), as dict keys would be up to NaN.

    >>> dict(consolidate([np.array([3, 1, 3])], ("i",), np.array([1, 1, -1])))
    {(1,): 1}
    >>> dict(consolidate([], (), np.array([2, -1])))   # nullary: one row ()
    {(): 1}
    >>> consolidate([np.array([3, 1]), np.array([0, 9])], ("i", "i"), np.array([1, 1])).bounds
    [(1, 3), (0, 9)]
    """
    if not columns:   # nullary rows: all the same row ()
        total = int(weights.sum())
        return ColBatch([], kinds, np.array([total] if total else [], dtype=INT64))
    columns = [c + 0.0 if c.dtype.kind == "f" else c for c in columns]  # -0.0 -> 0.0
    n = len(weights)
    if known is not None and n < RADIX_ROWS and kinds.count("i") == len(kinds):
        bounds = known
    else:
        bounds = bounds_of(columns) if n > 1 and (len(columns) > 1 or n >= RADIX_ROWS) else None
    packed = packed_key(columns, bounds) if n >= RADIX_ROWS and bounds is not None else None
    if packed is not None:  # sort the packed key alone, the columns unpacked from it
        out = _consolidate_packed(packed, kinds, weights, bounds)
        out.bounds = bounds
        return out
    # a join's entries are sorted by the rows packed as the Distinct reading
    # them packs them (the same order): the Distinct takes them as they are
    rows = (pack_rows(columns, bounds) if known is not None and bounds is known and len(columns) > 1
            and all(c.dtype == INT64 for c in columns) else None)
    key = rows if rows is not None else sort_key(columns, bounds) if n > 1 else None
    if key is not None and not np.count_nonzero(key[1:] <= key[:-1]):
        pass  # in order, each row once (a join's of a sorted delta on unique keys)
    elif n > 1:
        if key is not None:
            order = np.argsort(key, kind="stable")
            key = key[order]
            new = np.empty(n, dtype=bool)
            new[0] = True
            np.not_equal(key[1:], key[:-1], out=new[1:])
            rows = None if rows is None else key
        else:
            order = np.lexsort([c.view(INT64) if c.dtype.kind == "f" else c
                                for c in reversed(columns)])
            new = np.zeros(n, dtype=bool)
            new[0] = True
            for column in columns:
                column = column[order]
                if column.dtype.kind == "f":
                    column = column.view(INT64)
                new[1:] |= column[1:] != column[:-1]
        columns = [c[order] for c in columns]
        weights = weights[order]
        if np.count_nonzero(new) < n:
            starts = new.nonzero()[0]
            weights = np.add.reduceat(weights, starts)
            columns = [c[starts] for c in columns]
            rows = None if rows is None else rows[starts]
    if np.count_nonzero(weights) < len(weights):  # (one call when none is 0)
        keep = weights != 0
        columns = [c[keep] for c in columns]
        weights = weights[keep]
        rows = None if rows is None else rows[keep]
    out = ColBatch(columns, kinds, weights, bounds)
    out.packed = rows
    return out


def _consolidate_packed(packed, kinds: tuple, weights: np.ndarray, bounds: list) -> ColBatch:
    """:func:`consolidate` of entries packed by :func:`packed_key`: one sort of
    the key (:func:`order_packed`), the columns read back from the consolidated
    keys rather than gathered through the order one by one."""
    key, widths = packed
    key, weights, _ = sum_packed(key, sum(widths), weights)
    return ColBatch(unpack_key(key, bounds, widths), kinds, weights)


#: From this many entries, packed keys whose positions are not asked for
#: are sorted with their weights by value (:func:`sorted_with`): numpy's
#: ``sort`` of ``int64`` (a vectorised quicksort) beats ordering them
#: (:func:`order_packed`) and gathering. 1,999,000 keys of 33 bits (the
#: 2,000-node chain's join trace at commit, 1,999 sorted stretches): 18 ms
#: sorted by value and unpacked vs 80 ms by ``order_packed``, 19 ms by
#: ``argsort(kind="stable")``.
VALUE_SORT_ROWS = RADIX_ROWS


def sorted_with(key: np.ndarray, bits: int, weights: np.ndarray, own: bool = False):
    """``(key, weights)``: the packed ``key`` (non-negative, below
    ``2**bits``) in order with its ``weights`` (``int64``), equal keys
    together in any order, by one sort of the values: each weight packed
    under its key. ``None`` under :data:`VALUE_SORT_ROWS` entries or when
    key and weight need more than 63 bits together. ``own``: ``key`` is
    the caller's to overwrite (packed and sorted in place, no copy: a
    large merge's copies are page faults).

    >>> [x.tolist() for x in sorted_with(np.array([5, 2, 5, 7] * 1024), 3,
    ...                                  np.array([1, -1, 2, 0] * 1024))][0][1022:1026]
    [2, 2, 5, 5]
    """
    n = len(key)
    if n < VALUE_SORT_ROWS:
        return None
    low, high = int(weights.min()), int(weights.max())
    width = (high - low).bit_length()
    if bits + width > 63:
        return None
    if not width:  # every weight the same
        if own:
            key.sort()
        else:
            key = np.sort(key)
        return key, np.full(n, low, dtype=INT64)
    both = np.left_shift(key, width, out=key if own else None)
    both |= np.subtract(weights, low, dtype=INT64) if low else weights
    both.sort()
    weights = both & ((1 << width) - 1)
    if low:
        weights += low
    both >>= width
    return both, weights


def sum_packed(key: np.ndarray, bits: int, weights: np.ndarray, order: bool = False,
               own: bool = False):
    """``(key, weights, order)``: the packed ``key`` sorted (:func:`order_packed`),
    the weights of equal keys summed, zero sums dropped; ``order`` (when asked
    for, else ``None``): each remaining key's position in the input.
    ``own``: ``key`` is the caller's to overwrite (:func:`sorted_with`).

    >>> [x.tolist() for x in sum_packed(np.array([5, 2, 5, 7]), 3, np.array([1, 1, 2, 0]),
    ...                                 order=True)]
    [[2, 5], [1, 3], [1, 0]]
    """
    found = None if order else sorted_with(key, bits, weights, own)
    if found is not None:
        key, weights = found
    else:
        at = order_packed(key, bits)
        key, weights = key[at], weights[at]
    if len(key) > 1:
        new = np.empty(len(key), dtype=bool)
        new[0] = True
        np.not_equal(key[1:], key[:-1], out=new[1:])
        if np.count_nonzero(new) < len(new):
            starts = new.nonzero()[0]
            weights = np.add.reduceat(weights, starts)
            key = key[starts]
            if order:
                at = at[starts]
    if np.count_nonzero(weights) < len(weights):  # (one call when none is 0)
        keep = weights != 0
        key, weights = key[keep], weights[keep]
        if order:
            at = at[keep]
    return key, weights, at if order else None


def concat(batches: list) -> ColBatch | None:
    """The sum of columnar batches of one kind of row, consolidated; ``None``
    when their kinds differ (the caller then adds them as dicts)."""
    batches = [b for b in batches if len(b)]
    if not batches:
        return None
    kinds = batches[0].kinds
    if any(b.kinds != kinds for b in batches):
        return None
    if len(batches) == 1:
        return batches[0]
    return consolidate([np.concatenate([b.columns[c] for b in batches])
                        for c in range(len(kinds))], kinds,
                       np.concatenate([b.weights for b in batches]))


def concat_fresh(batches: list) -> ColBatch | None:
    """The sum of batches whose rows all have weight 1 (or all -1) and which
    are known to hold no row twice between them, in columns: their arrays
    concatenated, no sort. ``None`` (the caller then sums them:
    :func:`concat`) when a batch does not fit columns, their kinds differ or
    a weight is not the first one's, 1 or -1.

    An Export's epoch of a Distinct Trace is such a sum: the Distinct's
    outputs at the epoch's iterations add up to -1, 0 or 1 per row at every
    iteration, so when every weight is 1 (or every weight -1: a retraction's
    epoch) no row comes twice. (Same generation on the depth-10 tree: its
    1.4 million rows were consolidated by a sort, 66 ms of the batch's 370
    ms CPU, for nothing.)

    >>> a, b = ColBatch.from_rows({(1, 2): 1}), ColBatch.from_rows({(0, 5): 1, (3, 3): 1})
    >>> s = concat_fresh([a, {(7, 7): 1}, b]); dict(s), s.bounds
    ({(1, 2): 1, (7, 7): 1, (0, 5): 1, (3, 3): 1}, None)
    >>> concat_fresh([a, {(4, 4): -1}]) is None
    True
    >>> dict(concat_fresh([a.negate(), {(4, 4): -1}]))
    {(1, 2): -1, (4, 4): -1}
    """
    columnar = []
    for batch in batches:
        if not batch:
            continue
        found = ColBatch.from_rows(batch)
        if found is None:
            return None
        columnar.append(found)
    if not columnar or any(b.kinds != columnar[0].kinds for b in columnar):
        return None
    # the weights checked once, concatenated (a long loop's epoch: one
    # batch an iteration, two numpy calls each)
    weights = (np.concatenate([b.weights for b in columnar]) if len(columnar) > 1
               else columnar[0].weights)
    sign = int(weights[0])
    if sign not in (1, -1) or not bool((weights == sign).all()):
        return None
    if len(columnar) == 1:
        return columnar[0]
    kinds = columnar[0].kinds
    bounds = None
    if all(b.bounds is not None for b in columnar):
        bounds = [(min(b[0] for b in column), max(b[1] for b in column))
                  for column in zip(*(b.bounds for b in columnar))]
    return ColBatch([np.concatenate([b.columns[c] for b in columnar])
                     for c in range(len(kinds))], kinds, weights, bounds)


def as_columns(batch: Mapping, minimum: int | None = None) -> ColBatch | None:
    """``batch`` in columns when it is one already, or has at least
    ``minimum`` rows (default :data:`THRESHOLD`) and fits; else ``None``."""
    if isinstance(batch, ColBatch):
        return batch
    if len(batch) < (THRESHOLD if minimum is None else minimum) or not batch:
        return None
    return ColBatch.from_rows(batch)
