"""Plan -> DataFrames: the Spark backend (``datalog run --engine spark``).

Takes a :class:`~datalog.plan.ir.ProgramPlan`, fact files and a Spark session
(:mod:`engine.spark.session`) and gives the output relations as files or text,
the same bytes as the circuit backend's.

- :mod:`~.expressions`: plan expressions as Spark Columns, with the dialect's
  semantics;
- :mod:`~.pipeline`: one rule's pipeline as DataFrame operations;
- :mod:`~.executor`: strata, semi-naive recursion, materialisation;
- :mod:`~.io`: fact files in, output files out, by Spark;
- :mod:`~.run`: a whole program, files in, files out.

Nothing here imports pyspark at import time: only building a session (or a
Column) does, so importing it works without Java or pyspark.
"""
