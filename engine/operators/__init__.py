"""The runtime's operator nodes: each takes its input streams' differences at a
time (and the traces it keeps) and gives its output's difference there, by the
incremental formula in its docstring. One module per family: ``linear`` (map, filter,
flat_map, negate, plus, minus, index, inspect), ``join`` (trace append, join
stream, join trace, antijoin/semijoin via the builder), ``distinct`` (distinct,
distinct incremental, distinct trace), ``aggregate``, ``matching`` (greedy
matching under several keys), ``delay`` (delay, delay trace, trace append, untimed
trace append, consolidate, integrate)."""
