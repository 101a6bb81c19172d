"""Adapters that turn the seed's simple entry points into pluggy plugins.

``monkeyllm.converters`` names a class (instantiated with no arguments) or a
callable with ``convert(path) -> Conversion``: its name is its ``name`` attribute,
else the entry point's name; its extensions are its ``extensions``, else the entry
point's name as an extension (``pdf = "pkg:Pdf"`` claims ``.pdf``); its priority is
its ``priority``, else 0. ``monkeyllm.hooks`` names a plain callable per entry
point, for the hook the entry point is named after (``on_curate``,
``register_converters``, ``register_describers``: any hook in ``hookspecs.py``).
"""
from __future__ import annotations

import functools
import inspect
from pathlib import Path
from typing import Any, Callable, Sequence

from monkeyllm_gardener.conversion import Conversion
from monkeyllm_gardener.extensions import normalize_extension
from monkeyllm_gardener.hookspecs import hookimpl


class RegistersConverters:
    """A pluggy plugin registering a fixed list of converters."""

    def __init__(self, converters: Sequence[tuple[Any, float]]) -> None:
        self._converters = list(converters)

    @hookimpl
    def register_converters(self, register: Callable[..., None]) -> None:
        for converter, priority in self._converters:
            register(converter, priority=priority)


class SimpleHook:
    """A pluggy plugin made of one plain callable from the ``monkeyllm.hooks`` group:
    its one implementation, of the hook the entry point is named after, hands the
    callable the hook's arguments in the spec's order.

    Any hookspec works, so a new hook needs no adapter of its own: the
    implementation takes the spec function's signature (``functools.wraps`` sets
    ``__wrapped__``, which is where pluggy reads the arguments an implementation
    wants), so it is called with exactly the spec's arguments.
    """

    def __init__(self, hook_name: str, spec_function: Callable[..., Any], function: Callable[..., Any]) -> None:
        @functools.wraps(spec_function, updated=())  # the signature, not the spec's markers
        def implementation(*arguments: Any) -> Any:
            return function(*arguments)

        setattr(self, hook_name, hookimpl(implementation))


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
