"""``_meta/gardener.yaml``: the Gardener's per-forest configuration.

Not a node and never committed. Holds the adopted sources (root and dest, recorded
before the first file is processed, so an interrupted adopt is finished by sync),
command-hook converters with their ``command_timeout`` (seconds, default 120) and
``command_output_limit_mb`` (MiB a tool may print or write, default 64), ignore globs
and curation settings. A key nothing reads is named in the adopt/sync report's
warnings (``problems``), not refused: the forest stays usable while it is fixed.
"""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from monkeyllm_gardener import config_memory
from monkeyllm_gardener.extensions import normalize_extension
from monkeyllm_gardener.host.spec import DEFAULT_OUTPUT_LIMIT_MB

CONFIG_PATH = "_meta/gardener.yaml"
KNOWN_KEYS = ("command_output_limit_mb", "command_timeout", "converters", "curation", "ignore", "sources")


class ConfigError(Exception):
    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class GardenerConfig:
    # a plain class, not a dataclass: a sync that finds nothing to do imports no dataclasses
    def __init__(self, path: Path, data: dict[str, Any] | None = None) -> None:
        self.path = path
        self.data: dict[str, Any] = {} if data is None else data

    @classmethod
    def load(cls, forest: Path) -> "GardenerConfig":
        path = forest / CONFIG_PATH
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return cls(path, {})
        remembered = config_memory.recall(forest, st)  # as parsed last time, while the file is unchanged
        if remembered is not None:
            cfg = cls(path, remembered)
            cfg._check()
            return cfg
        from monkeyllm_core.forest.passport import yaml_load  # a remembered config needs no parser
        try:
            data = yaml_load(path.read_text(encoding="utf-8")) or {}
        except Exception as exc:  # yaml errors carry a position; keep one line
            raise ConfigError(f"{CONFIG_PATH}: invalid YAML ({str(exc).splitlines()[0]})",
                              "Fix the file or delete it; adopt writes a fresh one.") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{CONFIG_PATH}: expected a mapping", "See README: Configuring the Gardener.")
        cfg = cls(path, data)
        cfg._check()
        config_memory.remember(forest, st, data)
        return cfg

    def _check(self) -> None:
        conv = self.data.get("converters") or {}
        if not isinstance(conv, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in conv.items()):
            raise ConfigError(f"{CONFIG_PATH}: converters must map an extension to a command template",
                              "e.g. converters: {\".pdf\": '\"/opt/tools/pdf2md\" \"{input}\" \"{output}\"'}")
        for key, default, unit in (("command_timeout", 120, "seconds"),
                                   ("command_output_limit_mb", DEFAULT_OUTPUT_LIMIT_MB, "MB")):
            value = self.data.get(key, default)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
                # .inf would be no bound at all: a hanging hook never stopped
                raise ConfigError(f"{CONFIG_PATH}: {key} must be a positive number of {unit}, got {value!r}",
                                  f"e.g. {key}: {default} (the default)")
        ignore = self.data.get("ignore") or []
        if not isinstance(ignore, list) or not all(isinstance(g, str) for g in ignore):
            raise ConfigError(f"{CONFIG_PATH}: ignore must be a list of globs", "e.g. ignore: ['*.bak', 'drafts/']")

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        from monkeyllm_core.forest.passport import yaml_dump
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(yaml_dump(self.data), encoding="utf-8")
        os.replace(tmp, self.path)

    # -- views -------------------------------------------------------------------
    def problems(self) -> list[str]:
        """Report warnings for keys nothing reads (a misspelt ``ignores:`` would
        otherwise change nothing without a word)."""
        return [f"{CONFIG_PATH}: unknown key {key!r} is not used (known: {', '.join(KNOWN_KEYS)})"
                for key in sorted(map(str, self.data)) if key not in KNOWN_KEYS]

    @property
    def converters(self) -> dict[str, str]:
        return {normalize_extension(k): v for k, v in (self.data.get("converters") or {}).items()}

    @property
    def command_timeout(self) -> float:
        return float(self.data.get("command_timeout", 120))

    @property
    def command_output_limit_mb(self) -> float:
        """What one command hook may print or write, in MiB; past it that file fails."""
        return self.data.get("command_output_limit_mb", DEFAULT_OUTPUT_LIMIT_MB)

    @property
    def ignore(self) -> list[str]:
        return list(self.data.get("ignore") or [])

    @property
    def default_tags(self) -> list[str]:
        return [str(t) for t in ((self.data.get("curation") or {}).get("default_tags") or [])]

    @property
    def directives(self) -> str | None:
        value = (self.data.get("curation") or {}).get("directives")
        return str(value) if value else None

    @property
    def sources(self) -> list[dict[str, str]]:
        return [dict(s) for s in (self.data.get("sources") or []) if isinstance(s, dict) and s.get("root")]

    def record_source(self, root: Path, dest: str) -> None:
        """Remember an adopted source; a root is adopted under one dest only."""
        sources = self.sources
        for entry in sources:
            if entry["root"] == str(root):
                entry["dest"] = dest
                break
        else:
            sources.append({"root": str(root), "dest": dest})
        self.data["sources"] = sources
        self.save()

    def source_for(self, root: Path) -> dict[str, str] | None:
        return next((s for s in self.sources if s["root"] == str(root)), None)
