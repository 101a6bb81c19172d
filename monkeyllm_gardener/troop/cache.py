"""The Troop's shared visited cache: an identical read is made once (concepts.md, The Troop).

Two calls are identical when they name the same tool with the same canonical
arguments: the arguments as the tool's schema checks them, every parameter
present (an omitted one at its default), as sorted JSON. So ``locate {"query":
"x"}`` and ``locate {"query": "x", "k": 5}`` are one call; text is compared as
sent, never normalised, because a read answers the text it is given.

The first forager to make a call runs it (on the forest, traced in its own
session); every later identical call, from any forager, awaits that same run
and gets its response (or its error) at no forest cost and with no trace event
of its own. A call still in flight is joined, not repeated. The run is a task
of its own, so a forager cancelled while it waits (a stop) never cancels the
run another forager is waiting on.
"""
from __future__ import annotations

import asyncio
import json
from typing import Any, Awaitable, Callable

from monkeyllm_gardener.serve.forest_service import ForestService
from monkeyllm_gardener.serve.tools import check_args


def call_key(tool: str, args: Any) -> str:
    """The canonical form of one read call (E_SCHEMA for arguments its schema refuses)."""
    schema = ForestService.tool(tool)
    checked = check_args(schema, args)
    canonical = {name: checked.get(name, spec.get("default")) for name, spec in schema.properties.items()}
    return json.dumps([tool, canonical], sort_keys=True, ensure_ascii=False, separators=(",", ":"))


class VisitedCache:
    def __init__(self) -> None:
        self._runs: dict[str, asyncio.Task] = {}
        self.hits = 0

    async def read(self, tool: str, args: dict[str, Any],
                   run: Callable[[], Awaitable[dict[str, Any]]]) -> tuple[dict[str, Any], bool]:
        """The response of ``tool(args)`` and whether the cache served it; ``run``
        makes the call when no forager has made it yet."""
        key = call_key(tool, args)
        known = self._runs.get(key)
        if known is not None:
            self.hits += 1
            return await asyncio.shield(known), True
        task = self._runs[key] = asyncio.ensure_future(run())
        return await asyncio.shield(task), False

    @property
    def runs(self) -> int:
        """How many calls reached the forest (each identical call once)."""
        return len(self._runs)

    async def settle(self) -> None:
        """Wait for the runs still under way (a cancelled forager's) and retrieve every
        error, so none is left running or unread when the hunt ends."""
        await asyncio.gather(*self._runs.values(), return_exceptions=True)
