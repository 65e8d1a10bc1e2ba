"""AST -> diagnostics, types and strata: the second stage of the pipeline.

Takes a parsed :class:`~datalog.syntax.ast.Module` and gives either a
:class:`~datalog.analysis.frontend.CheckedProgram` (the program after its
transforms, every relation's column types, the strata in dependency order) or a
:class:`~datalog.errors.CheckError` with every error and warning.

- :mod:`~datalog.analysis.check`: the checks, pure functions to diagnostics;
- :mod:`~datalog.analysis.types` and :mod:`~datalog.analysis.typecheck`: the
  type table and the type checker;
- :mod:`~datalog.analysis.stratify`: the precedence graph (networkx) and its
  strata; :mod:`~datalog.analysis.dot` draws it;
- :mod:`~datalog.analysis.eqrel`: the ``eqrel`` transform (rules added);
- :mod:`~datalog.analysis.frontend`: parse, check, transform and stratify in one
  call (``load``, ``load_file``, ``diagnose_file``).
"""
