"""The checks, one per module: each a pure function ``(module, context) ->
diagnostics`` over a parsed :class:`~datalog.syntax.ast.Module` and its
:class:`~datalog.analysis.context.Context`; :data:`datalog.analysis.check.CHECKS`
lists them in the order they run (with the type checker of clauses,
:mod:`~datalog.analysis.typecheck`).

- :mod:`~datalog.analysis.checks.types`: ``.type`` declarations;
- :mod:`~datalog.analysis.checks.declarations`: ``.decl`` (and ``.plan``);
- :mod:`~datalog.analysis.checks.io_directives`: ``.input``, ``.output``,
  ``.printsize`` against :mod:`datalog.dialect.io`;
- :mod:`~datalog.analysis.checks.clauses`: relations, arities, functors and
  constants in facts and rules;
- :mod:`~datalog.analysis.checks.range`: range restriction and singleton
  variables, from :mod:`~datalog.analysis.grounded`;
- :mod:`~datalog.analysis.checks.inline`: what Soufflé refuses of ``inline``
  relations, and ``magic``/``no_magic`` (ignored, a warning).
"""
