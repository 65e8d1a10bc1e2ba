"""Checked program -> relational plan: the third stage of the pipeline.

Takes a :class:`~datalog.analysis.frontend.CheckedProgram` and gives a
:class:`~datalog.plan.ir.ProgramPlan`: plain frozen data saying what each rule
computes (scans, joins, antijoins, filters, assignments, aggregates) and which
relations are read and written how, for any backend to run (the dialect's
functors and I/O conventions are :mod:`datalog.dialect`'s):

- :mod:`~datalog.plan.ir`: the plan's data types;
- :mod:`~datalog.plan.lower`: clauses -> rule plans (join order, pushed-down
  filters, constants);
- :mod:`~datalog.plan.expressions`: plan expressions evaluated in Python;
- :mod:`~datalog.plan.query`: query patterns over a relation's rows;
- :mod:`~datalog.plan.conjunctive`: conjunctive queries, planned as a rule's body.
"""
