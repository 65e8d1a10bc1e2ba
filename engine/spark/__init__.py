"""Running a program's relational plan on Apache Spark.

- :mod:`engine.spark.session`: get a SparkSession (local, a cluster, Spark
  Connect, or the application's own);
- :mod:`engine.spark.expressions`: plan expressions as Spark Columns, with the
  dialect's semantics;
- :mod:`engine.spark.pipeline`: one rule's pipeline as DataFrame operations;
- :mod:`engine.spark.executor`: strata, semi-naive recursion, materialisation;
- :mod:`engine.spark.io`: fact files in, output files out, by Spark;
- :mod:`engine.spark.runner`: ``datalog run --engine spark``;
- :mod:`engine.spark.spill`: traces of the incremental engine that outgrow
  memory, kept in Spark.

Nothing here imports pyspark at import time: only building a session (or a
Column) does, so ``import engine.spark`` works without Java or pyspark.
"""
