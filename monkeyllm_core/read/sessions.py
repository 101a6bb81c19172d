"""A hunt's session: its trace file, its scoped heat, and how it closes.

Every read call of a session is traced, one JSON line in
``_derived/traces/<session>.jsonl``: the call, its arguments, the node it was
about (``focus``), the ids it returned, its tokens and milliseconds, or the error
code it answered. The trace is the session's memory, so a session can span
processes: ``MONKEYLLM_SESSION=<id>`` makes a Vine's first session join that one
(an agent driving ``vine`` commands keeps one hunt across them), and closing
reads the whole trace back from the file.

``heat_of`` is the one ranking signal every read call blends in: persistent heat,
decayed, plus this session's own heat, at most 1.0. ``deposit_session`` is how
pick and harvest leave scent for the rest of the hunt. ``close`` is the only place
persistent heat is deposited: +0.1 on every node of the winning trail of a
successful hunt (``outcome``), then the session's own heat is deleted and the
caller starts a fresh session.

A session's heat lives under its ``heat_scope``, its own id unless it joins
another's: the foragers of a Troop each keep their own trace (so only the
winner's trail is heated) while what one of them picks warms the rankings of
all (concepts.md, The Troop). Closing any session of a scope ends the scope's
heat.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from ..errors import VineError
from .heat import HeatStore
from .outcome import hunt_outcome

TRACES_DIR = "_derived/traces"
SESSION_ENV = "MONKEYLLM_SESSION"
DEPOSIT = 0.1
_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def new_session_id() -> str:
    return secrets.token_hex(6)


def session_id_from_env() -> str | None:
    value = os.environ.get(SESSION_ENV)
    if not value:
        return None
    if not _SESSION_ID.fullmatch(value):
        raise VineError("E_SCHEMA", f"{SESSION_ENV}={value!r} is not a session id",
                        "A session id is 1-64 letters, digits, '-' or '_'; unset it to start a fresh session.")
    return value


class Session:
    def __init__(self, root: Path, heat: HeatStore, session_id: str | None = None, *,
                 heat_scope: str | None = None) -> None:
        self.root = Path(root)
        self.heat = heat
        self.id = session_id or new_session_id()
        self.heat_scope = heat_scope or self.id
        self.trace_path = self.root / TRACES_DIR / f"{self.id}.jsonl"
        self._tracing = True
        self._folder_made = False
        # the Gauntlet's goal (canopy/dense.py): the latest locate or harvest query,
        # embedded once, for look, move and scan to rank toward; a new session starts without.
        # A session joined by id (MONKEYLLM_SESSION: a hunt spanning `vine` commands) keeps
        # it in a file beside its trace, so the next process ranks toward it unembedded.
        self.goal: Any = None
        self.joined = session_id is not None
        self.goal_path = self.root / TRACES_DIR / f"{self.id}.goal.json"
        self.goal_read = not self.joined

    # -- heat ---------------------------------------------------------------------------
    def heat_of(self, ids: Iterable[str]) -> dict[str, float]:
        """Every id's heat: persistent (decayed) plus this session's scope's, at most 1.0; 0.0 when cold."""
        warm = self.heat.warm(self.heat_scope)
        return {node: warm.get(node, 0.0) for node in ids}

    def warm(self) -> dict[str, float]:
        """Every warm node of the forest, as ``heat_of`` would rate it."""
        return self.heat.warm(self.heat_scope)

    def deposit_session(self, ids: Iterable[str], amount: float = DEPOSIT) -> None:
        self.heat.deposit_session(self.heat_scope, ids, amount)

    # -- the trace ----------------------------------------------------------------------
    def trace(self, call: str, args: dict[str, Any], *, focus: str | None, returned: Sequence[str],
              tokens: int, ms: float, error: str | None = None) -> None:
        record: dict[str, Any] = {"ts": round(time.time(), 3), "session": self.id, "call": call, "args": args,
                                  "focus": focus, "returned": list(returned), "tokens": tokens, "ms": round(ms, 3)}
        if error is not None:
            record["error"] = error
        self._append(record)

    def _append(self, record: dict[str, Any]) -> None:
        if not self._tracing:
            return
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
        for _attempt in (1, 2):
            try:
                if not self._folder_made:
                    self.trace_path.parent.mkdir(parents=True, exist_ok=True)
                    self._folder_made = True
                # opened per record, one write each: nothing is left open between calls, and
                # lines appended by processes sharing the session do not interleave
                with open(self.trace_path, "a", encoding="utf-8") as trace:
                    trace.write(line)
                return
            except FileNotFoundError:
                self._folder_made = False  # the folder went away (a cleaned _derived/): make it again
            except OSError:
                break
        self._tracing = False  # a read-only _derived/: the read still answers

    def calls(self) -> list[dict[str, Any]]:
        """Every call traced in this session, by any process, in the order written."""
        try:
            text = self.trace_path.read_text(encoding="utf-8")
        except OSError:
            return []
        out = []
        for line in text.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line cut by a crash
            if isinstance(record, dict) and "call" in record and record.get("session") == self.id:
                out.append(record)
        return out

    # -- closing ------------------------------------------------------------------------
    def close(self, success: bool, answer_nodes: Sequence[str], linked: Callable[[str, str], bool], *,
              calls: Sequence[dict[str, Any]] | None = None) -> dict[str, Any]:
        """End the hunt: the concepts.md outcome record, appended to the trace and returned.

        ``calls`` replaces the trace as the hunt's record when the caller knows it
        better: a Troop forager's reads that the shared visited cache served are in
        another forager's trace, not in its own, yet they are on its trail."""
        answers = [str(a) for a in answer_nodes]
        metrics, trail, suggest = hunt_outcome(self.calls() if calls is None else calls, bool(success), answers,
                                               linked)
        if success and trail:
            self.heat.deposit(trail, DEPOSIT)
        self.heat.end_session(self.heat_scope)
        if self.joined:  # the hunt is over: the next one sets its own goal
            self.goal_path.unlink(missing_ok=True)
        self.heat.evaporate()
        outcome = {"ts": round(time.time(), 3), "session": self.id,
                   "outcome": {"success": bool(success), "answer_nodes": answers},
                   "metrics": metrics, "suggest_shortcuts": suggest}
        self._append(outcome)
        return outcome
