"""One cell of the table, run as its own process: one peer on one workload.

    python -m benchmarks.cell '{"spec": {...}, "peer": "engine", "updates": 20,
                                "update_budget": 20, "verify": false}'

It rebuilds the workload from its spec, then reports JSON lines
(:func:`benchmarks.measure.emit`) as it goes:

- ``ready``: the seconds :meth:`Peer.prepare` took (imports, compiling the
  program), and the RSS after it and the input generation, before evaluation;
- ``batch``: seconds, the derived relations' sizes, the peak RSS, the RSS
  right after the batch (steady state: the result held, the batch's
  temporaries freed) and the RSS after an allocator trim;
- ``update`` (twice per update: ``retract`` then ``insert`` of the same input
  fact): seconds, and the number of derived tuples changed when the peer says;
  with ``verify`` also the relation sizes after it;
- ``stopped``: the update budget ran out before all updates were done;
- ``final``: the relation sizes after the last update (equal to the batch's,
  since every retraction was followed by re-inserting the same fact).

An incremental peer (:attr:`Peer.incremental`) applies each update to its
state; any other peer is timed on a from-scratch batch over the changed input.
A from-scratch peer whose batch took more than half the update budget times
no update (each would cost about one batch more); otherwise at least one update
pair always runs, and the parent's timeout is the hard cap.
"""

from __future__ import annotations

import json
import sys
import time

from benchmarks import workloads
from benchmarks.measure import emit, peak_rss_bytes, rss_bytes, trimmed_rss_bytes
from benchmarks.peers import load


def without(facts: dict, relation: str, row: tuple) -> dict:
    return {**facts, relation: [r for r in facts[relation] if r != row]}


def run(config: dict) -> None:
    workload = workloads.make(**config["spec"])
    peer = load(config["peer"])
    reason = peer.unsupported(workload)
    if reason:
        emit("unsupported", reason=reason)
        return
    facts = workload.facts
    changes = workloads.updates(workload, config["updates"])
    verify = config.get("verify", False)
    start = time.perf_counter()
    peer.prepare(workload)
    emit("ready", prepare=time.perf_counter() - start, rss=rss_bytes(),
         peak_rss=peak_rss_bytes())

    start = time.perf_counter()
    state = peer.batch(workload, facts)
    seconds = time.perf_counter() - start
    rss = rss_bytes()
    peak = max(peak_rss_bytes(), rss)   # the kernel's high-water mark can lag by a page or so
    trimmed = trimmed_rss_bytes()
    counts = peer.counts(state, workload)
    emit("batch", seconds=seconds, counts=counts, peak_rss=peak, rss=rss, trimmed_rss=trimmed)

    if not peer.incremental:
        state = None          # each from-scratch update builds its own state
        if seconds * 2 > config["update_budget"]:
            # One from-scratch update pair would overrun the budget: its time is
            # that of the batch again, and the table says so instead.
            emit("stopped", done=0, planned=len(changes))
            return
    deadline = time.perf_counter() + config["update_budget"]
    for done, (relation, row) in enumerate(changes):
        if done and time.perf_counter() >= deadline:
            emit("stopped", done=done, planned=len(changes))
            break
        for op, current in (("retract", without(facts, relation, row)), ("insert", facts)):
            start = time.perf_counter()
            if peer.incremental:
                result = getattr(peer, op)(state, relation, row)
                seconds = time.perf_counter() - start
                changed = peer.changed(result, workload)
                after = state
            else:
                after = peer.batch(workload, current)
                seconds = time.perf_counter() - start
                changed = None
            sizes = peer.counts(after, workload) if verify else None
            emit("update", op=op, relation=relation, row=list(row), seconds=seconds,
                 changed=changed, counts=sizes)
            del after
    if peer.incremental:
        emit("final", counts=peer.counts(state, workload))


if __name__ == "__main__":
    run(json.loads(sys.argv[1]))
