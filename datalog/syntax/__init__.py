"""Text -> AST: the first stage of the pipeline.

Takes program text (a file with its ``#include`` s, or a string) and gives a
:class:`datalog.syntax.ast.Module` whose every node carries its
:class:`~datalog.errors.Span`; syntax errors are a
:class:`~datalog.errors.ParseError` with every error of the file.

- :mod:`~datalog.syntax.preprocess`: ``#include``, ``#define`` and the
  conditionals, keeping each character's original place;
- :mod:`~datalog.syntax.condition`: the integer expressions of ``#if``/``#elif``;
- :mod:`~datalog.syntax.grammar` (``grammar.lark``) and
  :mod:`~datalog.syntax.parser`: lark's LALR parser and the parse entry points;
- :mod:`~datalog.syntax.builder`: the parse tree -> frozen AST nodes;
- :mod:`~datalog.syntax.fastfacts`: plain fact lines, without the LALR parser;
- :mod:`~datalog.syntax.components`: ``.comp``/``.init`` expanded into a flat
  module (relations of instances named ``c.r``), so no later stage sees them;
- :mod:`~datalog.syntax.messages`: lark's errors in words;
- :mod:`~datalog.syntax.ast`: the nodes;
- :mod:`~datalog.syntax.terms`: walking them (subterms, variables, aggregates;
  a variable replaced), for every later stage;
- :mod:`~datalog.syntax.printer`: a clause back to text, for labels.
"""
