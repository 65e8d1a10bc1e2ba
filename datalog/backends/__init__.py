"""Plan -> results: the backends that run a :class:`~datalog.plan.ir.ProgramPlan`.

- :mod:`datalog.backends.circuit`: the incremental backend, a circuit of the
  runtime's nodes (:mod:`engine`) kept up to date transaction by transaction;
- :mod:`datalog.backends.spark`: the batch backend, DataFrame semi-naive loops
  on Apache Spark.

Both take the same plan and give the same relations; errors from either are
:class:`~datalog.errors.DatalogError` s.
"""
