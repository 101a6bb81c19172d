"""``PluginHost``: one host's plugins, discovered once, and what the pipeline asks
of them: convert a file, describe a medium, run the ``on_curate`` hooks, say why
a file is unsupported, and the report behind ``vine plugins``.

One ``pluggy.PluginManager`` per ``PluginHost`` (never a module global), so two
hosts in one process, or one per test, never see each other's plugins. Building
a host is three steps, each in its own module: discovery fills the plugin
manager (``discovery.py``), the registry hooks fill the registries
(``registry.py``), and every later call of plugin code goes through the isolated
calls of ``calls.py``. A worker process rebuilds the same host from its picklable
``HostSpec`` (``host_from_spec``, once per process).
"""
from __future__ import annotations

import dataclasses
import functools
import importlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import pluggy

from monkeyllm_gardener import hookspecs
from monkeyllm_gardener.command_hooks import DEFAULT_OUTPUT_LIMIT_MB
from monkeyllm_gardener.conversion import Conversion, ConversionError, MediaInfo
from monkeyllm_gardener.extensions import extension_candidates
from monkeyllm_gardener.host.builtins import BUILTIN_PLUGIN_MODULES
from monkeyllm_gardener.host.calls import CallOutcome, HookArguments, HookCaller, isolated
from monkeyllm_gardener.host.discovery import COMMAND_PLUGIN_NAME, discover
from monkeyllm_gardener.host.on_curate import run_on_curate
from monkeyllm_gardener.host.problems import LoadErrorLog
from monkeyllm_gardener.host.registry import (
    Registry,
    RegisteredConverter,
    RegisteredDescriber,
)
from monkeyllm_gardener.host.report import plugins_report
from monkeyllm_gardener.host.spec import ALLOW_LIST_ENV, HostSpec


@dataclass(frozen=True, kw_only=True)
class ConvertResult:
    """The outcome of converting one file; picklable (crosses process boundaries)."""

    conversion: Conversion | None = None
    converter: str | None = None  # name of the converter that succeeded
    fallbacks: list[str] = field(default_factory=list)  # "<converter> failed on <file>: <error>"
    error: str | None = None  # every claimant failed: the last failure
    unsupported: str | None = None  # no available claimant: why, with the install hint

    @property
    def ok(self) -> bool:
        return self.conversion is not None


