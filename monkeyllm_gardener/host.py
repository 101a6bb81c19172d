"""The Gardener's plugin host: discovery, the converter and describer registries,
isolated ``on_curate`` calls, and the data behind ``vine plugins``.

One ``pluggy.PluginManager`` per ``PluginHost`` (never a module global), so two
hosts in one process, or one per test, never see each other's plugins.

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

Tie-break among claimants of one extension (documented, tested): source rank
(command, plugin, builtin), then lower ``priority``, then plugin name, then
registration order.
"""
from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
import importlib
import importlib.metadata
import importlib.util
import itertools
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any, Callable, Iterable, Literal, Mapping, Sequence

import pluggy

from monkeyllm_gardener import hookspecs
from monkeyllm_gardener.builtins import BUILTIN_PLUGIN_MODULES
from monkeyllm_gardener.chatter import captured_chatter
from monkeyllm_gardener.command_hooks import DEFAULT_OUTPUT_LIMIT_MB, CommandConverter, CommandTemplateError
from monkeyllm_gardener.conversion import Conversion, ConversionError, MediaInfo
from monkeyllm_gardener.derive import is_valid_summary
from monkeyllm_gardener.entrypoints import (
    SIMPLE_HOOK_ADAPTERS,
    RegistersConverters,
    converter_from_entry_point,
)
from monkeyllm_gardener.plugins_report import format_plugins_report  # noqa: F401 - re-exported

SourceKind = Literal["command", "plugin", "builtin"]
SOURCE_RANK: Mapping[str, int] = {"command": 0, "plugin": 1, "builtin": 2}
ALLOW_LIST_ENV = "MONKEYLLM_LOAD_PLUGINS"
ENTRY_POINT_GROUPS = ("monkeyllm", "monkeyllm.converters", "monkeyllm.hooks")
COMMAND_PLUGIN_NAME = "_meta/gardener.yaml"
BUILTIN_INSTALL_HINT = 'pip install "monkeyllm[ingest]"'
MEDIA_KINDS = frozenset({"image", "audio"})
# Hooks a plain callable may provide through the monkeyllm.hooks group.
SIMPLE_HOOK_NAMES = ("on_curate", "register_converters", "register_describers")
# Passport keys that identify a node (id, type) or record where it came from and what
# payload it holds (origin, source*, payload*): hooks cannot change them. Which file the
# engine installs is not among them: that travels in the write request beside the
# passport (monkeyllm_core.NodeWrite), so a hook never sees it.
_PROTECTED_KEYS = frozenset({"id", "type", "origin"})
_PROTECTED_PREFIXES = ("source", "payload")
_MAX_ERROR_CHARS = 300
_MAX_COMPOUND_SUFFIXES = 3


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


@dataclass(frozen=True, kw_only=True)
class RegisteredConverter:
    name: str
    plugin: str
    source: SourceKind
    extensions: tuple[str, ...]
    priority: float
    converter: Any
    available: bool
    unavailable_reason: str | None
    sequence: int = field(default=0, compare=False)  # registration order, the last tie-break


@dataclass(frozen=True, kw_only=True)
class RegisteredDescriber:
    name: str
    plugin: str
    source: SourceKind
    kinds: tuple[str, ...]
    priority: float
    describer: Any
    available: bool
    unavailable_reason: str | None
    sequence: int = field(default=0, compare=False)


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


@dataclass(frozen=True, kw_only=True)
class HostSpec:
    """A picklable, hashable description of a host: worker processes rebuild it."""

    command_converters: tuple[tuple[str, str], ...] = ()
    command_timeout: float = 120.0
    command_output_limit_mb: float = DEFAULT_OUTPUT_LIMIT_MB
    load_entry_points: bool = True
    builtins: tuple[str, ...] = BUILTIN_PLUGIN_MODULES
    allow_list: str | None = None  # the MONKEYLLM_LOAD_PLUGINS value, None when unset
    strict: bool = False


@dataclass(kw_only=True)
class _PluginInfo:
    pm_name: str  # unique name inside the PluginManager
    name: str  # what users see: distribution, module or config name
    version: str
    source: SourceKind
    entry_point: str
    order: int


