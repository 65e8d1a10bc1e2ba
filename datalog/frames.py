"""Rows in and out of Python's data tools: pandas DataFrames, Arrow tables and
numpy arrays.

Takes a relation's declaration (:class:`~datalog.plan.ir.RelationPlan`: its
attribute names and column types) and gives

- :func:`rows_from`: the rows of a DataFrame, an Arrow table or a 2-D numpy
  array, checked column by column (a whole column at once, not row by row) and
  converted to the engine's rows (tuples of ``int``, ``float``, ``str``);
- :func:`to_pandas` / :func:`to_arrow`: rows as a DataFrame or an Arrow table
  whose columns are the relation's attributes, typed by the declaration:
  ``number`` int64, ``unsigned`` uint64, ``float`` float64, ``symbol`` string.

Columns are matched to attributes by name when every attribute names a column
(extra columns are an error, so a misspelt one is not silently dropped), else
by position when no column has an attribute's name and there are as many as
the relation has attributes. pandas, pyarrow and numpy are imported only here,
when a frame is handed in or asked for (``pip install "datalog-circuits[frames]"``).

>>> import pandas as pd
>>> from datalog.plan.ir import RelationPlan
>>> edge = RelationPlan("edge", ("x", "y"), ("number", "symbol"))
>>> rows_from(pd.DataFrame({"y": ["a", "b"], "x": [1, 2]}), edge)
[(1, 'a'), (2, 'b')]
>>> to_pandas([(2, "b"), (1, "a")], edge).dtypes.astype(str).to_dict()
{'x': 'int64', 'y': 'string'}
>>> to_arrow([(1, "a")], edge).schema.types
[DataType(int64), DataType(string)]
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

from datalog.dialect.functors import NUMBER_MAX, NUMBER_MIN, UNSIGNED_MAX
from datalog.errors import DataError
from datalog.plan.ir import RelationPlan
from datalog.rows import sorted_rows

#: The pandas dtype of each column type (its Arrow type is :data:`ARROW_TYPES`).
PANDAS_TYPES = {"number": "int64", "unsigned": "uint64", "float": "float64",
                "symbol": "string"}
ARROW_TYPES = {"number": "int64", "unsigned": "uint64", "float": "float64",
               "symbol": "string"}


def is_frame(data: Any) -> bool:
    """Whether ``data`` is a table this module reads: a pandas DataFrame, an
    Arrow table or record batch, or a 2-D numpy array (checked by type name,
    so nothing is imported)."""
    kind = type(data)
    module = kind.__module__.split(".")[0]
    return (module == "pandas" and kind.__name__ == "DataFrame") or \
        (module == "pyarrow" and kind.__name__ in ("Table", "RecordBatch")) or \
        (module == "numpy" and kind.__name__ == "ndarray" and getattr(data, "ndim", 0) == 2)


def rows_from(data: Any, relation: RelationPlan) -> list[tuple]:
    """The rows of the table ``data`` (see :func:`is_frame`) for ``relation``;
    a :class:`~datalog.errors.DataError` naming the column (and the first bad
    row) if a column does not fit its attribute's type."""
    columns = _columns(data, relation)
    converted = [_convert(values, relation, i) for i, values in enumerate(columns)]
    if not converted:
        return [()] * _length(data)
    return list(zip(*converted))


def _length(data) -> int:
    return data.shape[0] if hasattr(data, "shape") else data.num_rows


def _columns(data, relation: RelationPlan) -> list:
    """One array per attribute, in the declaration's order."""
    kind = type(data).__module__.split(".")[0]
    if kind == "numpy":
        if data.shape[1] != relation.arity:
            raise DataError(f"`{relation.name}` has {relation.arity} columns; the array "
                            f"has {data.shape[1]}")
        return [data[:, i] for i in range(relation.arity)]
    names = [str(name) for name in (data.columns if kind == "pandas" else data.column_names)]
    get = (lambda i: data.iloc[:, i]) if kind == "pandas" else data.column
    attributes = relation.attributes
    if set(attributes) <= set(names) and attributes:
        extra = [name for name in names if name not in attributes]
        if extra or len(names) != len(set(names)):
            raise DataError(f"the columns {names} do not match `{relation.name}`'s "
                            f"attributes {list(attributes)}: "
                            + ("remove " + ", ".join(extra) if extra else "a name repeats"))
        return [get(names.index(name)) for name in attributes]
    named = [name for name in names if name in attributes]
    if named or len(names) != relation.arity:
        raise DataError(f"the columns {names} do not match `{relation.name}`'s attributes "
                        f"{list(attributes)}: name every attribute, or give "
                        f"{relation.arity} columns to take by position")
    return [get(i) for i in range(relation.arity)]


def _convert(values, relation: RelationPlan, index: int) -> list:
    """One column as Python values of its attribute's type."""
    import numpy as np

    type_ = relation.types[index]
    where = f"column {relation.attributes[index]} of `{relation.name}` is {type_}"
    array = _numpy(values, f"column {relation.attributes[index]} of `{relation.name}`")
    if not len(array):      # an empty column's dtype says nothing (pandas: float64)
        return []
    kind = array.dtype.kind
    if kind in "iu" and type_ in ("number", "unsigned"):
        if len(array):
            low, high = int(array.min()), int(array.max())
            lowest, highest = (NUMBER_MIN, NUMBER_MAX) if type_ == "number" \
                else (0, UNSIGNED_MAX)
            if low < lowest or high > highest:
                bad = low if low < lowest else high
                raise DataError(f"{where}; got {bad} (row {_first(array == bad)})")
        return array.tolist()
    if kind in "iuf" and type_ == "float":
        array = array.astype(np.float64)
        if np.isnan(array).any():
            raise DataError(f"{where}; got nan (row {_first(np.isnan(array))})")
        return array.tolist()
    if kind in "OUT":
        values = array.tolist()
        if all_fit(values, type_):
            return values
        return [_check_value(value, type_, where, row) for row, value in enumerate(values)]
    raise DataError(f"{where}; the column holds {array.dtype}")


