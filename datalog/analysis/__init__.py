"""AST -> diagnostics, types and strata: the second stage of the pipeline.

Takes a parsed :class:`~datalog.syntax.ast.Module` and gives either a
:class:`~datalog.analysis.frontend.CheckedProgram` (the program after its
transforms, every relation's column types, the strata in dependency order) or a
:class:`~datalog.errors.CheckError` with every error and warning. Analyses read
the AST, transforms rewrite it (as Soufflé's ``ast/analysis`` and
``ast/transform``); the term walkers they share are :mod:`datalog.syntax.terms`.

Analyses:

- :mod:`~datalog.analysis.types`: a module -> its :class:`TypeTable` (user types
  resolved, subtypes), each relation's column types;
- :mod:`~datalog.analysis.grounded`: a clause -> its scopes and the variables
  bound in each (computed once per clause);
- :mod:`~datalog.analysis.context`: a module -> what the checks share (the type
  table, the declarations, every clause's groundedness);
- :mod:`~datalog.analysis.check`: a module -> its diagnostics, running the passes
  of ``CHECKS``: :mod:`~datalog.analysis.checks` (one check per module) and the
  type checker :mod:`~datalog.analysis.typecheck`;
- :mod:`~datalog.analysis.stratify`: a module -> its precedence graph and strata
  and its strata; :mod:`~datalog.analysis.dot` draws it.

Transforms (:mod:`~datalog.analysis.transforms`): ``eqrel`` closure rules added
to a module; ``x = constant`` substituted in a clause (for the lowering).

:mod:`~datalog.analysis.frontend`: parse, check, transform and stratify in one
call (``load``, ``load_file``, ``diagnose_file``).
"""
