"""The registries: the converters and describers plugins register, checked and
ordered, and the index from an extension to the converters claiming it.

Registry hooks take a ``register`` callback (STYLE.md 2): each item a plugin
passes is validated here (a name, lowercase dotted extensions, a callable
``convert``/``describe``, a finite priority, one name per registry), stamped
with the plugin that registered it and checked for its optional requirements
(``requires``: a missing module makes it unavailable, with the install hint).
An invalid item is a load error naming the plugin; the plugin's other items stay.

Tie-break among claimants of one extension (documented, tested): source rank
(command, plugin, builtin), then lower ``priority``, then plugin name, then
registration order. Describers are tried by priority first, then source rank.
"""
from __future__ import annotations

import importlib.util
import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from monkeyllm_gardener.extensions import extension_candidates, normalize_extension
from monkeyllm_gardener.host.calls import HookCaller
from monkeyllm_gardener.host.discovery import SOURCE_RANK, PluginInfo, SourceKind
from monkeyllm_gardener.host.problems import LoadErrorLog, Rejected

BUILTIN_INSTALL_HINT = 'pip install "monkeyllm[ingest]"'
MEDIA_KINDS = frozenset({"image", "audio"})


@dataclass(frozen=True, kw_only=True)
class Registered:
    """What the registry records of every item a plugin registers."""

    name: str
    plugin: str  # the plugin that registered it, as users see it
    source: SourceKind
    priority: float
    available: bool
    unavailable_reason: str | None
    sequence: int = field(default=0, compare=False)  # registration order, the last tie-break


@dataclass(frozen=True, kw_only=True)
class RegisteredConverter(Registered):
    extensions: tuple[str, ...]
    converter: Any


@dataclass(frozen=True, kw_only=True)
class RegisteredDescriber(Registered):
    kinds: tuple[str, ...]
    describer: Any


def _named(kind: str, item: Any) -> str:
    name = getattr(item, "name", None)
    if not isinstance(name, str) or not name.strip():
        raise Rejected(f"a {kind} ({type(item).__name__}) has no name; skipped")
    return name


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
        raise Rejected(f"{what} must be a list like ('{value}',), not the string {value!r}")
    try:
        items = tuple(value)
    except TypeError:
        raise Rejected(f"{what} must be a list of strings, got {type(value).__name__}") from None
    for item in items:
        if not isinstance(item, str):
            raise Rejected(f"{what} must be strings, got {item!r}")
    return items


def _valid_priority(priority: Any) -> float:
    if isinstance(priority, bool) or not isinstance(priority, (int, float)) or not math.isfinite(priority):
        raise Rejected(f"priority must be a finite number, got {priority!r}")
    return float(priority)


def _availability(item: Any, source: SourceKind) -> tuple[bool, str | None]:
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


