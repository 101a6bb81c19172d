"""The stop discipline: when a Troop's hunt ends (concepts.md, The Troop; ``--stop``).

Whatever the policy, the hunt also ends when every forager has finished
(answered, exhausted or failed). A policy only says when to end it sooner; the
foragers still hunting are then cancelled, and what they read so far still
reaches the judge.

- ``first``: the first forager that answers **confidently** ends it: it chose to
  answer (before its deadline turn forced it) and cited at least one node it
  saw. An answer forced at the deadline, or one without evidence, does not stop
  the others.
- ``quorum``: a majority of the foragers (more than half of those launched)
  **agree**: each answered citing one same node. Agreement is overlapping
  evidence rather than merely finishing, because three foragers that each
  answered from a different node have not confirmed anything; such a troop runs
  until its foragers finish and the judge merges them.
- ``patience``: keep hunting while harvests keep bringing new nodes; stop after
  two in a row that add nothing. A **harvest** is a forager's read that
  returned nodes' content (a ``pick`` that returned a body or a section, a
  ``harvest`` that returned results; a cache hit counts, as that forager's
  harvest) or an answer citing evidence; it adds what the troop had not
  harvested yet. Two barren ones in a row mean the foragers are circling
  what is already known.
"""
from __future__ import annotations

import asyncio
from typing import Iterable, Protocol

POLICIES = ("first", "quorum", "patience")
BARREN_HARVESTS = 2  # patience: this many harvests in a row that add nothing end the hunt


class Answered(Protocol):
    n: int
    answer: str
    evidence: list[str]
    forced: bool  # answered in the deadline turn


class StopPolicy:
    name = ""

    def __init__(self, foragers: int) -> None:
        self.foragers = foragers
        self.stopped = asyncio.Event()
        self.reason = ""

    def answered(self, forager: Answered) -> None:
        """A forager finished with an answer."""

    def harvested(self, nodes: Iterable[str]) -> None:
        """A forager harvested ``nodes`` (see the module doc)."""

    def stop(self, reason: str) -> None:
        if not self.stopped.is_set():
            self.reason = reason
            self.stopped.set()


class FirstConfident(StopPolicy):
    name = "first"

    def answered(self, forager: Answered) -> None:
        if forager.answer and forager.evidence and not forager.forced:
            self.stop(f"forager {forager.n} answered with evidence")


class Quorum(StopPolicy):
    name = "quorum"

    def __init__(self, foragers: int) -> None:
        super().__init__(foragers)
        self.majority = foragers // 2 + 1
        self._citing: dict[str, list[int]] = {}

    def answered(self, forager: Answered) -> None:
        if not forager.answer:
            return
        for node in dict.fromkeys(forager.evidence):
            citing = self._citing.setdefault(node, [])
            citing.append(forager.n)
            if len(citing) >= self.majority:
                self.stop(f"foragers {', '.join(map(str, citing))} of {self.foragers} agree on {node}")
                return


class Patience(StopPolicy):
    name = "patience"

    def __init__(self, foragers: int) -> None:
        super().__init__(foragers)
        self.known: set[str] = set()
        self.barren = 0

    def answered(self, forager: Answered) -> None:
        if forager.answer and forager.evidence:
            self.harvested(forager.evidence)

    def harvested(self, nodes: Iterable[str]) -> None:
        new = set(nodes) - self.known
        self.known |= new
        self.barren = 0 if new else self.barren + 1
        if self.barren >= BARREN_HARVESTS:
            self.stop(f"{BARREN_HARVESTS} harvests in a row added no new node")


def stop_policy(name: str, foragers: int) -> StopPolicy:
    kinds = {kind.name: kind for kind in (FirstConfident, Quorum, Patience)}
    return kinds[name](foragers)
