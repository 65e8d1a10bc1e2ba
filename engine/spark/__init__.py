"""Apache Spark as a place the runtime's traces can live.

- :mod:`engine.spark.session`: get a SparkSession (local, a cluster, Spark
  Connect, or the application's own);
- :mod:`engine.spark.spill`: traces of the incremental engine that outgrow
  memory, kept in Spark.

Nothing here imports pyspark at import time: only building a session does, so
``import engine.spark`` works without Java or pyspark.
"""
