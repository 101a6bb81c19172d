"""How the host words what went wrong with a plugin: load errors and strict mode
(an exception as one bounded line is ``error_lines.error_line``).

Every part of the host (discovery, the registries, the hook calls) reports a
plugin's problem through these, so a problem reads the same wherever it arose:
one line, naming the plugin, never more than ``error_lines.MAX_ERROR_CHARS`` characters and
never the file's bytes.
"""
from __future__ import annotations

from dataclasses import dataclass

from monkeyllm_gardener.error_lines import bounded_line


class PluginLoadFailure(Exception):
    """Raised instead of recording a load error when the host is strict."""


@dataclass(frozen=True, kw_only=True)
class LoadError:
    """A plugin that could not be loaded or registered something invalid."""

    plugin: str  # distribution, module or config name
    entry_point: str  # e.g. "monkeyllm.converters: pdf = pkg:Pdf", "builtin", "register_converters"
    error: str  # one line

    def as_dict(self) -> dict[str, str]:
        return {"plugin": self.plugin, "entry_point": self.entry_point, "error": self.error}


class LoadErrorLog:
    """The load errors of one host, in the order they happened. A strict host
    (for plugin authors) raises ``PluginLoadFailure`` on the first instead."""

    def __init__(self, *, strict: bool) -> None:
        self.strict = strict
        self.errors: list[LoadError] = []

    def record(self, plugin: str, entry_point: str, error: str) -> None:
        problem = LoadError(plugin=plugin, entry_point=entry_point, error=bounded_line(error))
        if self.strict:
            raise PluginLoadFailure(f"{problem.plugin} ({problem.entry_point}): {problem.error}")
        self.errors.append(problem)


class Rejected(Exception):
    """Something a plugin offered (an entry point's object, an item passed to a
    ``register`` callback) is invalid; the message says why, in one line."""