def _numpy(values, name: str):
    """A column (pandas Series, Arrow array, numpy array) as a numpy array; a
    missing value is an error."""
    import numpy as np

    module = type(values).__module__.split(".")[0]
    if module == "pyarrow":
        if values.null_count:
            raise DataError(f"{name} holds a missing value (null)")
        import pyarrow as pa

        if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
            return np.array(values.to_pylist(), dtype=object)
        return values.to_numpy()
    if module == "pandas":
        if values.hasnans and values.dtype.kind != "f":
            raise DataError(f"{name} holds a missing value")
        if values.dtype.kind not in "iufb":     # strings, nullable integers: objects
            return values.to_numpy(dtype=object)
        return values.to_numpy()
    return np.asarray(values)


def all_fit(values: list, type_: str) -> bool:
    """Whether every value of a column of Python objects is already what the
    engine holds for ``type_`` (checked at C speed: one pass of ``type``).

    >>> all_fit([1, 2**63 - 1], "number"), all_fit([1, True], "number"), all_fit([1], "float")
    (True, False, False)
    """
    kinds = set(map(type, values))
    if type_ == "symbol":
        return kinds <= {str}
    if type_ == "float":
        return kinds <= {float} and not any(v != v for v in values)
    if not kinds <= {int} or not values:
        return not values
    low, high = (NUMBER_MIN, NUMBER_MAX) if type_ == "number" else (0, UNSIGNED_MAX)
    return low <= min(values) and max(values) <= high


def _first(mask) -> int:
    return int(mask.nonzero()[0][0])


def _check_value(value, type_: str, where: str, row: int):
    checked = check_value(value, type_)
    if checked is None:
        raise DataError(f"{where}; got {value!r} (row {row})")
    return checked


def to_pandas(rows: Iterable[tuple], relation: RelationPlan, extra: dict | None = None):
    """``rows`` (sorted) as a DataFrame: one column per attribute, typed by the
    declaration; ``extra`` maps further column names to lists of values (a
    delta's weight)."""
    ordered = sorted_rows(rows)
    return pandas_of(_columns_of(ordered, relation), len(ordered), relation, extra)


def to_arrow(rows: Iterable[tuple], relation: RelationPlan, extra: dict | None = None):
    """``rows`` (sorted) as an Arrow table, typed as :func:`to_pandas`."""
    ordered = sorted_rows(rows)
    return arrow_of(_columns_of(ordered, relation), relation, extra)


def _columns_of(rows: list, relation: RelationPlan) -> list:
    return [list(c) for c in zip(*rows)] if rows else [[]] * relation.arity


def pandas_of(columns: list, length: int, relation: RelationPlan, extra: dict | None = None):
    """A DataFrame of ``length`` rows whose ``columns`` (one per attribute, in
    row order: lists of values or numpy arrays, taken as they are) are typed as
    :func:`to_pandas` types them; ``extra`` as there."""
    import pandas as pd

    data = {name: pd.array(values, dtype=PANDAS_TYPES[type_])
            for name, type_, values in zip(relation.attributes, relation.types, columns)}
    for name, values in (extra or {}).items():
        data[name] = pd.array(values, dtype="int64")
    return pd.DataFrame(data, index=pd.RangeIndex(length))


def arrow_of(columns: list, relation: RelationPlan, extra: dict | None = None):
    """An Arrow table of ``columns`` (as :func:`pandas_of`)."""
    import pyarrow as pa

    arrays = [pa.array(values, type=getattr(pa, ARROW_TYPES[type_])())
              for type_, values in zip(relation.types, columns)]
    names = list(relation.attributes)
    for name, values in (extra or {}).items():
        arrays.append(pa.array(values, type=pa.int64()))
        names.append(name)
    return pa.Table.from_arrays(arrays, names=names)


def check_value(value, type_: str):
    """``value`` as the engine holds a value of the column type ``type_``
    (``number`` and ``unsigned``: an ``int`` in range; ``float``: a ``float``,
    not NaN; ``symbol``: a ``str``), or ``None`` if it does not fit. numpy's
    scalars are taken as Python's; ``bool`` fits nothing.

    >>> import numpy as np
    >>> check_value(np.int64(3), "number"), check_value(2, "float"), check_value(-1, "unsigned")
    (3, 2.0, None)
    """
    if isinstance(value, (bool, str)):
        return value if type_ == "symbol" and isinstance(value, str) else None
    if type_ == "number" or type_ == "unsigned":
        if not isinstance(value, int):
            if not isinstance(value, numbers.Integral) or type(value).__name__ == "bool_":
                return None
            value = int(value)
        low, high = (NUMBER_MIN, NUMBER_MAX) if type_ == "number" else (0, UNSIGNED_MAX)
        return value if low <= value <= high else None
    if type_ == "float":
        if not isinstance(value, numbers.Real) or type(value).__name__ == "bool_":
            return None
        value = float(value)
        return None if math.isnan(value) else value
    return None
