"""Reading a model's reply tolerantly: bare JSON, JSON in a fenced code block, or
JSON with chatter around it."""
from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


class ReplyFormatError(ValueError):
    """The reply holds no JSON object. The message can be handed back to the model."""


def parse_reply_object(text: str) -> dict[str, Any]:
    candidates = [match.group(1) for match in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        start = candidate.find("{")
        while start != -1:
            try:
                value, _ = decoder.raw_decode(candidate, start)
            except json.JSONDecodeError:
                start = candidate.find("{", start + 1)
                continue
            if isinstance(value, dict):
                return value
            start = candidate.find("{", start + 1)
    raise ReplyFormatError("the reply was not a JSON object with a \"summary\" field")


def link_ids(raw: Any) -> list[str]:
    """Proposed link targets as strings: accepts ["id", ...] or [{"target": "id"}, ...]."""
    if raw is None:
        return []
    if isinstance(raw, (str, dict)):
        raw = [raw]
    if not isinstance(raw, list):
        return []
    ids: list[str] = []
    for item in raw:
        if isinstance(item, dict):
            item = item.get("target") or item.get("id")
        if isinstance(item, str) and item.strip():
            ids.append(item.strip())
    return ids
