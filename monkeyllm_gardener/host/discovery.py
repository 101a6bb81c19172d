"""Discovery: which plugins a host loads, in which order, and what stops one.

Discovery order, which is also the order claimants of an extension are tried:

1. command hooks from ``_meta/gardener.yaml`` (source ``command``);
2. installed plugins, from three entry-point groups (source ``plugin``):
   - ``monkeyllm``: a pluggy plugin (module or object) with ``@hookimpl`` functions;
   - ``monkeyllm.converters``: a class (instantiated with no arguments), an object
     with ``convert(path)``, or a plain function ``f(path) -> Conversion``. Its
     extensions come from its ``extensions`` attribute, else from the entry-point
     NAME (``pdf = "pkg:PdfConverter"`` claims ``.pdf``); its name from ``name``,
     else the entry-point name; its priority from ``priority``, else 0.0;
   - ``monkeyllm.hooks``: an entry point named after a hook (``on_curate``) whose
     object is a callable, e.g. ``f(draft) -> draft``;
3. built-ins (source ``builtin``), the generic fallbacks.

Each entry point is loaded on its own: one that fails to import, names a missing
object, raises on load, or carries a misspelt ``@hookimpl`` is recorded in
``load_errors`` and skipped; the rest load. ``MONKEYLLM_LOAD_PLUGINS`` limits the
third-party plugins: unset loads all, a comma-separated list of entry-point or
distribution names loads only those, an empty value loads none. Built-ins and
command hooks always load. ``strict=True`` raises ``PluginLoadFailure`` instead of
recording (for plugin authors).

Discovery only fills the plugin manager and says what it holds (``PluginInfo``);
what the plugins register is the registry's business (``registry.py``), calling
them is ``calls.py``'s.
"""
from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import itertools
import re
from dataclasses import dataclass
from typing import Any, Literal, Mapping, Sequence

import pluggy

from monkeyllm_gardener.command_hooks import CommandConverter, CommandTemplateError
from monkeyllm_gardener.host.entry_points import RegistersConverters, SimpleHook, converter_from_entry_point
from monkeyllm_gardener.error_lines import bounded_line, error_line
from monkeyllm_gardener.host.problems import LoadErrorLog, Rejected
from monkeyllm_gardener.host.spec import HostSpec

SourceKind = Literal["command", "plugin", "builtin"]
# The discovery order of the sources, which is also the first tie-break among
# claimants of one extension.
SOURCE_RANK: Mapping[str, int] = {"command": 0, "plugin": 1, "builtin": 2}
ENTRY_POINT_GROUPS = ("monkeyllm", "monkeyllm.converters", "monkeyllm.hooks")
COMMAND_PLUGIN_NAME = "_meta/gardener.yaml"


@dataclass(kw_only=True)
class PluginInfo:
    """A plugin discovery loaded."""

    pm_name: str  # unique name inside the PluginManager
    name: str  # what users see: distribution, module or config name
    version: str
    source: SourceKind
    entry_point: str
    order: int  # discovery order, the order its hook implementations are called in


@dataclass(kw_only=True)
class Discovered:
    """What discovery leaves behind, beside the plugins in the plugin manager."""

    plugins: dict[str, PluginInfo]  # by pm_name
    # extension -> why its command hook was refused: the reason such a file is unsupported
    refused_hooks: dict[str, str]
    # third-party entry points tried (loaded or not): a host with any may register
    # differently from one run to the next, whatever else stays the same (``remembered``)
    entry_points_tried: int = 0


def discover(pm: pluggy.PluginManager, spec: HostSpec, log: LoadErrorLog) -> Discovered:
    """Load every plugin ``spec`` names into ``pm`` (its hookspecs already added),
    in discovery order; each problem is recorded in ``log`` and costs only that
    plugin."""
    loader = _Loader(pm, log)
    loader.load_command_hooks(spec.command_converters, spec.command_timeout, spec.command_output_limit_mb)
    if spec.load_entry_points:
        loader.load_entry_points(_parse_allow_list(spec.allow_list))
    loader.load_builtins(spec.builtins)
    loader.skip_plugins_with_unknown_hooks()
    pm.check_pending()
    return Discovered(plugins=loader.plugins, refused_hooks=loader.refused_hooks,
                      entry_points_tried=loader.entry_points_tried)


def _normalize_dist_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _parse_allow_list(value: str | None) -> frozenset[str] | None:
    if value is None:
        return None
    return frozenset(part.strip() for part in value.split(",") if part.strip())


def _hook_names(pm: pluggy.PluginManager) -> list[str]:
    """The hooks the plugin API defines: every hookspec the manager was given."""
    return sorted(name for name, caller in vars(pm.hook).items()
                  if not name.startswith("_") and caller.has_spec())


