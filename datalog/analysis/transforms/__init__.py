"""AST -> AST transforms: programs or clauses rewritten, never diagnosed.

Each takes AST nodes (:mod:`datalog.syntax.ast`) and gives new ones; the analyses
(:mod:`datalog.analysis`) only read the AST, these only rewrite it:

- :mod:`~datalog.analysis.transforms.eqrel`: a module -> the module with the
  closure rules of every ``eqrel`` relation added (the front end applies it
  after the checks);
- :mod:`~datalog.analysis.transforms.inline`: a module -> the module without its
  ``inline`` relations, substituted into the rules that use them;
- :mod:`~datalog.analysis.transforms.patterns`: a module -> the module with each
  negated atom that ignores a field (``!r([x, _])``) counted instead;
- :mod:`~datalog.analysis.transforms.constants`: a clause -> the clause with
  ``x = constant`` substituted (the lowering applies it to every clause);
- :mod:`~datalog.analysis.transforms.aggregates`: a clause -> the clause with
  the locals of its aggregates renamed and the witnesses of ``min``/``max``
  bound (the lowering applies it first).
"""