class Registry:
    """The converters and describers of one host, filled once by ``collect``."""

    def __init__(self, log: LoadErrorLog) -> None:
        self._log = log
        self._registration_order = itertools.count()
        self.converters: list[RegisteredConverter] = []
        self.describers: list[RegisteredDescriber] = []
        self._by_extension: dict[str, list[RegisteredConverter]] = {}

    def collect(self, calls: HookCaller) -> None:
        """Call every ``register_converters``, then every ``register_describers``
        implementation, then index the converters by extension."""
        self._call_registry_hook(calls, "register_converters", self._validated_converter, self.converters)
        self._call_registry_hook(calls, "register_describers", self._validated_describer, self.describers)
        self._by_extension = self._index_converters()

    def _call_registry_hook(self, calls: HookCaller, hook_name: str,
                            validate: Callable[[Any, Any, PluginInfo], Any], records: list[Any]) -> None:
        for outcome in calls.call_each(hook_name, lambda info: {"register": self._registrar(
                hook_name, validate, records, info)}):
            if outcome.wrapper:
                self._log.record(outcome.plugin, hook_name, f"{hook_name} cannot be a hook wrapper; ignored")
            elif outcome.error is not None:
                self._log.record(
                    outcome.plugin, hook_name,
                    f"{hook_name} raised {outcome.error}; what it registered before that is kept",
                )

    def _registrar(self, hook_name: str, validate: Callable[[Any, Any, PluginInfo], Any],
                   records: list[Any], info: PluginInfo) -> Callable[..., None]:
        """The ``register`` callback handed to one plugin's registry hook: each item
        is validated and stamped with the plugin; an invalid one is a load error."""
        def register(item: Any, priority: float = 0.0) -> None:
            try:
                records.append(validate(item, priority, info))
            except Rejected as exc:
                self._log.record(info.name, hook_name, str(exc))

        return register

    def _validated_converter(self, converter: Any, priority: Any, info: PluginInfo) -> RegisteredConverter:
        name = _named("converter", converter)
        extensions = _as_name_tuple(getattr(converter, "extensions", None) or (), f"converter {name!r}: extensions")
        if not extensions:
            raise Rejected(f"converter {name!r} claims no extensions; skipped")
        for extension in extensions:
            if (
                not extension.startswith(".")
                or len(extension) < 2
                or extension != extension.lower()
                or any(ch in extension for ch in "/\\ \t\r\n\0")
            ):
                raise Rejected(
                    f"converter {name!r}: extension {extension!r} must be lowercase with the dot, like '.csv'; skipped"
                )
        if not callable(getattr(converter, "convert", None)):
            raise Rejected(f"converter {name!r} has no callable convert(path); skipped")
        return RegisteredConverter(
            extensions=tuple(dict.fromkeys(extensions)),
            converter=converter,
            **self._admitted("converter", name, converter, priority, info, self.converters),
        )

    def _validated_describer(self, describer: Any, priority: Any, info: PluginInfo) -> RegisteredDescriber:
        name = _named("describer", describer)
        kinds = _as_name_tuple(getattr(describer, "kinds", None) or (), f"describer {name!r}: kinds")
        if not kinds or not set(kinds) <= MEDIA_KINDS:
            raise Rejected(f"describer {name!r}: kinds must be a subset of ('image', 'audio'), got {kinds!r}; skipped")
        if not callable(getattr(describer, "describe", None)):
            raise Rejected(f"describer {name!r} has no callable describe(path, info); skipped")
        return RegisteredDescriber(
            kinds=tuple(dict.fromkeys(kinds)),
            describer=describer,
            **self._admitted("describer", name, describer, priority, info, self.describers),
        )

    def _admitted(self, kind: str, name: str, plugin_object: Any, priority: Any, info: PluginInfo,
                  registered: list[Any]) -> dict[str, Any]:
        """What converters and describers share: a valid priority, their requirements
        checked, and one name per registry. Returns the fields both records have:
        the name, the plugin stamped on it, priority, availability and sequence."""
        try:
            priority_value = _valid_priority(priority)
            available, reason = _availability(plugin_object, info.source)
        except Rejected as exc:
            raise Rejected(f"{kind} {name!r}: {exc}; skipped") from None
        for existing in registered:
            if existing.name == name:
                raise Rejected(f"{kind} {name!r} is already registered by {existing.plugin}; this one is ignored")
        return {"name": name, "plugin": info.name, "source": info.source, "priority": priority_value,
                "available": available, "unavailable_reason": reason,
                "sequence": next(self._registration_order)}

    def _index_converters(self) -> dict[str, list[RegisteredConverter]]:
        index: dict[str, list[RegisteredConverter]] = {}
        for record in self.converters:
            for extension in record.extensions:
                index.setdefault(extension, []).append(record)
        for records in index.values():
            records.sort(key=lambda r: (SOURCE_RANK[r.source], r.priority, r.plugin, r.sequence))
        return index

    # -- lookups -------------------------------------------------------------------

    @property
    def extension_index(self) -> dict[str, list[RegisteredConverter]]:
        """Every claimed extension -> its converters in the order they are tried,
        unavailable ones included."""
        return self._by_extension

    def claimants(self, extension: str) -> list[RegisteredConverter]:
        """Available converters claiming ``extension``, in the order they are tried."""
        return [r for r in self._by_extension.get(normalize_extension(extension), []) if r.available]

    def unavailable_for(self, extension: str) -> list[RegisteredConverter]:
        """Converters claiming ``extension`` that miss an optional dependency."""
        return [r for r in self._by_extension.get(normalize_extension(extension), []) if not r.available]

    def claimants_of_file(self, filename: str) -> list[RegisteredConverter]:
        """Available converters for a file, in the order they are tried: those of
        its most specific extension first (``.tar.gz`` before ``.gz``)."""
        claimants: list[RegisteredConverter] = []
        for extension in extension_candidates(filename):
            claimants.extend(r for r in self.claimants(extension) if all(r is not c for c in claimants))
        return claimants

    def describers_of(self, kind: str) -> list[RegisteredDescriber]:
        """Available describers for ``kind`` ("image" | "audio"), in the order tried."""
        chosen = [d for d in self.describers if kind in d.kinds and d.available]
        return sorted(chosen, key=lambda d: (d.priority, SOURCE_RANK[d.source], d.plugin, d.sequence))