class _Rejected(Exception):
    """An item passed to a ``register`` callback is invalid."""


# -- small helpers --------------------------------------------------------------


def one_line(exc: BaseException) -> str:
    """An exception as one bounded line: our own errors as they read, others typed."""
    text = str(exc).strip()
    first = text.splitlines()[0].strip() if text else ""
    if not isinstance(exc, ConversionError):
        first = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    if len(first) > _MAX_ERROR_CHARS:
        first = first[: _MAX_ERROR_CHARS - 3] + "..."
    return first


def _bounded(text: str) -> str:
    lines = str(text).strip().splitlines()
    first = lines[0] if lines else ""
    return first if len(first) <= _MAX_ERROR_CHARS else first[: _MAX_ERROR_CHARS - 3] + "..."


def _normalize_dist_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _parse_allow_list(value: str | None) -> frozenset[str] | None:
    if value is None:
        return None
    return frozenset(part.strip() for part in value.split(",") if part.strip())


def _missing_modules(requires: Iterable[str]) -> list[str]:
    missing = []
    for module in requires:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a missing parent package, an empty name
            found = False
        if not found:
            missing.append(module)
    return missing


def _as_name_tuple(value: Any, what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        raise _Rejected(f"{what} must be a list like ('{value}',), not the string {value!r}")
    try:
        items = tuple(value)
    except TypeError:
        raise _Rejected(f"{what} must be a list of strings, got {type(value).__name__}") from None
    for item in items:
        if not isinstance(item, str):
            raise _Rejected(f"{what} must be strings, got {item!r}")
    return items


def _valid_priority(priority: Any) -> float:
    if isinstance(priority, bool) or not isinstance(priority, (int, float)) or not math.isfinite(priority):
        raise _Rejected(f"priority must be a finite number, got {priority!r}")
    return float(priority)


def extension_candidates(filename: str) -> list[str]:
    """Extensions a file may be claimed by, most specific first: ``a.tar.gz`` ->
    ``[".tar.gz", ".gz"]``. A dotfile such as ``.bashrc`` has none."""
    suffixes = PurePath(filename).suffixes[-_MAX_COMPOUND_SUFFIXES:]
    return ["".join(suffixes[start:]).lower() for start in range(len(suffixes))]


def _call_hookimpl(impl: pluggy.HookImpl, arguments: Mapping[str, Any]) -> Any:
    # pluggy lets an implementation accept a subset of the spec's arguments.
    return impl.function(*[arguments[name] for name in impl.argnames])


def _draft_problem(draft: Mapping[str, Any]) -> str | None:
    """Why a hook's draft breaks the passport contract (FOREST-FORMAT.md), or None.
    Link targets are checked against the forest by the pipeline."""
    if "summary" in draft:
        summary = draft["summary"]
        if not isinstance(summary, str) or not is_valid_summary(summary):
            return "summary must be one non-empty line of at most 240 characters without a boilerplate opening"
    if "title" in draft and not (isinstance(draft["title"], str) and draft["title"].strip()):
        return "title must be non-empty text"
    for key in ("tags", "aliases"):
        value = draft.get(key)
        if key in draft and not (isinstance(value, list) and all(isinstance(item, str) for item in value)):
            return f"{key} must be a list of strings"
    links = draft.get("links")
    if "links" in draft and not (isinstance(links, list) and all(isinstance(link, dict) for link in links)):
        return "links must be a list of mappings"
    return None


def _is_protected(key: Any) -> bool:
    return isinstance(key, str) and (key in _PROTECTED_KEYS or key.startswith(_PROTECTED_PREFIXES))


_MISSING = object()
# What a plugin's code may raise that must fail only that plugin's call. SystemExit is
# included: a converter wrapping a tool's main() that calls sys.exit() must not end
# the whole batch. KeyboardInterrupt is not: Ctrl-C still stops the run.
_PLUGIN_FAILURES: tuple[type[BaseException], ...] = (Exception, SystemExit)


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
        )
        self.strict = bool(strict)
        self.load_errors: list[LoadError] = []
        # extension -> why its command hook was refused: the reason such a file is unsupported
        self._refused_hooks: dict[str, str] = {}
        self._pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self._pm.add_hookspecs(hookspecs)
        self._plugins: dict[str, _PluginInfo] = {}
        self._plugin_order = itertools.count()
        self._registration_order = itertools.count()
        self._converters: list[RegisteredConverter] = []
        self._describers: list[RegisteredDescriber] = []

        self._load_command_hooks(self.spec.command_converters, self.spec.command_timeout,
                                 self.spec.command_output_limit_mb)
        if self.spec.load_entry_points:
            self._load_entry_points(_parse_allow_list(self.spec.allow_list))
        self._load_builtins(self.spec.builtins)
        self._skip_plugins_with_unknown_hooks()
        self._pm.check_pending()
        self._call_registry_hook("register_converters", self._registrar(
            "register_converters", self._validated_converter, self._converters))
        self._call_registry_hook("register_describers", self._registrar(
            "register_describers", self._validated_describer, self._describers))
        self._by_extension = self._index_converters()

    # -- discovery -------------------------------------------------------------

    def _record_error(self, plugin: str, entry_point: str, error: str) -> None:
        problem = LoadError(plugin=plugin, entry_point=entry_point, error=_bounded(error))
        if self.strict:
            raise PluginLoadFailure(f"{problem.plugin} ({problem.entry_point}): {problem.error}")
        self.load_errors.append(problem)

    def _add_plugin(self, plugin: object, *, name: str, version: str, source: SourceKind, entry_point: str) -> None:
        pm_name = name
        for suffix in itertools.count(2):
            if self._pm.get_plugin(pm_name) is None and not self._pm.is_blocked(pm_name):
                break
            pm_name = f"{name}#{suffix}"
        try:
            self._pm.register(plugin, name=pm_name)
        except Exception as exc:  # already registered, hookimpl arguments not in the spec, ...
            self._record_error(name, entry_point, f"cannot register: {one_line(exc)}")
            return
        if not self._pm.get_hookcallers(plugin):
            self._pm.unregister(name=pm_name)
            self._record_error(
                name,
                entry_point,
                "no @hookimpl functions found (mark them with monkeyllm_gardener.hookspecs.hookimpl)",
            )
            return
        self._plugins[pm_name] = _PluginInfo(
            pm_name=pm_name,
            name=name,
            version=version,
            source=source,
            entry_point=entry_point,
            order=next(self._plugin_order),
        )

    def _load_command_hooks(self, command_converters: Sequence[tuple[str, str]], timeout: float,
                            output_limit_mb: float) -> None:
        converters = []
        for extension, template in command_converters:
            try:
                converters.append((CommandConverter(extension, template, timeout, output_limit_mb), 0.0))
            except CommandTemplateError as exc:
                self._record_error(COMMAND_PLUGIN_NAME, f"converters {extension}", str(exc))
                self._refused_hooks[extension] = _bounded(str(exc)).removeprefix(f"command hook for {extension}: ")
        if converters:
            self._add_plugin(
                RegistersConverters(converters),
                name=COMMAND_PLUGIN_NAME,
                version="config",
                source="command",
                entry_point="converters",
            )

    def _load_entry_points(self, allowed: frozenset[str] | None) -> None:
        allowed_dists = {_normalize_dist_name(name) for name in allowed or ()}
        for group in ENTRY_POINT_GROUPS:
            try:
                entry_points = list(importlib.metadata.entry_points(group=group))
            except Exception as exc:  # a distribution with unreadable metadata
                self._record_error("(entry points)", group, f"cannot list entry points: {one_line(exc)}")
                continue
            for entry_point in entry_points:
                dist = getattr(entry_point, "dist", None)
                dist_name = dist.name if dist is not None and dist.name else entry_point.name
                version = dist.version if dist is not None and dist.version else "unknown"
                if allowed is not None and not (
                    entry_point.name in allowed or _normalize_dist_name(dist_name) in allowed_dists
                ):
                    continue
                label = f"{group}: {entry_point.name} = {entry_point.value}"
                try:
                    loaded = entry_point.load()
                except (Exception, SystemExit) as exc:  # never let one plugin stop the host
                    self._record_error(dist_name, label, f"failed to load: {one_line(exc)}")
                    continue
                try:
                    plugin = self._plugin_for_entry_point(group, entry_point.name, loaded)
                except _Rejected as exc:
                    self._record_error(dist_name, label, str(exc))
                    continue
                except (Exception, SystemExit) as exc:  # e.g. the class's __init__ raised
                    self._record_error(dist_name, label, f"unusable: {one_line(exc)}")
                    continue
                self._add_plugin(plugin, name=dist_name, version=version, source="plugin", entry_point=label)

    def _plugin_for_entry_point(self, group: str, entry_point_name: str, loaded: Any) -> object:
        if group == "monkeyllm":
            return loaded
        if group == "monkeyllm.converters":
            converter, priority = converter_from_entry_point(entry_point_name, loaded)
            return RegistersConverters([(converter, priority)])
        adapter = SIMPLE_HOOK_ADAPTERS.get(entry_point_name)
        if adapter is None:
            raise _Rejected(
                f"unknown hook name {entry_point_name!r} in monkeyllm.hooks (known: {', '.join(SIMPLE_HOOK_NAMES)})"
            )
        if not callable(loaded):
            raise _Rejected(f"{entry_point_name} must name a callable, got {type(loaded).__name__}")
        return adapter(loaded)

    def _load_builtins(self, modules: Sequence[str]) -> None:
        for module_name in modules:
            try:
                module = importlib.import_module(module_name)
            except (Exception, SystemExit) as exc:
                self._record_error(module_name, "builtin", f"failed to import: {one_line(exc)}")
                continue
            self._add_plugin(module, name=module_name, version="builtin", source="builtin", entry_point="builtin")

    def _skip_plugins_with_unknown_hooks(self) -> None:
        """pluggy's check_pending stops at the first misspelt hook; we report every
        offending plugin and skip it, so the others still load."""
        spec_names = list(SIMPLE_HOOK_NAMES)
        unknown: dict[str, list[str]] = {}
        for hook_name, caller in list(vars(self._pm.hook).items()):
            if hook_name.startswith("_") or caller.has_spec():
                continue
            for impl in caller.get_hookimpls():
                if not impl.optionalhook:
                    unknown.setdefault(impl.plugin_name, []).append(hook_name)
        for pm_name, hook_names in unknown.items():
            info = self._plugins.pop(pm_name)  # every registered plugin went through _add_plugin
            self._pm.unregister(name=pm_name)
            guesses = []
            for hook_name in hook_names:
                close = difflib.get_close_matches(hook_name, spec_names, n=1)
                guesses.append(f"{hook_name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
            self._record_error(
                info.name, info.entry_point, f"unknown hook {', '.join(guesses)}; plugin skipped"
            )

    # -- registries --------------------------------------------------------------

    def _ordered_impls(self, hook_name: str) -> list[pluggy.HookImpl]:
        """Implementations in discovery order (tryfirst/trylast honoured), never
        pluggy's LIFO call order."""
        impls = getattr(self._pm.hook, hook_name).get_hookimpls()

        def key(impl: pluggy.HookImpl) -> tuple[int, int]:
            band = 0 if impl.tryfirst else 2 if impl.trylast else 1
            return band, self._plugins[impl.plugin_name].order

        return sorted((impl for impl in impls if impl.plugin_name in self._plugins), key=key)

    def _call_registry_hook(self, hook_name: str, make_register: Callable[[_PluginInfo], Callable[..., None]]) -> None:
        for impl in self._ordered_impls(hook_name):
            info = self._plugins[impl.plugin_name]
            if impl.hookwrapper or impl.wrapper:
                self._record_error(info.name, hook_name, f"{hook_name} cannot be a hook wrapper; ignored")
                continue
            try:
                _call_hookimpl(impl, {"register": make_register(info)})
            except PluginLoadFailure:
                raise
            except _PLUGIN_FAILURES as exc:
                self._record_error(
                    info.name, hook_name, f"{hook_name} raised {one_line(exc)}; what it registered before that is kept"
                )

    def _availability(self, item: Any, source: SourceKind) -> tuple[bool, str | None]:
        requires = getattr(item, "requires", None) or ()
        if isinstance(requires, str):
            requires = (requires,)
        missing = _missing_modules(_as_name_tuple(requires, "requires"))
        if not missing:
            return True, None
        hint = getattr(item, "install_hint", None)
        if not isinstance(hint, str) or not hint.strip():
            hint = BUILTIN_INSTALL_HINT if source == "builtin" else f"install the Python module {', '.join(missing)}"
        return False, f"needs {', '.join(missing)}: {hint}"

    def _registrar(self, hook_name: str, validate: Callable[[Any, Any, _PluginInfo], Any],
                   records: list[Any]) -> Callable[[_PluginInfo], Callable[..., None]]:
        """The ``register`` callback handed to one plugin's registry hook: each item
        is validated and stamped with the plugin; an invalid one is a load error."""
        def for_plugin(info: _PluginInfo) -> Callable[..., None]:
            def register(item: Any, priority: float = 0.0) -> None:
                try:
                    records.append(validate(item, priority, info))
                except _Rejected as exc:
                    self._record_error(info.name, hook_name, str(exc))

            return register

        return for_plugin

    def _validated_converter(self, converter: Any, priority: Any, info: _PluginInfo) -> RegisteredConverter:
        name = getattr(converter, "name", None)
        if not isinstance(name, str) or not name.strip():
            raise _Rejected(f"a converter ({type(converter).__name__}) has no name; skipped")
        extensions = _as_name_tuple(getattr(converter, "extensions", None) or (), f"converter {name!r}: extensions")
        if not extensions:
            raise _Rejected(f"converter {name!r} claims no extensions; skipped")
        for extension in extensions:
            if (
                not extension.startswith(".")
                or len(extension) < 2
                or extension != extension.lower()
                or any(ch in extension for ch in "/\\ \t\r\n\0")
            ):
                raise _Rejected(
                    f"converter {name!r}: extension {extension!r} must be lowercase with the dot, like '.csv'; skipped"
                )
        if not callable(getattr(converter, "convert", None)):
            raise _Rejected(f"converter {name!r} has no callable convert(path); skipped")
        priority_value, available, reason = self._admitted("converter", name, converter, priority, info,
                                                           self._converters)
        return RegisteredConverter(
            name=name,
            plugin=info.name,
            source=info.source,
            extensions=tuple(dict.fromkeys(extensions)),
            priority=priority_value,
            converter=converter,
            available=available,
            unavailable_reason=reason,
            sequence=next(self._registration_order),
        )

    def _admitted(self, kind: str, name: str, plugin_object: Any, priority: Any, info: _PluginInfo,
                  registered: list[Any]) -> tuple[float, bool, str | None]:
        """What converters and describers share: a valid priority, their requirements
        checked, and one name per registry. Returns (priority, available, reason)."""
        try:
            priority_value = _valid_priority(priority)
            available, reason = self._availability(plugin_object, info.source)
        except _Rejected as exc:
            raise _Rejected(f"{kind} {name!r}: {exc}; skipped") from None
        for existing in registered:
            if existing.name == name:
                raise _Rejected(f"{kind} {name!r} is already registered by {existing.plugin}; this one is ignored")
        return priority_value, available, reason

    def _validated_describer(self, describer: Any, priority: Any, info: _PluginInfo) -> RegisteredDescriber:
        name = getattr(describer, "name", None)
        if not isinstance(name, str) or not name.strip():
            raise _Rejected(f"a describer ({type(describer).__name__}) has no name; skipped")
        kinds = _as_name_tuple(getattr(describer, "kinds", None) or (), f"describer {name!r}: kinds")
        if not kinds or not set(kinds) <= MEDIA_KINDS:
            raise _Rejected(f"describer {name!r}: kinds must be a subset of ('image', 'audio'), got {kinds!r}; skipped")
        if not callable(getattr(describer, "describe", None)):
            raise _Rejected(f"describer {name!r} has no callable describe(path, info); skipped")
        priority_value, available, reason = self._admitted("describer", name, describer, priority, info,
                                                           self._describers)
        return RegisteredDescriber(
            name=name,
            plugin=info.name,
            source=info.source,
            kinds=tuple(dict.fromkeys(kinds)),
            priority=priority_value,
            describer=describer,
            available=available,
            unavailable_reason=reason,
            sequence=next(self._registration_order),
        )

    def _index_converters(self) -> dict[str, list[RegisteredConverter]]:
        index: dict[str, list[RegisteredConverter]] = {}
        for record in self._converters:
            for extension in record.extensions:
                index.setdefault(extension, []).append(record)
        for records in index.values():
            records.sort(key=lambda r: (SOURCE_RANK[r.source], r.priority, r.plugin, r.sequence))
        return index

    # -- conversion --------------------------------------------------------------

    @staticmethod
    def _normalize(extension: str) -> str:
        text = extension.strip().lower()
        return text if text.startswith(".") else "." + text

    def claimants(self, extension: str) -> list[RegisteredConverter]:
        """Available converters claiming ``extension``, in the order they are tried."""
        return [r for r in self._by_extension.get(self._normalize(extension), []) if r.available]

    def unavailable_for(self, extension: str) -> list[RegisteredConverter]:
        """Converters claiming ``extension`` that miss an optional dependency."""
        return [r for r in self._by_extension.get(self._normalize(extension), []) if not r.available]

    @property
    def converters(self) -> list[RegisteredConverter]:
        return list(self._converters)

    def convert(self, path: str | os.PathLike[str]) -> ConvertResult:
        """Convert one file: the first claimant that succeeds wins; each failure
        before it is a recorded fallback. Never raises for a converter's failure."""
        source = Path(path)
        candidates = extension_candidates(source.name)
        claimants: list[RegisteredConverter] = []
        for extension in candidates:
            claimants.extend(r for r in self.claimants(extension) if all(r is not c for c in claimants))
        if not claimants:
            return ConvertResult(unsupported=self._unsupported_reason(candidates))
        failures: list[str] = []
        for record in claimants:
            try:
                with captured_chatter() as chatter:
                    conversion = record.converter.convert(source)
                if not isinstance(conversion, Conversion):
                    raise ConversionError(f"returned {type(conversion).__name__}, not a Conversion")
            except _PLUGIN_FAILURES as exc:
                failures.append(f"{record.name} failed on {source.name}: {one_line(exc)}")
                continue
            if chatter:
                said = tuple(f"{source.name}: {record.name} reported: {line}" for line in chatter)
                conversion = dataclasses.replace(conversion, warnings=(*conversion.warnings, *said))
            return ConvertResult(conversion=conversion, converter=record.name, fallbacks=failures)
        return ConvertResult(fallbacks=failures[:-1], error=failures[-1])

    def _unsupported_reason(self, candidates: list[str]) -> str:
        if not candidates:
            return "no converter for files without an extension"
        for extension in candidates:
            for record in self.unavailable_for(extension):
                return f"{record.name} for {extension} is unavailable: {record.unavailable_reason}"
            if extension in self._refused_hooks:
                return (f"the command hook for {extension} in {COMMAND_PLUGIN_NAME} was refused: "
                        f"{self._refused_hooks[extension]}")
        return f"no converter for {candidates[-1]}"

    # -- on_curate ---------------------------------------------------------------

    def run_on_curate(self, draft: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """Run every on_curate hook in discovery order, each on its own deep copy.

        A hook that raises, returns something other than a dict or None, or returns a
        draft breaking the passport contract (``_draft_problem``) has all its edits
        discarded; changes to ``id``, ``type``, ``origin`` or any ``source*``/``payload*``
        key are reverted. Every such event is a problem line.
        """
        current = copy.deepcopy(draft)
        problems: list[str] = []
        node_id = draft.get("id", "?")
        for impl in self._ordered_impls("on_curate"):
            plugin = self._plugins[impl.plugin_name].name
            if impl.hookwrapper or impl.wrapper:
                problems.append(f"on_curate {plugin} is a hook wrapper, which is not supported; skipped")
                continue
            working = copy.deepcopy(current)
            try:
                result = _call_hookimpl(impl, {"draft": working})
                candidate = working if result is None else result
                if not isinstance(candidate, dict):
                    raise TypeError(f"returned {type(candidate).__name__}, not a dict or None")
                bad_keys = [key for key in candidate if not isinstance(key, str)]
                if bad_keys:
                    raise TypeError(f"returned a draft with non-string key {bad_keys[0]!r}")
                # The hook may keep a reference to what it returned: own our copy.
                candidate = copy.deepcopy(candidate)
            except _PLUGIN_FAILURES as exc:
                problems.append(f"on_curate {plugin} failed on {node_id}: {one_line(exc)}; its edits were discarded")
                continue
            reverted = self._revert_protected(current, candidate)
            if reverted:
                problems.append(
                    f"on_curate {plugin} tried to change {', '.join(reverted)} on {node_id}; reverted"
                )
            invalid = _draft_problem(candidate)
            if invalid:
                # Judged per hook: one hook's bad summary must not discard another's tags.
                problems.append(f"on_curate {plugin} returned an invalid draft for {node_id} ({invalid}); "
                                "its edits were discarded")
                continue
            current = candidate
        return current, problems

    @staticmethod
    def _revert_protected(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
        reverted = []
        for key in sorted({*before, *after}, key=str):
            if not _is_protected(key):
                continue
            old, new = before.get(key, _MISSING), after.get(key, _MISSING)
            if old is _MISSING and new is _MISSING:
                continue
            if old is _MISSING or new is _MISSING or old != new:
                reverted.append(key)
                if old is _MISSING:
                    del after[key]
                else:
                    after[key] = copy.deepcopy(old)
        return reverted

    # -- describers --------------------------------------------------------------

    def describers(self, kind: str) -> list[RegisteredDescriber]:
        """Available describers for ``kind`` ("image" | "audio"), in the order tried."""
        chosen = [d for d in self._describers if kind in d.kinds and d.available]
        return sorted(chosen, key=lambda d: (d.priority, SOURCE_RANK[d.source], d.plugin, d.sequence))

    def describe(self, path: str | os.PathLike[str], info: MediaInfo) -> tuple[str | None, list[str]]:
        """The first describer's text, or None (the caller uses the stub); a
        describer that raises is a warning and the next one is tried."""
        source = Path(path)
        warnings: list[str] = []
        for record in self.describers(info.kind):
            try:
                text = record.describer.describe(source, info)
                if text is not None and not isinstance(text, str):
                    raise TypeError(f"returned {type(text).__name__}, not text or None")
            except _PLUGIN_FAILURES as exc:
                warnings.append(f"describer {record.name} failed on {source.name}: {one_line(exc)}")
                continue
            if text is not None and text.strip():
                return text, warnings
        return None, warnings

    # -- vine plugins ------------------------------------------------------------

    def plugins_report(self) -> dict[str, Any]:
        """What ``vine plugins --json`` prints: one entry per plugin, plus load errors."""
        blocks: dict[str, dict[str, Any]] = {}
        for info in sorted(self._plugins.values(), key=lambda i: i.order):
            block = blocks.setdefault(
                info.name,
                {"name": info.name, "version": info.version, "source": info.source,
                 "hooks": [], "converters": [], "describers": []},
            )
            plugin = self._pm.get_plugin(info.pm_name)
            for caller in self._pm.get_hookcallers(plugin) or []:
                if caller.name not in block["hooks"]:
                    block["hooks"].append(caller.name)
        for record in self._converters:
            blocks[record.plugin]["converters"].append(
                {"name": record.name, "extensions": list(record.extensions), "priority": record.priority,
                 "available": record.available, "unavailable_reason": record.unavailable_reason}
            )
        for describer in self._describers:
            blocks[describer.plugin]["describers"].append(
                {"name": describer.name, "kinds": list(describer.kinds), "priority": describer.priority,
                 "available": describer.available, "unavailable_reason": describer.unavailable_reason}
            )
        for block in blocks.values():
            block["hooks"].sort()
        return {
            "plugins": list(blocks.values()),
            "extensions": {ext: [r.name for r in records if r.available]
                           for ext, records in sorted(self._by_extension.items())},
            "load_errors": [problem.as_dict() for problem in self.load_errors],
        }


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
    )


def convert_file(spec: HostSpec, path: str | os.PathLike[str]) -> ConvertResult:
    """Top-level (picklable) entry for a ProcessPoolExecutor worker."""
    return host_from_spec(spec).convert(path)
