"""Soufflé's dialect, once: the rules every stage and every backend shares.

Takes nothing from the later stages (only :mod:`datalog.errors`), so the checks,
the lowering and both backends read one definition of each rule:

- :mod:`~datalog.dialect.functors`: the value types, their ranges, and the one
  table of operators and functors with Soufflé's 64-bit semantics (signatures for
  the type checker, implementations for the backends);
- :mod:`~datalog.dialect.io`: Soufflé's I/O conventions (paths, delimiters,
  headers, stdin/stdout, the parameters read and their validation, values in and
  out of fact files).
"""
