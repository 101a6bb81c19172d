"""``_meta/ranger.yaml``: how fast heat fades, and what the Ranger does with it.

The Ranger's configuration lives in the forest, beside it, in plain YAML
(concepts.md, The Ranger). The read engine needs two of its keys
(``HeatSettings``): the half-life of persistent heat and how long session-scoped
heat outlives its last deposit. The Ranger reads all six (``RangerSettings``):
those two, the heat an endpoint needs for a link to be promoted, the confidence
it is promoted to, the confidence under which a cold link is pruned, and the cap
of the remote payload cache.

A missing file or key means the seed's defaults. A value of the wrong kind is an
E_SCHEMA naming the key, because a typo that made heat never fade (or every link
die) would otherwise go unseen. A key nobody knows is not an error: other engines
may keep their own keys in the same file, and a read must never fail over one.
The Ranger names such keys in its report instead (``unknown_keys``), with the
known key they most resemble, so a misspelt ``half_life_day`` is seen too.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Callable

from ..errors import VineError
from ..forest.passport import yaml_load

RANGER_PATH = "_meta/ranger.yaml"
DEFAULT_HALF_LIFE_DAYS = 30.0
DEFAULT_SESSION_TTL_HOURS = 24.0
DEFAULT_PROMOTE_FLOOR = 0.2
DEFAULT_PROMOTED_CONFIDENCE = 0.8
DEFAULT_PRUNE_BELOW = 0.5
DEFAULT_PAYLOAD_CACHE_GB = 5.0


@dataclass(frozen=True, kw_only=True)
class HeatSettings:
    half_life_days: float = DEFAULT_HALF_LIFE_DAYS
    session_ttl_hours: float = DEFAULT_SESSION_TTL_HOURS

    @property
    def half_life_seconds(self) -> float:
        return self.half_life_days * 86400.0

    @property
    def session_ttl_seconds(self) -> float:
        return self.session_ttl_hours * 3600.0

    @classmethod
    def load(cls, root: Path) -> "HeatSettings":
        data = read_ranger_yaml(root)
        return cls(half_life_days=_positive(data, "half_life_days", DEFAULT_HALF_LIFE_DAYS),
                   session_ttl_hours=_positive(data, "session_ttl_hours", DEFAULT_SESSION_TTL_HOURS))


@dataclass(frozen=True, kw_only=True)
class RangerSettings(HeatSettings):
    promote_floor: float = DEFAULT_PROMOTE_FLOOR
    promoted_confidence: float = DEFAULT_PROMOTED_CONFIDENCE
    prune_below: float = DEFAULT_PRUNE_BELOW
    payload_cache_gb: float = DEFAULT_PAYLOAD_CACHE_GB
    unknown_keys: tuple[str, ...] = ()  # what the file holds that no key above names, each with a hint

    @classmethod
    def load(cls, root: Path) -> "RangerSettings":
        data = read_ranger_yaml(root)
        settings = cls(
            half_life_days=_positive(data, "half_life_days", DEFAULT_HALF_LIFE_DAYS),
            session_ttl_hours=_positive(data, "session_ttl_hours", DEFAULT_SESSION_TTL_HOURS),
            # heat is at most 1.0: a floor above it could never be met
            promote_floor=_number(data, "promote_floor", DEFAULT_PROMOTE_FLOOR,
                                  lambda v: 0 < v <= 1, "a number in (0, 1]"),
            promoted_confidence=_number(data, "promoted_confidence", DEFAULT_PROMOTED_CONFIDENCE,
                                        lambda v: 0 < v <= 1, "a number in (0, 1]"),
            prune_below=_number(data, "prune_below", DEFAULT_PRUNE_BELOW, lambda v: 0 <= v <= 1,
                                "a number in [0, 1]"),
            payload_cache_gb=_number(data, "payload_cache_gb", DEFAULT_PAYLOAD_CACHE_GB, lambda v: v >= 0,
                                     "a number of at least 0"),
            unknown_keys=_unknown(data),
        )
        if settings.prune_below > settings.promoted_confidence:
            # a link promoted this cycle would be pruned as soon as its ends cool down
            raise VineError("E_SCHEMA", f"{RANGER_PATH}: prune_below ({settings.prune_below:g}) is above "
                            f"promoted_confidence ({settings.promoted_confidence:g})",
                            "Keep prune_below at most promoted_confidence (the defaults: 0.5 and 0.8).")
        return settings

    def known(self) -> dict[str, float]:
        """The six settings, as the report shows them."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "unknown_keys"}


def read_ranger_yaml(root: Path) -> dict[str, Any]:
    """The file's mapping ({} when absent or empty); anything else is an E_SCHEMA."""
    path = Path(root) / RANGER_PATH
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = yaml_load(text) if text.strip() else {}
    except Exception:
        raise VineError("E_SCHEMA", f"{RANGER_PATH} is not valid YAML",
                        "Fix the file, or delete it to use the defaults (half_life_days: 30, "
                        "session_ttl_hours: 24).") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise VineError("E_SCHEMA", f"{RANGER_PATH} is not a mapping",
                        "Write it as 'key: value' lines, e.g. 'half_life_days: 30'.")
    return data


def _positive(data: dict, key: str, default: float) -> float:
    return _number(data, key, default, lambda v: v > 0, "a positive number")


def _number(data: dict, key: str, default: float, ok: Callable[[float], bool], shape: str) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not ok(value):
        raise VineError("E_SCHEMA", f"{RANGER_PATH}: {key} must be {shape}, not {value!r}",
                        f"Set e.g. '{key}: {default:g}', or remove the key to use that default.")
    return float(value)


def _unknown(data: dict) -> tuple[str, ...]:
    known = [f.name for f in fields(RangerSettings) if f.name != "unknown_keys"]
    out = []
    for key in data:
        if key in known:
            continue
        close = difflib.get_close_matches(str(key), known, n=1)
        out.append(f"{key!s}" + (f" (did you mean {close[0]}?)" if close else ""))
    return tuple(out)
