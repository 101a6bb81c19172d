"""Adapters that turn the seed's simple entry points into pluggy plugins.

``monkeyllm.converters`` names a class (instantiated with no arguments) or a
callable with ``convert(path) -> Conversion``: its name is its ``name`` attribute,
else the entry point's name; its extensions are its ``extensions``, else the entry
point's name as an extension (``pdf = "pkg:Pdf"`` claims ``.pdf``); its priority is
its ``priority``, else 0. ``monkeyllm.hooks`` names plain callables for
``on_curate``, ``register_converters`` or ``register_describers``.
"""
from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .conversion import Conversion
from .extensions import normalize_extension
from .hookspecs import hookimpl


class RegistersConverters:
    """A pluggy plugin registering a fixed list of converters."""

    def __init__(self, converters: Sequence[tuple[Any, float]]) -> None:
        self._converters = list(converters)

    @hookimpl
    def register_converters(self, register: Callable[..., None]) -> None:
        for converter, priority in self._converters:
            register(converter, priority=priority)


class _OnCurateCallable:
    def __init__(self, function: Callable[[dict[str, Any]], Any]) -> None:
        self._function = function

    @hookimpl
    def on_curate(self, draft: dict[str, Any]) -> Any:
        return self._function(draft)


class _RegisterConvertersCallable:
    def __init__(self, function: Callable[..., Any]) -> None:
        self._function = function

    @hookimpl
    def register_converters(self, register: Callable[..., None]) -> None:
        self._function(register)


class _RegisterDescribersCallable:
    def __init__(self, function: Callable[..., Any]) -> None:
        self._function = function

    @hookimpl
    def register_describers(self, register: Callable[..., None]) -> None:
        self._function(register)


SIMPLE_HOOK_ADAPTERS: Mapping[str, Callable[[Callable[..., Any]], object]] = {
    "on_curate": _OnCurateCallable,
    "register_converters": _RegisterConvertersCallable,
    "register_describers": _RegisterDescribersCallable,
}


class _EntryPointConverter:
    """A converter from the ``monkeyllm.converters`` group, with its name and
    extensions resolved by the documented rule."""

    def __init__(
        self,
        *,
        name: Any,
        extensions: Any,
        convert: Callable[[Path], Conversion],
        requires: Any,
        install_hint: Any,
    ) -> None:
        self.name = name
        self.extensions = extensions
        self._convert = convert
        self.requires = requires
        self.install_hint = install_hint

    def convert(self, path: Path) -> Conversion:
        return self._convert(path)


def converter_from_entry_point(entry_point_name: str, loaded: Any) -> tuple[Any, float]:
    """Apply the ``monkeyllm.converters`` rule; returns (converter, priority)."""
    target = loaded() if inspect.isclass(loaded) else loaded
    convert = getattr(target, "convert", None)
    if not callable(convert):
        if callable(target):
            convert = target  # a plain function f(path) -> Conversion
        else:
            raise TypeError(f"{type(target).__name__} has no convert(path) method and is not callable")
    extensions = getattr(target, "extensions", None)
    if extensions is None:
        extensions = (normalize_extension(entry_point_name),)
    name = getattr(target, "name", None)
    if not isinstance(name, str) or not name.strip():
        name = entry_point_name
    converter = _EntryPointConverter(
        name=name,
        extensions=extensions,
        convert=convert,
        requires=getattr(target, "requires", ()),
        install_hint=getattr(target, "install_hint", None),
    )
    return converter, getattr(target, "priority", 0.0)