class _Loader:
    """One discovery run: registers each plugin it finds, one at a time."""

    def __init__(self, pm: pluggy.PluginManager, log: LoadErrorLog) -> None:
        self.pm = pm
        self.log = log
        self.plugins: dict[str, PluginInfo] = {}
        self.refused_hooks: dict[str, str] = {}
        self.entry_points_tried = 0
        self._order = itertools.count()

    def add_plugin(self, plugin: object, *, name: str, version: str, source: SourceKind, entry_point: str) -> None:
        pm_name = name
        for suffix in itertools.count(2):
            if self.pm.get_plugin(pm_name) is None and not self.pm.is_blocked(pm_name):
                break
            pm_name = f"{name}#{suffix}"
        try:
            self.pm.register(plugin, name=pm_name)
        except Exception as exc:  # already registered, hookimpl arguments not in the spec, ...
            self.log.record(name, entry_point, f"cannot register: {error_line(exc)}")
            return
        if not self.pm.get_hookcallers(plugin):
            self.pm.unregister(name=pm_name)
            self.log.record(
                name,
                entry_point,
                "no @hookimpl functions found (mark them with monkeyllm_gardener.hookspecs.hookimpl)",
            )
            return
        self.plugins[pm_name] = PluginInfo(
            pm_name=pm_name,
            name=name,
            version=version,
            source=source,
            entry_point=entry_point,
            order=next(self._order),
        )

    def load_command_hooks(self, command_converters: Sequence[tuple[str, str]], timeout: float,
                           output_limit_mb: float) -> None:
        converters = []
        for extension, template in command_converters:
            try:
                converters.append((CommandConverter(extension, template, timeout, output_limit_mb), 0.0))
            except CommandTemplateError as exc:
                self.log.record(COMMAND_PLUGIN_NAME, f"converters {extension}", str(exc))
                self.refused_hooks[extension] = bounded_line(str(exc)).removeprefix(f"command hook for {extension}: ")
        if converters:
            self.add_plugin(
                RegistersConverters(converters),
                name=COMMAND_PLUGIN_NAME,
                version="config",
                source="command",
                entry_point="converters",
            )

    def load_entry_points(self, allowed: frozenset[str] | None) -> None:
        allowed_dists = {_normalize_dist_name(name) for name in allowed or ()}
        for group in ENTRY_POINT_GROUPS:
            try:
                entry_points = list(importlib.metadata.entry_points(group=group))
            except Exception as exc:  # a distribution with unreadable metadata
                self.log.record("(entry points)", group, f"cannot list entry points: {error_line(exc)}")
                self.entry_points_tried += 1
                continue
            for entry_point in entry_points:
                dist = getattr(entry_point, "dist", None)
                dist_name = dist.name if dist is not None and dist.name else entry_point.name
                version = dist.version if dist is not None and dist.version else "unknown"
                if allowed is not None and not (
                    entry_point.name in allowed or _normalize_dist_name(dist_name) in allowed_dists
                ):
                    continue
                self.entry_points_tried += 1
                label = f"{group}: {entry_point.name} = {entry_point.value}"
                try:
                    loaded = entry_point.load()
                except (Exception, SystemExit) as exc:  # never let one plugin stop the host
                    self.log.record(dist_name, label, f"failed to load: {error_line(exc)}")
                    continue
                try:
                    plugin = self._plugin_for_entry_point(group, entry_point.name, loaded)
                except Rejected as exc:
                    self.log.record(dist_name, label, str(exc))
                    continue
                except (Exception, SystemExit) as exc:  # e.g. the class's __init__ raised
                    self.log.record(dist_name, label, f"unusable: {error_line(exc)}")
                    continue
                self.add_plugin(plugin, name=dist_name, version=version, source="plugin", entry_point=label)

    def _plugin_for_entry_point(self, group: str, entry_point_name: str, loaded: Any) -> object:
        if group == "monkeyllm":
            return loaded
        if group == "monkeyllm.converters":
            converter, priority = converter_from_entry_point(entry_point_name, loaded)
            return RegistersConverters([(converter, priority)])
        # monkeyllm.hooks: any hook the plugin API defines, by its name
        caller = getattr(self.pm.hook, entry_point_name, None)
        if caller is None or caller.spec is None:
            raise Rejected(
                f"unknown hook name {entry_point_name!r} in monkeyllm.hooks "
                f"(known: {', '.join(_hook_names(self.pm))})"
            )
        if not callable(loaded):
            raise Rejected(f"{entry_point_name} must name a callable, got {type(loaded).__name__}")
        return SimpleHook(entry_point_name, caller.spec.function, loaded)

    def load_builtins(self, modules: Sequence[str]) -> None:
        for module_name in modules:
            try:
                module = importlib.import_module(module_name)
            except (Exception, SystemExit) as exc:
                self.log.record(module_name, "builtin", f"failed to import: {error_line(exc)}")
                continue
            self.add_plugin(module, name=module_name, version="builtin", source="builtin", entry_point="builtin")

    def skip_plugins_with_unknown_hooks(self) -> None:
        """pluggy's check_pending stops at the first misspelt hook; we report every
        offending plugin and skip it, so the others still load."""
        spec_names = _hook_names(self.pm)
        unknown: dict[str, list[str]] = {}
        for hook_name, caller in list(vars(self.pm.hook).items()):
            if hook_name.startswith("_") or caller.has_spec():
                continue
            for impl in caller.get_hookimpls():
                if not impl.optionalhook:
                    unknown.setdefault(impl.plugin_name, []).append(hook_name)
        for pm_name, hook_names in unknown.items():
            info = self.plugins.pop(pm_name)  # every registered plugin went through add_plugin
            self.pm.unregister(name=pm_name)
            guesses = []
            for hook_name in hook_names:
                close = difflib.get_close_matches(hook_name, spec_names, n=1)
                guesses.append(f"{hook_name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
            self.log.record(
                info.name, info.entry_point, f"unknown hook {', '.join(guesses)}; plugin skipped"
            )
