"""Plan -> circuit: the incremental backend.

Takes a :class:`~datalog.plan.ir.ProgramPlan` and gives a
:class:`~datalog.backends.circuit.compile.CompiledProgram`: a root
:class:`engine.Circuit` with a child circuit per recursive stratum, ready to be
stepped one transaction (epoch) at a time (see :mod:`~.compile`).
"""
