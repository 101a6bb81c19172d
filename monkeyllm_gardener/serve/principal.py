"""Who is calling, and what they may do: the one rule MCP and REST both apply.

Over stdio, and over HTTP when no key exists (a server bound to loopback), the
caller is ``LOCAL``: every forest, reads and writes (a ``--readonly`` server still
offers no write). With keys, the HTTP layer resolves the bearer key to a
``Principal`` and puts it on the ASGI scope under ``SCOPE_KEY``, where the MCP
tool handlers and the REST routes read it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from monkeyllm_core import VineError

SCOPE_KEY = "monkeyllm.principal"


@dataclass(frozen=True)
class Principal:
    name: str
    forest: str | None = None  # None: every forest the server offers
    read_only: bool = False

    def sees(self, forest: str) -> bool:
        return self.forest is None or self.forest == forest

    def visible(self, forests: Iterable[str]) -> list[str]:
        return [name for name in forests if self.sees(name)]

    def check(self, forest: str, writes: bool) -> None:
        """Raise when this caller may not make this call on this forest. A forest it
        may not see answers as if it did not exist (nothing is revealed about it)."""
        if not self.sees(forest):
            raise VineError("E_NOT_FOUND", f"no forest named {forest!r} here",
                            f"This key is for the forest {self.forest!r}.")
        if writes and self.read_only:
            raise VineError("E_READONLY", f"the key {self.name!r} is read-only",
                            "Ask for a key without --read-only to write.")


LOCAL = Principal("local")


def principal_of(scope: Mapping[str, Any] | None) -> Principal:
    """The caller an ASGI scope carries (``LOCAL`` when the server has no keys)."""
    if scope is None:
        return LOCAL
    principal = scope.get(SCOPE_KEY)
    return principal if isinstance(principal, Principal) else LOCAL
