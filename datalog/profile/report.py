"""Reading a profile back (``datalog profile prof.json``): loading and checking
the document, and the text report of its strata and top rules."""

from __future__ import annotations

import json
import os

from datalog.errors import DatalogError
from datalog.profile.record import FORMAT, VERSION


def load(path: str | os.PathLike) -> dict:
    """The profile document at ``path``; a DatalogError when it is not one."""
    where = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except OSError as error:
        raise DatalogError(f"{where}: cannot read: {error.strerror}") from None
    except (UnicodeDecodeError, ValueError) as error:
        raise DatalogError(f"{where}: not a profile (not JSON: {error}); profiles are "
                           f"written by `datalog run -p FILE prog.dl`") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise DatalogError(f"{where}: not a profile written by `datalog run -p`")
    if document.get("version") != VERSION:
        raise DatalogError(f"{where}: a profile of version {document.get('version')!r}; "
                           f"this datalog reads version {VERSION}")
    for key, kind in (("rules", list), ("strata", list), ("nodes", list),
                      ("phases", list), ("seconds", (int, float))):
        if not isinstance(document.get(key), kind):
            raise DatalogError(f"{where}: damaged profile (no `{key}`)")
    return document


def seconds_text(seconds: float) -> str:
    """A duration in a unit that fits it.

    >>> seconds_text(2.5), seconds_text(0.0123), seconds_text(0.0000456)
    ('2.50 s', '12.3 ms', '45.6 µs')
    """
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.1f} µs"


def memory_text(kb: int) -> str:
    """KiB as MiB or GiB.

    >>> memory_text(43100), memory_text(3 * 1024 * 1024)
    ('42.1 MiB', '3.00 GiB')
    """
    if kb >= 1024 * 1024:
        return f"{kb / 1024 / 1024:.2f} GiB"
    return f"{kb / 1024:.1f} MiB"


def shorten(text: str, width: int) -> str:
    """One line of at most ``width`` characters.

    >>> shorten("path(x, z) :-\\n    path(x, y), edge(y, z).", 24)
    'path(x, z) :- path(x, y…'
    """
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def text_report(document: dict, top: int = 10, width: int = 100) -> str:
    """The run in a few lines, its strata, and the ``top`` rules by time."""
    total = document["seconds"]
    phases = ", ".join(f"{name} {seconds_text(s)}" for name, s in document["phases"])
    lines = [f"{document.get('program') or 'program'}: {seconds_text(total)} ({phases}); "
             f"peak memory {memory_text(document.get('peak_memory_kb', 0))}", "",
             "strata:",
             f"  {'#':>3}  {'time':>9}  {'iterations':>10}  {'new tuples':>10}  relations"]
    for stratum in document["strata"]:
        iterations = stratum["iterations"]
        count = str(len(iterations)) if stratum["recursive"] else "-"
        new = sum(i["tuples_out"] for i in iterations) if stratum["recursive"] else ""
        lines.append(f"  {stratum['index']:>3}  {seconds_text(stratum['seconds']):>9}  "
                     f"{count:>10}  {new:>10}  "
                     f"{shorten(', '.join(stratum['relations']), width - 45)}")
    rules = document["rules"]
    busy = sum(r["seconds"] for r in rules) or 1.0
    shown = rules[:top]
    places = [_place(rule.get("where")) for rule in shown]
    wide = max([len(p) for p in places] + [5])
    lines += ["", f"top {len(shown)} of {len(rules)} rules and relation operators, by time:",
              f"  {'time':>9}  {'share':>5}  {'calls':>6}  {'in':>9}  {'out':>9}  "
              f"{'trace':>9}  {'where':<{wide}}  rule"]
    for rule, place in zip(shown, places):
        lines.append(
            f"  {seconds_text(rule['seconds']):>9}  {rule['seconds'] / busy:>5.0%}  "
            f"{rule['calls']:>6}  {rule['tuples_in']:>9}  {rule['tuples_out']:>9}  "
            f"{rule['trace_rows'] or '':>9}  {place:<{wide}}  "
            f"{shorten(rule['name'], max(30, width - 64 - wide))}")
    return "\n".join(lines)


def _place(where: str | None) -> str:
    """``dir/prog.dl:12:1`` as ``prog.dl:12``.

    >>> _place("programs/tc/tc.dl:54:1"), _place(None)
    ('tc.dl:54', '')
    """
    if not where:
        return ""
    path, line, _ = where.rsplit(":", 2)
    return f"{os.path.basename(path)}:{line}"
