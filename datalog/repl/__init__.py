"""``datalog repl``: an interactive session over a program.

Takes statements (typed on a terminal, or lines on standard input) and gives
their results as text: the changes of each transaction, query answers and
diagnostics.

Assert and retract facts, ask queries, extend the program with rules and
directives, group changes in transactions, and see after each commit what changed
in the output relations. Built on the public API (:class:`datalog.Program`,
:class:`datalog.Session`), the parser (for the statements typed) and the API's
query patterns (:class:`datalog.plan.query.Pattern`).

- :mod:`datalog.syntax.statements`: input lines -> complete statements and kinds;
- :mod:`datalog.repl.program`: the accumulated program text (``<repl>``);
- :mod:`datalog.repl.interpreter`: :class:`Repl`, which executes statements;
- :mod:`datalog.repl.commands`: the meta-commands (``:dump``, ``:commit``, ...);
- :mod:`datalog.syntax.render`: values, facts and changes as ``.dl`` text;
- :mod:`datalog.repl.terminal`: prompt_toolkit on a terminal, plain lines otherwise.
"""

from datalog.repl.interpreter import Repl
from datalog.repl.terminal import run

__all__ = ["Repl", "run"]
