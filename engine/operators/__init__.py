"""The operators of the runtime, one module per family: ``linear`` (map, filter,
flat_map, negate, plus, minus, index, inspect), ``join`` (trace append, join
stream, join trace, antijoin/semijoin via the builder), ``distinct`` (distinct,
distinct incremental, distinct trace), ``aggregate``, ``delay`` (delay, delay
trace, trace append, untimed trace append, consolidate, integrate)."""
