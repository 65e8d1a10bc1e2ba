"""Benchmarks: the engine next to the tools a user would otherwise pick.

``python -m benchmarks [--quick] [--only NAME]`` prints one table: for each
workload (:mod:`benchmarks.workloads`) and each peer (:mod:`benchmarks.peers`),
the batch time, the peak RSS, the bytes of RSS per derived tuple, and the median
and 95th-percentile time to retract and to insert one fact, each cell measured
in its own subprocess under a timeout (:mod:`benchmarks.measure`,
:mod:`benchmarks.cell`). Ratios are against the plain Python semi-naive loop and
against the fastest peer, measured in the same run (:mod:`benchmarks.report`).

Two smaller scripts sit beside it: ``benchmarks/tc.py`` (transitive closure
through the public API) and ``benchmarks/circuit_tc.py`` (a circuit built by
hand). The table reuses ``tc.py``'s graph generators and semi-naive loop.
"""