class PluginHost:
    """Discovers plugins once, then converts files, runs hooks and describers."""

    def __init__(
        self,
        *,
        command_converters: Mapping[str, str] | None = None,
        command_timeout: float = 120.0,
        command_output_limit_mb: float = DEFAULT_OUTPUT_LIMIT_MB,
        load_entry_points: bool = True,
        builtins: Sequence[str] = BUILTIN_PLUGIN_MODULES,
        environ: Mapping[str, str] | None = None,
        strict: bool = False,
        extra_hookspecs: Sequence[str] = (),
    ) -> None:
        environment = os.environ if environ is None else environ
        self.spec = HostSpec(
            command_converters=tuple((str(ext), str(tpl)) for ext, tpl in (command_converters or {}).items()),
            command_timeout=float(command_timeout),
            command_output_limit_mb=command_output_limit_mb,
            load_entry_points=bool(load_entry_points),
            builtins=tuple(builtins),
            allow_list=environment.get(ALLOW_LIST_ENV),
            strict=bool(strict),
            extra_hookspecs=tuple(extra_hookspecs),
        )
        self.strict = bool(strict)
        log = LoadErrorLog(strict=self.strict)
        self.load_errors = log.errors
        self._pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self._pm.add_hookspecs(hookspecs)
        for module_name in self.spec.extra_hookspecs:
            self._pm.add_hookspecs(importlib.import_module(module_name))
        discovered = discover(self._pm, self.spec, log)
        self._plugins = discovered.plugins
        self._refused_hooks = discovered.refused_hooks
        self.entry_points_tried = discovered.entry_points_tried
        self._calls = HookCaller(self._pm, self._plugins)
        self._registry = Registry(log)
        self._registry.collect(self._calls)

    # -- hooks -------------------------------------------------------------------

    def has_hook(self, hook_name: str) -> bool:
        """True when a loaded plugin implements ``hook_name``."""
        return self._calls.has(hook_name)

    def call_each(self, hook_name: str, arguments: HookArguments, *,
                  accept: Callable[[Any, Mapping[str, Any]], Any] | None = None,
                  capture_chatter: bool = False) -> Iterator[CallOutcome]:
        """Each implementation of ``hook_name`` in discovery order, each call isolated:
        one ``CallOutcome`` (plugin, value or error) per implementation, lazily.
        Any hook in ``hookspecs.py`` works; see ``calls.HookCaller.call_each``."""
        return self._calls.call_each(hook_name, arguments, accept=accept, capture_chatter=capture_chatter)

    def run_on_curate(self, draft: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """The draft after every on_curate hook, and a problem line per hook whose
        edits were discarded or reverted (``on_curate.run_on_curate``)."""
        return run_on_curate(self._calls, draft)

    # -- conversion --------------------------------------------------------------

    def claimants(self, extension: str) -> list[RegisteredConverter]:
        """Available converters claiming ``extension``, in the order they are tried."""
        return self._registry.claimants(extension)

    def unavailable_for(self, extension: str) -> list[RegisteredConverter]:
        """Converters claiming ``extension`` that miss an optional dependency."""
        return self._registry.unavailable_for(extension)

    @property
    def converters(self) -> list[RegisteredConverter]:
        return list(self._registry.converters)

    def convert(self, path: str | os.PathLike[str]) -> ConvertResult:
        """Convert one file: the first claimant that succeeds wins; each failure
        before it is a recorded fallback. Never raises for a converter's failure."""
        source = Path(path)
        claimants = self._registry.claimants_of_file(source.name)
        if not claimants:
            return ConvertResult(unsupported=self._why_unsupported(source.name))
        failures: list[str] = []
        for record in claimants:
            outcome = isolated(lambda: record.converter.convert(source),
                               accept=_a_conversion, capture_chatter=True)
            if outcome.error is not None:
                failures.append(f"{record.name} failed on {source.name}: {outcome.error}")
                continue
            conversion = outcome.value
            if outcome.chatter:
                said = tuple(f"{source.name}: {record.name} reported: {line}" for line in outcome.chatter)
                conversion = dataclasses.replace(conversion, warnings=(*conversion.warnings, *said))
            return ConvertResult(conversion=conversion, converter=record.name, fallbacks=failures)
        return ConvertResult(fallbacks=failures[:-1], error=failures[-1])

    def unsupported_reason(self, filename: str) -> str | None:
        """Why no available converter can take a file named ``filename`` (a missing
        optional dependency with its install hint, a refused command hook, no
        claimant at all), or None when one can."""
        if self._registry.claimants_of_file(filename):
            return None
        return self._why_unsupported(filename)

    def _why_unsupported(self, filename: str) -> str:
        candidates = extension_candidates(filename)
        if not candidates:
            return "no converter for files without an extension"
        for extension in candidates:
            for record in self.unavailable_for(extension):
                return f"{record.name} for {extension} is unavailable: {record.unavailable_reason}"
            if extension in self._refused_hooks:
                return (f"the command hook for {extension} in {COMMAND_PLUGIN_NAME} was refused: "
                        f"{self._refused_hooks[extension]}")
        return f"no converter for {candidates[-1]}"

    # -- describers --------------------------------------------------------------

    def describers(self, kind: str) -> list[RegisteredDescriber]:
        """Available describers for ``kind`` ("image" | "audio"), in the order tried."""
        return self._registry.describers_of(kind)

    def describe(self, path: str | os.PathLike[str], info: MediaInfo) -> tuple[str | None, list[str]]:
        """The first describer's text, or None (the caller uses the stub); a
        describer that raises is a warning and the next one is tried."""
        source = Path(path)
        warnings: list[str] = []
        for record in self.describers(info.kind):
            outcome = isolated(lambda: record.describer.describe(source, info), accept=_text_or_none)
            if outcome.error is not None:
                warnings.append(f"describer {record.name} failed on {source.name}: {outcome.error}")
                continue
            text = outcome.value
            if text is not None and text.strip():
                return text, warnings
        return None, warnings

    # -- vine plugins ------------------------------------------------------------

    def plugins_report(self) -> dict[str, Any]:
        """What ``vine plugins --json`` prints: one entry per plugin, plus load errors."""
        return plugins_report(self._plugins.values(), self._calls, self._registry, self.load_errors)


def _a_conversion(value: Any) -> Conversion:
    if not isinstance(value, Conversion):
        raise ConversionError(f"returned {type(value).__name__}, not a Conversion")
    return value


def _text_or_none(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"returned {type(value).__name__}, not text or None")
    return value


@functools.lru_cache(maxsize=8)
def host_from_spec(spec: HostSpec) -> PluginHost:
    """The host a spec describes, built once per process (worker processes call
    this on every file; discovery runs on the first)."""
    environ = {} if spec.allow_list is None else {ALLOW_LIST_ENV: spec.allow_list}
    return PluginHost(
        command_converters=dict(spec.command_converters),
        command_timeout=spec.command_timeout,
        command_output_limit_mb=spec.command_output_limit_mb,
        load_entry_points=spec.load_entry_points,
        builtins=spec.builtins,
        environ=environ,
        strict=spec.strict,
        extra_hookspecs=spec.extra_hookspecs,
    )


def convert_file(spec: HostSpec, path: str | os.PathLike[str]) -> ConvertResult:
    """Top-level (picklable) entry for a ProcessPoolExecutor worker."""
    return host_from_spec(spec).convert(path)
