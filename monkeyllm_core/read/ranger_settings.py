"""How fast heat fades: ``half_life_days`` and ``session_ttl_hours`` of ``_meta/ranger.yaml``.

The Ranger's configuration lives in the forest, beside it, in plain YAML
(concepts.md, The Ranger). The read engine needs two of its keys: the half-life
of persistent heat and how long session-scoped heat outlives its last deposit.
A missing file or key means the defaults (30 days, 24 hours); a value that is
not a positive number is an E_SCHEMA naming the key, because a typo that made
heat never fade (or fade at once) would otherwise go unseen. The other keys
belong to the Ranger and are not read here.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import VineError
from ..forest.passport import yaml_load

RANGER_PATH = "_meta/ranger.yaml"
DEFAULT_HALF_LIFE_DAYS = 30.0
DEFAULT_SESSION_TTL_HOURS = 24.0


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
        path = Path(root) / RANGER_PATH
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls()
        try:
            data = yaml_load(text) if text.strip() else {}
        except Exception:
            raise VineError("E_SCHEMA", f"{RANGER_PATH} is not valid YAML",
                            "Fix the file, or delete it to use the defaults (half_life_days: 30, "
                            "session_ttl_hours: 24).") from None
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise VineError("E_SCHEMA", f"{RANGER_PATH} is not a mapping",
                            "Write it as 'key: value' lines, e.g. 'half_life_days: 30'.")
        return cls(half_life_days=_positive(data, "half_life_days", DEFAULT_HALF_LIFE_DAYS),
                   session_ttl_hours=_positive(data, "session_ttl_hours", DEFAULT_SESSION_TTL_HOURS))


def _positive(data: dict, key: str, default: float) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise VineError("E_SCHEMA", f"{RANGER_PATH}: {key} must be a positive number, not {value!r}",
                        f"Set e.g. '{key}: {default:g}', or remove the key to use that default.")
    return float(value)
