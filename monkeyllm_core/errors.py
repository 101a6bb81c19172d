"""Expected failures are data: every one carries a code, a message and a hint."""
from __future__ import annotations

from typing import Any

ERROR_CODES = (
    "E_SCHEMA",
    "E_FRONTMATTER",
    "E_NOT_FOUND",
    "E_LOCKED",
    "E_READONLY",
    "E_QUERY_INVALID",
    "E_QUERY_FORBIDDEN",
    "E_TIMEOUT",
    "E_NOT_A_FOREST",
    "E_EXISTS",
    "E_CONFLICT",
    "E_UNSUPPORTED",
    "E_CORRUPT",  # a file that is not what it claims to be: a truncated or altered snapshot
)


class VineError(Exception):
    """An expected failure of a forest operation.

    ``envelope()`` gives the wire shape of primitives.md:
    ``{"error": {"code": ..., "message": ..., "hint": ...}}``.
    """

    def __init__(self, code: str, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint

    def envelope(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "hint": self.hint}}

    def one_line(self) -> str:
        """How the CLI prints it: ``error CODE: message (hint)``."""
        text = f"error {self.code}: {self.message}"
        return f"{text} ({self.hint})" if self.hint else text

    def __repr__(self) -> str:
        return f"VineError({self.code!r}, {self.message!r}, {self.hint!r})"


def estimate_tokens(text: str) -> int:
    """The deterministic token estimate of the spec: ceil(chars / 4)."""
    return -(-len(text) // 4)
