"""Profiles of runs: what ``datalog run -p prof.json`` records and what
``datalog profile prof.json`` shows.

- :mod:`datalog.profile.record`: a run's figures per stratum, rule and
  iteration (from :mod:`engine.profile`), as a JSON document;
- :mod:`datalog.profile.report`: the top rules as a text table;
- :mod:`datalog.profile.page`: one self-contained HTML page (tables, plots and
  the circuit with its hot nodes, drawn as inline SVG).
"""

from datalog.profile.record import Recording

__all__ = ["Recording"]
